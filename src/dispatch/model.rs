//! Dispatch inputs (`AgentSpec`, `DispatchRequest`) and the parsed `AgentOutcome`.

use crate::findings::{Role, Tier};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Duration;

/// Which CLI an agent is: decides the argv, how the prompt is delivered and the event format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BackendKind {
    /// Claude Code (`claude -p`), prompt on stdin, stream-json events.
    Claude,
    /// OpenAI Codex (`codex exec --json`), prompt as the last argument, JSONL events.
    Codex,
    /// Gemini CLI (`gemini -p <prompt> -o stream-json`), stream-json events.
    Gemini,
    /// Any executable: `extra_args` only, prompt on stdin, events in the declared `format`.
    Command,
}

/// The event format an agent prints on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EventFormat {
    /// Claude Code `--output-format stream-json --verbose`.
    Claude,
    /// Codex `exec --json` JSONL.
    Codex,
    /// Gemini CLI `-o stream-json`.
    Gemini,
}

impl BackendKind {
    /// The event format of a built-in backend (`None` for `command`, which declares one).
    pub fn native_format(self) -> Option<EventFormat> {
        match self {
            Self::Claude => Some(EventFormat::Claude),
            Self::Codex => Some(EventFormat::Codex),
            Self::Gemini => Some(EventFormat::Gemini),
            Self::Command => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Claude => "claude",
            Self::Codex => "codex",
            Self::Gemini => "gemini",
            Self::Command => "command",
        }
    }
}

/// A configured agent: backend, binary and tier → model map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentSpec {
    /// Agent name from config (`claude` by default).
    pub name: String,
    pub backend: BackendKind,
    /// The event format it prints (the backend's own, or the declared one for `command`).
    pub format: EventFormat,
    /// Absolute path of the executable (already resolved from PATH or config).
    pub binary: PathBuf,
    /// Extra arguments appended after arev's own flags.
    pub extra_args: Vec<String>,
    /// Model string passed as `--model` for each tier.
    pub models: TierModels,
    /// `--max-turns` for the claude backend.
    pub max_turns: u32,
    /// This agent's wall-clock limit per dispatch (`None` = the run's `[timeouts] agent`).
    pub timeout: Option<Duration>,
    /// Further environment variables passed to this agent besides the allowlist.
    pub pass_env: Vec<String>,
    /// The model the CLI switches to when the tier's model is overloaded (Claude Code's
    /// `--fallback-model`).
    pub fallback_model: Option<String>,
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
    /// The full prompt (written to stdin, then stdin is closed). Shared, not copied, with
    /// the writer of the agent's stdin (a Judge prompt is hundreds of KiB).
    pub prompt: std::sync::Arc<str>,
    /// The role body: Claude Code's system prompt (`--system-prompt`, replacing its own).
    pub system_prompt: String,
    pub tier: Tier,
    /// Working directory of the agent (repo root).
    pub cwd: PathBuf,
    /// The only directories the agent may read: the repository root and the run's target
    /// artefacts (`<run>/target/`), absolute and canonical. Backends with their own
    /// permission rules confine reads to them (claude); the read gate checks every access
    /// whatever the backend.
    pub read_dirs: Vec<PathBuf>,
    /// `agents/r<N>/<label>/`: prompt.md, events.jsonl, stderr.log, outcome.json go here.
    pub out_dir: PathBuf,
    /// Wall-clock timeout; then SIGTERM to the group.
    pub timeout: Duration,
    /// SIGTERM → SIGKILL grace period.
    pub grace: Duration,
    /// Byte cap for stdout and for stderr (each); the rest is discarded and flagged.
    pub output_cap: u64,
    /// Whether a reviewer is offered a search tool (Grep): for a target of several files.
    /// A one-file target is Read whole, and every tool schema offered is resent (and
    /// billed) with every request.
    pub search: bool,
}

/// A tool call seen in the agent's events (deduplicated by id).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolUse {
    pub id: String,
    /// The backend's tool name (`Read`, `read_file`, `shell` for a Codex command, …).
    pub name: String,
    /// The tool's input verbatim (for a Codex command: `{"command": …}`).
    pub input: serde_json::Value,
    /// What it did to the file system, in backend-neutral terms (what the read gates check).
    pub access: FileAccess,
}

/// The file-system effect of one tool use, normalised across backends (what the read gates
/// check). Paths are as the agent wrote them: relative to the agent's working directory
/// unless absolute; the gates normalise them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FileAccess {
    /// Files read, in whole or in part (`Read`, `read_file`, `cat`, `sed -n`, …).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read: Vec<String>,
    /// Paths searched or listed (`Grep`, `Glob`, `grep_search`, `rg`, `ls`, …); an empty
    /// string is the working directory.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub search: Vec<String>,
    /// Paths written or edited (a reviewer never may).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub write: Vec<String>,
    /// Set when the tool's file accesses cannot be derived (e.g. `find`, a script, `$(…)`);
    /// the read membership gate treats such a tool use as off-target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unknown: Option<String>,
}

impl FileAccess {
    /// Not a file tool.
    pub fn none() -> Self {
        Self::default()
    }

    pub fn read(path: impl Into<String>) -> Self {
        Self {
            read: vec![path.into()],
            ..Self::default()
        }
    }

    pub fn search(path: impl Into<String>) -> Self {
        Self {
            search: vec![path.into()],
            ..Self::default()
        }
    }

    pub fn unknown(reason: impl Into<String>) -> Self {
        Self {
            unknown: Some(reason.into()),
            ..Self::default()
        }
    }

    /// Whether the tool touched the file system at all (or might have).
    pub fn is_file_tool(&self) -> bool {
        !(self.read.is_empty()
            && self.search.is_empty()
            && self.write.is_empty()
            && self.unknown.is_none())
    }
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
    /// The configured agent name that ran (e.g. `claude`, `codex`).
    pub agent: String,
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
    /// Why it failed, when its events name a cause (SPEC §19.2): transient, permanent or a
    /// truncated answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<super::Fault>,
    /// The size of the answer text once it was parsed and dropped ([`Self::forget_answer`]).
    /// Not serialized: outcome.json, written before, gives it.
    #[serde(skip)]
    pub answer_forgotten: Option<u64>,
}

impl AgentOutcome {
    /// The outcome of a dispatch of `agent` that has not produced anything yet.
    pub fn empty(
        label: &str,
        agent: &str,
        role: Role,
        tier: Tier,
        model: &str,
        end: ProcessEnd,
    ) -> Self {
        Self {
            label: label.to_string(),
            agent: agent.to_string(),
            role,
            tier,
            model: model.to_string(),
            end,
            tool_uses: Vec::new(),
            result: None,
            malformed_lines: 0,
            stdout_bytes: 0,
            stdout_truncated: false,
            stderr_truncated: false,
            duration_ms: 0,
            fault: None,
            answer_forgotten: None,
        }
    }

    /// Bytes of the answer text (None without one), also once it was forgotten.
    pub fn answer_bytes(&self) -> Option<u64> {
        let text = self.result.as_ref().and_then(|r| r.text.as_ref());
        text.map(|t| t.len() as u64).or(self.answer_forgotten)
    }

    /// Drop the answer text, keeping its size: once it was parsed nothing reads it again, and
    /// events.jsonl holds it verbatim (a round of 3 × 1,000 findings held ~0.9 MiB of
    /// answers through the Judge's dispatch).
    pub fn forget_answer(&mut self) {
        if let Some(text) = self.result.as_mut().and_then(|r| r.text.take()) {
            self.answer_forgotten = Some(text.len() as u64);
        }
    }

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

    /// Tokens the agent reported using (0 without a result event).
    pub fn tokens(&self) -> u64 {
        self.result.as_ref().map_or(0, |r| r.usage.total())
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
