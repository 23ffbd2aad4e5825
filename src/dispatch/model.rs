//! Dispatch inputs (`AgentSpec`, `DispatchRequest`) and the parsed `AgentOutcome`.

use crate::findings::{Role, Tier};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Duration;

/// Which event format an agent prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BackendKind {
    Claude,
}

/// A configured agent: backend, binary and tier → model map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentSpec {
    /// Agent name from config (`claude` by default).
    pub name: String,
    pub backend: BackendKind,
    /// Absolute path of the executable (already resolved from PATH or config).
    pub binary: PathBuf,
    /// Extra arguments appended after arev's own flags.
    pub extra_args: Vec<String>,
    /// Model string passed as `--model` for each tier.
    pub models: TierModels,
    /// `--max-turns` for the claude backend.
    pub max_turns: u32,
}

/// Model string per tier.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TierModels {
    pub haiku: String,
    pub sonnet: String,
    pub opus: String,
}

impl TierModels {
    pub fn get(&self, tier: Tier) -> &str {
        match tier {
            Tier::Haiku => &self.haiku,
            Tier::Sonnet => &self.sonnet,
            Tier::Opus => &self.opus,
        }
    }
}

impl Default for TierModels {
    fn default() -> Self {
        Self {
            haiku: "haiku".into(),
            sonnet: "sonnet".into(),
            opus: "opus".into(),
        }
    }
}

/// One dispatch of one agent.
#[derive(Debug, Clone)]
pub struct DispatchRequest {
    pub role: Role,
    /// Directory name under `agents/r<N>/`: `enthusiast-p1`, `judge`, `adversary-retry`, …
    pub label: String,
    /// The full prompt (written to stdin, then stdin is closed).
    pub prompt: String,
    /// The role body, passed as `--append-system-prompt`.
    pub system_prompt: String,
    pub tier: Tier,
    /// Working directory of the agent (repo root).
    pub cwd: PathBuf,
    /// `agents/r<N>/<label>/`: prompt.md, events.jsonl, stderr.log, outcome.json go here.
    pub out_dir: PathBuf,
    /// Wall-clock timeout; then SIGTERM to the group.
    pub timeout: Duration,
    /// SIGTERM → SIGKILL grace period.
    pub grace: Duration,
    /// Byte cap for stdout and for stderr (each); the rest is discarded and flagged.
    pub output_cap: u64,
}

/// A tool call seen in the agent's events (deduplicated by id).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolUse {
    pub id: String,
    pub name: String,
    pub input: serde_json::Value,
}

/// Token usage as reported by the agent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_creation_input_tokens: u64,
    pub cache_read_input_tokens: u64,
}

impl Usage {
    pub fn total(&self) -> u64 {
        self.input_tokens
            + self.output_tokens
            + self.cache_creation_input_tokens
            + self.cache_read_input_tokens
    }
}

/// The last `result` event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ResultEvent {
    pub is_error: bool,
    pub subtype: String,
    /// The final answer text (`result`), absent on some error subtypes.
    pub text: Option<String>,
    pub total_cost_usd: f64,
    pub usage: Usage,
    /// `permission_denials[]` verbatim.
    pub permission_denials: Vec<serde_json::Value>,
    pub num_turns: Option<u64>,
}

/// How the process ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ProcessEnd {
    /// Exited with a code.
    Exited { code: i32 },
    /// Killed by a signal not sent by arev.
    Signaled { signal: i32 },
    /// The wall-clock timeout fired; arev sent SIGTERM (and SIGKILL after the grace).
    TimedOut { killed: bool },
    /// Cancelled (Ctrl-C); arev sent SIGTERM (and SIGKILL after the grace).
    Cancelled { killed: bool },
    /// The process could not be started.
    SpawnFailed { message: String },
}

/// Everything arev learned from one dispatch. Serialized as `outcome.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AgentOutcome {
    pub label: String,
    pub role: Role,
    pub tier: Tier,
    /// The model string passed to the CLI.
    pub model: String,
    pub end: ProcessEnd,
    /// Tool uses in order of first appearance, deduplicated by id.
    pub tool_uses: Vec<ToolUse>,
    /// The last `result` event, if any.
    pub result: Option<ResultEvent>,
    /// stdout lines that were not JSON (counted, kept verbatim in events.jsonl).
    pub malformed_lines: u64,
    pub stdout_bytes: u64,
    pub stdout_truncated: bool,
    pub stderr_truncated: bool,
    pub duration_ms: u64,
}

impl AgentOutcome {
    /// The final answer text when the dispatch was authentic (ran, produced a result,
    /// not `is_error`).
    pub fn answer(&self) -> Option<&str> {
        match &self.result {
            Some(r) if !r.is_error => r.text.as_deref(),
            _ => None,
        }
    }

    pub fn cost_usd(&self) -> f64 {
        self.result.as_ref().map_or(0.0, |r| r.total_cost_usd)
    }
}

/// Dispatch errors that prevent running at all.
#[derive(Debug, thiserror::Error)]
pub enum DispatchError {
    #[error("agent binary `{0}` not found on PATH")]
    BinaryNotFound(String),
    #[error("agent binary {0} is not executable")]
    NotExecutable(PathBuf),
    #[error("cannot write {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}
