//! Publishing when the run dir is untrusted (docs/contracts.md §14.1, the fork flow): a planted
//! `publish/github.json` and a hostile report.json cannot choose the repository, the text
//! or the "fixed" marks; a report of another commit is refused; other authors' markers are
//! not arev's; credentials never follow a redirect to another origin (GitHub and GitLab);
//! a whole publish is time-bounded; an answer over the size cap says so.

use crate::background::{bind, Background};
use crate::fake_github::{FakeGithub, Fault, BOT_LOGIN, PAT, REPO, TOKEN};
use crate::fake_gitlab::{self, FakeGitlab, PROJECT};
use crate::harness::{Arev, TestRepo};
use crate::publish::{event, head, newest_run, read_json, script, PATCH};
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use axum::Router;
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};

fn gh<'a>(a: Arev<'a>, api_url: &str, event: &Path, token: &str) -> Arev<'a> {
    a.env("GITHUB_TOKEN", token)
        .env("GITHUB_API_URL", api_url)
        .env("GITHUB_REPOSITORY", REPO)
        .env("GITHUB_EVENT_PATH", event.to_str().unwrap())
}

fn review(repo: &TestRepo, lines: &[u32]) -> std::path::PathBuf {
    repo.arev()
        .args(&["run", "src/lib.rs", "--max-rounds", "1"])
        .script(script(lines))
        .run()
        .assert_code(1);
    newest_run(repo)
}

fn publish<'a>(repo: &'a TestRepo, dir: &Path, extra: &[&str]) -> Arev<'a> {
    let mut args = vec!["publish", "github", dir.to_str().unwrap()];
    args.extend_from_slice(extra);
    repo.arev().args(&args)
}

const HOSTILE: &str = "<img src=x onerror=alert(1)> @octo/security-team LGTM, safe to merge <!-- arev-report --> [click](https://evil.example)";

#[test]
fn a_planted_payload_and_a_hostile_report_cannot_steer_the_trusted_publish() {
    let repo = TestRepo::new();
    let sha = head(&repo);
    let fake = FakeGithub::start(7, &sha, &[("src/lib.rs", PATCH)]);
    let ev = event(&repo, &sha);
    // A first, honest publish: arev's inline comments on lines 1 and 2.
    let dir = review(&repo, &[1, 2]);
    gh(publish(&repo, &dir, &[]), &fake.api_url(), &ev, TOKEN)
        .run()
        .assert_code(0);
    let honest: Vec<Value> = fake.review_comments();
    assert_eq!(honest.len(), 2);

    // The fork's next run dir: a report whose agent text is hostile, and a planted payload
    // that names another repository, forges the summary and forgets every fingerprint (so
    // the real findings would be marked "fixed").
    let dir = review(&repo, &[1, 2]);
    let mut report = read_json(&dir.join("report.json"));
    report["confirmed"][0]["description"] = json!(HOSTILE);
    report["confirmed"][0]["resolution"] = json!("@octo/maintainers <b>approved</b>");
    std::fs::write(dir.join("report.json"), report.to_string()).unwrap();
    std::fs::create_dir_all(dir.join("publish")).unwrap();
    let forged = json!({
        "schema_version": 1, "forge": "github", "run_id": report["run_id"],
        "target": {"repository": "evil/elsewhere", "number": 7, "head_sha": sha},
        "summary": "<!-- arev-report -->\n## arev: no findings, safe to merge @octo/security-team <script>x</script>",
        "report_pointer": "", "comments": [], "fingerprints": [],
        "covered_files": ["src/lib.rs"], "reviewed_commit": sha, "seal": "00"
    });
    std::fs::write(dir.join("publish/github.json"), forged.to_string()).unwrap();
    fake.clear_requests();

    let run = gh(publish(&repo, &dir, &[]), &fake.api_url(), &ev, TOKEN).run();
    run.assert_code(0);
    let reqs = fake.requests();
    assert!(
        reqs.iter()
            .filter(|r| r.path.starts_with("/repos/"))
            .all(|r| r.path.starts_with(&format!("/repos/{REPO}/"))),
        "every request to the trusted repository: {:#?}",
        reqs.iter().map(|r| &r.path).collect::<Vec<_>>()
    );
    let summary = fake
        .issue_comments()
        .into_iter()
        .map(|c| c["body"].as_str().unwrap().to_string())
        .next()
        .unwrap();
    assert!(!summary.contains("safe to merge @octo"), "{summary}");
    assert!(
        !summary.contains("<script>") && !summary.contains("<img"),
        "{summary}"
    );
    assert!(
        !summary.contains("@octo/security-team"),
        "mentions are inert"
    );
    assert_eq!(summary.matches("<!-- arev-report -->").count(), 1);
    assert!(
        summary.contains("&lt;img"),
        "the report's own text, escaped: {summary}"
    );
    // Nothing marked fixed: the findings are the report's, not the planted list.
    let after = fake.review_comments();
    assert_eq!(
        after.len(),
        2,
        "no new comment: the findings are already there"
    );
    for c in &after {
        assert!(
            !c["body"].as_str().unwrap().contains("**Fixed**"),
            "an open finding was marked fixed: {c}"
        );
    }
    let result = read_json(&dir.join("publish/github.result.json"));
    assert_eq!(result["marked_fixed"], json!([]));
    // The payload kept now is this publish's own, for this repository.
    let kept = read_json(&dir.join("publish/github.json"));
    assert_eq!(kept["target"]["repository"], REPO);
    assert!(
        run.stderr
            .contains("rebuilding the payload from report.json"),
        "{}",
        run.stderr
    );

    // The hostile text reaches an inline comment escaped too (a new finding on line 2).
    let dir = review(&repo, &[1, 2]);
    let mut report = read_json(&dir.join("report.json"));
    report["confirmed"][0]["fingerprint"] = json!("00112233445566778899aabbccddeeff");
    report["confirmed"][0]["description"] = json!(HOSTILE);
    std::fs::write(dir.join("report.json"), report.to_string()).unwrap();
    gh(publish(&repo, &dir, &[]), &fake.api_url(), &ev, TOKEN)
        .run()
        .assert_code(0);
    let new = fake
        .review_comments()
        .into_iter()
        .find(|c| {
            c["body"]
                .as_str()
                .unwrap()
                .contains("00112233445566778899aabbccddeeff")
        })
        .unwrap();
    let body = new["body"].as_str().unwrap();
    assert!(
        !body.contains("<img") && !body.contains("@octo/security-team"),
        "{body}"
    );
    assert!(
        !body.contains("<!-- arev-report -->") && !body.contains("[click]("),
        "{body}"
    );

    // A fingerprint that would break out of the marker comment: the report is refused.
    let mut bad = report.clone();
    bad["confirmed"][0]["fingerprint"] = json!("ab --> <b>x</b> <!--");
    std::fs::write(dir.join("report.json"), bad.to_string()).unwrap();
    let run = gh(publish(&repo, &dir, &[]), &fake.api_url(), &ev, TOKEN).run();
    run.assert_code(2);
    assert!(run.stderr.contains("fingerprint"), "{}", run.stderr);
    // An unknown report version is refused.
    let mut v99 = report;
    v99["schema_version"] = json!(99);
    std::fs::write(dir.join("report.json"), v99.to_string()).unwrap();
    let run = gh(publish(&repo, &dir, &[]), &fake.api_url(), &ev, TOKEN).run();
    run.assert_code(2);
    assert!(run.stderr.contains("schema_version 99"), "{}", run.stderr);
}

#[test]
fn a_report_of_another_commit_is_refused_before_any_write() {
    let repo = TestRepo::new();
    let reviewed = head(&repo);
    let dir = review(&repo, &[2]);
    // The PR moved on (or the artifact is another PR's): its head is not the reviewed one.
    let other = "9".repeat(40);
    let fake = FakeGithub::start(7, &other, &[("src/lib.rs", PATCH)]);
    let push = repo.scratch.join("push.json");
    std::fs::write(&push, json!({"ref": "refs/heads/x"}).to_string()).unwrap();
    let run = gh(
        publish(&repo, &dir, &["--pr", "7"]),
        &fake.api_url(),
        &push,
        TOKEN,
    )
    .run();
    run.assert_code(2);
    assert!(
        run.stderr.contains(&format!(
            "the report is of commit {}, but pull request #7 is at 999999999999",
            &reviewed[..12]
        )),
        "{}",
        run.stderr
    );
    assert!(fake.writes().is_empty(), "nothing written");
    // The event's head is trusted the same way: a pull_request event at another commit.
    let ev = event(&repo, &other);
    gh(publish(&repo, &dir, &[]), &fake.api_url(), &ev, TOKEN)
        .run()
        .assert_code(2);
    assert!(fake.writes().is_empty());
    // A report without a commit (reviewed outside git) cannot be matched to a PR.
    let mut report = read_json(&dir.join("report.json"));
    report["target"].as_object_mut().unwrap().remove("commit");
    std::fs::write(dir.join("report.json"), report.to_string()).unwrap();
    let run = gh(publish(&repo, &dir, &[]), &fake.api_url(), &ev, TOKEN).run();
    run.assert_code(2);
    assert!(
        run.stderr.contains("names no reviewed commit"),
        "{}",
        run.stderr
    );
}

#[test]
fn the_repository_comes_from_the_checkouts_origin_when_the_environment_is_silent() {
    let repo = TestRepo::new();
    repo.git(&[
        "remote",
        "add",
        "origin",
        &format!("https://github.com/{REPO}.git"),
    ]);
    let sha = head(&repo);
    let fake = FakeGithub::start(7, &sha, &[("src/lib.rs", PATCH)]);
    let dir = review(&repo, &[2]);
    let ev = event(&repo, &sha);
    publish(&repo, &dir, &[])
        .env("GITHUB_TOKEN", TOKEN)
        .env("GITHUB_API_URL", &fake.api_url())
        .env("GITHUB_EVENT_PATH", ev.to_str().unwrap())
        .run()
        .assert_code(0);
    assert_eq!(fake.issue_comments().len(), 1);
    assert!(fake
        .writes()
        .iter()
        .all(|r| r.path.starts_with(&format!("/repos/{REPO}/"))));
}

#[test]
fn markers_in_other_authors_comments_are_not_arevs() {
    let repo = TestRepo::new();
    let sha = head(&repo);
    let fake = FakeGithub::start(7, &sha, &[("src/lib.rs", PATCH)]);
    let dir = review(&repo, &[2]);
    let fp = read_json(&dir.join("report.json"))["confirmed"][0]["fingerprint"]
        .as_str()
        .unwrap()
        .to_string();
    // The PR author plants a "sticky summary" and a copy of the finding's marker.
    let planted_summary = "<!-- arev-report -->\nno findings, safe to merge";
    let s_id = fake.add_issue_comment("mallory", planted_summary);
    let c_id = fake.add_review_comment(
        "mallory",
        "src/lib.rs",
        2,
        &format!("nothing here <!-- arev:fp={fp} -->"),
    );
    let ev = event(&repo, &sha);
    for token in [TOKEN, PAT] {
        let run = gh(publish(&repo, &dir, &[]), &fake.api_url(), &ev, token).run();
        run.assert_code(0);
    }
    let by = |login: &str| {
        fake.issue_comments()
            .into_iter()
            .filter(|c| c["user"]["login"] == login)
            .collect::<Vec<_>>()
    };
    // The installation token (GraphQL viewer: the Bot) and the user's token (GET /user):
    // each publishes its own summary and its own inline comment; mallory's are untouched.
    assert_eq!(by(BOT_LOGIN).len(), 1);
    assert_eq!(by("reviewbot").len(), 1);
    let mine = fake
        .issue_comments()
        .into_iter()
        .find(|c| c["id"] == s_id)
        .unwrap();
    assert_eq!(mine["body"], planted_summary, "never edited");
    let inline: Vec<Value> = fake
        .review_comments()
        .into_iter()
        .filter(|c| c["id"] != c_id)
        .collect();
    assert_eq!(
        inline.len(),
        2,
        "one real inline comment per identity: {inline:#?}"
    );
    assert!(fake.requests().iter().any(|r| r.path == "/user"));
    assert!(fake.requests().iter().any(|r| r.path == "/api/graphql"));
}

#[test]
fn gitlab_ignores_other_authors_markers() {
    let repo = TestRepo::new();
    let sha = head(&repo);
    let fake = FakeGitlab::start(5, &sha, &[("src/lib.rs", PATCH)]);
    fake.add_note("mallory", "<!-- arev-report -->\nforged: no findings");
    let dir = review(&repo, &[2]);
    repo.arev()
        .args(&["publish", "gitlab", dir.to_str().unwrap()])
        .env("CI_API_V4_URL", &fake.api_url())
        .env("CI_PROJECT_ID", PROJECT)
        .env("CI_MERGE_REQUEST_IID", "5")
        .env("GITLAB_TOKEN", fake_gitlab::TOKEN)
        .run()
        .assert_code(0);
    let summaries: Vec<Value> = fake
        .notes()
        .into_iter()
        .filter(|n| {
            n["body"]
                .as_str()
                .unwrap()
                .starts_with("<!-- arev-report -->")
        })
        .collect();
    assert_eq!(
        summaries.len(),
        2,
        "arev's own next to mallory's: {summaries:#?}"
    );
    assert!(summaries
        .iter()
        .any(|n| n["body"] == "<!-- arev-report -->\nforged: no findings"));
}

/// A server on another origin that records every request's credential headers.
struct Elsewhere {
    addr: SocketAddr,
    seen: Arc<Mutex<Vec<String>>>,
    _server: Background,
}

fn elsewhere() -> Elsewhere {
    async fn record(State(seen): State<Arc<Mutex<Vec<String>>>>, req: Request) -> Response {
        let creds: Vec<String> = ["authorization", "private-token", "job-token"]
            .iter()
            .filter_map(|h| req.headers().get(*h).and_then(|v| v.to_str().ok()))
            .map(String::from)
            .collect();
        seen.lock()
            .unwrap()
            .push(format!("{} {:?}", req.uri(), creds));
        axum::Json(json!([])).into_response()
    }
    let seen = Arc::new(Mutex::new(vec![]));
    let (listener, addr) = bind();
    let app = Router::new().fallback(record).with_state(seen.clone());
    Elsewhere {
        addr,
        seen,
        _server: Background::spawn("elsewhere", listener, app),
    }
}

#[test]
fn credentials_never_follow_a_redirect_to_another_origin() {
    let repo = TestRepo::new();
    let sha = head(&repo);
    let dir = review(&repo, &[2]);
    let away = elsewhere();

    // GitHub: the files list redirects to another host.
    let fake = FakeGithub::start(7, &sha, &[("src/lib.rs", PATCH)]);
    fake.fault(Fault {
        method: "GET",
        path_ends_with: "/pulls/7/files".into(),
        status: 307,
        headers: vec![("location", format!("http://{}/steal", away.addr))],
        body: json!({}),
        times: 10,
    });
    let ev = event(&repo, &sha);
    let run = gh(publish(&repo, &dir, &[]), &fake.api_url(), &ev, TOKEN).run();
    run.assert_code(2);
    assert!(
        run.stderr.contains("redirects to another origin"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains(TOKEN));

    // GitLab: the versions of the MR redirect to another host (PRIVATE-TOKEN).
    let gl = FakeGitlab::start(5, &sha, &[("src/lib.rs", PATCH)]);
    gl.fault(fake_gitlab::Fault {
        method: "GET",
        path_ends_with: "/versions".into(),
        status: 302,
        headers: vec![("location", format!("http://{}/steal", away.addr))],
        times: 10,
    });
    let run = repo
        .arev()
        .args(&["publish", "gitlab", dir.to_str().unwrap()])
        .env("CI_API_V4_URL", &gl.api_url())
        .env("CI_PROJECT_ID", PROJECT)
        .env("CI_MERGE_REQUEST_IID", "5")
        .env("GITLAB_TOKEN", fake_gitlab::TOKEN)
        .run();
    run.assert_code(2);
    assert!(
        run.stderr.contains("redirects to another origin"),
        "{}",
        run.stderr
    );
    assert_eq!(
        away.seen.lock().unwrap().clone(),
        Vec::<String>::new(),
        "nothing reached the other origin"
    );

    // A redirect on the same origin (a renamed repository) is followed.
    let fake = FakeGithub::start(7, &sha, &[("src/lib.rs", PATCH)]);
    fake.fault(Fault {
        method: "GET",
        path_ends_with: "/pulls/7/files".into(),
        status: 301,
        headers: vec![(
            "location",
            format!(
                "{}/repos/{REPO}/pulls/7/files?per_page=100&page=1",
                fake.api_url()
            ),
        )],
        body: json!({}),
        times: 1,
    });
    gh(publish(&repo, &dir, &[]), &fake.api_url(), &ev, TOKEN)
        .run()
        .assert_code(0);
    assert_eq!(fake.reviews().len(), 1);
}

/// A hostile API: `GET /user` answers at once; every list answers after `delay_ms` with an
/// empty page whose `Link` names a next one (forever), or with `big` bytes of JSON.
fn hostile_api(delay_ms: u64, big: usize) -> (String, Background) {
    async fn answer(State((delay_ms, big)): State<(u64, usize)>, req: Request) -> Response {
        let path = req.uri().path().to_string();
        if path.ends_with("/user") {
            return axum::Json(json!({"login": "reviewbot"})).into_response();
        }
        if big > 0 {
            let mut s = String::with_capacity(big + 16);
            s.push('[');
            while s.len() < big {
                s.push_str("{\"filename\":\"x\"},");
            }
            s.push_str("{}]");
            return ([("content-type", "application/json")], s).into_response();
        }
        tokio::time::sleep(std::time::Duration::from_millis(delay_ms)).await;
        let page: u64 = req
            .uri()
            .query()
            .and_then(|q| q.split('&').find_map(|kv| kv.strip_prefix("page=")))
            .and_then(|p| p.parse().ok())
            .unwrap_or(1);
        let host = req
            .headers()
            .get("host")
            .and_then(|h| h.to_str().ok())
            .unwrap_or("")
            .to_string();
        let next = format!(
            "<http://{host}{path}?per_page=100&page={}>; rel=\"next\"",
            page + 1
        );
        (
            [
                ("content-type", "application/json"),
                ("link", next.as_str()),
            ],
            "[]",
        )
            .into_response()
    }
    let (listener, addr) = bind();
    let app = Router::new().fallback(answer).with_state((delay_ms, big));
    (
        format!("http://{addr}/api/v3"),
        Background::spawn("hostile-api", listener, app),
    )
}

#[test]
fn a_whole_publish_is_time_bounded_and_an_oversized_answer_says_so() {
    let repo = TestRepo::new();
    let sha = head(&repo);
    let dir = review(&repo, &[2]);
    let ev = event(&repo, &sha);
    // Every page just slow enough: without a bound, 100 pages of this would take minutes
    // (at 30 s a page, most of an hour).
    let (url, _server) = hostile_api(700, 0);
    let run = gh(publish(&repo, &dir, &[]), &url, &ev, PAT)
        .env("AREV_PUBLISH_TIMEOUT", "3")
        .run();
    run.assert_code(2);
    assert!(run.stderr.contains("ran out of its 3 s"), "{}", run.stderr);
    assert!(
        run.elapsed < std::time::Duration::from_secs(8),
        "{:?}",
        run.elapsed
    );
    let bad = gh(publish(&repo, &dir, &[]), &url, &ev, PAT)
        .env("AREV_PUBLISH_TIMEOUT", "soon")
        .run();
    bad.assert_code(2);
    assert!(
        bad.stderr.contains("AREV_PUBLISH_TIMEOUT"),
        "{}",
        bad.stderr
    );

    // An answer over the 10 MiB cap is named as such, not read as "null".
    let (url, _big) = hostile_api(0, 11 << 20);
    let run = gh(publish(&repo, &dir, &[]), &url, &ev, PAT).run();
    run.assert_code(2);
    assert!(run.stderr.contains("larger than 10 MiB"), "{}", run.stderr);
    assert!(!run.stderr.contains("got null"), "{}", run.stderr);
}
