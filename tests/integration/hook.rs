//! `arev hook prompt|stop` fed Claude Code hook JSON on stdin, every branch of the
//! Stop-hook decision table (docs/architecture.md §14.1) through the real binary (reviews
//! by the scripted fake agent as `claude`).

use crate::harness::{finding, ruling, TestRepo};
use serde_json::{json, Value};
use std::io::Write;
use std::process::Stdio;

const SESSION: &str = "0b5e1d4c-2f6a-4c11-9d7e-3f1a2b3c4d5e";
const CALC: &str = "pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n";

pub struct HookRun {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl HookRun {
    pub fn json(&self) -> Value {
        serde_json::from_str(self.stdout.trim()).unwrap_or_else(|e| {
            panic!(
                "stdout is not one JSON object ({e}): {:?}\n{}",
                self.stdout, self.stderr
            )
        })
    }
    fn silent(&self) {
        assert_eq!(self.code, 0, "{}", self.stderr);
        assert_eq!(
            self.stdout, "",
            "expected no output; stderr: {}",
            self.stderr
        );
    }
}

/// Run `arev hook <event>` in `repo` with `input` on stdin.
/// `arev hook stop` with a Stop input (`stop_hook_active` = `active`).
fn stop(repo: &TestRepo, active: bool, script: Value) -> HookRun {
    hook(repo, "stop", &stop_input(repo, active), script, &[])
}

/// Run a prepared `arev` invocation with `stdin`.
fn feed(a: crate::harness::Arev<'_>, stdin: &[u8]) -> HookRun {
    let mut c = a.command();
    c.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().expect("spawn arev hook");
    // arev drains stdin; ignore a race with an early exit all the same.
    let _ = child.stdin.take().unwrap().write_all(stdin);
    let out = child.wait_with_output().unwrap();
    HookRun {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

pub fn hook(
    repo: &TestRepo,
    event: &str,
    input: &Value,
    script: Value,
    env: &[(&str, &str)],
) -> HookRun {
    let mut a = repo.arev().args(&["hook", event]).script(script);
    for (k, v) in env {
        a = a.env(k, v);
    }
    feed(a, input.to_string().as_bytes())
}

fn prompt_input(repo: &TestRepo, prompt: &str) -> Value {
    json!({"session_id": SESSION, "transcript_path": "/nowhere.jsonl", "cwd": repo.root,
           "hook_event_name": "UserPromptSubmit", "prompt": prompt, "permission_mode": "default"})
}

fn stop_input(repo: &TestRepo, active: bool) -> Value {
    json!({"session_id": SESSION, "transcript_path": "/nowhere.jsonl", "cwd": repo.root,
           "prompt_id": "p1", "permission_mode": "default", "effort": {"level": "medium"},
           "hook_event_name": "Stop", "stop_hook_active": active,
           "last_assistant_message": "done", "background_tasks": [], "session_crons": []})
}

/// A review that confirms one finding of `severity` at src/calc.rs:2.
fn defect_script(severity: &str) -> Value {
    json!({"steps": [
        {"role": "enthusiast", "round": 1, "answer": {"findings": [
            finding("F1", "src/calc.rs", 2, severity, "arithmetic")]}},
        {"role": "judge", "round": 1, "answer": {"rulings": [
            ruling("F1", "src/calc.rs", 2, severity, "enthusiast")],
            "summary": "1 confirmed", "convergence": false, "next_round_model": null}}
    ]})
}

fn clean_script() -> Value {
    json!({"steps": []})
}

fn session_dir(repo: &TestRepo) -> std::path::PathBuf {
    repo.root.join(".arev/sessions").join(SESSION)
}

fn state(repo: &TestRepo) -> Value {
    serde_json::from_str(&std::fs::read_to_string(session_dir(repo).join("state.json")).unwrap())
        .unwrap()
}

fn dispatches(repo: &TestRepo) -> usize {
    std::fs::read_to_string(repo.scratch.join("fake.log"))
        .map(|s| s.lines().count())
        .unwrap_or(0)
}

fn enable(repo: &TestRepo) -> HookRun {
    let r = hook(
        repo,
        "prompt",
        &prompt_input(repo, "#arev add an adder"),
        clean_script(),
        &[],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    r
}

#[test]
fn not_enabled_is_silent_and_touches_nothing() {
    let repo = TestRepo::new();
    repo.write("src/calc.rs", CALC);
    hook(
        &repo,
        "prompt",
        &prompt_input(&repo, "add an adder"),
        clean_script(),
        &[],
    )
    .silent();
    stop(&repo, false, defect_script("high")).silent();
    assert!(
        !repo.root.join(".arev").exists(),
        "no state for a session that never opted in"
    );
    assert_eq!(dispatches(&repo), 0);
}

#[test]
fn prompt_prefix_enables_review_and_records_the_baseline() {
    let repo = TestRepo::new();
    repo.write("wip.txt", "uncommitted before the session\n");
    let r = enable(&repo);
    let out = r.json();
    assert!(
        out["systemMessage"]
            .as_str()
            .unwrap()
            .contains("review is on for this session"),
        "{out}"
    );
    assert_eq!(
        out["hookSpecificOutput"]["hookEventName"],
        "UserPromptSubmit"
    );
    assert!(out["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap()
        .contains("arev review is on"));
    let s = state(&repo);
    assert_eq!(s["enabled"], true);
    assert_eq!(s["enabled_by"], "prefix");
    assert_eq!(s["baseline_head"], repo.git(&["rev-parse", "HEAD"]).trim());
    assert_eq!(s["baseline_sha"].as_str().unwrap().len(), 64);
    let exclude = std::fs::read_to_string(repo.root.join(".git/info/exclude")).unwrap();
    assert!(exclude.contains(".arev/"));
    // Nothing changed since the baseline (the pre-existing wip is part of it): silent.
    stop(&repo, false, defect_script("high")).silent();
    assert_eq!(dispatches(&repo), 0, "no review of an unchanged diff");
    // `#arev off` turns it off again.
    let off = hook(
        &repo,
        "prompt",
        &prompt_input(&repo, "#arev off"),
        clean_script(),
        &[],
    );
    assert!(off.json()["systemMessage"]
        .as_str()
        .unwrap()
        .contains("off"));
    assert_eq!(state(&repo)["enabled"], false);
    repo.write("src/calc.rs", CALC);
    stop(&repo, false, defect_script("high")).silent();
}

#[test]
fn concern_blocks_then_unchanged_stop_hands_over_and_the_verdict_is_cached() {
    let repo = TestRepo::new();
    enable(&repo);
    repo.write("src/calc.rs", CALC);
    let r = stop(&repo, false, defect_script("high"));
    let out = r.json();
    assert_eq!(out["decision"], "block", "{out}");
    let reason = out["reason"].as_str().unwrap();
    assert!(
        reason.contains("[high] src/calc.rs:2 (arithmetic)"),
        "{reason}"
    );
    assert!(
        reason.contains("Edit: src/calc.rs:2 — replace \"unwrap()\" with \"?\""),
        "{reason}"
    );
    let report = reason
        .split("Full report: ")
        .nth(1)
        .unwrap()
        .lines()
        .next()
        .unwrap();
    assert!(std::path::Path::new(report).is_file(), "{report}");
    assert!(report.starts_with(repo.root.join(".arev/runs").to_str().unwrap()));
    let reviewed = dispatches(&repo);
    assert!(
        reviewed >= 3,
        "enthusiast, adversary and judge ran: {reviewed}"
    );
    let sha = state(&repo)["chain"]["last_blocked_sha"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(session_dir(&repo)
        .join(format!("verdicts/{sha}.json"))
        .is_file());
    assert_eq!(state(&repo)["chain"]["consecutive_blocks"], 1);

    // The agent stops again without changing anything: a blocker for the human, no review.
    let r = stop(&repo, true, defect_script("high"));
    let out = r.json();
    assert_eq!(out["continue"], false, "{out}");
    assert!(out["stopReason"]
        .as_str()
        .unwrap()
        .contains("without changing the diff"));
    assert!(out["systemMessage"]
        .as_str()
        .unwrap()
        .contains("src/calc.rs:2"));
    assert_eq!(
        dispatches(&repo),
        reviewed,
        "the same diff is never reviewed twice"
    );
    // Handed over: a further stop on the same diff stays silent.
    stop(&repo, true, defect_script("high")).silent();

    // A new human prompt and a new diff with the same defect: reviewed again (new sha);
    // the prompt reset the chain, so it blocks again.
    hook(
        &repo,
        "prompt",
        &prompt_input(&repo, "please go on"),
        clean_script(),
        &[],
    )
    .silent();
    assert_eq!(state(&repo)["chain"]["consecutive_blocks"], 0);
    repo.write("src/calc.rs", &format!("{CALC}// touched\n"));
    let r = stop(&repo, false, defect_script("high"));
    assert_eq!(r.json()["decision"], "block");
    assert!(dispatches(&repo) > reviewed);

    // The agent fixes it: the review comes back clean and the hook approves, visibly once.
    repo.write(
        "src/calc.rs",
        "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n",
    );
    let r = stop(&repo, true, clean_script());
    let out = r.json();
    assert!(
        out.get("decision").is_none() && out.get("continue").is_none(),
        "{out}"
    );
    assert!(
        out["systemMessage"]
            .as_str()
            .unwrap()
            .contains("no concerns"),
        "{out}"
    );
    assert_eq!(state(&repo)["chain"]["consecutive_blocks"], 0);
    // Cached clean verdict: silent, no dispatch.
    let n = dispatches(&repo);
    stop(&repo, false, defect_script("high")).silent();
    assert_eq!(dispatches(&repo), n);
    let log = std::fs::read_to_string(session_dir(&repo).join("log.jsonl")).unwrap();
    assert!(
        log.contains("\"decision\":\"block\"") && log.contains("\"decision\":\"approve\""),
        "{log}"
    );
}

#[test]
fn critical_is_a_blocker_at_once() {
    let repo = TestRepo::new();
    enable(&repo);
    repo.write("src/calc.rs", CALC);
    let out = stop(&repo, false, defect_script("critical")).json();
    assert_eq!(out["continue"], false, "{out}");
    assert!(out["stopReason"].as_str().unwrap().contains("critical"));
    let m = out["systemMessage"].as_str().unwrap();
    assert!(
        m.contains("[critical] src/calc.rs:2") && m.contains("Report: "),
        "{m}"
    );
}

#[test]
fn low_findings_are_asides_logged_not_blocks() {
    let repo = TestRepo::new();
    enable(&repo);
    repo.write("src/calc.rs", CALC);
    let out = stop(&repo, false, defect_script("low")).json();
    assert!(out.get("decision").is_none(), "{out}");
    assert!(
        out["systemMessage"]
            .as_str()
            .unwrap()
            .contains("1 aside logged"),
        "{out}"
    );
    let log = std::fs::read_to_string(session_dir(&repo).join("log.jsonl")).unwrap();
    assert!(
        log.contains("\"asides\":[{") && log.contains("src/calc.rs"),
        "{log}"
    );
}

#[test]
fn concern_standing_after_max_nudges_and_max_blocks_circuit_breaker() {
    let repo = TestRepo::new();
    repo.write("arev.toml", "[hook]\nmax_nudges = 2\nmax_blocks = 3\n");
    repo.commit("config");
    enable(&repo);
    // The agent keeps "fixing" around the defect: a new diff each time, same concern.
    let mut decisions = vec![];
    for i in 0..4 {
        repo.write("src/calc.rs", &format!("{CALC}// attempt {i}\n"));
        let out = stop(&repo, i > 0, defect_script("medium")).json();
        let end = out["continue"] == false;
        decisions.push(out);
        if end {
            break;
        }
    }
    assert_eq!(decisions.len(), 3, "{decisions:?}");
    assert_eq!(decisions[0]["decision"], "block");
    assert_eq!(decisions[1]["decision"], "block");
    assert!(
        decisions[2]["stopReason"]
            .as_str()
            .unwrap()
            .contains("still standing"),
        "{decisions:?}"
    );

    // max_blocks: different concerns every time (a new defect line each attempt).
    let repo = TestRepo::new();
    repo.write("arev.toml", "[hook]\nmax_nudges = 9\nmax_blocks = 2\n");
    repo.commit("config");
    enable(&repo);
    let mut outs = vec![];
    for i in 0..3 {
        let body = format!("pub fn add(a: i32, b: i32) -> i32 {{\n    a - b - {i}\n}}\n");
        repo.write("src/calc.rs", &body);
        outs.push(stop(&repo, i > 0, defect_script("high")).json());
    }
    assert_eq!(outs[0]["decision"], "block");
    assert_eq!(outs[1]["decision"], "block");
    assert_eq!(outs[2]["continue"], false, "{:?}", outs[2]);
    assert!(
        outs[2]["systemMessage"]
            .as_str()
            .unwrap()
            .contains("2 times in a row"),
        "{:?}",
        outs[2]
    );
}

#[test]
fn arev_disable_turns_every_hook_off() {
    let repo = TestRepo::new();
    enable(&repo);
    repo.write("src/calc.rs", CALC);
    let env = [("AREV_DISABLE", "1")];
    hook(
        &repo,
        "stop",
        &stop_input(&repo, false),
        defect_script("critical"),
        &env,
    )
    .silent();
    hook(
        &repo,
        "prompt",
        &prompt_input(&repo, "#arev off"),
        clean_script(),
        &env,
    )
    .silent();
    assert_eq!(dispatches(&repo), 0);
    assert_eq!(
        state(&repo)["enabled"],
        true,
        "the disabled prompt hook changed nothing"
    );
}

#[test]
fn mode_off_and_mode_always_from_config() {
    let repo = TestRepo::new();
    repo.write("arev.toml", "[hook]\nmode = \"off\"\n");
    repo.commit("config");
    hook(
        &repo,
        "prompt",
        &prompt_input(&repo, "#arev go"),
        clean_script(),
        &[],
    )
    .silent();
    repo.write("src/calc.rs", CALC);
    stop(&repo, false, defect_script("high")).silent();
    assert!(!session_dir(&repo).exists());

    let repo = TestRepo::new();
    repo.write("arev.toml", "[hook]\nmode = \"always\"\n");
    repo.commit("config");
    // No #arev needed: the first prompt records the baseline silently.
    hook(
        &repo,
        "prompt",
        &prompt_input(&repo, "add an adder"),
        clean_script(),
        &[],
    )
    .silent();
    assert_eq!(state(&repo)["enabled_by"], "always");
    repo.write("src/calc.rs", CALC);
    let out = stop(&repo, false, defect_script("high")).json();
    assert_eq!(out["decision"], "block", "{out}");
}

#[test]
fn corrupt_state_fails_open_visibly_and_is_moved_aside() {
    let repo = TestRepo::new();
    enable(&repo);
    repo.write("src/calc.rs", CALC);
    std::fs::write(
        session_dir(&repo).join("state.json"),
        "{\"schema_version\": 1, \"enab",
    )
    .unwrap();
    let out = stop(&repo, false, defect_script("high")).json();
    let m = out["systemMessage"].as_str().unwrap();
    assert!(m.contains("did NOT run") && m.contains("corrupt"), "{m}");
    assert!(out.get("decision").is_none() && out.get("continue").is_none());
    assert!(!session_dir(&repo).join("state.json").exists());
    let aside = std::fs::read_dir(session_dir(&repo))
        .unwrap()
        .flatten()
        .any(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("state.json.corrupt-")
        });
    assert!(aside);
    assert_eq!(dispatches(&repo), 0);
    // The next stop: the session has no state any more, so it is simply not enabled.
    stop(&repo, false, defect_script("high")).silent();
    // And `#arev` re-enables it with a fresh baseline.
    assert_eq!(
        enable(&repo).json()["hookSpecificOutput"]["hookEventName"],
        "UserPromptSubmit"
    );
}

#[test]
fn missing_claude_fails_open_with_the_reason() {
    let repo = TestRepo::new();
    enable(&repo);
    repo.write("src/calc.rs", CALC);
    let a = repo.arev().args(&["hook", "stop"]).without_agent();
    let r = feed(a, stop_input(&repo, false).to_string().as_bytes());
    assert_eq!(r.code, 0);
    let out = r.json();
    let m = out["systemMessage"].as_str().unwrap();
    assert!(
        m.contains("did NOT run") && m.contains("agent_dispatch_unavailable"),
        "{m}"
    );
    assert!(out.get("decision").is_none());
    // Not cached: a failed review is no verdict.
    assert!(!session_dir(&repo).join("verdicts").exists());
    // stop_hook_active on the same diff: arev does not retry in a loop.
    let r = stop(&repo, true, clean_script());
    r.silent();
}

#[test]
fn bad_input_and_no_repository_fail_open() {
    let repo = TestRepo::new();
    let r = feed(repo.arev().args(&["hook", "stop"]), b"{not json");
    assert_eq!(r.code, 0);
    let out = r.json();
    assert!(
        out["systemMessage"]
            .as_str()
            .unwrap()
            .contains("not the expected JSON"),
        "{out}"
    );

    let bad_id = json!({"session_id": "../../etc", "cwd": repo.root, "stop_hook_active": false});
    let out = hook(&repo, "stop", &bad_id, clean_script(), &[]).json();
    assert!(
        out["systemMessage"]
            .as_str()
            .unwrap()
            .contains("session_id"),
        "{out}"
    );

    let outside = tempfile::tempdir().unwrap();
    let cwd = outside.path().canonicalize().unwrap();
    std::fs::write(cwd.join("arev.toml"), "[hook]\nmode = \"always\"\n").unwrap();
    let input = json!({"session_id": SESSION, "cwd": cwd, "stop_hook_active": false});
    let out = hook(&repo, "stop", &input, clean_script(), &[]).json();
    assert!(
        out["systemMessage"]
            .as_str()
            .unwrap()
            .contains("not inside a git repository"),
        "{out}"
    );
    let input = json!({"session_id": SESSION, "cwd": cwd, "prompt": "#arev go"});
    let out = hook(&repo, "prompt", &input, clean_script(), &[]).json();
    assert!(
        out["systemMessage"]
            .as_str()
            .unwrap()
            .contains("not inside a git repository"),
        "{out}"
    );
}
