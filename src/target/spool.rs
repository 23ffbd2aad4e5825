//! A pinned diff.patch spooled to a temporary file, with the drift pre-key taken while it
//! was rendered: what `diff` pins and re-checks at the end of a run, and what a pinned
//! target's artefact holds.

use super::statkey::StatKey;
use git2::Oid;
use std::path::Path;

/// A pinned diff.patch, spooled to a temporary file (removed when dropped), with the drift
/// pre-key taken while it was rendered.
#[derive(Debug)]
pub struct PatchSpool {
    pub(super) path: tempfile::TempPath,
    pub(super) len: u64,
    pub(super) key: DriftKey,
}

impl PatchSpool {
    /// The spool file (copied into the run dir as `target/diff.patch`).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Bytes of the patch.
    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl PartialEq for PatchSpool {
    fn eq(&self, other: &Self) -> bool {
        *self.path == *other.path
    }
}

impl Eq for PatchSpool {}

/// What a diff's bytes depend on, cheaply checkable at the end of a run: the base tree, the
/// index file and, for every file of the patch, its bytes in the spool and the stat
/// pre-key of its working-tree file.
#[derive(Debug, Clone)]
pub(super) struct DriftKey {
    pub(super) base_tree: Option<Oid>,
    pub(super) index: Option<StatKey>,
    /// The patch is the staged diff (its new side is the index, not the working tree).
    pub(super) staged: bool,
    /// When the keys were taken (before any file was read).
    pub(super) taken_ns: i64,
    pub(super) entries: Vec<SpooledFile>,
}

/// One file's part of the spooled patch.
#[derive(Debug, Clone)]
pub(super) struct SpooledFile {
    pub(super) path: String,
    pub(super) offset: u64,
    pub(super) len: u64,
    /// The working-tree file's key before it was read (None: deleted or missing).
    pub(super) stat: Option<StatKey>,
}
