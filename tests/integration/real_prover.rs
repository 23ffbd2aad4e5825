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
