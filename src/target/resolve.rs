//! Resolve a TargetRequest into a PinnedTarget (kind, root, mode and type selection, the
//! single-file pin) and re-pin it at the end of a run; diffs and manifests are delegated.

use super::brief;
use super::diff;
use super::diff::DiffRules;
use super::manifest;
use super::scan::{
    self, canonical_dir, escape_path, file_size, has_control_chars, rel_string, sha256_hex,
};
use super::statkey::{now_ns, worktree_key, ShaCache, RACY_MARGIN_NS};
use super::{
    skip_summary, Artefact, ArtefactContent, Mode, PinnedTarget, TargetError, TargetFile,
    TargetKind, TargetRequest, TargetType,
};
use git2::Repository;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

/// `[review] max_file_bytes` when nothing else is configured (1 MiB).
pub const DEFAULT_MAX_FILE_BYTES: u64 = 1024 * 1024;
/// The largest file re-read when checking a pinned target for drift: a reviewed file that
/// grew past it meanwhile counts as changed without being read (memory stays bounded).
pub const REPIN_MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;
/// A diff of at most this many patch lines is reviewed in LIGHTWEIGHT mode.
pub const LIGHTWEIGHT_DIFF_LINES: u64 = 150;
/// Headings (`## X`) that make a Markdown file a spec, searched in its first lines.
const SPEC_HEADINGS: &[&str] = &["Implementation Plan", "Spec", "Design", "Plan"];
const SPEC_HEADING_LINES: usize = 20;
/// Markdown files under this root-relative directory are specs.
const SPEC_DIR: &str = "docs/superpowers/";

/// Where the target is resolved from.
#[derive(Debug, Clone)]
pub(crate) struct Context {
    /// Canonical repo work tree, or canonical cwd outside a repo.
    pub root: PathBuf,
    pub in_repo: bool,
    /// Canonical cwd.
    pub cwd: PathBuf,
    /// `cwd` relative to `root`, `/`-separated (empty at the root).
    pub cwd_rel: String,
    pub max_file_bytes: u64,
    /// Root-relative run-dir bases inside the root (never part of a diff or a walk).
    pub run_dirs: Vec<String>,
}

impl Context {
    /// The error for a path that is not under `root`.
    pub(crate) fn outside_error(&self, arg: &str) -> TargetError {
        if self.in_repo {
            TargetError::OutsideRepo(arg.to_owned())
        } else {
            TargetError::OutsideCwd(arg.to_owned())
        }
    }
}

/// `arg` (relative to cwd, or absolute) made absolute with `.` and `..` resolved lexically,
/// never through the file system (so that no symlink is followed).
fn lexical_abs(cwd: &Path, arg: &str) -> PathBuf {
    let joined = cwd.join(arg);
    let mut out = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// The absolute path of the existing path `arg` (relative to cwd) under the root, and its
/// root-relative `/`-separated form, found without following any symlink below the root: a
/// link anywhere on the way is `TargetError::Symlink` naming the link. (An absolute path
/// through a symlinked *prefix* of the root, e.g. `/tmp` → `/private/tmp`, is accepted: the
/// root itself is canonical.)
pub(crate) fn locate(ctx: &Context, arg: &str) -> Result<(PathBuf, String), TargetError> {
    let lexical = lexical_abs(&ctx.cwd, arg);
    let exists = |p: &Path| match std::fs::symlink_metadata(p) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(TargetError::NoSuchFile(arg.to_owned()))
        }
        Err(e) => Err(TargetError::Unreadable {
            path: arg.to_owned(),
            message: e.to_string(),
        }),
    };
    let rel_path = match lexical.strip_prefix(&ctx.root) {
        Ok(r) => r.to_path_buf(),
        Err(_) => {
            exists(&lexical)?;
            lexical
                .ancestors()
                .find(|a| a.canonicalize().is_ok_and(|c| c == ctx.root))
                .and_then(|a| lexical.strip_prefix(a).ok())
                .map(Path::to_path_buf)
                .ok_or_else(|| ctx.outside_error(arg))?
        }
    };
    let rel = rel_string(&rel_path).ok_or_else(|| TargetError::NotUtf8(arg.to_owned()))?;
    let mut at = ctx.root.clone();
    let mut walked = String::new();
    for part in rel.split('/').filter(|p| !p.is_empty()) {
        at.push(part);
        if !walked.is_empty() {
            walked.push('/');
        }
        walked.push_str(part);
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => return Err(TargetError::Symlink(walked)),
            Ok(_) => {}
            Err(_) => exists(&at)?,
        }
    }
    if has_control_chars(&rel) {
        return Err(TargetError::ControlChars(escape_path(&rel)));
    }
    Ok((at, rel))
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
    pin_manifest(&ctx, req, display)
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
    };
    let pin = diff::pin_diff(repo, &ctx.root, req.base.as_deref(), &rules)?;
    let measured_lines = pin.lines;
    let mode = if measured_lines <= LIGHTWEIGHT_DIFF_LINES {
        Mode::Lightweight
    } else {
        Mode::Full
    };
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
        measured_lines,
        mode,
        target_type: TargetType::Code,
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
            path: rel,
            sha256: scanned.sha256,
            lines: scanned.lines,
        }],
        skipped: Vec::new(),
        hunks: BTreeMap::new(),
        base: None,
        measured_lines: u64::from(scanned.lines),
        mode,
        target_type,
        brief,
    })
}

fn pin_manifest(
    ctx: &Context,
    req: &TargetRequest,
    display: String,
) -> Result<PinnedTarget, TargetError> {
    let pin = manifest::pin_manifest(ctx, &req.args)?;
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
        measured_lines: pin.measured_lines,
        mode: Mode::Full,
        target_type: TargetType::Code,
        brief: pin.brief,
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
/// is `root`, with the default size cap and run-dir base: sha256 of the patch (the sha256 of
/// the empty patch when nothing reviewable changed). Cheaper than `resolve`: no brief.
pub fn diff_sha(root: &Path, base: Option<&str>) -> Result<String, TargetError> {
    diff_sha_capped(root, base, DEFAULT_MAX_FILE_BYTES)
}

/// [`diff_sha`] with the size cap `max_file_bytes` (`[review] max_file_bytes`).
pub fn diff_sha_capped(
    root: &Path,
    base: Option<&str>,
    max_file_bytes: u64,
) -> Result<String, TargetError> {
    let repo = Repository::open(root).map_err(|_| TargetError::NotARepo(root.to_path_buf()))?;
    let rules = DiffRules {
        cap: max_file_bytes,
        run_dirs: &[],
        only: None,
    };
    diff::patch_sha(&repo, root, base, &rules)
}

/// [`diff_sha_capped`] through the key cache in the file `cache`: when the working tree's
/// key ([`worktree_key`]: HEAD, the index, the stat of every changed, untracked or
/// directory entry) is one the cache has seen, the sha it produced then, without rendering
/// the diff (a `git status`'s worth of `lstat`s); otherwise the diff is rendered, and its sha
/// remembered under the key when nothing keyed changed while it was rendered.
pub fn diff_sha_cached(
    root: &Path,
    base: Option<&str>,
    max_file_bytes: u64,
    cache: &Path,
) -> Result<String, TargetError> {
    diff_sha_cached_with(root, base, max_file_bytes, cache, RACY_MARGIN_NS)
}

/// [`diff_sha_cached`] with the racy margin `margin_ns` (tests shorten it).
pub(crate) fn diff_sha_cached_with(
    root: &Path,
    base: Option<&str>,
    max_file_bytes: u64,
    cache: &Path,
    margin_ns: i64,
) -> Result<String, TargetError> {
    let repo = Repository::open(root).map_err(|_| TargetError::NotARepo(root.to_path_buf()))?;
    let identity = format!("diff\0{}\0{max_file_bytes}", base.unwrap_or(""));
    let mut known = ShaCache::load(cache);
    if let Ok(key) = worktree_key(&repo, root, &identity) {
        if let Some(sha) = known.get(&key.digest) {
            return Ok(sha.to_owned());
        }
    }
    let before = now_ns();
    let rules = DiffRules {
        cap: max_file_bytes,
        run_dirs: &[],
        only: None,
    };
    let sha = diff::patch_sha(&repo, root, base, &rules)?;
    // Keyed after the diff, stored only if nothing keyed moved since just before it: then
    // the diff saw exactly the tree the key describes.
    if let Ok(key) = worktree_key(&repo, root, &identity) {
        if key.newest_ns < before.saturating_sub(margin_ns) {
            let _ = known.put(cache, &key.digest, &sha);
        }
    }
    Ok(sha)
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
            let bytes = scan::read_regular(&target.root, rel, REPIN_MAX_FILE_BYTES)
                .map_err(|e| e.into_target_error(rel, REPIN_MAX_FILE_BYTES, 0))?;
            Ok(sha256_hex(&bytes))
        }
        TargetKind::Manifest => manifest::rehash(&target.root, &target.files),
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
                target.base.as_deref(),
                &only,
                REPIN_MAX_FILE_BYTES,
                spool,
            )
        }
    }
}
