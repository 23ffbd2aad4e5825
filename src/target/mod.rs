//! Target resolution and pinning (docs/architecture.md §5): diff, file or manifest → an
//! immutable pinned target.
mod brief;
mod diff;
mod error;
mod exclude;
mod gitindex;
mod incremental;
mod locate;
mod manifest;
mod model;
mod resolve;
mod scan;
mod scope;
mod shard;
mod spool;
mod statkey;
mod treekey;

pub use error::{RepoFileError, ShardError, TargetError};
pub use exclude::{is_lockfile, AttributeSource, Excludes, LOCKFILES};
pub use incremental::{
    patch_sections, restrict, split_incremental, BaselineFile, IncrementalSplit,
};
pub use locate::lexical;
pub use model::*;
pub use resolve::{
    diff_sha, diff_sha_capped, empty_diff_sha, read_repo_file, remember_snapshot, repin, resolve,
    resolve_excluding, snapshot_diff, snapshot_diff_cached, CachedSnapshot, TargetRequest,
    DEFAULT_MAX_FILE_BYTES, LIGHTWEIGHT_DIFF_LINES,
};
pub use scan::REPIN_MAX_FILE_BYTES;
pub use scope::{read_regular, ContextMode, ContextScope, Outside, ScopeFile};
pub use shard::{apply_shard, partition, ShardInfo, ShardSpec, MAX_SHARDS};
pub use statkey::{now_ns, StatKey, RACY_MARGIN_NS};
pub use treekey::{worktree_key, worktree_key_listed, Keyed, Listed, ShaCache, WorktreeKey};

#[cfg(test)]
mod tests;
