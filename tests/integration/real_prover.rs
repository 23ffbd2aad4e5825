//! The REAL Codex (`AREV_TEST_CODEX_BIN`) and Gemini (`AREV_TEST_GEMINI_BIN`) CLIs as the
//! Prover (`--prove`, docs/prove.md), against their loopback fakes: the CLI reads the target,
//! creates a reproducer inside its scratch worktree with its own file tool (Codex's
//! `apply_patch`, Gemini's `write_file`), answers the schema — and arev runs the reproducer
//! itself in the sandbox. (The Claude Code Prover is `real_claude.rs`.) Skipped when a
//! binary is unset, unless `AREV_REQUIRE_REAL_CLIS=1`.

use crate::fake_gemini::FakeGemini;
use crate::fake_llm::{Script, Step};
use crate::fake_openai::FakeOpenAi;
use crate::harness::{finding, ruling, Run, TestRepo};
use crate::real_backends::{codex_agent, gemini_agent, real_bin};
use serde_json::{json, Value};

const PROVER: &str = "Prover (finding F1)";
const TEST: &str = "import unittest\nimport calc\n\n\nclass Repro(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(calc.add(2, 3), 5)\n";

/// calc.py whose `add` subtracts, committed with the agent's config.
fn repo(config: &str) -> TestRepo {
    let repo = TestRepo::new();
    repo.write("arev.toml", config)
        .write("calc.py", "def add(a, b):\n    return a - b\n")
        .commit("calc");
    std::fs::create_dir_all(repo.scratch.join("tmp")).unwrap();
    repo
}

/// Round 1 confirms F1 (calc.py:2); round 2 finds nothing; the Prover reads the target,
/// plays `write` and answers.
fn script(write: Step) -> Script {
    Script::new()
        .answer(
            "Enthusiast",
            1,
            json!({"findings": [finding("F1", "calc.py", 2, "high", "logic")]}),
        )
        .answer("Adversary", 1, json!({"heuristics": [], "safe_zones": []}))
        .answer(
            "Judge",
            1,
            json!({"rulings": [ruling("F1", "calc.py", 2, "high", "enthusiast")],
                   "summary": "1 confirmed.", "convergence": true, "next_round_model": null}),
        )
        .answer("Enthusiast", 2, json!({"findings": []}))
        .answer("Adversary", 2, json!({"heuristics": [], "safe_zones": []}))
        .answer(
            PROVER,
            1,
            json!({"finding_id": "F1", "files": ["test_arev_f1.py"],
                   "command": ["python3", "-m", "unittest", "-v", "test_arev_f1"],
                   "claim": "add(2, 3) returns -1"}),
        )
        .steps(PROVER, 1, vec![Step::ReadTarget, write, Step::Answer])
}

/// The reproducer the CLI wrote ran under arev's sandbox and failed on the defect.
fn assert_reproduced(run: &Run, agent: &str) {
    let report: Value = serde_json::from_str(&run.stdout).expect("json report");
    let proof = &report["confirmed"][0]["proof"];
    assert_eq!(proof["status"], "reproduced", "{proof:#}\n{}", run.stderr);
    assert_eq!(proof["sandbox"], "bwrap");
    assert_eq!(proof["files"], json!(["test_arev_f1.py"]));
    assert_eq!(proof["head"]["exit"], 1);
    assert!(proof["head"]["output_tail"]
        .as_str()
        .unwrap()
        .contains("AssertionError: -1 != 5"));
    assert_eq!(
        std::fs::read_to_string(run.run_dir().join("proofs/r1-F1/test_arev_f1.py")).unwrap(),
        TEST
    );
    let outcome: Value = serde_json::from_str(
        &std::fs::read_to_string(
            run.run_dir()
                .join("agents/p/r1-F1/prover-r1-F1/outcome.json"),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(outcome["agent"], agent, "{outcome:#}");
    assert_eq!(report["cost"]["by_role"]["prover"]["dispatches"], 1);
}

#[test]
fn arev_prove_with_real_codex_cli_as_prover() {
    let Some(bin) = real_bin(
        "AREV_TEST_CODEX_BIN",
        "arev_prove_with_real_codex_cli_as_prover",
    ) else {
        return;
    };
    let patch = format!(
        "*** Begin Patch\n*** Add File: test_arev_f1.py\n{}*** End Patch\n",
        TEST.lines().map(|l| format!("+{l}\n")).collect::<String>()
    );
    let fake = FakeOpenAi::start(script(Step::Tool {
        name: "custom:apply_patch".into(),
        args: Value::String(patch),
    }));
    let repo = repo(&codex_agent(&bin, &fake));
    let before = repo.state();
    let mut arev = repo
        .arev()
        .args(&[
            "run", "calc.py", "--prove", "--agent", "codex", "--format", "json",
        ])
        .env("TMPDIR", &repo.scratch.join("tmp").display().to_string())
        .env("AREV_AGENT_TIMEOUT", "120s");
    for (k, v) in fake.codex_env(&repo.scratch.join("home")) {
        arev = arev.env(k, &v);
    }
    let run = arev.run();
    run.assert_code(1);
    repo.assert_untouched(&before);
    assert_reproduced(&run, "codex");
    assert!(
        fake.stray_requests().is_empty(),
        "{:?}",
        fake.stray_requests()
    );
}

#[test]
fn arev_prove_with_real_gemini_cli_as_prover() {
    let Some(bin) = real_bin(
        "AREV_TEST_GEMINI_BIN",
        "arev_prove_with_real_gemini_cli_as_prover",
    ) else {
        return;
    };
    let fake = FakeGemini::start(script(Step::Tool {
        name: "write_file".into(),
        args: json!({"file_path": "{target_dir}/test_arev_f1.py", "content": TEST}),
    }));
    let repo = repo(&gemini_agent(&bin));
    let before = repo.state();
    let mut arev = repo
        .arev()
        .args(&[
            "run", "calc.py", "--prove", "--agent", "gemini", "--format", "json",
        ])
        .env("TMPDIR", &repo.scratch.join("tmp").display().to_string())
        .env("AREV_AGENT_TIMEOUT", "120s");
    for (k, v) in fake.gemini_env(&repo.scratch.join("home")) {
        arev = arev.env(k, &v);
    }
    let run = arev.run();
    run.assert_code(1);
    repo.assert_untouched(&before);
    assert_reproduced(&run, "gemini");
    assert!(
        fake.stray_requests().is_empty(),
        "{:?}",
        fake.stray_requests()
    );
}

/// The change's `vendor -> <outside>` link, committed with calc.py: the Prover is told to
/// write `vendor/evil.py` with its CLI's own file tool. The scratch tree holds `vendor` as a
/// file (docs/prove.md "Where"), so the write fails and nothing lands outside — for every
/// backend's Prover.
fn linked(config: &str) -> (TestRepo, std::path::PathBuf) {
    let repo = TestRepo::new();
    let outside = repo.scratch.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, repo.root.join("vendor")).unwrap();
    repo.write("arev.toml", config)
        .write("calc.py", "def add(a, b):\n    return a - b\n")
        .commit("calc and vendor");
    std::fs::create_dir_all(repo.scratch.join("tmp")).unwrap();
    (repo, outside)
}

fn link_script(write: Step) -> Script {
    script(Step::ReadTarget)
        .answer(
            PROVER,
            1,
            json!({"finding_id": "F1", "files": ["vendor/evil.py"],
                   "command": ["python3", "vendor/evil.py"], "claim": "through the link"}),
        )
        .steps(PROVER, 1, vec![Step::ReadTarget, write, Step::Answer])
}

const EVIL: &str = "print('written through the link')\n";

fn assert_nothing_outside(run: &Run, outside: &std::path::Path) {
    let left: Vec<_> = std::fs::read_dir(outside).unwrap().collect();
    assert!(
        left.is_empty(),
        "a write landed outside: {left:?}\n{}",
        run.stderr
    );
    let report: Value = serde_json::from_str(&run.stdout).expect("json report");
    let proof = &report["confirmed"][0]["proof"];
    assert_eq!(proof["status"], "inconclusive", "{proof:#}");
    assert!(proof["head"].is_null(), "nothing ran: {proof:#}");
}

fn run_linked(repo: &TestRepo, agent: &str, env: Vec<(&'static str, String)>) -> Run {
    let mut arev = repo
        .arev()
        .args(&[
            "run", "calc.py", "--prove", "--agent", agent, "--format", "json",
        ])
        .env("TMPDIR", &repo.scratch.join("tmp").display().to_string())
        .env("AREV_AGENT_TIMEOUT", "120s");
    for (k, v) in env {
        arev = arev.env(k, &v);
    }
    arev.run()
}

#[test]
fn real_codex_prover_cannot_write_through_a_committed_link() {
    let Some(bin) = real_bin(
        "AREV_TEST_CODEX_BIN",
        "real_codex_prover_cannot_write_through_a_committed_link",
    ) else {
        return;
    };
    let patch = format!("*** Begin Patch\n*** Add File: vendor/evil.py\n+{EVIL}*** End Patch\n");
    let fake = FakeOpenAi::start(link_script(Step::Tool {
        name: "custom:apply_patch".into(),
        args: Value::String(patch),
    }));
    let (repo, outside) = linked(&codex_agent(&bin, &fake));
    let run = run_linked(&repo, "codex", fake.codex_env(&repo.scratch.join("home")));
    run.assert_code(1);
    assert_nothing_outside(&run, &outside);
}

#[test]
fn real_gemini_prover_cannot_write_through_a_committed_link() {
    let Some(bin) = real_bin(
        "AREV_TEST_GEMINI_BIN",
        "real_gemini_prover_cannot_write_through_a_committed_link",
    ) else {
        return;
    };
    let fake = FakeGemini::start(link_script(Step::Tool {
        name: "write_file".into(),
        args: json!({"file_path": "{target_dir}/vendor/evil.py", "content": EVIL}),
    }));
    let (repo, outside) = linked(&gemini_agent(&bin));
    let run = run_linked(&repo, "gemini", fake.gemini_env(&repo.scratch.join("home")));
    run.assert_code(1);
    assert_nothing_outside(&run, &outside);
}

#[test]
fn real_opencode_prover_cannot_write_through_a_committed_link() {
    let Some(bin) = crate::self_hosted::opencode_bin(
        "real_opencode_prover_cannot_write_through_a_committed_link",
    ) else {
        return;
    };
    let fake = FakeOpenAi::start(link_script(Step::Tool {
        name: "write".into(),
        args: json!({"filePath": "{target_dir}/vendor/evil.py", "content": EVIL}),
    }));
    let (repo, outside) = linked(&crate::self_hosted::opencode_agent(&bin, &fake));
    let home = repo.scratch.join("home").display().to_string();
    let run = run_linked(
        &repo,
        "local",
        vec![
            (crate::fake_openai::KEY_VAR, "sk-fake-openai-000".into()),
            ("HOME", home),
        ],
    );
    run.assert_code(1);
    assert_nothing_outside(&run, &outside);
}

#[test]
fn real_claude_prover_cannot_write_through_a_committed_link() {
    use crate::fake_anthropic::{FakeAnthropic, Script as CScript, Step as CStep};
    let Some(bin) =
        crate::real_claude::claude_bin("real_claude_prover_cannot_write_through_a_committed_link")
    else {
        return;
    };
    let prover_answer = json!({"finding_id": "F1", "files": ["vendor/evil.py"],
        "command": ["python3", "vendor/evil.py"], "claim": "through the link"});
    let script = CScript::new()
        .answer(
            "Enthusiast",
            1,
            json!({"findings": [finding("F1", "calc.py", 2, "high", "logic")]}),
        )
        .answer("Adversary", 1, json!({"heuristics": [], "safe_zones": []}))
        .answer(
            "Judge",
            1,
            json!({"rulings": [ruling("F1", "calc.py", 2, "high", "enthusiast")],
                   "summary": "1 confirmed.", "convergence": true, "next_round_model": null}),
        )
        .answer("Enthusiast", 2, json!({"findings": []}))
        .answer("Adversary", 2, json!({"heuristics": [], "safe_zones": []}))
        .answer(PROVER, 1, prover_answer)
        .steps(
            PROVER,
            1,
            vec![
                CStep::ReadTarget,
                CStep::WriteInWorktree {
                    rel: "vendor/evil.py".into(),
                    content: EVIL.into(),
                },
                CStep::Answer,
            ],
        );
    let fake = FakeAnthropic::start(script);
    let config = format!(
        "[agents.claude]\nbackend = \"claude\"\nbinary = \"{}\"\n",
        bin.display()
    );
    let (repo, outside) = linked(&config);
    let run = run_linked(&repo, "claude", fake.claude_env(&repo.scratch.join("home")));
    run.assert_code(1);
    assert_nothing_outside(&run, &outside);
}
