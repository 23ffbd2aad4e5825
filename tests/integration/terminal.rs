//! The terminal report a person acts on: each finding's description, the Judge's resolution
//! and the fix, a cost line; ANSI colour on a terminal only (`NO_COLOR` honoured), never in
//! a pipe or a file — the tracing WARN lines included.

use crate::harness::{finding, ruling, Arev, TestRepo};
use serde_json::json;
use std::process::Command;

fn confirmed_script() -> serde_json::Value {
    json!({"steps": [
        {"role": "enthusiast", "round": 1, "answer": {"findings": [finding("F1", "src/lib.rs", 2, "high", "error-handling")]}},
        {"role": "judge", "round": 1, "answer": {"rulings": [ruling("F1", "src/lib.rs", 2, "high", "enthusiast")],
            "summary": "1 confirmed", "convergence": false, "next_round_model": null}},
        // Round 2 finds nothing: its Adversary, which never gets past its start, is always
        // the one cancelled, having spent nothing, so the report's cost does not depend on
        // which answers first (a cancelled agent's spend is what its events show).
        {"role": "adversary", "round": 2, "hang": true}
    ]})
}

/// `arev` run under a pseudo-terminal (util-linux `script`): what the terminal showed
/// (stdout and stderr together) and the exit code.
fn on_a_terminal(arev: Arev<'_>) -> (i32, String) {
    let inner = arev.command();
    let mut line = format!("'{}'", inner.get_program().to_string_lossy());
    for a in inner.get_args() {
        line.push_str(&format!(" '{}'", a.to_string_lossy()));
    }
    let mut cmd = Command::new("script");
    cmd.args(["-qec", &line, "/dev/null"]).env_clear();
    for (k, v) in inner.get_envs() {
        if let Some(v) = v {
            cmd.env(k, v);
        }
    }
    if let Some(d) = inner.get_current_dir() {
        cmd.current_dir(d);
    }
    let out = cmd.output().expect("script(1) from util-linux");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).replace("\r\n", "\n"),
    )
}

#[test]
fn text_report_says_what_the_defect_is_and_how_to_fix_it() {
    let repo = TestRepo::new();
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs", "-q"])
        .script(confirmed_script())
        .run();
    run.assert_code(1);
    let dir = run.run_dir().display().to_string();
    assert!(!run.stdout.contains('\u{1b}'), "no colour into a pipe");
    insta::assert_snapshot!("terminal_report", run.stdout.replace(&dir, "[run_dir]"));
}

#[test]
fn text_report_is_coloured_on_a_terminal_unless_no_color() {
    let repo = TestRepo::new();
    let (code, screen) = on_a_terminal(
        repo.arev()
            .args(&["run", "src/lib.rs", "-q"])
            .script(confirmed_script()),
    );
    assert_eq!(code, 1, "{screen}");
    assert!(screen.contains("\u{1b}[31m[HIGH]\u{1b}[0m"), "{screen:?}");
    assert!(screen.contains("defect:"), "{screen}");

    let (code, screen) = on_a_terminal(
        repo.arev()
            .args(&["run", "src/lib.rs", "-q"])
            .env("NO_COLOR", "1")
            .script(confirmed_script()),
    );
    assert_eq!(code, 1, "{screen}");
    assert!(!screen.contains('\u{1b}'), "NO_COLOR: {screen:?}");
    assert!(screen.contains("[HIGH] src/lib.rs:2"), "{screen}");

    // On a terminal, the file written with --out stays plain.
    let out = repo.scratch.join("report.txt");
    let (code, _) = on_a_terminal(
        repo.arev()
            .args(&["run", "src/lib.rs", "-q", "--out", out.to_str().unwrap()])
            .script(confirmed_script()),
    );
    assert_eq!(code, 1);
    let file = std::fs::read_to_string(&out).unwrap();
    assert!(
        file.contains("[HIGH] src/lib.rs:2") && !file.contains('\u{1b}'),
        "{file:?}"
    );
}

/// A WARN line of the log (here: a malformed answer, re-prompted) in a redirected stderr is
/// plain text.
#[test]
fn warnings_carry_no_escape_codes_into_a_redirected_stderr() {
    let repo = TestRepo::new();
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs"])
        .script(json!({"steps": [
            {"role": "enthusiast", "round": 1, "retry": false, "answer_text": "{\"findings\": [oops"}
        ]}))
        .run();
    run.assert_code(0);
    assert!(run.stderr.contains("WARN"), "{}", run.stderr);
    assert!(!run.stderr.contains('\u{1b}'), "{:?}", run.stderr);
}
