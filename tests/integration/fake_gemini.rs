//! Loopback fake of the Gemini API (`POST /v1beta/models/<m>:streamGenerateContent?alt=sse`)
//! for driving the REAL Gemini CLI in tests (docs/architecture.md §16.5).
//!
//! The CLI is pointed at it with `GOOGLE_GEMINI_BASE_URL` + `GEMINI_API_KEY` and a scratch
//! `HOME` whose `~/.gemini/settings.json` selects the `gemini-api-key` auth type (without
//! it the base URL alone selects a "gateway" auth that headless mode rejects, exit 41) and
//! turns off usage statistics and update checks ([`FakeGemini::prepare_home`]).
//!
//! The arev turn is decoded from the `user` entries of `contents` (their `text` parts); the
//! step index is the number of `model` entries already in `contents`. "Read the target" is a
//! `read_file {file_path}` function call; an answer is one text part. Each reply is one SSE
//! `data:` chunk with `finishReason: STOP` and `usageMetadata`. Faults are what the real
//! API sends: its error bodies (with `retry-after` for [`Step::RateLimited`]),
//! `finishReason: MAX_TOKENS` after a cut text ([`Step::MaxTokens`]), `SAFETY` without
//! content ([`Step::Blocked`]), a chunk without a finish reason ([`Step::CutStream`]). `:generateContent` (non-
//! streaming) gets the same candidate as JSON and `:countTokens` a count; anything else →
//! 404, recorded in `stray_requests`.
//!
//! Usage bills implicit caching like the real API ([`CACHE_RULE`]): `promptTokenCount`
//! counts the model-visible request (≈ bytes / 4 of `systemInstruction`, `tools` and
//! `contents`, in that order) and `cachedContentTokenCount` the part of it that repeats the
//! start of an earlier request to the same model.

#![allow(dead_code)]

use std::path::Path;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;
use serde_json::{json, Value};

use crate::fake_llm::{fill_target, CacheRule, Played, Recorded, Script, Server, Shared, Step};

/// Gemini's implicit caching ("Context caching",
/// https://ai.google.dev/gemini-api/docs/caching): on by default for Gemini 2.5 and newer, a
/// request whose start repeats a recent request's is billed the shared part as cached;
/// minimum 2,048 input tokens for Gemini 2.5 Flash and Pro. The API documents no matching
/// granularity: any shared length counts here. Scope: the model (one API key per fake).
pub const CACHE_RULE: CacheRule = CacheRule {
    min_tokens: 2048,
    increment: 1,
};

/// What a cached input token costs relative to an uncached one for Gemini 2.5: 0.25×
/// (https://ai.google.dev/gemini-api/docs/pricing: Gemini 2.5 Pro input $1.25, context
/// caching $0.31 per MTok up to 200k tokens; implicit hits get the same 75 % discount).
pub const CACHED_INPUT_RATE: f64 = 0.25;

/// The model-visible text of a request in API order: system instruction, tools, contents.
fn visible_text(body: &Value) -> String {
    let mut text = body["systemInstruction"].to_string();
    text.push_str(&body["tools"].to_string());
    for content in body["contents"].as_array().into_iter().flatten() {
        text.push_str(&content.to_string());
    }
    text
}

pub struct FakeGemini {
    pub server: Server,
    /// `http://127.0.0.1:<port>`.
    pub base_url: String,
}

impl FakeGemini {
    pub fn start(script: Script) -> Self {
        let server = Server::start("fake-gemini", script, |shared| {
            Router::new()
                .route("/v1beta/models/{*rest}", post(models))
                .fallback(not_found)
                .layer(DefaultBodyLimit::disable())
                .with_state(shared)
        });
        let base_url = format!("http://{}", server.addr);
        Self { server, base_url }
    }

    /// Write `~/.gemini/settings.json` into the scratch `home`.
    pub fn prepare_home(home: &Path) {
        let dir = home.join(".gemini");
        std::fs::create_dir_all(&dir).expect("mkdir .gemini");
        let settings = json!({
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "privacy": {"usageStatisticsEnabled": false},
            "general": {"disableAutoUpdate": true, "disableUpdateNag": true},
            "telemetry": {"enabled": false}
        });
        std::fs::write(dir.join("settings.json"), settings.to_string()).expect("settings.json");
    }

    /// Environment for the CLI (call [`prepare_home`](Self::prepare_home) on `home` too).
    pub fn gemini_env(&self, home: &Path) -> Vec<(&'static str, String)> {
        Self::prepare_home(home);
        vec![
            ("HOME", home.to_string_lossy().into_owned()),
            ("GOOGLE_GEMINI_BASE_URL", self.base_url.clone()),
            ("GEMINI_API_KEY", "fake-gemini-key-000".into()),
        ]
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.server.requests()
    }

    pub fn stray_requests(&self) -> Vec<String> {
        self.server.stray_requests()
    }
}

async fn not_found(
    State(shared): State<Arc<Shared>>,
    method: axum::http::Method,
    uri: Uri,
) -> Response {
    shared
        .stray
        .lock()
        .expect("lock")
        .push(format!("{method} {uri}"));
    error(
        StatusCode::NOT_FOUND,
        &format!("fake-gemini: no route for {method} {uri}"),
    )
}

/// The Gemini API's error response for `status` (its canonical status name; an invalid key
/// is a 400 with reason `API_KEY_INVALID`, as the real API sends it).
fn error(status: StatusCode, message: &str) -> Response {
    let name = match status.as_u16() {
        400 => "INVALID_ARGUMENT",
        401 => "UNAUTHENTICATED",
        403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        429 => "RESOURCE_EXHAUSTED",
        503 => "UNAVAILABLE",
        _ => "INTERNAL",
    };
    let mut error = json!({"code": status.as_u16(), "message": message, "status": name});
    if message.starts_with("API key not valid") {
        error["details"] = json!([{"@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": "API_KEY_INVALID", "domain": "googleapis.com"}]);
    }
    (
        status,
        [("content-type", "application/json")],
        json!({ "error": error }).to_string(),
    )
        .into_response()
}

fn user_texts(body: &Value) -> Vec<String> {
    body["contents"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["role"] == "user")
        .flat_map(|c| c["parts"].as_array().cloned().unwrap_or_default())
        .filter_map(|p| p["text"].as_str().map(str::to_owned))
        .collect()
}

fn step_index(body: &Value) -> usize {
    body["contents"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["role"] == "model")
        .count()
}

async fn models(
    State(shared): State<Arc<Shared>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let path = uri.path().to_owned();
    let Some((model, method)) = path
        .strip_prefix("/v1beta/models/")
        .and_then(|r| r.rsplit_once(':'))
    else {
        shared
            .stray
            .lock()
            .expect("lock")
            .push(format!("POST {uri}"));
        return error(StatusCode::NOT_FOUND, "fake-gemini: bad model path");
    };
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    if method == "countTokens" {
        return (
            StatusCode::OK,
            [("content-type", "application/json")],
            json!({"totalTokens": (body.to_string().len() / 4).max(1)}).to_string(),
        )
            .into_response();
    }
    if method != "streamGenerateContent" && method != "generateContent" {
        shared
            .stray
            .lock()
            .expect("lock")
            .push(format!("POST {uri}"));
        return error(StatusCode::NOT_FOUND, "fake-gemini: unknown method");
    }
    let texts = user_texts(&body);
    let bill = shared.cache.bill(model, &visible_text(&body), CACHE_RULE);
    let Played {
        turn,
        step: played,
        target,
        faulted,
    } = shared.play(
        &uri,
        &headers,
        model,
        &body,
        &texts,
        step_index(&body),
        bill,
    );
    shared.hold(turn.as_ref(), step_index(&body), faulted).await;
    let mut finish = Some("STOP");
    let part = match played {
        Step::HttpError { status, message } => {
            return error(
                StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
                &message,
            )
        }
        Step::RateLimited { retry_after } => {
            let mut resp = error(
                StatusCode::TOO_MANY_REQUESTS,
                "Resource has been exhausted (e.g. check quota).",
            );
            resp.headers_mut().insert(
                "retry-after",
                axum::http::HeaderValue::from_str(&retry_after.to_string()).expect("header"),
            );
            return resp;
        }
        Step::MaxTokens(chars) => {
            finish = Some("MAX_TOKENS");
            json!({"text": turn.as_ref().map(|t| shared.script.cut_answer(t, chars)).unwrap_or_default()})
        }
        Step::Blocked => {
            finish = Some("SAFETY");
            Value::Null
        }
        Step::CutStream => {
            finish = None;
            json!({"text": ""})
        }
        Step::ReadTarget => {
            json!({"functionCall": {"name": "read_file", "args": {"file_path": target}}})
        }
        Step::Tool { name, args } => {
            json!({"functionCall": {"name": name, "args": fill_target(&args, &target)}})
        }
        Step::Answer => {
            json!({"text": turn.as_ref().map(|t| shared.script.answer_for(t)).unwrap_or_default()})
        }
        Step::Text(t) => json!({"text": t}),
    };
    let (prompt_tokens, cached_tokens) = (bill.input.max(1), bill.cached);
    let candidate = match (finish, part) {
        // A safety block: no content, the ratings that blocked it.
        (Some("SAFETY"), _) => json!({"finishReason": "SAFETY", "index": 0, "safetyRatings": [
            {"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH", "blocked": true}]}),
        (Some(f), part) => {
            json!({"content": {"role": "model", "parts": [part]}, "finishReason": f, "index": 0})
        }
        (None, part) => json!({"content": {"role": "model", "parts": [part]}, "index": 0}),
    };
    let chunk = json!({
        "candidates": [candidate],
        "usageMetadata": {"promptTokenCount": prompt_tokens, "cachedContentTokenCount": cached_tokens, "candidatesTokenCount": 20, "totalTokenCount": prompt_tokens + 20},
        "modelVersion": model,
    });
    if method == "generateContent" {
        return (
            StatusCode::OK,
            [("content-type", "application/json")],
            chunk.to_string(),
        )
            .into_response();
    }
    (
        StatusCode::OK,
        [("content-type", "text/event-stream")],
        format!("data: {chunk}\r\n\r\n"),
    )
        .into_response()
}
