//! A reproducer's output holding terminal controls (docs/trust.md "Round five"): ESC, BEL,
//! BS, CR, DEL and the C1 controls reach no rendering raw — report.md, `arev report` in
//! every format, and the summary published on a fake forge — as the JSON escapes them.

use crate::fake_github::{FakeGithub, REPO, TOKEN};
use crate::harness::TestRepo;
use crate::publish::{event, head, newest_run, read_json, script, PATCH};
use serde_json::json;

/// Output with one control of each class: an ESC sequence (clear screen), an OSC 8 link
/// ended by BEL, a backspace, DEL, the one-character CSI (U+009B), NEL (U+0085), a CR.
const OUTPUT: &str = "FAILED test_parse\n\u{1b}[2J\u{1b}]8;;https://evil.example\u{7}click\u{1b}]8;;\u{7}\nback\u{8}\u{8}space \u{7f} \u{9b}31mred \u{85}next\roverwritten\n";

/// Whether `s` holds a control character a terminal acts on (anything but `\n` and `\t`).
fn raw_controls(s: &str) -> Vec<char> {
    s.chars()
        .filter(|c| c.is_control() && *c != '\n' && *c != '\t')
        .collect()
}

/// The run dir of a one-finding review whose report.json says a reproducer printed
/// [`OUTPUT`] on the reviewed code and on the base.
fn proved_run(repo: &TestRepo) -> std::path::PathBuf {
    repo.arev()
        .args(&["run", "src/lib.rs", "--max-rounds", "1"])
        .script(script(&[2]))
        .run()
        .assert_code(1);
    let dir = newest_run(repo);
    let mut report = read_json(&dir.join("report.json"));
    let run = |exit: i32| json!({"exit": exit, "duration_ms": 12, "output_tail": OUTPUT});
    report["prove"] = json!({"sandbox": "bwrap", "require_proof": false,
        "min_severity": "high", "max_findings": 3, "duration_ms": 40,
        "counts": {"reproduced": 1, "preexisting": 0, "not_reproduced": 0,
                   "inconclusive": 0, "not_attempted": 0}});
    report["confirmed"][0]["proof"] = json!({"status": "reproduced",
        "command": ["python3", "-m", "unittest", "test_arev_f1"],
        "files": ["test_arev_f1.py"], "head": run(1), "base": run(0), "sandbox": "bwrap"});
    std::fs::write(dir.join("report.json"), report.to_string()).unwrap();
    dir
}

#[test]
fn reproducer_output_reaches_no_rendering_with_its_controls() {
    let repo = TestRepo::new();
    let dir = proved_run(&repo);
    let id = dir.file_name().unwrap().to_str().unwrap().to_string();
    for format in ["markdown", "text", "github", "sarif", "json"] {
        let r = repo.arev().args(&["report", &id, "--format", format]).run();
        assert!(r.code == 0 || r.code == 1, "{format}: {}", r.stderr);
        assert_eq!(
            raw_controls(&r.stdout),
            Vec::<char>::new(),
            "{format}:\n{}",
            r.stdout
        );
        assert_eq!(
            raw_controls(&r.stderr),
            Vec::<char>::new(),
            "{format}:\n{}",
            r.stderr
        );
        if format == "markdown" {
            // The output is there, every control shown as its code.
            for shown in [
                r"\u{1b}[2J",
                r"\u{7}click",
                r"\u{8}",
                r"\u{7f}",
                r"\u{9b}31m",
                r"\u{85}",
                r"\u{d}",
            ] {
                assert!(r.stdout.contains(shown), "{shown} not in:\n{}", r.stdout);
            }
            assert!(r.stdout.contains("FAILED test_parse"), "{}", r.stdout);
        }
    }

    // The summary arev publishes on the pull request: the same rendering.
    let sha = head(&repo);
    let fake = FakeGithub::start(7, &sha, &[("src/lib.rs", PATCH)]);
    let ev = event(&repo, &sha);
    repo.arev()
        .args(&["publish", "github", dir.to_str().unwrap()])
        .env("GITHUB_TOKEN", TOKEN)
        .env("GITHUB_API_URL", &fake.api_url())
        .env("GITHUB_REPOSITORY", REPO)
        .env("GITHUB_EVENT_PATH", ev.to_str().unwrap())
        .run()
        .assert_code(0);
    let summary = fake
        .issue_comments()
        .into_iter()
        .map(|c| c["body"].as_str().unwrap().to_string())
        .next()
        .expect("a summary comment");
    assert!(summary.contains(r"\u{9b}31m"), "{summary}");
    assert_eq!(raw_controls(&summary), Vec::<char>::new(), "{summary}");
    for c in fake.review_comments() {
        assert_eq!(
            raw_controls(c["body"].as_str().unwrap()),
            Vec::<char>::new(),
            "{c}"
        );
    }
}
