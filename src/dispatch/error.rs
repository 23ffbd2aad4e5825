//! The errors that prevent a dispatch from running at all.

use std::path::PathBuf;

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
