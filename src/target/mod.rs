//! Target resolution and pinning (docs/architecture.md §5): diff, file or manifest → an
//! immutable pinned target.
mod brief;
mod diff;
mod error;
mod incremental;
mod manifest;
mod model;
mod resolve;
mod scan;
mod shard;

pub use error::TargetError;
pub use incremental::{
    patch_sections, restrict, split_incremental, BaselineFile, IncrementalSplit,
};
pub use model::*;
pub use resolve::{
    diff_sha, diff_sha_capped, repin, resolve, resolve_excluding, DEFAULT_MAX_FILE_BYTES,
    LIGHTWEIGHT_DIFF_LINES, REPIN_MAX_FILE_BYTES,
};
pub use shard::{apply_shard, partition, ShardInfo, ShardSpec, MAX_SHARDS};

#[cfg(test)]
mod tests;
