//! The context scope (docs/how-a-review-runs.md "What reviewers may read"): the files an
//! agent may read besides the target — every regular text file git tracks at pin time, in
//! its working-tree content, within the per-file size cap, minus `[review] context_exclude`;
//! never `.git`, ignored or untracked files (unless part of the target), symlinks, submodule
//! contents. Fixed once at resolution: its list is `target/context.txt` in the run dir and
//! its digest `context_sha` in meta.json and the report. It also knows what in the working
//! tree lies outside it ([`ContextScope::outside`]), for the backends whose own permission
//! layer is told to refuse those paths.

use super::exclude::compile_globs;
use super::scan::is_binary;
use super::{PinnedTarget, TargetError};
pub use crate::records::config::ContextMode;
use git2::{Repository, Status, StatusOptions};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Path, PathBuf};

/// One file of the scope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScopeFile {
    /// Repo-relative, `/`-separated.
    pub path: String,
    /// Git blob id (hex SHA-1) of its working-tree content at pin time; for a file outside
    /// a repository, the sha256 the target pinned.
    pub blob: String,
}

/// Why a path present in the working tree is outside the scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Outside {
    /// Ignored by git (a whole directory when git collapses it).
    Ignored,
    /// Not tracked (and not part of the target).
    Untracked,
    /// A submodule's directory.
    Submodule,
    /// Tracked, but a symbolic link, binary, over the size cap or `context_exclude`d.
    LeftOut,
}

/// What agents may read besides the target's own files (which it always holds).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextScope {
    root: PathBuf,
    mode: ContextMode,
    /// Sorted by path.
    files: Vec<ScopeFile>,
    sha: String,
    /// Paths in the working tree (repo-relative; a directory ends in `/`) that are not in the
    /// scope, `.git` excepted (always outside), sorted.
    outside: BTreeMap<String, Outside>,
}

impl ContextScope {
    /// The scope of `target` under `mode`: `Target` (or a target outside a repository) holds
    /// exactly the target's files — today's read scope; `Tree` adds every tracked text file
    /// within `cap` bytes not matched by `exclude` (globs as `[review] exclude` writes them).
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
        let mut outside = BTreeMap::new();
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
                let Ok(path) = String::from_utf8(e.path.clone()) else {
                    continue;
                };
                if files.contains_key(&path)
                    || target.is_allowed(&path)
                    || super::scan::has_control_chars(&path)
                {
                    continue;
                }
                if e.mode == 0o160_000 {
                    outside.insert(format!("{path}/"), Outside::Submodule);
                    continue;
                }
                let status = statuses.get(&path).copied().unwrap_or(Status::CURRENT);
                if status.contains(Status::WT_DELETED) || has_git_component(&path) {
                    continue;
                }
                let keep = e.mode & 0o170_000 == 0o100_000
                    && !set.is_match(&path)
                    && readable_text(&root.join(&path), cap);
                if !keep {
                    outside.insert(path, Outside::LeftOut);
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
        }
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
        })
    }

    /// The repository root the paths are relative to.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// How it was chosen (`[review] context`).
    pub fn mode(&self) -> ContextMode {
        self.mode
    }

    /// Whether the repo-relative `rel` (`/`-separated) is in the scope.
    pub fn contains(&self, rel: &str) -> bool {
        self.index(rel).is_some()
    }

    fn index(&self, rel: &str) -> Option<usize> {
        self.files
            .binary_search_by(|f| f.path.as_str().cmp(rel))
            .ok()
    }

    /// The scope's files, sorted.
    pub fn files(&self) -> impl Iterator<Item = &str> {
        self.files.iter().map(|f| f.path.as_str())
    }

    /// The scope's files with their blob ids.
    pub fn entries(&self) -> &[ScopeFile] {
        &self.files
    }

    /// The blob id `rel` had at pin time.
    pub fn blob(&self, rel: &str) -> Option<&str> {
        self.index(rel).map(|i| self.files[i].blob.as_str())
    }

    pub fn len(&self) -> usize {
        self.files.len()
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// `context_sha`: sha256 over `"<blob>  <path>\n"` of every file, in order.
    pub fn sha(&self) -> &str {
        &self.sha
    }

    /// `target/context.txt`: one path per line.
    pub fn listing(&self) -> String {
        let mut out = String::new();
        for f in &self.files {
            out.push_str(&f.path);
            out.push('\n');
        }
        out
    }

    /// What in the working tree is outside the scope (`.git` excepted), repo-relative,
    /// directories ending in `/`.
    pub fn outside(&self) -> impl Iterator<Item = (&str, Outside)> {
        self.outside.iter().map(|(p, w)| (p.as_str(), *w))
    }

    /// The absolute paths a backend's permission layer must refuse so that nothing outside
    /// the scope is readable, except what lies on the way to `keep` (the run's artefacts,
    /// which may sit in an ignored `.arev/`): a refused directory holding a kept path is
    /// replaced by its other entries, recursively. `.git` (the root's) comes first.
    pub fn hidden(&self, keep: &[PathBuf]) -> Vec<PathBuf> {
        let mut out = vec![self.root.join(".git")];
        let carved = carve_rel(&self.root, self.outside.clone(), keep);
        out.extend(
            carved
                .keys()
                .map(|p| self.root.join(p.trim_end_matches('/'))),
        );
        out
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

/// sha256 over `"<blob>  <path>\n"`.
fn digest(files: &[ScopeFile]) -> String {
    let mut h = Sha256::new();
    for f in files {
        h.update(format!("{}  {}\n", f.blob, f.path));
    }
    hex::encode(h.finalize())
}

/// Whether some component of `rel` is `.git`.
fn has_git_component(rel: &str) -> bool {
    rel.split('/').any(|c| c == ".git")
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

/// Ignored and untracked paths (git collapses a wholly ignored or untracked directory into
/// one entry ending in `/`).
fn statuses_outside(repo: &Repository) -> Result<Vec<(String, Outside)>, git2::Error> {
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
            let path = e.path()?.to_owned();
            (!has_git_component(&path)).then_some((path, why))
        })
        .collect())
}

/// `outside` with every directory entry that holds one of `keep` (absolute paths) replaced
/// by its other entries (read without following links), recursively; a kept path itself is
/// dropped.
fn carve_rel(
    root: &Path,
    mut outside: BTreeMap<String, Outside>,
    keep: &[PathBuf],
) -> BTreeMap<String, Outside> {
    let keep_rel: BTreeSet<String> = keep
        .iter()
        .filter_map(|k| k.strip_prefix(root).ok())
        .filter_map(|k| k.to_str().map(str::to_owned))
        .collect();
    if keep_rel.is_empty() {
        return outside;
    }
    let holds = |dir: &str| keep_rel.iter().any(|k| k.starts_with(dir));
    let mut queue: Vec<String> = outside
        .keys()
        .filter(|p| (p.ends_with('/') && holds(p)) || keep_rel.contains(p.as_str()))
        .cloned()
        .collect();
    while let Some(p) = queue.pop() {
        let Some(why) = outside.remove(&p) else {
            continue;
        };
        if !p.ends_with('/') {
            continue;
        }
        let Ok(rd) = std::fs::read_dir(root.join(&p)) else {
            continue;
        };
        for e in rd.flatten() {
            let Some(name) = e.file_name().to_str().map(str::to_owned) else {
                continue;
            };
            let dir = e.file_type().is_ok_and(|t| t.is_dir());
            let child = if dir {
                format!("{p}{name}/")
            } else {
                format!("{p}{name}")
            };
            if keep_rel.contains(child.trim_end_matches('/')) {
                continue;
            }
            let carve = dir && holds(&child);
            outside.insert(child.clone(), why);
            if carve {
                queue.push(child);
            }
        }
    }
    outside
}

/// The bytes of the regular file at `p` (None for a link, a directory or an unreadable
/// file): context files are hashed without following a link swapped in since the pin.
pub fn read_regular(p: &Path) -> Option<Vec<u8>> {
    let meta = std::fs::symlink_metadata(p).ok()?;
    meta.file_type()
        .is_file()
        .then(|| std::fs::read(p).ok())
        .flatten()
}
