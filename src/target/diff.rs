//! Diff targets: HEAD (or merge-base with `--base`) vs the working tree, index and untracked
//! files included, with the staged-diff fallback; rendered as `git diff`-style patch text.
//! Also snapshots: the working tree written as a git tree object through a private index
//! (the Stop hook's baseline), and the diff of a snapshot tree against the working tree now.

use super::scan::{count_lines, sha256_hex};
use super::{Hunk, SkipReason, SkippedFile, TargetError, TargetFile};
use git2::{
    Delta, Diff, DiffFormat, DiffOptions, ErrorCode, Index, IndexAddOption, Oid, Repository, Tree,
};
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
    pin_rendered(repo, root, compute(repo, base)?)
}

/// The pinned diff of an already rendered patch (an error when it holds no change).
fn pin_rendered(
    repo: &Repository,
    root: &Path,
    rendered: Rendered,
) -> Result<DiffPin, TargetError> {
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

/// Write the working tree as a tree object — what `git add -A && git write-tree` would record:
/// tracked and untracked files, ignored ones left out, `.arev/` left out — through a private
/// copy of the index, so the user's index, HEAD and branches are never touched. The blobs and
/// trees go into the object database (unreferenced: `git gc` prunes them after its expiry).
pub(crate) fn snapshot_tree(repo: &Repository) -> Result<Oid, TargetError> {
    let io = |e: std::io::Error| TargetError::Git(format!("cannot snapshot the working tree: {e}"));
    let workdir = repo
        .workdir()
        .ok_or_else(|| TargetError::Git("the repository has no working tree".to_owned()))?;
    let scratch = tempfile::tempdir().map_err(io)?;
    let private = scratch.path().join("index");
    // Starting from the user's index keeps its stat cache: unchanged files are not re-read.
    match std::fs::copy(repo.path().join("index"), &private) {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io(e)),
    }
    let mut index = Index::open(&private).map_err(|e| git_err(&e))?;
    // A handle of its own: the private index replaces the repository's only in this handle.
    let handle = Repository::open(workdir).map_err(|e| git_err(&e))?;
    handle.set_index(&mut index).map_err(|e| git_err(&e))?;
    // An untracked nested repository comes as `dir/`: libgit2 cannot add it as files, so it
    // is recorded as git does, a gitlink to its HEAD (a submodule-like entry every diff
    // lists as skipped), and left out while it has no commit.
    let mut nested: Vec<Vec<u8>> = Vec::new();
    let mut skip_nested = |path: &Path, _: &[u8]| -> i32 {
        let bytes = path.as_os_str().as_encoded_bytes();
        match bytes.strip_suffix(b"/") {
            Some(dir) => {
                nested.push(dir.to_vec());
                1
            }
            None => 0,
        }
    };
    index
        .add_all(["*"], IndexAddOption::DEFAULT, Some(&mut skip_nested))
        .and_then(|()| index.update_all(["*"], None))
        .map_err(|e| git_err(&e))?;
    for dir in nested {
        let head = Repository::open(workdir.join(String::from_utf8_lossy(&dir).as_ref()))
            .ok()
            .and_then(|r| r.head().ok().and_then(|h| h.target()));
        if let Some(id) = head {
            index.add(&gitlink(dir, id)).map_err(|e| git_err(&e))?;
        }
    }
    index
        .remove_dir(Path::new(RUN_DIR), 0)
        .map_err(|e| git_err(&e))?;
    index.write_tree_to(&handle).map_err(|e| git_err(&e))
}

/// An index entry for a submodule-like directory at `path` whose HEAD is `id`.
fn gitlink(path: Vec<u8>, id: Oid) -> git2::IndexEntry {
    let zero = git2::IndexTime::new(0, 0);
    git2::IndexEntry {
        ctime: zero,
        mtime: zero,
        dev: 0,
        ino: 0,
        mode: 0o160000,
        uid: 0,
        gid: 0,
        file_size: 0,
        id,
        // The path length bits are filled in by `Index::add`.
        flags: 0,
        flags_extended: 0,
        path,
    }
}

/// The tree `oid` names, or why it cannot be used as a diff base.
fn snapshot_base<'r>(repo: &'r Repository, oid: &str) -> Result<Tree<'r>, TargetError> {
    let bad = |message: &str| TargetError::BadBaseTree {
        tree: oid.to_owned(),
        message: message.to_owned(),
    };
    let id = Oid::from_str(oid).map_err(|_| bad("not an object id"))?;
    repo.find_tree(id)
        .map_err(|_| bad("no such tree in the repository"))
}

/// The patch from the tree `base` to a snapshot of the working tree now, and that snapshot.
fn compute_snapshot(repo: &Repository, base: &str) -> Result<(Rendered, Oid), TargetError> {
    let base = snapshot_base(repo, base)?;
    let now = snapshot_tree(repo)?;
    let now_tree = repo.find_tree(now).map_err(|e| git_err(&e))?;
    let diff = repo
        .diff_tree_to_tree(Some(&base), Some(&now_tree), Some(&mut DiffOptions::new()))
        .map_err(|e| git_err(&e))?;
    Ok((render(&diff)?, now))
}

/// The patch bytes from the tree `base` to the working tree now, and the snapshot tree of
/// the working tree they were computed against.
pub(crate) fn snapshot_patch(repo: &Repository, base: &str) -> Result<(Vec<u8>, Oid), TargetError> {
    compute_snapshot(repo, base).map(|(r, now)| (r.patch, now))
}

/// Pin the diff from the tree `base` to the working tree (no staged fallback: the snapshot
/// already holds the index's and the untracked files' content).
pub(crate) fn pin_snapshot_diff(
    repo: &Repository,
    root: &Path,
    base: &str,
) -> Result<DiffPin, TargetError> {
    pin_rendered(repo, root, compute_snapshot(repo, base)?.0)
}
