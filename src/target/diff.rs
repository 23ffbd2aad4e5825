//! Diff targets: HEAD (or merge-base with `--base`) vs the working tree, index and untracked
//! files included, with the staged-diff fallback; rendered as `git diff`-style patch text
//! holding only the reviewed files (links, submodules, run dirs, oversized and binary files
//! are listed as skipped and never loaded or followed). Also snapshots: the working tree
//! written as a git tree object through a private index (the Stop hook's baseline), and the
//! diff of a snapshot tree against the working tree now.

use super::exclude::Excluder;
use super::scan::{
    count_lines, escape_path, has_control_chars, is_run_dir, read_regular, sha256_hex, ScanError,
};
use super::{Excludes, Hunk, SkipReason, SkippedFile, TargetError, TargetFile};
use git2::{
    Delta, Diff, DiffOptions, ErrorCode, FileMode, Index, IndexAddOption, Oid, Patch, Repository,
    Tree,
};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
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

/// Which files of a diff are reviewed (everything else is left out of the patch).
#[derive(Debug, Clone, Default)]
pub(crate) struct DiffRules<'a> {
    /// `max_file_bytes`: a side over it is `too_large` and never loaded.
    pub cap: u64,
    /// Root-relative run-dir bases (besides `.arev/` and detected run dirs).
    pub run_dirs: &'a [String],
    /// Only these paths (re-pinning a target's own files); None = every changed path.
    pub only: Option<&'a BTreeSet<String>>,
    /// Excluded globs, generated/vendored files and lockfiles (listed as skipped).
    pub excludes: Option<&'a Excludes>,
}

/// One file of the rendered patch.
#[derive(Debug)]
struct Entry {
    path: String,
    deleted: bool,
    new_id: Oid,
    old_id: Oid,
    /// sha256 and line count of the working-tree file, read without following links.
    read: Option<(String, u32)>,
    hunks: Vec<Hunk>,
}

/// The rendered patch and its files.
#[derive(Debug, Default)]
struct Rendered {
    patch: Vec<u8>,
    entries: Vec<Entry>,
    skipped: Vec<SkippedFile>,
    /// Whether the diff had any change at all (reviewable or not) outside `.arev/`.
    changed: bool,
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

/// arev's own home inside the repository, never part of a diff and not listed.
fn is_arev_home(path: &[u8]) -> bool {
    path.strip_prefix(RUN_DIR.as_bytes())
        .is_some_and(|rest| rest.is_empty() || rest.starts_with(b"/"))
}

/// The run directory `path` lies in, if any: a configured run-dir base, or a directory
/// that is an arev run dir (named like a run id, holding `meta.json`). Cached per directory.
fn run_dir_of(
    root: &Path,
    path: &str,
    bases: &[String],
    cache: &mut HashMap<String, bool>,
) -> Option<String> {
    let mut end = 0;
    while let Some(i) = path[end..].find('/') {
        end += i;
        let dir = &path[..end];
        let hit = bases.iter().any(|b| b == dir)
            || *cache
                .entry(dir.to_owned())
                .or_insert_with(|| is_run_dir(&root.join(dir)));
        if hit {
            return Some(dir.to_owned());
        }
        end += 1;
    }
    None
}

/// Whether a side of a delta is a symlink or a submodule (a gitlink, or an untracked
/// nested repository, which git lists as a directory).
fn special_kind(delta: &git2::DiffDelta<'_>) -> Option<SkipReason> {
    let modes = [delta.old_file().mode(), delta.new_file().mode()];
    if modes.contains(&FileMode::Link) {
        Some(SkipReason::Symlink)
    } else if modes.contains(&FileMode::Commit)
        || modes.contains(&FileMode::Tree)
        || delta_path(delta).0.ends_with(b"/")
    {
        Some(SkipReason::Submodule)
    } else {
        None
    }
}

/// Size of a blob from the object header (not loaded); 0 when unknown.
fn blob_size(repo: &Repository, id: Oid) -> u64 {
    if id.is_zero() {
        return 0;
    }
    repo.odb()
        .and_then(|odb| odb.read_header(id))
        .map(|(size, _)| size as u64)
        .unwrap_or(0)
}

/// Render `diff` as `git diff` prints it, one file at a time, with only the files that are
/// reviewed: symlinks, submodules, run dirs, names with control characters, excluded files
/// (docs/architecture.md §19.3), files over the cap (never loaded) and binary files are left
/// out of the patch and listed as skipped.
/// `.arev/` is left out silently. `workdir`: the new side is the working tree (else the
/// index).
fn render(
    repo: &Repository,
    root: &Path,
    diff: &Diff<'_>,
    rules: &DiffRules<'_>,
    excluder: Option<&Excluder<'_>>,
    workdir: bool,
) -> Result<Rendered, TargetError> {
    let mut out = Rendered::default();
    let n = diff.deltas().len();
    // A path that is a link or a submodule on any side (a type change is split into a
    // deletion and an addition) is skipped in all its deltas.
    let mut special: HashMap<String, SkipReason> = HashMap::new();
    for delta in diff.deltas() {
        if let Some(why) = special_kind(&delta) {
            let (path, _) = delta_path(&delta);
            special
                .entry(String::from_utf8_lossy(path).into_owned())
                .or_insert(why);
        }
    }
    let mut listed: HashSet<String> = HashSet::new();
    let mut run_dirs: HashMap<String, bool> = HashMap::new();
    let mut skip = |out: &mut Rendered, path: String, reason: SkipReason, glob: Option<String>| {
        out.changed = true;
        if listed.insert(path.clone()) {
            out.skipped.push(SkippedFile { path, reason, glob });
        }
    };
    for idx in 0..n {
        let Some(delta) = diff.get_delta(idx) else {
            continue;
        };
        let (raw, deleted) = delta_path(&delta);
        if is_arev_home(raw) {
            continue;
        }
        let Ok(path) = std::str::from_utf8(raw) else {
            skip(
                &mut out,
                escape_path(&String::from_utf8_lossy(raw)),
                SkipReason::NotUtf8,
                None,
            );
            continue;
        };
        if rules.only.is_some_and(|only| !only.contains(path)) {
            continue;
        }
        if has_control_chars(path) {
            skip(&mut out, escape_path(path), SkipReason::ControlChars, None);
            continue;
        }
        if let Some(dir) = run_dir_of(root, path, rules.run_dirs, &mut run_dirs) {
            skip(&mut out, dir, SkipReason::RunDir, None);
            continue;
        }
        if let Some(why) = special.get(path) {
            skip(&mut out, path.trim_end_matches('/').to_owned(), *why, None);
            continue;
        }
        if let Some((why, glob)) = excluder.and_then(|e| e.why(path)) {
            skip(&mut out, path.to_owned(), why, glob);
            continue;
        }
        // Sizes first, from metadata and object headers: an oversized side is never loaded.
        let old_size = blob_size(repo, delta.old_file().id());
        let mut read = None;
        let new_size = if deleted {
            0
        } else if workdir {
            match read_regular(root, path, rules.cap) {
                Ok(bytes) => {
                    let len = bytes.len() as u64;
                    read = Some((sha256_hex(&bytes), count_lines(&bytes)));
                    len
                }
                Err(ScanError::Skip(reason, _)) => {
                    skip(&mut out, path.to_owned(), reason, None);
                    continue;
                }
                // Gone from the working tree since git looked: measured from the blob.
                Err(ScanError::Missing) => blob_size(repo, delta.new_file().id()),
            }
        } else {
            blob_size(repo, delta.new_file().id())
        };
        if old_size > rules.cap || new_size > rules.cap {
            skip(&mut out, path.to_owned(), SkipReason::TooLarge, None);
            continue;
        }
        let Some(mut patch) = Patch::from_diff(diff, idx).map_err(|e| git_err(&e))? else {
            continue;
        };
        if patch.delta().flags().is_binary() {
            skip(&mut out, path.to_owned(), SkipReason::Binary, None);
            continue;
        }
        // A path the index changed and the working tree changed back: no change at all.
        let same_mode = delta.old_file().mode() == delta.new_file().mode();
        if patch.num_hunks() == 0 && same_mode && delta.status() == Delta::Modified {
            continue;
        }
        out.changed = true;
        let mut hunks = Vec::new();
        for h in 0..patch.num_hunks() {
            let (h, _) = patch.hunk(h).map_err(|e| git_err(&e))?;
            let (start, lines) = if deleted {
                (h.old_start(), h.old_lines())
            } else {
                (h.new_start(), h.new_lines())
            };
            // A pure deletion has no new lines: anchor it on the line it follows.
            let start = start.max(1);
            let end = start + lines.saturating_sub(1);
            hunks.push(Hunk { start, end });
        }
        let buf = patch.to_buf().map_err(|e| git_err(&e))?;
        out.patch.extend_from_slice(&buf);
        out.entries.push(Entry {
            path: path.to_owned(),
            deleted,
            new_id: delta.new_file().id(),
            old_id: delta.old_file().id(),
            read,
            hunks,
        });
    }
    Ok(out)
}

/// The patch: working tree (with index and untracked files) against the base tree, or the
/// staged diff when that has no change at all.
fn compute(
    repo: &Repository,
    root: &Path,
    base: Option<&str>,
    rules: &DiffRules<'_>,
) -> Result<Rendered, TargetError> {
    let tree = base_tree(repo, base)?;
    let excluder = rules.excludes.map(|e| e.compile(Some(repo))).transpose()?;
    let excluder = excluder.as_ref();
    let max_size = i64::try_from(rules.cap).unwrap_or(i64::MAX).max(1);
    let mut opts = DiffOptions::new();
    opts.include_untracked(true)
        .recurse_untracked_dirs(true)
        .show_untracked_content(true)
        .max_size(max_size);
    let working = repo
        .diff_tree_to_workdir_with_index(tree.as_ref(), Some(&mut opts))
        .map_err(|e| git_err(&e))?;
    let rendered = render(repo, root, &working, rules, excluder, true)?;
    if rendered.changed {
        return Ok(rendered);
    }
    let mut opts = DiffOptions::new();
    opts.max_size(max_size);
    let staged = repo
        .diff_tree_to_index(tree.as_ref(), None, Some(&mut opts))
        .map_err(|e| git_err(&e))?;
    render(repo, root, &staged, rules, excluder, false)
}

/// Just the patch bytes (for re-pinning and change detection). Empty when nothing
/// reviewable changed.
pub(crate) fn patch_bytes(
    repo: &Repository,
    root: &Path,
    base: Option<&str>,
    rules: &DiffRules<'_>,
) -> Result<Vec<u8>, TargetError> {
    compute(repo, root, base, rules).map(|r| r.patch)
}

/// Pin the diff of the repository whose work tree is `root`.
pub(crate) fn pin_diff(
    repo: &Repository,
    root: &Path,
    base: Option<&str>,
    rules: &DiffRules<'_>,
) -> Result<DiffPin, TargetError> {
    pin_rendered(repo, root, compute(repo, root, base, rules)?)
}

/// The pinned diff of an already rendered patch (an error when it holds no change).
fn pin_rendered(
    repo: &Repository,
    root: &Path,
    rendered: Rendered,
) -> Result<DiffPin, TargetError> {
    if !rendered.changed {
        return Err(TargetError::EmptyDiff {
            root: root.to_path_buf(),
        });
    }
    let mut files = Vec::new();
    let mut hunks = BTreeMap::new();
    for e in rendered.entries {
        let (sha256, lines) = match (e.deleted, e.read) {
            (true, _) => (String::new(), blob_lines(repo, e.old_id)),
            (false, Some(read)) => read,
            // Staged (or gone from the working tree): measure the staged blob.
            (false, None) => (String::new(), blob_lines(repo, e.new_id)),
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
    let mut skipped = rendered.skipped;
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

/// The patch from the tree `base` to a snapshot of the working tree now (the same rules as
/// any diff: the new side is the working tree), and that snapshot.
fn compute_snapshot(
    repo: &Repository,
    root: &Path,
    base: &str,
    rules: &DiffRules<'_>,
) -> Result<(Rendered, Oid), TargetError> {
    let base = snapshot_base(repo, base)?;
    let now = snapshot_tree(repo)?;
    let now_tree = repo.find_tree(now).map_err(|e| git_err(&e))?;
    let mut opts = DiffOptions::new();
    opts.max_size(i64::try_from(rules.cap).unwrap_or(i64::MAX).max(1));
    let diff = repo
        .diff_tree_to_tree(Some(&base), Some(&now_tree), Some(&mut opts))
        .map_err(|e| git_err(&e))?;
    let excluder = rules.excludes.map(|e| e.compile(Some(repo))).transpose()?;
    Ok((
        render(repo, root, &diff, rules, excluder.as_ref(), true)?,
        now,
    ))
}

/// The patch bytes from the tree `base` to the working tree now, and the snapshot tree of
/// the working tree they were computed against.
pub(crate) fn snapshot_patch(
    repo: &Repository,
    root: &Path,
    base: &str,
    rules: &DiffRules<'_>,
) -> Result<(Vec<u8>, Oid), TargetError> {
    compute_snapshot(repo, root, base, rules).map(|(r, now)| (r.patch, now))
}

/// The diff from the tree `base` to the working tree as [`pin_snapshot_diff`] pins it — its
/// patch and reviewed files (none when nothing changed) — and the snapshot tree.
pub(crate) fn snapshot_files(
    repo: &Repository,
    root: &Path,
    base: &str,
    rules: &DiffRules<'_>,
) -> Result<(Vec<u8>, Vec<TargetFile>, Oid), TargetError> {
    let (rendered, now) = compute_snapshot(repo, root, base, rules)?;
    if !rendered.changed {
        return Ok((rendered.patch, vec![], now));
    }
    let pin = pin_rendered(repo, root, rendered)?;
    Ok((pin.patch, pin.files, now))
}

/// Pin the diff from the tree `base` to the working tree (no staged fallback: the snapshot
/// already holds the index's and the untracked files' content).
pub(crate) fn pin_snapshot_diff(
    repo: &Repository,
    root: &Path,
    base: &str,
    rules: &DiffRules<'_>,
) -> Result<DiffPin, TargetError> {
    pin_rendered(repo, root, compute_snapshot(repo, root, base, rules)?.0)
}
