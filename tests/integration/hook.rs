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
    // The verdict is in the verdict cache (the one `arev run` keeps), under the diff's sha.
    let cached: Vec<Value> = std::fs::read_dir(repo.scratch.join("hook-cache/arev/verdicts"))
        .unwrap()
        .map(|e| {
            serde_json::from_str(&std::fs::read_to_string(e.unwrap().path()).unwrap()).unwrap()
        })
        .collect();
    assert_eq!(cached.len(), 1);
    assert_eq!(cached[0]["key"]["target"]["sha256"], sha.as_str());
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
        // The preflight's line (docs/contracts.md §20.4): the CLI, its install command.
        m.contains("did NOT run")
            && m.contains("`claude` is not on PATH")
            && m.contains("npm install -g @anthropic-ai/claude-code@2.1.330"),
        "{m}"
    );
    assert!(out.get("decision").is_none());
    // Not cached: a failed review is no verdict.
    assert!(!repo.scratch.join("hook-cache/arev/verdicts").exists());
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

/// The run dirs under `.arev/runs`, oldest first.
/// The run dirs, oldest first: by meta.json's `started_at` (milliseconds), then by name —
/// two runs started in the same second have ids whose order is random.
fn run_dirs(repo: &TestRepo) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(repo.root.join(".arev/runs"))
        .map(|rd| rd.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    let started = |p: &std::path::Path| {
        std::fs::read(p.join("meta.json"))
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
            .and_then(|m| m["started_at"].as_str().map(str::to_string))
            .unwrap_or_default()
    };
    v.sort_by_key(|p| (started(p), p.clone()));
    v
}

/// Every `prompt.md` of the newest run dir, by agent dir (`r1/enthusiast-p1`, …).
fn prompts_of_last_run(repo: &TestRepo) -> Vec<(String, String)> {
    let run = run_dirs(repo).pop().expect("a run dir");
    let mut out = vec![];
    let agents = run.join("agents");
    for round in std::fs::read_dir(&agents).unwrap().flatten() {
        for agent in std::fs::read_dir(round.path()).unwrap().flatten() {
            let p = agent.path().join("prompt.md");
            if let Ok(text) = std::fs::read_to_string(&p) {
                let name = p
                    .parent()
                    .unwrap()
                    .strip_prefix(&agents)
                    .unwrap()
                    .display()
                    .to_string();
                out.push((name, text));
            }
        }
    }
    out.sort();
    out
}

fn human(repo: &TestRepo, text: &str) -> HookRun {
    hook(
        repo,
        "prompt",
        &prompt_input(repo, text),
        clean_script(),
        &[],
    )
}

/// Uncommitted work that predates `#arev` — a modified tracked file, a staged new file and an
/// untracked file — is part of the baseline: the review sees only the session's own changes
/// (also inside a file that already had WIP), and the user's index, HEAD and branches are
/// byte-identical afterwards.
#[test]
fn pre_existing_wip_is_never_reviewed_or_blamed() {
    let repo = TestRepo::new();
    repo.write(
        "src/lib.rs",
        &format!(
            "{}// WIP_BEFORE: half-done by the user\n",
            crate::harness::LIB_RS
        ),
    );
    repo.write("staged.rs", "pub fn staged_before() {}\n");
    repo.git(&["add", "staged.rs"]);
    repo.write("notes.txt", "untracked notes from before\n");
    let before = repo.state();
    enable(&repo);
    assert_eq!(
        state(&repo)["baseline_tree"].as_str().unwrap().len(),
        40,
        "a tree oid"
    );
    // Nothing of the session yet: the WIP alone is no change.
    stop(&repo, false, defect_script("critical")).silent();
    assert_eq!(dispatches(&repo), 0, "the user's WIP is not reviewed");

    // The agent adds a file and appends to the file that already had WIP.
    repo.write("src/calc.rs", CALC);
    repo.write(
        "src/lib.rs",
        &format!(
            "{}// WIP_BEFORE: half-done by the user\npub fn agent_added() {{}}\n",
            crate::harness::LIB_RS
        ),
    );
    let out = stop(&repo, false, defect_script("high")).json();
    assert_eq!(out["decision"], "block", "{out}");
    let run = run_dirs(&repo).pop().unwrap();
    let patch = std::fs::read_to_string(run.join("target/diff.patch")).unwrap();
    assert!(patch.contains("+pub fn agent_added() {}"), "{patch}");
    assert!(
        patch.contains("diff --git a/src/calc.rs b/src/calc.rs"),
        "{patch}"
    );
    for before_session in [
        "WIP_BEFORE",
        "staged_before",
        "notes.txt",
        "untracked notes",
    ] {
        assert!(
            !patch.contains(&format!("+{before_session}"))
                && !patch.contains(&format!("b/{before_session}")),
            "{before_session} predates the session: {patch}"
        );
    }
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("report.json")).unwrap()).unwrap();
    assert_eq!(
        report["target"]["allowed_files"],
        json!(["src/calc.rs", "src/lib.rs"])
    );
    // The prompts tell the agents what the diff is against.
    let prompts = prompts_of_last_run(&repo);
    assert!(prompts[0]
        .1
        .contains("against a snapshot of it taken earlier"));

    // The user's repository: only the files the test itself wrote changed; the index (with
    // its staged file), HEAD and branches are byte-identical.
    let now = repo.state();
    assert!(now.index == before.index, ".git/index changed");
    assert_eq!(now.head, before.head);
    assert_eq!(now.head_commit, before.head_commit);
    assert_eq!(now.branches, before.branches);
    assert_eq!(
        repo.git(&["diff", "--cached", "--name-only"]).trim(),
        "staged.rs"
    );
}

/// After an approved stop the baseline moves to the approved state: the next stop reviews
/// only what changed since, and the approved review's asides are carried in the session.
#[test]
fn baseline_moves_after_an_approved_stop_and_asides_are_carried() {
    let repo = TestRepo::new();
    enable(&repo);
    let first_tree = state(&repo)["baseline_tree"].as_str().unwrap().to_string();
    repo.write("src/calc.rs", CALC);
    let out = stop(&repo, false, defect_script("low")).json();
    assert!(out.get("decision").is_none(), "{out}");
    let m = out["systemMessage"].as_str().unwrap();
    assert!(m.contains("no concerns; 1 aside logged (low)"), "{m}");
    let s = state(&repo);
    let moved_tree = s["baseline_tree"].as_str().unwrap().to_string();
    assert_ne!(moved_tree, first_tree, "the baseline moved");
    assert_eq!(s["asides"].as_array().unwrap().len(), 1);
    assert_eq!(s["asides"][0]["file"], "src/calc.rs");
    // The moved baseline is the approved state, the untracked new file included.
    let listed = repo.git(&["ls-tree", "-r", "--name-only", &moved_tree]);
    assert!(listed.lines().any(|l| l == "src/calc.rs"), "{listed}");
    assert!(!listed.contains(".arev"), "{listed}");
    let n = dispatches(&repo);
    // Stopping again with nothing new: silent, no review.
    stop(&repo, false, defect_script("high")).silent();
    assert_eq!(dispatches(&repo), n);

    // The next change: only it is reviewed; src/calc.rs (approved) is not in the diff.
    human(&repo, "now a multiplier").silent();
    repo.write(
        "src/mul.rs",
        "pub fn mul(a: i32, b: i32) -> i32 {\n    a * b\n}\n",
    );
    let script = json!({"steps": [
        {"role": "enthusiast", "round": 1, "answer": {"findings": [
            finding("F1", "src/mul.rs", 2, "low", "naming")]}},
        {"role": "judge", "round": 1, "answer": {"rulings": [
            ruling("F1", "src/mul.rs", 2, "low", "enthusiast")],
            "summary": "1 confirmed", "convergence": false, "next_round_model": null}}
    ]});
    let out = stop(&repo, false, script).json();
    let m = out["systemMessage"].as_str().unwrap();
    assert!(
        m.contains("1 aside logged (low)") && m.contains("2 asides so far in this session"),
        "{m}"
    );
    assert!(m.contains(".arev/sessions/"), "{m}");
    let run = run_dirs(&repo).pop().unwrap();
    let patch = std::fs::read_to_string(run.join("target/diff.patch")).unwrap();
    assert!(
        patch.contains("b/src/mul.rs") && !patch.contains("src/calc.rs"),
        "{patch}"
    );
    let s = state(&repo);
    let files: Vec<&str> = s["asides"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["file"].as_str().unwrap())
        .collect();
    assert_eq!(files, ["src/mul.rs", "src/calc.rs"], "newest first");
    let log = std::fs::read_to_string(session_dir(&repo).join("log.jsonl")).unwrap();
    assert_eq!(log.matches("\"baseline_moved_to\":\"").count(), 2, "{log}");

    // A block does not move the baseline: the defect stays in the next review's diff.
    repo.write(
        "src/sub.rs",
        "pub fn sub(a: i32, b: i32) -> i32 {\n    a + b\n}\n",
    );
    let tree = state(&repo)["baseline_tree"].clone();
    let script = json!({"steps": [
        {"role": "enthusiast", "round": 1, "answer": {"findings": [
            finding("F1", "src/sub.rs", 2, "high", "arithmetic")]}},
        {"role": "judge", "round": 1, "answer": {"rulings": [
            ruling("F1", "src/sub.rs", 2, "high", "enthusiast")],
            "summary": "1 confirmed", "convergence": false, "next_round_model": null}}
    ]});
    assert_eq!(stop(&repo, false, script).json()["decision"], "block");
    assert_eq!(state(&repo)["baseline_tree"], tree);
}

/// The user's prompts since `#arev` (prefix stripped, generated prompts left out) reach every
/// role of the review as an `<intent>` block.
#[test]
fn the_users_prompts_are_the_reviews_intent() {
    let repo = TestRepo::new();
    human(&repo, "a prompt before review was enabled").silent();
    hook(
        &repo,
        "prompt",
        &prompt_input(&repo, "#arev add an adder in src/calc.rs"),
        clean_script(),
        &[],
    );
    human(&repo, "and make it saturate on overflow").silent();
    human(
        &repo,
        "<task-notification>\n<task-id>b1</task-id>\n<status>completed</status>\n</task-notification>",
    )
    .silent();
    repo.write("src/calc.rs", CALC);
    // A low finding: Enthusiast, Adversary and Judge all run.
    stop(&repo, false, defect_script("low")).json();
    let prompts = prompts_of_last_run(&repo);
    let names: Vec<&str> = prompts.iter().map(|(n, _)| n.as_str()).collect();
    assert!(
        names.iter().any(|n| n.contains("enthusiast"))
            && names.iter().any(|n| n.contains("adversary"))
            && names.iter().any(|n| n.contains("judge")),
        "{names:?}"
    );
    for (name, text) in &prompts {
        let block = text
            .split("<intent>\n")
            .nth(1)
            .and_then(|t| t.split("\n</intent>").next())
            .unwrap_or_else(|| panic!("{name}: no <intent> block:\n{text}"));
        assert!(
            block.contains("1. add an adder in src/calc.rs\n")
                && block.contains("2. and make it saturate on overflow"),
            "{name}: {block}"
        );
        assert!(!block.contains("#arev"), "{name}: {block}");
        assert!(
            !block.contains("before review was enabled"),
            "{name}: {block}"
        );
        assert!(!block.contains("task-notification"), "{name}: {block}");
    }
    let enthusiast = &prompts
        .iter()
        .find(|(n, _)| n.contains("enthusiast"))
        .unwrap()
        .1;
    assert!(enthusiast.contains("category `intent`"), "{enthusiast}");
    let intent = std::fs::read_to_string(session_dir(&repo).join("intent.md")).unwrap();
    assert!(
        intent.contains("2. and make it saturate on overflow"),
        "{intent}"
    );
}

/// Prompts Claude Code writes itself (a finished background task's `<task-notification>`,
/// system reminders, Stop-hook feedback) neither enable review nor start a new block chain;
/// a human prompt does.
#[test]
fn generated_prompts_never_enable_review_or_start_a_new_chain() {
    let notification = "<task-notification>\n<task-id>b1lnv88yn</task-id>\n\
        <tool-use-id>toolu_1</tool-use-id>\n<status>completed</status>\n\
        <summary>Background command \"sleep\" completed (exit code 0)</summary>\n\
        </task-notification>";
    // Mode always: a generated prompt first records no baseline at all.
    let repo = TestRepo::new();
    repo.write("arev.toml", "[hook]\nmode = \"always\"\n");
    repo.commit("config");
    for p in [
        notification,
        "<system-reminder>context</system-reminder>",
        "Stop hook feedback:\n#arev",
    ] {
        human(&repo, p).silent();
    }
    assert!(
        !repo.root.join(".arev").exists(),
        "no session for a generated prompt"
    );

    // An enabled session that was blocked: the notification keeps the chain.
    let repo = TestRepo::new();
    enable(&repo);
    repo.write("src/calc.rs", CALC);
    assert_eq!(
        stop(&repo, false, defect_script("high")).json()["decision"],
        "block"
    );
    let chain = state(&repo)["chain"].clone();
    assert_eq!(chain["consecutive_blocks"], 1);
    human(&repo, notification).silent();
    assert_eq!(state(&repo)["chain"], chain, "no new chain");
    let log = std::fs::read_to_string(session_dir(&repo).join("log.jsonl")).unwrap();
    assert!(log.contains("\"action\":\"ignored:generated\""), "{log}");
    // The turn the notification started ends without a change: a blocker for the human, not
    // a fresh block (a new chain would have blocked again).
    let out = stop(&repo, false, defect_script("high")).json();
    assert_eq!(out["continue"], false, "{out}");
    // A human prompt does start a new chain.
    human(&repo, "try again").silent();
    assert_eq!(state(&repo)["chain"]["consecutive_blocks"], 0);
}

/// A review that runs out of `[hook] timeout` is stopped, recorded `interrupted` in its run
/// dir, and the user is told so with the run dir; the same diff is not reviewed again.
#[test]
fn a_review_out_of_time_is_recorded_interrupted_and_said() {
    let repo = TestRepo::new();
    repo.write(
        "arev.toml",
        "[hook]\ntimeout = \"3s\"\n[timeouts]\ngrace = \"2s\"\n",
    );
    repo.commit("config");
    enable(&repo);
    repo.write("src/calc.rs", CALC);
    let slow = json!({"steps": [
        {"role": "enthusiast", "round": 1, "delay_ms": 60000,
         "answer": {"findings": [finding("F1", "src/calc.rs", 2, "high", "arithmetic")]}}
    ]});
    let started = std::time::Instant::now();
    let r = stop(&repo, false, slow.clone());
    let took = started.elapsed();
    let out = r.json();
    assert!(
        took >= std::time::Duration::from_secs(3) && took < std::time::Duration::from_secs(30),
        "{took:?}"
    );
    assert!(
        out.get("decision").is_none() && out.get("continue").is_none(),
        "{out}"
    );
    let m = out["systemMessage"].as_str().unwrap();
    let run = run_dirs(&repo).pop().expect("a run dir");
    assert!(
        m.contains("did NOT finish")
            && m.contains("longer than [hook] timeout (3s)")
            && m.contains(&format!("recorded as interrupted in {}", run.display())),
        "{m}"
    );
    let meta: Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("meta.json")).unwrap()).unwrap();
    assert_eq!(meta["status"], "interrupted", "{meta}");
    let log = std::fs::read_to_string(session_dir(&repo).join("log.jsonl")).unwrap();
    assert!(log.contains("\"decision\":\"unfinished\""), "{log}");
    assert!(
        !repo.scratch.join("hook-cache/arev/verdicts").exists(),
        "no verdict"
    );
    // Not retried on the same diff, also after a new human prompt.
    human(&repo, "thanks").silent();
    let n = dispatches(&repo);
    stop(&repo, false, slow).silent();
    assert_eq!(dispatches(&repo), n);
}

/// Mode `always` with no baseline (the UserPromptSubmit hook never ran): nothing is reviewed
/// or blamed, a baseline is recorded, and the user is told; the next change is reviewed.
#[test]
fn a_session_without_a_baseline_records_one_and_says_so() {
    let repo = TestRepo::new();
    repo.write("arev.toml", "[hook]\nmode = \"always\"\n");
    repo.commit("config");
    repo.write("wip.rs", "pub fn wip() {}\n");
    let out = stop(&repo, false, defect_script("critical")).json();
    let m = out["systemMessage"].as_str().unwrap();
    assert!(
        m.contains("did NOT run") && m.contains("no baseline"),
        "{m}"
    );
    assert_eq!(dispatches(&repo), 0);
    assert_eq!(state(&repo)["enabled_by"], "always");
    repo.write("src/calc.rs", CALC);
    let out = stop(&repo, false, defect_script("high")).json();
    assert_eq!(out["decision"], "block", "{out}");
    let run = run_dirs(&repo).pop().unwrap();
    let patch = std::fs::read_to_string(run.join("target/diff.patch")).unwrap();
    assert!(!patch.contains("wip.rs"), "{patch}");
}

/// `(decision, diff path)` of every logged Stop.
fn logged_stops(repo: &TestRepo) -> Vec<(String, String)> {
    std::fs::read_to_string(session_dir(repo).join("log.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["event"] == "stop")
        .map(|v| {
            let s = |k: &str| v[k].as_str().unwrap_or_default().to_string();
            (s("decision"), s("diff"))
        })
        .collect()
}

/// A stop on a working tree that has not moved since a stop keyed it finds the diff by the
/// key (`"diff":"keyed"`): no snapshot, nothing rendered. After an approval the empty diff
/// from the moved baseline is keyed too; any edit moves the key.
#[test]
fn an_unmoved_working_tree_is_found_by_its_key() {
    let repo = TestRepo::new();
    enable(&repo);
    repo.write("src/calc.rs", CALC);
    // Older than the key's racy margin (2 s), as an agent's edits are when it stops.
    std::thread::sleep(std::time::Duration::from_millis(2300));
    let m = stop(&repo, false, clean_script()).json();
    assert!(
        m["systemMessage"].as_str().unwrap().contains("no concerns"),
        "{m}"
    );
    let n = dispatches(&repo);
    // Nothing new: the key gives the (empty) diff from the moved baseline.
    stop(&repo, false, defect_script("high")).silent();
    stop(&repo, false, defect_script("high")).silent();
    assert_eq!(dispatches(&repo), n, "nothing reviewed");
    let paths: Vec<String> = logged_stops(&repo).into_iter().map(|(_, p)| p).collect();
    assert_eq!(paths, ["rendered", "keyed", "keyed"]);
    // An edit moves the key: the diff is rendered (and reviewed) again.
    repo.write("src/calc.rs", &format!("{CALC}// more\n"));
    stop(&repo, false, clean_script()).json();
    assert_eq!(logged_stops(&repo).last().unwrap().1, "rendered");
}
