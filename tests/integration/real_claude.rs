//! Drives the REAL Claude Code CLI (`AREV_TEST_CLAUDE_BIN`) against [`FakeAnthropic`].
//!
//! Skipped (with a note on stderr) when `AREV_TEST_CLAUDE_BIN` is unset, unless
//! `AREV_REQUIRE_REAL_CLIS=1`, in which case a missing binary is a failure. CI sets both.
//!
//! Findings from running Claude Code 2.1.330 against the fake (also see the
//! `fake_anthropic.rs` module docs):
//! * Environment: `env_clear()` + `PATH` + [`FakeAnthropic::claude_env`] (`HOME` = an EMPTY
//!   scratch dir, `ANTHROPIC_BASE_URL`, `ANTHROPIC_API_KEY=sk-ant-fake-000`,
//!   `CLAUDE_CODE_MAX_RETRIES=0`, `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1`,
//!   `DISABLE_TELEMETRY=1`) is enough: no onboarding/auth state, `~/.claude.json` or settings
//!   file is needed for `-p`, and stderr stays empty.
//! * The CLI only calls `POST /v1/messages?beta=true` (`stream: true`), once per agent step;
//!   no `count_tokens`, `/v1/models` or side requests. Nothing special is needed in the
//!   response headers.
//! * `--model opus` is sent to the API as `claude-opus-5-5` (alias resolved client-side).
//! * The prompt from stdin arrives as the first `user` message with plain string content;
//!   a `role:"system"` message (environment info) follows it.
//! * The `--append-system-prompt` text arrives inside the request's `system` blocks.
//! * Text + parallel tool calls in one response come back as ONE `assistant` message in the
//!   next request (but as one stream-json `assistant` line per block on stdout).
//! * Grep with an explicit absolute `path` (and Glob with one) runs under
//!   `--permission-mode dontAsk` + `--allowedTools Read,Grep,Glob`; Grep reports paths
//!   relative to the cwd (`src/lib.rs:2:...`).
//! * An HTTP 500 from the fake with `CLAUDE_CODE_MAX_RETRIES=0`: exit 1, one `result` with
//!   `is_error:true`, `api_error_status:500` (docs/architecture.md §16.1).

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::fake_anthropic::{FakeAnthropic, Script, Step};

const LIB_RS: &str = "/// The answer.\npub fn answer() -> u32 {\n    42\n}\n";
const ROLE_PROMPT: &str = "You are the arev Enthusiast.";
const TIMEOUT: Duration = Duration::from_secs(120);

/// Path of the real `claude` binary, or `None` (test skipped) when not configured.
pub fn claude_bin(test: &str) -> Option<PathBuf> {
    match std::env::var_os("AREV_TEST_CLAUDE_BIN") {
        Some(p) if !p.is_empty() => Some(PathBuf::from(p)),
        _ => {
            if std::env::var("AREV_REQUIRE_REAL_CLIS").as_deref() == Ok("1") {
                panic!(
                    "AREV_REQUIRE_REAL_CLIS=1 but AREV_TEST_CLAUDE_BIN is unset; point it at the \
                     Claude Code CLI (e.g. .../node_modules/.bin/claude)"
                );
            }
            #[allow(clippy::print_stderr)]
            {
                eprintln!("{test}: skipped (AREV_TEST_CLAUDE_BIN unset)");
            }
            None
        }
    }
}

fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// A temp project with `src/lib.rs`; returns (dir, canonical path of lib.rs, its sha256).
fn project() -> (tempfile::TempDir, PathBuf, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(dir.path().join("src")).expect("mkdir src");
    let lib = dir.path().join("src/lib.rs");
    std::fs::write(&lib, LIB_RS).expect("write lib.rs");
    // Canonical: /tmp may be a symlink, and the CLI reports canonical cwd paths.
    let lib = lib.canonicalize().expect("canonicalize");
    (dir, lib, sha256_hex(LIB_RS.as_bytes()))
}

fn prompt(target: &Path, sha: &str) -> String {
    format!(
        "[AR Round 1 — LIGHTWEIGHT] Enthusiast (pass 1/1)\nRead the target first.\n\
         <target path=\"{}\" kind=\"file\" sha256=\"{sha}\" />\nAnswer with JSON only.",
        target.display()
    )
}

/// Outcome of one CLI run.
pub struct ClaudeRun {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
    /// Parsed stream-json lines (non-JSON lines are dropped).
    pub events: Vec<Value>,
    pub elapsed: Duration,
}

impl ClaudeRun {
    /// The last `result` event.
    pub fn result(&self) -> Option<&Value> {
        self.events.iter().rev().find(|e| e["type"] == "result")
    }

    /// All `tool_use` blocks of `assistant` events.
    pub fn tool_uses(&self) -> Vec<&Value> {
        self.events
            .iter()
            .filter(|e| e["type"] == "assistant")
            .filter_map(|e| e["message"]["content"].as_array())
            .flatten()
            .filter(|b| b["type"] == "tool_use")
            .collect()
    }

    /// The `tool_result` block answering `tool_use_id`.
    pub fn tool_result(&self, tool_use_id: &str) -> Option<&Value> {
        self.events
            .iter()
            .filter(|e| e["type"] == "user")
            .filter_map(|e| e["message"]["content"].as_array())
            .flatten()
            .find(|b| b["type"] == "tool_result" && b["tool_use_id"] == tool_use_id)
    }

    fn debug(&self) -> String {
        format!(
            "status={:?} elapsed={:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.status, self.elapsed, self.stdout, self.stderr
        )
    }
}

/// Text of a tool_result's `content` (string or text blocks).
fn tool_result_text(block: &Value) -> String {
    match &block["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Runs the real CLI with the read-only worker flags (docs/architecture.md §16.1), `prompt`
/// on stdin, `cwd` as working directory, a cleared environment (only `PATH` kept) and a
/// scratch `HOME`; kills it after [`TIMEOUT`].
fn run_claude(bin: &Path, cwd: &Path, fake: &FakeAnthropic, prompt: &str) -> ClaudeRun {
    run_claude_model(bin, cwd, fake, prompt, "opus")
}

/// [`run_claude`] with `--model model`.
fn run_claude_model(
    bin: &Path,
    cwd: &Path,
    fake: &FakeAnthropic,
    prompt: &str,
    model: &str,
) -> ClaudeRun {
    let home = tempfile::tempdir().expect("scratch HOME");
    let mut cmd = Command::new(bin);
    cmd.args([
        "-p",
        "--output-format",
        "stream-json",
        "--verbose",
        "--tools",
        "Read,Grep,Glob",
        "--allowedTools",
        "Read,Grep,Glob",
        "--permission-mode",
        "dontAsk",
        "--strict-mcp-config",
        "--setting-sources",
        "project",
        "--no-session-persistence",
        "--max-turns",
        "8",
        "--model",
        model,
        "--append-system-prompt",
        ROLE_PROMPT,
    ])
    .current_dir(cwd)
    .env_clear()
    .envs(fake.claude_env(home.path()))
    .stdin(Stdio::piped())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    if let Some(path) = std::env::var_os("PATH") {
        cmd.env("PATH", path);
    }

    let started = Instant::now();
    let mut child = cmd.spawn().expect("spawn claude");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(prompt.as_bytes()).expect("write prompt");
    drop(stdin);
    let mut out = child.stdout.take().expect("stdout");
    let mut err = child.stderr.take().expect("stderr");
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
        if let Some(status) = child.try_wait().expect("try_wait") {
            break status;
        }
        if started.elapsed() > TIMEOUT {
            let _ = child.kill();
            let status = child.wait().expect("wait after kill");
            let stderr = err_t.join().unwrap_or_default();
            panic!("claude timed out after {TIMEOUT:?} ({status:?}); stderr:\n{stderr}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let elapsed = started.elapsed();
    let stdout = out_t.join().expect("stdout thread");
    let stderr = err_t.join().expect("stderr thread");
    let events = stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    ClaudeRun {
        status,
        stdout,
        stderr,
        events,
        elapsed,
    }
}

#[test]
fn claude_cli_reads_target_and_answers_via_fake_api() {
    let Some(bin) = claude_bin("claude_cli_reads_target_and_answers_via_fake_api") else {
        return;
    };
    let (dir, lib, sha) = project();
    let answer = json!({"findings": [], "summary": "lib.rs returns 42"});
    let fake = FakeAnthropic::start(Script::new().answer("Enthusiast", 1, answer.clone()));

    let run = run_claude(&bin, dir.path(), &fake, &prompt(&lib, &sha));
    let dbg = run.debug();
    assert!(run.status.success(), "claude failed: {dbg}");

    // The scripted Read of the target went out as an assistant tool_use...
    let lib_str = lib.to_str().expect("utf-8 path");
    let reads: Vec<_> = run
        .tool_uses()
        .into_iter()
        .filter(|b| b["name"] == "Read" && b["input"]["file_path"] == lib_str)
        .collect();
    assert_eq!(reads.len(), 1, "expected one Read of {lib_str}: {dbg}");
    // ...and the real Read tool ran: the tool_result holds a line of the file.
    let id = reads[0]["id"].as_str().expect("tool_use id");
    let result = run.tool_result(id).expect("tool_result for the Read");
    assert_ne!(result["is_error"], true, "Read failed: {result}");
    assert!(
        tool_result_text(result).contains("pub fn answer() -> u32 {"),
        "Read result lacks file content: {result}"
    );

    let final_result = run.result().expect("result event");
    assert_eq!(final_result["is_error"], false, "{dbg}");
    assert_eq!(final_result["result"], answer.to_string(), "{dbg}");

    let reqs = fake.requests();
    assert!(
        reqs.len() >= 2,
        "expected >= 2 requests, got {}",
        reqs.len()
    );
    for (i, r) in reqs.iter().enumerate() {
        assert_eq!(r.role(), Some("Enthusiast"), "request {i}");
        assert_eq!((r.round(), r.pass()), (Some(1), Some(1)), "request {i}");
        assert_eq!(r.step, i, "request {i}");
        assert!(r.scripted, "request {i}");
        assert!(
            r.system.contains(ROLE_PROMPT),
            "request {i} system lacks role prompt"
        );
        assert!(r.uri.starts_with("/v1/messages"), "request {i}: {}", r.uri);
        let target = r.turn.as_ref().and_then(|t| t.target.as_ref());
        assert_eq!(target.map(|t| t.path.as_str()), Some(lib_str));
        assert_eq!(target.map(|t| t.sha256.as_str()), Some(sha.as_str()));
    }
    assert_eq!(reqs[0].played, Step::ReadTarget);
    assert_eq!(
        reqs[0].model, "claude-opus-5-5",
        "`--model opus` as sent to the API"
    );
    assert!(
        fake.stray_requests().is_empty(),
        "{:?}",
        fake.stray_requests()
    );
}

#[test]
fn claude_cli_runs_scripted_grep_and_parallel_tools() {
    let Some(bin) = claude_bin("claude_cli_runs_scripted_grep_and_parallel_tools") else {
        return;
    };
    let (dir, lib, sha) = project();
    std::fs::write(dir.path().join("README.md"), "# demo\nsee answer()\n").expect("readme");
    let src = lib.parent().expect("src dir").to_path_buf();
    let readme = dir.path().join("README.md").canonicalize().expect("readme");
    let answer = json!({"findings": [{"id": "F1", "title": "magic number"}]});
    let fake = FakeAnthropic::start(
        Script::new()
            .answer("Enthusiast", 1, answer.clone())
            .steps(
                "Enthusiast",
                1,
                vec![
                    Step::ReadTarget,
                    Step::Grep {
                        pattern: "fn answer".to_owned(),
                        path: src,
                    },
                    // Text + two parallel tool calls in one response.
                    Step::Blocks(vec![
                        crate::fake_anthropic::Block::Text("Checking more.".to_owned()),
                        crate::fake_anthropic::Block::ToolUse {
                            name: "Read".to_owned(),
                            input: json!({"file_path": readme.to_str().expect("utf-8")}),
                        },
                        crate::fake_anthropic::Block::ToolUse {
                            name: "Glob".to_owned(),
                            input: json!({"pattern": "**/*.rs", "path": dir.path().canonicalize().expect("dir").to_str().expect("utf-8")}),
                        },
                    ]),
                    Step::Answer,
                ],
            ),
    );

    let run = run_claude(&bin, dir.path(), &fake, &prompt(&lib, &sha));
    let dbg = run.debug();
    assert!(run.status.success(), "claude failed: {dbg}");

    let uses = run.tool_uses();
    let grep = uses
        .iter()
        .find(|b| b["name"] == "Grep")
        .unwrap_or_else(|| panic!("no Grep tool_use: {dbg}"));
    let grep_result = run
        .tool_result(grep["id"].as_str().expect("id"))
        .unwrap_or_else(|| panic!("no Grep result: {dbg}"));
    assert_ne!(grep_result["is_error"], true, "Grep failed: {grep_result}");
    assert!(
        tool_result_text(grep_result).contains("pub fn answer() -> u32 {"),
        "Grep did not find the line: {grep_result}"
    );
    let readme_use = uses
        .iter()
        .find(|b| b["name"] == "Read" && b["input"]["file_path"] == readme.to_str().expect("utf-8"))
        .unwrap_or_else(|| panic!("no README Read: {dbg}"));
    let readme_result = run
        .tool_result(readme_use["id"].as_str().expect("id"))
        .expect("README result");
    assert!(
        tool_result_text(readme_result).contains("see answer()"),
        "{readme_result}"
    );
    let glob_use = uses
        .iter()
        .find(|b| b["name"] == "Glob")
        .unwrap_or_else(|| panic!("no Glob: {dbg}"));
    let glob_result = run
        .tool_result(glob_use["id"].as_str().expect("id"))
        .expect("Glob result");
    assert!(
        tool_result_text(glob_result).contains("lib.rs"),
        "{glob_result}"
    );

    let final_result = run.result().expect("result event");
    assert_eq!(final_result["is_error"], false, "{dbg}");
    assert_eq!(final_result["result"], answer.to_string(), "{dbg}");

    let steps: Vec<usize> = fake.requests().iter().map(|r| r.step).collect();
    assert_eq!(steps, vec![0, 1, 2, 3], "{dbg}");
    assert!(
        fake.stray_requests().is_empty(),
        "{:?}",
        fake.stray_requests()
    );
}

#[test]
fn claude_cli_reports_http_500_from_fake_api() {
    let Some(bin) = claude_bin("claude_cli_reports_http_500_from_fake_api") else {
        return;
    };
    let (dir, lib, sha) = project();
    let fake = FakeAnthropic::start(Script::new().steps(
        "Enthusiast",
        1,
        vec![Step::HttpError {
            status: 500,
            message: "fake 500".to_owned(),
        }],
    ));
    let run = run_claude(&bin, dir.path(), &fake, &prompt(&lib, &sha));
    let dbg = run.debug();
    assert_eq!(run.status.code(), Some(1), "{dbg}");
    let result = run.result().expect("result event");
    assert_eq!(result["is_error"], true, "{dbg}");
    assert_eq!(result["api_error_status"], 500, "{dbg}");
    assert_eq!(
        fake.requests().len(),
        1,
        "CLAUDE_CODE_MAX_RETRIES=0 must stop retries"
    );
}

/// A whole arev review driven through the real Claude Code CLI: round 1 Enthusiast finds a
/// defect, the Adversary maps a safe zone, the Judge confirms; round 2 finds nothing and the
/// run stops with `zero-findings`. Every agent really Reads the target through the CLI.
#[test]
fn arev_round_with_real_claude_cli() {
    let Some(bin) = claude_bin("arev_round_with_real_claude_cli") else {
        return;
    };
    let repo = crate::harness::TestRepo::new();
    let finding = crate::harness::finding("F1", "src/lib.rs", 2, "high", "error-handling");
    let script = Script::new()
        .answer("Enthusiast", 1, json!({"findings": [finding]}))
        .answer(
            "Adversary",
            1,
            json!({"heuristics": [], "safe_zones": [{"id": "Z1", "file": "src/lib.rs",
                "line_start": 5, "line_end": 5, "reason": "pure identity",
                "evidence": "pub fn id(x: u32) -> u32 { x }"}]}),
        )
        .answer(
            "Judge",
            1,
            json!({"rulings": [crate::harness::ruling("F1", "src/lib.rs", 2, "high", "enthusiast")],
                "summary": "1 confirmed, 0 debunked.", "convergence": false, "next_round_model": null}),
        )
        .answer("Enthusiast", 2, json!({"findings": []}))
        .answer("Adversary", 2, json!({"heuristics": [], "safe_zones": []}));
    // Round 2 finds nothing new: its Enthusiast's answer is held until arev has recorded
    // its Adversary, which is then never cancelled for it (docs/contracts.md §7).
    let gate = repo.adversary_recorded(2);
    let script = script.hold(
        "Enthusiast",
        2,
        1,
        std::path::Path::new(gate["path"].as_str().unwrap()),
    );
    let fake = FakeAnthropic::start(script);
    // Configure the real CLI as the `claude` agent by path.
    repo.write(
        "arev.toml",
        &format!(
            "[agents.claude]\nbackend = \"claude\"\nbinary = \"{}\"\n",
            bin.display()
        ),
    );
    repo.commit("config");
    let mut arev = repo.arev().args(&["run", "src/lib.rs", "--format", "json"]);
    for (k, v) in fake.claude_env(&repo.scratch.join("home")) {
        arev = arev.env(k, &v);
    }
    arev = arev.env("AREV_AGENT_TIMEOUT", "120s");
    let run = arev.run();
    run.assert_code(1);
    let report: Value = serde_json::from_str(&run.stdout).expect("json report");
    assert_eq!(report["status"], "complete");
    assert_eq!(report["stop_reason"], "zero-findings");
    assert_eq!(report["confirmed"][0]["file"], "src/lib.rs");
    assert_eq!(report["confirmed"][0]["line"], 2);
    assert_eq!(report["rounds"].as_array().unwrap().len(), 2);
    assert!(
        report["cost"]["usd"].as_f64().unwrap() > 0.0,
        "cost from the CLI's result events"
    );
    // The fake saw every role of both rounds (round 2 has no Judge), each reading the
    // target first and answering second.
    let reqs = fake.requests();
    for (role, round) in [
        ("Enthusiast", 1),
        ("Adversary", 1),
        ("Judge", 1),
        ("Enthusiast", 2),
        ("Adversary", 2),
    ] {
        let steps: Vec<usize> = reqs
            .iter()
            .filter(|r| r.role() == Some(role) && r.round() == Some(round))
            .map(|r| r.step)
            .collect();
        assert!(
            steps.contains(&0) && steps.contains(&1),
            "{role} r{round}: steps {steps:?}"
        );
    }
    assert!(
        fake.stray_requests().is_empty(),
        "{:?}",
        fake.stray_requests()
    );
    // The role body went in as the system prompt; the real Read ran (the events show it).
    assert!(reqs
        .iter()
        .any(|r| r.role() == Some("Judge") && r.system.contains("Judge")));
    let dir = run.run_dir();
    let events = std::fs::read_to_string(dir.join("agents/r1/judge/events.jsonl")).unwrap();
    assert!(events.contains("\"tool_use\"") && events.contains("tool_result"));
    assert!(
        events.contains("s.parse().unwrap()"),
        "the real Read returned the file content"
    );
}

#[test]
fn arev_iterate_with_real_claude_cli_as_fixer() {
    let Some(bin) = claude_bin("arev_iterate_with_real_claude_cli_as_fixer") else {
        return;
    };
    let repo = crate::harness::TestRepo::new();
    repo.write(
        "arev.toml",
        &format!(
            "[agents.claude]\nbackend = \"claude\"\nbinary = \"{}\"\n",
            bin.display()
        ),
    );
    repo.commit("config");
    let before = repo.state();
    let finding = crate::harness::finding("F1", "src/lib.rs", 2, "high", "error-handling");
    let ruling = crate::harness::ruling("F1", "src/lib.rs", 2, "high", "enthusiast");
    let outside = repo.scratch.join("escaped.txt");
    let in_user_tree = repo.root.join("src/escaped.rs");
    // Every review confirms F1 in round 1; the Fixer (round = iteration 1) really Edits the
    // file, by a path relative to its cwd (the worktree). With --max-iterations 2 the
    // second review is the last one: max-iterations.
    let script = Script::new()
        .answer("Enthusiast", 1, json!({"findings": [finding]}))
        .answer("Adversary", 1, json!({"heuristics": [], "safe_zones": []}))
        .answer(
            "Judge",
            1,
            json!({"rulings": [ruling], "summary": "1 confirmed.", "convergence": false, "next_round_model": null}),
        )
        .answer("Enthusiast", 2, json!({"findings": []}))
        .answer("Adversary", 2, json!({"heuristics": [], "safe_zones": []}))
        .answer("Fixer", 1, json!({"applied": ["F1"], "skipped": []}))
        .steps(
            "Fixer",
            1,
            vec![
                Step::ReadTarget,
                // Both refused by the CLI (Edit/Write are allowed only below the cwd): the
                // user's own working tree and a path outside the repository stay untouched.
                Step::Tool {
                    name: "Write".into(),
                    input: json!({"file_path": outside, "content": "escaped"}),
                },
                Step::Tool {
                    name: "Write".into(),
                    input: json!({"file_path": in_user_tree, "content": "escaped"}),
                },
                Step::Tool {
                    name: "Edit".into(),
                    input: json!({"file_path": "src/lib.rs", "old_string": "s.parse().unwrap()",
                                  "new_string": "s.parse().unwrap_or(0)"}),
                },
                Step::Answer,
            ],
        );
    let fake = FakeAnthropic::start(script);
    let mut arev = repo.arev().args(&[
        "run",
        "src/lib.rs",
        "--iterate",
        "--max-iterations",
        "2",
        "--format",
        "json",
    ]);
    for (k, v) in fake.claude_env(&repo.scratch.join("home")) {
        arev = arev.env(k, &v);
    }
    let run = arev.env("AREV_AGENT_TIMEOUT", "120s").run();
    run.assert_code(1);
    repo.assert_untouched(&before);
    let report: Value = serde_json::from_str(&run.stdout).expect("json report");
    let it = &report["iterate"];
    assert_eq!(it["stop_reason"], "max-iterations", "{}", run.stderr);
    let fix = &it["iterations"][0]["fix"];
    assert_eq!(fix["applied"], json!(["F1"]));
    assert_eq!(fix["changed"], json!(["src/lib.rs"]), "{fix}");
    assert!(
        !outside.exists() && !in_user_tree.exists(),
        "a denied write happened"
    );
    assert_eq!(
        fix["errors"],
        json!([
            format!("fixer_write_denied:{}", outside.display()),
            format!("fixer_write_denied:{}", in_user_tree.display())
        ])
    );
    let wt = PathBuf::from(it["worktree"].as_str().unwrap());
    let fixed = std::fs::read_to_string(wt.join("src/lib.rs")).unwrap();
    assert!(fixed.contains("s.parse().unwrap_or(0)"), "{fixed}");
    let branch = it["branch"].as_str().unwrap();
    assert_eq!(
        repo.git(&["log", "-1", "--format=%s", branch]).trim(),
        "arev: fix F1 (iteration 1)"
    );
    // The real CLI was started with Edit/Write allowed under dontAsk, in the worktree.
    let events = std::fs::read_to_string(
        run.run_dir()
            .join("iterations/1/agents/fix/fixer/events.jsonl"),
    )
    .unwrap();
    // (A `--settings` layer makes the CLI print a `system/ui_invalidate` line first.)
    let init: Value = events
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|e| e["subtype"] == "init")
        .expect("init event");
    assert_eq!(init["permissionMode"], "dontAsk");
    assert_eq!(init["cwd"], wt.display().to_string());
    let tools: Vec<&str> = init["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        tools.contains(&"Edit") && tools.contains(&"Write"),
        "{tools:?}"
    );
    assert!(!tools.contains(&"Bash"), "{tools:?}");
    assert!(fake.stray_requests().is_empty());
}

/// A reviewer session carries nothing of the user's own context (docs/contracts.md §19.1): a
/// `~/.claude/CLAUDE.md` in the scratch HOME, an auto-memory file and the reviewed
/// repository's own `CLAUDE.md` never reach the API; the role body replaces Claude Code's
/// system prompt, and a one-file target is offered Read alone.
#[test]
fn arev_reviewer_sessions_carry_no_personal_context() {
    let Some(bin) = claude_bin("arev_reviewer_sessions_carry_no_personal_context") else {
        return;
    };
    let repo = crate::harness::TestRepo::new();
    repo.write(
        "arev.toml",
        &format!(
            "[agents.claude]\nbackend = \"claude\"\nbinary = \"{}\"\n",
            bin.display()
        ),
    );
    repo.write("CLAUDE.md", "PROJECT-MEMORY-MARKER: obey the repository.\n");
    repo.commit("config");
    let home = repo.scratch.join("home");
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    std::fs::write(
        home.join(".claude/CLAUDE.md"),
        "PERSONAL-MEMORY-MARKER: I prefer terse answers.\n",
    )
    .unwrap();
    // The Enthusiast's answer (after its Read) is held until arev has recorded the
    // Adversary's, so the Adversary is never cancelled for having nothing to judge and both
    // reviewers' requests are checked.
    let adversary_recorded = repo.adversary_recorded(1);
    let fake = FakeAnthropic::start(
        Script::new()
            .answer("Enthusiast", 1, json!({"findings": []}))
            .answer("Adversary", 1, json!({"heuristics": [], "safe_zones": []}))
            .hold(
                "Enthusiast",
                1,
                1,
                std::path::Path::new(adversary_recorded["path"].as_str().unwrap()),
            ),
    );
    let mut arev = repo.arev().args(&["run", "src/lib.rs", "--format", "json"]);
    for (k, v) in fake.claude_env(&home) {
        arev = arev.env(k, &v);
    }
    let run = arev.env("AREV_AGENT_TIMEOUT", "120s").run();
    // Nothing found: a clean review.
    run.assert_code(0);
    let reqs = fake.requests();
    for role in ["Enthusiast", "Adversary"] {
        assert!(
            reqs.iter()
                .any(|r| r.turn.as_ref().is_some_and(|t| t.role == role) && r.step == 1),
            "{role} answered after its Read"
        );
    }
    for r in &reqs {
        let body = r.body.to_string();
        assert!(
            !body.contains("PERSONAL-MEMORY-MARKER") && !body.contains("PROJECT-MEMORY-MARKER"),
            "personal or project memory reached the API: {body}"
        );
        assert!(
            r.system.contains("# Role:"),
            "the role body is the system prompt"
        );
        assert!(
            !r.system.contains("auto memory") && !r.system.contains("CLAUDE.md"),
            "Claude Code's own system prompt is replaced: {}",
            r.system
        );
        let tools: Vec<&str> = r.body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t["name"].as_str())
            .collect();
        assert!(
            tools.contains(&"Read") && !tools.contains(&"Glob") && !tools.contains(&"Grep"),
            "{tools:?}"
        );
        assert!(
            !tools.contains(&"Bash") && !tools.contains(&"Write"),
            "{tools:?}"
        );
    }
}

/// A repository whose arev.toml runs the real CLI `bin` as the `claude` agent, and the
/// `arev run` of `target` against `fake` (JSON report on stdout).
fn real_claude_run(
    bin: &Path,
    fake: &FakeAnthropic,
    repo: &crate::harness::TestRepo,
    args: &[&str],
) -> crate::harness::Run {
    repo.write(
        "arev.toml",
        &format!(
            "[agents.claude]\nbackend = \"claude\"\nbinary = \"{}\"\n",
            bin.display()
        ),
    );
    repo.commit("config");
    let mut arev = repo.arev().args(args);
    for (k, v) in fake.claude_env(&repo.scratch.join("home")) {
        arev = arev.env(k, &v);
    }
    arev.env("AREV_AGENT_TIMEOUT", "120s").run()
}

/// Every token the fake API billed (input however cached, and output).
fn billed_tokens(fake: &FakeAnthropic) -> u64 {
    fake.requests()
        .iter()
        .map(|r| r.bill.sent() + r.bill.output)
        .sum()
}

/// report.json's `cost.tokens` is what the API billed (issue #35: it was 15 % short, the
/// round-2 Adversary cancelled for having nothing to judge being recorded at 0 although
/// both its requests were billed). Here that Adversary is stopped while its second request
/// waits for an answer: its first request's usage comes from its events, the second is
/// counted from when it was sent.
#[test]
fn report_cost_agrees_with_what_the_api_billed() {
    let Some(bin) = claude_bin("report_cost_agrees_with_what_the_api_billed") else {
        return;
    };
    let repo = crate::harness::TestRepo::new();
    let finding = crate::harness::finding("F1", "src/lib.rs", 2, "high", "error-handling");
    let slow = |secs| Step::Delay(Duration::from_secs(secs), Box::new(Step::Answer));
    let script = Script::new()
        .answer("Enthusiast", 1, json!({"findings": [finding]}))
        .answer("Adversary", 1, json!({"heuristics": [], "safe_zones": []}))
        .answer(
            "Judge",
            1,
            json!({"rulings": [crate::harness::ruling("F1", "src/lib.rs", 2, "high", "enthusiast")],
                "summary": "1 confirmed.", "convergence": false, "next_round_model": null}),
        )
        .answer("Enthusiast", 2, json!({"findings": []}))
        // The round-2 Enthusiast answers after the Adversary has sent its second request,
        // which is never answered: the Adversary is cancelled while it waits.
        .steps("Enthusiast", 2, vec![Step::ReadTarget, slow(3)])
        .steps("Adversary", 2, vec![Step::ReadTarget, slow(60)]);
    let fake = FakeAnthropic::start(script);
    let run = real_claude_run(
        &bin,
        &fake,
        &repo,
        &["run", "src/lib.rs", "--format", "json"],
    );
    run.assert_code(1);
    let report: Value = serde_json::from_str(&run.stdout).expect("json report");
    assert_eq!(report["stop_reason"], "zero-findings", "{report}");
    let r2 = run.json("round-2.json");
    let adv = r2["dispatches"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["role"] == "adversary")
        .unwrap_or_else(|| panic!("no adversary dispatch: {r2}"))
        .clone();
    assert_eq!(adv["outcome"]["end"]["kind"], "cancelled", "{adv}");
    assert!(adv["outcome"]["cost_usd"].as_f64().unwrap() > 0.0, "{adv}");
    let adv_requests = fake
        .requests()
        .iter()
        .filter(|r| r.role() == Some("Adversary") && r.round() == Some(2))
        .count();
    assert_eq!(
        adv_requests, 2,
        "the cancelled Adversary sent both requests"
    );
    let billed = billed_tokens(&fake);
    let recorded = report["cost"]["tokens"].as_u64().unwrap();
    let off = recorded.abs_diff(billed) as f64 / billed as f64;
    assert!(
        off <= 0.02,
        "report.json {recorded} tokens, the API billed {billed} ({:.1} % off)",
        off * 100.0
    );
}

/// `--budget-usd` holds while an agent runs (docs/contracts.md §19.3): each dispatch gets
/// its share of the budget as the CLI's own `--max-budget-usd` (here $0.035 each, for one
/// pass and the Adversary), and the Enthusiast's first response (≈ $0.040 of cache writes)
/// passes it, while the run's total ($0.040 of $0.07) does not trip arev's meter: Claude
/// Code ends the session (`error_max_budget_usd`). arev does not re-dispatch it — what is
/// left is the Adversary's share, nothing can pay for a second Enthusiast — but stops the
/// Adversary (held on its first request) at once, the Judge never starts, and the run
/// aborts `budget_exhausted_before_verdict` (exit 3: no verdict), having spent no more than
/// the budget.
#[test]
fn a_budget_stops_the_real_cli_mid_dispatch() {
    let Some(bin) = claude_bin("a_budget_stops_the_real_cli_mid_dispatch") else {
        return;
    };
    let repo = crate::harness::TestRepo::new();
    // ≈ 15k tokens: its Read result costs ≈ $0.09 to send on (written to the cache).
    let big: String = (0..1500)
        .map(|i| format!("pub fn f{i:04}() -> u32 {{ {i:05} }} // …\n"))
        .collect();
    repo.write("src/big.rs", &big).commit("big");
    let never = repo.scratch.join("never");
    let script = Script::new()
        .steps("Enthusiast", 1, vec![Step::ReadTarget, Step::Answer])
        .steps("Adversary", 1, vec![Step::ReadTarget])
        .hold("Adversary", 1, 0, &never);
    let fake = FakeAnthropic::start(script);
    let budget = 0.07;
    let run = real_claude_run(
        &bin,
        &fake,
        &repo,
        &[
            "run",
            "src/big.rs",
            "--format",
            "json",
            "--passes",
            "1",
            "--budget-usd",
            &budget.to_string(),
        ],
    );
    run.assert_code(3);
    let report: Value = serde_json::from_str(&run.stdout).expect("json report");
    assert_eq!(
        report["abort_reason"], "budget_exhausted_before_verdict",
        "{report}"
    );
    let r1 = run.json("round-1.json");
    assert!(
        r1["decision"]["reasons"]
            .to_string()
            .contains("budget exhausted while the finders ran"),
        "{r1}"
    );
    let dispatches = r1["dispatches"].as_array().unwrap();
    let roles: Vec<&str> = dispatches
        .iter()
        .map(|d| d["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["enthusiast", "adversary"], "{r1}");
    let enth = &dispatches[0];
    assert_eq!(enth["outcome"]["subtype"], "error_max_budget_usd", "{enth}");
    assert_eq!(enth["outcome"]["fault"]["cause"], "budget_share", "{enth}");
    assert_eq!(dispatches[1]["outcome"]["end"]["kind"], "cancelled", "{r1}");
    let total = report["cost"]["usd"].as_f64().unwrap();
    assert!(total <= budget, "spent {total} > budget {budget}");
    let enth_requests = fake
        .requests()
        .iter()
        .filter(|r| r.role() == Some("Enthusiast"))
        .count();
    assert_eq!(enth_requests, 1, "the CLI sent nothing past its share");
    assert!(fake.requests().iter().all(|r| r.role() != Some("Judge")));
}

/// arev prices a dispatch without a result event (`dispatch::list_price_usd`) as the CLI
/// prices the ones with a result: for each tier alias, with and without prompt caching, the
/// table gives the CLI's own `total_cost_usd` for the usage it reports.
#[test]
fn list_prices_are_the_clis_own() {
    let Some(bin) = claude_bin("list_prices_are_the_clis_own") else {
        return;
    };
    let (dir, lib, sha) = project();
    let answer = json!({"findings": []});
    for model in ["opus", "sonnet", "haiku"] {
        // No prefix is cached, then the usual 1,024-token minimum: every kind of input.
        for min_cacheable in [u64::MAX, 1024] {
            let script = Script::new()
                .answer("Enthusiast", 1, answer.clone())
                .min_cacheable(min_cacheable);
            let fake = FakeAnthropic::start(script);
            let run = run_claude_model(&bin, dir.path(), &fake, &prompt(&lib, &sha), model);
            let result = run.result().expect("result event");
            let u = &result["usage"];
            let n = |k: &str| u[k].as_u64().unwrap();
            let usage = arev::dispatch::Usage {
                input_tokens: n("input_tokens"),
                output_tokens: n("output_tokens"),
                cache_creation_input_tokens: n("cache_creation_input_tokens"),
                cache_read_input_tokens: n("cache_read_input_tokens"),
            };
            assert!(usage.total() > 0, "{result}");
            let ours =
                arev::dispatch::list_price_usd(arev::dispatch::EventFormat::Claude, model, &usage);
            let theirs = result["total_cost_usd"].as_f64().unwrap();
            assert!(
                (ours - theirs).abs() <= 1e-9 + theirs * 1e-9,
                "{model}: arev ${ours}, the CLI ${theirs} for {u}"
            );
        }
    }
}

/// The real Claude Code CLI as the Prover (`--prove`, docs/prove.md): it Reads the target,
/// creates a reproducer with Write inside its scratch worktree (allowed there by the
/// session's rules, with no Edit tool and no shell), answers the schema — and arev runs the
/// reproducer itself in the sandbox: the planted regression is `reproduced`.
#[test]
fn arev_prove_with_real_claude_cli_as_prover() {
    let Some(bin) = claude_bin("arev_prove_with_real_claude_cli_as_prover") else {
        return;
    };
    let repo = crate::harness::TestRepo::new();
    repo.write(
        "arev.toml",
        &format!(
            "[agents.claude]\nbackend = \"claude\"\nbinary = \"{}\"\n",
            bin.display()
        ),
    )
    .write("calc.py", "def add(a, b):\n    return a + b\n")
    .commit("calc");
    repo.git(&["checkout", "-q", "-b", "feature"]);
    repo.write("calc.py", "def add(a, b):\n    return a - b\n")
        .commit("regression");
    let before = repo.state();
    let test = "import unittest\nimport calc\n\n\nclass Repro(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(calc.add(2, 3), 5)\n";
    let finding = crate::harness::finding("F1", "calc.py", 2, "high", "logic");
    let ruling = crate::harness::ruling("F1", "calc.py", 2, "high", "enthusiast");
    let prover = "Prover (finding F1)";
    let script = Script::new()
        .answer("Enthusiast", 1, json!({"findings": [finding]}))
        .answer("Adversary", 1, json!({"heuristics": [], "safe_zones": []}))
        .answer(
            "Judge",
            1,
            json!({"rulings": [ruling], "summary": "1 confirmed.", "convergence": true, "next_round_model": null}),
        )
        .answer("Enthusiast", 2, json!({"findings": []}))
        .answer("Adversary", 2, json!({"heuristics": [], "safe_zones": []}))
        .answer(
            prover,
            1,
            json!({"finding_id": "F1", "files": ["test_arev_f1.py"],
                   "command": ["python3", "-m", "unittest", "-v", "test_arev_f1"],
                   "claim": "add(2, 3) returns -1"}),
        )
        .steps(
            prover,
            1,
            vec![
                Step::ReadTarget,
                Step::WriteInWorktree {
                    rel: "test_arev_f1.py".into(),
                    content: test.into(),
                },
                Step::Answer,
            ],
        );
    let fake = FakeAnthropic::start(script);
    let mut arev = repo.arev().args(&[
        "run", "diff", "--base", "main", "--prove", "--format", "json",
    ]);
    for (k, v) in fake.claude_env(&repo.scratch.join("home")) {
        arev = arev.env(k, &v);
    }
    let run = arev.env("AREV_AGENT_TIMEOUT", "120s").run();
    run.assert_code(1);
    repo.assert_untouched(&before);
    let report: Value = serde_json::from_str(&run.stdout).expect("json report");
    let proof = &report["confirmed"][0]["proof"];
    assert_eq!(proof["status"], "reproduced", "{proof:#}\n{}", run.stderr);
    assert_eq!(proof["files"], json!(["test_arev_f1.py"]));
    assert_eq!(proof["head"]["exit"], 1);
    assert!(proof["head"]["output_tail"]
        .as_str()
        .unwrap()
        .contains("AssertionError: -1 != 5"));
    assert_eq!(proof["base"]["exit"], 0, "{proof:#}");
    assert_eq!(
        std::fs::read_to_string(run.run_dir().join("proofs/r1-F1/test_arev_f1.py")).unwrap(),
        test
    );
    // The real CLI ran the Prover with Read, Grep and Write only, under dontAsk, in the
    // scratch worktree — and its Write was allowed (no permission denial).
    let events = std::fs::read_to_string(
        run.run_dir()
            .join("agents/p/r1-F1/prover-r1-F1/events.jsonl"),
    )
    .unwrap();
    let parsed: Vec<Value> = events
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .collect();
    let init = parsed
        .iter()
        .find(|e| e["subtype"] == "init")
        .expect("init event");
    assert_eq!(init["permissionMode"], "dontAsk");
    let mut tools: Vec<&str> = init["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .filter(|t| *t != "DeferredToolPlaceholder")
        .collect();
    tools.sort_unstable();
    assert_eq!(tools, ["Grep", "Read", "Write"]);
    // The scratch tree is named like the repository's directory (`repo`).
    assert!(init["cwd"].as_str().unwrap().ends_with("/repo"), "{init}");
    let result = parsed.iter().find(|e| e["type"] == "result").unwrap();
    assert_eq!(result["permission_denials"], json!([]), "{result}");
    assert!(fake.stray_requests().is_empty());
}
