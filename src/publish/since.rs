//! Whether an earlier comment's line changed since the comment: the forge's own diff from
//! the commit the comment was made on to the head (its compare API, read by the adapters),
//! bounded (each answer capped in size, a capped number of compares per publish). Anything
//! arev cannot read as a change of that very line — a commit the forge no longer has (a
//! force-push), a history that is not a straight line, an answer too large, a file without
//! a patch — counts as no change: a comment is marked "Fixed" only on the forge's evidence.

use super::diff::changes_old_line;
use super::error::PublishError;
use super::plan::Existing;
use std::collections::{BTreeMap, BTreeSet};

/// The largest compare answer arev reads (a larger one is no evidence of a change).
pub const MAX_COMPARE_BYTES: u64 = 2 << 20;

/// The most compares one publish asks for (one per distinct commit of the gone comments);
/// a comment past them is "not raised again".
pub const MAX_COMPARES: usize = 20;

/// One file of a compare, as the forge reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDiff {
    /// Its path in the base commit (the comment's commit).
    pub old_path: String,
    /// The whole file is gone at the head.
    pub deleted: bool,
    /// Its hunks (None when the forge leaves them out: a large or binary file).
    pub patch: Option<String>,
}

/// A commit id arev puts into a compare request: 7 to 64 hexadecimal digits.
pub fn plain_sha(sha: &str) -> bool {
    (7..=64).contains(&sha.len()) && sha.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Whether a failed compare means "the forge has no diff for it" (no evidence of a change)
/// rather than a failure of the publish: not found or unprocessable (an unknown commit,
/// unrelated histories), too large, or an answer arev cannot read.
pub fn no_diff(e: &PublishError) -> bool {
    matches!(
        e,
        PublishError::Http {
            status: 404 | 422,
            ..
        } | PublishError::TooLarge { .. }
            | PublishError::BadAnswer { .. }
    )
}

/// Whether `files` (a compare from the comment's commit) change `line` of `path`.
pub fn changes(files: &[FileDiff], path: &str, line: u32) -> bool {
    files.iter().filter(|f| f.old_path == path).any(|f| {
        f.deleted
            || f.patch
                .as_deref()
                .is_some_and(|p| changes_old_line(p, line))
    })
}

/// The ids of the `gone` comments whose line the forge's diff from their commit to `head`
/// changes. `compare(base)` asks the forge for the diff from `base` to `head`: Ok(None) when
/// it has none (see [`no_diff`]); an error fails the publish (before any write).
pub fn changed_ids(
    gone: &[&Existing],
    head: &str,
    mut compare: impl FnMut(&str) -> Result<Option<Vec<FileDiff>>, PublishError>,
) -> Result<BTreeSet<u64>, PublishError> {
    let mut diffs: BTreeMap<String, Option<Vec<FileDiff>>> = BTreeMap::new();
    let mut changed = BTreeSet::new();
    for e in gone {
        let (Some(commit), Some(line)) = (e.commit.as_deref(), e.line) else {
            continue;
        };
        // The head itself (nothing changed since), or a commit arev will not ask about.
        if commit == head || !plain_sha(commit) || !plain_sha(head) {
            continue;
        }
        if !diffs.contains_key(commit) {
            if diffs.len() >= MAX_COMPARES {
                continue;
            }
            diffs.insert(commit.to_string(), compare(commit)?);
        }
        let files = diffs.get(commit).and_then(Option::as_deref).unwrap_or(&[]);
        if changes(files, &e.path, line) {
            changed.insert(e.id);
        }
    }
    Ok(changed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ureq::http::Method;

    fn comment(id: u64, commit: &str, path: &str, line: u32) -> Existing {
        Existing {
            id,
            thread: None,
            path: path.into(),
            body: String::new(),
            commit: Some(commit.into()),
            line: Some(line),
            talk: Default::default(),
        }
    }

    fn file(old_path: &str, patch: Option<&str>) -> FileDiff {
        FileDiff {
            old_path: old_path.into(),
            deleted: false,
            patch: patch.map(String::from),
        }
    }

    #[test]
    fn only_a_diff_that_changes_the_line_counts() {
        let replaced = file("a.rs", Some("@@ -1,3 +1,3 @@\n x\n-y\n+Y\n z\n"));
        assert!(changes(std::slice::from_ref(&replaced), "a.rs", 2));
        assert!(!changes(std::slice::from_ref(&replaced), "a.rs", 1));
        assert!(!changes(std::slice::from_ref(&replaced), "b.rs", 2));
        assert!(!changes(&[file("a.rs", None)], "a.rs", 2), "no patch");
        let deleted = FileDiff {
            deleted: true,
            ..file("a.rs", None)
        };
        assert!(changes(&[deleted], "a.rs", 9));
        assert!(plain_sha("0123abcdef") && !plain_sha("abc") && !plain_sha("../x/y"));
        assert!(!plain_sha(&"a".repeat(65)));
    }

    #[test]
    fn one_compare_per_commit_bounded_and_no_diff_is_no_change() {
        let (c1, c2, head) = ("1".repeat(40), "2".repeat(40), "f".repeat(40));
        let gone = [
            comment(1, &c1, "a.rs", 2),
            comment(2, &c1, "a.rs", 1),
            comment(3, &c2, "a.rs", 2),
            comment(4, &head, "a.rs", 2),
            comment(5, "not/a/sha", "a.rs", 2),
        ];
        let refs: Vec<&Existing> = gone.iter().collect();
        let mut asked = vec![];
        let ids = changed_ids(&refs, &head, |base| {
            asked.push(base.to_string());
            Ok((base == c1).then(|| vec![file("a.rs", Some("@@ -2 +2 @@\n-y\n+Y\n"))]))
        })
        .unwrap();
        assert_eq!(ids, BTreeSet::from([1]));
        assert_eq!(asked, [c1, c2], "one compare per commit, none for the head");

        let many: Vec<Existing> = (0..(MAX_COMPARES as u64 + 5))
            .map(|i| comment(i, &format!("{i:040x}"), "a.rs", 1))
            .collect();
        let refs: Vec<&Existing> = many.iter().collect();
        let mut n = 0;
        changed_ids(&refs, &head, |_| {
            n += 1;
            Ok(None)
        })
        .unwrap();
        assert_eq!(n, MAX_COMPARES);
        // A failure that is not "no diff" fails the publish.
        let e = changed_ids(&refs, &head, |_| {
            Err(PublishError::Transport {
                method: Method::GET,
                path: "/x".into(),
                message: "reset".into(),
            })
        });
        assert!(e.is_err());
        assert!(no_diff(&PublishError::Http {
            method: Method::GET,
            path: "/x".into(),
            status: 404,
            message: "Not Found".into()
        }));
        assert!(!no_diff(&PublishError::Http {
            method: Method::GET,
            path: "/x".into(),
            status: 502,
            message: "Bad Gateway".into()
        }));
    }
}
