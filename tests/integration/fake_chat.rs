//! The OpenAI-compatible Chat Completions side of [`FakeOpenAi`](crate::fake_openai::FakeOpenAi)
//! (`POST /v1/chat/completions`, streaming SSE; `GET /v1/models`): what a self-hosted model
//! server (Ollama, vLLM, llama.cpp's `llama-server`) serves, and what OpenCode's
//! `@ai-sdk/openai-compatible` provider calls.
//!
//! The arev turn is decoded from the `user` messages (a string or `text` parts); the step
//! index is the number of `tool` messages already in `messages`. "Read the target" is a call
//! of OpenCode's `read` tool (`{"filePath": <target>}`); an answer is assistant text. Each
//! reply streams `chat.completion.chunk`s: the role, the text in two deltas (or the tool call
//! with its arguments in a second delta), a chunk with the `finish_reason`, a last chunk with
//! `usage` (as `stream_options.include_usage` asks) and `data: [DONE]`. Faults are what an
//! OpenAI-compatible server sends: an error body with the status ([`Step::HttpError`]), 429
//! with `retry-after` ([`Step::RateLimited`]), `finish_reason: "length"` after a cut text
//! ([`Step::MaxTokens`]), `content_filter` ([`Step::Blocked`]), a stream that stops
//! ([`Step::CutStream`]).
//!
//! Usage bills automatic prompt caching like OpenAI ([`crate::fake_openai::CACHE_RULE`],
//! scoped by model): `prompt_tokens` counts the model-visible request (≈ bytes / 4 of
//! `tools` and `messages`) and `prompt_tokens_details.cached_tokens` the part of it that
//! repeats the start of an earlier request.

#![allow(dead_code)]

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};

use crate::fake_llm::{fill_target, Played, Shared, Step};

/// Output tokens billed per reply.
pub const OUTPUT_TOKENS: u64 = 20;

/// The model-visible text of a Chat Completions request in API order: tools, messages.
fn visible_text(body: &Value) -> String {
    let mut text = body["tools"].to_string();
    for m in body["messages"].as_array().into_iter().flatten() {
        text.push_str(&m.to_string());
    }
    text
}

fn user_texts(body: &Value) -> Vec<String> {
    let mut out = vec![];
    for m in body["messages"].as_array().into_iter().flatten() {
        if m["role"] != "user" {
            continue;
        }
        match &m["content"] {
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
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "tool")
        .count()
}

/// `GET /v1/models`: the models this server serves (any model is answered; these are the
/// ones a self-hosted panel's tests name).
pub async fn models(State(shared): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    shared
        .requests
        .lock()
        .expect("lock")
        .push(crate::fake_llm::Recorded {
            uri: "/v1/models".into(),
            headers: crate::fake_llm::header_pairs(&headers),
            model: String::new(),
            body: Value::Null,
            turn: None,
            step: 0,
            played: Step::Text(String::new()),
            arrived: std::time::Instant::now(),
            bill: crate::fake_llm::Bill::default(),
        });
    let data: Vec<Value> = ["m1", "qwen3-coder", "gpt-oss-20b"]
        .iter()
        .map(|id| json!({"id": id, "object": "model", "created": 0, "owned_by": "fake"}))
        .collect();
    (
        StatusCode::OK,
        [("content-type", "application/json")],
        json!({"object": "list", "data": data}).to_string(),
    )
        .into_response()
}

/// What one reply carries: text, or a tool call (name, JSON arguments).
enum Reply {
    Text(String),
    Call(String, Value),
}

/// `POST /v1/chat/completions`.
pub async fn completions(
    State(shared): State<Arc<Shared>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let model = body["model"].as_str().unwrap_or_default().to_owned();
    let texts = user_texts(&body);
    let bill = shared
        .cache
        .bill(&model, &visible_text(&body), crate::fake_openai::CACHE_RULE);
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
    let answer = || {
        turn.as_ref()
            .map(|t| shared.script.answer_for(t))
            .unwrap_or_default()
    };
    let mut finish = Some("stop");
    let reply = match played {
        Step::HttpError { status, message } => {
            return crate::fake_openai::http_error(status, &message, None)
        }
        Step::RateLimited { retry_after } => {
            return crate::fake_openai::http_error(
                429,
                &format!("Rate limit reached. Please try again in {retry_after}s."),
                Some(retry_after),
            )
        }
        Step::MaxTokens(chars) => {
            finish = Some("length");
            Reply::Text(
                turn.as_ref()
                    .map(|t| shared.script.cut_answer(t, chars))
                    .unwrap_or_default(),
            )
        }
        Step::Blocked => {
            finish = Some("content_filter");
            Reply::Text(String::new())
        }
        Step::CutStream => {
            finish = None;
            Reply::Text(String::new())
        }
        Step::ReadTarget => Reply::Call("read".into(), json!({ "filePath": target })),
        Step::Tool { name, args } => Reply::Call(name, fill_target(&args, &target)),
        Step::Answer => Reply::Text(answer()),
        Step::Text(t) => Reply::Text(t),
    };
    let base = json!({"id": format!("chatcmpl-fake-{n}"), "object": "chat.completion.chunk", "created": 0, "model": model});
    let chunk = |choices: Value, usage: Option<Value>| {
        let mut c = base.clone();
        c["choices"] = choices;
        if let Some(u) = usage {
            c["usage"] = u;
        }
        format!("data: {c}\n\n")
    };
    let delta = |d: Value, f: Option<&str>| json!([{"index": 0, "delta": d, "finish_reason": f}]);
    let mut sse = String::new();
    match reply {
        Reply::Text(t) => {
            let cut = t
                .char_indices()
                .nth(t.chars().count() / 2)
                .map_or(0, |(i, _)| i);
            sse.push_str(&chunk(
                delta(json!({"role": "assistant", "content": &t[..cut]}), None),
                None,
            ));
            sse.push_str(&chunk(delta(json!({"content": &t[cut..]}), None), None));
        }
        Reply::Call(name, args) => {
            sse.push_str(&chunk(
                delta(
                    json!({"role": "assistant", "content": null, "tool_calls": [{"index": 0, "id": format!("call_fake_{n}"), "type": "function", "function": {"name": name, "arguments": ""}}]}),
                    None,
                ),
                None,
            ));
            sse.push_str(&chunk(
                delta(
                    json!({"tool_calls": [{"index": 0, "function": {"arguments": args.to_string()}}]}),
                    None,
                ),
                None,
            ));
            finish = finish.map(|_| "tool_calls");
        }
    }
    if let Some(f) = finish {
        sse.push_str(&chunk(delta(json!({}), Some(f)), None));
        let input = bill.input.max(1);
        sse.push_str(&chunk(
            json!([]),
            Some(
                json!({"prompt_tokens": input, "completion_tokens": OUTPUT_TOKENS,
                "total_tokens": input + OUTPUT_TOKENS,
                "prompt_tokens_details": {"cached_tokens": bill.cached}}),
            ),
        ));
        sse.push_str("data: [DONE]\n\n");
    }
    (StatusCode::OK, [("content-type", "text/event-stream")], sse).into_response()
}
