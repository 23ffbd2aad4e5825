//! What one dispatch is made of (`AgentSpec`, `DispatchRequest`), what a backend makes of
//! it (`Invocation`), and the configuration types a backend's profile names (`TierModels`,
//! `ModelPrice`; `config` re-exports them).

use super::{BackendKind, EventFormat};
use crate::records::{Role, Tier};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Prompts longer than this go on stdin even for backends that take the prompt as an
/// argument: Linux caps one argument at 128 KiB (`MAX_ARG_STRLEN`), and a Judge prompt
/// carrying many findings can approach that.
pub const MAX_ARG_PROMPT: usize = 100 * 1024;

/// How to start one agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    /// Arguments after the program.
    pub args: Vec<String>,
    /// Bytes written to stdin before closing it; `None` = stdin is `/dev/null` (the prompt
    /// is an argument).
    pub stdin: Option<Arc<[u8]>>,
    /// Variables set on top of the inherited (allowlisted) environment.
    pub env: Vec<(String, String)>,
    /// Files the argv or environment names, written (into the agent's `out_dir`) before the
    /// agent starts: Codex's model instructions, Gemini's system prompt and tool policy.
    pub files: Vec<(PathBuf, Arc<[u8]>)>,
}

/// A program an agent's CLI is started under: `program <args…> <binary> <invocation args…>`
/// (OpenCode's filesystem view, `backends/view.rs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wrap {
    pub program: PathBuf,
    pub args: Vec<std::ffi::OsString>,
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

/// `[prices."<model>"]`: one model's list prices in USD per million tokens, what a USD
/// budget prices its tokens with (docs/configuration.md). `cache_read` and `cache_write`
/// left out are priced as `input`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelPrice {
    /// Input tokens not read from a cache.
    pub input: f64,
    /// Output tokens (reasoning included).
    pub output: f64,
    /// Input tokens read back from the prompt cache.
    #[serde(default)]
    pub cache_read: Option<f64>,
    /// Input tokens written to the prompt cache.
    #[serde(default)]
    pub cache_write: Option<f64>,
}

impl ModelPrice {
    /// (input, output, cache read, cache write), the cache prices defaulting to `input`.
    pub fn rates(&self) -> [f64; 4] {
        [
            self.input,
            self.output,
            self.cache_read.unwrap_or(self.input),
            self.cache_write.unwrap_or(self.input),
        ]
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
    /// A self-hosted OpenAI-compatible endpoint every request goes to (docs/self-hosted.md).
    pub base_url: Option<String>,
    /// The variable holding that endpoint's key.
    pub api_key_env: Option<String>,
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
    /// What inside `read_dirs` the agent may NOT read (absolute; a directory stands for all
    /// below it): the repository's `.git`, its ignored and untracked paths and the tracked
    /// files left out of the context scope (docs/trust.md "What reviewers may read"). Each
    /// backend's own permission layer refuses them where it can.
    pub hidden: Vec<PathBuf>,
    /// `agents/r<N>/<label>/`: prompt.md, events.jsonl, stderr.log, outcome.json go here.
    pub out_dir: PathBuf,
    /// Wall-clock timeout; then SIGTERM to the group.
    pub timeout: Duration,
    /// SIGTERM → SIGKILL grace period.
    pub grace: Duration,
    /// Byte cap for stdout and for stderr (each); the rest is discarded and flagged.
    pub output_cap: u64,
    /// This dispatch's share of what is left of `--budget-usd` (docs/contracts.md §19.3): Claude's
    /// `--max-budget-usd`, so the CLI itself stops spending past it. None without a budget
    /// (and for backends without such a cap).
    pub max_budget_usd: Option<f64>,
    /// The list price of this dispatch's model (`backends::price_of`): its running spend
    /// and, for a CLI that reports no cost (Codex, Gemini), the cost recorded. None: not
    /// known, its tokens are counted and its spend is $0 (a USD budget refuses such a panel
    /// before the run).
    pub price: Option<ModelPrice>,
    /// Whether a reviewer is offered a search tool (Grep): for a target of several files.
    /// A one-file target is Read whole, and every tool schema offered is resent (and
    /// billed) with every request.
    pub search: bool,
}
