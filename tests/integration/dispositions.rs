//! `arev eval dispositions` without `--pr`: the repository's pull requests (GitHub) or merge
//! requests (GitLab) as the forge lists them, page by page within `--limit`, by `--state`;
//! what the forge lists is checked (an entry without a valid number is a one-line error).
//! GitHub requests are checked against GitHub's OpenAPI description.

use crate::fake_github::{self, FakeGithub, Fault};
use crate::fake_gitlab::{self, FakeGitlab};
use crate::harness::TestRepo;
use crate::openapi::assert_valid_github_requests;
use crate::publish::{event, gh, head};
use crate::publish_gitlab::gl;
use serde_json::{json, Value};

#[test]
fn github_lists_pull_requests_page_by_page_within_the_limit() {
    let repo = TestRepo::new();
    let sha = head(&repo);
    let fake = FakeGithub::start(7, &sha, &[]);
    for n in 10..=140 {
        fake.add_pull_request(n, if n % 2 == 0 { "open" } else { "closed" }, false);
    }
    let count = |args: &[&str]| {
        gh(
            repo.arev().args(args),
            &fake,
            &event(&repo, &sha),
            fake_github::TOKEN,
        )
        .run()
    };
    let run = count(&["eval", "dispositions", "github", "--limit", "120", "--json"]);
    run.assert_code(0);
    assert!(
        run.stderr
            .contains("120 pull request(s) counted: #140 #139 "),
        "{}",
        run.stderr
    );
    assert_eq!(
        serde_json::from_str::<Value>(&run.stdout).unwrap(),
        json!([])
    );
    let lists: Vec<_> = fake
        .requests()
        .into_iter()
        .filter(|r| r.path.ends_with("/pulls"))
        .collect();
    assert_eq!(lists.len(), 2, "two pages of 100: {lists:#?}");
    assert_eq!(
        (
            lists[1].query["page"].as_str(),
            lists[1].query["state"].as_str()
        ),
        ("2", "all")
    );
    // Each listed pull request's comments were read, and nothing was written.
    let reads = fake
        .requests()
        .into_iter()
        .filter(|r| r.path.ends_with("/comments"))
        .count();
    assert_eq!(reads, 120);
    assert!(fake.writes().is_empty());
    assert_valid_github_requests("github_lists…", &fake.requests());

    // The forge's answer is checked: an entry that is not a pull request stops the count.
    fake.fault(Fault {
        method: "GET",
        path_ends_with: "/pulls".into(),
        status: 200,
        headers: vec![],
        body: json!([{"number": 3}, {"number": "4; rm -rf /", "state": "open"}]),
        times: 1,
    });
    let run = count(&["eval", "dispositions", "github"]);
    run.assert_code(2);
    assert!(
        run.stderr.contains("an entry without a valid `number`") && run.stderr.lines().count() == 1,
        "{}",
        run.stderr
    );
    // Bounds: --limit is at most 200, and --pr and --limit do not mix.
    count(&["eval", "dispositions", "github", "--limit", "201"]).assert_code(2);
    count(&[
        "eval",
        "dispositions",
        "github",
        "--pr",
        "7",
        "--limit",
        "3",
    ])
    .assert_code(2);
}

#[test]
fn gitlab_lists_merge_requests_by_state() {
    let repo = TestRepo::new();
    let sha = head(&repo);
    let fake = FakeGitlab::start(5, &sha, &[]);
    fake.add_merge_request(2, "merged");
    fake.add_merge_request(3, "closed");
    fake.add_merge_request(8, "opened");
    let count = |extra: &[&str]| {
        let mut args = vec!["eval", "dispositions", "gitlab"];
        args.extend_from_slice(extra);
        let run = gl(repo.arev().args(&args), &fake, Some(fake_gitlab::TOKEN)).run();
        run.assert_code(0);
        run.stderr
    };
    assert!(count(&[]).contains("4 merge request(s) counted: #8 #5 #3 #2"));
    assert!(count(&["--state", "merged"]).contains("1 merge request(s) counted: #2"));
    assert!(count(&["--state", "closed"]).contains("2 merge request(s) counted: #3 #2"));
    assert!(count(&["--state", "open", "--limit", "1"]).contains("1 merge request(s) counted: #8"));
    let lists: Vec<_> = fake
        .requests()
        .into_iter()
        .filter(|r| r.path.ends_with("/merge_requests"))
        .collect();
    let states: Vec<&str> = lists.iter().map(|r| r.query["state"].as_str()).collect();
    assert_eq!(states, ["all", "merged", "all", "opened"]);
    assert!(lists
        .iter()
        .all(|r| r.query["order_by"] == "created_at" && r.query["sort"] == "desc"));
    // The table names the panel column.
    let run = gl(
        repo.arev()
            .args(&["eval", "dispositions", "gitlab", "--pr", "5"]),
        &fake,
        Some(fake_gitlab::TOKEN),
    )
    .run();
    run.assert_code(0);
    assert!(
        run.stdout
            .starts_with("panel  category  severity  fixed  dismissed"),
        "{}",
        run.stdout
    );
}
