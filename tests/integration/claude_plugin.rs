//! The repository as a Claude Code plugin, through the REAL Claude Code CLI
//! (`AREV_TEST_CLAUDE_BIN`, skipped when unset unless `AREV_REQUIRE_REAL_CLIS=1`):
//! `claude plugin validate --strict`, the `#arev` Stop-hook loop (block → fix → approve) with
//! the plugin loaded by `--plugin-dir`, and `/arev:adversarial-review <file>` in `-p` mode.
//! The session agent and arev's reviewers are the same real CLI, both talking to one
//! loopback [`FakeAnthropic`].

use crate::fake_anthropic::{FakeAnthropic, Script, Step};
use crate::harness::{finding, ruling, TestRepo};
use crate::real_claude::claude_bin;
use serde_json::{json, Value};
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const TIMEOUT: Duration = Duration::from_secs(300);
/// The plugin's hooks call arev through its launcher (docs/contracts.md §20.3).
const LAUNCHER_STOP: &str = "sh \"${CLAUDE_PLUGIN_ROOT}/bin/arev\" hook stop";
const LAUNCHER_PROMPT: &str = "sh \"${CLAUDE_PLUGIN_ROOT}/bin/arev\" hook prompt";
const CALC_BAD: &str = "pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n";
const CALC_GOOD: &str = "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n";

/// The repository root: the marketplace (`.claude-plugin/marketplace.json`).
fn marketplace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The plugin's own folder: not the repository root, whose `agents/` (arev's role files)
/// Claude Code would otherwise register as subagents.
fn plugin_root() -> PathBuf {
    marketplace_root().join("plugin")
}

/// `claude -p <prompt>` as a user session with the plugin loaded; `arev` (this build) first
/// on PATH, the fake API in the environment. Returns (success, stdout events, stderr).
fn session(
    bin: &Path,
    repo: &TestRepo,
    fake: &FakeAnthropic,
    prompt: &str,
) -> (bool, Vec<Value>, String) {
    session_with(
        bin,
        repo,
        fake,
        prompt,
        &[],
        &["--plugin-dir", &plugin_root_str()],
    )
}

fn plugin_root_str() -> String {
    plugin_root().display().to_string()
}

/// [`session`] with more environment for the session (and so for its hooks and reviews) and
/// more CLI arguments.
fn session_with(
    bin: &Path,
    repo: &TestRepo,
    fake: &FakeAnthropic,
    prompt: &str,
    env: &[(&str, String)],
    args: &[&str],
) -> (bool, Vec<Value>, String) {
    let arev_dir = Path::new(env!("CARGO_BIN_EXE_arev"))
        .parent()
        .unwrap()
        .to_path_buf();
    let path = format!(
        "{}:{}",
        arev_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let home = repo.scratch.join("session-home");
    std::fs::create_dir_all(&home).unwrap();
    let mut cmd = Command::new(bin);
    cmd.args(["-p", prompt, "--output-format", "stream-json", "--verbose"])
        .arg("--include-hook-events")
        .args([
            "--permission-mode",
            "acceptEdits",
            "--max-turns",
            "12",
            "--model",
            "opus",
        ])
        .args(args)
        .current_dir(&repo.root)
        .env_clear()
        .envs(fake.claude_env(&home))
        .env("PATH", path)
        .env("AREV_AGENT_TIMEOUT", "120s")
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let started = Instant::now();
    let mut child = cmd.spawn().expect("spawn claude");
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out_t = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let err_t = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if started.elapsed() > TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "claude session timed out; stderr: {}",
                err_t.join().unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let stdout = out_t.join().unwrap();
    let stderr = err_t.join().unwrap();
    let events = stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    (
        status.success(),
        events,
        format!("{stderr}\n--- stdout ---\n{stdout}"),
    )
}

/// A repo whose arev config points the reviewers at the real CLI (committed: not in the diff).
fn repo_with_real_reviewers(bin: &Path) -> TestRepo {
    let repo = TestRepo::new();
    repo.write(
        "arev.toml",
        &format!(
            "[agents.claude]\nbackend = \"claude\"\nbinary = \"{}\"\n",
            bin.display()
        ),
    );
    repo.commit("config");
    repo
}

fn empty_map() -> Value {
    json!({"heuristics": [], "safe_zones": []})
}

#[test]
fn plugin_validates_strict_with_the_real_cli() {
    let Some(bin) = claude_bin("plugin_validates_strict_with_the_real_cli") else {
        return;
    };
    // The marketplace at the repository root lists the one plugin, in its own folder.
    let o = Command::new(&bin)
        .args(["plugin", "validate", "--strict", "--json"])
        .arg(marketplace_root())
        .env("HOME", tempfile::tempdir().unwrap().path())
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(o.status.success(), "{v}");
    assert_eq!(v["manifest"]["type"], "marketplace", "{v}");
    assert_eq!(v["manifest"]["errors"], json!([]), "{v}");
    assert_eq!(v["manifest"]["warnings"], json!([]), "{v}");
    for target in [
        plugin_root(),
        plugin_root().join(".claude-plugin/plugin.json"),
    ] {
        let o = Command::new(&bin)
            .args(["plugin", "validate", "--strict", "--json"])
            .arg(&target)
            .env("HOME", tempfile::tempdir().unwrap().path())
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(
            o.status.success(),
            "{}: {text}\n{}",
            target.display(),
            String::from_utf8_lossy(&o.stderr)
        );
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["success"], true, "{v}");
        assert_eq!(v["manifest"]["errors"], json!([]), "{v}");
        assert_eq!(v["manifest"]["warnings"], json!([]), "{v}");
        let hooks = &v["provides"]["hooks"];
        assert!(
            hooks
                .as_array()
                .unwrap()
                .iter()
                .any(|h| h["event"] == "Stop" && h["command"] == LAUNCHER_STOP),
            "{hooks}"
        );
        assert!(
            hooks
                .as_array()
                .unwrap()
                .iter()
                .any(|h| h["event"] == "UserPromptSubmit" && h["command"] == LAUNCHER_PROMPT),
            "{hooks}"
        );
        let mut commands: Vec<&str> = v["provides"]["commands"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        commands.sort_unstable();
        assert_eq!(
            commands,
            [
                "arev:adversarial-review",
                "arev:cancel",
                "arev:result",
                "arev:status"
            ]
        );
        // arev's roles are its own prompts (agents/), not Claude Code subagents: the plugin
        // ships only what it uses.
        assert!(
            v["provides"]["agents"]
                .as_array()
                .is_none_or(|a| a.is_empty()),
            "{v}"
        );
    }
}

/// `statusMessage` (the spinner text while a hook runs) is a field Claude Code 2.1.330 knows:
/// the plugin's string values validate cleanly (above), and the same hooks.json with a
/// number there is flagged by that field's name and dropped at runtime. (Checked by hand in
/// the interactive TUI too: the spinner reads the Stop hook's statusMessage while it runs.)
#[test]
fn status_message_is_a_hook_field_the_cli_knows() {
    let Some(bin) = claude_bin("status_message_is_a_hook_field_the_cli_knows") else {
        return;
    };
    let hooks: Value = serde_json::from_str(
        &std::fs::read_to_string(plugin_root().join("hooks/hooks.json")).unwrap(),
    )
    .unwrap();
    for event in ["Stop", "UserPromptSubmit"] {
        assert!(
            hooks["hooks"][event][0]["hooks"][0]["statusMessage"].is_string(),
            "{event}"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".claude-plugin")).unwrap();
    std::fs::create_dir_all(dir.path().join("hooks")).unwrap();
    std::fs::copy(
        plugin_root().join(".claude-plugin/plugin.json"),
        dir.path().join(".claude-plugin/plugin.json"),
    )
    .unwrap();
    let mut bad = hooks;
    bad["hooks"]["Stop"][0]["hooks"][0]["statusMessage"] = json!(42);
    std::fs::write(dir.path().join("hooks/hooks.json"), bad.to_string()).unwrap();
    let o = Command::new(&bin)
        .args(["plugin", "validate", "--strict", "--json"])
        .arg(dir.path())
        .env("HOME", tempfile::tempdir().unwrap().path())
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["success"], false, "{v}");
    let warnings = v["contents"].to_string();
    assert!(
        warnings.contains("hooks.Stop.0.hooks.0: Invalid command hook (statusMessage"),
        "{warnings}"
    );
}

/// The whole advisor loop: `#arev` prompt → the agent writes a defect and stops → the Stop
/// hook's review (the real CLI as Enthusiast/Adversary/Judge) blocks with the finding → the
/// agent fixes it and stops again → the second review is clean and the hook lets it stop.
#[test]
fn stop_hook_blocks_the_defect_and_approves_the_fix() {
    let Some(bin) = claude_bin("stop_hook_blocks_the_defect_and_approves_the_fix") else {
        return;
    };
    let repo = repo_with_real_reviewers(&bin);
    let calc = repo.root.join("src/calc.rs");
    let calc_s = calc.to_str().unwrap().to_string();
    let script = Script::new()
        .session(vec![
            Step::Tool {
                name: "Write".into(),
                input: json!({"file_path": calc_s, "content": CALC_BAD}),
            },
            Step::Text("Done: src/calc.rs has add().".into()),
            Step::Read(calc.clone()),
            Step::Tool {
                name: "Write".into(),
                input: json!({"file_path": calc_s, "content": CALC_GOOD}),
            },
            Step::Text("Fixed: add() adds.".into()),
        ])
        // Every review: empty Adversary map, nothing new after round 1.
        .answer("Adversary", 1, empty_map())
        .answer("Adversary", 2, empty_map())
        .answer("Enthusiast", 1, json!({"findings": []}))
        .answer("Enthusiast", 2, json!({"findings": []}))
        // Review 0 (the defective diff): one confirmed high finding.
        .answer_review(
            0,
            "Enthusiast",
            1,
            json!({"findings": [finding("F1", "src/calc.rs", 2, "high", "arithmetic")]}),
        )
        .answer_review(
            0,
            "Judge",
            1,
            json!({"rulings": [ruling("F1", "src/calc.rs", 2, "high", "enthusiast")],
                   "summary": "1 confirmed", "convergence": false, "next_round_model": null}),
        );
    let fake = FakeAnthropic::start(script);
    let (ok, events, dbg) = session(&bin, &repo, &fake, "#arev add an adder in src/calc.rs");
    assert!(ok, "{dbg}");
    let result = events
        .iter()
        .rev()
        .find(|e| e["type"] == "result")
        .expect("result");
    assert_eq!(result["is_error"], false, "{dbg}");
    assert_eq!(
        std::fs::read_to_string(&calc).unwrap(),
        CALC_GOOD,
        "the agent fixed it"
    );

    // The block reached the agent as Stop hook feedback naming the finding and its edit.
    let reqs = fake.requests();
    let session_reqs: Vec<_> = reqs.iter().filter(|r| r.turn.is_none()).collect();
    let fed_back = session_reqs
        .iter()
        .find(|r| r.body["messages"].to_string().contains("src/calc.rs:2"))
        .unwrap_or_else(|| panic!("no request carried the Stop hook feedback: {dbg}"));
    let msgs = fed_back.body["messages"].to_string();
    assert!(msgs.contains("[high] src/calc.rs:2 (arithmetic)"), "{msgs}");
    assert!(msgs.contains("Edit: src/calc.rs:2"), "{msgs}");
    assert!(msgs.contains("report.md"), "{msgs}");
    // The prompt hook's context for the agent arrived too.
    assert!(session_reqs[0].body["messages"]
        .to_string()
        .contains("arev review is on for this session"));
    // Two reviews (the defect, then the fix), both through the real CLI.
    for review in [0, 1] {
        assert!(
            reqs.iter()
                .any(|r| r.role() == Some("Enthusiast") && r.review == Some(review)),
            "review {review} missing"
        );
    }
    assert_eq!(session_reqs.len(), 5, "write, stop, read, fix, stop");
    // The session log: enable, block, approve.
    let sessions = repo.root.join(".arev/sessions");
    let dir = std::fs::read_dir(&sessions)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let log = std::fs::read_to_string(dir.join("log.jsonl")).unwrap();
    let decisions: Vec<String> = log
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["event"] == "stop")
        .map(|v| v["decision"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(decisions, ["block", "approve"], "{log}");
    // The approval told the human, once.
    let out = events
        .iter()
        .map(Value::to_string)
        .collect::<Vec<_>>()
        .join("\n");
    assert!(out.contains("reviewed the session's changes"), "{dbg}");
    assert!(
        fake.stray_requests().is_empty(),
        "{:?}",
        fake.stray_requests()
    );
}

/// The Stop hook at real speed, with the user's own uncommitted work in the tree: `#arev`
/// snapshots the working tree (a modified tracked file and an untracked file that predate
/// it), the agent writes a defect and stops, the review — a reviewer that takes 25 s to
/// answer — sees only the agent's file and blocks with the finding; the next model request
/// carries the reason; the agent fixes it and the second review approves. The user's WIP is
/// never reviewed, blamed or touched.
#[test]
fn stop_hook_review_of_realistic_length_blocks_only_the_sessions_changes() {
    let Some(bin) =
        claude_bin("stop_hook_review_of_realistic_length_blocks_only_the_sessions_changes")
    else {
        return;
    };
    // The session is the real CLI; the reviewers are the scripted fake agent, slowed down.
    let repo = TestRepo::new();
    repo.write(
        "arev.toml",
        &format!(
            "[agents.claude]\nbackend = \"claude\"\nbinary = \"{}\"\n",
            env!("CARGO_BIN_EXE_arev-fake-agent")
        ),
    );
    repo.commit("config");
    let wip_lib = format!(
        "{}// WIP_BEFORE: the user's half-done change\n",
        crate::harness::LIB_RS
    );
    repo.write("src/lib.rs", &wip_lib);
    repo.write("notes.txt", "untracked notes from before the session\n");
    let calc = repo.root.join("src/calc.rs");
    let calc_s = calc.to_str().unwrap().to_string();
    const REVIEW_DELAY_MS: u64 = 25_000;
    let defect = json!({"path": "src/calc.rs", "text": "a - b"});
    let reviewers = json!({"steps": [
        {"role": "enthusiast", "round": 1, "if_file_contains": defect, "delay_ms": REVIEW_DELAY_MS,
         "answer": {"findings": [finding("F1", "src/calc.rs", 2, "high", "arithmetic")]}},
        {"role": "judge", "round": 1, "if_file_contains": defect,
         "answer": {"rulings": [ruling("F1", "src/calc.rs", 2, "high", "enthusiast")],
                    "summary": "1 confirmed", "convergence": false, "next_round_model": null}}
    ]});
    let script_path = repo.scratch.join("reviewers.json");
    std::fs::write(&script_path, reviewers.to_string()).unwrap();
    let fake = FakeAnthropic::start(Script::new().session(vec![
        Step::Tool {
            name: "Write".into(),
            input: json!({"file_path": calc_s, "content": CALC_BAD}),
        },
        Step::Text("Done: src/calc.rs has add().".into()),
        Step::Tool {
            name: "Write".into(),
            input: json!({"file_path": calc_s, "content": CALC_GOOD}),
        },
        Step::Text("Fixed: add() adds.".into()),
    ]));
    let started = Instant::now();
    let (ok, events, dbg) = session_with(
        &bin,
        &repo,
        &fake,
        "#arev add an adder in src/calc.rs",
        &[
            ("AREV_FAKE_SCRIPT", script_path.display().to_string()),
            (
                "AREV_FAKE_LOG",
                repo.scratch.join("fake.log").display().to_string(),
            ),
        ],
        &["--plugin-dir", &plugin_root_str()],
    );
    let took = started.elapsed();
    assert!(ok, "{dbg}");
    let result = events
        .iter()
        .rev()
        .find(|e| e["type"] == "result")
        .expect("result");
    assert_eq!(result["is_error"], false, "{dbg}");
    assert!(
        took >= Duration::from_millis(REVIEW_DELAY_MS),
        "the review took real time: {took:?}"
    );
    assert_eq!(std::fs::read_to_string(&calc).unwrap(), CALC_GOOD);

    // The request after the first stop carries the block's reason to the model.
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 4, "write, stop, fix, stop: {dbg}");
    let after_block = reqs
        .iter()
        .find(|r| r.step == 2)
        .unwrap_or_else(|| panic!("no request after the block: {dbg}"));
    let msgs = after_block.body["messages"].to_string();
    assert!(msgs.contains("Stop hook feedback"), "{msgs}");
    assert!(msgs.contains("[high] src/calc.rs:2 (arithmetic)"), "{msgs}");
    assert!(msgs.contains("Edit: src/calc.rs:2"), "{msgs}");
    assert!(
        !reqs[1].body["messages"]
            .to_string()
            .contains("[high] src/calc.rs:2"),
        "the reason arrives only after the review"
    );

    // Two reviews; the first (slow one) saw only the agent's file.
    let mut runs: Vec<PathBuf> = std::fs::read_dir(repo.root.join(".arev/runs"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    runs.sort();
    assert_eq!(runs.len(), 2, "{runs:?}");
    let first: Value =
        serde_json::from_str(&std::fs::read_to_string(runs[0].join("report.json")).unwrap())
            .unwrap();
    assert_eq!(first["target"]["allowed_files"], json!(["src/calc.rs"]));
    assert!(
        first["duration_ms"].as_u64().unwrap() >= REVIEW_DELAY_MS,
        "{}",
        first["duration_ms"]
    );
    let patch = std::fs::read_to_string(runs[0].join("target/diff.patch")).unwrap();
    assert!(
        !patch.contains("WIP_BEFORE") && !patch.contains("notes.txt"),
        "{patch}"
    );
    // The intent of both reviews: the user's prompt, without the prefix.
    let prompt = std::fs::read_to_string(runs[0].join("agents/r1/enthusiast/prompt.md"))
        .or_else(|_| std::fs::read_to_string(runs[0].join("agents/r1/enthusiast-p1/prompt.md")))
        .unwrap();
    assert!(
        prompt.contains("<intent>") && prompt.contains("1. add an adder in src/calc.rs"),
        "{prompt}"
    );
    // The session log: block, then approve; the user's WIP is untouched.
    let sessions = repo.root.join(".arev/sessions");
    let dir = std::fs::read_dir(&sessions)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let log = std::fs::read_to_string(dir.join("log.jsonl")).unwrap();
    let decisions: Vec<String> = log
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["event"] == "stop")
        .map(|v| v["decision"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(decisions, ["block", "approve"], "{log}");
    assert_eq!(
        std::fs::read_to_string(repo.root.join("src/lib.rs")).unwrap(),
        wip_lib
    );
    assert!(repo.root.join("notes.txt").is_file());
    assert!(
        fake.stray_requests().is_empty(),
        "{:?}",
        fake.stray_requests()
    );
}

/// A background task's completion comes back from the real CLI as a UserPromptSubmit whose
/// prompt is a `<task-notification>`: `arev hook prompt` ignores it (no new block chain, not
/// part of the intent), while the `#arev` prompt that started the session counts.
#[test]
fn a_real_task_notification_is_not_a_user_prompt() {
    let Some(bin) = claude_bin("a_real_task_notification_is_not_a_user_prompt") else {
        return;
    };
    let repo = repo_with_real_reviewers(&bin);
    let fake = FakeAnthropic::start(Script::new().session(vec![
        Step::Tool {
            name: "Bash".into(),
            input: json!({"command": "sleep 2; echo BG_DONE", "description": "wait a bit",
                          "run_in_background": true}),
        },
        Step::Text("Started it.".into()),
        Step::Text("The background task finished.".into()),
    ]));
    let (ok, _events, dbg) = session_with(
        &bin,
        &repo,
        &fake,
        "#arev wait for the background job",
        &[],
        &["--plugin-dir", &plugin_root_str(), "--allowedTools", "Bash"],
    );
    assert!(ok, "{dbg}");
    let reqs = fake.requests();
    assert!(
        reqs.iter().any(|r| r.body["messages"]
            .to_string()
            .contains("<task-notification>")),
        "the CLI delivered the notification: {dbg}"
    );
    let sessions = repo.root.join(".arev/sessions");
    let dir = std::fs::read_dir(&sessions)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let log = std::fs::read_to_string(dir.join("log.jsonl")).unwrap();
    let actions: Vec<String> = log
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["event"] == "prompt")
        .map(|v| v["action"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(actions, ["enable:prefix", "ignored:generated"], "{log}");
    let prompts = std::fs::read_to_string(dir.join("prompts.jsonl")).unwrap();
    assert_eq!(prompts.lines().count(), 1, "{prompts}");
    assert!(prompts.contains("wait for the background job"), "{prompts}");
}

/// `/arev:adversarial-review src/lib.rs` in `-p` mode: the command runs `arev run src/lib.rs
/// --format markdown` and the Markdown report is what the session's model gets.
#[test]
fn slash_command_runs_arev_and_returns_the_markdown_report() {
    let Some(bin) = claude_bin("slash_command_runs_arev_and_returns_the_markdown_report") else {
        return;
    };
    let repo = repo_with_real_reviewers(&bin);
    let fake = FakeAnthropic::start(one_confirmed_review());
    let (ok, events, dbg) = session(&bin, &repo, &fake, "/arev:adversarial-review src/lib.rs");
    assert!(ok, "{dbg}");
    let result = events
        .iter()
        .rev()
        .find(|e| e["type"] == "result")
        .expect("result");
    assert_eq!(result["is_error"], false, "{dbg}");
    let reqs = fake.requests();
    assert!(
        reqs.iter().any(|r| r.role() == Some("Judge")),
        "arev ran a review"
    );
    let runs: Vec<_> = std::fs::read_dir(repo.root.join(".arev/runs"))
        .unwrap()
        .flatten()
        .collect();
    assert_eq!(runs.len(), 1);
    let report_md = std::fs::read_to_string(runs[0].path().join("report.md")).unwrap();
    let first = reqs.iter().find(|r| r.turn.is_none()).unwrap_or_else(|| {
        let seen: Vec<_> = reqs.iter().map(|r| (r.role(), r.round(), r.step)).collect();
        panic!("no session request: {seen:?}\n{dbg}")
    });
    let sent = first.body["messages"].to_string();
    // The report, as arev rendered it, is in the expanded command the model got.
    let heading = report_md.lines().next().unwrap();
    let esc = serde_json::to_string(heading).unwrap();
    assert!(sent.contains(&esc[1..esc.len() - 1]), "{heading}\n{sent}");
    assert!(
        sent.contains("(arev exit code 1)"),
        "exit code line: {sent}"
    );
    assert!(
        sent.contains("(target: `src/lib.rs`)"),
        "$0 is the first argument: {sent}"
    );
    assert!(
        sent.contains("arev run src/lib.rs"),
        "the target reached the command: {sent}"
    );
}

/// `arev install claude` wiring (no plugin): the real CLI loads the hooks from the project's
/// `.claude/settings.json`; `#arev` turns review on and an unchanged session stops quietly.
/// The settings call plain `arev`, found on the session's PATH (as on a teammate's machine
/// with arev installed), never the absolute path of the build that installed them.
#[test]
fn installed_project_hooks_fire_in_the_real_cli() {
    let Some(bin) = claude_bin("installed_project_hooks_fire_in_the_real_cli") else {
        return;
    };
    let repo = repo_with_real_reviewers(&bin);
    repo.arev()
        .args(&["install", "claude"])
        .run()
        .assert_code(0);
    repo.commit("wire arev into .claude");
    let fake =
        FakeAnthropic::start(Script::new().session(vec![Step::Text("Nothing to do.".into())]));
    let home = repo.scratch.join("session-home");
    std::fs::create_dir_all(&home).unwrap();
    let o = Command::new(&bin)
        .args(["-p", "#arev just look around", "--output-format", "json"])
        .current_dir(&repo.root)
        .env_clear()
        .envs(fake.claude_env(&home))
        .env(
            "PATH",
            format!(
                "{}:{}",
                Path::new(env!("CARGO_BIN_EXE_arev"))
                    .parent()
                    .unwrap()
                    .display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let sessions = repo.root.join(".arev/sessions");
    let dir = std::fs::read_dir(&sessions)
        .unwrap_or_else(|e| {
            panic!(
                "no session dir ({e}): {}",
                String::from_utf8_lossy(&o.stdout)
            )
        })
        .next()
        .unwrap()
        .unwrap()
        .path();
    let state: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("state.json")).unwrap()).unwrap();
    assert_eq!(state["enabled_by"], "prefix");
    let log = std::fs::read_to_string(dir.join("log.jsonl")).unwrap();
    assert!(log.contains("\"decision\":\"silent:no_change\""), "{log}");
    assert!(
        fake.requests().iter().all(|r| r.turn.is_none()),
        "no review of an unchanged diff"
    );
}

/// The plugin as a user installs it: `claude plugin marketplace add <repo>` and `claude plugin
/// install arev@arev` with the real CLI (offline, from the directory), then a session with no
/// `--plugin-dir`: the installed copy's hooks run through its launcher, the slash command runs
/// arev, and the copy holds install.sh itself (the plugin folder shares it by symlink, which
/// installation follows) and no subagent.
#[test]
fn installed_plugin_runs_its_hooks_and_slash_command() {
    let Some(bin) = claude_bin("installed_plugin_runs_its_hooks_and_slash_command") else {
        return;
    };
    let repo = repo_with_real_reviewers(&bin);
    let home = repo.scratch.join("session-home");
    std::fs::create_dir_all(&home).unwrap();
    for args in [
        vec![
            "plugin",
            "marketplace",
            "add",
            &*marketplace_root().to_string_lossy(),
        ]
        .into_iter()
        .map(str::to_owned)
        .collect::<Vec<_>>(),
        ["plugin", "install", "arev@arev"]
            .map(str::to_owned)
            .to_vec(),
    ] {
        let o = Command::new(&bin)
            .args(&args)
            .current_dir(&repo.root)
            .env_clear()
            .env("HOME", &home)
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("DISABLE_TELEMETRY", "1")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "claude {args:?}: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let installed = home.join(".claude/plugins/cache/arev/arev").join(
        serde_json::from_str::<Value>(
            &std::fs::read_to_string(plugin_root().join(".claude-plugin/plugin.json")).unwrap(),
        )
        .unwrap()["version"]
            .as_str()
            .unwrap(),
    );
    let install_sh = installed.join("install.sh");
    let meta = std::fs::symlink_metadata(&install_sh).unwrap();
    assert!(meta.is_file(), "install.sh is copied, not linked");
    assert_eq!(
        std::fs::read(&install_sh).unwrap(),
        std::fs::read(marketplace_root().join("install.sh")).unwrap()
    );
    assert!(installed.join("bin/arev").is_file());
    assert!(
        !installed.join("agents").exists(),
        "no subagent is installed"
    );

    let fake = FakeAnthropic::start(one_confirmed_review());
    // No --plugin-dir: the plugin comes from the user's installation.
    let (ok, events, dbg) = session_with(
        &bin,
        &repo,
        &fake,
        "/arev:adversarial-review src/lib.rs",
        &[],
        &[],
    );
    assert!(ok, "{dbg}");
    let launcher_hook = events.iter().any(|e| {
        e["type"] == "system"
            && e["subtype"] == "hook_response"
            && e["hook_event"] == "UserPromptSubmit"
            && e["exit_code"] == 0
    });
    assert!(
        launcher_hook,
        "the installed UserPromptSubmit hook ran: {dbg}"
    );
    let reqs = fake.requests();
    assert!(
        reqs.iter().any(|r| r.role() == Some("Judge")),
        "the installed slash command ran a review: {dbg}"
    );
    let first = reqs
        .iter()
        .find(|r| r.turn.is_none())
        .expect("session request");
    let sent = first.body["messages"].to_string();
    assert!(
        sent.contains("(arev exit code 1)"),
        "exit code line: {sent}"
    );
}

/// The session answers once; the review confirms one high finding in round 1 and finds
/// nothing new in round 2.
fn one_confirmed_review() -> Script {
    Script::new()
        .session(vec![Step::Text(
            "Review done; see the report above.".into(),
        )])
        .answer(
            "Enthusiast",
            1,
            json!({"findings": [finding("F1", "src/lib.rs", 2, "high", "error-handling")]}),
        )
        .answer("Adversary", 1, empty_map())
        .answer(
            "Judge",
            1,
            json!({"rulings": [ruling("F1", "src/lib.rs", 2, "high", "enthusiast")],
                   "summary": "1 confirmed", "convergence": false, "next_round_model": null}),
        )
        .answer("Enthusiast", 2, json!({"findings": []}))
        .answer("Adversary", 2, empty_map())
}
