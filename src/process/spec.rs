//! What to start and how: the program, its arguments and working directory, its
//! environment, its stdin, where its stdout and stderr go, and its parent-death signal —
//! what `spawn` builds a command from and `supervise` drives.

use nix::sys::signal::Signal;
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;

/// What to start, and how.
#[derive(Debug)]
pub struct Spec {
    /// Names the child in debug logs.
    pub label: String,
    /// A path, or a name looked up on PATH.
    pub program: PathBuf,
    pub args: Vec<OsString>,
    pub cwd: PathBuf,
    pub env: Env,
    pub stdin: Input,
    pub stdout: Sink,
    pub stderr: Sink,
    /// Sent to the child if arev dies first, even by SIGKILL (`PR_SET_PDEATHSIG`).
    pub parent_death: Signal,
}

/// The child's environment.
#[derive(Debug)]
pub enum Env {
    /// Exactly these variables.
    Only(Vec<(OsString, OsString)>),
    /// arev's environment without `remove`, plus `set`.
    Inherit {
        remove: Vec<OsString>,
        set: Vec<(OsString, OsString)>,
    },
}

/// The child's stdin.
#[derive(Debug)]
pub enum Input {
    /// `/dev/null`.
    Null,
    /// These bytes, then EOF (a child that exits early gives EPIPE: ignored).
    Bytes(Arc<[u8]>),
}

/// Where stdout or stderr goes.
#[derive(Debug)]
pub enum Sink {
    /// Read concurrently; at most `cap` bytes kept (everything is counted).
    Capture { cap: u64 },
    /// Read concurrently and appended to this file as it arrives, at most `cap` bytes
    /// (everything is counted); nothing is held in memory. An agent's event stream: the
    /// file grows while the agent works, and a long stream costs no buffer growth. Each
    /// chunk written is also sent to `tee`, if given (the agent's event fold), which sees
    /// exactly the bytes the file keeps.
    Spool {
        file: std::fs::File,
        cap: u64,
        tee: Option<tokio::sync::mpsc::UnboundedSender<Vec<u8>>>,
    },
    /// Written straight to this file.
    File(std::fs::File),
}
