//! Resolve a TargetRequest into a PinnedTarget (kind, root, mode and type selection, the
//! single-file pin) and re-pin it at the end of a run; diffs and manifests are delegated.

use super::brief;
use super::diff;
use super::manifest;
use super::scan::{self, canonical_dir, count_lines, file_size, rel_string, sha256_hex};
use super::{
    Artefact, Mode, PinnedTarget, TargetError, TargetFile, TargetKind, TargetRequest, TargetType,
};
use git2::Repository;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

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

/// Canonical absolute path of the existing path `arg` (relative to cwd) and its
/// root-relative `/`-separated form.
pub(crate) fn locate(ctx: &Context, arg: &str) -> Result<(PathBuf, String), TargetError> {
    let abs = ctx.cwd.join(arg).canonicalize().map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            TargetError::NoSuchFile(arg.to_owned())
        } else {
            TargetError::Unreadable {
                path: arg.to_owned(),
                message: e.to_string(),
            }
        }
    })?;
    let rel = abs
        .strip_prefix(&ctx.root)
        .map_err(|_| ctx.outside_error(arg))?;
    let rel = rel_string(rel).ok_or_else(|| TargetError::NotUtf8(arg.to_owned()))?;
    Ok((abs, rel))
}

/// The repository containing `cwd` (when it has a work tree) and the resolution context.
fn context(req: &TargetRequest) -> Result<(Context, Option<Repository>), TargetError> {
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
    let ctx = Context {
        in_repo: repo.is_some(),
        root,
        cwd,
        cwd_rel,
        max_file_bytes: req.max_file_bytes,
    };
    Ok((ctx, repo))
}

/// Resolve and pin the target. Pure function of the file system and git state.
pub fn resolve(req: &TargetRequest) -> Result<PinnedTarget, TargetError> {
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
    let (ctx, repo) = context(req)?;
    if is_diff {
        let repo = repo.ok_or_else(|| TargetError::NotARepo(ctx.cwd.clone()))?;
        return pin_diff(&ctx, &repo, req, display);
    }
    if let [arg] = req.args.as_slice() {
        let is_file = std::fs::metadata(ctx.cwd.join(arg)).is_ok_and(|m| m.is_file());
        if is_file {
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
    let pin = match &req.base_tree {
        Some(tree) => diff::pin_snapshot_diff(repo, &ctx.root, tree)?,
        None => diff::pin_diff(repo, &ctx.root, req.base.as_deref())?,
    };
    let measured_lines = u64::from(count_lines(&pin.patch));
    let mode = if measured_lines <= LIGHTWEIGHT_DIFF_LINES {
        Mode::Lightweight
    } else {
        Mode::Full
    };
    Ok(PinnedTarget {
        kind: TargetKind::Diff,
        display,
        root: ctx.root.clone(),
        in_repo: true,
        file_path: None,
        sha256: sha256_hex(&pin.patch),
        brief: brief::diff_brief(&String::from_utf8_lossy(&pin.patch)),
        artefact: Some(Artefact {
            name: "diff.patch",
            bytes: pin.patch,
        }),
        files: pin.files,
        skipped: pin.skipped,
        hunks: pin.hunks,
        base: req.base.clone(),
        base_tree: req.base_tree.clone(),
        measured_lines,
        mode,
        target_type: TargetType::Code,
    })
}

fn pin_file(ctx: &Context, arg: &str, display: String) -> Result<PinnedTarget, TargetError> {
    let (abs, rel) = locate(ctx, arg)?;
    let cap = ctx.max_file_bytes;
    let scanned = scan::scan_file(&abs, cap, true)
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
        base_tree: None,
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
        base_tree: None,
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
/// is `root`: sha256 of the patch (the sha256 of the empty patch when nothing changed).
/// Cheaper than `resolve`: no brief, no per-file hashing.
pub fn diff_sha(root: &Path, base: Option<&str>) -> Result<String, TargetError> {
    let repo = Repository::open(root).map_err(|_| TargetError::NotARepo(root.to_path_buf()))?;
    let patch = diff::patch_bytes(&repo, base)?;
    Ok(sha256_hex(&patch))
}

/// A working-tree snapshot (see [`snapshot_diff`]): the tree object written for it and the
/// TARGET_SHA of the diff from a base tree to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// Oid of the tree holding the working tree (tracked and untracked, non-ignored files).
    pub tree: String,
    /// sha256 of the patch `arev run diff --base-tree <base>` pins now.
    pub sha: String,
}

/// TARGET_SHA of a diff with no change (the sha256 of the empty patch).
pub fn empty_diff_sha() -> String {
    sha256_hex(&[])
}

/// Snapshot the working tree of the repository at `root` into a tree object (the user's
/// index, HEAD and branches untouched), with the TARGET_SHA of the diff from the tree `base`
/// (`None`: from the snapshot itself, i.e. the empty patch).
pub fn snapshot_diff(root: &Path, base: Option<&str>) -> Result<Snapshot, TargetError> {
    let repo = Repository::open(root).map_err(|_| TargetError::NotARepo(root.to_path_buf()))?;
    let (patch, tree) = match base {
        Some(b) => diff::snapshot_patch(&repo, b)?,
        None => (Vec::new(), diff::snapshot_tree(&repo)?),
    };
    Ok(Snapshot {
        tree: tree.to_string(),
        sha: sha256_hex(&patch),
    })
}

/// Re-compute TARGET_SHA for an already pinned target (same rules, same file list).
///
/// A diff that has become empty hashes to the sha256 of the empty patch. A file of the
/// target that can no longer be read is an error; callers record it as drift.
pub fn repin(target: &PinnedTarget) -> Result<String, TargetError> {
    match target.kind {
        TargetKind::File => {
            let path = match &target.file_path {
                Some(p) => p.clone(),
                None => target
                    .root
                    .join(target.files.first().map_or("", |f| f.path.as_str())),
            };
            let bytes = std::fs::read(&path).map_err(|e| {
                let shown = path.display().to_string();
                if e.kind() == std::io::ErrorKind::NotFound {
                    TargetError::NoSuchFile(shown)
                } else {
                    TargetError::Unreadable {
                        path: shown,
                        message: e.to_string(),
                    }
                }
            })?;
            Ok(sha256_hex(&bytes))
        }
        TargetKind::Manifest => manifest::rehash(&target.root, &target.files),
        TargetKind::Diff => {
            let repo = Repository::open(&target.root)
                .map_err(|_| TargetError::NotARepo(target.root.clone()))?;
            let patch = match &target.base_tree {
                Some(tree) => diff::snapshot_patch(&repo, tree)?.0,
                None => diff::patch_bytes(&repo, target.base.as_deref())?,
            };
            Ok(sha256_hex(&patch))
        }
    }
}
