//! Target resolution and pinning (SPEC §3): diff, file or manifest → an immutable pinned target.
mod brief;
mod diff;
mod error;
mod manifest;
mod model;
mod resolve;
mod scan;
mod shard;

pub use error::TargetError;
pub use model::*;
pub use resolve::{
    diff_sha, empty_diff_sha, repin, resolve, snapshot_diff, Snapshot, LIGHTWEIGHT_DIFF_LINES,
};
pub use shard::{apply_shard, partition, ShardInfo, ShardSpec};

#[cfg(test)]
mod tests;
