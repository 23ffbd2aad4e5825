//! Loopback fake of the OpenAI Responses API (`POST /v1/responses`, SSE) for driving the
//! REAL Codex CLI in tests (docs/architecture.md §16.5); with `fake_chat.rs`, also an
//! OpenAI-compatible Chat Completions server (`POST /v1/chat/completions`, `GET /v1/models`)
//! for the REAL OpenCode CLI and as the self-hosted endpoint of docs/self-hosted.md.
//!
//! Point Codex at it with a custom model provider passed as `-c` arguments (see
//! [`FakeOpenAi::codex_args`]) and export the provider's key variable
//! ([`FakeOpenAi::codex_env`]). The arev turn is decoded from the `input` user messages'
//! `input_text` parts; the step index is the number of `function_call_output` /
//! `custom_tool_call_output` items already in `input`. Step "read the target" is an
//! `exec_command` function call running `nl -ba <target path>`; an answer is an assistant
//! `message` with one `output_text`. Each reply is `response.created`, per output item
//! `response.output_item.added` (+ `response.output_text.delta` for messages) and
//! `response.output_item.done`, then `response.completed` with usage. Faults
//! ([`Step::HttpError`], [`Step::RateLimited`], [`Step::MaxTokens`], [`Step::Blocked`],
//! [`Step::CutStream`]) are what the real API sends: its error bodies, `retry-after`,
//! `response.incomplete` with `max_output_tokens` / `content_filter`, a stream that stops.
//! Anything else → 404, recorded in `stray_requests`.
//!
//! Usage bills prompt caching like the real API ([`CACHE_RULE`]): `input_tokens` counts the
//! model-visible request (≈ bytes / 4 of `instructions`, `tools` and the `input` items, in
//! that order) and `input_tokens_details.cached_tokens` the part of it that repeats the
//! start of an earlier request with the same `prompt_cache_key`.

#![allow(dead_code)]

use std::path::Path;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use serde_json::{json, Value};

use crate::fake_llm::{fill_target, CacheRule, Played, Recorded, Script, Server, Shared, Step};

/// The env var Codex reads the fake provider's key from (arev passes it via `pass_env`).
pub const KEY_VAR: &str = "FAKE_OPENAI_KEY";

/// OpenAI's automatic prompt caching ("Prompt caching",
/// https://developers.openai.com/api/docs/guides/prompt-caching): on for every prompt of
/// 1,024 tokens or more, exact-prefix matches only, cache hits in 128-token increments.
/// Requests are routed to a cache machine by a hash of the prefix combined with
/// `prompt_cache_key` (Codex sends its thread id), so the cache is scoped per key here: a hit
/// across keys may happen on the real API but is not guaranteed, and is not counted.
pub const CACHE_RULE: CacheRule = CacheRule {
    min_tokens: 1024,
    increment: 128,
};

/// What a cached input token costs relative to an uncached one: 0.1× for the GPT-5 family
/// (https://openai.com/api/pricing: gpt-5 input $1.25, cached input $0.125 per MTok). No
/// write premium.
pub const CACHED_INPUT_RATE: f64 = 0.1;

/// The model-visible text of a Responses request in API order: instructions, tools, input.
fn visible_text(body: &Value) -> String {
    let mut text = body["instructions"].as_str().unwrap_or_default().to_owned();
    text.push_str(&body["tools"].to_string());
    for item in body["input"].as_array().into_iter().flatten() {
        text.push_str(&item.to_string());
    }
    text
}

pub struct FakeOpenAi {
    pub server: Server,
    /// `http://127.0.0.1:<port>/v1`.
    pub base_url: String,
}

impl FakeOpenAi {
    pub fn start(script: Script) -> Self {
        let server = Server::start("fake-openai", script, |shared| {
            Router::new()
                .route("/v1/responses", post(responses))
                .route("/v1/chat/completions", post(crate::fake_chat::completions))
                .route("/v1/models", get(crate::fake_chat::models))
                .fallback(not_found)
                .layer(DefaultBodyLimit::disable())
                .with_state(shared)
        });
        let base_url = format!("http://{}/v1", server.addr);
        Self { server, base_url }
    }

    /// `-c` arguments selecting this fake as Codex's model provider (no retries).
    pub fn codex_args(&self) -> Vec<String> {
        self.provider_args(",request_max_retries=0,stream_max_retries=0")
    }

    /// `-c` arguments selecting this fake as Codex's model provider with Codex's default
    /// retries (4 per request, 5 reconnects of a stream), as for the OpenAI provider.
    pub fn codex_args_cli_retries(&self) -> Vec<String> {
        self.provider_args("")
    }

    fn provider_args(&self, retries: &str) -> Vec<String> {
        vec![
            "-c".into(),
            "model_provider=\"arevfake\"".into(),
            "-c".into(),
            format!(
                "model_providers.arevfake={{name=\"arevfake\",base_url=\"{}\",env_key=\"{KEY_VAR}\",wire_api=\"responses\"{retries}}}",
                self.base_url
            ),
        ]
    }

    /// Environment for the CLI: a scratch HOME (Codex keeps its state in `~/.codex`) and
    /// the provider key.
    pub fn codex_env(&self, home: &Path) -> Vec<(&'static str, String)> {
        // Codex refuses a CODEX_HOME that does not exist.
        std::fs::create_dir_all(home.join(".codex")).expect("mkdir CODEX_HOME");
        // With a system bwrap on PATH, Codex 0.169.0 sandboxes its shell through it and execs a
        // helper it links under CODEX_HOME, which it refuses to create below the temporary
        // directory ("Refusing to create helper binaries under temporary dir"). Test homes
        // and arev's private homes live under /tmp, the runner's TMPDIR: Codex still works
        // because arev gives every agent a TMPDIR of its own beside (never above) its home.
        vec![
            ("HOME", home.to_string_lossy().into_owned()),
            (
                "CODEX_HOME",
                home.join(".codex").to_string_lossy().into_owned(),
            ),
            (KEY_VAR, "sk-fake-openai-000".into()),
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
    (
        StatusCode::NOT_FOUND,
        [("content-type", "application/json")],
        json!({"error": {"message": format!("fake-openai: no route for {method} {uri}"), "type": "invalid_request_error"}}).to_string(),
    )
        .into_response()
}

fn user_texts(body: &Value) -> Vec<String> {
    let mut out = vec![];
    for item in body["input"].as_array().into_iter().flatten() {
        if item["type"] != "message" || item["role"] != "user" {
            continue;
        }
        match &item["content"] {
            Value::String(s) => out.push(s.clone()),
            Value::Array(parts) => out.extend(
                parts
                    .iter()
                    .filter_map(|p| p["text"].as_str())
                    .map(str::to_owned),
            ),
            _ => {}
        }
    }
    out
}

fn step_index(body: &Value) -> usize {
    body["input"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|i| {
            matches!(
                i["type"].as_str(),
                Some("function_call_output" | "custom_tool_call_output")
            )
        })
        .count()
}

async fn responses(
    State(shared): State<Arc<Shared>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let model = body["model"].as_str().unwrap_or_default().to_owned();
    let texts = user_texts(&body);
    let bill = shared.cache.bill(
        body["prompt_cache_key"].as_str().unwrap_or_default(),
        &visible_text(&body),
        CACHE_RULE,
    );
    let Played {
        turn,
        step: played,
        target,
        faulted,
    } = shared.play(
        &uri,
        &headers,
        &model,
        &body,
        &texts,
        step_index(&body),
        bill,
    );
    shared.hold(turn.as_ref(), step_index(&body), faulted).await;
    let n = shared
        .next_id
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    // How the response ends: `response.completed`, `response.incomplete` with a reason, or
    // not at all (a cut stream).
    let mut ending = Some(("response.completed", None));
    let item = match played {
        Step::HttpError { status, message } => return http_error(status, &message, None),
        Step::RateLimited { retry_after } => {
            return http_error(
                429,
                &format!("Rate limit reached. Please try again in {retry_after}s."),
                Some(retry_after),
            )
        }
        Step::MaxTokens(chars) => {
            ending = Some(("response.incomplete", Some("max_output_tokens")));
            let cut = turn
                .as_ref()
                .map(|t| shared.script.cut_answer(t, chars))
                .unwrap_or_default();
            let mut m = message(n, &cut);
            m["status"] = json!("incomplete");
            m
        }
        Step::Blocked => {
            ending = Some(("response.incomplete", Some("content_filter")));
            message(n, "")
        }
        Step::CutStream => {
            ending = None;
            message(n, "")
        }
        Step::ReadTarget => function_call(
            n,
            "exec_command",
            json!({"cmd": format!("nl -ba {target}")}),
        ),
        // `custom:<name>`: a freeform custom tool call (Codex's `apply_patch`), its input the
        // string `args`.
        Step::Tool { name, args } if name.starts_with("custom:") => {
            let input = fill_target(&args, &target);
            json!({"type": "custom_tool_call", "id": format!("ctc_fake_{n}"), "call_id": format!("call_fake_{n}"),
                   "name": &name["custom:".len()..], "input": input.as_str().unwrap_or_default(), "status": "completed"})
        }
        Step::Tool { name, args } => function_call(n, &name, fill_target(&args, &target)),
        Step::Answer => message(
            n,
            &turn
                .as_ref()
                .map(|t| shared.script.answer_for(t))
                .unwrap_or_default(),
        ),
        Step::Text(t) => message(n, &t),
    };
    let mut sse = String::new();
    let mut event = |data: Value| {
        sse.push_str(&format!(
            "event: {}\ndata: {data}\n\n",
            data["type"].as_str().unwrap_or("")
        ));
    };
    let resp_id = format!("resp_fake_{n}");
    event(
        json!({"type": "response.created", "response": {"id": resp_id, "object": "response", "status": "in_progress", "model": model, "output": []}}),
    );
    let mut added = item.clone();
    if added["type"] == "message" {
        added["content"] = json!([]);
    }
    event(json!({"type": "response.output_item.added", "output_index": 0, "item": added}));
    if item["type"] == "message" {
        let text = item["content"][0]["text"].clone();
        event(
            json!({"type": "response.output_text.delta", "item_id": item["id"], "output_index": 0, "content_index": 0, "delta": text}),
        );
    }
    event(json!({"type": "response.output_item.done", "output_index": 0, "item": item}));
    let (input_tokens, cached_tokens) = (bill.input.max(1), bill.cached);
    if let Some((kind, reason)) = ending {
        let status = if reason.is_some() {
            "incomplete"
        } else {
            "completed"
        };
        event(
            json!({"type": kind, "response": {"id": resp_id, "object": "response", "status": status, "model": model, "output": [item],
            "incomplete_details": reason.map(|r| json!({"reason": r})),
            "usage": {"input_tokens": input_tokens, "input_tokens_details": {"cached_tokens": cached_tokens}, "output_tokens": 20, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": input_tokens + 20}}}),
        );
    }
    (StatusCode::OK, [("content-type", "text/event-stream")], sse).into_response()
}

/// The OpenAI API's error response for `status` (its `type` and `code` as the real API
/// sends them), with a `retry-after` header when given.
pub fn http_error(status: u16, message: &str, retry_after: Option<u64>) -> Response {
    let (kind, code) = match status {
        401 => ("invalid_request_error", Some("invalid_api_key")),
        404 => ("invalid_request_error", Some("model_not_found")),
        429 => ("requests", Some("rate_limit_exceeded")),
        s if s >= 500 => ("server_error", None),
        _ => ("invalid_request_error", None),
    };
    let body = json!({"error": {"message": message, "type": kind, "param": null, "code": code}});
    let mut resp = (
        StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        [("content-type", "application/json")],
        body.to_string(),
    )
        .into_response();
    if let Some(secs) = retry_after {
        resp.headers_mut().insert(
            "retry-after",
            axum::http::HeaderValue::from_str(&secs.to_string()).expect("header"),
        );
    }
    resp
}

fn function_call(n: u64, name: &str, args: Value) -> Value {
    json!({"type": "function_call", "id": format!("fc_fake_{n}"), "call_id": format!("call_fake_{n}"), "name": name, "arguments": args.to_string(), "status": "completed"})
}

fn message(n: u64, text: &str) -> Value {
    json!({"type": "message", "id": format!("msg_fake_{n}"), "role": "assistant", "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}]})
}
