//! The resolved configuration types (public wire type: `schemas/config.schema.json`).

pub use crate::records::config::{ContextMode, FailOn, RepoSource};
pub use crate::records::SandboxMode;
use crate::records::{Severity, Tier};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub use crate::backends::{default_models, BackendKind, EventFormat, ModelPrice, TierModels};

/// `[review]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReviewConfig {
    pub model: Tier,
    pub passes: u32,
    pub max_rounds: u32,
    pub fail_on: FailOn,
    pub max_file_bytes: u64,
    pub max_output_bytes: u64,
    /// Project rules files, repository-relative; empty = `REVIEW.md` and `.arev/rules.md`
    /// when present (docs/architecture.md §19).
    #[serde(default)]
    pub rules: Vec<String>,
    /// Globs (repository-relative) left out of diffs, directories and globs, listed in the
    /// coverage as `excluded`; `--exclude` adds to them.
    #[serde(default)]
    pub exclude: Vec<String>,
    /// Leave well-known lockfiles (`Cargo.lock`, `package-lock.json`, …) out of diffs,
    /// directories and globs, listed in the coverage as `lockfile`.
    #[serde(default = "skip_lockfiles_default")]
    pub skip_lockfiles: bool,
    /// What to look at first (`--focus` wins): sent to the Enthusiasts and the Judge.
    #[serde(default)]
    pub focus: String,
    /// `[[review.paths]]`: instructions for the files a glob matches, sent only when the
    /// target has such files.
    #[serde(default)]
    pub paths: Vec<PathInstruction>,
    /// Abort when an Enthusiast pass is lost to faults instead of going on with the passes
    /// that answered (the round is then recorded `degraded`).
    #[serde(default)]
    pub require_all_passes: bool,
    /// What agents may read besides the target: `tree` (every tracked text file within
    /// `max_file_bytes`) or `target` (only the target's files). A repository config may
    /// narrow it to `target`, never widen it.
    #[serde(default)]
    pub context: ContextMode,
    /// Globs (repository-relative, as `exclude` writes them) left out of the context scope. A
    /// repository config's globs add to the trusted ones, never replace them.
    #[serde(default)]
    pub context_exclude: Vec<String>,
}

fn skip_lockfiles_default() -> bool {
    true
}

/// One `[[review.paths]]` entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PathInstruction {
    /// A repository-relative glob (`migrations/**`, `src/**/*.sql`).
    pub glob: String,
    /// What reviewers must know or check about those files.
    pub instructions: String,
}

/// `[timeouts]`, humantime strings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TimeoutsConfig {
    pub agent: String,
    pub grace: String,
    pub verify: String,
    /// How long transient API faults (overloaded, rate limited, server errors, a cut
    /// stream) are retried with backoff before the dispatch counts as failed.
    #[serde(default = "retry_default")]
    pub retry: String,
    /// Wall-clock limit of one run of a Prover's reproducer (then its processes are killed).
    #[serde(default = "prove_timeout_default")]
    pub prove: String,
    pub enthusiast: RoleTimeouts,
    pub adversary: RoleTimeouts,
    pub judge: RoleTimeouts,
    pub fixer: RoleTimeouts,
    /// The Prover's dispatch (`--prove`); its reproducer's runs are `prove` above.
    #[serde(default)]
    pub prover: RoleTimeouts,
}

fn retry_default() -> String {
    "2m".into()
}

fn prove_timeout_default() -> String {
    "5m".into()
}

/// `[timeouts.<role>]`: empty strings mean "not overridden".
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RoleTimeouts {
    #[serde(default)]
    pub agent: String,
    #[serde(default)]
    pub grace: String,
}

impl TimeoutsConfig {
    /// The override table of `role`.
    pub fn of(&self, role: crate::records::Role) -> &RoleTimeouts {
        use crate::records::Role;
        match role {
            Role::Enthusiast => &self.enthusiast,
            Role::Adversary => &self.adversary,
            Role::Judge => &self.judge,
            Role::Fixer => &self.fixer,
            Role::Prover => &self.prover,
        }
    }
}

/// `[budget]`: 0 means no limit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BudgetConfig {
    pub usd: f64,
    pub tokens: u64,
}

/// `[prove]`: proving confirmed findings with reproducers run in a sandbox (docs/prove.md).
/// `sandbox = "none"`, `env` and `bind_ro` are trusted: a repository's config may not set
/// them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProveConfig {
    /// `bwrap` (bubblewrap), or `none`: reproducers run unsandboxed (user config or
    /// `--prove-sandbox` only).
    pub sandbox: SandboxMode,
    /// Names of environment variables passed from arev's environment to a reproducer.
    pub env: Vec<String>,
    /// Absolute paths (or `~/…`) visible read-only in the sandbox at the same place:
    /// toolchains and dependency caches an offline test needs.
    pub bind_ro: Vec<String>,
    /// The address-space limit of a reproducer, e.g. "4GiB".
    pub memory: String,
    /// Confirmed findings at or above this severity are proven.
    pub min_severity: Severity,
    /// At most this many findings are proven per review, most severe first.
    pub max_findings: u32,
}

impl Default for ProveConfig {
    fn default() -> Self {
        Self {
            sandbox: SandboxMode::Bwrap,
            env: vec![],
            bind_ro: vec![],
            memory: "4GiB".into(),
            min_severity: Severity::High,
            max_findings: 5,
        }
    }
}

/// `[localization]`: empty `primary` = no instruction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LocalizationConfig {
    pub primary: String,
    pub allowed: Vec<String>,
}

/// `[run]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    pub dir: String,
}

/// `[cache]`: the verdict cache (docs/architecture.md §20).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CacheConfig {
    /// Empty = `$XDG_CACHE_HOME/arev`, else `~/.cache/arev`; otherwise an absolute path
    /// outside the repository.
    pub dir: String,
}

/// `[hook] mode`: when the Stop hook reviews.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum HookMode {
    /// Only sessions opted in with a prompt starting with `prefix`.
    Prefix,
    /// Every session.
    Always,
    /// Never.
    Off,
}

/// The Stop hook's `timeout` in hooks/hooks.json and in what `arev install claude` writes,
/// in seconds: Claude Code kills the hook after it.
pub const STOP_HOOK_TIMEOUT_SECS: u64 = 3600;
/// What `[hook] timeout` plus `[timeouts] grace` must leave of the Stop hook's timeout: time
/// for the stopped review to record its run as `interrupted` and for the hook to say so.
pub const STOP_HOOK_MARGIN_SECS: u64 = 120;

/// `[hook]`: the Claude Code Stop/UserPromptSubmit hooks (docs/architecture.md §14.1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HookConfig {
    pub mode: HookMode,
    pub prefix: String,
    pub max_nudges: u32,
    pub max_blocks: u32,
    /// humantime, e.g. "50m".
    pub timeout: String,
}

/// `[agents.<name>]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentConfig {
    /// `claude` | `codex` | `gemini` | `command`.
    pub backend: BackendKind,
    /// A name on PATH or a path.
    pub binary: String,
    /// The event format a `command` agent prints (`claude` | `codex` | `gemini`); only
    /// for `backend = "command"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<EventFormat>,
    /// `--max-turns` (claude backend only).
    #[serde(default = "default_max_turns")]
    pub max_turns: u32,
    /// Appended after arev's own flags (for `command`: the whole argv; `{model}` is
    /// replaced by the tier's model).
    #[serde(default)]
    pub extra_args: Vec<String>,
    /// Model per tier; default: the backend's own tier map.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub models: Option<TierModels>,
    /// Wall-clock limit per dispatch of this agent (humantime); default `[timeouts] agent`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<String>,
    /// Further environment variables (exact names) passed to this agent, e.g. the
    /// `env_key` of a custom Codex model provider.
    #[serde(default)]
    pub pass_env: Vec<String>,
    /// The model to fall back to when the tier's model is overloaded (claude backend:
    /// `--fallback-model`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback_model: Option<String>,
    /// An OpenAI-compatible endpoint the user runs (Ollama, vLLM, llama.cpp's server):
    /// every request of this agent goes there (docs/self-hosted.md). Trusted: refused in
    /// the repository's config under `--repo-config base`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// The environment variable holding the endpoint's API key (passed to this agent only);
    /// none: the endpoint is called without a key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
}

fn default_max_turns() -> u32 {
    40
}

impl AgentConfig {
    /// The event format it prints.
    pub fn event_format(&self) -> Option<EventFormat> {
        self.backend.native_format().or(self.format)
    }

    /// Model per tier: the configured map or the backend's default.
    pub fn tier_models(&self) -> TierModels {
        self.models
            .clone()
            .unwrap_or_else(|| default_models(self.backend))
    }
}

/// One agent name, or a list of them (the Enthusiast's round-robin over passes).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum AgentNames {
    One(String),
    Many(Vec<String>),
}

impl AgentNames {
    pub fn names(&self) -> Vec<String> {
        match self {
            Self::One(n) => vec![n.clone()],
            Self::Many(v) => v.clone(),
        }
    }
}

/// `[roles]`: agent name per role; `enthusiast` may list several agents, used round-robin
/// across passes (pass p uses list[(p-1) % len]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RolesConfig {
    pub enthusiast: AgentNames,
    pub adversary: String,
    pub judge: String,
}

/// `[publish] dismiss_by`: who may dismiss a finding on a pull request (a reply
/// `arev: false-positive …`, a 👎, resolving arev's thread). Trusted config only: refused
/// in the repository's config, which the pull request itself can change.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DismissBy {
    /// People with write access (GitHub OWNER/MEMBER/COLLABORATOR or write permission;
    /// GitLab access level ≥ Developer).
    #[default]
    Maintainers,
    /// Anyone who can comment on the pull request.
    Anyone,
}

/// `[publish]`: publishing to pull requests.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PublishConfig {
    #[serde(default)]
    pub dismiss_by: DismissBy,
}

/// The whole resolved configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub review: ReviewConfig,
    pub budget: BudgetConfig,
    pub localization: LocalizationConfig,
    pub timeouts: TimeoutsConfig,
    pub hook: HookConfig,
    pub run: RunConfig,
    pub cache: CacheConfig,
    #[serde(default)]
    pub prove: ProveConfig,
    pub publish: PublishConfig,
    pub agents: BTreeMap<String, AgentConfig>,
    pub roles: RolesConfig,
    /// List prices by model string (`[prices."gpt-5.5"]`): the defaults cover the models
    /// of the backends' default tier maps.
    #[serde(default)]
    pub prices: BTreeMap<String, ModelPrice>,
}
