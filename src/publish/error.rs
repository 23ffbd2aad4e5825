//! Publish errors: a missing or bad setting (before any request) or a failed request.
//! Messages never hold the token (request errors are scrubbed before they are built).

use std::path::PathBuf;

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
        method: &'static str,
        path: String,
        status: u16,
        message: String,
    },
    /// No answer (connection, timeout, TLS), after the retries.
    #[error("{method} {path}: {message}")]
    Transport {
        method: &'static str,
        path: String,
        message: String,
    },
    /// Rate limited for longer than arev waits.
    #[error("{method} {path}: rate limited (HTTP {status}) for {wait_s} s, longer than the {max_s} s arev waits; retry later with `arev publish`")]
    RateLimited {
        method: &'static str,
        path: String,
        status: u16,
        wait_s: u64,
        max_s: u64,
    },
    /// The whole publish ran past its time bound (`AREV_PUBLISH_TIMEOUT`).
    #[error("{method} {path}: the publish ran out of its {total_s} s (AREV_PUBLISH_TIMEOUT); retry later with `arev publish`")]
    OutOfTime {
        method: &'static str,
        path: String,
        total_s: u64,
    },
    /// The report is not of the commit the pull request is at (or names none).
    #[error("{0}")]
    WrongTarget(String),
    /// An answer arev cannot use (not JSON, or without a field it needs).
    #[error("{method} {path}: unexpected answer: {message}")]
    BadAnswer {
        method: &'static str,
        path: String,
        message: String,
    },
    /// An answer over the size arev reads for it.
    #[error("{method} {path}: the answer is larger than {limit_mib} MiB, the most arev reads from a forge for it")]
    TooLarge {
        method: &'static str,
        path: String,
        limit_mib: u64,
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

impl PublishError {
    /// Whether the error happened before any request (a setting), i.e. a usage error.
    pub fn is_setting(&self) -> bool {
        matches!(
            self,
            Self::MissingEnv { .. }
                | Self::BadSetting(_)
                | Self::Read { .. }
                | Self::WrongTarget(_)
        )
    }
}
