//! The end-of-run drift check of a pinned diff: its TARGET_SHA now, re-rendering only the
//! files whose stat pre-key moved and reading the rest back from the spool.

use super::base::{git_err, index_key, start_tree, DiffBase};
use super::pin::patch_sha;
use super::rules::{options, DiffRules};
use super::sink::{spool_err, Chunks};
use super::window::render;
use crate::target::spool::{DriftKey, PatchSpool};
use crate::target::statkey::StatKey;
use crate::target::TargetError;
use git2::{Repository, Tree};
use sha2::{Digest, Sha256};
use std::collections::BTreeSet;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// The TARGET_SHA of a pinned diff now, over the pinned files only (`only`), with the cap
/// `cap`. With the pin's spool, only files whose stat pre-key moved are re-rendered (the
/// rest of the patch is read back from the spool); with an unchanged base tree and index and
/// no file moved, nothing is read at all. Without a spool, or when the base, the index or
/// the staged fallback is involved, the whole patch of the pinned files is re-rendered.
/// A moved file's new side is the working tree for either base (the snapshot a
/// [`DiffBase::Tree`] diff takes holds the working tree's content).
pub(crate) fn repin(
    repo: &Repository,
    root: &Path,
    base: DiffBase<'_>,
    only: &BTreeSet<String>,
    cap: u64,
    pinned: Option<(&PatchSpool, &str)>,
) -> Result<String, TargetError> {
    let rules = DiffRules {
        cap,
        run_dirs: &[],
        only: Some(only),
        excludes: None,
    };
    let Some((spool, pinned_sha)) = pinned else {
        return patch_sha(repo, root, base, &rules);
    };
    let key = &spool.key;
    let base_tree = start_tree(repo, base)?.as_ref().map(Tree::id);
    if key.staged || base_tree != key.base_tree || index_key(repo) != key.index {
        return patch_sha(repo, root, base, &rules);
    }
    let moved = moved_files(root, key);
    if moved.is_empty() {
        return Ok(pinned_sha.to_owned());
    }
    let moved_rules = DiffRules {
        only: Some(&moved),
        ..rules
    };
    let mut fresh = Chunks::default();
    let tree = base_tree.map(|id| repo.find_tree(id)).transpose();
    let tree = tree.map_err(|e| git_err(&e))?;
    let working = repo
        .diff_tree_to_workdir_with_index(tree.as_ref(), Some(&mut options(&moved_rules, true)))
        .map_err(|e| git_err(&e))?;
    let rendered = render(repo, root, &working, &moved_rules, None, true, &mut fresh)?;
    if !rendered.changed && moved.len() == key.entries.len() && matches!(base, DiffBase::Head(_)) {
        // Every pinned file changed back: the pin's rules fall back to the staged diff.
        return patch_sha(repo, root, base, &rules);
    }
    spliced_sha(spool, &moved, fresh)
}

/// The pinned files whose stat pre-key moved since the pin (or that appeared or vanished).
fn moved_files(root: &Path, key: &DriftKey) -> BTreeSet<String> {
    let mut moved = BTreeSet::new();
    for e in &key.entries {
        let now = StatKey::lstat(&root.join(&e.path)).ok().flatten();
        let same = match (&e.stat, &now) {
            (None, None) => true,
            (Some(k), now) => k.still(now.as_ref(), key.taken_ns),
            (None, Some(_)) => false,
        };
        if !same {
            moved.insert(e.path.clone());
        }
    }
    moved
}

/// sha256 of the patch with the parts of `moved` files taken from `fresh` (none: the file
/// has no change now) and every other file's part read back from the spool.
fn spliced_sha(
    spool: &PatchSpool,
    moved: &BTreeSet<String>,
    mut fresh: Chunks,
) -> Result<String, TargetError> {
    let mut file = std::fs::File::open(spool.path()).map_err(spool_err)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 256 * 1024];
    for e in &spool.key.entries {
        if moved.contains(&e.path) {
            if let Some(chunk) = fresh.0.remove(&e.path) {
                hasher.update(&chunk);
            }
            continue;
        }
        file.seek(SeekFrom::Start(e.offset)).map_err(spool_err)?;
        let mut left = e.len;
        while left > 0 {
            let want = usize::try_from(left).unwrap_or(usize::MAX).min(buf.len());
            file.read_exact(&mut buf[..want]).map_err(spool_err)?;
            hasher.update(&buf[..want]);
            left -= want as u64;
        }
    }
    Ok(hex::encode(hasher.finalize()))
}
