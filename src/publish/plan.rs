//! Deciding what one publish does (pure, the same for every forge): from the payload, the
//! PR diff's right-side lines and the arev comments already on the PR → the comments to
//! post, the ones already there, the ones outside the diff, and the earlier comments to
//! mark fixed.

use super::build::{
    fit_summary, fixed_body, is_marked_fixed, outside_diff_footer, parse_fp_marker,
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
}

/// What one publish does.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Plan<'a> {
    pub post: Vec<Placed<'a>>,
    pub already: Vec<&'a InlineComment>,
    pub outside: Vec<&'a InlineComment>,
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
            marked_fixed: self.fixed.iter().map(|f| f.fingerprint.clone()).collect(),
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

/// Plan a publish at `head_sha`. `diff` holds the right-side lines of each file in the PR
/// (a file missing from it, or without a patch, has none).
pub fn plan<'a>(
    payload: &'a Payload,
    diff: &BTreeMap<String, RightLines>,
    existing: &'a [Existing],
    head_sha: &str,
) -> Plan<'a> {
    // Fingerprints arev already commented and that are still open (not marked fixed).
    let open: BTreeSet<&str> = existing
        .iter()
        .filter(|e| !is_marked_fixed(&e.body))
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
    let current: BTreeSet<&str> = payload.fingerprints.iter().map(String::as_str).collect();
    let covered: BTreeSet<&str> = payload.covered_files.iter().map(String::as_str).collect();
    for e in existing {
        let Some(fp) = parse_fp_marker(&e.body) else {
            continue;
        };
        if is_marked_fixed(&e.body) || current.contains(fp) || !covered.contains(e.path.as_str()) {
            continue;
        }
        p.fixed.push(Fixed {
            existing: e,
            fingerprint: fp.to_string(),
            body: fixed_body(&e.body, head_sha),
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
        }
    }

    #[test]
    fn posts_in_diff_skips_known_and_outside_and_marks_gone_ones_fixed() {
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
        ];
        let plan = plan(&p, &diff, &ex, "headsha");
        let fps =
            |v: &[&InlineComment]| v.iter().map(|c| c.fingerprint.clone()).collect::<Vec<_>>();
        assert_eq!(plan.post.len(), 1);
        assert_eq!(plan.post[0].comment.fingerprint, "new");
        assert_eq!(plan.post[0].position, RightLine::Added);
        assert_eq!(fps(&plan.already), ["known"]);
        assert_eq!(fps(&plan.outside), ["far", "otherfile"]);
        assert_eq!(plan.fixed.len(), 1);
        assert_eq!(plan.fixed[0].existing.id, 11);
        assert!(plan.fixed[0].body.contains("**Fixed** in headsha"));
    }

    #[test]
    fn a_fixed_finding_that_returns_is_commented_again() {
        let diff = BTreeMap::from([("a.rs".to_string(), right_lines("@@ -0,0 +1,1 @@\n+y\n"))]);
        let p = payload(vec![comment("back", "a.rs", 1)], &["a.rs"]);
        let ex = vec![existing(1, "a.rs", fixed_body(&fp_marker("back"), "s"))];
        let plan = plan(&p, &diff, &ex, "h");
        assert_eq!(plan.post.len(), 1);
        assert!(plan.fixed.is_empty());
    }

    #[test]
    fn no_verdict_marks_nothing_fixed() {
        let p = payload(vec![], &[]);
        let ex = vec![existing(1, "a.rs", fp_marker("x"))];
        assert_eq!(plan(&p, &BTreeMap::new(), &ex, "h"), Plan::default());
    }
}
