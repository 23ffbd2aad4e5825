//! Dispatch inputs (`AgentSpec`, `DispatchRequest`) and the errors that prevent one; the
//! parsed `AgentOutcome` is a record (`records::outcome`).

pub use crate::config::{BackendKind, EventFormat, TierModels};
use crate::findings::{Role, Tier};
use std::path::PathBuf;
use std::time::Duration;

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
    /// This dispatch's share of what is left of `--budget-usd` (SPEC §19.3): Claude's
    /// `--max-budget-usd`, so the CLI itself stops spending past it. None without a budget
    /// (and for backends without such a cap).
    pub max_budget_usd: Option<f64>,
    /// The list price of this dispatch's model (`dispatch::price_of`): its running spend
    /// and, for a CLI that reports no cost (Codex, Gemini), the cost recorded. None: not
    /// known, its tokens are counted and its spend is $0 (a USD budget refuses such a panel
    /// before the run).
    pub price: Option<crate::config::ModelPrice>,
    /// Whether a reviewer is offered a search tool (Grep): for a target of several files.
    /// A one-file target is Read whole, and every tool schema offered is resent (and
    /// billed) with every request.
    pub search: bool,
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
