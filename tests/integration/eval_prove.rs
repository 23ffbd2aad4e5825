//! `arev eval run --prove` (docs/eval.md "Proofs") on a fixture history: a defect
//! introduced, then fixed by a real commit. The case's review proves its confirmed findings
//! at the buggy revision; each reproducer that failed there runs again, in the real sandbox,
//! at the fix commit. One that passes there is `confirmed_by_fix`; one that still fails is
//! not; one that never failed is not counted — and the eval report gives the rate.

use crate::harness::{finding, ruling, TestRepo};
use serde_json::{json, Value};

const CALC_BUGGY: &str = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n";

/// The history: calc.py with `add` subtracting, then "Fix add: it subtracted".
fn history() -> (TestRepo, String) {
    let repo = TestRepo::new();
    repo.write("calc.py", CALC_BUGGY).commit("add calc");
    repo.write("calc.py", &CALC_BUGGY.replace("a - b", "a + b"))
        .commit("Fix add: it subtracted");
    let fix = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    (repo, fix)
}

/// A Prover writing a unittest of `expr == want`.
fn prover(id: &str, expr: &str, want: &str) -> Value {
    let module = format!("test_arev_{}", id.to_lowercase());
    let content = format!(
        "import unittest\nimport calc\n\n\nclass Repro(unittest.TestCase):\n    def test_it(self):\n        self.assertEqual({expr}, {want})\n"
    );
    json!({"role": "prover", "finding": id,
           "writes": [{"path": format!("{module}.py"), "content": content}],
           "answer": {"finding_id": id, "files": [format!("{module}.py")],
                      "command": ["python3", "-m", "unittest", module],
                      "claim": format!("{expr} is not {want}")}})
}

/// At the buggy revision the panel confirms F1 (the real defect, line 2), F2 (a wrong claim
/// about `mul`, whose reproducer fails before and after the fix) and F3 (a false positive
/// whose reproducer passes).
fn panel() -> Value {
    let when = json!({"path": "calc.py", "text": "a - b"});
    let ids = [("F1", 2), ("F2", 6), ("F3", 6)];
    let findings: Vec<Value> = ids
        .iter()
        .map(|(id, l)| finding(id, "calc.py", *l, "high", &format!("logic-{id}")))
        .collect();
    let rulings: Vec<Value> = ids
        .iter()
        .map(|(id, l)| ruling(id, "calc.py", *l, "high", "enthusiast"))
        .collect();
    json!({"steps": [
        {"role": "enthusiast", "round": 1, "if_file_contains": when, "answer": {"findings": findings}},
        {"role": "judge", "round": 1, "if_file_contains": when, "answer": {"rulings": rulings,
            "summary": "s", "convergence": true, "next_round_model": null}},
        prover("F1", "calc.add(2, 3)", "5"),
        prover("F2", "calc.mul(2, 3)", "7"),
        prover("F3", "calc.mul(2, 3)", "6"),
    ]})
}

#[test]
fn eval_prove_scores_reproducers_against_the_real_fix() {
    let (repo, fix) = history();
    let before = repo.state();
    let cases = repo.scratch.join("cases");
    repo.arev()
        .args(&["eval", "mine", "--out", cases.to_str().unwrap()])
        .run()
        .assert_code(0);
    let tmp = repo.scratch.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let out = repo.scratch.join("out");
    let run = repo
        .arev()
        .args(&[
            "eval",
            "run",
            cases.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--prove",
            "--format",
            "json",
        ])
        .env("TMPDIR", tmp.to_str().unwrap())
        .script(panel())
        .run();
    run.assert_code(0);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["prove"], true);
    let case = &report["cases"][0];
    assert_eq!(case["case_id"], format!("fix-{}", &fix[..12]), "{report:#}");
    assert_eq!(case["origin"]["commit"], fix.as_str());
    assert_eq!(case["status"], "found", "{case:#}");
    assert_eq!(case["proved"], true);
    let proof = |i: usize| case["confirmed"][i]["proof"].clone();
    // F1: fails at the buggy revision, passes at the real fix.
    let f1 = proof(0);
    assert_eq!(f1["status"], "reproduced", "{f1:#}");
    assert_eq!(f1["confirmed_by_fix"], true, "{f1:#}");
    assert_eq!(f1["at_fix"]["exit"], 0);
    assert!(f1["at_fix"]["output_tail"].as_str().unwrap().contains("OK"));
    // F2: fails at both: not confirmed by the fix.
    let f2 = proof(1);
    assert_eq!(f2["status"], "reproduced", "{f2:#}");
    assert_eq!(f2["confirmed_by_fix"], false);
    assert_eq!(f2["at_fix"]["exit"], 1);
    assert_eq!(f2["reason"], "it still fails at the fix commit");
    // F3: passes at the buggy revision: nothing to check at the fix.
    let f3 = proof(2);
    assert_eq!(f3["status"], "not_reproduced", "{f3:#}");
    assert!(f3["at_fix"].is_null());
    let p = &report["totals"]["proofs"];
    assert_eq!(p["failed_before_fix"], 2, "{p:#}");
    assert_eq!(p["confirmed_by_fix"], 1);
    assert_eq!(p["confirmed_by_fix_rate"], 0.5);
    assert_eq!(
        p["counts"],
        json!({"reproduced": 2, "preexisting": 0, "not_reproduced": 1, "inconclusive": 0, "not_attempted": 0})
    );
    // The Markdown says it.
    let md = std::fs::read_to_string(out.join("eval.md")).unwrap();
    assert!(
        md.contains("| confirmed by fix | 1/2 = 50.0 % of the reproducers"),
        "{md}"
    );
    // Nothing left behind: no checkout, no scratch tree; the repository untouched.
    assert!(
        std::fs::read_dir(&tmp).unwrap().next().is_none(),
        "left in {tmp:?}"
    );
    repo.assert_untouched(&before);

    // A second run keeps the proved result; one without --prove runs the case again.
    let again = |prove: bool| {
        let mut args = vec![
            "eval",
            "run",
            cases.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--format",
            "json",
        ];
        if prove {
            args.push("--prove");
        }
        let run = repo
            .arev()
            .args(&args)
            .env("TMPDIR", tmp.to_str().unwrap())
            .script(panel())
            .run();
        run.assert_code(0);
        serde_json::from_str::<Value>(&run.stdout).unwrap()
    };
    let kept = again(true);
    assert_eq!(kept["cases"][0]["resumed"], true);
    assert_eq!(kept["totals"]["proofs"]["confirmed_by_fix"], 1);
    let plain = again(false);
    assert_eq!(plain["cases"][0]["resumed"], false);
    assert!(plain["totals"]["proofs"].is_null());
    assert!(plain["cases"][0]["confirmed"][0]["proof"].is_null());
}
