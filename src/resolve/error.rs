//! The errors of resolving a run besides the configuration's and the target's: repository
//! inputs, the suppressions file, report destinations and agent specs. Each is exit 2 (bad
//! input, nothing reviewed), converted into `ExpectedError::Resolve` at this module's
//! boundary (`errors` sits below `resolve`).

use std::path::PathBuf;

/// Why one repository input cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum InputProblem {
    #[error("a symbolic link")]
    Symlink,
    #[error("{0} bytes")]
    TooLarge(u64),
    #[error("not UTF-8")]
    NotUtf8,
    #[error("{0}")]
    Io(#[source] std::io::Error),
    #[error("{}", .0.message())]
    Git(#[source] git2::Error),
}

/// The repository inputs (`--repo-config worktree|base`) cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum RepoInputError {
    #[error(
        "{name}: {problem}; a repository input must be a regular UTF-8 file of at most {max} bytes"
    )]
    Unusable {
        name: String,
        #[source]
        problem: InputProblem,
        max: usize,
    },
    /// The commit's tree cannot be read.
    #[error("{}", .0.message())]
    Commit(#[source] git2::Error),
}

/// Why a repository file cannot be read as a review-context input.
#[derive(Debug, thiserror::Error)]
pub enum RepoFileReadError {
    #[error(transparent)]
    Worktree(#[from] crate::target::RepoFileError),
    #[error("cannot read commit {commit}: {}", .source.message())]
    Commit {
        commit: git2::Oid,
        #[source]
        source: git2::Error,
    },
    #[error("{rel}: {}", .source.message())]
    Entry {
        rel: String,
        #[source]
        source: git2::Error,
    },
    #[error("{rel} is a symbolic link in commit {commit}: arev never follows symlinks")]
    Symlink { rel: String, commit: git2::Oid },
    #[error("{rel} is {size} bytes, over the {cap}-byte cap")]
    TooLarge {
        rel: String,
        size: usize,
        cap: usize,
    },
}

/// `.arev/suppressions.toml` cannot be used (`shown` names it).
#[derive(Debug, thiserror::Error)]
pub enum SuppressionsError {
    #[error("{}: {source}", .path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: is a symbolic link; arev does not follow links in repository inputs", .0.display())]
    Symlink(PathBuf),
    #[error("{0}: not UTF-8")]
    NotUtf8(String),
    #[error("{shown}: {message}")]
    Toml { shown: String, message: String },
    #[error("{shown}: unknown key `{key}` (only [[suppress]] entries)")]
    UnknownKey { shown: String, key: String },
    #[error("{0}: `suppress` must be [[suppress]] tables")]
    NotTables(String),
    /// One `[[suppress]]` entry (1-based) is malformed: `problem` says how.
    #[error("{shown}: [[suppress]] entry {n}: {problem}")]
    Entry {
        shown: String,
        n: usize,
        problem: String,
    },
}

/// The suppressions file `arev suppress` would append to is already invalid.
#[derive(Debug, thiserror::Error)]
#[error("{0} (fix the file first)")]
pub struct FixFirst(#[source] pub SuppressionsError);

/// A report destination (`--out`, `--sarif`, `--markdown`) that cannot be written.
#[derive(Debug, thiserror::Error)]
#[error("{flag} {}: {problem}", .path.display())]
pub struct OutputError {
    pub flag: &'static str,
    pub path: PathBuf,
    #[source]
    pub problem: DestinationProblem,
}

/// Why a destination cannot receive a report.
#[derive(Debug, thiserror::Error)]
pub enum DestinationProblem {
    #[error("not a file name")]
    NotAFileName,
    #[error("is a directory")]
    Directory,
    #[error("is not a regular file")]
    NotARegularFile,
    #[error("{} is not a directory", .0.display())]
    ParentNotADirectory(PathBuf),
    #[error("directory {} does not exist", .0.display())]
    NoParent(PathBuf),
    #[error("cannot write in {}: {source}", .dir.display())]
    CannotWrite {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// An agent that cannot be dispatched (aborts the run with `agent_dispatch_unavailable`).
#[derive(Debug, thiserror::Error)]
pub enum AgentSpecError {
    #[error("agent `{name}` ({backend} backend): {source}")]
    Binary {
        name: String,
        backend: &'static str,
        #[source]
        source: crate::dispatch::DispatchError,
    },
    #[error("agent `{0}`: a command agent needs `format`")]
    NoFormat(String),
    #[error("{0}")]
    Config(#[from] crate::config::ConfigError),
}

macro_rules! into_expected {
    ($($t:ty),*) => {$(
        impl From<$t> for crate::errors::ExpectedError {
            fn from(e: $t) -> Self {
                Self::Resolve(Box::new(e))
            }
        }
    )*};
}
into_expected!(RepoInputError, SuppressionsError, FixFirst, OutputError);
