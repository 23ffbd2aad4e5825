//! Deciding what one publish does (pure, the same for every forge): from the payload, the
//! PR diff's right-side lines, the arev comments already on the PR and which of the gone
//! ones the forge's own diff changed → the comments to post, the ones already there, the
//! ones outside the diff, and the earlier comments to mark fixed or "not raised again"; and
//! from the conversation on arev's threads (`talk`) → the findings dismissed, the replies
//! arev owes (each event once) and the threads it resolves.

use super::build::{
    dismissed_footer, fit_summary, fixed_body, is_closed, not_raised_body, outside_diff_footer,
    parse_fp_marker,
};
use super::diff::{RightLine, RightLines};
use super::model::{InlineComment, Payload};
use super::talk::{reply_body, Dismissal, Event, Talk};
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
    /// The thread it opens: replies, 👎, resolution (read for arev's own comments only).
    pub talk: Talk,
}

impl Existing {
    /// arev's fingerprint of this comment, when it is arev's and not closed (edited to say
    /// its finding was fixed or not raised again: the last write of closing a thread).
    pub fn open_fp(&self) -> Option<&str> {
        let fp = parse_fp_marker(&self.body)?;
        (!is_closed(&self.body)).then_some(fp)
    }
}

/// A comment to post, on a right-side line of the diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placed<'a> {
    pub comment: &'a InlineComment,
    pub position: RightLine,
}

/// An earlier comment whose finding is gone: edited (after any reply and resolution) to
/// say so, which closes it for good.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fixed<'a> {
    pub existing: &'a Existing,
    pub fingerprint: String,
    pub body: String,
    /// Whether the forge's diff changed its line ("Fixed"); else "not raised again".
    pub changed: bool,
}

/// A reply arev posts in one of its threads (at most one per event per thread).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer<'a> {
    pub existing: &'a Existing,
    pub event: Event,
    pub body: String,
}

/// What one publish does.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Plan<'a> {
    pub post: Vec<Placed<'a>>,
    pub already: Vec<&'a InlineComment>,
    pub outside: Vec<&'a InlineComment>,
    /// Earlier comments whose finding is gone ("Fixed" or "not raised again").
    pub fixed: Vec<Fixed<'a>>,
    /// Dismissals of findings this review still raises: not posted, not gated, listed.
    pub dismissed: Vec<Dismissal>,
    /// Every dismissal read from arev's threads (for the record and `suppress --from-pr`).
    pub dispositions: Vec<Dismissal>,
    /// Replies to post, each answering an event not answered before.
    pub answers: Vec<Answer<'a>>,
    /// Threads arev resolves (its fixed findings' threads that are still open).
    pub resolve: Vec<&'a Existing>,
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
    /// Findings of this review dismissed on the pull request (not posted, not gated).
    pub dismissed: Vec<Dismissal>,
    /// Every dismissal read from arev's threads.
    pub dispositions: Vec<Dismissal>,
    /// Fingerprints whose thread arev resolved in this publish.
    pub resolved: Vec<String>,
    /// Replies arev posted in its threads in this publish.
    pub replies: usize,
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
            dismissed: self.dismissed.clone(),
            dispositions: self.dispositions.clone(),
            resolved: self
                .resolve
                .iter()
                .filter_map(|e| parse_fp_marker(&e.body).map(String::from))
                .collect(),
            replies: self.answers.len(),
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
            "{}{}{}",
            payload.summary,
            outside_diff_footer(&self.outside, unlocated),
            dismissed_footer(&self.dismissed, &payload.comments)
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
            e.open_fp().is_some_and(|fp| {
                !current.contains(fp)
                    && covered.contains(e.path.as_str())
                    && e.talk.dismissal(fp).is_none()
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
    let mut p = Plan::default();
    // Dismissals read from arev's open threads (the first per fingerprint), acknowledged
    // once each.
    let mut dismissed_fps = BTreeSet::new();
    for e in existing {
        let Some(fp) = e.open_fp() else {
            continue;
        };
        let Some(d) = e.talk.dismissal(fp) else {
            continue;
        };
        if !e.talk.answered(Event::Dismissed, fp) {
            p.answers.push(Answer {
                existing: e,
                event: Event::Dismissed,
                body: reply_body(Event::Dismissed, fp, head_sha, Some(&d)),
            });
        }
        if dismissed_fps.insert(fp.to_string()) {
            p.dispositions.push(d);
        }
    }
    let current: BTreeSet<&str> = payload.fingerprints.iter().map(String::as_str).collect();
    p.dismissed = p
        .dispositions
        .iter()
        .filter(|d| current.contains(d.fingerprint.as_str()))
        .cloned()
        .collect();
    // Fingerprints arev already commented and that are still open (not fixed).
    let open: BTreeSet<&str> = existing.iter().filter_map(Existing::open_fp).collect();
    let mut seen = BTreeSet::new();
    for c in &payload.comments {
        if dismissed_fps.contains(&c.fingerprint) {
            continue;
        }
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
        let Some(fp) = e.open_fp() else {
            continue;
        };
        let was_changed = changed.contains(&e.id);
        // A fix is answered in the thread ("Fixed in <sha>", once) and the thread resolved;
        // "not raised again" is only said by the edit (no claim, no notification).
        if was_changed {
            if !e.talk.answered(Event::Fixed, fp) {
                p.answers.push(Answer {
                    existing: e,
                    event: Event::Fixed,
                    body: reply_body(Event::Fixed, fp, head_sha, None),
                });
            }
            if !e.talk.resolved && e.talk.thread.is_some() {
                p.resolve.push(e);
            }
        }
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
    use super::super::talk::{DismissKind, Reply, Voice};
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
            talk: Talk {
                thread: Some(format!("T{id}")),
                ..Talk::default()
            },
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
        assert_eq!(plan.answers[0].existing.id, 11);
        assert!(plan.answers[0].body.contains("**Fixed in headsha**"));
        assert_eq!(plan.resolve.len(), 1);
        assert_eq!(plan.resolve[0].id, 11);
        // Gone, but the forge's diff did not change its line: no claim of a fix, no resolve.
        assert_eq!(plan.fixed[1].existing.id, 16);
        assert!(!plan.fixed[1].changed);
        assert!(plan.fixed[0].body.contains("**Fixed** in headsha"));
        assert_eq!(plan.answers.len(), 1, "not raised again: no reply");
        assert!(plan.fixed[1]
            .body
            .contains("**Not raised again** at headsha"));
        assert!(!plan.fixed[1].body.contains("Fixed"));
        let done = plan.published("headsha", "created");
        assert_eq!(done.marked_fixed, ["gone"]);
        assert_eq!(done.not_raised_again, ["untouched"]);
        assert_eq!(done.resolved, ["gone"]);
        assert_eq!(done.replies, 1);
    }

    /// arev's own reply in a thread, as the forge returns it.
    fn mine(body: String) -> Reply {
        Reply {
            author: Voice {
                login: "bot".into(),
                allowed: false,
            },
            mine: true,
            body,
        }
    }

    #[test]
    fn nothing_is_said_twice_and_a_closed_thread_stays_closed() {
        let p = payload(vec![], &["a.rs"]);
        // Closed by the edit after the reply and the resolution: never touched again.
        let mut done = existing(1, "a.rs", fixed_body(&fp_marker("f"), "s"));
        done.talk
            .replies
            .push(mine(reply_body(Event::Fixed, "f", "s", None)));
        // Replied "Fixed" but the resolve failed (a retry): resolve and edit only.
        let mut half = existing(3, "a.rs", fp_marker("h"));
        half.talk
            .replies
            .push(mine(reply_body(Event::Fixed, "h", "s", None)));
        let ex = vec![done, half];
        let ids = |v: &[&Existing]| v.iter().map(|e| e.id).collect::<Vec<_>>();
        assert_eq!(ids(&gone(&p, &ex)), [3]);
        let plan1 = plan(&p, &BTreeMap::new(), &ex, "h2", &BTreeSet::from([1, 3]));
        assert!(plan1.answers.is_empty(), "Fixed was said already");
        assert_eq!(ids(&plan1.resolve), [3]);
        assert_eq!(plan1.fixed.len(), 1);
        // Already resolved (by arev before the edit failed): edit only.
        let mut ex2 = ex.clone();
        ex2[1].talk.resolved = true;
        let plan2 = plan(&p, &BTreeMap::new(), &ex2, "h2", &BTreeSet::from([3]));
        assert!(plan2.answers.is_empty() && plan2.resolve.is_empty());
        assert_eq!(plan2.fixed.len(), 1);
    }

    #[test]
    fn a_dismissed_finding_is_neither_posted_nor_answered_twice() {
        let diff = BTreeMap::from([("a.rs".to_string(), right_lines("@@ -0,0 +1,2 @@\n+y\n+z\n"))]);
        let p = payload(
            vec![comment("d", "a.rs", 1), comment("e", "a.rs", 2)],
            &["a.rs"],
        );
        // arev's comment on `d` was closed by an older arev, then a maintainer dismissed its
        // new thread; `e` has a reply by someone without write access.
        let mut d = existing(1, "a.rs", fp_marker("d"));
        d.talk.replies.push(Reply {
            author: Voice {
                login: "owner".into(),
                allowed: true,
            },
            mine: false,
            body: "arev: false-positive checked by the caller".into(),
        });
        let mut e = existing(2, "a.rs", fp_marker("e"));
        e.talk.replies.push(Reply {
            author: Voice {
                login: "drive-by".into(),
                allowed: false,
            },
            mine: false,
            body: "arev: false-positive nah".into(),
        });
        let mut ex = vec![d, e];
        let plan1 = plan(&p, &diff, &ex, "h", &BTreeSet::new());
        assert_eq!(plan1.dismissed.len(), 1);
        assert_eq!(plan1.dismissed[0].kind, DismissKind::FalsePositive);
        assert_eq!(plan1.dismissed[0].by, "owner");
        assert!(plan1.post.is_empty());
        let fps =
            |v: &[&InlineComment]| v.iter().map(|c| c.fingerprint.clone()).collect::<Vec<_>>();
        assert_eq!(fps(&plan1.already), ["e"]);
        assert_eq!(plan1.answers.len(), 1);
        assert_eq!(plan1.answers[0].event, Event::Dismissed);
        let summary = plan1.summary_body(&p);
        assert!(
            summary.contains("dismissed by @\u{200b}owner: checked by the caller"),
            "{summary}"
        );
        // Once acknowledged, never again; still dismissed.
        let ack = plan1.answers[0].body.clone();
        ex[0].talk.replies.push(mine(ack));
        let plan2 = plan(&p, &diff, &ex, "h", &BTreeSet::new());
        assert!(plan2.answers.is_empty());
        assert_eq!(plan2.dismissed.len(), 1);
        // The finding's code changed (another fingerprint): reviewed afresh.
        let p3 = payload(vec![comment("d2", "a.rs", 1)], &["a.rs"]);
        let plan3 = plan(&p3, &diff, &ex, "h", &BTreeSet::new());
        assert!(plan3.dismissed.is_empty());
        assert_eq!(plan3.post.len(), 1);
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
