//! `.arev/suppressions.toml` (docs/architecture.md §20): read, checked and reduced to the
//! entries in force today; and the entry `arev suppress` appends.
//!
//! ```toml
//! # src/db.rs:42 error-handling — unwrap on a value checked above
//! [[suppress]]
//! fingerprint = "3f2a9c…"        # 32 hex digits, from report.json / SARIF
//! reason = "checked by validate() two lines above"
//! expires = "2026-12-31"         # optional: the last day it applies
//! ```
//!
//! An entry without a reason, a malformed fingerprint or date, or an unknown key is a usage
//! error naming the file and the entry (exit 2). An expired entry no longer applies and
//! yields a warning. The file is a *repository input* (docs/architecture.md §15.1): a review
//! takes it from `RepoInputs` ([`load_suppressions`]), so that `--repo-config` decides where
//! it comes from (the working tree, the merge-base with `base`, nowhere with `ignore`); only
//! `arev suppress`, which edits the working tree's file, reads it from disk
//! ([`read_suppressions_file`]).

use super::error::SuppressionsError;
use crate::config::RepoSource;
use crate::errors::ExpectedError;
use crate::findings::suppress::{ExternalEntry, InSource, SuppressionSet};
use chrono::NaiveDate;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

pub use super::repo_inputs::SUPPRESSIONS_FILE;
use super::RepoInputs;

/// The path of the suppressions file of the repository at `root`.
pub fn suppressions_path(root: &Path) -> PathBuf {
    root.join(SUPPRESSIONS_FILE)
}

/// The bytes of the working tree's suppressions file, None when there is none (for `arev
/// suppress`, which appends to it; a review reads it through [`load_suppressions`]). A link
/// is refused: a repository input is never followed through one.
pub fn read_suppressions_file(
    root: &Path,
) -> Result<Option<(PathBuf, Vec<u8>)>, SuppressionsError> {
    let path = suppressions_path(root);
    let io = |source| SuppressionsError::Io {
        path: path.clone(),
        source,
    };
    match std::fs::symlink_metadata(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(e)),
        Ok(m) if m.file_type().is_symlink() => return Err(SuppressionsError::Symlink(path)),
        Ok(_) => {}
    }
    let bytes = std::fs::read(&path).map_err(io)?;
    Ok(Some((path, bytes)))
}

/// The suppressions of the repository inputs in force on `today` (none when they hold no
/// suppressions file).
pub fn load_suppressions(
    inputs: &RepoInputs,
    today: NaiveDate,
) -> Result<SuppressionSet, ExpectedError> {
    match inputs.suppressions() {
        None => Ok(SuppressionSet::default()),
        Some((origin, text)) => {
            let shown = match inputs.commit {
                Some(_) => origin.display().to_string(),
                None => SUPPRESSIONS_FILE.to_string(),
            };
            Ok(parse_suppressions(&shown, text.as_bytes(), today)?)
        }
    }
}

/// Lines of `new` the change left alone, mapped to their line in `old` (1-based): every line
/// outside the hunks of a zero-context line diff of the two.
pub fn unchanged_lines(old: &[u8], new: &[u8]) -> std::collections::BTreeMap<u32, u32> {
    let mut map = std::collections::BTreeMap::new();
    let mut opts = git2::DiffOptions::new();
    opts.context_lines(0);
    let Ok(patch) = git2::Patch::from_buffers(old, None, new, None, Some(&mut opts)) else {
        return map;
    };
    let newlines = new.iter().filter(|b| **b == b'\n').count();
    let new_count = (newlines + usize::from(new.last().is_some_and(|b| *b != b'\n'))) as u32;
    // (new_start, new_lines, old_start, old_lines) of each hunk, in order.
    let hunks: Vec<(u32, u32, u32, u32)> = (0..patch.num_hunks())
        .filter_map(|i| patch.hunk(i).ok())
        .map(|(h, _)| (h.new_start(), h.new_lines(), h.old_start(), h.old_lines()))
        .collect();
    let (mut n, mut o) = (1u32, 1u32);
    for (ns, nl, os, ol) in hunks {
        // A pure deletion's new_start is the line before it; an insertion's old_start too.
        let n_first = if nl == 0 { ns + 1 } else { ns };
        let o_first = if ol == 0 { os + 1 } else { os };
        while n < n_first && o < o_first {
            map.insert(n, o);
            n += 1;
            o += 1;
        }
        n = n_first + nl;
        o = o_first + ol;
    }
    while n <= new_count {
        map.insert(n, o);
        n += 1;
        o += 1;
    }
    map
}

/// Which in-source markers a run honours (docs/architecture.md §20): all of them when the
/// tree under review is trusted (`--repo-config worktree`); with `base`, those the
/// merge-base has at the same place — on a line of the reviewed copy (read under `root`)
/// that the change left unchanged, mapped through the diff to a marker line of the
/// merge-base's copy (`base` = the repository and merge-base commit; `paths` = the target's
/// files); none with `ignore`. A file the merge-base does not have, or cannot give as text,
/// vouches for no marker.
pub fn in_source_policy<'a>(
    source: RepoSource,
    base: Option<(&git2::Repository, git2::Oid)>,
    root: &Path,
    paths: impl Iterator<Item = &'a str>,
) -> InSource {
    match (source, base) {
        (RepoSource::Worktree, _) => InSource::All,
        (_, Some((repo, commit))) => {
            let tree = repo.find_commit(commit).and_then(|c| c.tree()).ok();
            let lines = paths
                .filter_map(|p| {
                    let entry = tree.as_ref()?.get_path(Path::new(p)).ok()?;
                    // A link's "text" is its target: never a marker.
                    (entry.filemode() != 0o120000).then_some(())?;
                    let blob = entry.to_object(repo).ok()?.peel_to_blob().ok()?;
                    let old = std::str::from_utf8(blob.content()).ok()?;
                    if !old.contains(crate::findings::suppress::MARKER) {
                        return None;
                    }
                    // The reviewed copy, read as the target read it (a link never).
                    let new_bytes =
                        crate::target::read_repo_file(root, p, crate::target::REPIN_MAX_FILE_BYTES)
                            .ok()??;
                    let new = std::str::from_utf8(&new_bytes).ok()?;
                    let unchanged = unchanged_lines(old.as_bytes(), new.as_bytes());
                    Some((
                        p.to_string(),
                        InSource::positional_markers(old, new, &unchanged),
                    ))
                })
                .filter(|(_, l)| !l.is_empty())
                .collect();
            let short: String = commit.to_string().chars().take(7).collect();
            InSource::Trusted {
                from: format!("the merge-base {short}"),
                key: commit.to_string(),
                lines,
            }
        }
        (_, None) => InSource::Trusted {
            from: "--repo-config ignore (no trusted tree)".into(),
            key: "ignore".into(),
            lines: Default::default(),
        },
    }
}

#[cfg(test)]
mod positional_tests {
    use super::unchanged_lines;
    use std::collections::BTreeMap;

    #[test]
    fn unchanged_lines_map_through_insertions_deletions_and_edits() {
        let old = b"a\nb\nc\nd\ne\n";
        // Insert X after a, delete c, edit e.
        let new = b"a\nX\nb\nd\nE\n";
        assert_eq!(
            unchanged_lines(old, new),
            BTreeMap::from([(1, 1), (3, 2), (4, 4)])
        );
        let same = unchanged_lines(old, old);
        assert_eq!(same.len(), 5);
        assert!(same.iter().all(|(n, o)| n == o));
        // Insertion at the very top.
        assert_eq!(unchanged_lines(b"a\n", b"X\na\n"), BTreeMap::from([(2, 1)]));
    }
}

fn is_fingerprint(s: &str) -> bool {
    s.len() == 32
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// A `YYYY-MM-DD` date (a TOML date or a string).
fn date(v: &toml::Value) -> Option<NaiveDate> {
    let text = match v {
        toml::Value::String(s) => s.clone(),
        toml::Value::Datetime(d) if d.time.is_none() && d.offset.is_none() => d.to_string(),
        _ => return None,
    };
    NaiveDate::parse_from_str(text.trim(), "%Y-%m-%d").ok()
}

/// Parse and check the file (`shown` names it in messages); keep the entries in force on
/// `today` (an entry applies through its `expires` day). Errors are one line.
pub fn parse_suppressions(
    shown: &str,
    bytes: &[u8],
    today: NaiveDate,
) -> Result<SuppressionSet, SuppressionsError> {
    let text =
        std::str::from_utf8(bytes).map_err(|_| SuppressionsError::NotUtf8(shown.to_string()))?;
    let table: toml::Table =
        text.parse()
            .map_err(|e: toml::de::Error| SuppressionsError::Toml {
                shown: shown.to_string(),
                message: one_line(&e.to_string()),
            })?;
    let mut set = SuppressionSet {
        file_sha256: hex::encode(Sha256::digest(bytes)),
        ..SuppressionSet::default()
    };
    for key in table.keys() {
        if key != "suppress" {
            return Err(SuppressionsError::UnknownKey {
                shown: shown.to_string(),
                key: key.clone(),
            });
        }
    }
    let entries = match table.get("suppress") {
        None => return Ok(set),
        Some(toml::Value::Array(a)) => a,
        Some(_) => return Err(SuppressionsError::NotTables(shown.to_string())),
    };
    for (i, entry) in entries.iter().enumerate() {
        let n = i + 1;
        let at = |problem: String| SuppressionsError::Entry {
            shown: shown.to_string(),
            n,
            problem,
        };
        let toml::Value::Table(t) = entry else {
            return Err(at("not a table".into()));
        };
        if let Some(k) = t
            .keys()
            .find(|k| !["fingerprint", "reason", "expires"].contains(&k.as_str()))
        {
            return Err(at(format!(
                "unknown key `{k}` (fingerprint, reason, expires)"
            )));
        }
        let fingerprint = match t.get("fingerprint") {
            Some(toml::Value::String(s)) if is_fingerprint(s.trim()) => s.trim().to_string(),
            Some(v) => {
                return Err(at(format!(
                    "fingerprint {v} is not 32 lower-case hex digits (copy it from report.json)"
                )))
            }
            None => return Err(at("no fingerprint".into())),
        };
        let reason = match t.get("reason") {
            Some(toml::Value::String(s)) if !s.trim().is_empty() => s.trim().to_string(),
            Some(toml::Value::String(_)) | None => {
                return Err(at(format!(
                    "fingerprint {fingerprint} has no reason: a suppression must say why"
                )))
            }
            Some(v) => return Err(at(format!("reason {v} is not a string"))),
        };
        let expires = match t.get("expires") {
            None => None,
            Some(v) => {
                Some(date(v).ok_or_else(|| at(format!("expires {v} is not a date (YYYY-MM-DD)")))?)
            }
        };
        if let Some(day) = expires.filter(|d| *d < today) {
            set.warnings.push(format!(
                "{shown}: the suppression of {fingerprint} (entry {n}) expired on {day}: it no longer applies"
            ));
            continue;
        }
        set.external
            .entry(fingerprint)
            .or_insert_with(|| ExternalEntry {
                reason,
                expires: expires.map(|d| d.to_string()),
                source: format!("{shown} (entry {n})"),
            });
    }
    Ok(set)
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// What `arev suppress` appends for one finding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewEntry {
    pub fingerprint: String,
    pub reason: String,
    pub expires: Option<NaiveDate>,
    /// A comment line naming the finding (`src/a.rs:3 logic — …`); control characters and
    /// line breaks are replaced.
    pub about: String,
}

/// The text appended to the file for `e` (a comment, then one `[[suppress]]` table), after
/// `existing` (a blank line first unless the file is empty).
pub fn render_entry(existing: &str, e: &NewEntry) -> String {
    let mut s = String::new();
    if !existing.is_empty() {
        if !existing.ends_with('\n') {
            s.push('\n');
        }
        s.push('\n');
    }
    let about: String = e
        .about
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(160)
        .collect();
    s.push_str(&format!("# {}\n[[suppress]]\n", about.trim()));
    s.push_str(&format!("fingerprint = \"{}\"\n", e.fingerprint));
    s.push_str(&format!(
        "reason = {}\n",
        toml::Value::String(e.reason.trim().to_string())
    ));
    if let Some(d) = e.expires {
        s.push_str(&format!("expires = \"{d}\"\n"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    const FP: &str = "0123456789abcdef0123456789abcdef";

    fn day(s: &str) -> NaiveDate {
        NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap()
    }

    #[test]
    fn entries_in_force_are_kept_and_expired_ones_warn() {
        let text = format!(
            "[[suppress]]\nfingerprint = \"{FP}\"\nreason = \"accepted\"\nexpires = 2026-06-30\n\n\
             [[suppress]]\nfingerprint = \"{}\"\nreason = \"old\"\nexpires = \"2026-01-01\"\n",
            "f".repeat(32)
        );
        let set = parse_suppressions("s.toml", text.as_bytes(), day("2026-06-30")).unwrap();
        assert_eq!(set.external.len(), 1, "the last day still applies");
        assert_eq!(set.external[FP].expires.as_deref(), Some("2026-06-30"));
        assert_eq!(set.external[FP].source, "s.toml (entry 1)");
        assert_eq!(set.warnings.len(), 1);
        assert!(
            set.warnings[0].contains("entry 2")
                && set.warnings[0].contains("expired on 2026-01-01")
        );
        let later = parse_suppressions("s.toml", text.as_bytes(), day("2026-07-01")).unwrap();
        assert!(later.external.is_empty());
        assert_eq!(later.warnings.len(), 2);
        assert_eq!(set.file_sha256.len(), 64);
    }

    #[test]
    fn bad_entries_name_the_file_and_the_entry() {
        let today = day("2026-01-01");
        let err = |t: &str| {
            parse_suppressions("s.toml", t.as_bytes(), today)
                .unwrap_err()
                .to_string()
        };
        let e = err(&format!("[[suppress]]\nfingerprint = \"{FP}\"\n"));
        assert!(
            e.starts_with("s.toml: [[suppress]] entry 1:") && e.contains("no reason"),
            "{e}"
        );
        let e = err(&format!(
            "[[suppress]]\nfingerprint = \"{FP}\"\nreason = \"  \"\n"
        ));
        assert!(e.contains("no reason"), "{e}");
        assert!(err("[[suppress]]\nreason = \"r\"\n").contains("no fingerprint"));
        assert!(err("[[suppress]]\nfingerprint = \"xyz\"\nreason = \"r\"\n")
            .contains("32 lower-case hex"));
        let e = err(&format!(
            "[[suppress]]\nfingerprint = \"{FP}\"\nreason = \"r\"\nexpires = \"soon\"\n"
        ));
        assert!(e.contains("not a date"), "{e}");
        let e = err(&format!(
            "[[suppress]]\nfingerprint = \"{FP}\"\nreason = \"r\"\nwhy = 1\n"
        ));
        assert!(e.contains("unknown key `why`"), "{e}");
        assert!(err("x = 1\n").contains("unknown key `x`"));
        assert!(err("[[suppress]\n").starts_with("s.toml: "));
        assert!(parse_suppressions("s.toml", b"", today)
            .unwrap()
            .external
            .is_empty());
    }

    #[test]
    fn an_appended_entry_parses_back() {
        let e = NewEntry {
            fingerprint: FP.into(),
            reason: "quote \" and\nnewline".into(),
            expires: Some(day("2030-01-01")),
            about: "src/a.rs:3 logic — a\nb".into(),
        };
        let existing = "# mine\n";
        let text = format!("{existing}{}", render_entry(existing, &e));
        assert!(
            text.contains("\n\n# src/a.rs:3 logic — a b\n[[suppress]]"),
            "{text}"
        );
        let set = parse_suppressions("s.toml", text.as_bytes(), day("2029-01-01")).unwrap();
        assert_eq!(set.external[FP].reason, "quote \" and\nnewline");
        assert!(render_entry("", &e).starts_with("# "));
    }
}
