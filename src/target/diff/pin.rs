//! Pinning a diff: the patch rendered from its base (with the staged fallback) into a
//! sink, and the pin's files, hunks, digest and drift key.

use super::base::{git_err, index_key, start_tree, DiffBase};
use super::file::Entry;
use super::rules::{options, DiffRules};
use super::sink::{spool_err, PatchSink, SpoolSink};
use super::tree::snapshot_tree;
use super::window::{render, Rendered};
use crate::target::scan::count_lines;
use crate::target::spool::{DriftKey, PatchSpool, SpooledFile};
use crate::target::statkey::now_ns;
use crate::target::{Hunk, SkippedFile, TargetError, TargetFile};
use git2::{Oid, Repository, Tree};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::Path;

/// A pinned diff: the patch spooled to a temporary file, and what was measured on the way.
#[derive(Debug)]
pub(crate) struct DiffPin {
    pub spool: PatchSpool,
    /// sha256 of the patch (TARGET_SHA).
    pub sha256: String,
    /// Lines of the patch.
    pub lines: u64,
    pub brief: String,
    pub files: Vec<TargetFile>,
    pub skipped: Vec<SkippedFile>,
    pub hunks: BTreeMap<String, Vec<Hunk>>,
}

/// A rendered diff: its files, whether it is the staged fallback, the base tree, and the
/// snapshot of the working tree it was computed against (for a [`DiffBase::Tree`]).
pub(super) struct Computed {
    pub(super) rendered: Rendered,
    pub(super) staged: bool,
    pub(super) base_tree: Option<Oid>,
    pub(super) snapshot: Option<Oid>,
}

/// The patch, into `sink`. From HEAD (or a merge base): the working tree (with index and
/// untracked files) against the base tree, or the staged diff when that has no change at
/// all. From a tree: a snapshot of the working tree now against it.
pub(super) fn compute(
    repo: &Repository,
    root: &Path,
    base: DiffBase<'_>,
    rules: &DiffRules<'_>,
    sink: &mut dyn PatchSink,
) -> Result<Computed, TargetError> {
    // Objects are read as git reads them, without re-hashing each one to verify it (a
    // sha1 pass over every old side; libgit2's default).
    static UNVERIFIED: std::sync::Once = std::sync::Once::new();
    UNVERIFIED.call_once(|| git2::opts::strict_hash_verification(false));
    let excluder = rules.excludes.map(|e| e.compile(Some(repo))).transpose()?;
    let excluder = excluder.as_ref();
    let tree = start_tree(repo, base)?;
    let base_tree = tree.as_ref().map(Tree::id);
    if let DiffBase::Tree(_) = base {
        let now = snapshot_tree(repo)?;
        let now_tree = repo.find_tree(now).map_err(|e| git_err(&e))?;
        let diff = repo
            .diff_tree_to_tree(
                tree.as_ref(),
                Some(&now_tree),
                Some(&mut options(rules, false)),
            )
            .map_err(|e| git_err(&e))?;
        // The new side is read from the working tree, as for any diff: the snapshot was
        // just written from it.
        return Ok(Computed {
            rendered: render(repo, root, &diff, rules, excluder, true, sink)?,
            staged: false,
            base_tree,
            snapshot: Some(now),
        });
    }
    let working = repo
        .diff_tree_to_workdir_with_index(tree.as_ref(), Some(&mut options(rules, true)))
        .map_err(|e| git_err(&e))?;
    let rendered = render(repo, root, &working, rules, excluder, true, sink)?;
    if rendered.changed {
        return Ok(Computed {
            rendered,
            staged: false,
            base_tree,
            snapshot: None,
        });
    }
    // Nothing was written to the sink: the staged diff goes there instead.
    let staged = repo
        .diff_tree_to_index(tree.as_ref(), None, Some(&mut options(rules, false)))
        .map_err(|e| git_err(&e))?;
    Ok(Computed {
        rendered: render(repo, root, &staged, rules, excluder, false, sink)?,
        staged: true,
        base_tree,
        snapshot: None,
    })
}

/// sha256 of the patch (the sha256 of the empty patch when nothing reviewable changed),
/// streamed: the patch is never held.
pub(crate) fn patch_sha(
    repo: &Repository,
    root: &Path,
    base: DiffBase<'_>,
    rules: &DiffRules<'_>,
) -> Result<String, TargetError> {
    let mut hasher = Sha256::new();
    compute(repo, root, base, rules, &mut hasher)?;
    Ok(hex::encode(hasher.finalize()))
}

/// A reviewed file of a rendered patch as the pin lists it: the working-tree file's sha256
/// and lines, or the lines of the blob (a deletion's old side, a staged new side) with no
/// sha256.
pub(super) fn target_file(repo: &Repository, e: &Entry) -> TargetFile {
    let (sha256, lines) = match (e.deleted, &e.read) {
        (true, _) => (String::new(), blob_lines(repo, e.old_id)),
        (false, Some(read)) => read.clone(),
        // Staged (or gone from the working tree): measure the staged blob.
        (false, None) => (String::new(), blob_lines(repo, e.new_id)),
    };
    TargetFile {
        path: e.path.clone(),
        sha256,
        lines,
    }
}

/// Files sorted by path, each once.
pub(super) fn sort_files(files: &mut Vec<TargetFile>) {
    files.sort_by(|a, b| a.path.cmp(&b.path));
    files.dedup_by(|a, b| a.path == b.path);
}

/// Lines of the blob `id` (0 for the zero id: an empty side).
fn blob_lines(repo: &Repository, id: Oid) -> u32 {
    if id.is_zero() {
        return 0;
    }
    repo.find_blob(id)
        .map(|b| count_lines(b.content()))
        .unwrap_or(0)
}

/// Pin the diff of the repository whose work tree is `root` from `base`: the patch goes to
/// a spool file as it is rendered, hashed, counted and summarised on the way.
pub(crate) fn pin_diff(
    repo: &Repository,
    root: &Path,
    base: DiffBase<'_>,
    rules: &DiffRules<'_>,
) -> Result<DiffPin, TargetError> {
    // Keys are taken from here on: a file changed after this instant is never trusted.
    let taken_ns = now_ns();
    let index = index_key(repo);
    let mut sink = SpoolSink::new()?;
    let computed = compute(repo, root, base, rules, &mut sink)?;
    let rendered = computed.rendered;
    if !rendered.changed {
        return Err(TargetError::EmptyDiff {
            root: root.to_path_buf(),
        });
    }
    let SpoolSink {
        out,
        hasher,
        len,
        lines,
        brief,
        ranges,
    } = sink;
    let spooled = out
        .into_inner()
        .map_err(|e| spool_err(e.into_error()))?
        .into_temp_path();
    let mut files = Vec::new();
    let mut hunks = BTreeMap::new();
    let mut entries = Vec::with_capacity(rendered.entries.len());
    for (e, (offset, chunk_len)) in rendered.entries.into_iter().zip(ranges) {
        entries.push(SpooledFile {
            path: e.path.clone(),
            offset,
            len: chunk_len,
            stat: e.stat,
        });
        files.push(target_file(repo, &e));
        if !e.hunks.is_empty() {
            hunks.insert(e.path, e.hunks);
        }
    }
    sort_files(&mut files);
    let mut skipped = rendered.skipped;
    skipped.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(DiffPin {
        spool: PatchSpool {
            path: spooled,
            len,
            key: DriftKey {
                base_tree: computed.base_tree,
                index,
                staged: computed.staged,
                taken_ns,
                entries,
            },
        },
        sha256: hex::encode(hasher.finalize()),
        lines,
        brief: brief.finish(),
        files,
        skipped,
        hunks,
    })
}
