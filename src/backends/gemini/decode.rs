//! Gemini CLI's `-o stream-json`, decoded line by line into `AgentEvent`s, and its exit
//! codes (see the module docs of `backends::gemini`).

use super::gemini_access;
use crate::backends::event::{AgentEvent, Decoder};
use crate::backends::fault::{from_api, permanent, refusal, transient, ApiError};
use crate::backends::lines::{lax, lax_object, tagged};
use crate::records::{Fault, ProcessEnd, ResultEvent, ToolUse, Usage};
use serde::Deserialize;
use serde_json::Value;

/// The credentials variable an authentication failure names.
const KEY: &str = "GEMINI_API_KEY";

/// What a Gemini CLI exit code means (its FatalError subclasses), for codes with a meaning.
pub fn exit_meaning(code: i32) -> Option<&'static str> {
    Some(match code {
        41 => "authentication failed (exit 41): log in with `gemini` once, or set GEMINI_API_KEY",
        42 => "invalid input (exit 42)",
        44 => "sandbox error (exit 44)",
        52 => "configuration error (exit 52): check ~/.gemini/settings.json",
        53 => "turn limit reached (exit 53)",
        54 => "tool execution failed (exit 54)",
        55 => "untrusted workspace (exit 55)",
        130 => "cancelled (exit 130)",
        _ => return None,
    })
}

/// Turn a known Gemini exit code into an error result with a clear message (keeping the
/// CLI's own message, when it printed one, after ours).
pub(super) fn apply_exit_code(code: i32, result: &mut Option<ResultEvent>, stderr: &[u8]) {
    let Some(meaning) = exit_meaning(code) else {
        return;
    };
    let detail = result
        .as_ref()
        .filter(|r| r.is_error)
        .and_then(|r| r.text.clone())
        .or_else(|| {
            String::from_utf8_lossy(stderr)
                .lines()
                .map(str::trim)
                .rfind(|l| !l.is_empty())
                .map(str::to_string)
        });
    let text = match detail {
        Some(d) => format!("Gemini CLI: {meaning}: {d}"),
        None => format!("Gemini CLI: {meaning}"),
    };
    let usage = result.as_ref().map(|r| r.usage.clone()).unwrap_or_default();
    *result = Some(ResultEvent {
        is_error: true,
        subtype: format!("exit_{code}"),
        text: Some(text),
        total_cost_usd: 0.0,
        usage,
        permission_denials: vec![],
        num_turns: None,
    });
}

/// Gemini CLI stream-json events arev reads; every other `type` (`init`, …) is `Other`.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum GeminiEvent {
    Message {
        #[serde(default, deserialize_with = "lax")]
        role: Option<String>,
        #[serde(default, deserialize_with = "lax")]
        content: Option<String>,
        #[serde(default, deserialize_with = "lax")]
        delta: Option<bool>,
    },
    ToolUse {
        #[serde(default, deserialize_with = "lax")]
        tool_id: Option<String>,
        #[serde(default, deserialize_with = "lax")]
        tool_name: Option<String>,
        /// Verbatim.
        #[serde(default)]
        parameters: Value,
    },
    ToolResult {
        #[serde(default, deserialize_with = "lax")]
        tool_id: Option<String>,
        #[serde(default, deserialize_with = "lax")]
        status: Option<String>,
    },
    Error {
        #[serde(default, deserialize_with = "lax")]
        severity: Option<String>,
        #[serde(default, deserialize_with = "lax")]
        message: Option<String>,
    },
    Result {
        #[serde(default, deserialize_with = "lax")]
        status: Option<String>,
        #[serde(default, deserialize_with = "lax_object")]
        error: Option<GeminiError>,
        #[serde(default, deserialize_with = "lax_object")]
        stats: Option<GeminiStats>,
    },
    #[serde(other)]
    Other,
}

#[derive(Debug, Deserialize)]
struct GeminiError {
    #[serde(default, rename = "type", deserialize_with = "lax")]
    kind: Option<String>,
    #[serde(default, deserialize_with = "lax")]
    message: Option<String>,
}

/// Token and tool-call counts; a missing or unreadable one is absent.
#[derive(Debug, Default, Deserialize)]
struct GeminiStats {
    #[serde(default, deserialize_with = "lax")]
    input_tokens: Option<u64>,
    #[serde(default, deserialize_with = "lax")]
    output_tokens: Option<u64>,
    #[serde(default, deserialize_with = "lax")]
    cached: Option<u64>,
    #[serde(default, deserialize_with = "lax")]
    tool_calls: Option<u64>,
}

/// The decoder's state.
pub(super) struct GeminiDecoder {
    model: String,
    turn: Turn,
    result: Option<ResultEvent>,
    /// The last result's error message, when it was no success.
    failure: Option<String>,
    /// The last error event's message since the last successful result.
    error: Option<String>,
}

impl GeminiDecoder {
    pub(super) fn new(model: &str) -> Self {
        Self {
            model: model.to_string(),
            turn: Turn::default(),
            result: None,
            failure: None,
            error: None,
        }
    }
}

impl Decoder for GeminiDecoder {
    fn event(&mut self, v: Value, out: &mut Vec<AgentEvent>) {
        let Some(event) = tagged::<GeminiEvent>(v) else {
            return;
        };
        let turn = &mut self.turn;
        match event {
            GeminiEvent::Message {
                role,
                content,
                delta,
            } if role.as_deref() == Some("assistant") => {
                if delta != Some(true) {
                    turn.text.clear();
                }
                let content = content.unwrap_or_default();
                turn.text.push_str(&content);
                out.push(AgentEvent::Text(content));
            }
            GeminiEvent::ToolUse {
                tool_id,
                tool_name,
                parameters,
            } => {
                turn.tool_calls += 1;
                turn.text.clear();
                let id = tool_id.unwrap_or_default();
                if id.is_empty() {
                    return;
                }
                let name = tool_name.unwrap_or_default();
                turn.names.push((id.clone(), name.clone()));
                out.push(AgentEvent::ToolUse(ToolUse {
                    id,
                    access: gemini_access(&name, &parameters),
                    name,
                    input: parameters,
                }));
            }
            GeminiEvent::ToolResult { tool_id, status } if status.as_deref() == Some("error") => {
                let id = tool_id.unwrap_or_default();
                if let Some((_, name)) = turn.names.iter().find(|(i, _)| *i == id) {
                    turn.denials
                        .push(serde_json::json!({"tool_name": name, "tool_use_id": id}));
                }
            }
            GeminiEvent::Error { severity, message } if severity.as_deref() != Some("warning") => {
                let message = message.unwrap_or_default();
                turn.last_error = Some(message.clone());
                self.error = Some(message);
            }
            GeminiEvent::Result {
                status,
                error,
                stats,
            } => {
                let ok = status.as_deref() == Some("success");
                self.failure = (!ok).then(|| {
                    error
                        .as_ref()
                        .and_then(|e| e.message.clone())
                        .unwrap_or_default()
                });
                if ok {
                    self.error = None;
                }
                let r = turn.result(ok, error, stats);
                out.push(AgentEvent::Usage(r.usage.clone()));
                self.result = Some(r);
            }
            GeminiEvent::Message { .. }
            | GeminiEvent::ToolResult { .. }
            | GeminiEvent::Error { .. }
            | GeminiEvent::Other => {}
        }
    }

    /// The result, an exit code with a meaning made an error result; its fault: the error
    /// of the last `result` (the API's JSON error inside `[API Error: …]`), else the last
    /// `error` event (a safety block, a stream cut short), else the exit code (exit 41:
    /// authentication, with the CLI's own message).
    fn end(&mut self, end: &ProcessEnd, stderr: &[u8], out: &mut Vec<AgentEvent>) {
        if let ProcessEnd::Exited { code } = end {
            apply_exit_code(*code, &mut self.result, stderr);
        }
        let model = self.model.as_str();
        let fault = self
            .failure
            .as_deref()
            .and_then(|m| gemini_fault(m, model))
            .or_else(|| self.error.as_deref().and_then(|m| gemini_fault(m, model)))
            .or_else(|| match &self.result {
                Some(r) if r.subtype == "exit_41" => Some(permanent(
                    "authentication",
                    None,
                    r.text
                        .clone()
                        .unwrap_or_else(|| format!("authentication failed: check {KEY}")),
                )),
                _ => None,
            });
        match (self.result.take(), fault) {
            (Some(result), fault) => out.push(AgentEvent::Result { result, fault }),
            (None, Some(f)) => out.push(AgentEvent::Error(f)),
            (None, None) => {}
        }
    }
}

/// What the events so far said: the assistant text since the last tool use, the last
/// error event's message, the tool calls.
#[derive(Default)]
struct Turn {
    text: String,
    last_error: Option<String>,
    tool_calls: u64,
    /// (tool id, tool name) of every tool use.
    names: Vec<(String, String)>,
    /// The tool calls whose result was an error, as `{tool_name, tool_use_id}`.
    denials: Vec<Value>,
}

impl Turn {
    /// The result of a `result` event: on success the answer is the text after the last
    /// tool use; on error the message is the result's own, or the last error event's.
    fn result(
        &self,
        ok: bool,
        error: Option<GeminiError>,
        stats: Option<GeminiStats>,
    ) -> ResultEvent {
        let stats = stats.unwrap_or_default();
        let cached = stats.cached.unwrap_or(0);
        let (subtype, text) = if ok {
            let answer = (!self.text.trim().is_empty()).then(|| self.text.clone());
            ("success".to_string(), answer)
        } else {
            let (kind, message) = error.map_or((None, None), |e| (e.kind, e.message));
            let message = message
                .or_else(|| self.last_error.clone())
                .unwrap_or_else(|| "the Gemini CLI reported an error".into());
            (kind.unwrap_or_else(|| "error".into()), Some(message))
        };
        ResultEvent {
            is_error: !ok,
            subtype,
            text,
            total_cost_usd: 0.0,
            usage: Usage {
                input_tokens: stats.input_tokens.unwrap_or(0).saturating_sub(cached),
                output_tokens: stats.output_tokens.unwrap_or(0),
                cache_creation_input_tokens: 0,
                cache_read_input_tokens: cached,
            },
            permission_denials: self.denials.clone(),
            num_turns: Some(stats.tool_calls.unwrap_or(self.tool_calls) + 1),
        }
    }
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

/// The fault one Gemini CLI error message names, `None` when it names none arev knows.
fn gemini_fault(message: &str, model: &str) -> Option<Fault> {
    let key = KEY;
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
