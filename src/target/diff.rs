//! Diff targets: HEAD (or merge-base with `--base`) vs the working tree, index and untracked
//! files included, with the staged-diff fallback; rendered as `git diff`-style patch text.

use super::scan::{count_lines, sha256_hex};
use super::{Hunk, SkipReason, SkippedFile, TargetError, TargetFile};
use git2::{Delta, Diff, DiffFormat, DiffOptions, ErrorCode, Oid, Repository, Tree};
use std::collections::BTreeMap;
use std::path::Path;

/// The run directory's home inside a repository; never part of a diff.
const RUN_DIR: &str = ".arev";

/// A pinned diff.
#[derive(Debug)]
pub(crate) struct DiffPin {
    pub patch: Vec<u8>,
    pub files: Vec<TargetFile>,
    pub skipped: Vec<SkippedFile>,
    pub hunks: BTreeMap<String, Vec<Hunk>>,
}

/// One file of the rendered patch.
#[derive(Debug)]
struct Entry {
    path: String,
    deleted: bool,
    binary: bool,
    old_id: Oid,
    new_id: Oid,
    hunks: Vec<Hunk>,
}

/// The rendered patch and its files (empty when there is no change).
#[derive(Debug, Default)]
struct Rendered {
    patch: Vec<u8>,
    entries: Vec<Entry>,
}

fn git_err(e: &git2::Error) -> TargetError {
    TargetError::Git(e.message().to_owned())
}

/// The tree the diff starts from: HEAD's, merge-base(REV, HEAD)'s with a base, or None
/// (the empty tree) on an unborn branch.
fn base_tree<'r>(
    repo: &'r Repository,
    base: Option<&str>,
) -> Result<Option<Tree<'r>>, TargetError> {
    let head = match repo.head() {
        Ok(h) => Some(h.peel_to_commit().map_err(|e| git_err(&e))?),
        Err(e) if matches!(e.code(), ErrorCode::UnbornBranch | ErrorCode::NotFound) => None,
        Err(e) => return Err(git_err(&e)),
    };
    let Some(rev) = base else {
        return head.map(|c| c.tree().map_err(|e| git_err(&e))).transpose();
    };
    let bad = |message: String| TargetError::BadBase {
        rev: rev.to_owned(),
        message,
    };
    let base_commit = repo
        .revparse_single(rev)
        .and_then(|o| o.peel_to_commit())
        .map_err(|e| bad(e.message().to_owned()))?;
    let head = head.ok_or_else(|| bad("HEAD has no commits yet".to_owned()))?;
    let mb = repo
        .merge_base(base_commit.id(), head.id())
        .map_err(|e| bad(format!("no merge base with HEAD: {}", e.message())))?;
    let tree = repo
        .find_commit(mb)
        .and_then(|c| c.tree())
        .map_err(|e| git_err(&e))?;
    Ok(Some(tree))
}

/// `(path, deleted)` of a delta: the new path, or the old one for a deletion.
fn delta_path<'a>(delta: &git2::DiffDelta<'a>) -> (&'a [u8], bool) {
    let deleted = delta.status() == Delta::Deleted;
    let file = if deleted {
        delta.old_file()
    } else {
        delta.new_file()
    };
    (file.path_bytes().unwrap_or_default(), deleted)
}

fn is_run_dir(path: &[u8]) -> bool {
    path.strip_prefix(RUN_DIR.as_bytes())
        .is_some_and(|rest| rest.is_empty() || rest.starts_with(b"/"))
}

/// Render `diff` as `git diff` prints it (origin prefix on content lines only), collecting
/// the files and their hunks. Files under `.arev/` are left out.
fn render(diff: &Diff<'_>) -> Result<Rendered, TargetError> {
    let mut out = Rendered::default();
    diff.print(DiffFormat::Patch, |delta, hunk, line| {
        let (path, deleted) = delta_path(&delta);
        if is_run_dir(path) {
            return true;
        }
        if out.entries.last().map(|e| e.path.as_bytes()) != Some(path) {
            out.entries.push(Entry {
                path: String::from_utf8_lossy(path).into_owned(),
                deleted,
                binary: delta.flags().is_binary(),
                old_id: delta.old_file().id(),
                new_id: delta.new_file().id(),
                hunks: Vec::new(),
            });
        }
        let Some(entry) = out.entries.last_mut() else {
            return true;
        };
        let origin = line.origin();
        match origin {
            '+' | '-' | ' ' => out.patch.push(origin as u8),
            'H' => {
                if let Some(h) = hunk {
                    let (start, lines) = if deleted {
                        (h.old_start(), h.old_lines())
                    } else {
                        (h.new_start(), h.new_lines())
                    };
                    // A pure deletion has no new lines: anchor it on the line it follows.
                    let start = start.max(1);
                    let end = start + lines.saturating_sub(1);
                    entry.hunks.push(Hunk { start, end });
                }
            }
            'B' => entry.binary = true,
            _ => {}
        }
        out.patch.extend_from_slice(line.content());
        true
    })
    .map_err(|e| git_err(&e))?;
    Ok(out)
}

/// The patch: working tree (with index and untracked files) against the base tree, or the
/// staged diff when that is empty. Empty `Rendered` when both are.
fn compute(repo: &Repository, base: Option<&str>) -> Result<Rendered, TargetError> {
    let tree = base_tree(repo, base)?;
    let mut opts = DiffOptions::new();
    opts.include_untracked(true)
        .recurse_untracked_dirs(true)
        .show_untracked_content(true);
    let working = repo
        .diff_tree_to_workdir_with_index(tree.as_ref(), Some(&mut opts))
        .map_err(|e| git_err(&e))?;
    let rendered = render(&working)?;
    if !rendered.entries.is_empty() {
        return Ok(rendered);
    }
    let staged = repo
        .diff_tree_to_index(tree.as_ref(), None, Some(&mut DiffOptions::new()))
        .map_err(|e| git_err(&e))?;
    render(&staged)
}

/// Just the patch bytes (for re-pinning). Empty when there is no change any more.
pub(crate) fn patch_bytes(repo: &Repository, base: Option<&str>) -> Result<Vec<u8>, TargetError> {
    compute(repo, base).map(|r| r.patch)
}

/// Pin the diff of the repository whose work tree is `root`.
pub(crate) fn pin_diff(
    repo: &Repository,
    root: &Path,
    base: Option<&str>,
) -> Result<DiffPin, TargetError> {
    let rendered = compute(repo, base)?;
    if rendered.entries.is_empty() {
        return Err(TargetError::EmptyDiff {
            root: root.to_path_buf(),
        });
    }
    let mut files = Vec::new();
    let mut skipped = Vec::new();
    let mut hunks = BTreeMap::new();
    for e in rendered.entries {
        if e.binary {
            skipped.push(SkippedFile {
                path: e.path,
                reason: SkipReason::Binary,
            });
            continue;
        }
        let (sha256, lines) = if e.deleted {
            (String::new(), blob_lines(repo, e.old_id))
        } else {
            match std::fs::read(root.join(&e.path)) {
                Ok(bytes) => (sha256_hex(&bytes), count_lines(&bytes)),
                // Staged but gone from the working tree: measure the staged blob.
                Err(_) => (String::new(), blob_lines(repo, e.new_id)),
            }
        };
        if !e.hunks.is_empty() {
            hunks.insert(e.path.clone(), e.hunks);
        }
        files.push(TargetFile {
            path: e.path,
            sha256,
            lines,
        });
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    files.dedup_by(|a, b| a.path == b.path);
    skipped.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(DiffPin {
        patch: rendered.patch,
        files,
        skipped,
        hunks,
    })
}

fn blob_lines(repo: &Repository, id: Oid) -> u32 {
    if id.is_zero() {
        return 0;
    }
    repo.find_blob(id)
        .map(|b| count_lines(b.content()))
        .unwrap_or(0)
}
