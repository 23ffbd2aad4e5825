//! User-facing errors: one enum, each variant mapped to an exit code of
//! docs/architecture.md §4.2.
//!
//! The modules below this one (`config`, `target`, `store`, …) are wrapped by `#[from]`.
//! A module above it (`resolve`, `preflight`, `install`, `publish`, `eval`, `watch`) cannot be
//! named here (layers point down, docs/architecture.md §3.1): its `thiserror` enum converts
//! itself at its boundary (`impl From<resolve::ContextError> for ExpectedError`) into the
//! variant of its module, which keeps the error whole: its message is the one users see, its
//! source chain is its own, and the typed value stays reachable (`downcast_ref` on the box).

use crate::config::ConfigError;
use crate::exit_codes;
use crate::store::{LoadRunError, RunDirsError};
use crate::target::TargetError;
use std::path::PathBuf;

/// The typed error of a module above this one, boxed at that module's boundary.
pub type Above = Box<dyn std::error::Error + Send + Sync + 'static>;

/// An error that ends the process with a one-line message and a documented exit code.
#[derive(Debug, thiserror::Error)]
pub enum ExpectedError {
    #[error("{0}")]
    Target(#[from] TargetError),
    #[error("{0}")]
    Config(#[from] ConfigError),
    /// A run that `arev status|result|cancel|report|publish` names cannot be found or read.
    #[error("{0}")]
    Run(#[from] LoadRunError),
    /// `arev suppress --finding` names no finding of the run, or several.
    #[error("{0}")]
    Finding(#[from] crate::records::FindFindingError),
    /// The run-dir base or `.arev` is a symbolic link or not a directory.
    #[error("{0}")]
    RunDirs(#[from] RunDirsError),
    /// A review-context or repository input that cannot be used (`resolve`'s errors:
    /// `ContextError`, `RepoInputError`, `SuppressionsError`, `OutputError`, `AgentSpecError`).
    #[error(transparent)]
    Resolve(Above),
    /// An agent CLI the review needs is missing (docs/contracts.md §20.4): found before any run
    /// dir. One line per problem (`preflight::PreflightError`).
    #[error(transparent)]
    Preflight(Above),
    /// `arev install claude` refused or could not write (`install::InstallError`).
    #[error(transparent)]
    Install(Above),
    /// A pull-request publication's settings or report (`publish::PublishError`, …).
    #[error(transparent)]
    Publish(Above),
    /// `arev merge` (`report::MergeError`).
    #[error("merge: {0}")]
    Merge(#[source] Above),
    /// `arev eval` (`eval::EvalError`).
    #[error(transparent)]
    Eval(Above),
    /// `arev status|result|cancel` (`watch::SelectError`, `watch::CancelError`).
    #[error(transparent)]
    Watch(Above),
    /// A usage message arev composes itself (a flag's value, a missing `HOME`): no source.
    #[error("{0}")]
    Usage(String),
    /// An operating-system call arev needs failed (`what`: "cannot read the current
    /// directory", "cannot start the runtime", …).
    #[error("{what}: {source}")]
    Os {
        what: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot read run {path}: {source}")]
    BadRun {
        path: PathBuf,
        #[source]
        source: Above,
    },
    #[error("cannot read report {path}: {source}")]
    BadReport {
        path: PathBuf,
        #[source]
        source: Above,
    },
}

impl ExpectedError {
    pub fn exit_code(&self) -> i32 {
        match self {
            Self::Target(_)
            | Self::Config(_)
            | Self::Run(_)
            | Self::Finding(_)
            | Self::RunDirs(_)
            | Self::Resolve(_)
            | Self::Preflight(_)
            | Self::Install(_)
            | Self::Publish(_)
            | Self::Merge(_)
            | Self::Eval(_)
            | Self::Watch(_)
            | Self::Usage(_)
            | Self::Os { .. }
            | Self::BadRun { .. }
            | Self::BadReport { .. } => exit_codes::USAGE,
            // A run dir that cannot be written means nothing was reviewed.
            Self::Write { .. } => exit_codes::USAGE,
        }
    }

    pub fn write(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Write {
            path: path.into(),
            source,
        }
    }

    /// The failure of what `what` says arev was doing.
    pub fn os(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> Self {
        let what = what.into();
        move |source| Self::Os { what, source }
    }

    /// A run dir's file that cannot be read or rendered.
    pub fn bad_run(path: impl Into<PathBuf>, source: impl Into<Above>) -> Self {
        Self::BadRun {
            path: path.into(),
            source: source.into(),
        }
    }

    /// A report named on the command line that cannot be read or parsed.
    pub fn bad_report(path: impl Into<PathBuf>, source: impl Into<Above>) -> Self {
        Self::BadReport {
            path: path.into(),
            source: source.into(),
        }
    }
}

impl From<crate::store::RecordError> for ExpectedError {
    fn from(e: crate::store::RecordError) -> Self {
        Self::write(e.path, e.source)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::LoadRunError;

    #[test]
    fn a_wrapped_error_keeps_its_message_and_exits_2() {
        let e = LoadRunError::NotFound {
            id: "x".into(),
            base: "/r".into(),
        };
        let top: ExpectedError = e.clone().into();
        assert_eq!(top.to_string(), e.to_string());
        assert_eq!(top.exit_code(), exit_codes::USAGE);
        assert!(matches!(
            top,
            ExpectedError::Run(LoadRunError::NotFound { .. })
        ));
        let gone = std::io::Error::new(std::io::ErrorKind::NotFound, "gone");
        let os = ExpectedError::os("cannot read the current directory")(gone);
        assert_eq!(os.to_string(), "cannot read the current directory: gone");
        assert_eq!(os.exit_code(), exit_codes::USAGE);
        let bad = ExpectedError::bad_run("/r/x", "pruning: denied");
        assert_eq!(bad.to_string(), "cannot read run /r/x: pruning: denied");
    }
}
