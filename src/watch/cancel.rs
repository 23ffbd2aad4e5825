//! `arev cancel`: stop a running run the way any SIGTERM does (docs/architecture.md §15.4)
//! — its arev process stops every agent (TERM, then KILL after the grace), records
//! `interrupted` and exits — after checking that the recorded pid still is that run's
//! process (pid and start time), and wait until the process is gone.

use crate::store::{read_run, Liveness, RunState, RunView};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use std::path::Path;
use std::time::{Duration, Instant};

/// What `cancel` did.
#[derive(Debug)]
pub enum Cancelled {
    /// The run was running; its process got SIGTERM and is gone. The run as it stands now
    /// (`interrupted`, unless it finished on its own meanwhile).
    Stopped(RunView),
    /// Nothing to do: the run is not running (finished, or abandoned).
    NotRunning(RunView),
}

/// Why a run could not be cancelled.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CancelError {
    #[error("{0}: meta.json cannot be read, so its process is unknown")]
    Unreadable(String),
    #[error("{0}: meta.json records no process to stop")]
    NoProcess(String),
    #[error("{dir}: cannot tell whether pid {pid} still is this run's process (no /proc); not signalling it")]
    CannotTell { dir: String, pid: u32 },
    #[error("{dir}: cannot signal pid {pid}: {reason}")]
    Signal {
        dir: String,
        pid: u32,
        reason: String,
    },
    #[error("{dir}: pid {pid} still runs {waited}s after SIGTERM")]
    StillRunning { dir: String, pid: u32, waited: u64 },
}

impl From<CancelError> for crate::errors::ExpectedError {
    fn from(e: CancelError) -> Self {
        Self::Watch(Box::new(e))
    }
}

/// SIGTERM the process of the run in `dir` if it is running, and wait up to `within` for it
/// to be gone.
pub fn cancel(dir: &Path, within: Duration) -> Result<Cancelled, CancelError> {
    let shown = dir.display().to_string();
    let view = read_run(dir);
    let meta = match &view.meta {
        Ok(m) => m,
        Err(e) => return Err(CancelError::Unreadable(format!("{shown}: {e}"))),
    };
    if view.state != Some(RunState::Running) {
        return Ok(Cancelled::NotRunning(view));
    }
    let Some(process) = meta.process else {
        return Err(CancelError::NoProcess(shown));
    };
    let pid = process.pid;
    match view.liveness {
        Liveness::Alive => {}
        Liveness::Gone => return Ok(Cancelled::NotRunning(read_run(dir))),
        Liveness::Unknown => return Err(CancelError::CannotTell { dir: shown, pid }),
    }
    let raw = i32::try_from(pid).map_err(|_| CancelError::Signal {
        dir: shown.clone(),
        pid,
        reason: "not a valid pid".into(),
    })?;
    kill(Pid::from_raw(raw), Signal::SIGTERM).map_err(|e| CancelError::Signal {
        dir: shown.clone(),
        pid,
        reason: e.to_string(),
    })?;
    let started = Instant::now();
    while process.liveness() == Liveness::Alive {
        if started.elapsed() > within {
            return Err(CancelError::StillRunning {
                dir: shown,
                pid,
                waited: within.as_secs(),
            });
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(Cancelled::Stopped(read_run(dir)))
}
