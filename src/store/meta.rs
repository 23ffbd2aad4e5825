//! meta.json: the run's status record, written at start and finalised on completion/abort/Ctrl-C.

use crate::findings::Tier;
use crate::target::{Mode, TargetKind, TargetType};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Lifecycle of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Running,
    Complete,
    Aborted,
    Interrupted,
    Empty,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Complete => "complete",
            Self::Aborted => "aborted",
            Self::Interrupted => "interrupted",
            Self::Empty => "empty",
        }
    }
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
    pub stop_reason: Option<String>,
    pub abort_reason: Option<String>,
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
    pub started_at: String,
    pub finished_at: Option<String>,
    /// `arev run --iterate` only: where the fixes are (kept on abort and Ctrl-C too).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iterate: Option<MetaIterate>,
    /// A verdict-cache hit: the run whose verdict this run reuses (no agent was dispatched).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_from: Option<String>,
    /// `--baseline`: the run this one was compared with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_run_id: Option<String>,
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
