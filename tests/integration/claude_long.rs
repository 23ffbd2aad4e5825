//! A review longer than Claude Code's 120 s Bash limit, through the REAL Claude Code CLI
//! (`AREV_TEST_CLAUDE_BIN`; skipped when unset unless `AREV_REQUIRE_REAL_CLIS=1`) with the
//! plugin loaded by `--plugin-dir`: `/arev:adversarial-review` starts the review in the
//! background and answers within 120 s with the run id; `/arev:status` shows it running;
//! once it is done, `/arev:result` brings the report to the model. The session agent is the
//! real CLI against a loopback [`FakeAnthropic`]; the reviewers are the scripted fake agent,
//! slowed down so the review takes longer than 120 s.

use crate::fake_anthropic::{FakeAnthropic, RecordedRequest, Script, Step};
use crate::harness::{finding, ruling, TestRepo};
use crate::real_claude::claude_bin;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long the slowed Enthusiast takes: the review outlasts Claude Code's 120 s limit.
const ENTHUSIAST_DELAY: Duration = Duration::from_secs(125);

/// `claude -p <prompt>` with the plugin loaded, `arev` (this build) first on PATH, the fake
/// API and `env` in the environment; (success, elapsed, debug text).
fn session(
    bin: &Path,
    repo: &TestRepo,
    fake: &FakeAnthropic,
    prompt: &str,
    env: &[(&str, String)],
) -> (bool, Duration, String) {
    session_with(bin, repo, fake, prompt, env, true)
}

/// [`session`], with or without the plugin (without: what `arev install claude` wrote).
fn session_with(
    bin: &Path,
    repo: &TestRepo,
    fake: &FakeAnthropic,
    prompt: &str,
    env: &[(&str, String)],
    plugin: bool,
) -> (bool, Duration, String) {
    let arev_dir = Path::new(env!("CARGO_BIN_EXE_arev")).parent().unwrap();
    let path = format!(
        "{}:{}",
        arev_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let home = repo.scratch.join("session-home");
    std::fs::create_dir_all(&home).unwrap();
    let started = Instant::now();
    let mut cmd = Command::new(bin);
    cmd.args(["-p", prompt, "--output-format", "stream-json", "--verbose"]);
    if plugin {
        cmd.arg("--plugin-dir")
            .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/plugin"));
    }
    let out = cmd
        .args(["--permission-mode", "acceptEdits", "--max-turns", "4"])
        .args(["--model", "opus"])
        .current_dir(&repo.root)
        .env_clear()
        .envs(fake.claude_env(&home))
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .env("PATH", path)
        .stdin(Stdio::null())
        .output()
        .expect("run claude");
    let elapsed = started.elapsed();
    let dbg = format!(
        "elapsed {elapsed:?}\n--- stderr ---\n{}\n--- stdout ---\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    (out.status.success(), elapsed, dbg)
}

/// The messages of the session's first model request after request number `from` (the
/// expanded slash command the model got).
fn session_messages(fake: &FakeAnthropic, from: usize) -> String {
    let reqs: Vec<RecordedRequest> = fake.requests();
    reqs.iter()
        .skip(from)
        .find(|r| r.turn.is_none())
        .map(|r| r.body["messages"].to_string())
        .unwrap_or_else(|| panic!("no session request after #{from}"))
}

/// `text` as it appears inside a JSON string.
fn json_escaped(text: &str) -> String {
    let e = serde_json::to_string(text).unwrap();
    e[1..e.len() - 1].to_string()
}

fn the_run(repo: &TestRepo) -> PathBuf {
    let runs: Vec<_> = std::fs::read_dir(repo.root.join(".arev/runs"))
        .unwrap()
        .flatten()
        .collect();
    assert_eq!(runs.len(), 1, "{runs:?}");
    runs[0].path()
}

#[test]
fn a_review_longer_than_the_bash_limit_answers_in_time_and_result_brings_the_report() {
    let Some(bin) = claude_bin(
        "a_review_longer_than_the_bash_limit_answers_in_time_and_result_brings_the_report",
    ) else {
        return;
    };
    let repo = TestRepo::new();
    repo.write(
        "arev.toml",
        &format!(
            "[agents.claude]\nbackend = \"claude\"\nbinary = \"{}\"\n",
            env!("CARGO_BIN_EXE_arev-fake-agent")
        ),
    );
    repo.commit("slow scripted reviewers");
    let script = repo.scratch.join("slow-script.json");
    std::fs::write(
        &script,
        json!({"steps": [
            {"role": "enthusiast", "round": 1, "delay_ms": ENTHUSIAST_DELAY.as_millis() as u64,
             "answer": {"findings": [finding("F1", "src/lib.rs", 2, "high", "error-handling")]}},
            {"role": "judge", "round": 1, "answer": {
                "rulings": [ruling("F1", "src/lib.rs", 2, "high", "enthusiast")],
                "summary": "1 confirmed", "convergence": false, "next_round_model": null}},
        ]})
        .to_string(),
    )
    .unwrap();
    let env = [("AREV_FAKE_SCRIPT", script.display().to_string())];
    let fake = FakeAnthropic::start(Script::new().session(vec![Step::Text("Noted.".into())]));

    // 1. The slash command answers within Claude Code's 120 s, with the run id.
    let (ok, elapsed, dbg) = session(
        &bin,
        &repo,
        &fake,
        "/arev:adversarial-review src/lib.rs --max-rounds 1",
        &env,
    );
    assert!(ok, "{dbg}");
    assert!(elapsed < Duration::from_secs(120), "{dbg}");
    let dir = the_run(&repo);
    let id = dir.file_name().unwrap().to_string_lossy().into_owned();
    let sent = session_messages(&fake, 0);
    assert!(sent.contains("(arev exit code 4)"), "{sent}");
    assert!(sent.contains(&format!("run id    {id}")), "{sent}");
    assert!(sent.contains("no verdict within 1m 40s"), "{sent}");
    assert!(sent.contains("/arev:result"), "{sent}");
    let meta: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("meta.json")).unwrap()).unwrap();
    assert_eq!(
        meta["status"], "running",
        "Claude Code's exit did not stop it"
    );

    // 2. While it runs: `/arev:status` brings where it stands.
    let before = fake.requests().len();
    let (ok, _, dbg) = session(&bin, &repo, &fake, "/arev:status", &env);
    assert!(ok, "{dbg}");
    let sent = session_messages(&fake, before);
    assert!(
        sent.contains(&json_escaped(&format!("run       {id}"))),
        "{sent}"
    );
    assert!(sent.contains("status    running"), "{sent}");

    // 3. Once it is done: `/arev:result` brings the report to the model.
    let deadline = Instant::now() + Duration::from_secs(90);
    let meta = loop {
        let m: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("meta.json")).unwrap()).unwrap();
        if !m["exit_code"].is_null() {
            break m;
        }
        assert!(Instant::now() < deadline, "the review never finished: {m}");
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(meta["status"], "complete", "{meta}");
    assert_eq!(meta["exit_code"], 1);
    let before = fake.requests().len();
    let (ok, _, dbg) = session(&bin, &repo, &fake, "/arev:result", &env);
    assert!(ok, "{dbg}");
    let sent = session_messages(&fake, before);
    let report_md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    let heading = report_md.lines().next().unwrap();
    assert!(sent.contains(&json_escaped(heading)), "{heading}\n{sent}");
    assert!(sent.contains("src/lib.rs:2"), "{sent}");
    assert!(sent.contains("(arev exit code 1)"), "{sent}");
    assert!(
        fake.stray_requests().is_empty(),
        "{:?}",
        fake.stray_requests()
    );
}

/// `arev install claude` (no plugin): the installed `/arev-result` calls this binary by its
/// path and brings a finished run's report to the model; `/arev-status` its status.
#[test]
fn installed_result_and_status_commands_work_in_the_real_cli() {
    let Some(bin) = claude_bin("installed_result_and_status_commands_work_in_the_real_cli") else {
        return;
    };
    let repo = TestRepo::new();
    repo.arev()
        .args(&["run", "src/lib.rs", "--max-rounds", "1"])
        .script(json!({"steps": [
            {"role": "enthusiast", "round": 1,
             "answer": {"findings": [finding("F1", "src/lib.rs", 2, "high", "error-handling")]}},
            {"role": "judge", "round": 1, "answer": {
                "rulings": [ruling("F1", "src/lib.rs", 2, "high", "enthusiast")],
                "summary": "1 confirmed", "convergence": false, "next_round_model": null}},
        ]}))
        .run()
        .assert_code(1);
    repo.arev()
        .args(&["install", "claude"])
        .run()
        .assert_code(0);
    let dir = the_run(&repo);
    let fake = FakeAnthropic::start(Script::new().session(vec![Step::Text("Noted.".into())]));
    let (ok, _, dbg) = session_with(&bin, &repo, &fake, "/arev-result", &[], false);
    assert!(ok, "{dbg}");
    let sent = session_messages(&fake, 0);
    let report_md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    let heading = report_md.lines().next().unwrap();
    assert!(sent.contains(&json_escaped(heading)), "{heading}\n{sent}");
    assert!(sent.contains("(arev exit code 1)"), "{sent}");
    let before = fake.requests().len();
    let (ok, _, dbg) = session_with(&bin, &repo, &fake, "/arev-status", &[], false);
    assert!(ok, "{dbg}");
    let sent = session_messages(&fake, before);
    assert!(sent.contains("status    complete"), "{sent}");
}
