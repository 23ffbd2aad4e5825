//! Drives the REAL Codex (`AREV_TEST_CODEX_BIN`) and Gemini (`AREV_TEST_GEMINI_BIN`) CLIs
//! through whole arev rounds against their loopback fakes, and a mixed-vendor panel of all
//! three real CLIs (`AREV_TEST_CLAUDE_BIN` too).
//!
//! Skipped (with a note on stderr) when a binary is unset, unless `AREV_REQUIRE_REAL_CLIS=1`,
//! in which case a missing binary is a failure. CI sets all of them.

use std::path::PathBuf;

use serde_json::{json, Value};

use crate::fake_anthropic::{FakeAnthropic, Script as ClaudeScript};
use crate::fake_gemini::FakeGemini;
use crate::fake_llm::Script;
use crate::fake_openai::{FakeOpenAi, KEY_VAR};
use crate::harness::{finding, ruling, TestRepo};

/// Path of a real CLI from `var`, or `None` (test skipped) when not configured.
pub fn real_bin(var: &str, test: &str) -> Option<PathBuf> {
    match std::env::var_os(var) {
        Some(p) if !p.is_empty() => Some(PathBuf::from(p)),
        _ => {
            if std::env::var("AREV_REQUIRE_REAL_CLIS").as_deref() == Ok("1") {
                panic!("AREV_REQUIRE_REAL_CLIS=1 but {var} is unset");
            }
            #[allow(clippy::print_stderr)]
            {
                eprintln!("{test}: skipped ({var} unset)");
            }
            None
        }
    }
}

pub fn toml_str(s: &str) -> String {
    toml::Value::String(s.to_owned()).to_string()
}

fn toml_list(items: &[String]) -> String {
    toml::Value::Array(items.iter().cloned().map(toml::Value::String).collect()).to_string()
}

pub fn codex_agent(bin: &std::path::Path, fake: &FakeOpenAi) -> String {
    format!(
        "[agents.codex]\nbackend = \"codex\"\nbinary = {}\nextra_args = {}\npass_env = [\"{KEY_VAR}\"]\n",
        toml_str(&bin.display().to_string()),
        toml_list(&fake.codex_args())
    )
}

pub fn gemini_agent(bin: &std::path::Path) -> String {
    format!(
        "[agents.gemini]\nbackend = \"gemini\"\nbinary = {}\n",
        toml_str(&bin.display().to_string())
    )
}

/// A personal skill of the user's, planted in the scratch home: its description must never
/// reach a reviewer's request (docs/contracts.md §19.1).
pub const SKILL_MARKER: &str = "SKILL-MARKER-91c2";

pub fn plant_personal_skill(skills_dir: &std::path::Path) {
    let dir = skills_dir.join("haiku-skill");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        format!("---\nname: haiku-skill\ndescription: {SKILL_MARKER} write everything as haiku\n---\n\nWrite haiku.\n"),
    )
    .unwrap();
}

/// The one-round-then-clean script of `real_claude::arev_round_with_real_claude_cli`.
pub fn round_script() -> Script {
    Script::new()
        .answer(
            "Enthusiast",
            1,
            json!({"findings": [finding("F1", "src/lib.rs", 2, "high", "error-handling")]}),
        )
        .answer("Adversary", 1, json!({"heuristics": [], "safe_zones": []}))
        .answer(
            "Judge",
            1,
            json!({"rulings": [ruling("F1", "src/lib.rs", 2, "high", "enthusiast")],
                "summary": "1 confirmed.", "convergence": false, "next_round_model": null}),
        )
        .answer("Enthusiast", 2, json!({"findings": []}))
        .answer("Adversary", 2, json!({"heuristics": [], "safe_zones": []}))
}

pub fn assert_round_completed(run: &crate::harness::Run, agent: &str) -> Value {
    run.assert_code(1);
    let report: Value = serde_json::from_str(&run.stdout).expect("json report");
    assert_eq!(report["status"], "complete", "{}", run.stderr);
    assert_eq!(report["stop_reason"], "zero-findings");
    assert_eq!(report["rounds"].as_array().unwrap().len(), 2);
    let c = &report["confirmed"][0];
    assert_eq!(
        (c["file"].as_str(), c["line"].as_u64()),
        (Some("src/lib.rs"), Some(2))
    );
    assert_eq!(c["found_by"], json!([agent]));
    assert_eq!(c["ruled_by"], agent);
    assert!(
        report["cost"]["tokens"].as_u64().unwrap() > 0,
        "usage parsed"
    );
    report
}

/// [`round_script`] with round 2's Enthusiast answer (its request after the Read) held
/// until arev has recorded round 2's Adversary in `repo`: round 2 finds nothing new, and
/// the Adversary would otherwise be cancelled or not depending on the load
/// (docs/contracts.md §7).
pub fn round_script_held(repo: &TestRepo) -> Script {
    let gate = repo.adversary_recorded(2);
    round_script().hold(
        "Enthusiast",
        2,
        1,
        std::path::Path::new(gate["path"].as_str().unwrap()),
    )
}

/// Every role of both rounds (round 2 has no Judge) read first (step 0) and answered second
/// (step 1), with [`round_script_held`]'s order: round 2's Adversary answers before its
/// Enthusiast, so it is never cancelled.
pub fn assert_read_then_answer(reqs: &[crate::fake_llm::Recorded]) {
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
}

/// A whole review through the real Codex CLI: its shell `nl -ba <target>` is the Read the
/// tool-use gate needs, its last agent message is each role's answer.
#[test]
fn arev_round_with_real_codex_cli() {
    let Some(bin) = real_bin("AREV_TEST_CODEX_BIN", "arev_round_with_real_codex_cli") else {
        return;
    };
    let repo = TestRepo::new();
    let fake = FakeOpenAi::start(round_script_held(&repo));
    repo.write("arev.toml", &codex_agent(&bin, &fake));
    repo.commit("config");
    let home = repo.scratch.join("home");
    let mut arev = repo
        .arev()
        .args(&["run", "src/lib.rs", "--format", "json", "--agent", "codex"])
        .env("AREV_AGENT_TIMEOUT", "120s");
    for (k, v) in fake.codex_env(&home) {
        arev = arev.env(k, &v);
    }
    plant_personal_skill(&home.join(".codex/skills"));
    let run = arev.run();
    assert_round_completed(&run, "codex");
    let reqs = fake.requests();
    assert_read_then_answer(&reqs);
    assert!(
        fake.stray_requests().is_empty(),
        "{:?}",
        fake.stray_requests()
    );
    // The provider key reached Codex only through `pass_env`, and arrived as a bearer token.
    assert!(reqs
        .iter()
        .all(|r| r.header("authorization") == Some("Bearer sk-fake-openai-000")));
    // The role body replaced Codex's own base instructions (the first input item); the
    // tools a reviewer does not use were not offered, nor the user's skills.
    let judge = reqs.iter().find(|r| r.role() == Some("Judge")).unwrap();
    let first = judge.body["input"][0]["content"][0]["text"]
        .as_str()
        .unwrap();
    assert!(first.starts_with("# Role: Judge"), "{first:.80}");
    let tools: Vec<&str> = judge.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str().or(t["type"].as_str()))
        .collect();
    for unused in [
        "web_search",
        "view_image",
        "request_user_input",
        "create_goal",
        "tool_search",
    ] {
        assert!(!tools.contains(&unused), "{unused} offered: {tools:?}");
    }
    for r in &reqs {
        let body = r.body.to_string();
        assert!(
            !body.contains("You are Codex"),
            "Codex's base instructions sent"
        );
        assert!(
            !body.contains(SKILL_MARKER),
            "the user's skill reached the API"
        );
    }
    let dir = run.run_dir();
    let outcome: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("agents/r1/judge/outcome.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(outcome["agent"], "codex");
    let uses = outcome["tool_uses"].as_array().unwrap();
    assert!(
        uses.iter().any(|t| t["name"] == "shell"
            && t["access"]["read"][0]
                .as_str()
                .is_some_and(|p| p.ends_with("src/lib.rs"))),
        "{uses:?}"
    );
    let events = std::fs::read_to_string(dir.join("agents/r1/judge/events.jsonl")).unwrap();
    assert!(
        events.contains("s.parse().unwrap()"),
        "the real command printed the file"
    );
}

/// A whole review through the real Gemini CLI: its `read_file` of the target is the Read.
#[test]
fn arev_round_with_real_gemini_cli() {
    let Some(bin) = real_bin("AREV_TEST_GEMINI_BIN", "arev_round_with_real_gemini_cli") else {
        return;
    };
    let repo = TestRepo::new();
    let fake = FakeGemini::start(round_script_held(&repo));
    repo.write("arev.toml", &gemini_agent(&bin));
    repo.commit("config");
    let home = repo.scratch.join("home");
    let mut arev = repo
        .arev()
        .args(&["run", "src/lib.rs", "--format", "json", "--agent", "gemini"])
        .env("AREV_AGENT_TIMEOUT", "120s");
    for (k, v) in fake.gemini_env(&home) {
        arev = arev.env(k, &v);
    }
    plant_personal_skill(&home.join(".gemini/skills"));
    let run = arev.run();
    assert_round_completed(&run, "gemini");
    let reqs = fake.requests();
    assert_read_then_answer(&reqs);
    assert!(
        fake.stray_requests().is_empty(),
        "{:?}",
        fake.stray_requests()
    );
    assert!(reqs
        .iter()
        .all(|r| r.header("x-goog-api-key") == Some("fake-gemini-key-000")));
    assert!(
        reqs.iter().all(|r| r.model == "gemini-2.5-pro"),
        "opus tier → gemini-2.5-pro"
    );
    let dir = run.run_dir();
    let outcome: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("agents/r1/adversary/outcome.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(outcome["agent"], "gemini");
    assert_eq!(outcome["tool_uses"][0]["name"], "read_file");
    // The role body replaced the CLI's own system prompt; a reviewer of one file was offered
    // read_file alone; the user's skills never reached the API.
    for r in reqs.iter().filter(|r| r.role().is_some()) {
        let system = r.body["systemInstruction"]["parts"][0]["text"]
            .as_str()
            .unwrap();
        let role = r.role().unwrap();
        assert!(
            system.starts_with(&format!("# Role: {role}")),
            "{system:.80}"
        );
        assert!(
            !system.contains("Gemini CLI"),
            "the CLI's own system prompt sent"
        );
        let tools: Vec<String> = r.body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|t| {
                t["functionDeclarations"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
            })
            .filter_map(|f| f["name"].as_str().map(str::to_owned))
            .collect();
        assert_eq!(tools, ["read_file"], "{role}");
        assert!(
            !r.body.to_string().contains(SKILL_MARKER),
            "the user's skill reached the API"
        );
    }
}

/// The mixed panel of the README: Enthusiast passes alternate claude (pass 1) and codex
/// (pass 2), the Adversary is gemini, the Judge claude — each a real CLI against its fake.
/// Both passes find the unwrap (merged: found by both), only codex finds the naming nit
/// (found by codex); the Judge (claude) confirms one and dismisses the other.
#[test]
fn mixed_panel_with_three_real_clis() {
    let (Some(claude), Some(codex), Some(gemini)) = (
        real_bin("AREV_TEST_CLAUDE_BIN", "mixed_panel_with_three_real_clis"),
        real_bin("AREV_TEST_CODEX_BIN", "mixed_panel_with_three_real_clis"),
        real_bin("AREV_TEST_GEMINI_BIN", "mixed_panel_with_three_real_clis"),
    ) else {
        return;
    };
    let repo = TestRepo::new();
    let unwrap = finding("F1", "src/lib.rs", 2, "high", "error-handling");
    let mut naming = finding("F2", "src/lib.rs", 5, "low", "naming");
    naming["evidence"] = json!("pub fn id(x: u32) -> u32 { x }");
    let anthropic = FakeAnthropic::start(
        ClaudeScript::new()
            .answer_pass("Enthusiast", 1, 1, json!({"findings": [unwrap]}))
            .answer_pass("Enthusiast", 2, 1, json!({"findings": []}))
            .answer(
                "Judge",
                1,
                json!({"rulings": [
                    ruling("F1", "src/lib.rs", 2, "high", "enthusiast"),
                    {"finding_id": "F2", "file": "src/lib.rs", "line": 5, "target_type": "code",
                     "final_severity": "dismissed", "winner": "adversary",
                     "resolution": "an identity function needs no better name", "edit_instruction": null,
                     "cites": ["Z1"]}],
                    "summary": "1 confirmed, 1 dismissed.", "convergence": false, "next_round_model": null}),
            ),
    );
    let openai = FakeOpenAi::start(
        Script::new()
            .answer_pass("Enthusiast", 1, 2, json!({"findings": [unwrap, naming]}))
            .answer_pass("Enthusiast", 2, 2, json!({"findings": []})),
    );
    let google = FakeGemini::start(
        Script::new()
            .answer(
                "Adversary",
                1,
                json!({"heuristics": [], "safe_zones": [{"id": "Z1", "file": "src/lib.rs",
                    "line_start": 5, "line_end": 5, "reason": "pure identity",
                    "evidence": "pub fn id(x: u32) -> u32 { x }"}]}),
            )
            .answer("Adversary", 2, json!({"heuristics": [], "safe_zones": []})),
    );
    repo.write(
        "arev.toml",
        &format!(
            "[agents.claude]\nbinary = {}\n\n{}\n{}\n[roles]\nenthusiast = [\"claude\", \"codex\"]\nadversary = \"gemini\"\njudge = \"claude\"\n",
            toml_str(&claude.display().to_string()),
            codex_agent(&codex, &openai),
            gemini_agent(&gemini)
        ),
    );
    repo.commit("config");
    let home = repo.scratch.join("home");
    let mut arev = repo
        .arev()
        .args(&["run", "src/lib.rs", "--format", "json", "--passes", "2"])
        .env("AREV_AGENT_TIMEOUT", "120s");
    let mut env: Vec<(&str, String)> = anthropic.claude_env(&home);
    env.extend(openai.codex_env(&home));
    env.extend(google.gemini_env(&home));
    for (k, v) in env {
        arev = arev.env(k, &v);
    }
    let run = arev.run();
    run.assert_code(1);
    let report: Value = serde_json::from_str(&run.stdout).expect("json report");
    assert_eq!(report["status"], "complete", "{}", run.stderr);
    assert_eq!(report["stop_reason"], "zero-findings");
    let confirmed = &report["confirmed"][0];
    assert_eq!(confirmed["line"], 2);
    assert_eq!(confirmed["found_by_passes"], json!([1, 2]));
    assert_eq!(confirmed["found_by"], json!(["claude", "codex"]));
    assert_eq!(confirmed["ruled_by"], "claude");
    let debunked = &report["debunked"][0];
    assert_eq!(debunked["line"], 5);
    assert_eq!(debunked["found_by"], json!(["codex"]));
    assert_eq!(debunked["ruled_by"], "claude");
    assert_eq!(debunked["cites"], json!(["Z1"]));
    let by_agent = report["cost"]["by_agent"].as_object().unwrap();
    // Per round: claude = Enthusiast p1 (+ the Judge in round 1), codex = p2, gemini = Adversary.
    assert_eq!(by_agent["claude"]["dispatches"], 3);
    assert_eq!(by_agent["codex"]["dispatches"], 2);
    assert_eq!(by_agent["gemini"]["dispatches"], 2);
    // Each vendor's fake saw exactly its roles.
    let roles = |reqs: Vec<(Option<String>, Option<u32>)>| {
        let mut v: Vec<String> = reqs
            .into_iter()
            .filter_map(|(r, p)| {
                r.map(|r| format!("{r}{}", p.map(|p| format!("-p{p}")).unwrap_or_default()))
            })
            .collect();
        v.sort();
        v.dedup();
        v
    };
    assert_eq!(
        roles(
            anthropic
                .requests()
                .iter()
                .map(|r| (r.role().map(String::from), r.pass()))
                .collect()
        ),
        ["Enthusiast-p1", "Judge"]
    );
    assert_eq!(
        roles(
            openai
                .requests()
                .iter()
                .map(|r| (r.role().map(String::from), r.pass()))
                .collect()
        ),
        ["Enthusiast-p2"]
    );
    assert_eq!(
        roles(
            google
                .requests()
                .iter()
                .map(|r| (r.role().map(String::from), r.pass()))
                .collect()
        ),
        ["Adversary"]
    );
    // The round record says which agent ran each dispatch.
    let r1 = run.json("round-1.json");
    let agents: Vec<(String, String)> = r1["dispatches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["label"].as_str().unwrap().to_owned(),
                d["outcome"]["agent"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    for (label, agent) in [
        ("enthusiast-p1", "claude"),
        ("enthusiast-p2", "codex"),
        ("adversary", "gemini"),
        ("judge", "claude"),
    ] {
        assert!(
            agents.contains(&(label.to_owned(), agent.to_owned())),
            "{label} on {agent}: {agents:?}"
        );
    }
}

/// The real Gemini CLI's exit codes become clear errors: without the `gemini-api-key` auth
/// type in `~/.gemini/settings.json`, `GOOGLE_GEMINI_BASE_URL` selects an auth method that
/// headless mode rejects (exit 41), a permanent fault: arev aborts at once naming the cause.
#[test]
fn real_gemini_auth_failure_is_a_clear_dispatch_error() {
    let Some(bin) = real_bin(
        "AREV_TEST_GEMINI_BIN",
        "real_gemini_auth_failure_is_a_clear_dispatch_error",
    ) else {
        return;
    };
    let repo = TestRepo::new();
    let fake = FakeGemini::start(Script::new());
    repo.write("arev.toml", &gemini_agent(&bin));
    repo.commit("config");
    let home = repo.scratch.join("home");
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs", "--agent", "gemini", "-q"])
        .env("AREV_AGENT_TIMEOUT", "120s")
        .env("HOME", &home.display().to_string())
        .env("GOOGLE_GEMINI_BASE_URL", &fake.base_url)
        .run();
    run.assert_code(3);
    let meta = run.meta();
    assert_eq!(meta["abort_reason"], "agent_dispatch_unavailable");
    let detail = meta["abort_detail"].as_str().unwrap();
    assert!(
        detail.contains("Gemini CLI: authentication failed (exit 41)"),
        "{detail}"
    );
    assert!(fake.requests().is_empty(), "it never reached the model");
}
