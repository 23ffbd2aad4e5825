//! "Fixed" only on the forge's evidence, through the real `arev` binary against the fake
//! forges (whose compare endpoints answer from the test's git repository): a finding that a
//! later report drops is marked fixed only when the forge's diff from the commit its
//! comment was made on to the head changes its line; otherwise — the line unchanged, the
//! comment's commit unknown to the forge (404), a compare answer over the cap — the comment
//! says the finding was not raised again. On GitHub through the fork flow: the trusted job
//! publishes an artifact whose report was edited to drop a finding. Republishing changes
//! nothing.

use crate::fake_github::{self, raw_request, FakeGithub, PREFIX, REPO};
use crate::fake_gitlab::{self, FakeGitlab};
use crate::harness::{Arev, TestRepo};
use crate::openapi::{assert_valid_github_answer, assert_valid_github_requests};
use crate::publish::{edit_line, event, gh, head, newest_run, read_json, script};
use crate::publish_gitlab::gl;
use serde_json::{json, Value};
use std::path::PathBuf;

/// The PR diff the forges report for src/lib.rs: every line of it on the right side.
const WHOLE_FILE: &str = "@@ -1,5 +1,5 @@\n pub fn parse(s: &str) -> u32 {\n     s.parse().unwrap()\n }\n \n pub fn id(x: u32) -> u32 { x }\n";

const NOT_RAISED: &str = "**Not raised again**";

/// A review of src/lib.rs confirming findings on `lines`; its run dir.
fn review<'a>(repo: &'a TestRepo, lines: &[u32], publish: &str) -> Arev<'a> {
    repo.arev()
        .args(&[
            "run",
            "src/lib.rs",
            "--max-rounds",
            "1",
            "--fail-on",
            "never",
            "--publish",
            publish,
        ])
        .script(script(lines))
}

fn fp_on(dir: &std::path::Path, line: u64) -> String {
    let report = read_json(&dir.join("report.json"));
    report["confirmed"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["line"] == line)
        .unwrap()["fingerprint"]
        .as_str()
        .unwrap()
        .to_string()
}

/// arev's review comments carrying fingerprint `fp`, oldest first.
fn gh_comments(fake: &FakeGithub, fp: &str) -> Vec<Value> {
    // The marker, with or without the panel after the fingerprint.
    let marker = format!("<!-- arev:fp={fp} ");
    fake.review_comments()
        .into_iter()
        .filter(|c| body(c).contains(&marker))
        .collect()
}

/// The one arev review comment of `fp`.
fn gh_comment(fake: &FakeGithub, fp: &str) -> String {
    let found = gh_comments(fake, fp);
    assert_eq!(found.len(), 1, "one comment of {fp}: {found:#?}");
    body(&found[0]).to_string()
}

fn body(v: &Value) -> &str {
    v["body"].as_str().unwrap()
}

#[test]
fn github_marks_fixed_only_where_the_compare_diff_changes_the_line() {
    let repo = TestRepo::new();
    let sha1 = head(&repo);
    let fake = FakeGithub::start(7, &sha1, &[("src/lib.rs", WHOLE_FILE)]);
    fake.serve_repo(&repo.root);
    let publish = |lines: &[u32], sha: &str| -> PathBuf {
        let run = gh(
            review(&repo, lines, "github"),
            &fake,
            &event(&repo, sha),
            fake_github::TOKEN,
        )
        .run();
        run.assert_code(0);
        assert!(
            run.stderr.contains("published to pull request #7"),
            "{}",
            run.stderr
        );
        newest_run(&repo)
    };

    // Push 1: findings on lines 1, 2 and 3, each commented at sha1.
    let dir1 = publish(&[1, 2, 3], &sha1);
    assert_eq!(fake.review_comments().len(), 3);
    let (fp1, fp2, fp3) = (fp_on(&dir1, 1), fp_on(&dir1, 2), fp_on(&dir1, 3));
    let (c1, c2, c3) = (
        gh_comment(&fake, &fp1),
        gh_comment(&fake, &fp2),
        gh_comment(&fake, &fp3),
    );

    // Push 2, from a fork: it rewrites line 2 only. The fork's job reviews it with a
    // read-only token (its own publish fails) and uploads the run dir, whose report.json
    // no longer lists line 2 (the review dropped it) nor line 1 (the artifact was edited to
    // drop it). The trusted workflow_run job publishes the artifact.
    let sha2 = edit_line(&repo, 2, "    s.parse().unwrap_or(0)");
    fake.push(&sha2);
    gh(
        review(&repo, &[1, 3], "github"),
        &fake,
        &event(&repo, &sha2),
        fake_github::READ_ONLY_TOKEN,
    )
    .run()
    .assert_code(0);
    let dir2 = newest_run(&repo);
    let mut report = read_json(&dir2.join("report.json"));
    report["confirmed"]
        .as_array_mut()
        .unwrap()
        .retain(|f| f["line"] != 1);
    std::fs::write(dir2.join("report.json"), report.to_string()).unwrap();
    let wr = repo.scratch.join("workflow_run.json");
    std::fs::write(
        &wr,
        json!({"action": "completed", "workflow_run": {"head_sha": sha2, "pull_requests": []}})
            .to_string(),
    )
    .unwrap();
    fake.clear_requests();
    let trusted = gh(
        repo.arev()
            .args(&["publish", "github", dir2.to_str().unwrap(), "--pr", "7"]),
        &fake,
        &wr,
        fake_github::TOKEN,
    )
    .run();
    trusted.assert_code(0);
    assert!(
        trusted
            .stderr
            .contains("1 marked fixed, 1 not raised again"),
        "{}",
        trusted.stderr
    );
    // (b) Line 2: GitHub's diff from sha1 to sha2 changes it: "Fixed in sha2".
    let fixed = gh_comment(&fake, &fp2);
    assert!(
        fixed.contains(&format!("**Fixed** in {}", &sha2[..12])),
        "{fixed}"
    );
    assert!(fixed.contains(&c2), "the original is kept");
    // (a) Line 1: dropped by the report, but its line did not change: no claim of a fix.
    let gone = gh_comment(&fake, &fp1);
    assert!(
        gone.contains(&format!("{NOT_RAISED} at {}", &sha2[..12])),
        "{gone}"
    );
    assert!(!gone.contains("Fixed"), "{gone}");
    assert!(gone.contains(&c1), "the original is kept");
    assert_eq!(gh_comment(&fake, &fp3), c3, "still reported: untouched");
    let result = read_json(&dir2.join("publish/github.result.json"));
    assert_eq!(result["marked_fixed"], json!([fp2]));
    assert_eq!(result["not_raised_again"], json!([fp1]));
    // One compare for the one commit both comments were made on, one page of commits.
    let path = format!("/repos/{REPO}/compare/{sha1}...{sha2}");
    let compares: Vec<_> = fake
        .requests()
        .into_iter()
        .filter(|r| r.path.contains("/compare/"))
        .collect();
    assert_eq!(compares.len(), 1, "{compares:#?}");
    assert_eq!(compares[0].path, path);
    assert_eq!(
        compares[0].query.get("per_page").map(String::as_str),
        Some("1")
    );
    // The fake's compare answers in GitHub's own shape.
    let auth = format!("Bearer {}", fake_github::TOKEN);
    let (status, answer) = raw_request(
        fake.addr,
        "GET",
        &format!("{PREFIX}{path}?per_page=1"),
        &[("authorization", &auth)],
        &Value::Null,
    );
    assert_eq!(status, 200);
    assert_eq!(answer["status"], "ahead");
    assert!(answer["files"][0]["patch"]
        .as_str()
        .unwrap()
        .contains("-    s.parse().unwrap()"));
    assert_valid_github_answer("github_marks_fixed…", &path, &answer);

    // Republishing the same artifact: nothing new, nothing edited.
    fake.clear_requests();
    let again = gh(
        repo.arev()
            .args(&["publish", "github", dir2.to_str().unwrap(), "--pr", "7"]),
        &fake,
        &wr,
        fake_github::TOKEN,
    )
    .run();
    again.assert_code(0);
    assert!(
        again.stderr.contains("0 marked fixed, 0 not raised again"),
        "{}",
        again.stderr
    );
    assert_eq!(fake.writes().len(), 0, "{:#?}", fake.writes());

    // (c) Push 3 rewrites line 3 and drops it, but GitHub no longer has the comment's
    // commit (a force-push): 404, so "not raised again". Line 1's finding is back: it is
    // commented anew (its earlier comment is closed).
    let sha3 = edit_line(&repo, 3, "} // parse");
    fake.push(&sha3);
    fake.fault(fake_github::Fault {
        method: "GET",
        path_ends_with: format!("/compare/{sha1}...{sha3}"),
        status: 404,
        headers: vec![],
        body: json!({"message": "Not Found", "documentation_url": "https://docs.github.com/rest/commits/commits#compare-two-commits", "status": "404"}),
        times: 1,
    });
    let dir3 = publish(&[1], &sha3);
    let c3_now = gh_comment(&fake, &fp3);
    assert!(
        c3_now.contains(NOT_RAISED) && !c3_now.contains("Fixed"),
        "{c3_now}"
    );
    let result = read_json(&dir3.join("publish/github.result.json"));
    assert_eq!(result["marked_fixed"], json!([]));
    assert_eq!(result["not_raised_again"], json!([fp3]));
    assert_eq!(result["commented"], json!([fp1]));

    // Push 4 rewrites line 1 and drops it again, but the compare answer (from sha3, where
    // the new comment was made) is over arev's cap: no evidence, "not raised again".
    let sha4 = edit_line(&repo, 1, "pub fn parse(s: &str) -> u64 {");
    fake.push(&sha4);
    fake.fault(fake_github::Fault {
        method: "GET",
        path_ends_with: format!("/compare/{sha3}...{sha4}"),
        status: 200,
        headers: vec![],
        body: json!({"status": "ahead", "files": [], "padding": "x".repeat(3 << 20)}),
        times: 1,
    });
    let dir4 = publish(&[3], &sha4);
    let result = read_json(&dir4.join("publish/github.result.json"));
    assert_eq!(result["not_raised_again"], json!([fp1]));
    let newest = gh_comments(&fake, &fp1).pop().unwrap();
    assert!(
        body(&newest).contains(NOT_RAISED) && !body(&newest).contains("Fixed"),
        "{newest}"
    );
    // Push 5 is a force-push: sha4 is dropped (reset to sha3) and line 3 rewritten again.
    // The comment made at sha4 is on a commit that is no longer an ancestor of the head:
    // GitHub's compare says "diverged", its diff is not from that commit, so no fix is
    // claimed although line 3 differs.
    let fp3_new = fp_on(&dir4, 3);
    repo.git(&["reset", "-q", "--hard", &sha3]);
    let sha5 = edit_line(&repo, 3, "} // end of parse");
    fake.push(&sha5);
    fake.clear_requests();
    let dir5 = publish(&[1], &sha5);
    let result = read_json(&dir5.join("publish/github.result.json"));
    assert_eq!(result["marked_fixed"], json!([]));
    assert_eq!(result["not_raised_again"], json!([fp3_new]));
    let asked = fake
        .requests()
        .into_iter()
        .find(|r| r.path.ends_with(&format!("/compare/{sha4}...{sha5}")))
        .expect("the compare was asked");
    assert_eq!(
        asked.status, 200,
        "GitHub still has the commit: a diverged compare"
    );
    // Only the one comment whose line changed was ever marked fixed.
    assert_eq!(
        fake.review_comments()
            .iter()
            .filter(|c| body(c).contains("**Fixed**"))
            .count(),
        1
    );
    assert_valid_github_requests("github_marks_fixed…", &fake.requests());
}

/// arev's one diff-discussion note carrying fingerprint `fp`.
fn gl_note(fake: &FakeGitlab, fp: &str) -> String {
    // The marker, with or without the panel after the fingerprint.
    let marker = format!("<!-- arev:fp={fp} ");
    let found: Vec<Value> = fake
        .diff_discussions()
        .into_iter()
        .map(|d| d["notes"][0].clone())
        .filter(|n| body(n).contains(&marker))
        .collect();
    assert_eq!(found.len(), 1, "one note of {fp}: {found:#?}");
    body(&found[0]).to_string()
}

#[test]
fn gitlab_marks_fixed_only_where_the_compare_diff_changes_the_line() {
    let repo = TestRepo::new();
    let sha1 = head(&repo);
    let fake = FakeGitlab::start(5, &sha1, &[("src/lib.rs", WHOLE_FILE)]);
    fake.serve_repo(&repo.root);
    let publish = |lines: &[u32]| -> PathBuf {
        let run = gl(
            review(&repo, lines, "gitlab"),
            &fake,
            Some(fake_gitlab::TOKEN),
        )
        .run();
        run.assert_code(0);
        assert!(
            run.stderr.contains("published to merge request #5"),
            "{}",
            run.stderr
        );
        newest_run(&repo)
    };

    let dir1 = publish(&[1, 2, 3]);
    assert_eq!(fake.diff_discussions().len(), 3);
    let (fp1, fp2, fp3) = (fp_on(&dir1, 1), fp_on(&dir1, 2), fp_on(&dir1, 3));
    let c1 = gl_note(&fake, &fp1);

    let sha2 = edit_line(&repo, 2, "    s.parse().unwrap_or(0)");
    fake.push(&sha2);
    let dir2 = publish(&[3]);
    // (b) the line changed in GitLab's diff from the note's commit: fixed.
    let fixed = gl_note(&fake, &fp2);
    assert!(
        fixed.contains(&format!("**Fixed** in {}", &sha2[..12])),
        "{fixed}"
    );
    // (a) the line did not change: not raised again, no claim of a fix.
    let gone = gl_note(&fake, &fp1);
    assert!(
        gone.contains(NOT_RAISED) && !gone.contains("Fixed"),
        "{gone}"
    );
    assert!(gone.contains(&c1));
    let result = read_json(&dir2.join("publish/gitlab.result.json"));
    assert_eq!(result["marked_fixed"], json!([fp2]));
    assert_eq!(result["not_raised_again"], json!([fp1]));
    let compares: Vec<_> = fake
        .requests()
        .into_iter()
        .filter(|r| r.path.ends_with("/repository/compare"))
        .collect();
    assert_eq!(compares.len(), 1, "{compares:#?}");
    assert_eq!(compares[0].query.get("from"), Some(&sha1));
    assert_eq!(compares[0].query.get("to"), Some(&sha2));
    assert_eq!(
        compares[0].query.get("straight").map(String::as_str),
        Some("true")
    );

    // Republishing: no write at all.
    let n = fake.requests().len();
    let again = gl(
        repo.arev()
            .args(&["publish", "gitlab", dir2.to_str().unwrap()]),
        &fake,
        Some(fake_gitlab::TOKEN),
    )
    .run();
    again.assert_code(0);
    let writes: Vec<_> = fake.requests()[n..]
        .iter()
        .filter(|r| r.method != "GET")
        .cloned()
        .collect();
    assert!(writes.is_empty(), "{writes:#?}");

    // (c) line 3 rewritten and dropped, but GitLab has no such ref any more (404).
    let sha3 = edit_line(&repo, 3, "} // parse");
    fake.push(&sha3);
    fake.fault(fake_gitlab::Fault {
        method: "GET",
        path_ends_with: "/repository/compare".into(),
        status: 404,
        headers: vec![],
        times: 1,
    });
    let dir3 = publish(&[1]);
    let c3 = gl_note(&fake, &fp3);
    assert!(c3.contains(NOT_RAISED) && !c3.contains("Fixed"), "{c3}");
    let result = read_json(&dir3.join("publish/gitlab.result.json"));
    assert_eq!(result["marked_fixed"], json!([]));
    assert_eq!(result["not_raised_again"], json!([fp3]));
}
