//! The context scope (docs/how-a-review-runs.md "What reviewers may read"): the files an
//! agent may read besides the target — every regular text file git tracks at pin time, in
//! its working-tree content, within the per-file size cap, minus `[review] context_exclude`;
//! never `.git`, ignored or untracked files (unless part of the target), symlinks, submodule
//! contents. Fixed once at resolution: its list is `target/context.txt` in the run dir and
//! its digest `context_sha` in meta.json and the report. It also knows what in the working
//! tree lies outside it ([`ContextScope::outside`]), for the backends whose own permission
//! layer is told to refuse those paths. How it is built from a pinned target is
//! `scope_build.rs` (this file names neither the target nor its errors: no file cycle).

pub use crate::records::config::ContextMode;
use std::collections::{BTreeMap, BTreeSet};
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
    /// Not part of the target under `context = "target"` (a whole directory when it holds
    /// no target file), whether tracked or not.
    NotTarget,
}

/// What agents may read besides the target's own files (which it always holds).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextScope {
    pub(super) root: PathBuf,
    pub(super) mode: ContextMode,
    /// Sorted by path.
    pub(super) files: Vec<ScopeFile>,
    pub(super) sha: String,
    /// Paths in the working tree (repo-relative; a directory ends in `/`) that are not in the
    /// scope, `.git` excepted (always outside), sorted.
    pub(super) outside: BTreeMap<String, Outside>,
}

impl ContextScope {
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

/// `outside` with every directory entry that holds one of `keep` (absolute paths) replaced
/// by its other entries (read without following links), recursively; a kept path itself is
/// dropped.
pub(super) fn carve_rel(
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
