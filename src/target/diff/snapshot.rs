//! The diff of a working-tree snapshot (see `tree`) against the working tree now, hashed as
//! it is rendered.

use super::base::DiffBase;
use super::pin::{compute, sort_files, target_file};
use super::rules::DiffRules;
use super::sink::HashSink;
use crate::target::{TargetError, TargetFile};
use git2::{Oid, Repository};
use sha2::Digest;
use std::path::Path;

/// The diff from the tree `base` to the working tree now, as `--base-tree` pins it, without
/// keeping its patch.
pub(crate) struct SnapshotDiff {
    /// sha256 of the patch.
    pub sha256: String,
    /// Lines of the patch.
    pub lines: u64,
    /// The reviewed files, sorted (none when nothing changed).
    pub files: Vec<TargetFile>,
    /// The snapshot of the working tree the diff was computed against.
    pub tree: Oid,
}

/// The diff from the tree `base` to a snapshot of the working tree now, streamed.
pub(crate) fn snapshot_diff(
    repo: &Repository,
    root: &Path,
    base: &str,
    rules: &DiffRules<'_>,
) -> Result<SnapshotDiff, TargetError> {
    let mut sink = HashSink::default();
    let computed = compute(repo, root, DiffBase::Tree(base), rules, &mut sink)?;
    let tree = computed
        .snapshot
        .ok_or_else(|| TargetError::Git("the snapshot diff took no snapshot".to_owned()))?;
    let mut files: Vec<TargetFile> = if computed.rendered.changed {
        computed
            .rendered
            .entries
            .iter()
            .map(|e| target_file(repo, e))
            .collect()
    } else {
        Vec::new()
    };
    sort_files(&mut files);
    Ok(SnapshotDiff {
        sha256: hex::encode(sink.hasher.finalize()),
        lines: sink.lines,
        files,
        tree,
    })
}
