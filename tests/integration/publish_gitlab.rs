//! Publishing to GitLab merge requests through the real `arev` binary against the loopback
//! fake GitLab: sticky note, positioned diff discussions with suggestions, no duplicates
//! across pushes, fixed findings edited, pagination, retries, a missing or bad token.

use crate::fake_gitlab::{FakeGitlab, Fault, PROJECT, TOKEN};
use crate::harness::{Arev, TestRepo};
use crate::publish::{
    assert_no_token, edit_line, head, newest_run, push, read_json, script, PATCH,
};
use serde_json::{json, Value};

pub fn gl<'a>(a: Arev<'a>, fake: &FakeGitlab, token: Option<&str>) -> Arev<'a> {
    let a = a
        .env("CI_API_V4_URL", &fake.api_url())
        .env("CI_PROJECT_ID", PROJECT)
        .env("CI_MERGE_REQUEST_IID", "5")
        .env(
            "CI_JOB_URL",
            "https://gitlab.example/group/widgets/-/jobs/9",
        );
    match token {
        Some(t) => a.env("GITLAB_TOKEN", t),
        None => a,
    }
}

fn review<'a>(repo: &'a TestRepo, lines: &[u32], extra: &[&str]) -> Arev<'a> {
    let mut args = vec!["run", "src/lib.rs", "--max-rounds", "1"];
    args.extend_from_slice(extra);
    repo.arev().args(&args).script(script(lines))
}

fn arev_discussion_on(fake: &FakeGitlab, line: u64) -> Value {
    let found: Vec<Value> = fake
        .diff_discussions()
        .into_iter()
        .filter(|d| d["notes"][0]["position"]["new_line"] == line)
        .collect();
    assert_eq!(found.len(), 1, "one discussion on line {line}: {found:#?}");
    found[0].clone()
}

fn summaries(fake: &FakeGitlab) -> Vec<Value> {
    fake.notes()
        .into_iter()
        .filter(|n| {
            n["body"]
                .as_str()
                .unwrap()
                .starts_with("<!-- arev-report -->")
        })
        .collect()
}

#[test]
fn gitlab_first_push_second_push_and_a_fixed_finding() {
    let repo = TestRepo::new();
    let sha1 = head(&repo);
    let fake = FakeGitlab::start(5, &sha1, &[("src/lib.rs", PATCH)]);
    fake.serve_repo(&repo.root);
    for i in 0..105 {
        fake.add_note("alice", &format!("comment {i}"));
    }

    let run = gl(
        review(&repo, &[1, 2, 3], &["--publish", "gitlab"]),
        &fake,
        Some(TOKEN),
    )
    .run();
    run.assert_code(1);
    assert!(
        run.stderr.contains("published to merge request #5"),
        "{}",
        run.stderr
    );
    let s = summaries(&fake);
    assert_eq!(s.len(), 1);
    assert!(s[0]["body"].as_str().unwrap().contains("`src/lib.rs:3`"));
    assert_eq!(
        fake.diff_discussions().len(),
        2,
        "lines 1 and 2; line 3 is outside the diff"
    );
    let d1 = arev_discussion_on(&fake, 1);
    let d2 = arev_discussion_on(&fake, 2);
    // Line 1 is a context line: named on both sides; line 2 was added: new side only.
    assert_eq!(d1["notes"][0]["position"]["old_line"], 1);
    assert!(d2["notes"][0]["position"]["old_line"].is_null());
    assert_eq!(d2["notes"][0]["position"]["head_sha"], sha1);
    let body2 = d2["notes"][0]["body"].as_str().unwrap().to_string();
    assert!(
        body2.contains("```suggestion:-0+0\n    s.parse().?\n```"),
        "{body2}"
    );
    assert!(body2.contains("<!-- arev:fp="));
    let dir = newest_run(&repo);
    assert_eq!(
        read_json(&dir.join("publish/gitlab.result.json"))["status"],
        "published"
    );
    let payload = read_json(&dir.join("publish/gitlab.json"));
    assert_eq!(
        payload["target"],
        json!({"repository": PROJECT, "number": 5, "head_sha": null})
    );
    assert_no_token(&run, &dir, TOKEN);
    // The notes and discussions were read past their first page.
    let reqs = fake.requests();
    assert!(reqs.iter().any(
        |r| r.path.ends_with("/notes") && r.query.get("page").map(String::as_str) == Some("2")
    ));
    assert!(reqs.iter().any(|r| r.path.ends_with("/discussions")
        && r.method == "GET"
        && r.query.get("page").map(String::as_str) == Some("2")));

    // Push 2, same findings: nothing new.
    let sha2 = push(&repo);
    fake.push(&sha2);
    gl(
        review(&repo, &[1, 2, 3], &["--publish", "gitlab"]),
        &fake,
        Some(TOKEN),
    )
    .run()
    .assert_code(1);
    assert_eq!(fake.diff_discussions().len(), 2);
    assert_eq!(summaries(&fake).len(), 1);

    // Push 3: line 2 rewritten (GitLab's compare shows it) and its finding gone: fixed.
    let sha3 = edit_line(&repo, 2, "    s.parse().unwrap_or(0)");
    fake.push(&sha3);
    gl(
        review(&repo, &[1, 3], &["--publish", "gitlab"]),
        &fake,
        Some(TOKEN),
    )
    .run()
    .assert_code(0);
    let fixed = arev_discussion_on(&fake, 2)["notes"][0]["body"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        fixed.contains(&format!("**Fixed** in {}", &sha3[..12])),
        "{fixed}"
    );
    assert!(fixed.contains(&body2));
    assert_eq!(fake.diff_discussions().len(), 2);
    let s3 = summaries(&fake);
    assert_eq!(s3.len(), 1);
    assert_eq!(s3[0]["id"], s[0]["id"], "the same note, edited");
    assert_ne!(s3[0]["body"], s[0]["body"]);
    let writes: Vec<_> = fake
        .requests()
        .into_iter()
        .filter(|r| r.method != "GET")
        .collect();
    assert!(writes.iter().all(|r| r.status < 300), "{writes:#?}");
}

#[test]
fn gitlab_retries_a_rate_limit_and_names_a_missing_or_bad_token() {
    let repo = TestRepo::new();
    let sha1 = head(&repo);
    let fake = FakeGitlab::start(5, &sha1, &[("src/lib.rs", PATCH)]);
    let run = review(&repo, &[2], &["--publish", "gitlab"]);
    let missing = gl(run, &fake, None).run();
    missing.assert_code(2);
    assert!(
        missing.stderr.contains("GITLAB_TOKEN is not set"),
        "{}",
        missing.stderr
    );
    assert!(missing.run_dirs().is_empty());

    let out = repo.scratch.join("arev.json");
    review(&repo, &[2], &["--out", out.to_str().unwrap()])
        .run()
        .assert_code(1);
    let dir = newest_run(&repo);
    let bad = gl(
        repo.arev()
            .args(&["publish", "gitlab", dir.to_str().unwrap()]),
        &fake,
        Some("glpat-wrongwrongwrong"),
    )
    .run();
    bad.assert_code(2);
    assert!(bad.stderr.contains("HTTP 401"), "{}", bad.stderr);
    assert_no_token(&bad, &dir, "glpat-wrongwrongwrong");

    fake.fault(Fault {
        method: "POST",
        path_ends_with: "/discussions".into(),
        status: 429,
        headers: vec![("retry-after", "1".into())],
        times: 1,
    });
    fake.fault(Fault {
        method: "GET",
        path_ends_with: "/versions".into(),
        status: 503,
        headers: vec![],
        times: 1,
    });
    // A report copied out of its run dir (`--out`) publishes from that run dir.
    let ok = gl(
        repo.arev()
            .args(&["publish", "gitlab", out.to_str().unwrap()]),
        &fake,
        Some(TOKEN),
    )
    .run();
    ok.assert_code(0);
    assert_eq!(fake.diff_discussions().len(), 1);
    let posts = fake
        .requests()
        .iter()
        .filter(|r| r.method == "POST" && r.path.ends_with("/discussions"))
        .count();
    assert_eq!(posts, 2, "one 429, then 201");
    assert_eq!(
        read_json(&dir.join("publish/gitlab.result.json"))["status"],
        "published"
    );
}
