//! Why a dispatch failed, read from its event stream (docs/contracts.md §19.2): a transient fault
//! (overloaded, rate limited, a server error, a dropped connection) is retried with backoff,
//! a permanent one (authentication, permission, billing, an invalid request, an unknown
//! model, a refusal) aborts at once naming its cause and fix, and an answer cut at the
//! output cap is recovered or re-dispatched. Also the live watch that stops an agent the
//! moment its CLI starts retrying a permanent error (Claude Code retries even a 401 for
//! minutes, Codex five times over ~7 s).
//!
//! What each CLI shows (docs/architecture.md "Faults"): Claude Code `api_retry` and `result`
//! events with the HTTP status and error type; Codex `error` / `turn.failed` events whose
//! `message` is the only record (`unexpected status 401 Unauthorized: …`, `Reconnecting...
//! 1/5 (…)`, the API's JSON body for a 400, `Incomplete response returned, reason: …`);
//! Gemini CLI a `result` event whose `error.message` wraps the API's JSON error
//! (`[API Error: {"error":{"code":…}}]`), `error` events for a blocked answer, and its exit
//! code.

use super::{EventFormat, Fault, FaultClass, ResultEvent};
use serde::Deserialize;
use serde_json::Value;

/// What the API said, as a CLI's stream shows it.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct ApiError {
    status: Option<u16>,
    /// The error type (Claude's `api_error_type`, normalised for the other CLIs to the same
    /// names: `authentication_error`, `permission_error`, `not_found_error`, `billing`,
    /// `invalid_request_error`, `rate_limit_error`, `overloaded_error`, `refusal`).
    kind: String,
    text: String,
    retry_delay_ms: Option<u64>,
}

/// The credentials variable a backend's auth failure names.
fn key_var(format: EventFormat) -> &'static str {
    match format {
        EventFormat::Claude => "ANTHROPIC_API_KEY",
        EventFormat::Codex => "OPENAI_API_KEY",
        EventFormat::Gemini => "GEMINI_API_KEY",
    }
}

/// The classified fault of a stream that ended without a valid answer, if its events (or,
/// for Gemini, its exit code as folded into `result` by `interpret_exit`) name one; `model`
/// and the backend's credentials variable complete the message.
pub fn classify(
    format: EventFormat,
    events: &[u8],
    result: Option<&ResultEvent>,
    model: &str,
) -> Option<Fault> {
    match format {
        EventFormat::Claude => classify_claude(events, model),
        EventFormat::Codex => classify_codex(events, model),
        EventFormat::Gemini => classify_gemini(events, result, model),
    }
}

/// The classified fault of a Claude Code stream that ended without a valid answer, if its
/// events name one; `model` and the credentials variable complete the message.
///
/// Read: the last `result` event (`api_error_status`, `api_error_type`, `stop_reason`,
/// `terminal_reason`, `result`) and the last `system/api_retry` event (`error_status`,
/// `error`, `retry_delay_ms`), which is all there is when the agent was stopped mid-retry.
fn classify_claude(events: &[u8], model: &str) -> Option<Fault> {
    let key = key_var(EventFormat::Claude);
    let mut retry: Option<ApiError> = None;
    let mut result: Option<Value> = None;
    // The model's last words: a refusal's text.
    let mut said = String::new();
    for line in events.split(|b| *b == b'\n') {
        // Only the event kinds read here are decoded.
        if !(contains(line, b"\"api_retry\"")
            || contains(line, b"\"result\"")
            || contains(line, b"\"text\""))
        {
            continue;
        }
        let Ok(v) = serde_json::from_slice::<Value>(line) else {
            continue;
        };
        match (v["type"].as_str(), v["subtype"].as_str()) {
            (Some("system"), Some("api_retry")) => retry = Some(api_retry(&v)),
            (Some("result"), _) => result = Some(v),
            // The CLI's own messages (`model: "<synthetic>"`) are not the model's words.
            (Some("assistant"), _) if v["message"]["model"] != "<synthetic>" => {
                let texts = v["message"]["content"].as_array().into_iter().flatten();
                for t in texts.filter_map(|b| b["text"].as_str()) {
                    if !t.trim().is_empty() {
                        said = t.trim().to_string();
                    }
                }
            }
            _ => {}
        }
    }
    if let Some(r) = &result {
        if r["stop_reason"] == "refusal" {
            // The model's own text, else the first line of the CLI's note.
            let cli = r["result"].as_str().unwrap_or_default();
            let text = if said.is_empty() {
                cli.lines().next().unwrap_or_default().trim()
            } else {
                said.as_str()
            };
            return Some(refusal(text));
        }
        if r["stop_reason"] == "max_tokens" {
            return Some(truncated());
        }
        if r["is_error"] == true && r["terminal_reason"] == "api_error" {
            let e = ApiError {
                status: r["api_error_status"]
                    .as_u64()
                    .and_then(|s| u16::try_from(s).ok()),
                kind: r["api_error_type"].as_str().unwrap_or_default().into(),
                text: r["result"].as_str().unwrap_or_default().into(),
                retry_delay_ms: retry.as_ref().and_then(|r| r.retry_delay_ms),
            };
            return Some(from_api(&e, model, key));
        }
    }
    // Stopped (or dead) while the CLI was still retrying: its last retry says why.
    retry.map(|e| from_api(&e, model, key))
}

/// The synthetic user message with which Claude Code continues an answer cut at the output
/// token limit (2.1.330).
const CONTINUED: &str = "Output token limit hit";

/// The whole final answer of a Claude Code stream whose answer was cut at the output token
/// limit and continued by the CLI: the `result` holds only the continuation, the events
/// every piece. The text blocks of the assistant messages after the last tool result,
/// joined, when a continuation prompt came between them; `None` otherwise. A refused
/// message (the CLI's synthetic note naming `refused_message_id`) is dropped.
pub fn continued_answer(events: &[u8]) -> Option<String> {
    let mut parts: Vec<String> = Vec::new();
    let mut continued = false;
    for line in events.split(|b| *b == b'\n') {
        if !(contains(line, b"\"assistant\"") || contains(line, b"\"user\"")) {
            continue;
        }
        let Ok(v) = serde_json::from_slice::<Value>(line) else {
            continue;
        };
        let blocks = v["message"]["content"].as_array();
        match v["type"].as_str() {
            Some("assistant") => {
                for b in blocks.into_iter().flatten() {
                    match b["type"].as_str() {
                        Some("text") => parts.push(b["text"].as_str().unwrap_or_default().into()),
                        Some("tool_use") => {
                            parts.clear();
                            continued = false;
                        }
                        _ => {}
                    }
                }
            }
            Some("user") => {
                let text = |b: &Value| b["text"].as_str().unwrap_or_default().to_string();
                let blocks: Vec<&Value> = blocks.into_iter().flatten().collect();
                if blocks.iter().any(|b| b["type"] == "tool_result") {
                    parts.clear();
                    continued = false;
                } else if v.get("refused_message_id").is_some() {
                    parts.clear();
                } else if blocks.iter().any(|b| text(b).starts_with(CONTINUED)) {
                    continued = true;
                }
            }
            _ => {}
        }
    }
    (continued && parts.len() > 1).then(|| parts.concat())
}

/// The fault recorded for an answer recovered from its continuation.
pub fn truncated_recovered() -> Fault {
    Fault {
        class: FaultClass::Truncated,
        cause: "output_truncated".into(),
        status: None,
        retry_after_ms: None,
        message: "the answer was cut at the output token limit; the CLI continued it and \
                  arev joined the pieces"
            .into(),
    }
}

/// The fault of an answer that is a JSON object cut short (its text ends inside the
/// object): what an answer cut at the output token limit looks like when the CLI does not
/// say so (Gemini CLI 0.61.0 reports `MAX_TOKENS` as a success). `None` for any other text.
pub fn cut_answer(answer: &str) -> Option<Fault> {
    let start = answer.find('{')?;
    match serde_json::from_str::<Value>(&answer[start..]) {
        Err(e) if e.is_eof() => Some(Fault {
            message: "the answer was cut at the output token limit (it ends inside its JSON \
                      object)"
                .into(),
            ..truncated()
        }),
        _ => None,
    }
}

/// Whether one stream line is a retry of a permanent API error: the agent should be
/// stopped now instead of waiting out the CLI's own retries. Claude Code: a
/// `system/api_retry` event; Codex: an `error` event `Reconnecting... n/m (<cause>)`.
pub fn permanent_retry(line: &[u8]) -> bool {
    if contains(line, b"\"api_retry\"") {
        let Ok(v) = serde_json::from_slice::<Value>(line) else {
            return false;
        };
        return v["subtype"] == "api_retry"
            && from_api(&api_retry(&v), "", "").class == FaultClass::Permanent;
    }
    if contains(line, b"Reconnecting") {
        let Ok(CodexLine::Error { message }) = serde_json::from_slice::<CodexLine>(line) else {
            return false;
        };
        return codex_retrying(&message)
            .and_then(|m| codex_fault(m, ""))
            .is_some_and(|f| f.class == FaultClass::Permanent);
    }
    false
}

fn api_retry(v: &Value) -> ApiError {
    ApiError {
        status: v["error_status"]
            .as_u64()
            .and_then(|s| u16::try_from(s).ok()),
        kind: v["error"].as_str().unwrap_or_default().into(),
        text: String::new(),
        retry_delay_ms: v["retry_delay_ms"].as_u64(),
    }
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

fn permanent(cause: &str, status: Option<u16>, message: String) -> Fault {
    Fault {
        class: FaultClass::Permanent,
        cause: cause.into(),
        status,
        retry_after_ms: None,
        message,
    }
}

fn transient(cause: &str, e: &ApiError, what: &str) -> Fault {
    Fault {
        class: FaultClass::Transient,
        cause: cause.into(),
        status: e.status,
        retry_after_ms: e.retry_delay_ms,
        message: match e.status {
            Some(s) => format!("{what} (HTTP {s})"),
            None => what.to_string(),
        },
    }
}

/// The fault of a refusal (a stop reason, a safety block) with the model's or CLI's `text`.
fn refusal(text: &str) -> Fault {
    permanent(
        "refusal",
        None,
        format!(
            "the model refused to answer ({}): set the agent's `fallback_model` to another \
             model, or check the target for content the model will not review",
            if text.is_empty() { "no text" } else { text }
        ),
    )
}

fn truncated() -> Fault {
    Fault {
        class: FaultClass::Truncated,
        cause: "output_truncated".into(),
        status: None,
        retry_after_ms: None,
        message: "the answer was cut at the output token limit".into(),
    }
}

/// The fault of one API error (the error type when it settles the cause, then the HTTP
/// status, then the type alone); `key` is the credentials variable to check (none: the
/// agent's credentials).
fn from_api(e: &ApiError, model: &str, key: &str) -> Fault {
    let kind = e.kind.as_str();
    let text = e.text.to_ascii_lowercase();
    let billing = kind.contains("billing")
        || text.contains("credit balance")
        || text.contains("spend limit")
        || text.contains("usage limit")
        || text.contains("billing details");
    let auth = matches!(kind, "authentication_failed" | "authentication_error");
    let model = if model.is_empty() { "the model" } else { model };
    match (e.status, kind) {
        _ if billing || e.status == Some(402) => permanent(
            "billing",
            e.status,
            "billing: the API account has no credit or reached its spend limit: check its \
             billing settings"
                .into(),
        ),
        _ if auth || e.status == Some(401) => permanent(
            "authentication",
            e.status.or(Some(401)),
            if key.is_empty() {
                "authentication failed: check the agent's credentials".into()
            } else {
                format!("authentication failed: check {key} (or the agent's credentials)")
            },
        ),
        (_, "refusal") => refusal(e.text.trim()),
        (Some(403), _) | (None, "permission_error") => permanent(
            "permission",
            e.status,
            format!(
                "permission denied: the API key may not use {model}: check its permissions or \
                 the agent's `models`"
            ),
        ),
        (Some(404), _) | (_, "not_found_error") => permanent(
            "unknown_model",
            e.status,
            format!("unknown model `{model}`: check the agent's `models` in arev.toml"),
        ),
        (Some(400 | 413 | 422), _) | (None, "invalid_request_error" | "invalid_request") => {
            let detail = e.text.trim();
            permanent(
                "invalid_request",
                e.status,
                format!(
                    "invalid request rejected by the API{}: check the agent's `extra_args` and \
                     `models`",
                    if detail.is_empty() {
                        String::new()
                    } else {
                        format!(" ({detail})")
                    }
                ),
            )
        }
        (Some(429), _) | (None, "rate_limit_error" | "rate_limit") => {
            transient("rate_limited", e, "rate limited by the API")
        }
        (Some(529), _) | (None, "overloaded_error" | "overloaded") => {
            transient("overloaded", e, "the API is overloaded")
        }
        (Some(s), _) if s >= 500 => transient("server_error", e, "the API failed"),
        (Some(408), _) => transient("connection", e, "the API request timed out"),
        _ => transient("connection", e, "the API connection failed"),
    }
}

/// The `codex exec --json` events a fault is read from; every other type is `Other`.
#[derive(Debug, Deserialize)]
#[serde(tag = "type")]
enum CodexLine {
    #[serde(rename = "error")]
    Error {
        #[serde(default)]
        message: String,
    },
    #[serde(rename = "turn.failed")]
    TurnFailed {
        #[serde(default)]
        error: CodexFailure,
    },
    #[serde(rename = "turn.completed")]
    TurnCompleted {},
    #[serde(other)]
    Other,
}

#[derive(Debug, Default, Deserialize)]
struct CodexFailure {
    #[serde(default)]
    message: String,
}

/// An OpenAI error body (`{"error":{"message","type","code"}}`), which Codex 0.169.0 prints
/// verbatim for a 400.
#[derive(Debug, Deserialize)]
struct OpenAiBody {
    error: OpenAiError,
}

#[derive(Debug, Deserialize)]
struct OpenAiError {
    #[serde(default)]
    message: String,
    #[serde(default, rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    code: Option<String>,
}

/// A Codex stream's fault: its `turn.failed` message, else (stopped mid-retry) its last
/// `error` event. A turn that completed after `error` events recovered from them.
fn classify_codex(events: &[u8], model: &str) -> Option<Fault> {
    let mut last: Option<String> = None;
    let mut failed: Option<String> = None;
    for line in events.split(|b| *b == b'\n') {
        if !(contains(line, b"\"error\"") || contains(line, b"\"turn.")) {
            continue;
        }
        match serde_json::from_slice::<CodexLine>(line) {
            Ok(CodexLine::Error { message }) => last = Some(message),
            Ok(CodexLine::TurnFailed { error }) => failed = Some(error.message),
            Ok(CodexLine::TurnCompleted {}) => last = None,
            _ => {}
        }
    }
    let message = failed.or(last)?;
    let message = codex_retrying(&message).unwrap_or(&message);
    codex_fault(message, model)
}

/// The cause inside Codex's `Reconnecting... 2/5 (<cause>)`, if `message` is one.
fn codex_retrying(message: &str) -> Option<&str> {
    let (_, cause) = message.strip_prefix("Reconnecting... ")?.split_once(" (")?;
    cause.strip_suffix(')')
}

/// The fault one Codex error message names, `None` when it names none arev knows.
fn codex_fault(message: &str, model: &str) -> Option<Fault> {
    let key = key_var(EventFormat::Codex);
    let message = message.trim();
    let cut = message.strip_prefix("stream disconnected before completion: ");
    let message = cut.unwrap_or(message);
    // `Incomplete response returned, reason: max_output_tokens | content_filter`.
    if let Some(reason) = message.strip_prefix("Incomplete response returned, reason: ") {
        return Some(match reason.trim() {
            "max_output_tokens" => truncated(),
            "content_filter" => refusal("the API's content filter stopped the answer"),
            other => transient(
                "connection",
                &ApiError::default(),
                &format!("the answer was left incomplete ({other})"),
            ),
        });
    }
    let mut e = ApiError::default();
    if let Some(rest) = message.strip_prefix("unexpected status ") {
        // `unexpected status 401 Unauthorized: <text>, url: <url>`
        let (status, text) = rest.split_once(": ").unwrap_or((rest, ""));
        e.status = status.split(' ').next().and_then(|s| s.parse().ok());
        e.text = text.rsplit_once(", url: ").map_or(text, |(t, _)| t).into();
    } else if let Some(rest) = message.strip_prefix("exceeded retry limit, last status: ") {
        e.status = rest.split(' ').next().and_then(|s| s.parse().ok());
    } else if let Ok(body) = serde_json::from_str::<OpenAiBody>(message) {
        // A 400's body, printed verbatim.
        e.kind = openai_kind(&body.error);
        e.text = body.error.message;
        if e.kind.is_empty() {
            e.kind = "invalid_request_error".into();
        }
    } else {
        let lower = message.to_ascii_lowercase();
        e.text = message.into();
        if lower.contains("model") && lower.contains("does not exist") {
            e.kind = "not_found_error".into();
        } else if lower.contains("quota exceeded") || lower.contains("billing") {
            e.kind = "billing".into();
        } else if cut.is_none() {
            return None;
        }
    }
    Some(from_api(&e, model, key))
}

/// The normalised error type of an OpenAI error body.
fn openai_kind(e: &OpenAiError) -> String {
    let code = e.code.as_deref().unwrap_or_default();
    let kind = e.kind.as_deref().unwrap_or_default();
    match (code, kind) {
        ("invalid_api_key", _) | (_, "authentication_error") => "authentication_error",
        ("model_not_found", _) => "not_found_error",
        ("insufficient_quota", _) | (_, "insufficient_quota") => "billing",
        ("rate_limit_exceeded", _) => "rate_limit_error",
        (_, "server_error") => "api_error",
        (_, k) => k,
    }
    .into()
}

/// The Gemini CLI stream-json events a fault is read from; every other type is `Other`.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum GeminiLine {
    Error {
        #[serde(default)]
        severity: Option<String>,
        #[serde(default)]
        message: String,
    },
    Result {
        #[serde(default)]
        status: Option<String>,
        #[serde(default)]
        error: Option<GeminiFailure>,
    },
    #[serde(other)]
    Other,
}

#[derive(Debug, Default, Deserialize)]
struct GeminiFailure {
    #[serde(default)]
    message: String,
}

/// A Google API error body (`{"error":{"code","message","status","details"}}`).
#[derive(Debug, Deserialize)]
struct GoogleBody {
    error: GoogleError,
}

#[derive(Debug, Deserialize)]
struct GoogleError {
    #[serde(default)]
    code: Option<u16>,
    #[serde(default)]
    message: String,
    #[serde(default)]
    status: String,
    #[serde(default)]
    details: Vec<GoogleDetail>,
}

#[derive(Debug, Deserialize)]
struct GoogleDetail {
    #[serde(default)]
    reason: Option<String>,
}

/// A Gemini CLI stream's fault: the error of its last `result` (the API's JSON error inside
/// `[API Error: …]`), else its last `error` event (a safety block, a stream cut short), else
/// the exit code `interpret_exit` read (exit 41: authentication).
fn classify_gemini(events: &[u8], result: Option<&ResultEvent>, model: &str) -> Option<Fault> {
    let key = key_var(EventFormat::Gemini);
    let mut error: Option<String> = None;
    let mut failure: Option<String> = None;
    for line in events.split(|b| *b == b'\n') {
        if !(contains(line, b"\"error\"") || contains(line, b"\"result\"")) {
            continue;
        }
        match serde_json::from_slice::<GeminiLine>(line) {
            Ok(GeminiLine::Error { severity, message })
                if severity.as_deref() != Some("warning") =>
            {
                error = Some(message);
            }
            Ok(GeminiLine::Result { status, error: e }) => {
                failure = (status.as_deref() != Some("success"))
                    .then(|| e.map(|e| e.message).unwrap_or_default());
                if failure.is_none() {
                    error = None;
                }
            }
            _ => {}
        }
    }
    if let Some(f) = failure.as_deref().and_then(|m| gemini_fault(m, model)) {
        return Some(f);
    }
    if let Some(f) = error.as_deref().and_then(|m| gemini_fault(m, model)) {
        return Some(f);
    }
    // No stream to read (the CLI failed before it started one): its exit code 41, whose
    // text (`apply_exit_code`) names the fix and the CLI's own message.
    match result {
        Some(r) if r.subtype == "exit_41" => Some(permanent(
            "authentication",
            None,
            r.text
                .clone()
                .unwrap_or_else(|| format!("authentication failed: check {key}")),
        )),
        _ => None,
    }
}

/// The fault one Gemini CLI error message names, `None` when it names none arev knows.
fn gemini_fault(message: &str, model: &str) -> Option<Fault> {
    let key = key_var(EventFormat::Gemini);
    let message = message.trim();
    // `[API Error: <JSON body or text>]`, after its own retries followed by advice lines.
    let api = message
        .strip_prefix("[API Error: ")
        .map(|m| m.lines().next().unwrap_or_default())
        .and_then(|m| m.strip_suffix(']'));
    let inner = api.unwrap_or(message);
    if let Ok(body) = serde_json::from_str::<GoogleBody>(inner) {
        let g = body.error;
        let reasons: Vec<&str> = g
            .details
            .iter()
            .filter_map(|d| d.reason.as_deref())
            .collect();
        let kind = match g.status.as_str() {
            _ if reasons.iter().any(|r| r.starts_with("API_KEY")) => "authentication_error",
            "UNAUTHENTICATED" => "authentication_error",
            "PERMISSION_DENIED" => "permission_error",
            "NOT_FOUND" => "not_found_error",
            "INVALID_ARGUMENT" | "FAILED_PRECONDITION" => "invalid_request_error",
            "RESOURCE_EXHAUSTED" => "rate_limit_error",
            "UNAVAILABLE" => "overloaded_error",
            _ => "",
        };
        let e = ApiError {
            status: g.code,
            kind: kind.into(),
            text: g.message,
            retry_delay_ms: None,
        };
        return Some(from_api(&e, model, key));
    }
    let lower = inner.to_ascii_lowercase();
    if api.is_some() {
        // A text error: the CLI gave up retrying (it retries only 429, 5xx and network
        // errors; the others come with the API's JSON body).
        let e = ApiError {
            text: inner.into(),
            ..ApiError::default()
        };
        return Some(if lower.contains("exhausted") || lower.contains("quota") {
            transient("rate_limited", &e, "rate limited by the API")
        } else if lower.contains("overloaded") || lower.contains("unavailable") {
            transient("overloaded", &e, "the API is overloaded")
        } else {
            transient("server_error", &e, "the API failed")
        });
    }
    if lower.contains("blocked due to safety") || lower.contains("prohibited content") {
        return Some(refusal(inner));
    }
    if lower.starts_with("model stream ended") {
        // A stream cut short, or without a finish reason: the CLI's `InvalidStreamError`.
        let e = ApiError {
            text: inner.into(),
            ..ApiError::default()
        };
        return Some(transient(
            "connection",
            &e,
            "the answer stream was cut short",
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(fields: &str) -> String {
        format!(
            r#"{{"type":"system","subtype":"init"}}
{{"type":"result","subtype":"success","is_error":true,"terminal_reason":"api_error",{fields}}}
"#
        )
    }

    fn of(events: &str) -> Fault {
        classify(
            EventFormat::Claude,
            events.as_bytes(),
            None,
            "claude-opus-5-5",
        )
        .unwrap()
    }

    #[test]
    fn http_statuses_map_to_their_class_and_fix() {
        let f = of(&result(
            r#""api_error_status":401,"api_error_type":"authentication_error","result":"API Error: 401""#,
        ));
        assert_eq!(
            (f.class, f.cause.as_str(), f.status),
            (FaultClass::Permanent, "authentication", Some(401))
        );
        assert!(f
            .message
            .starts_with("authentication failed: check ANTHROPIC_API_KEY"));
        for (status, cause, class) in [
            (400, "invalid_request", FaultClass::Permanent),
            (403, "permission", FaultClass::Permanent),
            (404, "unknown_model", FaultClass::Permanent),
            (429, "rate_limited", FaultClass::Transient),
            (500, "server_error", FaultClass::Transient),
            (503, "server_error", FaultClass::Transient),
            (529, "overloaded", FaultClass::Transient),
        ] {
            let f = of(&result(&format!(
                r#""api_error_status":{status},"result":"x""#
            )));
            assert_eq!((f.class, f.cause.as_str()), (class, cause), "{status}");
        }
        let f = of(&result(r#""api_error_status":404,"result":"x""#));
        assert!(f.message.contains("`claude-opus-5-5`"), "{}", f.message);
        let f = of(&result(
            r#""api_error_status":400,"api_error_type":"invalid_request_error","result":"Your credit balance is too low""#,
        ));
        assert_eq!(f.cause, "billing");
        // No status at all: a connection error, transient.
        let f = of(&result(r#""result":"API Error: Connection error.""#));
        assert_eq!(
            (f.class, f.cause.as_str()),
            (FaultClass::Transient, "connection")
        );
    }

    #[test]
    fn refusal_and_max_tokens_come_from_the_stop_reason() {
        let refused = r#"{"type":"result","subtype":"success","is_error":false,"stop_reason":"refusal","result":"I can't help with that."}"#;
        let f = of(refused);
        assert_eq!(
            (f.class, f.cause.as_str()),
            (FaultClass::Permanent, "refusal")
        );
        assert!(
            f.message.contains("I can't help with that."),
            "{}",
            f.message
        );
        let cut = r#"{"type":"result","subtype":"success","is_error":false,"stop_reason":"max_tokens","result":"{\"find"}"#;
        assert_eq!(of(cut).class, FaultClass::Truncated);
        let fine = r#"{"type":"result","subtype":"success","is_error":false,"stop_reason":"end_turn","result":"{}"}"#;
        assert_eq!(
            classify(EventFormat::Claude, fine.as_bytes(), None, "m"),
            None
        );
    }

    #[test]
    fn an_answer_continued_after_max_tokens_is_joined_from_the_events() {
        let events = r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"Read","input":{}}]}}
{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"1\tx"}]}}
{"type":"assistant","message":{"content":[{"type":"text","text":"{\"findings\":[{\"id\":"}]}}
{"type":"user","message":{"role":"user","content":[{"type":"text","text":"Output token limit hit. Resume directly — no apology."}]},"isSynthetic":true}
{"type":"assistant","message":{"content":[{"type":"text","text":"\"F1\"}]}"}]}}
{"type":"result","subtype":"success","is_error":false,"result":"\"F1\"}]}","stop_reason":"end_turn"}
"#;
        assert_eq!(
            continued_answer(events.as_bytes()).as_deref(),
            Some(r#"{"findings":[{"id":"F1"}]}"#)
        );
        // No continuation prompt: nothing to join.
        let plain = events.replace("Output token limit hit", "Something else");
        assert_eq!(continued_answer(plain.as_bytes()), None);
        // A refused message is not part of the answer.
        let refused = r#"{"type":"assistant","message":{"content":[{"type":"text","text":"no"}]}}
{"type":"user","message":{"content":[{"type":"text","text":"Your response above was stopped"}]},"isSynthetic":true,"refused_message_id":"m"}
{"type":"assistant","message":{"content":[{"type":"text","text":"{}"}]}}
"#;
        assert_eq!(continued_answer(refused.as_bytes()), None);
    }

    #[test]
    fn a_stream_stopped_mid_retry_is_classified_by_its_last_retry() {
        let retrying = r#"{"type":"system","subtype":"api_retry","attempt":1,"max_retries":10,"retry_delay_ms":612,"error_status":401,"error":"authentication_failed"}"#;
        assert!(permanent_retry(retrying.as_bytes()));
        assert_eq!(of(retrying).cause, "authentication");
        let overloaded = r#"{"type":"system","subtype":"api_retry","attempt":2,"retry_delay_ms":4000,"error_status":529,"error":"overloaded"}"#;
        assert!(!permanent_retry(overloaded.as_bytes()));
        let f = of(overloaded);
        assert_eq!(
            (f.class, f.retry_after_ms),
            (FaultClass::Transient, Some(4000))
        );
        assert!(!permanent_retry(b"{\"type\":\"assistant\"}"));
        assert_eq!(
            classify(EventFormat::Codex, overloaded.as_bytes(), None, "m"),
            None
        );
    }

    fn codex(lines: &[&str]) -> Option<Fault> {
        let events: String = lines.iter().map(|l| format!("{l}\n")).collect();
        classify(EventFormat::Codex, events.as_bytes(), None, "gpt-5.5")
    }

    /// Lines as Codex 0.169.0 printed them against the fake OpenAI API.
    #[test]
    fn codex_messages_map_to_their_class_and_fix() {
        let e = |m: &str| json_line("error", "message", m);
        let failed = |m: &str| {
            format!(
                r#"{{"type":"turn.failed","error":{{"message":{}}}}}"#,
                serde_json::Value::String(m.into())
            )
        };
        let unauthorized = "unexpected status 401 Unauthorized: Incorrect API key provided: sk-x., url: http://127.0.0.1:1/v1/responses";
        let retrying = format!("Reconnecting... 1/5 ({unauthorized})");
        assert!(permanent_retry(e(&retrying).as_bytes()));
        let f = codex(&[&e(&retrying), &e(unauthorized), &failed(unauthorized)]).unwrap();
        assert_eq!(
            (f.class, f.cause.as_str(), f.status),
            (FaultClass::Permanent, "authentication", Some(401))
        );
        assert!(f.message.contains("check OPENAI_API_KEY"), "{}", f.message);
        // Stopped at the first retry: the retry names the cause.
        assert_eq!(codex(&[&e(&retrying)]).unwrap().cause, "authentication");
        let bad = r#"{"error": {"message": "Invalid value for input[0].", "type": "invalid_request_error", "param": "input", "code": null}}"#;
        let f = codex(&[&e(bad), &failed(bad)]).unwrap();
        assert_eq!(
            (f.class, f.cause.as_str()),
            (FaultClass::Permanent, "invalid_request")
        );
        assert!(
            f.message.contains("Invalid value for input[0]."),
            "{}",
            f.message
        );
        for (message, cause, class) in [
            (
                "The model `gpt-9` does not exist or you do not have access to it.",
                "unknown_model",
                FaultClass::Permanent,
            ),
            (
                "Quota exceeded. Check your plan and billing details.",
                "billing",
                FaultClass::Permanent,
            ),
            (
                "unexpected status 403 Forbidden: no, url: http://x",
                "permission",
                FaultClass::Permanent,
            ),
            (
                "exceeded retry limit, last status: 429 Too Many Requests",
                "rate_limited",
                FaultClass::Transient,
            ),
            (
                "unexpected status 503 Service Unavailable: down, url: http://x",
                "server_error",
                FaultClass::Transient,
            ),
            (
                "stream disconnected before completion: The server had an error processing your request.",
                "connection",
                FaultClass::Transient,
            ),
            (
                "stream disconnected before completion: Incomplete response returned, reason: content_filter",
                "refusal",
                FaultClass::Permanent,
            ),
            (
                "Incomplete response returned, reason: max_output_tokens",
                "output_truncated",
                FaultClass::Truncated,
            ),
        ] {
            let f = codex(&[&e(message), &failed(message)]).unwrap();
            assert_eq!((f.class, f.cause.as_str()), (class, cause), "{message}");
        }
        // Transient retries are not stopped; a content-filter retry is.
        let overloaded =
            "Reconnecting... 1/5 (unexpected status 503 Service Unavailable: x, url: y)";
        assert!(!permanent_retry(e(overloaded).as_bytes()));
        let filtered = "Reconnecting... 1/5 (stream disconnected before completion: Incomplete response returned, reason: content_filter)";
        assert!(permanent_retry(e(filtered).as_bytes()));
        // A turn that completed after a reconnect recovered; an unknown message names nothing.
        let done = r#"{"type":"turn.completed","usage":{}}"#;
        assert_eq!(codex(&[&e(overloaded), done]), None);
        assert_eq!(codex(&[&failed("sandbox error: something")]), None);
    }

    fn json_line(kind: &str, field: &str, value: &str) -> String {
        format!(
            r#"{{"type":"{kind}","{field}":{}}}"#,
            serde_json::Value::String(value.into())
        )
    }

    /// Lines as Gemini CLI 0.61.0 printed them against the fake Gemini API.
    #[test]
    fn gemini_messages_map_to_their_class_and_fix() {
        let result = |message: &str| {
            format!(
                r#"{{"type":"result","status":"error","error":{{"type":"unknown","message":{}}},"stats":{{}}}}"#,
                serde_json::Value::String(message.into())
            )
        };
        let of = |line: String| {
            classify(EventFormat::Gemini, line.as_bytes(), None, "gemini-2.5-pro").unwrap()
        };
        let f = of(result(
            r#"[API Error: {"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID","domain":"googleapis.com"}]}}]"#,
        ));
        assert_eq!(
            (f.class, f.cause.as_str(), f.status),
            (FaultClass::Permanent, "authentication", Some(400))
        );
        assert!(f.message.contains("check GEMINI_API_KEY"), "{}", f.message);
        for (code, status, cause, class) in [
            (
                401,
                "UNAUTHENTICATED",
                "authentication",
                FaultClass::Permanent,
            ),
            (
                400,
                "INVALID_ARGUMENT",
                "invalid_request",
                FaultClass::Permanent,
            ),
            (
                403,
                "PERMISSION_DENIED",
                "permission",
                FaultClass::Permanent,
            ),
            (404, "NOT_FOUND", "unknown_model", FaultClass::Permanent),
            (
                429,
                "RESOURCE_EXHAUSTED",
                "rate_limited",
                FaultClass::Transient,
            ),
            (503, "UNAVAILABLE", "server_error", FaultClass::Transient),
            (500, "INTERNAL", "server_error", FaultClass::Transient),
        ] {
            let f = of(result(&format!(
                r#"[API Error: {{"error":{{"code":{code},"message":"m","status":"{status}"}}}}]"#
            )));
            assert_eq!((f.class, f.cause.as_str()), (class, cause), "{code}");
        }
        let blocked = format!(
            "{}\n{}",
            r#"{"type":"error","severity":"error","message":"The model response was blocked due to safety settings."}"#,
            r#"{"type":"result","status":"error","stats":{}}"#
        );
        let f = of(blocked);
        assert_eq!(
            (f.class, f.cause.as_str()),
            (FaultClass::Permanent, "refusal")
        );
        assert!(f.message.contains("blocked due to safety"), "{}", f.message);
        // After its own retries the CLI gives the API's text, not its JSON.
        let f = of(result("[API Error: Resource has been exhausted (e.g. check quota).]\nPlease wait and try again later."));
        assert_eq!(
            (f.class, f.cause.as_str()),
            (FaultClass::Transient, "rate_limited")
        );
        let f = of(result(
            "[API Error: The model is overloaded. Please try again later.]",
        ));
        assert_eq!(
            (f.class, f.cause.as_str()),
            (FaultClass::Transient, "overloaded")
        );
        let ok = r#"{"type":"result","status":"success","stats":{}}"#;
        assert_eq!(
            classify(EventFormat::Gemini, ok.as_bytes(), None, "m"),
            None
        );
        // No stream: exit 41 (folded into the result by `interpret_exit`).
        let mut r = None;
        super::super::gemini::apply_exit_code(41, &mut r, b"");
        let f = classify(EventFormat::Gemini, b"", r.as_ref(), "m").unwrap();
        assert_eq!(f.cause, "authentication");
        assert!(f.message.contains("set GEMINI_API_KEY"), "{}", f.message);
    }

    #[test]
    fn an_answer_ending_inside_its_json_object_was_cut() {
        assert_eq!(
            cut_answer(r#"{"findings":[{"id"#).map(|f| f.class),
            Some(FaultClass::Truncated)
        );
        assert_eq!(
            cut_answer("```json\n{\"findings\":[").map(|f| f.cause),
            Some("output_truncated".into())
        );
        assert_eq!(cut_answer(r#"{"findings":[]}"#), None);
        assert_eq!(cut_answer(r#"{"findings":]}"#), None, "invalid, not cut");
        assert_eq!(cut_answer("no JSON at all"), None);
    }
}
