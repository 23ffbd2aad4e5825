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
    /// A case file breaks a shape rule.
    #[error("{}: {rule}", .path.display())]
    InvalidCase {
        path: PathBuf,
        #[source]
        rule: CaseRule,
    },
    /// `arev eval compare` of two evaluations scored at different tolerances.
    #[error(
        "the two evaluations were scored at different tolerances (±{a} and ±{b}): pass \
         --tolerance N to rescore both"
    )]
    Tolerances { a: u32, b: u32 },
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
    /// An operating-system call `arev eval` needs failed (`what` says which).
    #[error("{what}: {source}")]
    Os {
        what: &'static str,
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

/// The first shape rule a case breaks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CaseRule {
    #[error("schema_version {found} is not supported (expected {expected})")]
    SchemaVersion { found: u32, expected: u32 },
    #[error("id `{0}` must be 1–100 characters of [A-Za-z0-9._-], not starting with a dot")]
    BadId(String),
    #[error("id `{0}` differs from the file name: name the file `{0}.json`")]
    IdNotFileName(String),
    #[error("revision is empty")]
    NoRevision,
    #[error("targets is empty: name at least one file to review")]
    NoTargets,
    #[error("target `{target}`: {problem}")]
    TargetPath {
        target: String,
        problem: &'static str,
    },
    #[error("target `{0}` is listed twice")]
    TargetTwice(String),
    #[error("expected is empty: give at least one location of the defect")]
    NoExpected,
    #[error("expected[{index}]: file `{file}` is not one of the targets")]
    ExpectedNotTarget { index: usize, file: String },
    #[error("expected[{index}]: lines {start}..{end} — start must be ≥ 1 and end ≥ start")]
    ExpectedLines { index: usize, start: u32, end: u32 },
}

/// Why a case's checkout could not be made.
#[derive(Debug, thiserror::Error)]
pub enum CheckoutError {
    #[error("cannot create a temporary directory: {0}")]
    TempDir(#[source] std::io::Error),
    #[error("checkout: {what}: {}", .source.message())]
    Git {
        what: String,
        #[source]
        source: git2::Error,
    },
    #[error("checkout: cannot write {}: {source}", .path.display())]
    Alternates {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The user's arev configuration could not be put in place of the checkout's.
    #[error("checkout: {}: {source}", .path.display())]
    Config {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl EvalError {
    pub fn write(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Write {
            path: path.into(),
            source,
        }
    }
}

/// `arev eval`'s errors at the top: a write or the configuration as themselves, the rest
/// kept whole (`errors` sits below `eval`).
impl From<EvalError> for crate::errors::ExpectedError {
    fn from(e: EvalError) -> Self {
        match e {
            EvalError::Write { path, source } => Self::Write { path, source },
            EvalError::Config(c) => Self::Config(c),
            other => Self::Eval(Box::new(other)),
        }
    }
}
