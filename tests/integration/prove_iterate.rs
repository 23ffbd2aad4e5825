//! `arev run --iterate --prove` (docs/prove.md "Iterate"): the review of each iteration is
//! proven, and a finding the Fixer applied whose reproducer failed counts as fixed only when
//! arev, running that reproducer itself in the sandbox on the fix commit, sees it pass — else
//! the loop stops `fix-unproven`. Real reproducers (`python3 -m unittest`) under the real
//! bubblewrap; the user's working tree, index and HEAD untouched.

use crate::harness::{finding, ruling, Run, TestRepo};
use serde_json::{json, Value};

/// `calc.py` whose `add` subtracts.
fn repo() -> TestRepo {
    let repo = TestRepo::new();
    repo.write(
        "calc.py",
        "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n",
    )
    .commit("calc");
    std::fs::create_dir_all(repo.scratch.join("tmp")).unwrap();
    repo
}

fn when(text: &str) -> Value {
    json!({"path": "calc.py", "text": text})
}

/// While `calc.py` still subtracts: the review confirms F1 (line 2, high) and a Prover writes
/// a unittest that fails while it does.
fn review_and_prover() -> Vec<Value> {
    vec![
        json!({"role": "enthusiast", "round": 1, "if_file_contains": when("a - b"),
               "answer": {"findings": [finding("F1", "calc.py", 2, "high", "logic")]}}),
        json!({"role": "judge", "round": 1, "if_file_contains": when("a - b"),
               "answer": {"rulings": [ruling("F1", "calc.py", 2, "high", "enthusiast")],
                          "summary": "confirmed", "convergence": true, "next_round_model": null}}),
        json!({"role": "prover", "finding": "F1",
               "writes": [{"path": "test_arev_f1.py", "content":
                   "import unittest\nimport calc\n\n\nclass Repro(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(calc.add(2, 3), 5)\n"}],
               "answer": {"finding_id": "F1", "files": ["test_arev_f1.py"],
                          "command": ["python3", "-m", "unittest", "-v", "test_arev_f1"],
                          "claim": "add(2, 3) is -1"}}),
    ]
}

/// A Fixer that replaces `a - b` with `replace` and says it fixed F1.
fn fixer(replace: &str) -> Value {
    json!({"role": "fixer", "if_file_contains": when("a - b"),
           "edits": [{"path": "calc.py", "find": "a - b", "replace": replace}],
           "answer": {"applied": ["F1"], "skipped": []}})
}

fn run(repo: &TestRepo, steps: Vec<Value>) -> Run {
    repo.arev()
        .args(&["run", "calc.py", "--iterate", "--prove", "--format", "json"])
        .env("TMPDIR", &repo.scratch.join("tmp").display().to_string())
        .script(json!({ "steps": steps }))
        .run()
}

#[test]
fn a_fix_counts_when_its_reproducer_passes_on_the_fix_commit() {
    let repo = repo();
    let before = repo.state();
    let mut steps = review_and_prover();
    steps.push(fixer("a + b"));
    let run = run(&repo, steps);
    run.assert_code(0);
    repo.assert_untouched(&before);
    let it = &run.report()["iterate"];
    assert_eq!(it["stop_reason"], "clean", "{it:#}\n{}", run.stderr);
    let first = &it["iterations"][0];
    // The review was proven: the reproducer failed on the reviewed content.
    let proof = &first["confirmed"][0]["proof"];
    assert_eq!(proof["status"], "reproduced", "{proof:#}");
    assert_eq!(proof["head"]["exit"], 1);
    // Then, on the fix commit, arev ran it again and saw it pass.
    let fp = &first["fix"]["proofs"][0];
    assert_eq!(fp["id"], "F1");
    assert_eq!(fp["status"], "fixed", "{fp:#}");
    assert_eq!(fp["proof_status"], "reproduced");
    assert_eq!(fp["commit"], first["fix"]["commit"]);
    assert_eq!(fp["sandbox"], "bwrap");
    assert_eq!(fp["files"], json!(["test_arev_f1.py"]));
    assert_eq!(fp["run"]["exit"], 0);
    let out = fp["run"]["output_tail"].as_str().unwrap();
    assert!(out.contains("test_add") && out.contains("OK"), "{out}");
    // The reproducer is kept with the fix's report, and never committed on the branch.
    let kept = fp["kept_in"].as_str().unwrap();
    assert_eq!(kept, "iterations/1/proofs/r1-F1/");
    assert!(run.run_dir().join(kept).join("test_arev_f1.py").is_file());
    let branch = it["branch"].as_str().unwrap();
    let files = repo.git(&["ls-tree", "-r", "--name-only", branch]);
    assert!(files.lines().any(|f| f == "calc.py"), "{files}");
    assert!(!files.contains("test_arev"), "{files}");
    assert_eq!(first["decision"], "continue");
    assert_eq!(it["iterations"][1]["confirmed"], json!([]));
}

#[test]
fn a_fix_whose_reproducer_still_fails_is_fix_unproven() {
    let repo = repo();
    let before = repo.state();
    let mut steps = review_and_prover();
    // A "fix" that still gets add wrong, which the Fixer reports as applied.
    steps.push(fixer("b - a"));
    let run = run(&repo, steps);
    run.assert_code(1);
    repo.assert_untouched(&before);
    let it = &run.report()["iterate"];
    assert_eq!(it["stop_reason"], "fix-unproven", "{it:#}\n{}", run.stderr);
    assert_eq!(run.meta()["stop_reason"], "fix-unproven");
    let its = it["iterations"].as_array().unwrap();
    assert_eq!(its.len(), 1, "the loop stops after the unproven fix");
    let fp = &its[0]["fix"]["proofs"][0];
    assert_eq!(fp["status"], "fix_unproven", "{fp:#}");
    assert_eq!(fp["run"]["exit"], 1);
    assert!(
        fp["reason"].as_str().unwrap().contains("still fails"),
        "{fp:#}"
    );
    assert!(fp["run"]["output_tail"]
        .as_str()
        .unwrap()
        .contains("AssertionError: 1 != 5"));
    assert_eq!(its[0]["decision"], "stop");
    assert!(
        its[0]["decision_reasons"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r.as_str().unwrap().starts_with("fix-unproven")),
        "{:#}",
        its[0]
    );
    // The unproven fix stays committed on the branch, as a failed --verify's does.
    let branch = it["branch"].as_str().unwrap();
    assert_eq!(
        repo.git(&["rev-parse", branch]).trim(),
        its[0]["fix"]["commit"].as_str().unwrap()
    );
    assert!(
        run.stderr.contains("iterate stopped: fix-unproven"),
        "{}",
        run.stderr
    );
}
