//! Publish errors: a missing or bad setting (before any request) or a failed request.
//! Messages never hold the token (request errors are scrubbed before they are built).

use std::path::PathBuf;
use ureq::http::Method;

#[derive(Debug, thiserror::Error)]
pub enum PublishError {
    /// A required environment variable is not set (checked before any request).
    #[error("{var} is not set: {why}")]
    MissingEnv {
        var: &'static str,
        why: &'static str,
    },
    /// A setting that is present but unusable (a bad event file, a non-numeric id, …).
    #[error("{0}")]
    BadSetting(String),
    /// The forge answered with an error status (after the retries the status allows).
    #[error("{method} {path}: HTTP {status}: {message}")]
    Http {
        method: Method,
        path: String,
        status: u16,
        message: String,
    },
    /// No answer (connection, timeout, TLS), after the retries.
    #[error("{method} {path}: {message}")]
    Transport {
        method: Method,
        path: String,
        message: String,
    },
    /// Rate limited for longer than arev waits.
    #[error("{method} {path}: rate limited (HTTP {status}) for {wait_s} s, longer than the {max_s} s arev waits; retry later with `arev publish`")]
    RateLimited {
        method: Method,
        path: String,
        status: u16,
        wait_s: u64,
        max_s: u64,
    },
    /// The whole publish ran past its time bound (`AREV_PUBLISH_TIMEOUT`).
    #[error("{method} {path}: the publish ran out of its {total_s} s (AREV_PUBLISH_TIMEOUT); retry later with `arev publish`")]
    OutOfTime {
        method: Method,
        path: String,
        total_s: u64,
    },
    /// The report is not of the commit the pull request is at (or names none).
    #[error("{0}")]
    WrongTarget(String),
    /// An answer arev cannot use (not JSON, or without a field it needs).
    #[error("{method} {path}: unexpected answer: {message}")]
    BadAnswer {
        method: Method,
        path: String,
        message: String,
    },
    /// An answer over the size arev reads for it.
    #[error("{method} {path}: the answer is larger than {limit_mib} MiB, the most arev reads from a forge for it")]
    TooLarge {
        method: Method,
        path: String,
        limit_mib: u64,
    },
    /// The report does not pass the checks before anything is built from it.
    #[error("report of run {run_id}: {check}")]
    BadReport {
        run_id: String,
        #[source]
        check: ReportCheck,
    },
    #[error("cannot read {path}: {message}")]
    Read { path: PathBuf, message: String },
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// A field of a report that goes into requests as it is, and is not plain (the texts shown
/// are already made inert).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReportCheck {
    #[error("schema_version {found} is not {expected} (this arev's report version)")]
    SchemaVersion { found: u32, expected: u32 },
    #[error("finding {id}: fingerprint `{fingerprint}` is not 1-128 ASCII letters and digits")]
    Fingerprint { id: String, fingerprint: String },
    #[error("finding {id}: file `{file}` is not a repository-relative path")]
    File { id: String, file: String },
    #[error("finding {0}: line 0")]
    LineZero(String),
    #[error("coverage: `{0}` is not a repository-relative path")]
    Coverage(String),
}

impl PublishError {
    /// Whether the error happened before any request (a setting), i.e. a usage error.
    pub fn is_setting(&self) -> bool {
        matches!(
            self,
            Self::MissingEnv { .. }
                | Self::BadSetting(_)
                | Self::BadReport { .. }
                | Self::Read { .. }
                | Self::WrongTarget(_)
        )
    }
}

/// A publish that failed after its settings were good: which forge, why, and where the
/// payload is kept for a retry.
#[derive(Debug, thiserror::Error)]
#[error("{what}: {source}{kept}")]
pub struct PublishFailed {
    /// `publishing to github failed`, `reading #12 on gitlab`, `--publish github`.
    pub what: String,
    #[source]
    pub source: PublishError,
    /// `; the payload is kept in …`, or empty.
    pub kept: String,
}

impl From<PublishError> for crate::errors::ExpectedError {
    fn from(e: PublishError) -> Self {
        Self::Publish(Box::new(e))
    }
}

impl From<PublishFailed> for crate::errors::ExpectedError {
    fn from(e: PublishFailed) -> Self {
        Self::Publish(Box::new(e))
    }
}
