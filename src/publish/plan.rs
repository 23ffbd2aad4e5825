//! Deciding what one publish does (pure, the same for every forge): from the payload, the
//! PR diff's right-side lines, the arev comments already on the PR and which of the gone
//! ones the forge's own diff changed → the comments to post, the ones already there, the
//! ones outside the diff, and the earlier comments to mark fixed or "not raised again".

use super::build::{
    fit_summary, fixed_body, is_closed, not_raised_body, outside_diff_footer, parse_fp_marker,
};
use super::diff::{RightLine, RightLines};
use super::model::{InlineComment, Payload};
use std::collections::{BTreeMap, BTreeSet};

/// An inline comment already on the PR (any author; arev's are found by their marker).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Existing {
    /// GitHub review-comment id / GitLab note id.
    pub id: u64,
    /// GitLab discussion id (None on GitHub).
    pub thread: Option<String>,
    pub path: String,
    pub body: String,
    /// The commit the comment was made on (GitHub `original_commit_id`, GitLab the
    /// position's `head_sha`): where its line number holds.
    pub commit: Option<String>,
    /// Its line in that commit's version of `path`.
    pub line: Option<u32>,
}

/// A comment to post, on a right-side line of the diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placed<'a> {
    pub comment: &'a InlineComment,
    pub position: RightLine,
}

/// An earlier comment to edit: its finding is gone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fixed<'a> {
    pub existing: &'a Existing,
    pub fingerprint: String,
    pub body: String,
    /// Whether the forge's diff changed its line ("Fixed"); else "not raised again".
    pub changed: bool,
}

/// What one publish does.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Plan<'a> {
    pub post: Vec<Placed<'a>>,
    pub already: Vec<&'a InlineComment>,
    pub outside: Vec<&'a InlineComment>,
    /// Earlier comments whose finding is gone, to edit ("Fixed" or "not raised again").
    pub fixed: Vec<Fixed<'a>>,
}

/// What a publish did (the adapters' answer; recorded in `publish/<forge>.result.json`).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Published {
    pub head_sha: String,
    /// `created`, `updated` or `unchanged`.
    pub summary: &'static str,
    pub commented: Vec<String>,
    pub already_commented: Vec<String>,
    pub outside_diff: Vec<String>,
    pub marked_fixed: Vec<String>,
    pub not_raised_again: Vec<String>,
}

impl Plan<'_> {
    /// The record of this plan once carried out.
    pub fn published(&self, head_sha: &str, summary: &'static str) -> Published {
        let fps = |v: &[&InlineComment]| v.iter().map(|c| c.fingerprint.clone()).collect();
        Published {
            head_sha: head_sha.to_string(),
            summary,
            commented: self
                .post
                .iter()
                .map(|p| p.comment.fingerprint.clone())
                .collect(),
            already_commented: fps(&self.already),
            outside_diff: fps(&self.outside),
            marked_fixed: self
                .fixed
                .iter()
                .filter(|f| f.changed)
                .map(|f| f.fingerprint.clone())
                .collect(),
            not_raised_again: self
                .fixed
                .iter()
                .filter(|f| !f.changed)
                .map(|f| f.fingerprint.clone())
                .collect(),
        }
    }

    /// The summary body: the payload's, a footer for what is not inline, cut to the
    /// forge's limit.
    pub fn summary_body(&self, payload: &Payload) -> String {
        let unlocated = payload
            .fingerprints
            .len()
            .saturating_sub(payload.comments.len());
        let text = format!(
            "{}{}",
            payload.summary,
            outside_diff_footer(&self.outside, unlocated)
        );
        fit_summary(
            &text,
            payload.forge.summary_limit(),
            &payload.report_pointer,
        )
    }
}

/// The earlier arev comments whose finding is gone: open (not yet marked), on a file this
/// review covered, with a fingerprint the report no longer lists. Only these need the
/// forge's diff (whether their line changed).
pub fn gone<'a>(payload: &Payload, existing: &'a [Existing]) -> Vec<&'a Existing> {
    let current: BTreeSet<&str> = payload.fingerprints.iter().map(String::as_str).collect();
    let covered: BTreeSet<&str> = payload.covered_files.iter().map(String::as_str).collect();
    existing
        .iter()
        .filter(|e| {
            parse_fp_marker(&e.body).is_some_and(|fp| {
                !is_closed(&e.body) && !current.contains(fp) && covered.contains(e.path.as_str())
            })
        })
        .collect()
}

/// Plan a publish at `head_sha`. `diff` holds the right-side lines of each file in the PR
/// (a file missing from it, or without a patch, has none); `changed` the ids of the
/// [`gone`] comments whose line the forge's diff from their commit to the head changed:
/// only those are marked fixed, the others "not raised again".
pub fn plan<'a>(
    payload: &'a Payload,
    diff: &BTreeMap<String, RightLines>,
    existing: &'a [Existing],
    head_sha: &str,
    changed: &BTreeSet<u64>,
) -> Plan<'a> {
    // Fingerprints arev already commented and that are still open (not marked).
    let open: BTreeSet<&str> = existing
        .iter()
        .filter(|e| !is_closed(&e.body))
        .filter_map(|e| parse_fp_marker(&e.body))
        .collect();
    let mut p = Plan::default();
    let mut seen = BTreeSet::new();
    for c in &payload.comments {
        if !seen.insert(c.fingerprint.as_str()) || open.contains(c.fingerprint.as_str()) {
            p.already.push(c);
            continue;
        }
        match diff.get(&c.path).and_then(|lines| lines.get(&c.line)) {
            Some(pos) => p.post.push(Placed {
                comment: c,
                position: *pos,
            }),
            None => p.outside.push(c),
        }
    }
    for e in gone(payload, existing) {
        let Some(fp) = parse_fp_marker(&e.body) else {
            continue;
        };
        let was_changed = changed.contains(&e.id);
        p.fixed.push(Fixed {
            existing: e,
            fingerprint: fp.to_string(),
            body: if was_changed {
                fixed_body(&e.body, head_sha)
            } else {
                not_raised_body(&e.body, head_sha)
            },
            changed: was_changed,
        });
    }
    p
}

#[cfg(test)]
mod tests {
    use super::super::build::fp_marker;
    use super::super::diff::right_lines;
    use super::super::model::{Forge, PrTarget};
    use super::*;

    fn comment(fp: &str, path: &str, line: u32) -> InlineComment {
        InlineComment {
            fingerprint: fp.into(),
            path: path.into(),
            line,
            body: format!("x\n{}", fp_marker(fp)),
        }
    }

    fn payload(comments: Vec<InlineComment>, covered: &[&str]) -> Payload {
        Payload {
            schema_version: 1,
            forge: Forge::Github,
            run_id: "r".into(),
            target: PrTarget {
                repository: "o/r".into(),
                number: 1,
                head_sha: None,
            },
            summary: String::new(),
            report_pointer: String::new(),
            fingerprints: comments.iter().map(|c| c.fingerprint.clone()).collect(),
            comments,
            covered_files: covered.iter().map(|s| s.to_string()).collect(),
            reviewed_commit: None,
            seal: String::new(),
        }
    }

    fn existing(id: u64, path: &str, body: String) -> Existing {
        Existing {
            id,
            thread: None,
            path: path.into(),
            body,
            commit: Some("c".into()),
            line: Some(1),
        }
    }

    #[test]
    fn posts_in_diff_skips_known_and_outside_and_marks_gone_ones() {
        let diff = BTreeMap::from([(
            "a.rs".to_string(),
            right_lines("@@ -1,2 +1,3 @@\n x\n+y\n z\n"),
        )]);
        let p = payload(
            vec![
                comment("new", "a.rs", 2),
                comment("known", "a.rs", 1),
                comment("far", "a.rs", 40),
                comment("otherfile", "b.rs", 1),
            ],
            &["a.rs", "b.rs"],
        );
        let ex = vec![
            existing(10, "a.rs", format!("k\n{}", fp_marker("known"))),
            existing(11, "a.rs", format!("g\n{}", fp_marker("gone"))),
            existing(12, "c.rs", format!("c\n{}", fp_marker("notcovered"))),
            existing(13, "a.rs", "a human comment".into()),
            existing(
                14,
                "a.rs",
                fixed_body(&format!("f\n{}", fp_marker("wasfixed")), "s"),
            ),
            existing(
                15,
                "a.rs",
                not_raised_body(&format!("f\n{}", fp_marker("wasgone")), "s"),
            ),
            existing(16, "a.rs", format!("u\n{}", fp_marker("untouched"))),
        ];
        let gone_ids: Vec<u64> = gone(&p, &ex).iter().map(|e| e.id).collect();
        assert_eq!(gone_ids, [11, 16], "open, covered and no longer reported");
        let plan = plan(&p, &diff, &ex, "headsha", &BTreeSet::from([11]));
        let fps =
            |v: &[&InlineComment]| v.iter().map(|c| c.fingerprint.clone()).collect::<Vec<_>>();
        assert_eq!(plan.post.len(), 1);
        assert_eq!(plan.post[0].comment.fingerprint, "new");
        assert_eq!(plan.post[0].position, RightLine::Added);
        assert_eq!(fps(&plan.already), ["known"]);
        assert_eq!(fps(&plan.outside), ["far", "otherfile"]);
        assert_eq!(plan.fixed.len(), 2);
        assert_eq!(plan.fixed[0].existing.id, 11);
        assert!(plan.fixed[0].changed);
        assert!(plan.fixed[0].body.contains("**Fixed** in headsha"));
        // Gone, but the forge's diff did not change its line: no claim of a fix.
        assert_eq!(plan.fixed[1].existing.id, 16);
        assert!(!plan.fixed[1].changed);
        assert!(plan.fixed[1]
            .body
            .contains("**Not raised again** at headsha"));
        assert!(!plan.fixed[1].body.contains("Fixed"));
        let done = plan.published("headsha", "created");
        assert_eq!(done.marked_fixed, ["gone"]);
        assert_eq!(done.not_raised_again, ["untouched"]);
    }

    #[test]
    fn a_fixed_finding_that_returns_is_commented_again() {
        let diff = BTreeMap::from([("a.rs".to_string(), right_lines("@@ -0,0 +1,1 @@\n+y\n"))]);
        let p = payload(vec![comment("back", "a.rs", 1)], &["a.rs"]);
        for closed in [
            fixed_body(&fp_marker("back"), "s"),
            not_raised_body(&fp_marker("back"), "s"),
        ] {
            let ex = vec![existing(1, "a.rs", closed)];
            let plan = plan(&p, &diff, &ex, "h", &BTreeSet::from([1]));
            assert_eq!(plan.post.len(), 1);
            assert!(plan.fixed.is_empty());
        }
    }

    #[test]
    fn no_verdict_marks_nothing_fixed() {
        let p = payload(vec![], &[]);
        let ex = vec![existing(1, "a.rs", fp_marker("x"))];
        assert!(gone(&p, &ex).is_empty());
        assert_eq!(
            plan(&p, &BTreeMap::new(), &ex, "h", &BTreeSet::from([1])),
            Plan::default()
        );
    }
}
