//! What the user asked for (`TargetRequest`), resolved into a PinnedTarget (kind, root, mode
//! and type selection, the single-file pin) and re-pinned at the end of a run; diffs and
//! manifests are delegated.

use super::brief;
use super::diff;
use super::diff::{DiffBase, DiffRules};
use super::locate::{locate, Context};
use super::manifest;
use super::scan::{self, canonical_dir, file_size, rel_string, sha256_hex, REPIN_MAX_FILE_BYTES};
use super::statkey::{now_ns, RACY_MARGIN_NS};
use super::treekey::{worktree_key, worktree_key_listed, ShaCache};
use super::{
    skip_summary, Artefact, ArtefactContent, Excludes, Mode, PinKeys, PinnedTarget, Snapshot,
    TargetError, TargetFile, TargetIdentity, TargetKind, TargetType,
};
use git2::Repository;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// `[review] max_file_bytes` when nothing else is configured (1 MiB).
pub const DEFAULT_MAX_FILE_BYTES: u64 = 1024 * 1024;
/// A diff of at most this many patch lines is reviewed in LIGHTWEIGHT mode.
pub const LIGHTWEIGHT_DIFF_LINES: u64 = 150;
/// Headings (`## X`) that make a Markdown file a spec, searched in its first lines.
const SPEC_HEADINGS: &[&str] = &["Implementation Plan", "Spec", "Design", "Plan"];
const SPEC_HEADING_LINES: usize = 20;
/// Markdown files under this root-relative directory are specs.
const SPEC_DIR: &str = "docs/superpowers/";

/// What the user asked for, before any I/O.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetRequest {
    /// The positional TARGET arguments.
    pub args: Vec<String>,
    /// `--base REV` (only valid with `diff`).
    pub base: Option<String>,
    /// `--base-tree OID` (only valid with `diff`, not with `base`): the tree of a working-tree
    /// snapshot the diff starts from.
    pub base_tree: Option<String>,
    /// Directory relative paths and globs are resolved from.
    pub cwd: PathBuf,
    /// Size cap per file in bytes (default 1 MiB).
    pub max_file_bytes: u64,
    /// What diffs, directories and globs leave out (docs/architecture.md §19.3).
    pub excludes: Excludes,
}

/// The repository containing `cwd` (when it has a work tree) and the resolution context.
fn context(
    req: &TargetRequest,
    run_dirs: &[PathBuf],
) -> Result<(Context, Option<Repository>), TargetError> {
    let cwd = canonical_dir(&req.cwd)?;
    let repo = Repository::discover(&cwd)
        .ok()
        .filter(|r| !r.is_bare() && r.workdir().is_some());
    let (root, repo) = match repo {
        Some(repo) => {
            let workdir = repo.workdir().map(Path::to_path_buf).unwrap_or_default();
            (canonical_dir(&workdir)?, Some(repo))
        }
        None => (cwd.clone(), None),
    };
    let cwd_rel = cwd
        .strip_prefix(&root)
        .ok()
        .and_then(rel_string)
        .unwrap_or_default();
    let run_dirs = run_dirs
        .iter()
        .filter_map(|d| {
            // A base that does not exist yet: its longest existing ancestor, resolved.
            let d = d
                .ancestors()
                .find_map(|a| {
                    let rest = d.strip_prefix(a).ok()?;
                    a.canonicalize().ok().map(|c| c.join(rest))
                })
                .unwrap_or_else(|| d.clone());
            d.strip_prefix(&root).ok().and_then(rel_string)
        })
        .collect();
    let ctx = Context {
        in_repo: repo.is_some(),
        root,
        cwd,
        cwd_rel,
        max_file_bytes: req.max_file_bytes,
        run_dirs,
    };
    Ok((ctx, repo))
}

/// Resolve and pin the target. Pure function of the file system and git state.
pub fn resolve(req: &TargetRequest) -> Result<PinnedTarget, TargetError> {
    resolve_excluding(req, &[])
}

/// Resolve and pin the target, leaving out the run-dir bases `run_dirs` (absolute; those
/// inside the root are never part of a diff or a walk, and are listed as skipped `run_dir`).
/// Directories that are arev run dirs (a run-id name holding `meta.json`) are left out
/// wherever they are.
pub fn resolve_excluding(
    req: &TargetRequest,
    run_dirs: &[PathBuf],
) -> Result<PinnedTarget, TargetError> {
    if req.args.is_empty() {
        return Err(TargetError::NoTarget);
    }
    let display = req.args.join(" ");
    let is_diff = req.args.iter().any(|a| a == "diff");
    if is_diff && req.args.len() > 1 {
        return Err(TargetError::DiffWithOthers(display));
    }
    if !is_diff && req.base.is_some() {
        return Err(TargetError::BaseWithoutDiff);
    }
    if req.base_tree.is_some() && (!is_diff || req.base.is_some()) {
        return Err(TargetError::BaseTreeWithoutDiff);
    }
    req.excludes.validate()?;
    let (ctx, repo) = context(req, run_dirs)?;
    if is_diff {
        let repo = repo.ok_or_else(|| TargetError::NotARepo(ctx.cwd.clone()))?;
        return pin_diff(&ctx, &repo, req, display);
    }
    if let [arg] = req.args.as_slice() {
        // One path that is a file, or a link (to anything): a single-file target, so that a
        // link is refused (exit 2) rather than walked as a one-entry manifest.
        let single = std::fs::symlink_metadata(ctx.cwd.join(arg))
            .is_ok_and(|m| m.is_file() || m.file_type().is_symlink());
        if single {
            return pin_file(&ctx, arg, display);
        }
    }
    pin_manifest(&ctx, req, repo.as_ref(), display)
}

/// A diff's mode by its patch lines.
fn diff_mode(measured_lines: u64) -> Mode {
    if measured_lines <= LIGHTWEIGHT_DIFF_LINES {
        Mode::Lightweight
    } else {
        Mode::Full
    }
}

fn pin_diff(
    ctx: &Context,
    repo: &Repository,
    req: &TargetRequest,
    display: String,
) -> Result<PinnedTarget, TargetError> {
    let rules = DiffRules {
        cap: ctx.max_file_bytes,
        run_dirs: &ctx.run_dirs,
        only: None,
        excludes: Some(&req.excludes),
    };
    let pin = diff::pin_diff(
        repo,
        &ctx.root,
        diff_base(req.base.as_deref(), req.base_tree.as_deref()),
        &rules,
    )?;
    let measured_lines = pin.lines;
    let mode = diff_mode(measured_lines);
    let target = PinnedTarget {
        kind: TargetKind::Diff,
        display,
        root: ctx.root.clone(),
        in_repo: true,
        file_path: None,
        sha256: pin.sha256,
        brief: pin.brief,
        artefact: Some(Artefact {
            name: "diff.patch",
            content: ArtefactContent::Patch(Arc::new(pin.spool)),
        }),
        files: pin.files,
        skipped: pin.skipped,
        hunks: pin.hunks,
        base: req.base.clone(),
        base_tree: req.base_tree.clone(),
        measured_lines,
        mode,
        target_type: TargetType::Code,
        keys: None,
        context: None,
    };
    if target.files.is_empty() {
        return Err(TargetError::DiffNothingReviewable {
            skipped: skip_summary(&target.skipped),
            target: Box::new(target),
        });
    }
    Ok(target)
}

fn pin_file(ctx: &Context, arg: &str, display: String) -> Result<PinnedTarget, TargetError> {
    let (abs, rel) = locate(ctx, arg)?;
    let cap = ctx.max_file_bytes;
    let taken_ns = now_ns();
    let scanned = scan::scan_file(&ctx.root, &rel, cap, true)
        .map_err(|e| e.into_target_error(arg, cap, file_size(&abs)))?;
    let text = scanned.text.unwrap_or_default();
    let is_markdown = is_markdown(&rel);
    let target_type = if is_markdown && (rel.starts_with(SPEC_DIR) || has_spec_heading(&text)) {
        TargetType::Spec
    } else {
        TargetType::Code
    };
    let mode = if is_markdown {
        Mode::Full
    } else {
        Mode::Lightweight
    };
    // Markdown is summarised by its headings whatever its type; code by its items.
    let brief = if is_markdown {
        brief::spec_brief(&text)
    } else {
        brief::code_brief([(rel.as_str(), brief::code_items(&text).as_slice())])
    };
    Ok(PinnedTarget {
        kind: TargetKind::File,
        display,
        root: ctx.root.clone(),
        in_repo: ctx.in_repo,
        file_path: Some(abs),
        artefact: None,
        sha256: scanned.sha256.clone(),
        files: vec![TargetFile {
            path: rel.clone(),
            sha256: scanned.sha256,
            lines: scanned.lines,
        }],
        skipped: Vec::new(),
        hunks: BTreeMap::new(),
        base: None,
        base_tree: None,
        measured_lines: u64::from(scanned.lines),
        mode,
        target_type,
        brief,
        context: None,
        keys: Some(Arc::new(PinKeys {
            taken_ns,
            by_path: [(rel, scanned.stat)].into(),
        })),
    })
}

fn pin_manifest(
    ctx: &Context,
    req: &TargetRequest,
    repo: Option<&Repository>,
    display: String,
) -> Result<PinnedTarget, TargetError> {
    let pin = manifest::pin_manifest(ctx, &req.args, &req.excludes, repo)?;
    Ok(PinnedTarget {
        kind: TargetKind::Manifest,
        display,
        root: ctx.root.clone(),
        in_repo: ctx.in_repo,
        file_path: None,
        artefact: Some(pin.artefact),
        sha256: pin.sha256,
        files: pin.files,
        skipped: pin.skipped,
        hunks: BTreeMap::new(),
        base: None,
        base_tree: None,
        measured_lines: pin.measured_lines,
        mode: Mode::Full,
        target_type: TargetType::Code,
        brief: pin.brief,
        context: None,
        keys: Some(Arc::new(pin.keys)),
    })
}

fn is_markdown(rel: &str) -> bool {
    Path::new(rel)
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("md"))
}

/// A `## Implementation Plan|Spec|Design|Plan` heading (alone, or followed by a space or a
/// colon) within the first 20 lines.
fn has_spec_heading(text: &str) -> bool {
    text.lines().take(SPEC_HEADING_LINES).any(|line| {
        let Some(rest) = line.trim_end().strip_prefix("## ") else {
            return false;
        };
        SPEC_HEADINGS.iter().any(|h| {
            rest.strip_prefix(h)
                .is_some_and(|tail| tail.is_empty() || tail.starts_with([' ', ':']))
        })
    })
}

/// The TARGET_SHA `arev run diff [--base BASE]` would pin in the repository whose work tree
/// is `root`, with the default size cap, run-dir base and excludes (lockfiles, generated and
/// vendored files): sha256 of the patch (the sha256 of the empty patch when nothing
/// reviewable changed). Cheaper than `resolve`: no brief.
pub fn diff_sha(root: &Path, base: Option<&str>) -> Result<String, TargetError> {
    diff_sha_capped(
        root,
        base,
        DEFAULT_MAX_FILE_BYTES,
        &Excludes::new(vec![], true),
    )
}

/// [`diff_sha`] with the size cap `max_file_bytes` (`[review] max_file_bytes`) and the
/// configured excludes: the sha a review with the same configuration pins.
pub fn diff_sha_capped(
    root: &Path,
    base: Option<&str>,
    max_file_bytes: u64,
    excludes: &Excludes,
) -> Result<String, TargetError> {
    let rules = DiffRules::whole_tree(max_file_bytes, excludes);
    diff::patch_sha(&open_repo(root)?, root, DiffBase::Head(base), &rules)
}

/// Where a diff starts: `--base-tree` when given, else HEAD or `--base`'s merge base.
fn diff_base<'a>(base: Option<&'a str>, base_tree: Option<&'a str>) -> DiffBase<'a> {
    match base_tree {
        Some(tree) => DiffBase::Tree(tree),
        None => DiffBase::Head(base),
    }
}

impl Snapshot {
    /// The diff from the snapshot `tree` to itself: no change.
    pub fn empty(tree: &str) -> Self {
        Self {
            tree: tree.to_owned(),
            sha: empty_diff_sha(),
            files_sha256: super::files_digest(&[]),
            mode: diff_mode(0),
        }
    }

    /// The identity of the target `arev run diff --base-tree <base>` pins now: with the
    /// review's other inputs, its verdict-cache key (docs/architecture.md §20.4).
    pub fn identity(&self) -> TargetIdentity {
        TargetIdentity {
            kind: TargetKind::Diff,
            sha256: self.sha.clone(),
            files_sha256: self.files_sha256.clone(),
            target_type: TargetType::Code,
            mode: self.mode,
        }
    }
}

impl From<diff::SnapshotDiff> for Snapshot {
    fn from(d: diff::SnapshotDiff) -> Self {
        Self {
            tree: d.tree.to_string(),
            sha: d.sha256,
            files_sha256: super::files_digest(&d.files),
            mode: diff_mode(d.lines),
        }
    }
}

/// The repository at `root` (not discovered upwards).
fn open_repo(root: &Path) -> Result<Repository, TargetError> {
    Repository::open(root).map_err(|_| TargetError::NotARepo(root.to_path_buf()))
}

/// TARGET_SHA of a diff with no change (the sha256 of the empty patch).
pub fn empty_diff_sha() -> String {
    sha256_hex(&[])
}

/// Snapshot the working tree of the repository at `root` into a tree object (the user's
/// index, HEAD and branches untouched), with the TARGET_SHA of the diff from the tree `base`
/// (`None`: from the snapshot itself, i.e. the empty patch) under the size cap
/// `max_file_bytes` and the configured excludes: the sha `arev run diff --base-tree` with
/// the same configuration pins, and the rest of that target's identity.
pub fn snapshot_diff(
    root: &Path,
    base: Option<&str>,
    max_file_bytes: u64,
    excludes: &Excludes,
) -> Result<Snapshot, TargetError> {
    let repo = open_repo(root)?;
    match base {
        Some(b) => {
            let rules = DiffRules::whole_tree(max_file_bytes, excludes);
            Ok(diff::snapshot_diff(&repo, root, b, &rules)?.into())
        }
        None => Ok(Snapshot::empty(&diff::snapshot_tree(&repo)?.to_string())),
    }
}

/// A [`snapshot_diff_cached`] answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CachedSnapshot {
    pub snapshot: Snapshot,
    /// The working tree's key was known: no snapshot was taken, no diff rendered.
    pub hit: bool,
    /// The working-tree key the snapshot is known to hold (None: the tree moved while it
    /// was taken, or too recently to trust a key); see [`remember_snapshot`].
    pub key: Option<String>,
}

/// [`snapshot_diff`] from the tree `base` through the key cache in the file `cache`
/// (docs/architecture.md §14.1): when the working tree's key ([`worktree_key`]: HEAD, the
/// index, the stat of every changed, untracked or directory entry) is one the cache has seen
/// for this base and these rules, the sha and snapshot tree it produced then, without taking
/// a snapshot or rendering the diff; otherwise the snapshot is taken and the diff rendered,
/// and both remembered under the key when nothing keyed changed meanwhile.
pub fn snapshot_diff_cached(
    root: &Path,
    base: &str,
    max_file_bytes: u64,
    excludes: &Excludes,
    cache: &Path,
) -> Result<CachedSnapshot, TargetError> {
    snapshot_diff_cached_with(root, base, max_file_bytes, excludes, cache, RACY_MARGIN_NS)
}

/// What a cached snapshot diff's key covers besides the working tree: the base tree and the
/// rules.
pub(crate) fn snapshot_identity(base: &str, max_file_bytes: u64, excludes: &Excludes) -> String {
    format!(
        "snapshot\0{base}\0{max_file_bytes}\0{:?}\0{}\0{:?}",
        excludes.globs, excludes.skip_lockfiles, excludes.attributes
    )
}

/// [`snapshot_diff_cached`] with the racy margin `margin_ns` (tests shorten it).
pub(crate) fn snapshot_diff_cached_with(
    root: &Path,
    base: &str,
    max_file_bytes: u64,
    excludes: &Excludes,
    cache: &Path,
    margin_ns: i64,
) -> Result<CachedSnapshot, TargetError> {
    let repo = open_repo(root)?;
    let identity = snapshot_identity(base, max_file_bytes, excludes);
    let mut known = ShaCache::load(cache);
    let hit = |known: &ShaCache, digest: String| {
        known.get(&identity, &digest).map(|k| CachedSnapshot {
            snapshot: k.snapshot(),
            hit: true,
            key: Some(digest),
        })
    };
    // Cheapest first: the directories and untracked files the last walk saw, unwalked.
    if let Some(listing) = known.listing() {
        if let Ok(key) = worktree_key_listed(&repo, root, listing) {
            if let Some(found) = hit(&known, key.digest) {
                return Ok(found);
            }
        }
    }
    // Then a walk (the tree may be back to a state seen before the last one).
    if let Ok((key, listing)) = worktree_key(&repo, root) {
        if let Some(found) = hit(&known, key.digest) {
            known.set_listing(listing);
            let _ = known.save(cache);
            return Ok(found);
        }
    }
    let before = now_ns();
    let rules = DiffRules::whole_tree(max_file_bytes, excludes);
    let snapshot = Snapshot::from(diff::snapshot_diff(&repo, root, base, &rules)?);
    // Keyed after the diff, stored only if nothing keyed moved since just before it: then
    // the diff saw exactly the tree the key describes.
    let key = worktree_key(&repo, root)
        .ok()
        .filter(|(k, _)| k.newest_ns < before.saturating_sub(margin_ns));
    let key = key.map(|(k, listing)| {
        known.set_listing(listing);
        let _ = known.put(cache, &identity, &k.digest, &snapshot);
        k.digest
    });
    Ok(CachedSnapshot {
        snapshot,
        hit: false,
        key,
    })
}

/// Remember in the key cache `cache` that, on the working tree whose key is `key`, the diff
/// from the tree `base` under these rules is `snapshot` (e.g. once the Stop hook moved its
/// baseline to the snapshot of that tree: the diff from it is empty). A cache never fails
/// its caller: a write error is ignored.
pub fn remember_snapshot(
    cache: &Path,
    base: &str,
    max_file_bytes: u64,
    excludes: &Excludes,
    key: &str,
    snapshot: &Snapshot,
) {
    let identity = snapshot_identity(base, max_file_bytes, excludes);
    let _ = ShaCache::load(cache).put(cache, &identity, key, snapshot);
}

/// Re-compute TARGET_SHA for an already pinned target (same rules, same file list).
///
/// A diff is re-rendered over the pinned files only (files the review did not cover cannot
/// drift it), and of those only the files whose stat pre-key moved since the pin (the rest
/// is read back from the pin's spool; nothing at all when nothing moved); a file that grew past [`REPIN_MAX_FILE_BYTES`] or became a link is left out
/// unread, which changes the sha. A diff that has become empty hashes to the sha256 of the
/// empty patch. A file of the target that can no longer be read (or is now a link) is an
/// error; callers record it as drift.
pub fn repin(target: &PinnedTarget) -> Result<String, TargetError> {
    match target.kind {
        TargetKind::File => {
            let rel = target.files.first().map_or("", |f| f.path.as_str());
            if target
                .keys
                .as_ref()
                .is_some_and(|k| k.unchanged(&target.root, rel))
            {
                return Ok(target.sha256.clone());
            }
            let bytes = scan::read_regular(&target.root, rel, REPIN_MAX_FILE_BYTES)
                .map_err(|e| e.into_target_error(rel, REPIN_MAX_FILE_BYTES, 0))?;
            Ok(sha256_hex(&bytes))
        }
        TargetKind::Manifest => {
            manifest::rehash(&target.root, &target.files, target.keys.as_deref())
        }
        TargetKind::Diff => {
            let repo = Repository::open(&target.root)
                .map_err(|_| TargetError::NotARepo(target.root.clone()))?;
            let only: BTreeSet<String> = target.files.iter().map(|f| f.path.clone()).collect();
            let spool = match target.artefact.as_ref().map(|a| &a.content) {
                Some(ArtefactContent::Patch(spool)) => Some((&**spool, target.sha256.as_str())),
                _ => None,
            };
            diff::repin(
                &repo,
                &target.root,
                diff_base(target.base.as_deref(), target.base_tree.as_deref()),
                &only,
                REPIN_MAX_FILE_BYTES,
                spool,
            )
        }
    }
}

/// The bytes of the repository file `rel` (root-relative, `/`-separated), read like a target
/// file — never through a symlink, at most `cap` bytes — or None when it does not exist.
/// Used for repository inputs such as project rules (docs/architecture.md §19.1).
pub fn read_repo_file(
    root: &Path,
    rel: &str,
    cap: u64,
) -> Result<Option<Vec<u8>>, super::RepoFileError> {
    use super::RepoFileError;
    let Some(norm) = scan::normalize_rel(rel).filter(|n| !n.is_empty()) else {
        return Err(RepoFileError::NotInside);
    };
    if Path::new(rel).is_absolute() {
        return Err(RepoFileError::NotInside);
    }
    if norm.split('/').any(|c| c == ".git") {
        return Err(RepoFileError::VcsMetadata);
    }
    match scan::read_regular(root, &norm, cap) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(scan::ScanError::Missing) => Ok(None),
        Err(scan::ScanError::Skip(reason, message)) => Err(match reason {
            super::SkipReason::TooLarge => RepoFileError::TooLarge(cap),
            super::SkipReason::Symlink => RepoFileError::Symlink,
            reason => RepoFileError::Skipped { reason, message },
        }),
    }
}
