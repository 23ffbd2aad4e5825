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
use std::ffi::OsStr;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

/// Paths outside the scope by their raw bytes (repo-relative, a directory ending in `/`):
/// what [`carve_rel`] carves, whatever the names.
pub(super) type RawOutside = BTreeMap<Vec<u8>, Outside>;

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
    /// scope, `.git` excepted (always outside), sorted; only names that are UTF-8 without
    /// a control character.
    pub(super) outside: BTreeMap<String, Outside>,
    /// The other paths outside the scope — a name that is not UTF-8 or holds a control
    /// character (`.env\xff`, `a\nb`) —, by their raw bytes: no permission rule can name
    /// them, so a backend that refuses only through rules runs in the scope view when there
    /// is one (docs/contracts.md §22).
    pub(super) unnamed: RawOutside,
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

    /// What else is outside the scope: the paths whose names are not UTF-8 or hold a control
    /// character, by their raw bytes (repo-relative, directories ending in `/`).
    pub fn unnamed(&self) -> impl Iterator<Item = (&[u8], Outside)> {
        self.unnamed.iter().map(|(p, w)| (p.as_slice(), *w))
    }

    /// The absolute paths a backend's permission layer must refuse so that nothing outside
    /// the scope is readable, except what lies on the way to `keep` (the run's artefacts,
    /// which may sit in an ignored `.arev/`): a refused directory holding a kept path is
    /// replaced by its other entries, recursively. `.git` (the root's) comes first; a name
    /// that is not UTF-8 is returned as its bytes.
    pub fn hidden(&self, keep: &[PathBuf]) -> Vec<PathBuf> {
        let mut out = vec![self.root.join(".git")];
        let carved = carve_rel(&self.root, join(&self.outside, &self.unnamed), keep);
        out.extend(
            carved
                .keys()
                .map(|p| self.root.join(OsStr::from_bytes(trim_slash(p)))),
        );
        out
    }
}

/// Whether a rule can name the repo-relative `rel`: UTF-8 without a control character.
pub(super) fn named(rel: &[u8]) -> Option<&str> {
    std::str::from_utf8(rel)
        .ok()
        .filter(|s| !has_control_chars(s))
}

/// `outside` and `unnamed` as one map of raw paths.
pub(super) fn join(outside: &BTreeMap<String, Outside>, unnamed: &RawOutside) -> RawOutside {
    let mut all = unnamed.clone();
    all.extend(outside.iter().map(|(p, w)| (p.as_bytes().to_vec(), *w)));
    all
}

/// `all` split into the paths a rule can name ([`named`]) and the others.
pub(super) fn split(all: RawOutside) -> (BTreeMap<String, Outside>, RawOutside) {
    let (mut outside, mut unnamed) = (BTreeMap::new(), BTreeMap::new());
    for (p, w) in all {
        match named(&p) {
            Some(s) => {
                outside.insert(s.to_owned(), w);
            }
            None => {
                unnamed.insert(p, w);
            }
        }
    }
    (outside, unnamed)
}

fn trim_slash(p: &[u8]) -> &[u8] {
    p.strip_suffix(b"/").unwrap_or(p)
}

/// `outside` with every directory entry that holds one of `keep` (absolute paths) replaced
/// by its other entries (read without following links, whatever their names), recursively;
/// a kept path itself is dropped.
pub(super) fn carve_rel(root: &Path, mut outside: RawOutside, keep: &[PathBuf]) -> RawOutside {
    let keep_rel: BTreeSet<Vec<u8>> = keep
        .iter()
        .filter_map(|k| k.strip_prefix(root).ok())
        .map(|k| k.as_os_str().as_bytes().to_vec())
        .collect();
    if keep_rel.is_empty() {
        return outside;
    }
    let holds = |dir: &[u8]| keep_rel.iter().any(|k| k.starts_with(dir));
    let mut queue: Vec<Vec<u8>> = outside
        .keys()
        .filter(|p| (p.ends_with(b"/") && holds(p)) || keep_rel.contains(p.as_slice()))
        .cloned()
        .collect();
    while let Some(p) = queue.pop() {
        let Some(why) = outside.remove(&p) else {
            continue;
        };
        if !p.ends_with(b"/") {
            continue;
        }
        let Ok(rd) = std::fs::read_dir(root.join(OsStr::from_bytes(&p))) else {
            continue;
        };
        for e in rd.flatten() {
            let dir = e.file_type().is_ok_and(|t| t.is_dir());
            let mut child = p.clone();
            child.extend(e.file_name().into_vec());
            if keep_rel.contains(child.as_slice()) {
                continue;
            }
            if dir {
                child.push(b'/');
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

/// Whether a path holds a character that a one-path-per-line listing (manifest.txt, the
/// prompts' file lists) cannot carry: a newline, carriage return or any other control
/// character.
pub(crate) fn has_control_chars(path: &str) -> bool {
    path.chars().any(char::is_control)
}
