//! The conversation on a pull request, through the real `arev` binary against the fake
//! forges over several pushes: a maintainer's `arev: false-positive` reply, a 👎 and a
//! resolved thread keep a finding from being posted or gated again; the same from someone
//! without write access does not; a fix gets exactly one "Fixed in" reply and its thread
//! resolved; a finding gone without a change to its line is never called fixed; repeated
//! publishes post nothing new. GitHub requests are checked against GitHub's OpenAPI
//! description and GraphQL documents against its schema.

use crate::fake_github::{self, FakeGithub};
use crate::fake_gitlab::{self, FakeGitlab};
use crate::graphql::assert_valid_github_graphql;
use crate::harness::{finding, ruling, Arev, TestRepo};
use crate::openapi::assert_valid_github_requests;
use crate::publish::{edit_line, event, gh, head, newest_run, read_json};
use crate::publish_gitlab::gl;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// The PR diff the forges report for src/lib.rs: every line of it on the right side.
const WHOLE_FILE: &str = "@@ -1,5 +1,5 @@\n pub fn parse(s: &str) -> u32 {\n     s.parse().unwrap()\n }\n \n pub fn id(x: u32) -> u32 { x }\n";

/// A one-round review of src/lib.rs confirming a finding on each of `lines`: 1 api-design
/// medium, 2 error-handling high, 3 style low, 5 naming low.
fn script(lines: &[u32]) -> Value {
    let cat = |l: u32| match l {
        1 => ("medium", "api-design"),
        2 => ("high", "error-handling"),
        3 => ("low", "style"),
        _ => ("low", "naming"),
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

/// A review of src/lib.rs confirming findings on `lines`, gating at low, published to
/// `forge`.
fn review<'a>(repo: &'a TestRepo, lines: &[u32], forge: &str) -> Arev<'a> {
    repo.arev()
        .args(&[
            "run",
            "src/lib.rs",
            "--max-rounds",
            "1",
            "--fail-on",
            "low",
            "--publish",
            forge,
        ])
        .script(script(lines))
}

fn fp_on(dir: &Path, line: u64) -> String {
    let report = read_json(&dir.join("report.json"));
    report["confirmed"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["line"] == line)
        .unwrap_or_else(|| panic!("no finding on line {line}: {:#}", report["confirmed"]))
        ["fingerprint"]
        .as_str()
        .unwrap()
        .to_string()
}

fn body(v: &Value) -> &str {
    v["body"].as_str().unwrap_or("")
}

/// arev's first comment of `fp` (GitHub), exactly one.
fn gh_root(fake: &FakeGithub, fp: &str) -> Value {
    // The marker, with or without the panel after the fingerprint.
    let marker = format!("<!-- arev:fp={fp} ");
    let found: Vec<Value> = fake
        .review_comments()
        .into_iter()
        .filter(|c| c["in_reply_to_id"].is_null() && body(c).contains(&marker))
        .collect();
    assert_eq!(found.len(), 1, "one comment of {fp}: {found:#?}");
    found[0].clone()
}

/// The replies arev wrote in the thread of `root`.
fn gh_arev_replies(fake: &FakeGithub, root: &Value) -> Vec<String> {
    fake.review_comments()
        .into_iter()
        .filter(|c| {
            c["in_reply_to_id"] == root["id"] && c["user"]["login"] == fake_github::BOT_LOGIN
        })
        .map(|c| body(&c).to_string())
        .collect()
}

fn dismissed(dir: &Path, forge: &str) -> Vec<(String, String, String)> {
    let r = read_json(&dir.join(format!("publish/{forge}.result.json")));
    r["dismissed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["fingerprint"].as_str().unwrap().to_string(),
                d["by"].as_str().unwrap().to_string(),
                d["kind"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn github_dismissals_stick_fixes_resolve_and_nothing_is_said_twice() {
    let repo = TestRepo::new();
    let sha1 = head(&repo);
    let fake = FakeGithub::start(7, &sha1, &[("src/lib.rs", WHOLE_FILE)]);
    fake.serve_repo(&repo.root);
    let publish = |lines: &[u32], sha: &str, code: i32| -> PathBuf {
        let run = gh(
            review(&repo, lines, "github"),
            &fake,
            &event(&repo, sha),
            fake_github::TOKEN,
        )
        .run();
        run.assert_code(code);
        assert!(
            run.stderr.contains("published to pull request #7"),
            "{}",
            run.stderr
        );
        newest_run(&repo)
    };

    // Push 1: findings on lines 1 (medium), 2 (high), 3 and 5 (low): four threads.
    let dir1 = publish(&[1, 2, 3, 5], &sha1, 1);
    let (fp1, fp2, fp3, fp5) = (
        fp_on(&dir1, 1),
        fp_on(&dir1, 2),
        fp_on(&dir1, 3),
        fp_on(&dir1, 5),
    );
    let (t1, t2, t3, t5) = (
        gh_root(&fake, &fp1),
        gh_root(&fake, &fp2),
        gh_root(&fake, &fp3),
        gh_root(&fake, &fp5),
    );
    let id = |t: &Value| t["id"].as_u64().unwrap();

    // The conversation: the owner dismisses line 2 by a reply; a maintainer (write
    // permission) gives line 3 a 👎; someone without write access tries both on line 1.
    fake.reply_as(
        id(&t2),
        "owner",
        "OWNER",
        "arev: false-positive parse() is validated by the caller",
    );
    fake.grant("maint", "write");
    fake.react(id(&t3), "maint", "-1");
    fake.reply_as(
        id(&t1),
        "mallory",
        "NONE",
        "arev: false-positive trust me\u{1b}[2J",
    );
    fake.grant("mallory", "read");
    fake.react(id(&t1), "mallory", "-1");
    fake.react(id(&t5), "maint", "+1");

    // Push 2: the same findings. Lines 2 and 3 are dismissed: not gated, acknowledged once;
    // line 1 still gates (exit 1).
    let sha2 = edit_line(&repo, 4, "// two");
    fake.push(&sha2);
    fake.clear_requests();
    let dir2 = publish(&[1, 2, 3, 5], &sha2, 1);
    let mut d = dismissed(&dir2, "github");
    d.sort();
    let mut want = vec![
        (
            fp2.clone(),
            "owner".to_string(),
            "false-positive".to_string(),
        ),
        (fp3, "maint".to_string(), "thumbs-down".to_string()),
    ];
    want.sort();
    assert_eq!(d, want);
    assert_eq!(fake.reviews().len(), 1, "nothing posted again");
    assert_eq!(gh_arev_replies(&fake, &t2).len(), 1);
    assert!(gh_arev_replies(&fake, &t2)[0].contains("**Dismissed** by @\u{200b}owner"));
    assert_eq!(gh_arev_replies(&fake, &t3).len(), 1);
    assert!(
        gh_arev_replies(&fake, &t1).is_empty(),
        "no write access: no dismissal"
    );
    let summary = fake
        .issue_comments()
        .into_iter()
        .find(|c| body(c).starts_with("<!-- arev-report -->"))
        .unwrap();
    assert!(
        body(&summary).contains("dismissed by @\u{200b}owner: parse() is validated by the caller"),
        "{}",
        body(&summary)
    );
    // The permission API was asked for the reactors only (the reply's author_association
    // says it), once each.
    let perms: Vec<String> = fake
        .requests()
        .into_iter()
        .filter(|r| r.path.contains("/collaborators/"))
        .map(|r| r.path)
        .collect();
    assert_eq!(perms.len(), 2, "{perms:?}");
    // Only where the roll-up counts a 👎 are reactions read.
    let reads = fake
        .requests()
        .into_iter()
        .filter(|r| r.path.ends_with("/reactions"))
        .count();
    assert_eq!(reads, 2);

    // Push 3 rewrites line 5 and the review no longer raises it (fixed), nor line 1 (its
    // line unchanged: not raised again, never "fixed"). Lines 2 and 3 are dismissed: exit 0.
    let sha3 = edit_line(&repo, 5, "pub fn id(x: u64) -> u64 { x }");
    fake.push(&sha3);
    let dir3 = publish(&[2, 3], &sha3, 0);
    let fixed = gh_arev_replies(&fake, &t5);
    assert_eq!(fixed.len(), 1, "{fixed:#?}");
    assert!(
        fixed[0].contains(&format!("Fixed in {}", &sha3[..12])),
        "{}",
        fixed[0]
    );
    assert_eq!(fake.resolved_by(id(&t5)).as_deref(), Some("github-actions"));
    assert!(
        gh_arev_replies(&fake, &t1).is_empty(),
        "not raised again: no reply"
    );
    assert_eq!(fake.resolved_by(id(&t1)), None, "not resolved");
    let t1_now = gh_root(&fake, &fp1);
    assert!(body(&t1_now).contains("**Not raised again**"));
    assert!(!body(&t1_now).contains("Fixed"));
    let r3 = read_json(&dir3.join("publish/github.result.json"));
    assert_eq!(r3["marked_fixed"], json!([fp5]));
    assert_eq!(r3["resolved"], json!([fp5]));
    assert_eq!(r3["not_raised_again"], json!([fp1]));

    // Retries and later pushes say nothing new: the same run published again, then push 4.
    fake.clear_requests();
    let again = gh(
        repo.arev().args(&[
            "publish",
            "github",
            dir3.to_str().unwrap(),
            "--fail-on",
            "low",
        ]),
        &fake,
        &event(&repo, &sha3),
        fake_github::TOKEN,
    )
    .run();
    again.assert_code(0);
    assert_eq!(fake.writes().len(), 0, "{:#?}", fake.writes());
    let resolves = || {
        fake.graphql_documents()
            .iter()
            .filter(|d| d["query"].as_str().unwrap().contains("resolveReviewThread"))
            .count()
    };
    assert_eq!(resolves(), 1, "no second resolve");
    let sha4 = edit_line(&repo, 4, "// four");
    fake.push(&sha4);
    let before = fake.review_comments().len();
    publish(&[2, 3], &sha4, 0);
    assert_eq!(fake.review_comments().len(), before, "no reply, no comment");
    assert_eq!(fake.reviews().len(), 1);
    // Someone reopening arev's resolved thread does not make arev answer again.
    fake.state.lock().unwrap().talk.resolved.remove(&id(&t5));
    publish(&[2, 3], &sha4, 0);
    assert_eq!(fake.review_comments().len(), before);
    assert_eq!(resolves(), 1, "never reopened or resolved again");

    // Line 2's code changes: a new fingerprint, reviewed afresh (posted and gated).
    let sha5 = edit_line(&repo, 2, "    s.parse().expect(\"n\")");
    fake.push(&sha5);
    let dir5 = publish(&[2, 3], &sha5, 1);
    assert_ne!(fp_on(&dir5, 2), fp2);
    assert_eq!(fake.reviews().len(), 2);

    // What became of the findings, as GitHub reports it.
    let eval = gh(
        repo.arev()
            .args(&["eval", "dispositions", "github", "--pr", "7", "--json"]),
        &fake,
        &event(&repo, &sha5),
        fake_github::TOKEN,
    )
    .run();
    eval.assert_code(0);
    let rows: Value = serde_json::from_str(&eval.stdout).unwrap();
    let row = |cat: &str| {
        rows.as_array()
            .unwrap()
            .iter()
            .find(|r| r["category"] == cat)
            .cloned()
            .unwrap_or_else(|| panic!("no {cat} row: {rows:#}"))
    };
    assert_eq!(row("naming")["fixed"], 1);
    assert_eq!(row("api-design")["not_raised_again"], 1);
    assert_eq!(row("style")["dismissed"], json!({"thumbs-down": 1}));
    let eh = row("error-handling");
    assert_eq!(
        (eh["severity"].clone(), eh["open"].clone()),
        (json!("high"), json!(1))
    );
    assert_eq!(eh["dismissed"], json!({"false-positive": 1}));
    // Every comment names the panel that raised it: the one agent of the fake's config.
    assert!(rows
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["panel"] == "claude"));

    // Without --pr: the repository's pull requests as GitHub lists them, newest first; a
    // comment from an arev that did not name the panel counts under `unknown`.
    fake.add_pull_request(3, "closed", true);
    fake.add_pull_request(5, "closed", false);
    fake.add_pull_request(9, "open", false);
    fake.add_review_comment(
        fake_github::BOT_LOGIN,
        "src/lib.rs",
        4,
        "**arev · low · docs**\n\nold\n<!-- arev:fp=0ld1 -->",
    );
    let dispositions = |extra: &[&str]| {
        let mut args = vec!["eval", "dispositions", "github", "--json"];
        args.extend_from_slice(extra);
        let run = gh(
            repo.arev().args(&args),
            &fake,
            &event(&repo, &sha5),
            fake_github::TOKEN,
        )
        .run();
        run.assert_code(0);
        let rows: Value = serde_json::from_str(&run.stdout).unwrap();
        (run.stderr, rows)
    };
    let (said, all) = dispositions(&[]);
    assert!(
        said.contains("4 pull request(s) counted: #9 #7 #5 #3"),
        "{said}"
    );
    let unknown: Vec<&Value> = all
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["panel"] == "unknown")
        .collect();
    assert_eq!(unknown.len(), 1, "{all:#}");
    assert_eq!(
        (&unknown[0]["category"], &unknown[0]["open"]),
        (&json!("docs"), &json!(1))
    );
    assert_eq!(
        all.as_array().unwrap().len(),
        rows.as_array().unwrap().len() + 1
    );
    let (said, none) = dispositions(&["--state", "merged", "--limit", "5"]);
    assert!(said.contains("1 pull request(s) counted: #3"), "{said}");
    assert_eq!(none, json!([]));
    let (said, _) = dispositions(&["--state", "closed"]);
    assert!(said.contains("2 pull request(s) counted: #5 #3"), "{said}");
    let (said, _) = dispositions(&["--limit", "2"]);
    assert!(said.contains("2 pull request(s) counted: #9 #7"), "{said}");
    let lists: Vec<_> = fake
        .requests()
        .into_iter()
        .filter(|r| r.path == format!("/repos/{}/pulls", fake_github::REPO))
        .collect();
    assert_eq!(lists.len(), 4);
    assert_eq!(lists[3].query["per_page"], "2");
    assert_eq!(lists[1].query["state"], "closed");
    // The fake lists pull requests in GitHub's own shape (asked directly: not one of arev's
    // requests).
    let requests = fake.requests();
    let auth = format!("Bearer {}", fake_github::TOKEN);
    let path = format!("/repos/{}/pulls", fake_github::REPO);
    let (status, answer) = fake_github::raw_request(
        fake.addr,
        "GET",
        &format!("{}{path}?state=all&per_page=3", fake_github::PREFIX),
        &[("authorization", &auth)],
        &Value::Null,
    );
    assert_eq!(status, 200);
    assert_eq!(answer.as_array().unwrap().len(), 3);
    crate::openapi::assert_valid_github_answer("github_dismissals…", &path, &answer);

    assert_valid_github_requests("github_dismissals…", &requests);
    assert_valid_github_graphql("github_dismissals…", &fake.graphql_documents());
}

/// arev's discussion of `fp` (GitLab), exactly one.
fn gl_discussion(fake: &FakeGitlab, fp: &str) -> Value {
    // The marker, with or without the panel after the fingerprint.
    let marker = format!("<!-- arev:fp={fp} ");
    let found: Vec<Value> = fake
        .diff_discussions()
        .into_iter()
        .filter(|d| body(&d["notes"][0]).contains(&marker))
        .collect();
    assert_eq!(found.len(), 1, "one discussion of {fp}: {found:#?}");
    found[0].clone()
}

fn gl_arev_replies(fake: &FakeGitlab, fp: &str) -> Vec<String> {
    gl_discussion(fake, fp)["notes"]
        .as_array()
        .unwrap()
        .iter()
        .skip(1)
        .filter(|n| n["author"]["username"] == fake_gitlab::BOT_USERNAME)
        .map(|n| body(n).to_string())
        .collect()
}

#[test]
fn gitlab_dismissals_stick_fixes_resolve_and_nothing_is_said_twice() {
    let repo = TestRepo::new();
    let sha1 = head(&repo);
    let fake = FakeGitlab::start(5, &sha1, &[("src/lib.rs", WHOLE_FILE)]);
    fake.serve_repo(&repo.root);
    let publish = |lines: &[u32], code: i32| -> PathBuf {
        let run = gl(
            review(&repo, lines, "gitlab"),
            &fake,
            Some(fake_gitlab::TOKEN),
        )
        .run();
        run.assert_code(code);
        assert!(
            run.stderr.contains("published to merge request #5"),
            "{}",
            run.stderr
        );
        newest_run(&repo)
    };
    let dir1 = publish(&[1, 2, 3, 5], 1);
    let (fp1, fp2, fp3, fp5) = (
        fp_on(&dir1, 1),
        fp_on(&dir1, 2),
        fp_on(&dir1, 3),
        fp_on(&dir1, 5),
    );
    let did = |fp: &str| gl_discussion(&fake, fp)["id"].as_str().unwrap().to_string();
    let nid = |fp: &str| gl_discussion(&fake, fp)["notes"][0]["id"].as_u64().unwrap();
    // A Developer dismisses line 2 by a reply, a Maintainer resolves line 3's discussion,
    // a Reporter replies and gives 👎 on line 1.
    fake.grant("dev", 30);
    fake.grant("lead", 40);
    fake.grant("reporter", 20);
    fake.reply_as(
        &did(&fp2),
        "dev",
        "arev: wont-fix legacy API kept on purpose",
    );
    fake.resolve_as(&did(&fp3), "lead");
    fake.reply_as(&did(&fp1), "reporter", "arev: false-positive nah");
    fake.award(nid(&fp1), "reporter", "thumbsdown");

    let sha2 = edit_line(&repo, 4, "// two");
    fake.push(&sha2);
    let dir2 = publish(&[1, 2, 3, 5], 1);
    let mut d = dismissed(&dir2, "gitlab");
    d.sort();
    let mut want = vec![
        (fp2.clone(), "dev".to_string(), "wont-fix".to_string()),
        (fp3.clone(), "lead".to_string(), "resolved".to_string()),
    ];
    want.sort();
    assert_eq!(d, want);
    assert_eq!(fake.diff_discussions().len(), 4, "nothing posted again");
    assert_eq!(gl_arev_replies(&fake, &fp2).len(), 1);
    assert_eq!(gl_arev_replies(&fake, &fp3).len(), 1);
    assert!(gl_arev_replies(&fake, &fp1).is_empty());

    let sha3 = edit_line(&repo, 5, "pub fn id(x: u64) -> u64 { x }");
    fake.push(&sha3);
    let dir3 = publish(&[2, 3], 0);
    let fixed = gl_arev_replies(&fake, &fp5);
    assert_eq!(fixed.len(), 1, "{fixed:#?}");
    assert!(fixed[0].contains(&format!("Fixed in {}", &sha3[..12])));
    let d5 = gl_discussion(&fake, &fp5);
    assert_eq!(d5["notes"][0]["resolved"], true);
    assert_eq!(
        d5["notes"][0]["resolved_by"]["username"],
        fake_gitlab::BOT_USERNAME
    );
    let d1 = gl_discussion(&fake, &fp1);
    assert_eq!(
        d1["notes"][0]["resolved"], false,
        "not raised again: not resolved"
    );
    assert!(!body(&d1["notes"][0]).contains("Fixed"));
    assert!(gl_arev_replies(&fake, &fp1).is_empty());
    let r3 = read_json(&dir3.join("publish/gitlab.result.json"));
    assert_eq!(r3["marked_fixed"], json!([fp5]));
    assert_eq!(r3["not_raised_again"], json!([fp1]));

    // Push 4: nothing new said anywhere.
    let notes_before = fake.notes().len();
    let sha4 = edit_line(&repo, 4, "// four");
    fake.push(&sha4);
    publish(&[2, 3], 0);
    assert_eq!(fake.notes().len(), notes_before);
    let writes = fake
        .requests()
        .into_iter()
        .filter(|r| r.method == "POST" && r.path.contains("/discussions"))
        .count();
    assert_eq!(
        writes,
        4 + 2 + 1,
        "4 discussions, 2 acknowledgements, 1 Fixed"
    );

    // The maintainer exports the MR's dismissals as suppressions to commit.
    let export = || {
        gl(
            repo.arev()
                .args(&["suppress", "--from-pr", "5", "--forge", "gitlab"]),
            &fake,
            Some(fake_gitlab::TOKEN),
        )
        .run()
    };
    let run = export();
    run.assert_code(0);
    assert!(
        run.stderr.contains("2 dismissal(s) of #5 exported"),
        "{}",
        run.stderr
    );
    let file = std::fs::read_to_string(repo.root.join(".arev/suppressions.toml")).unwrap();
    assert!(file.contains(&format!("fingerprint = \"{fp2}\"")), "{file}");
    assert!(
        file.contains("wont-fix: legacy API kept on purpose (dismissed by @dev on #5)"),
        "{file}"
    );
    assert!(
        file.contains("resolved: resolved the thread (dismissed by @lead on #5)"),
        "{file}"
    );
    assert!(
        !file.contains(&fp1),
        "a Reporter's dismissal is not exported"
    );
    // Exporting again adds nothing.
    export().assert_code(0);
    assert_eq!(
        std::fs::read_to_string(repo.root.join(".arev/suppressions.toml")).unwrap(),
        file
    );
}

#[test]
fn who_may_dismiss_comes_from_trusted_config_only() {
    let repo = TestRepo::new();
    let sha1 = head(&repo);
    let fake = FakeGithub::start(7, &sha1, &[("src/lib.rs", WHOLE_FILE)]);
    let dir1 = {
        let run = gh(
            review(&repo, &[2], "github"),
            &fake,
            &event(&repo, &sha1),
            fake_github::TOKEN,
        )
        .run();
        run.assert_code(1);
        newest_run(&repo)
    };
    let fp2 = fp_on(&dir1, 2);
    let t2 = gh_root(&fake, &fp2);
    fake.reply_as(
        t2["id"].as_u64().unwrap(),
        "mallory",
        "CONTRIBUTOR",
        "arev: wont-fix not my problem",
    );
    let publish = |extra: &[&str]| {
        let mut args = vec![
            "publish",
            "github",
            dir1.to_str().unwrap(),
            "--fail-on",
            "low",
        ];
        args.extend_from_slice(extra);
        gh(
            repo.arev().args(&args),
            &fake,
            &event(&repo, &sha1),
            fake_github::TOKEN,
        )
        .run()
    };
    // By default a contributor's command counts for nothing: the finding still gates.
    publish(&[]).assert_code(1);
    assert!(dismissed(&dir1, "github").is_empty());
    // The repository (which the pull request can change) may not widen it: exit 2.
    repo.write("arev.toml", "[publish]\ndismiss_by = \"anyone\"\n");
    let refused = publish(&[]);
    refused.assert_code(2);
    assert!(
        refused.stderr.contains("publish.dismiss_by") && refused.stderr.contains("trusted config"),
        "{}",
        refused.stderr
    );
    std::fs::remove_file(repo.root.join("arev.toml")).unwrap();
    // Trusted config may: then anyone's command dismisses it, and it no longer gates.
    let trusted = repo.scratch.join("trusted.toml");
    std::fs::write(&trusted, "[publish]\ndismiss_by = \"anyone\"\n").unwrap();
    publish(&["--config", trusted.to_str().unwrap()]).assert_code(0);
    assert_eq!(
        dismissed(&dir1, "github"),
        [(fp2, "mallory".to_string(), "wont-fix".to_string())]
    );
}
