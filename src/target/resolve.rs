//! Resolve a TargetRequest into a PinnedTarget: diff via git2, file, or manifest via globset + ignore.

use super::{PinnedTarget, TargetError, TargetRequest};

/// Resolve and pin the target. Pure function of the file system and git state.
pub fn resolve(_req: &TargetRequest) -> Result<PinnedTarget, TargetError> {
    todo!("helper: target resolution")
}

/// Re-compute TARGET_SHA for an already pinned target (same rules, same file list).
pub fn repin(_target: &PinnedTarget) -> Result<String, TargetError> {
    todo!("helper: target re-pin")
}
