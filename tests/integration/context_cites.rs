//! Context citations (docs/contracts.md §22.2) through the real binary and the fake agent: a
//! citation quoting a caller's real line is kept and shown in every rendering; a fabricated one
//! (wrong text, past the end, an ignored, untracked or `.git` file, a path leaving the
//! repository) is dropped and counted `context_cite_invalid`, never an abort; an Adversary
//! guard whose citation fails is dropped from the map, and the Judge's dismissal resting on it
//! is not upheld.

use crate::harness::{finding, ruling, Run, TestRepo};
use crate::sarif_schema;
use serde_json::{json, Value};

/// The caller of `src/lib.rs`'s `parse`, tracked and unchanged: line 4 is its guard, line 5
/// the call.
const APP_RS: &str = "use crate::parse;\n\npub fn port(s: &str) -> u32 {\n    if s.is_empty() { return 0; }\n    parse(s) + 1\n}\n";

/// A repository with the caller committed, an ignored secret, an untracked file.
fn repo() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("src/app.rs", APP_RS).commit("caller");
    repo.write("ignored.txt", "SECRET=hunter2-do-not-cite\n");
    repo.write("src/untracked.rs", "pub fn scratch() -> u32 { 7 }\n");
    repo
}

fn cite(file: &str, line: u32, text: &str) -> Value {
    json!({"file": file, "line": line, "text": text})
}

fn with_context(mut v: Value, context: Value) -> Value {
    v["context"] = context;
    v
}

fn judge(rulings: Vec<Value>) -> Value {
    json!({"role": "judge", "answer": {"rulings": rulings, "summary": "s",
        "convergence": false, "next_round_model": null}})
}

fn run(repo: &TestRepo, steps: Vec<Value>) -> Run {
    repo.arev()
        .args(&["run", "src/lib.rs", "--max-rounds", "1"])
        .script(json!({ "steps": steps }))
        .run()
}

fn errors(r1: &Value, code: &str) -> usize {
    r1["errors"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| *e == code)
        .count()
}

/// `arev report <id> --format <format>` of the run.
fn render(repo: &TestRepo, run: &Run, format: &str) -> String {
    let id = run.report()["run_id"].as_str().unwrap().to_string();
    let r = repo.arev().args(&["report", &id, "--format", format]).run();
    r.assert_code(0);
    r.stdout
}

#[test]
fn a_citation_of_the_callers_real_line_is_kept_and_shown_everywhere() {
    let repo = repo();
    let f = with_context(
        finding("F1", "src/lib.rs", 2, "high", "error-handling"),
        json!([cite("src/app.rs", 5, "parse(s) + 1")]),
    );
    let r = with_context(
        ruling("F1", "src/lib.rs", 2, "high", "enthusiast"),
        // Whitespace differs from the file's: compared normalised, kept as quoted.
        json!([cite("./src/app.rs", 5, "   parse(s)  + 1 ")]),
    );
    let run = run(
        &repo,
        vec![
            json!({"role": "enthusiast", "answer": {"findings": [f]}}),
            judge(vec![r]),
        ],
    );
    run.assert_code(1);
    let r1 = run.json("round-1.json");
    assert_eq!(errors(&r1, "context_cite_invalid"), 0, "{}", r1["errors"]);
    assert!(r1["counts"].get("context_cite_invalid").is_none());

    // JSON: the finding's citation, the ruling's folded into it (the same line, once).
    let report = run.report();
    let confirmed = &report["confirmed"][0];
    assert_eq!(
        confirmed["context"],
        json!([cite("src/app.rs", 5, "parse(s) + 1")])
    );
    // Text: a `see:` line under the finding.
    assert!(
        run.stdout
            .contains("  see:      src/app.rs:5 — parse(s) + 1\n"),
        "{}",
        run.stdout
    );
    // Markdown: a link to the line, the quote as code.
    let md = std::fs::read_to_string(run.run_dir().join("report.md")).unwrap();
    assert!(
        md.contains("see [`src/app.rs:5`](src/app.rs#L5) `parse(s) + 1`"),
        "{md}"
    );
    // SARIF: a related location with the line and the quote, valid against the schema.
    let sarif = sarif_schema::assert_valid(&render(&repo, &run, "sarif"), "context-cites");
    let rel = &sarif["runs"][0]["results"][0]["relatedLocations"][0]["physicalLocation"];
    assert_eq!(rel["artifactLocation"]["uri"], "src/app.rs");
    assert_eq!(rel["region"]["startLine"], 5);
    assert_eq!(rel["region"]["snippet"]["text"], "parse(s) + 1");
}

#[test]
fn fabricated_citations_are_dropped_and_counted_not_an_abort() {
    let repo = repo();
    let f1 = with_context(
        finding("F1", "src/lib.rs", 2, "high", "error-handling"),
        json!([
            cite("src/app.rs", 5, "parse(s) - 1"),
            cite("src/app.rs", 99, "parse(s) + 1"),
            cite("ignored.txt", 1, "SECRET=hunter2-do-not-cite"),
            cite("src/untracked.rs", 1, "pub fn scratch() -> u32 { 7 }"),
            cite("src/../../outside.rs", 1, "pub fn outside() {}"),
        ]),
    );
    let f2 = with_context(
        finding("F2", "src/lib.rs", 5, "medium", "logic"),
        json!([
            cite(".git/config", 1, "[core]"),
            cite("/etc/hostname", 1, "localhost"),
        ]),
    );
    let run = run(
        &repo,
        vec![
            json!({"role": "enthusiast", "answer": {"findings": [f1, f2]}}),
            judge(vec![
                ruling("F1", "src/lib.rs", 2, "high", "enthusiast"),
                ruling("F2", "src/lib.rs", 5, "medium", "enthusiast"),
            ]),
        ],
    );
    // The review went on: both findings were judged and confirmed, without citations.
    run.assert_code(1);
    let r1 = run.json("round-1.json");
    assert_eq!(r1["counts"]["context_cite_invalid"], 7);
    assert_eq!(errors(&r1, "context_cite_invalid"), 7);
    let report = run.report();
    assert_eq!(report["confirmed"].as_array().unwrap().len(), 2);
    for f in report["confirmed"].as_array().unwrap() {
        assert!(f.get("context").is_none(), "{f}");
    }
    let reasons = r1["decision"]["reasons"].to_string();
    for why in [
        "src/app.rs:5 (the quoted text is not on that line)",
        "src/app.rs:99 (no such line)",
        "ignored.txt:1 (not in the context scope)",
        "src/untracked.rs:1 (not in the context scope)",
        "src/../../outside.rs:1 (not a repository-relative path)",
        ".git/config:1 (not in the context scope)",
        "/etc/hostname:1 (not a repository-relative path)",
    ] {
        assert!(reasons.contains(why), "{why}: {reasons}");
    }
    // The ignored file's secret is in no rendering.
    let md = std::fs::read_to_string(run.run_dir().join("report.md")).unwrap();
    for out in [&run.stdout, &md, &report.to_string()] {
        assert!(!out.contains("hunter2"), "{out}");
    }
}

/// The Adversary maps a caller's guard; the Judge dismisses the finding on it (cites the zone).
fn guarded(repo: &TestRepo, guard: Value) -> Run {
    let zone = json!({"id": "Z1", "file": "src/lib.rs", "line_start": 1, "line_end": 3,
        "reason": "the only caller rejects empty input first", "evidence": "L2: s.parse()",
        "context": [guard]});
    let mut dismissal = ruling("F1", "src/lib.rs", 2, "dismissed", "adversary");
    dismissal["cites"] = json!(["Z1"]);
    run(
        repo,
        vec![
            json!({"role": "enthusiast", "answer": {"findings": [
                finding("F1", "src/lib.rs", 2, "high", "input-validation")]}}),
            json!({"role": "adversary", "answer": {"heuristics": [], "safe_zones": [zone]}}),
            judge(vec![dismissal]),
        ],
    )
}

/// The Judge's first prompt of round 1.
fn judge_prompt(run: &Run) -> String {
    let r1 = run.json("round-1.json");
    let dir = r1["dispatches"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["role"] == "judge")
        .map(|d| d["dir"].as_str().unwrap().to_string())
        .unwrap();
    std::fs::read_to_string(run.run_dir().join(dir).join("prompt.md")).unwrap()
}

#[test]
fn a_failed_guard_citation_drops_the_zone_and_the_dismissal_resting_on_it() {
    // The guard quoted as it is: the zone stands, the dismissal is upheld and shows the guard.
    let repo = repo();
    let run = guarded(
        &repo,
        cite("src/app.rs", 4, "if s.is_empty() { return 0; }"),
    );
    run.assert_code(0);
    let r1 = run.json("round-1.json");
    assert_eq!(errors(&r1, "context_cite_invalid"), 0, "{}", r1["errors"]);
    assert!(judge_prompt(&run).contains("Z1"));
    let report = run.report();
    let debunked = &report["debunked"][0];
    assert_eq!(debunked["id"], "F1");
    assert_eq!(
        debunked["context"],
        json!([cite("src/app.rs", 4, "if s.is_empty() { return 0; }")])
    );
    let md = std::fs::read_to_string(run.run_dir().join("report.md")).unwrap();
    assert!(
        md.contains("see [`src/app.rs:4`](src/app.rs#L4) `if s.is_empty() { return 0; }`"),
        "{md}"
    );

    // A guard the caller does not have: the zone is dropped before the Judge sees it, and
    // the dismissal citing it is not upheld (unresolved after the one re-prompt).
    let repo = self::repo();
    let run = guarded(
        &repo,
        cite("src/app.rs", 4, "if s.len() > 16 { return 0; }"),
    );
    assert!(run.meta()["abort_reason"].is_null(), "not an abort");
    let r1 = run.json("round-1.json");
    assert_eq!(r1["counts"]["map_entries_dropped"], 1);
    assert_eq!(r1["counts"]["context_cite_invalid"], 1);
    assert_eq!(errors(&r1, "context_cite_invalid"), 1);
    assert_eq!(errors(&r1, "judge_invalid_cites"), 1);
    assert!(r1["adversary"]["safe_zones"].as_array().unwrap().is_empty());
    assert!(!judge_prompt(&run).contains("the only caller rejects empty input"));
    let reasons = r1["decision"]["reasons"].to_string();
    assert!(
        reasons.contains(
            "Adversary safe zone Z1 dropped from the map before the Judge: none of its context citations held"
        ),
        "{reasons}"
    );
    assert!(
        reasons.contains("`Z1` was dropped from the Adversary's map"),
        "{reasons}"
    );
    let report = run.report();
    assert!(report["debunked"].as_array().unwrap().is_empty());
    assert_eq!(report["unresolved"][0]["id"], "F1");
    // The Judge was told why when re-prompted.
    let judges: Vec<&Value> = r1["dispatches"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["role"] == "judge")
        .collect();
    assert_eq!(judges.len(), 2, "one re-prompt");
    assert!(judges[0]["gates"]["reprompt"]
        .as_str()
        .unwrap()
        .contains("was dropped from the Adversary's map"));
}

/// Citations are judged against the content the scope pinned, not the working tree at check
/// time: the Enthusiast answers only after the test has edited two context files (its pass
/// is held by a gate the test opens once the pin is made and the edits are done). The
/// committed caller is read back from the repository's objects: a quote of its pinned line
/// is kept, a quote of its new text is dropped. A file already modified at pin time and
/// modified again has no stored pinned content: its citation is dropped, `changed since the
/// pin`.
#[test]
fn citations_are_judged_against_the_pinned_content() {
    let repo = repo();
    // Tracked, modified in the working tree before the run (its pinned blob is not stored).
    repo.write("src/helper.rs", "pub fn helper() -> u32 { 1 }\n")
        .commit("helper");
    repo.write("src/helper.rs", "pub fn helper() -> u32 { 2 }\n");
    let go = repo.scratch.join("go");
    let f = with_context(
        finding("F1", "src/lib.rs", 2, "high", "error-handling"),
        json!([
            cite("src/app.rs", 5, "parse(s) + 1"),
            cite("src/app.rs", 5, "parse(s) + 2"),
            cite("src/helper.rs", 1, "pub fn helper() -> u32 { 2 }"),
        ]),
    );
    let steps = vec![
        json!({"role": "enthusiast", "answer": {"findings": [f]},
               "wait_for": {"path": go.display().to_string()}}),
        judge(vec![ruling("F1", "src/lib.rs", 2, "high", "enthusiast")]),
    ];
    let arev = repo
        .arev()
        .args(&["run", "src/lib.rs", "--max-rounds", "1", "--format", "json"])
        .script(json!({ "steps": steps }));
    let start = std::time::Instant::now();
    let child = arev
        .command()
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The Enthusiast started: the target and its scope are pinned.
    let log = repo.scratch.join("fake.log");
    while !std::fs::read_to_string(&log).is_ok_and(|l| l.contains("\"role\":\"enthusiast\"")) {
        assert!(
            start.elapsed().as_secs() < 120,
            "the Enthusiast never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    repo.write(
        "src/app.rs",
        &APP_RS.replace("parse(s) + 1", "parse(s) + 2"),
    )
    .write("src/helper.rs", "pub fn helper() -> u32 { 3 }\n");
    std::fs::write(&go, "").unwrap();
    let out = child.wait_with_output().unwrap();
    let run = Run::new(&repo, out, start.elapsed());
    run.assert_code(1);
    let r1 = run.json("round-1.json");
    assert_eq!(errors(&r1, "context_cite_invalid"), 2, "{}", r1["errors"]);
    let reasons = r1["decision"]["reasons"].to_string();
    assert!(
        reasons.contains("src/app.rs:5 (the quoted text is not on that line)")
            && reasons.contains("src/helper.rs:1 (changed since the pin)"),
        "{reasons}"
    );
    assert_eq!(
        run.report()["confirmed"][0]["context"],
        json!([cite("src/app.rs", 5, "parse(s) + 1")])
    );
}

/// An incremental review re-checks the context citations of what it carries over against
/// its own pin: when the caller a carried finding cites has changed, that finding's file is
/// reviewed again (its verdict rested on context that moved) and the finding is not carried;
/// a carried file whose findings cite nothing stays carried.
#[test]
fn incremental_carry_over_rechecks_context_citations() {
    let repo = repo();
    let body = |f: &str| format!("pub fn {f}(s: &str) -> u32 {{\n    s.parse().unwrap()\n}}\n");
    repo.write("src/a.rs", &body("a"))
        .write("src/b.rs", &body("b"))
        .commit("a and b");
    let args = [
        "run",
        "src/a.rs",
        "src/b.rs",
        "--max-rounds",
        "1",
        "--passes",
        "1",
        "--format",
        "json",
    ];
    let fa = with_context(
        finding("F1", "src/a.rs", 2, "high", "error-handling"),
        json!([cite("src/app.rs", 5, "parse(s) + 1")]),
    );
    let fb = finding("F2", "src/b.rs", 2, "high", "error-handling");
    let first = repo
        .arev()
        .args(&args)
        .script(json!({"steps": [
            {"role": "enthusiast", "answer": {"findings": [fa, fb]}},
            judge(vec![
                ruling("F1", "src/a.rs", 2, "high", "enthusiast"),
                ruling("F2", "src/b.rs", 2, "high", "enthusiast"),
            ]),
        ]}))
        .run();
    first.assert_code(1);
    let base = first.report();
    assert_eq!(base["confirmed"].as_array().unwrap().len(), 2, "{base}");
    let base_id = base["run_id"].as_str().unwrap().to_string();
    // The caller changes: the cited line no longer says what the finding quoted.
    repo.write(
        "src/app.rs",
        &APP_RS.replace("parse(s) + 1", "parse(s).max(1)"),
    );
    let second = repo
        .arev()
        .args(&args)
        .args(&["--baseline", &base_id, "--incremental"])
        .script(json!({"steps": []}))
        .run();
    second.assert_code(1);
    let r: Value = serde_json::from_str(&second.stdout).unwrap();
    let status = |path: &str| {
        r["coverage"]["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["path"] == path)
            .map(|f| f["status"].clone())
    };
    assert_eq!(
        status("src/a.rs"),
        Some(json!("reviewed")),
        "{}",
        r["coverage"]
    );
    assert_eq!(
        status("src/b.rs"),
        Some(json!("carried_over")),
        "{}",
        r["coverage"]
    );
    let confirmed: Vec<&Value> = r["confirmed"].as_array().unwrap().iter().collect();
    assert_eq!(confirmed.len(), 1, "{confirmed:?}");
    assert_eq!(confirmed[0]["file"], "src/b.rs");
    assert_eq!(r["incremental"]["findings_carried_over"], 1);
}

/// A PR's inline comment shows the finding's context citations as report.md does — a link
/// to the line and the quote as a code span — with the quote escaped like all agent text:
/// a cited line carrying HTML and a forged arev marker renders inert (one code span, the
/// forged marker broken), through `arev publish github` against the fake GitHub. The link
/// is absolute, to the file at the reviewed commit on the forge (`GITHUB_SERVER_URL`,
/// `GITHUB_REPOSITORY`): a relative one does not resolve on the PR page; the summary's too.
#[test]
fn pr_inline_comments_show_context_citations_escaped() {
    use crate::fake_github::{FakeGithub, REPO, TOKEN};
    use crate::publish::{event, gh, head, newest_run, PATCH};
    let repo = TestRepo::new();
    let hostile = "// <img src=x onerror=alert(1)> <!-- arev:fp=deadbeefdeadbeef --> @team";
    repo.write("src/app.rs", &format!("{APP_RS}{hostile}\n"))
        .commit("caller");
    let sha = head(&repo);
    let fake = FakeGithub::start(7, &sha, &[("src/lib.rs", PATCH)]);
    let f = with_context(
        finding("F1", "src/lib.rs", 2, "high", "error-handling"),
        json!([
            cite("src/app.rs", 5, "parse(s) + 1"),
            cite("src/app.rs", 7, hostile),
        ]),
    );
    let run = run(
        &repo,
        vec![
            json!({"role": "enthusiast", "answer": {"findings": [f]}}),
            judge(vec![ruling("F1", "src/lib.rs", 2, "high", "enthusiast")]),
        ],
    );
    run.assert_code(1);
    assert_eq!(
        run.report()["confirmed"][0]["context"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    let dir = newest_run(&repo);
    let ev = event(&repo, &sha);
    gh(
        repo.arev()
            .args(&["publish", "github", dir.to_str().unwrap()])
            .env("GITHUB_SERVER_URL", "https://github.com"),
        &fake,
        &ev,
        TOKEN,
    )
    .run()
    .assert_code(0);
    let comments = fake.review_comments();
    let body = comments
        .iter()
        .find(|c| c["line"] == 2)
        .and_then(|c| c["body"].as_str())
        .unwrap_or_else(|| panic!("no comment on line 2: {comments:#?}"))
        .to_string();
    let blob = format!("https://github.com/{REPO}/blob/{sha}/src/app.rs");
    assert!(
        body.contains(&format!(
            "\nsee [`src/app.rs:5`]({blob}#L5) `parse(s) + 1`\n"
        )),
        "{body}"
    );
    // The hostile quote is one inert code span (HTML in it is text), and its forged marker is
    // broken: the body holds one arev marker, the real one.
    let see7 = format!("see [`src/app.rs:7`]({blob}#L7) ");
    let line = body
        .lines()
        .find(|l| l.starts_with(&see7))
        .unwrap_or_else(|| panic!("{body}"));
    let span = line.trim_start_matches(&see7);
    assert!(
        span.starts_with('`') && span.ends_with('`') && span[1..span.len() - 1].find('`').is_none(),
        "{line}"
    );
    assert_eq!(body.matches("<!-- arev:").count(), 1, "{body}");
    assert!(!body.contains("<!-- arev:fp=deadbeef"), "{body}");
    // The summary links the same way.
    let summary = fake.issue_comments();
    let summary = summary
        .iter()
        .find_map(|c| c["body"].as_str())
        .unwrap_or_else(|| panic!("no summary: {summary:#?}"));
    assert!(
        summary.contains(&format!("[`src/app.rs:5`]({blob}#L5)")),
        "{summary}"
    );
}
