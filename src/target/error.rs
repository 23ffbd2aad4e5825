//! Target errors: every one is a usage/target error (exit 2) with a one-line message.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    #[error("no target given: pass `diff`, a file, several paths or a glob")]
    NoTarget,
    #[error("no such file: {0}")]
    NoSuchFile(String),
    #[error("glob `{0}` matched no files")]
    GlobMatchedNothing(String),
    #[error("invalid glob `{glob}`: {message}")]
    InvalidGlob { glob: String, message: String },
    #[error("invalid exclude glob `{glob}` (--exclude or [review] exclude): {message}")]
    InvalidExclude { glob: String, message: String },
    #[error("`diff` needs a git repository, and {0} is not inside one")]
    NotARepo(PathBuf),
    #[error("`diff` must be the only target (got {0})")]
    DiffWithOthers(String),
    #[error("--base is only valid with the `diff` target")]
    BaseWithoutDiff,
    #[error("--base {rev}: {message}")]
    BadBase { rev: String, message: String },
    #[error("--base-tree is only valid with the `diff` target, and not with --base")]
    BaseTreeWithoutDiff,
    #[error("--base-tree {tree}: {message}")]
    BadBaseTree { tree: String, message: String },
    #[error("the diff is empty: nothing to review (pass --allow-empty to exit 0)")]
    EmptyDiff { root: PathBuf },
    #[error("cannot read {path}: {message}")]
    Unreadable { path: String, message: String },
    #[error("{0} is not UTF-8 text")]
    NotUtf8(String),
    #[error("{0} is a binary file")]
    Binary(String),
    #[error("{path} is {size} bytes, over the {cap}-byte size cap")]
    TooLarge { path: String, size: u64, cap: u64 },
    #[error("{0} is outside the repository")]
    OutsideRepo(String),
    #[error("{0} is VCS metadata (.git): never a review target")]
    VcsMetadata(String),
    #[error(
        "{0} is outside the current directory (outside a git repository, targets must be under it)"
    )]
    OutsideCwd(String),
    #[error("git: {0}")]
    Git(String),
    #[error("cannot spool the diff to a temporary file: {0}")]
    Spool(String),
    #[error("--shard splits a manifest (a glob or several paths); a {0} target cannot be sharded")]
    ShardNeedsManifest(&'static str),
    #[error("nothing to review: every file of `{target}` was skipped ({skipped})")]
    NothingReviewable { target: String, skipped: String },
    #[error(
        "nothing to review: every file of the diff was skipped ({skipped}); pass --allow-empty to exit 0"
    )]
    DiffNothingReviewable {
        skipped: String,
        /// The pin with no reviewable file (its `skipped` list is the coverage of an
        /// allowed-empty run).
        target: Box<super::PinnedTarget>,
    },
    #[error("{0} is a symbolic link: arev never follows symlinks (name the file it points to)")]
    Symlink(String),
    #[error("{0}: a file name with a newline or another control character cannot be reviewed")]
    ControlChars(String),
}

/// Why a repository file (`read_repo_file`: project rules, suppressed files) cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum RepoFileError {
    #[error("not a path inside the repository")]
    NotInside,
    #[error("VCS metadata (.git) is never read as a repository input")]
    VcsMetadata,
    #[error("over {0} bytes")]
    TooLarge(u64),
    #[error("a symbolic link (never followed)")]
    Symlink,
    /// Skipped for another reason: the scan's message, or the reason's name.
    #[error("{}", if .message.is_empty() { .reason.as_str().replace('_', " ") } else { .message.clone() })]
    Skipped {
        reason: super::SkipReason,
        message: String,
    },
}

/// A `--shard i/n` value (or a shard a report records) that is not a shard.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShardError {
    #[error("`{0}` is not of the form i/n (e.g. 3/8)")]
    NotAFraction(String),
    #[error("`{spec}`: {what} `{text}` is not a positive integer")]
    NotANumber {
        spec: String,
        what: &'static str,
        text: String,
    },
    #[error("`{spec}`: {source}")]
    Spec {
        spec: String,
        #[source]
        source: Box<ShardError>,
    },
    #[error("the shard count must be 1..={max} (got {count})")]
    Count { count: u32, max: u32 },
    #[error("the shard index must be 1..={count} (got {index})")]
    Index { index: u32, count: u32 },
}
