//! A whole working tree's key (docs/architecture.md §5.1): [`worktree_key`] keys it the way
//! `git status` looks at it (HEAD, the index, every tracked file whose stat differs from its
//! index entry, every non-ignored directory and untracked file), and [`ShaCache`] maps such
//! keys to the diff sha they produced, so a Stop hook whose tree did not move skips
//! rendering the diff.

use super::statkey::{StatKey, RACY_MARGIN_NS};
use super::{gitindex, Mode, Snapshot, TargetError};
use git2::Repository;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::HashSet;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// A working tree's key: equal digests (whose newest stat was not racy when stored) mean
/// an equal working tree, hence an equal snapshot and an equal diff against the same base.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorktreeKey {
    /// Hex sha256 over everything keyed.
    pub digest: String,
    /// The latest mtime/ctime among the keyed stats (nanoseconds): a key whose `newest` is
    /// not older than the instant before the diff was computed by [`RACY_MARGIN_NS`] may
    /// describe a tree the diff did not see, and is not stored.
    pub newest_ns: i64,
}

/// Feeds the digest and tracks the newest change.
struct KeyHasher {
    hasher: Sha256,
    newest_ns: i64,
}

impl KeyHasher {
    fn field(&mut self, tag: &[u8], bytes: &[u8]) {
        self.hasher.update(tag);
        self.hasher.update((bytes.len() as u64).to_le_bytes());
        self.hasher.update(bytes);
    }

    fn stat(&mut self, tag: &[u8], path: &[u8], key: Option<&StatKey>) {
        self.field(tag, path);
        match key {
            Some(k) => {
                self.newest_ns = self.newest_ns.max(k.mtime_ns).max(k.ctime_ns);
                for v in [k.size, k.ino, k.dev, u64::from(k.mode)] {
                    self.hasher.update(v.to_le_bytes());
                }
                self.hasher.update(k.mtime_ns.to_le_bytes());
                self.hasher.update(k.ctime_ns.to_le_bytes());
            }
            None => self.hasher.update(b"-"),
        }
    }

    fn finish(self) -> WorktreeKey {
        WorktreeKey {
            digest: hex::encode(self.hasher.finalize()),
            newest_ns: self.newest_ns,
        }
    }
}

/// Whether the working-tree file's key `k` matches the index entry's stat fields (what
/// git compares before it trusts an entry to be unchanged).
fn matches_index(e: &gitindex::Entry, k: &StatKey) -> bool {
    let exec = |mode: u32| mode & 0o100 != 0;
    let split = |ns: i64| (ns.div_euclid(1_000_000_000), ns.rem_euclid(1_000_000_000));
    let (ms, mn) = split(k.mtime_ns);
    let (cs, cn) = split(k.ctime_ns);
    // The index keeps 32-bit seconds, sizes and inodes.
    (ms as u32, mn as u32) == e.mtime
        && (cs as u32, cn as u32) == e.ctime
        && k.size as u32 == e.size
        && k.ino as u32 == e.ino
        && k.mode & 0o170_000 == e.mode & 0o170_000
        && exec(k.mode) == exec(e.mode)
}

/// The index of `repo`: its file's key (taken from the open file, so it describes the bytes
/// read) and its entries, read directly (see target::gitindex) or, for an index that reader
/// does not know, through libgit2.
fn read_index(repo: &Repository) -> Result<(Option<StatKey>, Vec<gitindex::Entry>), TargetError> {
    let path = repo.path().join("index");
    let direct = std::fs::File::open(&path).and_then(|mut f| {
        let key = StatKey::of(&f.metadata()?);
        let mut bytes = Vec::with_capacity(usize::try_from(key.size).unwrap_or(0));
        std::io::Read::read_to_end(&mut f, &mut bytes)?;
        Ok((key, bytes))
    });
    match direct {
        Ok((key, bytes)) => {
            if let Some(entries) = gitindex::parse(&bytes) {
                return Ok((Some(key), entries));
            }
        }
        // No index yet (a fresh repository): nothing is tracked.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((None, Vec::new())),
        Err(_) => {}
    }
    let key = StatKey::lstat(&path).ok().flatten();
    let index = git2::Index::open(&path).map_err(|e| TargetError::Git(e.message().to_owned()))?;
    Ok((key, index.iter().map(gitindex::Entry::of_git2).collect()))
}

/// A directory or an untracked file the last full walk of a working tree saw (root-relative,
/// `""` for the root itself): [`worktree_key_listed`] keys the same paths without walking.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Listed {
    pub path: String,
    pub dir: bool,
}

/// A directory (true) or an untracked file seen by the walk: its root-relative path and key.
type Walked = (Vec<u8>, bool, Option<StatKey>);

/// `fstatat` relative to the root's descriptor (short path walks), links not followed.
fn stat_at(root: &std::fs::File, rel: &[u8]) -> Option<StatKey> {
    let at: &[u8] = if rel.is_empty() { b"." } else { rel };
    nix::sys::stat::fstatat(root, at, nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW)
        .ok()
        .map(|st| StatKey::of_stat(&st))
}

/// The user's ignore and attributes files (`core.excludesFile`, `core.attributesFile`, or
/// their XDG defaults): rules a walk and a snapshot obey that live outside the repository.
fn global_rule_files(repo: &Repository) -> Vec<std::path::PathBuf> {
    let config = repo.config().ok();
    let xdg = crate::xdg::config_home();
    let mut out = Vec::new();
    for (setting, default) in [
        ("core.excludesfile", "ignore"),
        ("core.attributesfile", "attributes"),
    ] {
        let set = config.as_ref().and_then(|c| c.get_path(setting).ok());
        match (set, &xdg) {
            (Some(p), _) => out.push(p),
            (None, Some(x)) => out.push(x.join("git").join(default)),
            (None, None) => {}
        }
    }
    out
}

/// The key of the working tree of `repo` (work tree `root`), and what its walk saw: HEAD,
/// the index file, `info/exclude`, `info/attributes` and the user's ignore and attributes
/// files, every tracked file whose `lstat` differs from its index entry or that the index
/// holds racily (changed within [`RACY_MARGIN_NS`] of the index write), every directory
/// the `.gitignore` rules do not exclude (a file created, removed or renamed in one changes
/// its mtime) and every untracked file in them. Costs what `git status` costs: one `lstat`
/// per tracked file, one `readdir` per directory; no file is read. The listing is None when
/// a walked name is not UTF-8.
pub fn worktree_key(
    repo: &Repository,
    root: &Path,
) -> Result<(WorktreeKey, Option<Vec<Listed>>), TargetError> {
    let (mut h, root_dir, entries) = tracked_key(repo, root)?;
    let tracked: HashSet<&[u8]> = entries.iter().map(|e| e.path.as_slice()).collect();
    let walked = walk(root, &root_dir, &tracked);
    let mut listing = Some(Vec::with_capacity(walked.len()));
    for (rel, is_dir, key) in &walked {
        let tag: &[u8] = if *is_dir { b"dir" } else { b"untracked" };
        h.stat(tag, rel, key.as_ref());
        match (std::str::from_utf8(rel), listing.as_mut()) {
            (Ok(p), Some(l)) => l.push(Listed {
                path: p.to_owned(),
                dir: *is_dir,
            }),
            _ => listing = None,
        }
    }
    Ok((h.finish(), listing))
}

/// [`worktree_key`] without the walk: the directories and untracked files of `listing` (a
/// walk's, in its order) are keyed as they are now. Equal to the walk's key whenever none
/// of them moved — a new entry anywhere changes the mtime of a listed directory.
pub fn worktree_key_listed(
    repo: &Repository,
    root: &Path,
    listing: &[Listed],
) -> Result<WorktreeKey, TargetError> {
    let (mut h, root_dir, _) = tracked_key(repo, root)?;
    let keys: Vec<Option<StatKey>> = listing
        .par_iter()
        .map(|l| stat_at(&root_dir, l.path.as_bytes()))
        .collect();
    for (l, key) in listing.iter().zip(&keys) {
        let tag: &[u8] = if l.dir { b"dir" } else { b"untracked" };
        h.stat(tag, l.path.as_bytes(), key.as_ref());
    }
    Ok(h.finish())
}

/// The tracked part of a working tree's key (HEAD, the rule files, the index and the tracked
/// files that differ from it), the open root directory and the index entries.
fn tracked_key(
    repo: &Repository,
    root: &Path,
) -> Result<(KeyHasher, std::fs::File, Vec<gitindex::Entry>), TargetError> {
    let mut h = KeyHasher {
        hasher: Sha256::new(),
        newest_ns: i64::MIN,
    };
    let head = repo.head().ok().and_then(|r| r.target());
    h.field(
        b"head",
        head.map(|o| o.to_string()).unwrap_or_default().as_bytes(),
    );
    let info = repo.commondir().join("info");
    let mut rules = vec![info.join("exclude"), info.join("attributes")];
    rules.extend(global_rule_files(repo));
    for p in &rules {
        h.stat(
            b"rules",
            p.as_os_str().as_bytes(),
            StatKey::lstat(p).ok().flatten().as_ref(),
        );
    }
    let (index_key, entries) = read_index(repo)?;
    h.stat(b"index", b"", index_key.as_ref());
    let racy_from = index_key.map_or(i64::MAX, |k| k.mtime_ns.saturating_sub(RACY_MARGIN_NS));
    let root_dir = std::fs::File::open(root).map_err(|e| TargetError::Unreadable {
        path: root.display().to_string(),
        message: e.to_string(),
    })?;
    // One `lstat` per tracked file, on every core; keyed in index order.
    let keyed: Vec<Option<Option<StatKey>>> = entries
        .par_iter()
        .map(|e| {
            // Submodules are skipped by every diff: their work trees are not keyed.
            if e.mode & 0o170_000 == 0o160_000 {
                return None;
            }
            let now = stat_at(&root_dir, &e.path);
            let (secs, nanos) = e.mtime;
            let entry_ns = i64::from(secs) * 1_000_000_000 + i64::from(nanos);
            let clean = now.as_ref().is_some_and(|k| matches_index(e, k));
            (!clean || entry_ns >= racy_from).then_some(now)
        })
        .collect();
    for (e, key) in entries.iter().zip(&keyed) {
        if let Some(now) = key {
            h.stat(b"tracked", &e.path, now.as_ref());
        }
    }
    Ok((h, root_dir, entries))
}

/// Every directory the ignore rules leave in, and the untracked files in them, sorted, with
/// their keys. arev's own home and nested repositories are not walked.
fn walk(root: &Path, root_dir: &std::fs::File, tracked: &HashSet<&[u8]>) -> Vec<Walked> {
    let walked: std::sync::Mutex<Vec<Walked>> = std::sync::Mutex::new(Vec::new());
    ignore::WalkBuilder::new(root)
        .hidden(false)
        .ignore(false)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(true)
        .parents(false)
        .require_git(false)
        .follow_links(false)
        .filter_entry(|e| !matches!(e.file_name().to_str(), Some(".git" | ".arev")))
        .build_parallel()
        .run(|| {
            let walked = &walked;
            Box::new(move |entry| {
                let Ok(entry) = entry else {
                    return ignore::WalkState::Continue;
                };
                let Ok(rel) = entry.path().strip_prefix(root) else {
                    return ignore::WalkState::Continue;
                };
                let rel = rel.as_os_str().as_bytes();
                let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
                if is_dir || !tracked.contains(rel) {
                    let key = stat_at(root_dir, rel);
                    walked
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .push((rel.to_vec(), is_dir, key));
                }
                ignore::WalkState::Continue
            })
        });
    let mut walked = walked
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    walked.sort_by(|a, b| a.0.cmp(&b.0));
    walked
}

/// What a working-tree key produced for a diff: the snapshot tree it was computed against
/// and what identifies the diff (its sha, its files' digest, its mode).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Keyed {
    /// sha256 of the diff's identity (its base and rules) and the working tree's key.
    pub key: String,
    pub sha: String,
    pub tree: String,
    pub files_sha256: String,
    pub mode: Mode,
}

impl Keyed {
    /// The snapshot this entry remembers.
    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            tree: self.tree.clone(),
            sha: self.sha.clone(),
            files_sha256: self.files_sha256.clone(),
            mode: self.mode,
        }
    }
}

/// The last few working-tree keys of a diff and what each produced, kept in a small JSON
/// file (e.g. in a Stop-hook session dir).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShaCache {
    /// Most recent last.
    entries: Vec<Keyed>,
    /// What the last full walk listed (see [`worktree_key_listed`]).
    #[serde(default)]
    listing: Option<Vec<Listed>>,
}

impl ShaCache {
    /// Keys kept: enough for an agent flipping between a few states of its work.
    const KEEP: usize = 16;

    /// The cache in `path`; empty when missing or unreadable (a cache never fails a caller).
    pub fn load(path: &Path) -> Self {
        std::fs::read(path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default()
    }

    /// The entry of the diff `identity` (its base and rules) for the working-tree key
    /// `worktree`.
    fn key(identity: &str, worktree: &str) -> String {
        let mut h = Sha256::new();
        h.update(identity.as_bytes());
        h.update([0]);
        h.update(worktree.as_bytes());
        hex::encode(h.finalize())
    }

    /// The last full walk's listing, if any.
    pub fn listing(&self) -> Option<&[Listed]> {
        self.listing.as_deref()
    }

    /// Keep `listing` as the last full walk's (written with the next [`ShaCache::put`]).
    pub fn set_listing(&mut self, listing: Option<Vec<Listed>>) {
        if listing.is_some() {
            self.listing = listing;
        }
    }

    /// What the diff `identity` produced for the working-tree key `worktree`, if known.
    pub fn get(&self, identity: &str, worktree: &str) -> Option<&Keyed> {
        let key = Self::key(identity, worktree);
        self.entries.iter().rev().find(|e| e.key == key)
    }

    /// Remember `snap` for the diff `identity` on the working-tree key `worktree`, and
    /// write the cache to `path` (temp file + rename).
    pub fn put(
        &mut self,
        path: &Path,
        identity: &str,
        worktree: &str,
        snap: &Snapshot,
    ) -> std::io::Result<()> {
        let key = Self::key(identity, worktree);
        self.entries.retain(|e| e.key != key);
        self.entries.push(Keyed {
            key,
            sha: snap.sha.clone(),
            tree: snap.tree.clone(),
            files_sha256: snap.files_sha256.clone(),
            mode: snap.mode,
        });
        let extra = self.entries.len().saturating_sub(Self::KEEP);
        self.entries.drain(..extra);
        self.save(path)
    }

    /// Write the cache to `path` (temp file + rename).
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        let dir = path.parent().unwrap_or_else(|| Path::new("."));
        std::fs::create_dir_all(dir)?;
        let mut tmp = tempfile::Builder::new().prefix(".tmp-").tempfile_in(dir)?;
        // One write: serde_json's writer issues one per token, thousands for a listing.
        std::io::Write::write_all(
            &mut tmp,
            &serde_json::to_vec(self).map_err(std::io::Error::other)?,
        )?;
        tmp.persist(path).map_err(|e| e.error)?;
        Ok(())
    }
}
