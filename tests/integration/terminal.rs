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

/// Agent text with DEL and C1 controls (U+009B is a one-character CSI, U+0085 NEL) reaches
/// every JSON document arev prints — `run`, `report` and `result --format json`, SARIF — as
/// JSON escapes (`\u009b`), never raw; a JSON reader reads the same text back.
#[test]
fn json_on_stdout_escapes_del_and_c1_controls_from_agent_text() {
    let hostile = "bad\u{9b}2J\u{7f}\u{85}\u{9f}end";
    let mut f = finding("F1", "src/lib.rs", 2, "high", "error-handling");
    f["description"] = json!(hostile);
    let mut r = ruling("F1", "src/lib.rs", 2, "high", "enthusiast");
    r["resolution"] = json!(format!("judge {hostile}"));
    let script = json!({"steps": [
        {"role": "enthusiast", "round": 1, "answer": {"findings": [f]}},
        {"role": "judge", "round": 1, "answer": {"rulings": [r],
            "summary": "1 confirmed", "convergence": false, "next_round_model": null}},
        {"role": "adversary", "round": 2, "hang": true}
    ]});
    let repo = TestRepo::new();
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs", "-q", "--format", "json"])
        .script(script)
        .run();
    run.assert_code(1);
    let dir = run.run_dir().display().to_string();
    let raw = |s: &str| s.chars().any(|c| ('\u{7f}'..='\u{9f}').contains(&c));
    let check = |what: &str, stdout: &str| {
        assert!(!raw(stdout), "{what}: a raw DEL/C1 control on stdout");
        assert!(
            stdout.contains("bad\\u009b2J\\u007f\\u0085\\u009fend"),
            "{what}: {stdout}"
        );
        serde_json::from_str::<serde_json::Value>(stdout).expect("JSON")
    };
    let v = check("run --format json", &run.stdout);
    assert_eq!(v["confirmed"][0]["description"], hostile);
    assert_eq!(v["confirmed"][0]["resolution"], format!("judge {hostile}"));
    // The run dir's records hold the escapes too.
    let file = std::fs::read_to_string(run.run_dir().join("report.json")).unwrap();
    assert!(!raw(&file), "report.json holds a raw control");
    for args in [
        ["report", dir.as_str(), "--format", "json"],
        ["result", dir.as_str(), "--format", "json"],
        ["report", dir.as_str(), "--format", "sarif"],
    ] {
        let out = repo.arev().args(&args).run();
        assert!(out.code == 1 || out.code == 0, "{args:?}: {}", out.stderr);
        check(&args.join(" "), &out.stdout);
    }
    // A report.json that holds them raw (an older arev's, someone else's run dir) is printed
    // escaped all the same.
    let raw_file = file
        .replace("\\u009b", "\u{9b}")
        .replace("\\u0085", "\u{85}");
    assert!(raw(&raw_file));
    std::fs::write(run.run_dir().join("report.json"), raw_file).unwrap();
    let out = repo
        .arev()
        .args(&["report", &dir, "--format", "json"])
        .run();
    check("report of a raw report.json", &out.stdout);
}
