//! Errors of `arev eval`: every one is bad input or an unusable repository (exit 2), named
//! in one line.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    /// A flag or argument is wrong.
    #[error("{0}")]
    Usage(String),
    /// A case file is unreadable or invalid.
    #[error("{path}: {message}")]
    BadCase { path: PathBuf, message: String },
    /// A git operation failed.
    #[error("git: {0}")]
    Git(String),
    /// An eval report (for `compare`) is unreadable or invalid.
    #[error("{path}: {message}")]
    BadReport { path: PathBuf, message: String },
    /// An output file or directory cannot be written.
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The configuration of the panel is invalid.
    #[error("{0}")]
    Config(#[from] crate::config::ConfigError),
    /// `--prove`: the sandbox cannot run reproducers here (the message names the fix).
    #[error("{0}")]
    Sandbox(#[from] crate::prove::ProveError),
}

impl EvalError {
    pub fn write(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Write {
            path: path.into(),
            source,
        }
    }
}
