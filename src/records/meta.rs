//! meta.json: the run's status record, written at start and finalised on completion/abort/Ctrl-C.

use super::agent::Tier;
use super::config::{FailOn, RepoSource};
use super::stop::{AbortReason, RunStatus, RunStopReason};
use super::target::{Mode, TargetKind, TargetType};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A process, identified across pid reuse.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProcessId {
    pub pid: u32,
    /// Start time in clock ticks since boot (`/proc/<pid>/stat` field 22).
    pub start_time: u64,
}

/// The pinned target as recorded in meta.json.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MetaTarget {
    pub kind: TargetKind,
    /// The target as given on the command line.
    pub display: String,
    /// Absolute path agents Read (the file, diff.patch or manifest.txt).
    pub path: String,
    pub sha256: String,
    /// The re-pinned sha at the end (null until then).
    pub sha256_final: Option<String>,
    pub drift: bool,
    pub files: usize,
    pub skipped: usize,
}

/// meta.json.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Meta {
    pub run_id: String,
    pub status: RunStatus,
    pub stop_reason: Option<RunStopReason>,
    pub abort_reason: Option<AbortReason>,
    /// One-line human explanation of an abort.
    pub abort_detail: Option<String>,
    pub target: MetaTarget,
    pub mode: Mode,
    pub target_type: TargetType,
    pub rounds_planned: u32,
    pub rounds_completed: u32,
    pub passes: u32,
    /// Tier the run started at (`--model`).
    pub model_start: Tier,
    /// Tier of the last round dispatched.
    pub model_current: Tier,
    /// Tier of every round, in order.
    pub model_history: Vec<Tier>,
    pub arev_version: String,
    /// sha256 of the resolved configuration (canonical JSON).
    pub config_digest: String,
    /// The repository inputs this run used (`--repo-config`); absent in older runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo_inputs: Option<MetaRepoInputs>,
    pub started_at: String,
    pub finished_at: Option<String>,
    /// The arev process that runs the review (pid and start time): a run still `running`
    /// whose process is gone is shown as `abandoned`. Null where it cannot be known.
    #[serde(default)]
    pub process: Option<ProcessId>,
    /// The exit code that process ended with, recorded last (after the report and any
    /// publish): what `arev run --background --wait` and scripts read. Null while the run
    /// runs, or when its process died before it could record one.
    #[serde(default)]
    pub exit_code: Option<i32>,
    /// `arev run --iterate` only: where the fixes are (kept on abort and Ctrl-C too).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iterate: Option<MetaIterate>,
    /// A verdict-cache hit: the run whose verdict this run reuses (no agent was dispatched).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_from: Option<String>,
    /// The gate the run was started with (`--fail-on`, else the configuration it ran under):
    /// what `arev result` exits by (docs/trust.md); absent in older runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fail_on: Option<FailOn>,
    /// `--baseline`: the run this one was compared with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_run_id: Option<String>,
    /// sha256 of the context scope (`target/context.txt` with each file's blob id,
    /// docs/how-a-review-runs.md "What reviewers may read"); absent in older runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_sha: Option<String>,
    /// The context scope's mode and size; absent in older runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<MetaContext>,
}

/// The context scope as recorded in meta.json.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MetaContext {
    /// `[review] context`.
    pub mode: super::config::ContextMode,
    /// Files in `target/context.txt`.
    pub files: usize,
    /// Context files some agent read whose content changed by the end of the run (drift).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub drift: Vec<String>,
}

/// Where the repository inputs (the repo's `arev.toml`/`.arev/config.toml` and
/// `.arev/{agents,prompts,heuristics}/*.md`) came from, and which were read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MetaRepoInputs {
    /// `worktree`, `base` (the merge-base commit of `--base`) or `ignore`.
    pub source: RepoSource,
    /// With `base`: the commit they were read from.
    pub commit: Option<String>,
    /// Repo-relative paths of the inputs read.
    pub files: Vec<String>,
    /// sha256 over the inputs read (path and text, in path order).
    pub digest: String,
}

/// The iterate run's branch and worktree, and how far it got.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MetaIterate {
    pub branch: String,
    pub worktree: String,
    pub base_commit: String,
    pub iterations_completed: u32,
    pub max_iterations: u32,
}
