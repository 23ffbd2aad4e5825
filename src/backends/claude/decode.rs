//! Claude Code's stream-json, decoded line by line into `AgentEvent`s.
//!
//! Tool uses come from every `assistant` event's `message.content[]` `tool_use` blocks that
//! have a string id (subagent traffic included). The `result` event is the answer: the last
//! one counts, its fault read from `stop_reason` (a refusal, `max_tokens`) or, for an API
//! error (`is_error` with `terminal_reason: "api_error"`), its `api_error_status` and
//! `api_error_type`; a `system/api_retry` event (`error_status`, `error`,
//! `retry_delay_ms`) is a retry, all there is when the agent was stopped mid-retry. An
//! answer cut at the output token limit and continued by the CLI is joined from its pieces.
//!
//! Usage (docs/contracts.md §19.1, §19.3): Claude Code prints each content block of a
//! message as an `assistant` event carrying the message's usage as it stood when the message
//! started (input and cache tokens exact, `output_tokens` 1): each message counts once (by
//! `message.id`), its output as the larger of the reported count and the blocks' size (≈ 4
//! bytes a token). A `user` event after the last message (its tool results) means the CLI
//! has sent the next request: until its message arrives, that request counts as the last
//! one's input read back from the cache plus the last answer and the tool results written to
//! it (≈ 4 bytes a token) — the API bills a request once it is sent, also when the agent is
//! stopped before the answer. A `result` event's `usage` is the session's total so far and
//! replaces the messages before it.

use super::claude_access;
use crate::backends::event::{AgentEvent, Decoder};
use crate::backends::fault::{
    budget_share, from_api, refusal, truncated, truncated_recovered, ApiError,
};
use crate::backends::lines::{lax, lax_object};
use crate::records::{Fault, ProcessEnd, ResultEvent, ToolUse, Usage};
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// The synthetic user message with which Claude Code continues an answer cut at the output
/// token limit (2.1.330).
const CONTINUED: &str = "Output token limit hit";

/// The decoder's state.
pub(super) struct ClaudeDecoder {
    model: String,
    key: &'static str,
    /// The usage up to the last `result`.
    settled: Usage,
    /// Messages since the last `result`, by message id.
    messages: BTreeMap<String, Message>,
    /// The id of the last message.
    last: Option<String>,
    /// Bytes of the `user` events (tool results) since the last message: the CLI has sent a
    /// request not answered yet (None: no such request).
    pending: Option<u64>,
    /// The last retry.
    retry: Option<ApiError>,
    /// The model's last words (a refusal's text).
    said: String,
    /// The last result and what its fields say of a fault.
    result: Option<(ResultEvent, ResultFacts)>,
    /// Text blocks of the assistant messages since the last tool use or result.
    parts: Vec<String>,
    /// A continuation prompt came after the last tool use.
    continued: bool,
}

/// One message: its usage (the largest count seen per field) and the bytes of its content
/// blocks.
#[derive(Debug, Default)]
struct Message {
    usage: Usage,
    content_bytes: u64,
}

impl Message {
    /// Every input token of its request, however billed.
    fn input(&self) -> u64 {
        self.usage.input_tokens
            + self.usage.cache_creation_input_tokens
            + self.usage.cache_read_input_tokens
    }

    fn usage(&self) -> Usage {
        Usage {
            output_tokens: self.usage.output_tokens.max(self.content_bytes.div_ceil(4)),
            ..self.usage.clone()
        }
    }
}

/// What a `result` event says of a fault.
#[derive(Debug, Default)]
struct ResultFacts {
    subtype: Option<String>,
    stop_reason: Option<String>,
    api_error: bool,
    status: Option<u16>,
    kind: String,
    text: String,
}

#[derive(Debug, Deserialize)]
struct ClaudeResult {
    #[serde(default, deserialize_with = "lax")]
    subtype: Option<String>,
    #[serde(default, deserialize_with = "lax")]
    is_error: Option<bool>,
    #[serde(default, deserialize_with = "lax")]
    result: Option<String>,
    #[serde(default, deserialize_with = "lax")]
    total_cost_usd: Option<f64>,
    #[serde(default, deserialize_with = "lax_object")]
    usage: Option<ClaudeUsage>,
    #[serde(default, deserialize_with = "lax")]
    permission_denials: Option<Vec<Value>>,
    #[serde(default, deserialize_with = "lax")]
    num_turns: Option<u64>,
}

/// Token counts of a result or a message; a missing or unreadable one is 0.
#[derive(Debug, Default, Deserialize)]
struct ClaudeUsage {
    #[serde(default, deserialize_with = "lax")]
    input_tokens: Option<u64>,
    #[serde(default, deserialize_with = "lax")]
    output_tokens: Option<u64>,
    #[serde(default, deserialize_with = "lax")]
    cache_creation_input_tokens: Option<u64>,
    #[serde(default, deserialize_with = "lax")]
    cache_read_input_tokens: Option<u64>,
}

impl From<ClaudeUsage> for Usage {
    fn from(u: ClaudeUsage) -> Self {
        Self {
            input_tokens: u.input_tokens.unwrap_or(0),
            output_tokens: u.output_tokens.unwrap_or(0),
            cache_creation_input_tokens: u.cache_creation_input_tokens.unwrap_or(0),
            cache_read_input_tokens: u.cache_read_input_tokens.unwrap_or(0),
        }
    }
}

/// A field of `v` read as `T`, `None` when it is absent or not a `T`.
fn field<T: serde::de::DeserializeOwned>(v: &Value, key: &str) -> Option<T> {
    v.get(key)
        .and_then(|f| serde_json::from_value(f.clone()).ok())
}

fn max_into(total: &mut Usage, u: &Usage) {
    total.input_tokens = total.input_tokens.max(u.input_tokens);
    total.output_tokens = total.output_tokens.max(u.output_tokens);
    total.cache_creation_input_tokens = total
        .cache_creation_input_tokens
        .max(u.cache_creation_input_tokens);
    total.cache_read_input_tokens = total.cache_read_input_tokens.max(u.cache_read_input_tokens);
}

/// Bytes of a JSON value as sent (0 for an absent one).
fn size(v: Option<&Value>) -> u64 {
    match v {
        None | Some(Value::Null) => 0,
        Some(v) => v.to_string().len() as u64,
    }
}

/// A usage object (`lax_object`: only from a JSON object).
fn usage_of(v: Option<&Value>) -> Usage {
    v.filter(|u| u.is_object())
        .and_then(|u| serde_json::from_value::<ClaudeUsage>(u.clone()).ok())
        .unwrap_or_default()
        .into()
}

impl ClaudeDecoder {
    pub(super) fn new(model: &str, key: &'static str) -> Self {
        Self {
            model: model.to_string(),
            key,
            settled: Usage::default(),
            messages: BTreeMap::new(),
            last: None,
            pending: None,
            retry: None,
            said: String::new(),
            result: None,
            parts: Vec::new(),
            continued: false,
        }
    }

    /// The usage so far.
    fn usage(&self) -> Usage {
        let mut u = self.settled.clone();
        for m in self.messages.values() {
            u += &m.usage();
        }
        if let Some(sent) = self.unanswered() {
            u += &sent;
        }
        u
    }

    /// The request the CLI sent after the last message and that has no answer yet: the
    /// last request's input read from the cache, the last answer and the tool results
    /// written to it.
    fn unanswered(&self) -> Option<Usage> {
        let tool_results = self.pending?;
        let last = self.messages.get(self.last.as_deref()?)?;
        Some(Usage {
            cache_read_input_tokens: last.input(),
            cache_creation_input_tokens: last.usage().output_tokens + tool_results.div_ceil(4),
            ..Usage::default()
        })
    }

    fn assistant(&mut self, v: &Value, out: &mut Vec<AgentEvent>) {
        let Some(message) = v.get("message").filter(|m| m.is_object()) else {
            return;
        };
        // The usage: a message without an id cannot be told from the others: each counts.
        let id =
            field::<String>(message, "id").unwrap_or_else(|| format!("#{}", self.messages.len()));
        let entry = self.messages.entry(id.clone()).or_default();
        max_into(&mut entry.usage, &usage_of(message.get("usage")));
        entry.content_bytes += size(message.get("content"));
        self.last = Some(id);
        self.pending = None;
        out.push(AgentEvent::Usage(self.usage()));
        // The CLI's own messages (`model: "<synthetic>"`) are not the model's words.
        let own = message.get("model").and_then(Value::as_str) != Some("<synthetic>");
        let blocks = message.get("content").and_then(Value::as_array);
        for b in blocks.into_iter().flatten() {
            if own {
                if let Some(t) = b.get("text").and_then(Value::as_str) {
                    if !t.trim().is_empty() {
                        self.said = t.trim().to_string();
                    }
                }
            }
            if !b.is_object() {
                continue;
            }
            match b.get("type").and_then(Value::as_str) {
                Some("text") => {
                    let text = b.get("text").and_then(Value::as_str).unwrap_or_default();
                    self.parts.push(text.to_string());
                    out.push(AgentEvent::Text(text.to_string()));
                }
                Some("tool_use") => {
                    self.parts.clear();
                    self.continued = false;
                    let Some(id) = field::<String>(b, "id") else {
                        continue;
                    };
                    let name = field::<String>(b, "name").unwrap_or_default();
                    let input = b.get("input").cloned().unwrap_or(Value::Null);
                    out.push(AgentEvent::ToolUse(ToolUse {
                        id,
                        access: claude_access(&name, &input),
                        name,
                        input,
                    }));
                }
                _ => {}
            }
        }
    }

    fn user(&mut self, v: &Value, out: &mut Vec<AgentEvent>) {
        let message = v.get("message").filter(|m| m.is_object());
        if let (Some(m), Some(_)) = (message, &self.last) {
            *self.pending.get_or_insert(0) += size(m.get("content"));
            out.push(AgentEvent::Usage(self.usage()));
        }
        let blocks: Vec<&Value> = message
            .and_then(|m| m.get("content"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .collect();
        let text = |b: &&Value| {
            b.get("text")
                .and_then(Value::as_str)
                .is_some_and(|t| t.starts_with(CONTINUED))
        };
        if blocks
            .iter()
            .any(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
        {
            self.parts.clear();
            self.continued = false;
        } else if v.get("refused_message_id").is_some() {
            self.parts.clear();
        } else if blocks.iter().any(text) {
            self.continued = true;
        }
    }

    fn result(&mut self, v: Value, out: &mut Vec<AgentEvent>) {
        let text = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        let facts = ResultFacts {
            subtype: text("subtype"),
            stop_reason: text("stop_reason"),
            api_error: v.get("is_error") == Some(&Value::Bool(true))
                && text("terminal_reason").as_deref() == Some("api_error"),
            status: v
                .get("api_error_status")
                .and_then(Value::as_u64)
                .and_then(|s| u16::try_from(s).ok()),
            kind: text("api_error_type").unwrap_or_default(),
            text: text("result").unwrap_or_default(),
        };
        let Ok(r) = serde_json::from_value::<ClaudeResult>(v) else {
            return;
        };
        let r = to_result(r);
        self.settled = r.usage.clone();
        self.messages.clear();
        (self.last, self.pending) = (None, None);
        out.push(AgentEvent::Usage(self.usage()));
        self.result = Some((r, facts));
    }

    fn retry(&mut self, v: &Value, out: &mut Vec<AgentEvent>) {
        let e = ApiError {
            status: v
                .get("error_status")
                .and_then(Value::as_u64)
                .and_then(|s| u16::try_from(s).ok()),
            kind: v
                .get("error")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .into(),
            text: String::new(),
            retry_delay_ms: v.get("retry_delay_ms").and_then(Value::as_u64),
        };
        out.push(AgentEvent::Retry(from_api(&e, &self.model, self.key)));
        self.retry = Some(e);
    }

    /// The fault the last result names, else the last retry's.
    fn fault(&self, facts: Option<&ResultFacts>) -> Option<Fault> {
        if let Some(r) = facts {
            if r.stop_reason.as_deref() == Some("refusal") {
                // The model's own text, else the first line of the CLI's note.
                let text = if self.said.is_empty() {
                    r.text.lines().next().unwrap_or_default().trim()
                } else {
                    self.said.as_str()
                };
                return Some(refusal(text));
            }
            if r.stop_reason.as_deref() == Some("max_tokens") {
                return Some(truncated());
            }
            // `--max-budget-usd` reached: the CLI ends the session after the response that
            // passed it (`error_max_budget_usd`).
            if r.subtype.as_deref() == Some("error_max_budget_usd") {
                return Some(budget_share());
            }
            if r.api_error {
                let e = ApiError {
                    status: r.status,
                    kind: r.kind.clone(),
                    text: r.text.clone(),
                    retry_delay_ms: self.retry.as_ref().and_then(|r| r.retry_delay_ms),
                };
                return Some(from_api(&e, &self.model, self.key));
            }
        }
        // Stopped (or dead) while the CLI was still retrying: its last retry says why.
        self.retry
            .as_ref()
            .map(|e| from_api(e, &self.model, self.key))
    }
}

impl Decoder for ClaudeDecoder {
    fn event(&mut self, v: Value, out: &mut Vec<AgentEvent>) {
        match v.get("type").and_then(Value::as_str) {
            Some("assistant") => self.assistant(&v, out),
            Some("user") => self.user(&v, out),
            Some("result") => self.result(v, out),
            Some("system") if v.get("subtype").and_then(Value::as_str) == Some("api_retry") => {
                self.retry(&v, out);
            }
            _ => {}
        }
    }

    /// The last result with its fault; an answer the CLI continued after the output token
    /// limit is joined from the events into it (the `result` holds only the continuation).
    fn end(&mut self, _end: &ProcessEnd, _stderr: &[u8], out: &mut Vec<AgentEvent>) {
        let Some((mut result, facts)) = self.result.take() else {
            return;
        };
        let mut fault = self.fault(Some(&facts));
        if !result.is_error && self.continued && self.parts.len() > 1 {
            result.text = Some(self.parts.concat());
            fault = Some(truncated_recovered());
        }
        out.push(AgentEvent::Result { result, fault });
    }
}

fn to_result(r: ClaudeResult) -> ResultEvent {
    let subtype = r.subtype.unwrap_or_default();
    // Key on `is_error` (an API error reports subtype "success"); if the field is missing,
    // only an explicit "success" subtype counts as success.
    let is_error = r.is_error.unwrap_or(subtype != "success");
    ResultEvent {
        is_error,
        subtype,
        text: r.result,
        total_cost_usd: r.total_cost_usd.unwrap_or(0.0),
        usage: r.usage.unwrap_or_default().into(),
        permission_denials: r.permission_denials.unwrap_or_default(),
        num_turns: r.num_turns,
    }
}
