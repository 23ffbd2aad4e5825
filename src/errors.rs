//! User-facing errors: one enum, each variant mapped to an exit code of
//! docs/architecture.md §4.2.

use crate::config::ConfigError;
use crate::exit_codes;
use crate::target::TargetError;
use std::path::PathBuf;

/// An error that ends the process with a one-line message and a documented exit code.
#[derive(Debug, thiserror::Error)]
pub enum ExpectedError {
    #[error("{0}")]
    Target(#[from] TargetError),
    #[error("{0}")]
    Config(#[from] ConfigError),
    /// A review-context input that cannot be used (`resolve::ContextError`, converted there:
    /// `resolve` sits above this module).
    #[error("{0}")]
    Context(String),
    #[error("{0}")]
    Usage(String),
    /// An agent CLI the review needs is missing (docs/contracts.md §20.4): found before any run dir. One
    /// line per problem (`preflight::PreflightError`, converted there: `preflight` sits above
    /// this module).
    #[error("{0}")]
    Preflight(String),
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot read run {path}: {message}")]
    BadRun { path: PathBuf, message: String },
    #[error("cannot read report {path}: {message}")]
    BadReport { path: PathBuf, message: String },
}

impl ExpectedError {
    pub fn exit_code(&self) -> i32 {
        match self {
            Self::Target(_)
            | Self::Config(_)
            | Self::Context(_)
            | Self::Usage(_)
            | Self::Preflight(_)
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
}

impl From<crate::store::RecordError> for ExpectedError {
    fn from(e: crate::store::RecordError) -> Self {
        Self::write(e.path, e.source)
    }
}
