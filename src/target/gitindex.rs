//! Reading a git index file's entries — path, stat fields, mode — straight from its bytes,
//! for the working-tree key (target::treekey): libgit2's reader verifies the file's SHA-1
//! (collision-detecting, slow), builds a path map and validates and copies every path, which
//! costs more than the `lstat`s the key is for. Kept by hand because the Stop-hook guard
//! (cached verdict ≤ 1.0× `git status` at 20,000 files, docs/performance.md) needs it:
//! measured side by side on 2026-11-26 on an idle 2-core machine, `arev hook stop` took
//! 1.09× `git status` through `git2::Index` and 0.72× through this reader (1.36× and 1.06×
//! under load). Versions 2–4 are read; anything else (a split or sparse index, an unknown
//! version, a short file) is `None`, and the caller falls back to libgit2. Nothing here
//! trusts the file beyond the key: a corrupt index at worst misses the cache.

/// One index entry: what the key compares with the working tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub path: Vec<u8>,
    pub ctime: (u32, u32),
    pub mtime: (u32, u32),
    pub ino: u32,
    pub mode: u32,
    pub size: u32,
}

impl Entry {
    /// The same fields of an entry libgit2 read.
    pub(crate) fn of_git2(e: git2::IndexEntry) -> Self {
        Self {
            path: e.path,
            ctime: (e.ctime.seconds() as u32, e.ctime.nanoseconds()),
            mtime: (e.mtime.seconds() as u32, e.mtime.nanoseconds()),
            ino: e.ino,
            mode: e.mode,
            size: e.file_size,
        }
    }
}

fn be32(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at + 4)?;
    Some(u32::from_be_bytes([s[0], s[1], s[2], s[3]]))
}

fn be16(b: &[u8], at: usize) -> Option<u16> {
    let s = b.get(at..at + 2)?;
    Some(u16::from_be_bytes([s[0], s[1]]))
}

/// The offset-encoded integer of index v4 path compression (git's `decode_varint`).
fn varint(b: &[u8], at: &mut usize) -> Option<usize> {
    let mut c = *b.get(*at)?;
    *at += 1;
    let mut val = usize::from(c & 0x7f);
    while c & 0x80 != 0 {
        c = *b.get(*at)?;
        *at += 1;
        val = val.checked_add(1)?.checked_shl(7)? | usize::from(c & 0x7f);
    }
    Some(val)
}

/// The entries of the index file `bytes` (SHA-1 object ids), in index order; None when it
/// is not an index this reader knows (see the module note).
pub(crate) fn parse(bytes: &[u8]) -> Option<Vec<Entry>> {
    const HASH: usize = 20;
    // ctime, mtime (8 each), dev, ino, mode, uid, gid, size (4 each), the id, the flags.
    const FIXED: usize = 40 + HASH + 2;
    if bytes.get(..4)? != b"DIRC" {
        return None;
    }
    let version = be32(bytes, 4)?;
    if !(2..=4).contains(&version) {
        return None;
    }
    let count = be32(bytes, 8)? as usize;
    // The trailing checksum is not part of the entries or extensions.
    let end = bytes.len().checked_sub(HASH)?;
    let body = bytes.get(..end)?;
    let mut entries = Vec::with_capacity(count.min(body.len() / FIXED));
    let mut at = 12;
    let mut prev: Vec<u8> = Vec::new();
    for _ in 0..count {
        let start = at;
        let flags = be16(body, at + 40 + HASH)?;
        at += FIXED;
        if flags & 0x4000 != 0 {
            // Extended flags (v3+): skip-worktree / intent-to-add.
            if version < 3 {
                return None;
            }
            at += 2;
        }
        let path = if version == 4 {
            let strip = varint(body, &mut at)?;
            let nul = body.get(at..)?.iter().position(|&c| c == 0)?;
            let keep = prev.len().checked_sub(strip)?;
            let mut p = Vec::with_capacity(keep + nul);
            p.extend_from_slice(&prev[..keep]);
            p.extend_from_slice(&body[at..at + nul]);
            at += nul + 1;
            p
        } else {
            let nul = body.get(at..)?.iter().position(|&c| c == 0)?;
            let p = body[at..at + nul].to_vec();
            // The entry is NUL-padded to a multiple of 8 bytes (1 to 8 NULs).
            at = start + (at - start + nul + 8) / 8 * 8;
            p
        };
        let mode = be32(body, start + 24)?;
        // A sparse index's directory entry: the working tree below it is not listed.
        if mode & 0o170_000 == 0o040_000 {
            return None;
        }
        if version == 4 {
            prev.clone_from(&path);
        }
        entries.push(Entry {
            ctime: (be32(body, start)?, be32(body, start + 4)?),
            mtime: (be32(body, start + 8)?, be32(body, start + 12)?),
            ino: be32(body, start + 20)?,
            mode,
            size: be32(body, start + 36)?,
            path,
        });
    }
    // Extensions: a split index ("link") keeps entries in another file; a sparse index
    // ("sdir") lists directories.
    while at + 8 <= body.len() {
        let sig = &body[at..at + 4];
        if sig == b"link" || sig == b"sdir" {
            return None;
        }
        at = at.checked_add(8 + be32(body, at + 4)? as usize)?;
    }
    (at == body.len()).then_some(entries)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::tests::git;

    /// What libgit2 reads from the same index.
    fn libgit2(dir: &std::path::Path) -> Vec<Entry> {
        let repo = git2::Repository::open(dir).unwrap();
        let index = repo.index().unwrap();
        index.iter().map(Entry::of_git2).collect()
    }

    #[test]
    fn every_index_version_reads_as_libgit2_reads_it() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        git(root, &["init", "-q"]);
        for (p, text) in [
            ("a.rs", "a\n"),
            ("dir/b.rs", "bb\n"),
            ("dir/sub/c.rs", "ccc\n"),
            ("dir/sub/cd.rs", "d\n"),
            ("é x.txt", "e\n"),
            ("seven77", ""),
        ] {
            let f = root.join(p);
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(f, text).unwrap();
        }
        git(root, &["add", "-A"]);
        // An intent-to-add entry carries extended flags.
        std::fs::write(root.join("ita.rs"), "i\n").unwrap();
        git(root, &["add", "-N", "ita.rs"]);
        for v in ["2", "3", "4"] {
            git(root, &["update-index", "--index-version", v]);
            let bytes = std::fs::read(root.join(".git/index")).unwrap();
            let ours = parse(&bytes).unwrap_or_else(|| panic!("version {v}"));
            assert_eq!(ours, libgit2(root), "version {v}");
            assert_eq!(ours.len(), 7);
        }
        // Not an index, or cut short: None.
        assert_eq!(parse(b"DIRC\0\0\0\x02"), None);
        let bytes = std::fs::read(root.join(".git/index")).unwrap();
        assert_eq!(parse(&bytes[..bytes.len() / 2]), None);
        // A split index keeps its entries elsewhere.
        git(root, &["update-index", "--index-version", "2"]);
        git(root, &["update-index", "--split-index"]);
        assert!(std::fs::read_dir(root.join(".git")).unwrap().any(|e| e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .starts_with("sharedindex.")));
        let bytes = std::fs::read(root.join(".git/index")).unwrap();
        assert_eq!(parse(&bytes), None);
    }
}
