//! A run read back as it stands now: its meta.json, whether the arev process recorded in it
//! still runs, its progress.json, and the status to show — meta.json's, except that a run
//! meta.json calls `running` whose process is gone is `abandoned`. That status is derived
//! here each time and never written: a live run is never marked abandoned on disk.

use super::process::Liveness;
use super::progress::read_progress;
use super::{Meta, RunStatus};
use crate::records::RunProgress;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A run's status as shown by `arev runs` and `arev report`: meta.json's, or `abandoned` —
/// meta.json says `running` but the arev process that ran the review is gone (killed, machine
/// rebooted), so the run will never finish. Derived each time, never written to meta.json.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RunState {
    Running,
    Abandoned,
    Complete,
    Aborted,
    Interrupted,
    Empty,
}

impl RunState {
    /// The status to show for `status` in meta.json with the recorded process `liveness`.
    pub fn derive(status: RunStatus, liveness: Liveness) -> Self {
        match status {
            RunStatus::Running if liveness == Liveness::Gone => Self::Abandoned,
            RunStatus::Running => Self::Running,
            RunStatus::Complete => Self::Complete,
            RunStatus::Aborted => Self::Aborted,
            RunStatus::Interrupted => Self::Interrupted,
            RunStatus::Empty => Self::Empty,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Abandoned => "abandoned",
            Self::Complete => "complete",
            Self::Aborted => "aborted",
            Self::Interrupted => "interrupted",
            Self::Empty => "empty",
        }
    }

    /// Still going: neither finished nor abandoned.
    pub fn is_live(self) -> bool {
        self == Self::Running
    }
}

impl std::fmt::Display for RunState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Everything known about a run dir right now.
#[derive(Debug, Clone)]
pub struct RunView {
    pub dir: PathBuf,
    /// meta.json, or why it cannot be read.
    pub meta: Result<Meta, MetaReadError>,
    /// The recorded process of a `running` run (`Unknown` for any other, or when nothing
    /// was recorded).
    pub liveness: Liveness,
    /// The status to show (None when meta.json cannot be read).
    pub state: Option<RunState>,
    /// progress.json, when there is one.
    pub progress: Option<RunProgress>,
}

/// Why a run's meta.json cannot be read (shared, so that a `RunView` can be cloned).
#[derive(Debug, Clone, thiserror::Error)]
pub enum MetaReadError {
    #[error("meta.json: {0}")]
    Io(Arc<std::io::Error>),
    /// Over the size cap, or not UTF-8.
    #[error("{0}")]
    Capped(Arc<super::capped::CappedReadError>),
    #[error("meta.json: {0}")]
    Json(Arc<serde_json::Error>),
}

pub(super) fn read_meta(dir: &Path) -> Result<Meta, MetaReadError> {
    let p = dir.join("meta.json");
    let text = super::capped::read_capped(&p, super::capped::MAX_RECORD_BYTES, "a run record")
        .map_err(|e| match e {
            super::capped::CappedReadError::Io { source, .. } => {
                MetaReadError::Io(Arc::new(source))
            }
            e => MetaReadError::Capped(Arc::new(e)),
        })?;
    serde_json::from_slice(&text).map_err(|e| MetaReadError::Json(Arc::new(e)))
}

/// The liveness of the process that runs `meta`'s run, when meta.json says `running`.
pub fn liveness(meta: &Meta) -> Liveness {
    match (meta.status, meta.process) {
        (RunStatus::Running, Some(p)) => p.liveness(),
        _ => Liveness::Unknown,
    }
}

/// Read the run in `dir`.
pub fn read_run(dir: &Path) -> RunView {
    let meta = read_meta(dir);
    let live = meta.as_ref().map_or(Liveness::Unknown, liveness);
    RunView {
        dir: dir.to_path_buf(),
        state: meta.as_ref().ok().map(|m| RunState::derive(m.status, live)),
        liveness: live,
        meta,
        progress: read_progress(dir),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_running_run_whose_process_is_gone_is_abandoned() {
        use Liveness::*;
        assert_eq!(
            RunState::derive(RunStatus::Running, Gone),
            RunState::Abandoned
        );
        assert_eq!(
            RunState::derive(RunStatus::Running, Alive),
            RunState::Running
        );
        assert_eq!(
            RunState::derive(RunStatus::Running, Unknown),
            RunState::Running,
            "nothing recorded: never guessed abandoned"
        );
        assert_eq!(
            RunState::derive(RunStatus::Complete, Gone),
            RunState::Complete
        );
        assert!(RunState::Running.is_live() && !RunState::Abandoned.is_live());
    }
}
