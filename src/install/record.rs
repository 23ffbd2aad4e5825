//! The install record (`.claude/arev-install.json`) and what it may remove. A repository can
//! commit that file, so it is read under a size cap and nothing it names is trusted: arev
//! removes a file only when it is inside `.claude/` (after resolving symbolic links), a
//! regular file, and still holds what arev wrote (its sha256 as recorded at install);
//! anything else is left alone and reported (docs/trust.md).

use super::error::InstallError;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

pub(super) const MANIFEST: &str = "arev-install.json";
/// An install record arev writes is well under 4 KiB.
const MAX_RECORD_BYTES: u64 = 64 << 10;
/// The largest file arev compares with what it wrote (its commands are a few KiB).
const MAX_OWNED_BYTES: u64 = 1 << 20;

/// What one install added, so that uninstall removes exactly that.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InstallRecord {
    /// Files written, relative to the `.claude` dir.
    pub files: Vec<String>,
    /// Directories created, relative to the `.claude` dir (deepest last).
    pub dirs: Vec<String>,
    /// `settings.json` did not exist before.
    pub created_settings: bool,
    /// The `hooks` key did not exist before.
    pub created_hooks_key: bool,
    /// Hook events whose arrays did not exist before.
    pub created_events: Vec<String>,
    /// The program the hooks and the command call.
    pub program: String,
    /// The sha256 (hex) of each file of `files` as arev wrote it: a file that no longer
    /// holds it is not removed. Absent in records of arev ≤ 0.1.0.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub sha256: BTreeMap<String, String>,
}

/// What happened, one line per change, for the user; and what was left alone (for stderr).
#[derive(Debug, Default)]
pub struct Summary {
    pub lines: Vec<String>,
    /// Paths the install record named that arev did not remove, each with why.
    pub left: Vec<String>,
}

impl Summary {
    /// Remove the record's file `rel` when it is arev's ([`owned_file`], `bodies`: what this
    /// arev writes); else say why not.
    pub(super) fn remove_owned(
        &mut self,
        claude_dir: &Path,
        rel: &str,
        rec: &InstallRecord,
        bodies: &[String],
    ) -> Option<PathBuf> {
        let recorded = rec.sha256.get(rel).map(String::as_str);
        match owned_file(claude_dir, rel, recorded, bodies) {
            Owned::Yes(p) => match std::fs::remove_file(&p) {
                Ok(()) => {
                    self.lines.push(format!("removed   {}", p.display()));
                    Some(p)
                }
                Err(e) => {
                    self.left
                        .push(format!("left {}: cannot be removed ({e})", p.display()));
                    None
                }
            },
            Owned::Gone => None,
            Owned::No(why) => {
                self.left.push(format!(
                    "left {}: {why}; the install record names it, arev did not remove it",
                    shown(claude_dir, rel)
                ));
                None
            }
        }
    }
}

/// How a path the record names is shown: joined to `claude_dir` when relative.
pub(super) fn shown(claude_dir: &Path, rel: &str) -> String {
    crate::output::inert_line(&claude_dir.join(rel).display().to_string()).into_owned()
}

/// sha256 of `bytes`, in hex.
pub(super) fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The record in `dir`, if there is one: a regular file under the cap that parses.
pub(super) fn read_record(dir: &Path) -> Result<Option<InstallRecord>, InstallError> {
    let p = dir.join(MANIFEST);
    match std::fs::symlink_metadata(&p) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(InstallError::io(&p)(e)),
        Ok(m) if !m.is_file() => return Err(InstallError::RecordNotAFile(p)),
        Ok(_) => {}
    }
    let bytes = crate::store::read_capped(&p, MAX_RECORD_BYTES, "an install record")
        .map_err(InstallError::RecordUnreadable)?;
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|source| InstallError::RecordJson { path: p, source })
}

/// Whether arev may remove a path the record names.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Owned {
    /// It is arev's: remove this path.
    Yes(PathBuf),
    /// Nothing there (already removed).
    Gone,
    /// Left alone, for this reason.
    No(String),
}

/// `rel` as a path made only of names (no root, no `.`, no `..`), or None.
fn plain_relative(rel: &str) -> Option<&Path> {
    let p = Path::new(rel);
    let plain = !rel.is_empty() && p.components().all(|c| matches!(c, Component::Normal(_)));
    plain.then_some(p)
}

/// Whether `p` (which exists) resolves to a path inside `real_dir` (the resolved `.claude`).
fn resolves_inside(p: &Path, real_dir: &Path) -> Result<bool, std::io::Error> {
    Ok(p.canonicalize()?.starts_with(real_dir))
}

/// Whether the file `rel` the record names is arev's to remove: inside `claude_dir` once
/// resolved, a regular file, holding what arev wrote (`recorded`, its sha256; without one,
/// one of `bodies`, what this arev writes).
pub(super) fn owned_file(
    claude_dir: &Path,
    rel: &str,
    recorded: Option<&str>,
    bodies: &[String],
) -> Owned {
    let Some(rel) = plain_relative(rel) else {
        return Owned::No("not a plain path inside .claude/ (absolute, or with `..`)".into());
    };
    let Ok(real_dir) = claude_dir.canonicalize() else {
        return Owned::Gone;
    };
    let p = claude_dir.join(rel);
    let parent = p.parent().unwrap_or(claude_dir);
    match resolves_inside(parent, &real_dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Owned::Gone,
        Err(e) => return Owned::No(format!("cannot be resolved ({e})")),
        Ok(false) => {
            return Owned::No("resolves outside .claude/ (through a symbolic link)".into())
        }
        Ok(true) => {}
    }
    match std::fs::symlink_metadata(&p) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Owned::Gone,
        Err(e) => return Owned::No(format!("cannot be read ({e})")),
        Ok(m) if !m.is_file() => {
            return Owned::No("not a regular file (a symbolic link or a directory)".into())
        }
        Ok(_) => {}
    }
    let Ok(bytes) = crate::store::read_capped(&p, MAX_OWNED_BYTES, "an installed file") else {
        return Owned::No("changed since arev wrote it".into());
    };
    let hash = sha256_hex(&bytes);
    match recorded {
        Some(h) if h.eq_ignore_ascii_case(&hash) => Owned::Yes(p),
        Some(_) => Owned::No("changed since arev wrote it".into()),
        None if bodies.iter().any(|b| b.as_bytes() == bytes.as_slice()) => Owned::Yes(p),
        None => Owned::No(
            "no checksum recorded, and not a file this arev writes; remove it yourself if it is \
             not yours"
                .into(),
        ),
    }
}

/// Whether the directory `rel` the record names (`.` for `claude_dir` itself) is arev's to
/// remove when empty: a real directory (not a symbolic link) inside `claude_dir` once
/// resolved.
pub(super) fn owned_dir(claude_dir: &Path, rel: &str) -> Owned {
    let p = if rel == "." {
        claude_dir.to_path_buf()
    } else {
        match plain_relative(rel) {
            Some(r) => claude_dir.join(r),
            None => {
                return Owned::No(
                    "not a plain path inside .claude/ (absolute, or with `..`)".into(),
                )
            }
        }
    };
    match std::fs::symlink_metadata(&p) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Owned::Gone,
        Err(e) => return Owned::No(format!("cannot be read ({e})")),
        Ok(m) if !m.is_dir() => return Owned::No("not a directory (a symbolic link?)".into()),
        Ok(_) => {}
    }
    if rel == "." {
        return Owned::Yes(p);
    }
    let Ok(real_dir) = claude_dir.canonicalize() else {
        return Owned::Gone;
    };
    match resolves_inside(&p, &real_dir) {
        Ok(true) => Owned::Yes(p),
        Ok(false) => Owned::No("resolves outside .claude/ (through a symbolic link)".into()),
        Err(e) => Owned::No(format!("cannot be resolved ({e})")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_paths_inside_holding_what_arev_wrote_are_owned() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join(".claude");
        std::fs::create_dir_all(dir.join("commands")).unwrap();
        std::fs::write(d.path().join("outside.txt"), "x").unwrap();
        std::fs::write(dir.join("commands/a.md"), "body").unwrap();
        let h = sha256_hex(b"body");
        let no = |o: Owned| matches!(o, Owned::No(_));
        assert_eq!(
            owned_file(&dir, "commands/a.md", Some(&h), &[]),
            Owned::Yes(dir.join("commands/a.md"))
        );
        assert!(no(owned_file(
            &dir,
            "commands/a.md",
            Some(&sha256_hex(b"other")),
            &[]
        )));
        assert!(no(owned_file(&dir, "commands/a.md", None, &[])));
        assert!(matches!(
            owned_file(&dir, "commands/a.md", None, &["body".into()]),
            Owned::Yes(_)
        ));
        let outside_hash = sha256_hex(b"x");
        for rel in [
            "../outside.txt",
            "/tmp/abs",
            "commands/../../outside.txt",
            "",
            "./x",
        ] {
            assert!(no(owned_file(&dir, rel, Some(&outside_hash), &[])), "{rel}");
        }
        std::os::unix::fs::symlink(d.path(), dir.join("up")).unwrap();
        assert!(no(owned_file(
            &dir,
            "up/outside.txt",
            Some(&outside_hash),
            &[]
        )));
        std::os::unix::fs::symlink(d.path().join("outside.txt"), dir.join("link.md")).unwrap();
        assert!(no(owned_file(&dir, "link.md", Some(&outside_hash), &[])));
        assert_eq!(
            owned_file(&dir, "commands/none.md", Some(&h), &[]),
            Owned::Gone
        );
        assert!(no(owned_dir(&dir, "up")));
        assert!(no(owned_dir(&dir, "..")));
        assert!(no(owned_dir(&dir, "/tmp")));
        assert_eq!(
            owned_dir(&dir, "commands"),
            Owned::Yes(dir.join("commands"))
        );
        assert_eq!(owned_dir(&dir, "."), Owned::Yes(dir.clone()));
    }

    #[test]
    fn a_record_past_its_cap_or_through_a_link_is_refused() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join(MANIFEST), vec![b' '; (64 << 10) + 1]).unwrap();
        let e = read_record(d.path()).unwrap_err().to_string();
        assert!(e.contains("larger than 64 KiB"), "{e}");
        std::fs::remove_file(d.path().join(MANIFEST)).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", d.path().join(MANIFEST)).unwrap();
        let e = read_record(d.path()).unwrap_err().to_string();
        assert!(e.contains("not a regular file"), "{e}");
    }
}
