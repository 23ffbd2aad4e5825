//! Stat pre-keys (docs/architecture.md §5.1): what `lstat` says about a file — size, mtime,
//! ctime, inode, mode — as a cheap stand-in for its content, so that the end-of-run drift
//! check and the Stop hook's diff cache re-read only what moved. A key taken within
//! [`RACY_MARGIN_NS`] of a file's last change proves nothing (a second write in the same
//! timestamp tick leaves every field equal) and is never trusted.

use serde::{Deserialize, Serialize};
use std::fs::Metadata;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// A key is trusted only for a file last changed at least this long before the key was
/// taken: covers file systems with coarse timestamps (1 s on ext3/HFS+, 2 s on FAT) and the
/// kernel's coarse clock lagging behind the one arev reads.
pub const RACY_MARGIN_NS: i64 = 2_000_000_000;

/// What `lstat` says about one path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct StatKey {
    pub size: u64,
    /// Last modification, nanoseconds since the epoch.
    pub mtime_ns: i64,
    /// Last status change (a rename over the file, a chmod, a write), nanoseconds.
    pub ctime_ns: i64,
    pub ino: u64,
    pub dev: u64,
    /// File type and permission bits (`st_mode`).
    pub mode: u32,
}

impl StatKey {
    /// The key of already fetched metadata (from `lstat`, or `fstat` of an open file).
    pub fn of(m: &Metadata) -> Self {
        Self {
            size: m.len(),
            mtime_ns: m.mtime().saturating_mul(1_000_000_000) + m.mtime_nsec(),
            ctime_ns: m.ctime().saturating_mul(1_000_000_000) + m.ctime_nsec(),
            ino: m.ino(),
            dev: m.dev(),
            mode: m.mode(),
        }
    }

    /// The key of a raw `stat` (from `fstatat`).
    pub fn of_stat(st: &nix::sys::stat::FileStat) -> Self {
        Self {
            size: st.st_size as u64,
            mtime_ns: st.st_mtime.saturating_mul(1_000_000_000) + st.st_mtime_nsec,
            ctime_ns: st.st_ctime.saturating_mul(1_000_000_000) + st.st_ctime_nsec,
            ino: st.st_ino,
            dev: st.st_dev,
            mode: st.st_mode,
        }
    }

    /// `lstat` of `path` (links are not followed): None when nothing is there; an error
    /// other than "not found" is returned.
    pub fn lstat(path: &Path) -> std::io::Result<Option<Self>> {
        match std::fs::symlink_metadata(path) {
            Ok(m) => Ok(Some(Self::of(&m))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Whether the file changed so close to `taken_ns` (when the key was taken) that an
    /// equal key later does not prove equal content.
    pub fn is_racy(&self, taken_ns: i64) -> bool {
        self.mtime_ns.max(self.ctime_ns) >= taken_ns.saturating_sub(RACY_MARGIN_NS)
    }

    /// Whether `now` (a fresh `lstat` of the same path) proves the content unchanged since
    /// this key was taken at `taken_ns`.
    pub fn still(&self, now: Option<&Self>, taken_ns: i64) -> bool {
        now == Some(self) && !self.is_racy(taken_ns)
    }
}

/// Now, in nanoseconds since the epoch (the `taken_ns` of keys about to be taken).
pub fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_moves_with_the_content_and_is_not_trusted_while_racy() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.txt");
        assert_eq!(StatKey::lstat(&p).unwrap(), None);
        std::fs::write(&p, "one\n").unwrap();
        let taken = now_ns();
        let k = StatKey::lstat(&p).unwrap().unwrap();
        assert_eq!(k.size, 4);
        // Just written: an equal key proves nothing yet.
        assert!(k.is_racy(taken));
        assert!(!k.still(Some(&k), taken));
        // Long after the last change, an equal key is trusted; a different one is not.
        let later = taken + 10 * RACY_MARGIN_NS;
        assert!(k.still(Some(&k), later));
        std::fs::write(&p, "two!!\n").unwrap();
        let moved = StatKey::lstat(&p).unwrap().unwrap();
        assert_ne!(moved, k);
        assert!(!k.still(Some(&moved), later));
        assert!(!k.still(None, later), "gone is a change");
    }

    #[test]
    fn links_are_keyed_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("t"), "x").unwrap();
        std::os::unix::fs::symlink("t", dir.path().join("l")).unwrap();
        let l = StatKey::lstat(&dir.path().join("l")).unwrap().unwrap();
        let t = StatKey::lstat(&dir.path().join("t")).unwrap().unwrap();
        assert_ne!(l.ino, t.ino);
        assert_eq!(l.mode & 0o170_000, 0o120_000, "a symlink's own mode");
    }
}
