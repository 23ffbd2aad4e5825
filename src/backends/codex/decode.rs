//! Codex's JSONL events (`codex exec --json`) decoded into `AgentEvent`s: items as tool
//! uses, the last `agent_message` as the answer, `turn.completed` usage, `turn.failed` and
//! `error` as faults (docs/architecture.md §16.3); which tool uses a role may make.

use super::super::event::{AgentEvent, Decoder};
use super::super::fault::{from_api, refusal, transient, truncated, ApiError};
use super::super::lines::{lax, lax_object, lax_tagged, tagged};
use super::super::shell::shell_access;
use crate::records::{Fault, FileAccess, ProcessEnd, ResultEvent, Role, ToolUse, Usage};
use serde::Deserialize;
use serde_json::{json, Value};

/// The credentials variable an authentication failure names.
const KEY: &str = "OPENAI_API_KEY";

#[derive(Debug, Deserialize)]
#[serde(tag = "type")]
enum CodexEvent {
    #[serde(rename = "item.started")]
    ItemStarted {
        #[serde(default, deserialize_with = "lax_tagged")]
        item: Option<CodexItem>,
    },
    #[serde(rename = "item.updated")]
    ItemUpdated {
        #[serde(default, deserialize_with = "lax_tagged")]
        item: Option<CodexItem>,
    },
    #[serde(rename = "item.completed")]
    ItemCompleted {
        #[serde(default, deserialize_with = "lax_tagged")]
        item: Option<CodexItem>,
    },
    #[serde(rename = "turn.completed")]
    TurnCompleted {
        #[serde(default, deserialize_with = "lax_object")]
        usage: Option<CodexUsage>,
    },
    #[serde(rename = "turn.failed")]
    TurnFailed {
        #[serde(default, deserialize_with = "lax_object")]
        error: Option<CodexError>,
    },
    #[serde(rename = "error")]
    Error {
        #[serde(default, deserialize_with = "lax")]
        message: Option<String>,
    },
    #[serde(other)]
    Other,
}

/// Codex thread items; `reasoning`, `plan`, `todo_list`, `error` (a warning) and unknown
/// item types are `Other` (not tool calls).
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum CodexItem {
    AgentMessage {
        #[serde(default, deserialize_with = "lax")]
        text: Option<String>,
    },
    CommandExecution {
        #[serde(default, deserialize_with = "lax")]
        id: Option<String>,
        #[serde(default, deserialize_with = "lax")]
        command: Option<String>,
    },
    FileChange {
        #[serde(default, deserialize_with = "lax")]
        id: Option<String>,
        /// Verbatim (`[{path, kind}]`).
        #[serde(default)]
        changes: Value,
    },
    McpToolCall {
        #[serde(default, deserialize_with = "lax")]
        id: Option<String>,
        #[serde(default, deserialize_with = "lax")]
        server: Option<String>,
        #[serde(default, deserialize_with = "lax")]
        tool: Option<String>,
        #[serde(default)]
        arguments: Value,
    },
    CollabToolCall {
        #[serde(default, deserialize_with = "lax")]
        id: Option<String>,
        #[serde(default, deserialize_with = "lax")]
        tool: Option<String>,
    },
    WebSearch {
        #[serde(default, deserialize_with = "lax")]
        id: Option<String>,
        #[serde(default)]
        query: Value,
    },
    #[serde(other)]
    Other,
}

/// Token counts of a turn; a missing or unreadable one is 0.
#[derive(Debug, Default, Deserialize)]
struct CodexUsage {
    #[serde(default, deserialize_with = "lax")]
    input_tokens: Option<u64>,
    #[serde(default, deserialize_with = "lax")]
    cached_input_tokens: Option<u64>,
    #[serde(default, deserialize_with = "lax")]
    cache_write_input_tokens: Option<u64>,
    #[serde(default, deserialize_with = "lax")]
    output_tokens: Option<u64>,
}

#[derive(Debug, Deserialize)]
struct CodexError {
    #[serde(default, deserialize_with = "lax")]
    message: Option<String>,
}

/// The decoder's state: what the stream said so far.
pub(super) struct CodexDecoder {
    pub(super) model: String,
    pub(super) last_message: Option<String>,
    pub(super) usage: Usage,
    pub(super) turns: u64,
    /// The last `turn.failed` message.
    pub(super) failed: Option<String>,
    /// The last `error` message since the last completed turn.
    pub(super) pending_error: Option<String>,
}

impl Decoder for CodexDecoder {
    fn event(&mut self, v: Value, out: &mut Vec<AgentEvent>) {
        let Some(event) = tagged::<CodexEvent>(v) else {
            return;
        };
        match event {
            CodexEvent::ItemCompleted {
                item: Some(CodexItem::AgentMessage { text }),
            } => {
                if let Some(t) = text {
                    out.push(AgentEvent::Text(t.clone()));
                    self.last_message = Some(t);
                }
            }
            CodexEvent::ItemStarted { item }
            | CodexEvent::ItemUpdated { item }
            | CodexEvent::ItemCompleted { item } => {
                if let Some(t) = item.and_then(item_tool_use) {
                    out.push(AgentEvent::ToolUse(t));
                }
            }
            CodexEvent::TurnCompleted { usage: u } => {
                self.turns += 1;
                self.pending_error = None;
                add_usage(&mut self.usage, u.unwrap_or_default());
                out.push(AgentEvent::Usage(self.usage.clone()));
            }
            CodexEvent::TurnFailed { error } => {
                let msg = error.and_then(|e| e.message);
                self.failed = Some(msg.unwrap_or_else(|| "turn failed".into()));
            }
            CodexEvent::Error { message } => {
                let message = message.unwrap_or_else(|| "error".into());
                // `Reconnecting... 2/5 (<cause>)`: the CLI retries.
                if let Some(f) = codex_retrying(&message).and_then(|m| codex_fault(m, &self.model))
                {
                    out.push(AgentEvent::Retry(f));
                }
                self.pending_error = Some(message);
            }
            CodexEvent::Other => {}
        }
    }

    /// The result: a failed turn, else an error no turn completed after, else the last
    /// agent message; its fault is the failure's (stopped mid-retry: the retried cause).
    fn end(&mut self, _end: &ProcessEnd, _stderr: &[u8], out: &mut Vec<AgentEvent>) {
        let (usage, turns) = (std::mem::take(&mut self.usage), self.turns);
        let fault = self
            .failed
            .as_deref()
            .or(self.pending_error.as_deref())
            .and_then(|m| codex_fault(codex_retrying(m).unwrap_or(m), &self.model));
        let result = if let Some(msg) = self.failed.take() {
            error_result("turn_failed", msg, usage, turns)
        } else if let Some(msg) = self.pending_error.take() {
            error_result("error", msg, usage, turns)
        } else if turns > 0 {
            ResultEvent {
                is_error: false,
                subtype: "success".into(),
                text: self.last_message.take(),
                total_cost_usd: 0.0,
                usage,
                permission_denials: vec![],
                num_turns: Some(turns),
            }
        } else {
            return;
        };
        out.push(AgentEvent::Result { result, fault });
    }
}

fn error_result(subtype: &str, msg: String, usage: Usage, turns: u64) -> ResultEvent {
    ResultEvent {
        is_error: true,
        subtype: subtype.into(),
        text: Some(msg),
        total_cost_usd: 0.0,
        usage,
        permission_denials: vec![],
        num_turns: Some(turns),
    }
}

fn add_usage(total: &mut Usage, u: CodexUsage) {
    let cached = u.cached_input_tokens.unwrap_or(0);
    total.input_tokens += u.input_tokens.unwrap_or(0).saturating_sub(cached);
    total.cache_read_input_tokens += cached;
    total.cache_creation_input_tokens += u.cache_write_input_tokens.unwrap_or(0);
    total.output_tokens += u.output_tokens.unwrap_or(0);
}

/// The tool use of a Codex item (`None` for items that are not tool calls, or without an id).
fn item_tool_use(item: CodexItem) -> Option<ToolUse> {
    let (id, name, input, access) = match item {
        CodexItem::CommandExecution { id, command } => {
            let cmd = command.as_deref().unwrap_or_default();
            (
                id,
                "shell".to_string(),
                json!({ "command": cmd }),
                shell_access(cmd),
            )
        }
        CodexItem::FileChange { id, changes } => {
            let paths: Vec<String> = changes
                .as_array()
                .map(|cs| {
                    cs.iter()
                        .filter_map(|c| c.get("path").and_then(Value::as_str))
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default();
            let access = FileAccess {
                write: if paths.is_empty() {
                    vec![String::new()]
                } else {
                    paths
                },
                ..FileAccess::default()
            };
            (id, "file_change".to_string(), changes, access)
        }
        CodexItem::McpToolCall {
            id,
            server,
            tool,
            arguments,
        } => (
            id,
            format!(
                "mcp:{}/{}",
                server.unwrap_or_default(),
                tool.unwrap_or_default()
            ),
            arguments,
            FileAccess::unknown("an MCP tool's file accesses cannot be derived"),
        ),
        CodexItem::CollabToolCall { id, tool } => (
            id,
            format!("collab:{}", tool.unwrap_or_default()),
            Value::Null,
            FileAccess::unknown("a sub-agent's file accesses cannot be derived"),
        ),
        CodexItem::WebSearch { id, query } => (
            id,
            "web_search".to_string(),
            json!({ "query": query }),
            FileAccess::none(),
        ),
        CodexItem::AgentMessage { .. } | CodexItem::Other => return None,
    };
    Some(ToolUse {
        id: id?,
        name,
        input,
        access,
    })
}

/// Whether `role` may make the Codex tool call `t`: a shell command only when
/// `backends::shell` proves it read-only (every access derived, no write); `file_change`
/// only the Fixer (its edits) and the Prover (its new files; arev rejects a change to an
/// existing one before running anything); MCP tools, sub-agents and web searches nobody.
pub(crate) fn codex_permits(role: Role, t: &ToolUse) -> bool {
    match t.name.as_str() {
        "shell" => t.access.unknown.is_none() && t.access.write.is_empty(),
        "file_change" => matches!(role, Role::Fixer | Role::Prover),
        _ => false,
    }
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

/// The cause inside Codex's `Reconnecting... 2/5 (<cause>)`, if `message` is one.
fn codex_retrying(message: &str) -> Option<&str> {
    let (_, cause) = message.strip_prefix("Reconnecting... ")?.split_once(" (")?;
    cause.strip_suffix(')')
}

/// The fault one Codex error message names, `None` when it names none arev knows.
fn codex_fault(message: &str, model: &str) -> Option<Fault> {
    let key = KEY;
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
