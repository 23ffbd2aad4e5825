//! Building the context scope of a pinned target (`ContextScope::build`, from git's index
//! and statuses) and the target's view of it (`PinnedTarget::with_context`, `readable`).

use super::exclude::compile_globs;
use super::scan::is_binary;
use super::scope::{
    carve_rel, named, split, ContextMode, ContextScope, Outside, RawOutside, ScopeFile,
};
use super::{PinnedTarget, TargetError};
use git2::{Repository, Status, StatusOptions};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::io::Read;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

impl ContextScope {
    /// The scope of `target` under `mode`: `Target` (or a target outside a repository) holds
    /// exactly the target's files — today's read scope; `Tree` adds every tracked text file
    /// within `cap` bytes not matched by `exclude` (globs as `[review] exclude` writes them).
    /// In a repository, `outside` is what the working tree holds besides: under `Target`
    /// every path but the target's ([`not_target`]), so a backend that hides `outside`
    /// hides every non-target file too. A path whose name is not UTF-8 or holds a control
    /// character is never in the scope: outside it, in `unnamed` (docs/contracts.md §22).
    pub fn build(
        target: &PinnedTarget,
        mode: ContextMode,
        exclude: &[String],
        cap: u64,
    ) -> Result<Self, TargetError> {
        let set = compile_globs(exclude)?;
        let root = target.root.clone();
        // A deleted file of a diff cannot be read: it is no part of the scope.
        let mut files: BTreeMap<String, String> = target
            .files
            .iter()
            .filter(|f| !f.sha256.is_empty())
            .map(|f| (f.path.clone(), f.sha256.clone()))
            .collect();
        let mut outside = RawOutside::new();
        let repo = (target.in_repo && mode == ContextMode::Tree)
            .then(|| Repository::open(&root).ok())
            .flatten();
        if let Some(repo) = repo {
            let git = |e: git2::Error| TargetError::Git(e.message().to_owned());
            // The target's blob ids too: context.txt names every readable file one way.
            for (path, blob) in files.iter_mut() {
                if let Some(id) = blob_of(&root, path) {
                    *blob = id;
                }
            }
            let statuses = working_statuses(&repo).map_err(git)?;
            let index = repo.index().map_err(git)?;
            for e in index.iter() {
                let Some(path) = named(&e.path).map(str::to_owned) else {
                    // No rule can name it and context.txt cannot list it: left out, and
                    // hidden while it is in the working tree.
                    let raw = OsStr::from_bytes(&e.path);
                    if !has_git_component(&e.path)
                        && std::fs::symlink_metadata(root.join(raw)).is_ok()
                    {
                        let (path, why) = if e.mode == 0o160_000 {
                            ([e.path.as_slice(), b"/"].concat(), Outside::Submodule)
                        } else {
                            (e.path.clone(), Outside::LeftOut)
                        };
                        outside.insert(path, why);
                    }
                    continue;
                };
                if files.contains_key(&path) || target.is_allowed(&path) {
                    continue;
                }
                if e.mode == 0o160_000 {
                    outside.insert(format!("{path}/").into_bytes(), Outside::Submodule);
                    continue;
                }
                let status = statuses.get(&path).copied().unwrap_or(Status::CURRENT);
                if status.contains(Status::WT_DELETED) || has_git_component(path.as_bytes()) {
                    continue;
                }
                let keep = e.mode & 0o170_000 == 0o100_000
                    && !set.is_match(&path)
                    && readable_text(&root.join(&path), cap);
                if !keep {
                    outside.insert(path.into_bytes(), Outside::LeftOut);
                    continue;
                }
                let blob = if status.intersects(Status::WT_MODIFIED | Status::WT_TYPECHANGE) {
                    blob_of(&root, &path).unwrap_or_default()
                } else {
                    e.id.to_string()
                };
                files.insert(path, blob);
            }
            for (path, why) in statuses_outside(&repo).map_err(git)? {
                outside.entry(path).or_insert(why);
            }
            // A collapsed directory that holds a target file is listed entry by entry.
            let keep: Vec<PathBuf> = target.files.iter().map(|f| root.join(&f.path)).collect();
            outside = carve_rel(&root, outside, &keep);
        } else if target.in_repo {
            outside = not_target(&root, target)?;
        }
        let (outside, unnamed) = split(outside);
        let files: Vec<ScopeFile> = files
            .into_iter()
            .map(|(path, blob)| ScopeFile { path, blob })
            .collect();
        let sha = digest(&files);
        Ok(Self {
            root,
            mode,
            files,
            sha,
            outside,
            unnamed,
        })
    }
}

impl PinnedTarget {
    /// This target with its context scope built ([`ContextScope::build`]).
    pub fn with_context(
        mut self,
        mode: ContextMode,
        exclude: &[String],
        cap: u64,
    ) -> Result<Self, TargetError> {
        self.context = Some(std::sync::Arc::new(ContextScope::build(
            &self, mode, exclude, cap,
        )?));
        Ok(self)
    }

    /// Whether agents may read the repo-relative `rel`: a target file, or (`context =
    /// "tree"`) a file of the context scope.
    pub fn readable(&self, rel: &str) -> bool {
        self.is_allowed(rel)
            || self
                .context
                .as_ref()
                .is_some_and(|c| c.mode() == ContextMode::Tree && c.contains(rel))
    }
}

/// `context = "target"`: everything in the working tree but the target's files (`.git`
/// excepted, always refused) — the root's entries, each directory on the way to a target
/// file replaced by its other entries ([`carve_rel`]), so the list grows with the target's
/// directories, never with the repository.
fn not_target(root: &Path, target: &PinnedTarget) -> Result<RawOutside, TargetError> {
    let io = |e: std::io::Error| TargetError::Unreadable {
        path: root.display().to_string(),
        message: e.to_string(),
    };
    let mut outside = RawOutside::new();
    for e in std::fs::read_dir(root).map_err(io)? {
        let e = e.map_err(io)?;
        let mut name = e.file_name().into_vec();
        if name == b".git" {
            continue;
        }
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            name.push(b'/');
        }
        outside.insert(name, Outside::NotTarget);
    }
    let keep: Vec<PathBuf> = target.files.iter().map(|f| root.join(&f.path)).collect();
    Ok(carve_rel(root, outside, &keep))
}

/// sha256 over `"<blob>  <path>\n"`.
fn digest(files: &[ScopeFile]) -> String {
    let mut h = Sha256::new();
    for f in files {
        h.update(format!("{}  {}\n", f.blob, f.path));
    }
    hex::encode(h.finalize())
}

/// Whether some component of `rel` is `.git`.
fn has_git_component(rel: &[u8]) -> bool {
    rel.split(|b| *b == b'/').any(|c| c == b".git")
}

/// Git's blob id of the regular file at `root/rel` (None for a link or unreadable file).
fn blob_of(root: &Path, rel: &str) -> Option<String> {
    let p = root.join(rel);
    let meta = std::fs::symlink_metadata(&p).ok()?;
    if !meta.file_type().is_file() {
        return None;
    }
    git2::Oid::hash_file(git2::ObjectType::Blob, &p)
        .ok()
        .map(|o| o.to_string())
}

/// A regular file (never followed through a link), at most `cap` bytes, with no NUL in its
/// first 8 KiB (git's text heuristic).
fn readable_text(p: &Path, cap: u64) -> bool {
    let Ok(meta) = std::fs::symlink_metadata(p) else {
        return false;
    };
    if !meta.file_type().is_file() || meta.len() > cap {
        return false;
    }
    let Ok(f) = std::fs::File::open(p) else {
        return false;
    };
    let mut head = Vec::with_capacity(super::scan::BINARY_SNIFF_BYTES);
    if f.take(super::scan::BINARY_SNIFF_BYTES as u64)
        .read_to_end(&mut head)
        .is_err()
    {
        return false;
    }
    !is_binary(&head)
}

fn status_options(untracked: bool) -> StatusOptions {
    let mut o = StatusOptions::new();
    o.include_untracked(untracked)
        .include_ignored(untracked)
        .recurse_untracked_dirs(false)
        .recurse_ignored_dirs(false)
        .exclude_submodules(true)
        .include_unmodified(false);
    o
}

/// The working-tree status of every tracked file that is not current.
fn working_statuses(repo: &Repository) -> Result<BTreeMap<String, Status>, git2::Error> {
    let st = repo.statuses(Some(&mut status_options(false)))?;
    Ok(st
        .iter()
        .filter_map(|e| Some((e.path()?.to_owned(), e.status())))
        .collect())
}

/// Ignored and untracked paths, by their raw bytes (git collapses a wholly ignored or
/// untracked directory into one entry ending in `/`).
fn statuses_outside(repo: &Repository) -> Result<Vec<(Vec<u8>, Outside)>, git2::Error> {
    let st = repo.statuses(Some(&mut status_options(true)))?;
    Ok(st
        .iter()
        .filter_map(|e| {
            let s = e.status();
            let why = if s.contains(Status::IGNORED) {
                Outside::Ignored
            } else if s.contains(Status::WT_NEW) {
                Outside::Untracked
            } else {
                return None;
            };
            let path = e.path_bytes().to_vec();
            (!has_git_component(&path)).then_some((path, why))
        })
        .collect())
}
