//! Publishing to pull requests through the real `arev` binary against the loopback fake
//! GitHub (and GitLab, in `publish_gitlab`): first push, second push, fixed finding,
//! outside the diff, pagination, retries, persistent failure and retry, strictness, the
//! fork case, a missing or bad token, dry run. Every GitHub request is checked against
//! GitHub's OpenAPI description.

use crate::fake_github::{raw_request, FakeGithub, Fault, PREFIX, READ_ONLY_TOKEN, REPO, TOKEN};
use crate::harness::{finding, ruling, Arev, Run, TestRepo};
use crate::openapi::assert_valid_github_requests;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// A head sha the fake forges never see from a review (the fakes' own checks).
pub const SHA1: &str = "1111111111111111111111111111111111111111";

/// The commit the test repo is at (what a review records and a PR head must be).
pub fn head(repo: &TestRepo) -> String {
    repo.git(&["rev-parse", "HEAD"]).trim().to_string()
}

/// A new push to the PR: an empty commit in the test repo; its sha.
pub fn push(repo: &TestRepo) -> String {
    repo.git(&["commit", "-q", "--allow-empty", "-m", "push"]);
    head(repo)
}

/// A new push that rewrites line `n` (1-based) of src/lib.rs to `text`; its sha.
pub fn edit_line(repo: &TestRepo, n: usize, text: &str) -> String {
    let path = repo.root.join("src/lib.rs");
    let old = std::fs::read_to_string(&path).unwrap();
    let mut lines: Vec<&str> = old.lines().collect();
    lines[n - 1] = text;
    repo.write("src/lib.rs", &format!("{}\n", lines.join("\n")));
    repo.commit(&format!("rewrite line {n}"));
    head(repo)
}

/// The PR diff GitHub reports for src/lib.rs: line 1 (context) and line 2 (added) are on
/// its right side, line 3 is not.
pub const PATCH: &str = "@@ -1 +1,2 @@\n pub fn parse(s: &str) -> u32 {\n+    s.parse().unwrap()\n";

/// A one-round review of src/lib.rs confirming a finding on each of `lines` (1: api-design
/// medium, 2: error-handling high, 3: style low), each with the instruction
/// `src/lib.rs:N — replace "unwrap()" with "?"`.
pub fn script(lines: &[u32]) -> Value {
    let cat = |l: u32| match l {
        1 => ("medium", "api-design"),
        2 => ("high", "error-handling"),
        _ => ("low", "style"),
    };
    let findings: Vec<Value> = lines
        .iter()
        .map(|l| finding(&format!("X{l}"), "src/lib.rs", *l, cat(*l).0, cat(*l).1))
        .collect();
    let rulings: Vec<Value> = lines
        .iter()
        .enumerate()
        .map(|(i, l)| {
            ruling(
                &format!("F{}", i + 1),
                "src/lib.rs",
                *l,
                cat(*l).0,
                "enthusiast",
            )
        })
        .collect();
    json!({"steps": [
        {"role": "enthusiast", "round": 1, "answer": {"findings": findings}},
        {"role": "judge", "round": 1, "answer": {"rulings": rulings, "summary": "s",
            "convergence": false, "next_round_model": null}}
    ]})
}

/// A `pull_request` event for PR #7 at `sha`.
pub fn event(repo: &TestRepo, sha: &str) -> PathBuf {
    let p = repo.scratch.join(format!("event-{sha}.json"));
    std::fs::write(
        &p,
        json!({"action": "synchronize", "number": 7,
            "pull_request": {"number": 7, "head": {"sha": sha, "ref": "feature"}}})
        .to_string(),
    )
    .unwrap();
    p
}

pub fn gh<'a>(a: Arev<'a>, fake: &FakeGithub, event: &Path, token: &str) -> Arev<'a> {
    a.env("GITHUB_TOKEN", token)
        .env("GITHUB_API_URL", &fake.api_url())
        .env("GITHUB_REPOSITORY", REPO)
        .env("GITHUB_EVENT_PATH", event.to_str().unwrap())
}

fn review_run<'a>(repo: &'a TestRepo, lines: &[u32], extra: &[&str]) -> Arev<'a> {
    let mut args = vec!["run", "src/lib.rs", "--max-rounds", "1"];
    args.extend_from_slice(extra);
    repo.arev().args(&args).script(script(lines))
}

/// The newest run dir (by `started_at`: two run ids of the same second sort by their random
/// part).
pub fn newest_run(repo: &TestRepo) -> PathBuf {
    let mut v: Vec<(String, PathBuf)> = std::fs::read_dir(repo.root.join(".arev/runs"))
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            let started = read_json(&p.join("meta.json"))["started_at"]
                .as_str()
                .unwrap()
                .to_string();
            (started, p)
        })
        .collect();
    v.sort();
    v.pop().unwrap().1
}

pub fn read_json(p: &Path) -> Value {
    serde_json::from_str(
        &std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())),
    )
    .unwrap()
}

/// The token appears nowhere: not on stdout or stderr, not in any file of the run dir.
pub fn assert_no_token(run: &Run, run_dir: &Path, token: &str) {
    assert!(
        !run.stdout.contains(token) && !run.stderr.contains(token),
        "token printed"
    );
    for e in walk(run_dir) {
        let bytes = std::fs::read(&e).unwrap();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(token),
            "token written to {}",
            e.display()
        );
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![];
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

fn fp_of(report: &Value, line: u64) -> String {
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

fn comment_on(fake: &FakeGithub, line: u64) -> Value {
    let found: Vec<Value> = fake
        .review_comments()
        .into_iter()
        .filter(|c| c["line"] == line && c["body"].as_str().unwrap().contains("arev:fp="))
        .collect();
    assert_eq!(
        found.len(),
        1,
        "one arev comment on line {line}: {found:#?}"
    );
    found[0].clone()
}

#[test]
fn first_push_second_push_and_a_fixed_finding_past_the_first_page() {
    let repo = TestRepo::new();
    let sha1 = head(&repo);
    let fake = FakeGithub::start(7, &sha1, &[("src/lib.rs", PATCH)]);
    fake.serve_repo(&repo.root);
    // Busy PR: more than a page (100) of other people's comments of both kinds.
    for i in 0..105 {
        fake.add_issue_comment("alice", &format!("comment {i}"));
    }
    for i in 0..101 {
        fake.add_review_comment("bob", "src/lib.rs", 1, &format!("nit {i}"));
    }

    // Push 1: findings on lines 1, 2 (in the diff) and 3 (outside it).
    let ev1 = event(&repo, &sha1);
    // The most verbose logs (the HTTP client's wire level included) still hold no token.
    let run = gh(
        review_run(&repo, &[1, 2, 3], &["--publish", "github"]).env("AREV_LOG", "trace"),
        &fake,
        &ev1,
        TOKEN,
    )
    .run();
    run.assert_code(1); // the review's verdict (a high finding), publishing succeeded
    let dir = newest_run(&repo);
    let report = read_json(&dir.join("report.json"));
    assert!(
        run.stderr.contains("published to pull request #7"),
        "{}",
        run.stderr
    );
    let summaries: Vec<Value> = fake
        .issue_comments()
        .into_iter()
        .filter(|c| {
            c["body"]
                .as_str()
                .unwrap()
                .starts_with("<!-- arev-report -->")
        })
        .collect();
    assert_eq!(summaries.len(), 1);
    let summary = summaries[0]["body"].as_str().unwrap().to_string();
    assert!(
        summary.contains("outside this pull request's diff"),
        "{summary}"
    );
    assert!(summary.contains("`src/lib.rs:3`"), "{summary}");
    let reviews = fake.reviews();
    assert_eq!(reviews.len(), 1);
    assert_eq!(reviews[0]["commit_id"], sha1);
    let review_req = fake
        .writes()
        .into_iter()
        .find(|r| r.path.ends_with("/reviews"))
        .unwrap();
    assert_eq!(review_req.body.as_ref().unwrap()["event"], "COMMENT");
    let line1 = comment_on(&fake, 1);
    let line2 = comment_on(&fake, 2);
    assert!(
        line2["body"]
            .as_str()
            .unwrap()
            .contains("```suggestion\n    s.parse().?\n```"),
        "{}",
        line2["body"]
    );
    // Line 1 does not hold "unwrap()": the instruction stays text, no suggestion.
    assert!(!line1["body"].as_str().unwrap().contains("```suggestion"));
    assert!(line2["body"].as_str().unwrap().contains(&format!(
        "<!-- arev:fp={} panel=claude -->",
        fp_of(&report, 2)
    )));
    assert_eq!(
        fake.review_comments().len(),
        103,
        "101 of bob's + 2 of arev's"
    );
    // Both lists were read past their first page.
    let reqs = fake.requests();
    for list in ["/issues/7/comments", "/pulls/7/comments"] {
        assert!(
            reqs.iter().any(|r| r.method == "GET"
                && r.path.ends_with(list)
                && r.query.get("page").map(String::as_str) == Some("2")),
            "page 2 of {list}"
        );
    }
    let payload = read_json(&dir.join("publish/github.json"));
    assert_eq!(
        payload["target"],
        json!({"repository": REPO, "number": 7, "head_sha": sha1})
    );
    let result = read_json(&dir.join("publish/github.result.json"));
    assert_eq!(result["status"], "published");
    assert_eq!(result["summary"], "created");
    assert_eq!(result["commented"].as_array().unwrap().len(), 2);
    assert_eq!(result["outside_diff"], json!([fp_of(&report, 3)]));
    assert_no_token(&run, &dir, TOKEN);

    // Push 2: the same findings: nothing new is commented, the summary stays one comment.
    let sha2 = push(&repo);
    fake.push(&sha2);
    let ev2 = event(&repo, &sha2);
    let run2 = gh(
        review_run(&repo, &[1, 2, 3], &["--publish", "github"])
            .env("AREV_LOG", "ureq=trace,ureq_proto=trace"),
        &fake,
        &ev2,
        TOKEN,
    )
    .run();
    run2.assert_code(1);
    assert_no_token(&run2, &newest_run(&repo), TOKEN);
    assert_eq!(fake.reviews().len(), 1, "no second review");
    assert_eq!(fake.review_comments().len(), 103, "no duplicate comment");
    let result2 = read_json(&newest_run(&repo).join("publish/github.result.json"));
    assert_eq!(result2["commented"], json!([]));
    assert_eq!(result2["already_commented"].as_array().unwrap().len(), 2);
    let n_summaries = |f: &FakeGithub| {
        f.issue_comments()
            .iter()
            .filter(|c| {
                c["body"]
                    .as_str()
                    .unwrap()
                    .starts_with("<!-- arev-report -->")
            })
            .count()
    };
    assert_eq!(n_summaries(&fake), 1);

    // Push 3: line 2 is rewritten and its finding is gone: GitHub's compare from the
    // comment's commit shows the line changed, so its comment says "Fixed"; the summary is
    // edited. A reply
    // that quotes arev's line-2 comment, marker and all, is someone else's and stays as it is.
    let quoted = format!("> {}\n\nagreed", line2["body"].as_str().unwrap());
    let reply_id = {
        let mut s = fake.state.lock().unwrap();
        s.next_id += 1;
        let id = s.next_id;
        s.review_comments.push(
            json!({"id": id, "path": "src/lib.rs", "line": 2, "side": "RIGHT",
            "body": quoted, "in_reply_to_id": line2["id"], "user": {"login": "dave"}}),
        );
        id
    };
    for i in 0..30 {
        fake.add_issue_comment("carol", &format!("later {i}"));
    }
    let sha3 = edit_line(&repo, 2, "    s.parse().unwrap_or(0)");
    fake.push(&sha3);
    let ev3 = event(&repo, &sha3);
    let run3 = gh(
        review_run(&repo, &[1, 3], &["--publish", "github"]),
        &fake,
        &ev3,
        TOKEN,
    )
    .run();
    run3.assert_code(0); // medium and low only: below --fail-on high
    let reply = fake
        .review_comments()
        .into_iter()
        .find(|c| c["id"] == reply_id)
        .unwrap();
    assert_eq!(
        reply["body"].as_str().unwrap(),
        quoted,
        "a reply is never edited"
    );
    let fixed = fake
        .review_comments()
        .into_iter()
        .find(|c| c["id"] == line2["id"])
        .unwrap();
    let body = fixed["body"].as_str().unwrap();
    assert!(
        body.contains(&format!("**Fixed** in {}", &sha3[..12])),
        "{body}"
    );
    assert!(
        body.contains(line2["body"].as_str().unwrap()),
        "the original text is kept"
    );
    assert_eq!(
        comment_on(&fake, 1)["body"],
        line1["body"],
        "a still-present finding is untouched"
    );
    assert_eq!(fake.reviews().len(), 1);
    assert_eq!(n_summaries(&fake), 1);
    let edited = fake
        .issue_comments()
        .into_iter()
        .find(|c| c["id"] == summaries[0]["id"])
        .unwrap();
    assert_ne!(edited["body"].as_str().unwrap(), summary, "edited in place");
    let result3 = read_json(&newest_run(&repo).join("publish/github.result.json"));
    assert_eq!(result3["marked_fixed"], json!([fp_of(&report, 2)]));
    assert_eq!(result3["summary"], "updated");

    assert_valid_github_requests("first_push…", &fake.requests());
}

#[test]
fn the_fake_rejects_a_line_outside_the_diff_and_a_bad_token() {
    let fake = FakeGithub::start(7, SHA1, &[("src/lib.rs", PATCH)]);
    let review = |line: u64| {
        json!({"commit_id": SHA1, "event": "COMMENT", "body": "b",
            "comments": [{"path": "src/lib.rs", "line": line, "side": "RIGHT", "body": "c"}]})
    };
    let auth = format!("Bearer {TOKEN}");
    let path = format!("{PREFIX}/repos/{REPO}/pulls/7/reviews");
    let (status, body) = raw_request(
        fake.addr,
        "POST",
        &path,
        &[("authorization", &auth)],
        &review(3),
    );
    assert_eq!(status, 422, "{body}");
    assert_eq!(fake.reviews().len(), 0);
    let (status, _) = raw_request(
        fake.addr,
        "POST",
        &path,
        &[("authorization", &auth)],
        &review(2),
    );
    assert_eq!(status, 200);
    let (status, _) = raw_request(
        fake.addr,
        "POST",
        &path,
        &[("authorization", "Bearer nope")],
        &review(2),
    );
    assert_eq!(status, 401);
}

#[test]
fn retries_on_5xx_and_429_then_succeeds() {
    let repo = TestRepo::new();
    let sha1 = head(&repo);
    let fake = FakeGithub::start(7, &sha1, &[("src/lib.rs", PATCH)]);
    review_run(&repo, &[1, 2], &[]).run().assert_code(1);
    let dir = newest_run(&repo);
    fake.fault(Fault {
        method: "GET",
        path_ends_with: "/pulls/7/files".into(),
        status: 502,
        headers: vec![],
        body: json!({"message": "Server Error"}),
        times: 2,
    });
    fake.fault(Fault {
        method: "POST",
        path_ends_with: "/pulls/7/reviews".into(),
        status: 429,
        headers: vec![("retry-after", "1".into())],
        body: json!({"message": "API rate limit exceeded"}),
        times: 1,
    });
    fake.fault(Fault {
        method: "POST",
        path_ends_with: "/issues/7/comments".into(),
        status: 403,
        headers: vec![("retry-after", "1".into())],
        body: json!({"message": "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."}),
        times: 1,
    });
    let ev = event(&repo, &sha1);
    let run = gh(
        repo.arev()
            .args(&["publish", "github", dir.to_str().unwrap()]),
        &fake,
        &ev,
        TOKEN,
    )
    .run();
    run.assert_code(0);
    assert!(
        run.elapsed.as_millis() >= 2_000,
        "waited out Retry-After twice: {:?}",
        run.elapsed
    );
    let reqs = fake.requests();
    let count = |m: &str, end: &str| {
        reqs.iter()
            .filter(|r| r.method == m && r.path.ends_with(end))
            .count()
    };
    assert_eq!(count("GET", "/pulls/7/files"), 3, "two 502s, then 200");
    assert_eq!(count("POST", "/pulls/7/reviews"), 2, "one 429, then 200");
    assert_eq!(
        count("POST", "/issues/7/comments"),
        2,
        "one secondary limit, then 201"
    );
    assert_eq!(fake.reviews().len(), 1);
    assert_eq!(fake.issue_comments().len(), 1);
    assert_valid_github_requests("retries", &reqs);
}

#[test]
fn a_persistent_failure_keeps_the_exit_code_and_the_payload_and_publish_retries_it() {
    let repo = TestRepo::new();
    let sha1 = head(&repo);
    let fake = FakeGithub::start(7, &sha1, &[("src/lib.rs", PATCH)]);
    fake.fault(Fault {
        method: "POST",
        path_ends_with: "/pulls/7/reviews".into(),
        status: 500,
        headers: vec![],
        body: json!({"message": "Server Error"}),
        times: 1000,
    });
    let ev = event(&repo, &sha1);
    let run = gh(
        review_run(&repo, &[1, 2], &["--publish", "github"]),
        &fake,
        &ev,
        TOKEN,
    )
    .run();
    run.assert_code(1); // the review's exit code, not the publish failure's
    assert!(
        run.stderr.contains("publishing to github failed"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("HTTP 500"), "{}", run.stderr);
    assert!(
        run.stderr.contains("arev publish github"),
        "says how to retry: {}",
        run.stderr
    );
    let dir = newest_run(&repo);
    let result = read_json(&dir.join("publish/github.result.json"));
    assert_eq!(result["status"], "failed");
    assert!(result["error"].as_str().unwrap().contains("HTTP 500"));
    let posts = |f: &FakeGithub| {
        f.requests()
            .iter()
            .filter(|r| r.method == "POST" && r.path.ends_with("/reviews"))
            .count()
    };
    assert_eq!(posts(&fake), 4, "bounded: 4 attempts");
    let payload = read_json(&dir.join("publish/github.json"));
    assert_no_token(&run, &dir, TOKEN);

    // --publish-strict: the same failure exits 2.
    let strict = gh(
        review_run(&repo, &[1, 2], &["--publish", "github", "--publish-strict"]),
        &fake,
        &ev,
        TOKEN,
    )
    .run();
    strict.assert_code(2);
    assert!(strict.stderr.contains("publishing to github failed"));

    // The service recovers: `arev publish` sends the kept payload.
    fake.clear_faults();
    let retry = gh(
        repo.arev()
            .args(&["publish", "github", dir.to_str().unwrap()]),
        &fake,
        &ev,
        TOKEN,
    )
    .run();
    retry.assert_code(0);
    assert_eq!(fake.reviews().len(), 1);
    let bodies: Vec<Value> = fake
        .review_comments()
        .iter()
        .map(|c| c["body"].clone())
        .collect();
    let kept: Vec<Value> = payload["comments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["body"].clone())
        .collect();
    assert_eq!(bodies, kept, "exactly the kept payload's comments");
    assert_eq!(
        read_json(&dir.join("publish/github.result.json"))["status"],
        "published"
    );
    assert_eq!(
        fake.issue_comments().len(),
        1,
        "one summary across all attempts"
    );
    assert_valid_github_requests("persistent failure", &fake.requests());
}

#[test]
fn the_fork_case_review_with_a_read_only_token_then_publish_from_workflow_run() {
    let repo = TestRepo::new();
    let sha1 = head(&repo);
    let fake = FakeGithub::start(7, &sha1, &[("src/lib.rs", PATCH)]);
    let ev = event(&repo, &sha1);
    let run = gh(
        review_run(&repo, &[2], &["--publish", "github"]),
        &fake,
        &ev,
        READ_ONLY_TOKEN,
    )
    .run();
    run.assert_code(1);
    assert!(
        run.stderr
            .contains("Resource not accessible by integration"),
        "{}",
        run.stderr
    );
    let dir = newest_run(&repo);
    assert_eq!(
        read_json(&dir.join("publish/github.result.json"))["status"],
        "failed"
    );
    assert!(fake.issue_comments().is_empty() && fake.reviews().is_empty());

    // The workflow_run job: its event is not the PR; the PR number comes from --pr.
    let wr = repo.scratch.join("workflow_run.json");
    std::fs::write(
        &wr,
        json!({"action": "completed", "workflow_run": {"head_sha": sha1, "pull_requests": []}})
            .to_string(),
    )
    .unwrap();
    let publish = gh(
        repo.arev()
            .args(&["publish", "github", dir.to_str().unwrap(), "--pr", "7"]),
        &fake,
        &wr,
        TOKEN,
    )
    .run();
    publish.assert_code(0);
    assert_eq!(fake.reviews().len(), 1);
    assert_eq!(
        fake.reviews()[0]["commit_id"],
        sha1,
        "the reviewed head, from the kept payload"
    );
    assert_eq!(fake.issue_comments().len(), 1);
    assert_valid_github_requests("fork", &fake.requests());
}

#[test]
fn a_missing_or_bad_token_is_named_and_never_printed() {
    let repo = TestRepo::new();
    let sha1 = head(&repo);
    let fake = FakeGithub::start(7, &sha1, &[("src/lib.rs", PATCH)]);
    let ev = event(&repo, &sha1);
    // No token: refused before any agent runs, no run dir.
    let run = review_run(&repo, &[2], &["--publish", "github"])
        .env("GITHUB_API_URL", &fake.api_url())
        .env("GITHUB_REPOSITORY", REPO)
        .env("GITHUB_EVENT_PATH", ev.to_str().unwrap())
        .run();
    run.assert_code(2);
    assert!(
        run.stderr.contains("GITHUB_TOKEN is not set"),
        "{}",
        run.stderr
    );
    assert!(run.run_dirs().is_empty());
    assert!(run.fake_log().is_empty(), "no agent ran");

    review_run(&repo, &[2], &[]).run().assert_code(1);
    let dir = newest_run(&repo);
    let publish = repo
        .arev()
        .args(&["publish", "github", dir.to_str().unwrap()])
        .env("GITHUB_REPOSITORY", REPO)
        .env("GITHUB_EVENT_PATH", ev.to_str().unwrap())
        .run();
    publish.assert_code(2);
    assert!(
        publish.stderr.contains("GITHUB_TOKEN is not set"),
        "{}",
        publish.stderr
    );

    // A bad token: 401, said once, the token nowhere.
    let bad = "ghp_thisIsNotAValidToken42";
    let publish = gh(
        repo.arev()
            .args(&["publish", "github", dir.to_str().unwrap()]),
        &fake,
        &ev,
        bad,
    )
    .run();
    publish.assert_code(2);
    assert!(
        publish.stderr.contains("HTTP 401: Bad credentials"),
        "{}",
        publish.stderr
    );
    assert_eq!(fake.requests().len(), 1, "a 401 is not retried");
    assert_no_token(&publish, &dir, bad);
    assert_eq!(
        read_json(&dir.join("publish/github.result.json"))["status"],
        "failed"
    );
}

#[test]
fn dry_run_prints_the_requests_and_writes_nothing() {
    let repo = TestRepo::new();
    let sha1 = head(&repo);
    let fake = FakeGithub::start(7, &sha1, &[("src/lib.rs", PATCH)]);
    review_run(&repo, &[1, 2, 3], &[]).run().assert_code(1);
    let dir = newest_run(&repo);
    let ev = event(&repo, &sha1);
    let run = gh(
        repo.arev()
            .args(&["publish", "github", dir.to_str().unwrap(), "--dry-run"]),
        &fake,
        &ev,
        TOKEN,
    )
    .run();
    run.assert_code(0);
    let lines: Vec<Value> = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not a JSON line: {l}: {e}")))
        .collect();
    for l in &lines {
        let keys: Vec<&String> = l.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["body", "method", "path"], "{l}");
    }
    let writes: Vec<&Value> = lines
        .iter()
        .filter(|l| l["method"] != "GET" && l["path"] != "/api/graphql")
        .collect();
    assert_eq!(writes.len(), 2, "{lines:#?}");
    assert_eq!(writes[0]["method"], "POST");
    assert_eq!(
        writes[0]["path"],
        format!("/repos/{REPO}/issues/7/comments")
    );
    assert!(writes[0]["body"]["body"]
        .as_str()
        .unwrap()
        .starts_with("<!-- arev-report -->"));
    assert_eq!(writes[1]["path"], format!("/repos/{REPO}/pulls/7/reviews"));
    assert_eq!(writes[1]["body"]["comments"].as_array().unwrap().len(), 2);
    assert!(fake.writes().is_empty(), "nothing written to the forge");
    assert!(
        !dir.join("publish").exists(),
        "nothing written to the run dir"
    );
    assert_no_token(&run, &dir, TOKEN);
    // What the dry run prints is what a real publish sends.
    let real = gh(
        repo.arev()
            .args(&["publish", "github", dir.to_str().unwrap()]),
        &fake,
        &ev,
        TOKEN,
    )
    .run();
    real.assert_code(0);
    let sent: Vec<Value> = fake
        .writes()
        .iter()
        .map(|r| json!({"method": r.method, "path": r.path, "body": r.body}))
        .collect();
    assert_eq!(sent, writes.into_iter().cloned().collect::<Vec<_>>());
    assert_valid_github_requests("dry run", &fake.requests());
}

#[test]
fn an_aborted_run_publishes_no_verdict_and_comments_nothing() {
    let repo = TestRepo::new();
    let sha1 = head(&repo);
    let fake = FakeGithub::start(7, &sha1, &[("src/lib.rs", PATCH)]);
    let ev = event(&repo, &sha1);
    let run = gh(
        repo.arev()
            .args(&["run", "src/lib.rs", "--publish", "github"])
            .script(json!({"steps": [{"role": "enthusiast", "read_target": false}]})),
        &fake,
        &ev,
        TOKEN,
    )
    .run();
    run.assert_code(3);
    let c = fake.issue_comments();
    assert_eq!(c.len(), 1);
    assert!(
        c[0]["body"].as_str().unwrap().contains("no verdict"),
        "{}",
        c[0]["body"]
    );
    assert!(fake.reviews().is_empty());
    assert_valid_github_requests("aborted", &fake.requests());
}

#[test]
fn a_summary_over_65536_characters_is_cut_with_a_pointer() {
    let repo = TestRepo::new();
    let sha1 = head(&repo);
    let fake = FakeGithub::start(7, &sha1, &[("src/lib.rs", PATCH)]);
    review_run(&repo, &[2], &[]).run().assert_code(1);
    // A report with 400 long findings (a copy outside any run dir).
    let mut report = read_json(&newest_run(&repo).join("report.json"));
    report["run_id"] = json!("20261121-180000-abcdef-big");
    let one = report["confirmed"][0].clone();
    let many: Vec<Value> = (0..400)
        .map(|i| {
            let mut f = one.clone();
            f["fingerprint"] = json!(format!("{i:032x}"));
            f["description"] = json!(format!("finding {i}: {}", "x".repeat(200)));
            f
        })
        .collect();
    report["confirmed"] = json!(many);
    let big = repo.scratch.join("big.json");
    std::fs::write(&big, report.to_string()).unwrap();
    // A push event names no PR: the PR comes from --pr, its head from the API.
    let push = repo.scratch.join("push.json");
    std::fs::write(
        &push,
        json!({"ref": "refs/heads/feature", "after": sha1}).to_string(),
    )
    .unwrap();
    let run = gh(
        repo.arev()
            .args(&["publish", "github", big.to_str().unwrap(), "--pr", "7"]),
        &fake,
        &push,
        TOKEN,
    )
    .run();
    run.assert_code(0);
    let c = fake.issue_comments();
    assert_eq!(c.len(), 1);
    let body = c[0]["body"].as_str().unwrap();
    assert!(body.chars().count() <= 65_536, "{}", body.chars().count());
    assert!(body.starts_with("<!-- arev-report -->"));
    assert!(
        body.ends_with("**Cut at 65536 characters.** The full report is `report.md` in arev run `20261121-180000-abcdef-big`.\n"),
        "{}",
        &body[body.len() - 300..]
    );
    // 400 findings on one line: one inline comment per fingerprint.
    assert_eq!(fake.review_comments().len(), 400);
    assert_eq!(
        fake.reviews()[0]["commit_id"],
        sha1,
        "the head the API names"
    );
    assert!(fake
        .requests()
        .iter()
        .any(|r| r.method == "GET" && r.path == format!("/repos/{REPO}/pulls/7")));
    assert_valid_github_requests("big summary", &fake.requests());
}
