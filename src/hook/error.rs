//! Why a hook could not do its work: never an exit code (hooks always exit 0), the one line
//! its `systemMessage` shows when it fails open.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum HookError {
    #[error("the hook input on stdin is not the expected JSON ({0})")]
    Input(#[source] serde_json::Error),
    #[error(
        "the hook input has an unusable session_id {0:?} (expected letters, digits, `-`, `_`, `.`)"
    )]
    SessionId(String),
    #[error("the arev configuration is invalid: {0}")]
    BadConfig(#[source] crate::config::ConfigError),
    /// A setting read again where it is used (a duration).
    #[error("{0}")]
    Setting(#[from] crate::config::ConfigError),
    #[error("cannot open the repository at {}: {}", .root.display(), .source.message())]
    OpenRepo {
        root: PathBuf,
        #[source]
        source: git2::Error,
    },
    #[error("cannot add .arev/ to .git/info/exclude: {0}")]
    GitExclude(#[source] std::io::Error),
    #[error("cannot snapshot the working tree: {0}")]
    Snapshot(#[source] crate::target::TargetError),
    #[error(
        "cannot compute the session's changes since its baseline snapshot ({source}); a \
         prompt starting with {prefix} records a new baseline"
    )]
    Changes {
        #[source]
        source: crate::target::TargetError,
        prefix: String,
    },
    #[error("cannot write {}: {source}", .path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot locate the arev executable ({0})")]
    CurrentExe(#[source] std::io::Error),
}
