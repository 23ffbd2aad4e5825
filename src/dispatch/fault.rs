//! Why a dispatch failed, read from its event stream (SPEC §19.2): a transient fault
//! (overloaded, rate limited, a server error, a dropped connection) is retried with backoff,
//! a permanent one (authentication, permission, billing, an invalid request, an unknown
//! model, a refusal) aborts at once naming its cause and fix, and an answer cut at the
//! output cap is recovered or re-dispatched. Also the live watch that stops an agent the
//! moment its CLI starts retrying a permanent error (Claude Code retries even a 401 for
//! minutes).

use super::{EventFormat, Fault, FaultClass};
use serde_json::Value;

/// What the API said, as a Claude Code stream shows it.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct ApiError {
    status: Option<u16>,
    /// `api_error_type` of a result, or `error` of an `api_retry` event.
    kind: String,
    text: String,
    retry_delay_ms: Option<u64>,
}

/// The classified fault of a Claude Code stream that ended without a valid answer, if its
/// events name one; `model` and the credentials variable complete the message.
///
/// Read: the last `result` event (`api_error_status`, `api_error_type`, `stop_reason`,
/// `terminal_reason`, `result`) and the last `system/api_retry` event (`error_status`,
/// `error`, `retry_delay_ms`), which is all there is when the agent was stopped mid-retry.
pub fn classify(format: EventFormat, events: &[u8], model: &str) -> Option<Fault> {
    if format != EventFormat::Claude {
        return None;
    }
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
            return Some(permanent(
                "refusal",
                None,
                format!(
                    "the model refused to answer ({}): set the agent's `fallback_model` to \
                     another model, or check the target for content the model will not review",
                    if text.is_empty() { "no text" } else { text }
                ),
            ));
        }
        if r["stop_reason"] == "max_tokens" {
            return Some(Fault {
                class: FaultClass::Truncated,
                cause: "output_truncated".into(),
                status: None,
                retry_after_ms: None,
                message: "the answer was cut at the output token limit".into(),
            });
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
            return Some(from_api(&e, model));
        }
    }
    // Stopped (or dead) while the CLI was still retrying: its last retry says why.
    retry.map(|e| from_api(&e, model))
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

/// Whether one stream line is a retry of a permanent API error: the agent should be
/// stopped now instead of waiting out the CLI's own retries.
pub fn permanent_retry(line: &[u8]) -> bool {
    if !contains(line, b"\"api_retry\"") {
        return false;
    }
    let Ok(v) = serde_json::from_slice::<Value>(line) else {
        return false;
    };
    v["subtype"] == "api_retry" && from_api(&api_retry(&v), "").class == FaultClass::Permanent
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

/// The fault of one API error (HTTP status first, then the error type the CLI names).
fn from_api(e: &ApiError, model: &str) -> Fault {
    let kind = e.kind.as_str();
    let text = e.text.to_ascii_lowercase();
    let billing = kind.contains("billing")
        || text.contains("credit balance")
        || text.contains("spend limit")
        || text.contains("usage limit");
    let model = if model.is_empty() { "the model" } else { model };
    match (e.status, kind) {
        _ if billing || e.status == Some(402) => permanent(
            "billing",
            e.status,
            "billing: the API account has no credit or reached its spend limit: check its \
             billing settings"
                .into(),
        ),
        (Some(401), _) | (None, "authentication_failed" | "authentication_error") => permanent(
            "authentication",
            Some(401),
            "authentication failed: check ANTHROPIC_API_KEY (or the agent's credentials)".into(),
        ),
        (Some(403), _) | (None, "permission_error") => permanent(
            "permission",
            e.status,
            format!(
                "permission denied: the API key may not use {model}: check its permissions or \
                 the agent's `models`"
            ),
        ),
        (Some(404), _) | (None, "not_found_error") => permanent(
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
        classify(EventFormat::Claude, events.as_bytes(), "claude-opus-5-5").unwrap()
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
        assert_eq!(classify(EventFormat::Claude, fine.as_bytes(), "m"), None);
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
            classify(EventFormat::Codex, overloaded.as_bytes(), "m"),
            None
        );
    }
}
