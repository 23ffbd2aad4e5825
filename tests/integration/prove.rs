//! `arev run … --prove` (docs/prove.md) with scripted fake agents as Provers and real
//! reproducers run by arev under the real bubblewrap: a regression a diff introduced is
//! `reproduced` (fails on the reviewed content, passes on the merge-base), a defect older
//! than the change `preexisting`, a false positive `not_reproduced`, a hang `inconclusive`
//! within the limit; a Prover that edits a tracked file, writes outside its worktree or
//! plants a link is rejected and nothing runs; thresholds, budget, `--require-proof`, the
//! preflight. In every test the user's working tree, index, HEAD and refs are untouched and
//! no scratch tree is left behind.

use crate::harness::{finding, ruling, Run, TestRepo};
use serde_json::{json, Value};
use std::path::PathBuf;

/// `calc.py` on `main`; the checked-out branch `feature` changes lines 2, 13 and 24: `add`
/// now subtracts (a regression), `neg` was already wrong (it returns x), `mul` is right.
fn calc(add: &str, neg: &str, mul: &str) -> String {
    let gap = "\n\n# ---\n# ---\n# ---\n# ---\n# ---\n# ---\n\n";
    format!(
        "def add(a, b):\n    return {add}\n{gap}def neg(x):\n    return {neg}\n{gap}def mul(a, b):\n    return {mul}\n"
    )
}

fn python_repo() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("calc.py", &calc("a + b", "x", "a * b"))
        .commit("calc");
    repo.git(&["checkout", "-q", "-b", "feature"]);
    repo.write(
        "calc.py",
        &calc("a - b", "x  # negation", "a * b  # product"),
    )
    .commit("feature");
    std::fs::create_dir_all(repo.scratch.join("tmp")).unwrap();
    repo
}

/// A unittest module asserting `expr == want`.
fn unittest(expr: &str, want: &str) -> String {
    format!(
        "import unittest\nimport calc\n\n\nclass Repro(unittest.TestCase):\n    def test_it(self):\n        self.assertEqual({expr}, {want}, \"{expr} must be {want}\")\n\n\nif __name__ == \"__main__\":\n    unittest.main()\n"
    )
}

/// A Prover that writes `tests/test_arev_<id>.py` and answers the argv that runs it.
fn python_prover(id: &str, expr: &str, want: &str) -> Value {
    let module = format!("test_arev_{}", id.to_lowercase());
    let path = format!("{module}.py");
    json!({"role": "prover", "finding": id,
        "writes": [{"path": path, "content": unittest(expr, want)}],
        "answer": {"finding_id": id, "files": [path],
                   "command": ["python3", "-m", "unittest", "-v", module],
                   "claim": format!("{expr} is not {want}")}})
}

/// Round 1 confirms `findings` (id, line, severity); later rounds find nothing.
fn review_confirming(findings: &[(&str, u32, &str)]) -> Vec<Value> {
    let f: Vec<Value> = findings
        .iter()
        .map(|(id, line, sev)| finding(id, "calc.py", *line, sev, &format!("logic-{id}")))
        .collect();
    let r: Vec<Value> = findings
        .iter()
        .map(|(id, line, sev)| ruling(id, "calc.py", *line, sev, "enthusiast"))
        .collect();
    vec![
        json!({"role": "enthusiast", "round": 1, "answer": {"findings": f}}),
        json!({"role": "judge", "round": 1,
               "answer": {"rulings": r, "summary": "confirmed", "convergence": true, "next_round_model": null}}),
    ]
}

fn steps(parts: Vec<Vec<Value>>) -> Value {
    json!({"steps": parts.into_iter().flatten().collect::<Vec<_>>()})
}

/// The confirmed finding `id` of report.json.
fn confirmed<'a>(report: &'a Value, id: &str) -> &'a Value {
    report["confirmed"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == id)
        .unwrap_or_else(|| panic!("no confirmed {id}: {report:#}"))
}

fn proof<'a>(report: &'a Value, id: &str) -> &'a Value {
    &confirmed(report, id)["proof"]
}

/// Everything of the user's repository a proof must not touch: the working tree, index,
/// HEAD, every ref, and no worktree admin dir.
struct Untouched {
    state: crate::harness::RepoState,
    refs: String,
}

fn untouched(repo: &TestRepo) -> Untouched {
    Untouched {
        state: repo.state(),
        refs: repo.git(&["for-each-ref", "--format=%(refname) %(objectname)"]),
    }
}

fn assert_untouched(repo: &TestRepo, before: &Untouched) {
    repo.assert_untouched(&before.state);
    assert_eq!(
        repo.git(&["for-each-ref", "--format=%(refname) %(objectname)"]),
        before.refs,
        "refs changed"
    );
    assert!(
        !repo.root.join(".git/worktrees").exists(),
        "a worktree admin dir"
    );
    // Every scratch tree lived under TMPDIR and is gone.
    let left: Vec<PathBuf> = std::fs::read_dir(repo.scratch.join("tmp"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("tmp."))
        })
        .collect();
    assert!(left.is_empty(), "scratch trees left behind: {left:?}");
}

fn prove_run(repo: &TestRepo, args: &[&str], script: Value) -> Run {
    repo.arev()
        .args(args)
        .env("TMPDIR", &repo.scratch.join("tmp").display().to_string())
        .script(script)
        .run()
}

/// The Done-when scenario: `arev run diff --base main --prove` on a branch with a planted
/// regression reports it `reproduced` with the reproducer and its real output, the false
/// positive `not_reproduced`, the older defect `preexisting`.
#[test]
fn a_planted_regression_is_reproduced_and_a_false_positive_is_not() {
    let repo = python_repo();
    let before = untouched(&repo);
    let script = steps(vec![
        review_confirming(&[
            ("F1", 2, "high"),
            ("F2", 13, "high"),
            ("F3", 24, "critical"),
        ]),
        vec![
            python_prover("F1", "calc.add(2, 3)", "5"),
            python_prover("F2", "calc.neg(4)", "-4"),
            python_prover("F3", "calc.mul(2, 3)", "6"),
        ],
    ]);
    let run = prove_run(
        &repo,
        &[
            "run", "diff", "--base", "main", "--prove", "--format", "json",
        ],
        script,
    );
    run.assert_code(1);
    let report = run.report();

    let f1 = proof(&report, "F1");
    assert_eq!(f1["status"], "reproduced", "{f1:#}\n{}", run.stderr);
    assert_eq!(f1["sandbox"], "bwrap");
    assert_eq!(f1["files"], json!(["test_arev_f1.py"]));
    assert_eq!(
        f1["command"],
        json!(["python3", "-m", "unittest", "-v", "test_arev_f1"])
    );
    assert_eq!(f1["head"]["exit"], 1);
    let head_out = f1["head"]["output_tail"].as_str().unwrap();
    assert!(
        head_out.contains("AssertionError: -1 != 5 : calc.add(2, 3) must be 5"),
        "{head_out}"
    );
    assert!(head_out.contains("FAILED (failures=1)"), "{head_out}");
    assert_eq!(f1["base"]["exit"], 0, "{f1:#}");
    assert!(f1["base"]["output_tail"].as_str().unwrap().contains("OK"));

    let f2 = proof(&report, "F2");
    assert_eq!(f2["status"], "preexisting", "{f2:#}");
    assert_eq!(
        (f2["head"]["exit"].clone(), f2["base"]["exit"].clone()),
        (json!(1), json!(1))
    );

    let f3 = proof(&report, "F3");
    assert_eq!(f3["status"], "not_reproduced", "{f3:#}");
    assert_eq!(f3["head"]["exit"], 0);

    let summary = &report["prove"];
    assert_eq!(summary["sandbox"], "bwrap");
    assert_eq!(
        summary["counts"],
        json!({"reproduced": 1, "preexisting": 1, "not_reproduced": 1, "inconclusive": 0, "not_attempted": 0})
    );
    // The Prover is priced like any agent.
    assert_eq!(
        report["cost"]["by_role"]["prover"]["dispatches"], 3,
        "{:#}",
        report["cost"]
    );

    // The reproducer is kept in the run dir; the Provers' dispatches under agents/p/.
    let dir = run.run_dir();
    assert_eq!(
        std::fs::read_to_string(dir.join("proofs/r1-F1/test_arev_f1.py")).unwrap(),
        unittest("calc.add(2, 3)", "5")
    );
    assert!(dir.join("proofs/r1-F1.json").is_file());
    assert!(dir
        .join("agents/p/r1-F1/prover-r1-F1/events.jsonl")
        .is_file());
    // One Prover per finding, its first line naming the finding.
    let provers: Vec<Value> = run
        .fake_log()
        .into_iter()
        .filter(|l| l["role"] == "prover")
        .collect();
    let mut named: Vec<&str> = provers
        .iter()
        .map(|l| l["finding"].as_str().unwrap())
        .collect();
    named.sort_unstable();
    assert_eq!(named, ["F1", "F2", "F3"]);
    assert_untouched(&repo, &before);
}

/// A Prover's work is checked before anything runs: an edited tracked file, a write outside
/// its worktree, a planted link — each rejects the proof (`prover_modified_code`,
/// `prover_offtarget_write`) and nothing is run.
#[test]
fn a_prover_that_edits_writes_outside_or_plants_a_link_is_rejected_and_nothing_runs() {
    let repo = python_repo();
    let before = untouched(&repo);
    let outside = repo.scratch.join("outside_repro.py");
    let marker = repo.scratch.join("ran");
    // Each reproducer would leave a marker if it ran (unsandboxed, so that it could).
    let touch = format!(
        "import pathlib\npathlib.Path({:?}).write_text('ran')\n",
        marker.display().to_string()
    );
    let answer = |id: &str, file: &str| json!({"finding_id": id, "files": [file], "command": ["python3", file], "claim": "c"});
    let script = steps(vec![
        review_confirming(&[("F1", 2, "high"), ("F2", 13, "high"), ("F3", 24, "high")]),
        vec![
            json!({"role": "prover", "finding": "F1",
                   "writes": [{"path": "repro_f1.py", "content": touch},
                              {"path": "calc.py", "content": "def add(a, b):\n    return 5\n"}],
                   "answer": answer("F1", "repro_f1.py")}),
            json!({"role": "prover", "finding": "F2",
                   "writes": [{"path": outside.display().to_string(), "content": touch}],
                   "answer": answer("F2", &outside.display().to_string())}),
            json!({"role": "prover", "finding": "F3",
                   "writes": [{"path": "repro_f3.py", "content": touch}],
                   "symlinks": [{"path": "link_f3", "target": "/etc/hostname"}],
                   "answer": answer("F3", "repro_f3.py")}),
        ],
    ]);
    let run = prove_run(
        &repo,
        &[
            "run",
            "diff",
            "--base",
            "main",
            "--prove",
            "--prove-sandbox",
            "none",
            "--format",
            "json",
        ],
        script,
    );
    let report = run.report();
    let f1 = proof(&report, "F1");
    assert_eq!(f1["status"], "inconclusive", "{f1:#}");
    let why = f1["reason"].as_str().unwrap();
    assert!(
        why.starts_with("prover_modified_code: calc.py") && why.contains("modified"),
        "{why}"
    );
    let f2 = proof(&report, "F2");
    assert_eq!(f2["status"], "inconclusive");
    assert!(
        f2["reason"]
            .as_str()
            .unwrap()
            .starts_with("prover_offtarget_write: "),
        "{f2:#}"
    );
    let f3 = proof(&report, "F3");
    assert!(
        f3["reason"]
            .as_str()
            .unwrap()
            .contains("link_f3 is a symbolic link"),
        "{f3:#}"
    );
    for f in [f1, f2, f3] {
        assert!(
            f["head"].is_null() && f["base"].is_null(),
            "nothing ran: {f:#}"
        );
    }
    assert!(!marker.exists(), "a rejected reproducer ran");
    assert!(!run.run_dir().join("proofs/r1-F1").exists(), "nothing kept");
    // Unsandboxed, and said so.
    assert_eq!(report["prove"]["sandbox"], "none");
    assert_untouched(&repo, &before);

    // The Edit tool is not the Prover's at all: the tool gate rejects the proof.
    let repo = python_repo();
    let script = steps(vec![
        review_confirming(&[("F1", 2, "high")]),
        vec![json!({"role": "prover", "finding": "F1",
                    "writes": [{"path": "repro_f1.py", "content": touch}],
                    "edits": [{"path": "calc.py", "find": "a - b", "replace": "a + b"}],
                    "answer": answer("F1", "repro_f1.py")})],
    ]);
    let run = prove_run(&repo, &["run", "diff", "--base", "main", "--prove"], script);
    let f1 = proof(&run.report(), "F1").clone();
    assert_eq!(f1["status"], "inconclusive");
    assert!(
        f1["reason"]
            .as_str()
            .unwrap()
            .starts_with("prover_forbidden_tool: "),
        "{f1:#}"
    );
    assert!(f1["head"].is_null());
    assert!(!marker.exists());
}

/// Below `[prove] min_severity` (high by default) a confirmed finding is `not_attempted`; so
/// is every finding when the review spent the budget.
#[test]
fn below_the_threshold_or_without_budget_a_proof_is_not_attempted() {
    let repo = python_repo();
    let script = steps(vec![
        review_confirming(&[("F1", 2, "high"), ("F2", 13, "medium")]),
        vec![python_prover("F1", "calc.add(2, 3)", "5")],
    ]);
    let run = prove_run(
        &repo,
        &["run", "diff", "--base", "main", "--prove"],
        script.clone(),
    );
    let report = run.report();
    assert_eq!(proof(&report, "F1")["status"], "reproduced");
    let f2 = proof(&report, "F2");
    assert_eq!(f2["status"], "not_attempted");
    assert_eq!(f2["reason"], "below [prove] min_severity (high)");

    // Three dispatches at $0.01 each spend a $0.03 budget: no Prover starts.
    let repo = python_repo();
    let run = prove_run(
        &repo,
        &[
            "run",
            "diff",
            "--base",
            "main",
            "--prove",
            "--budget-usd",
            "0.03",
        ],
        script,
    );
    let report = run.report();
    let f1 = proof(&report, "F1");
    assert_eq!(f1["status"], "not_attempted", "{f1:#}");
    assert_eq!(f1["reason"], "no budget left after the review");
    assert!(
        run.fake_log().iter().all(|l| l["role"] != "prover"),
        "no Prover was dispatched"
    );
}

/// The Provers share what the review left of the budget: once their spend passes it, the
/// ones still running are stopped and every proof not yet answered — the one whose spend
/// passed it included — is `not_attempted`: a proof never goes on without budget for it.
#[test]
fn a_prover_still_running_when_the_budget_runs_out_is_stopped_and_not_attempted() {
    let repo = python_repo();
    let script = steps(vec![
        review_confirming(&[("F1", 2, "high"), ("F2", 13, "high")]),
        vec![
            python_prover("F1", "calc.add(2, 3)", "5"),
            json!({"role": "prover", "finding": "F2", "hang": true}),
        ],
    ]);
    let started = std::time::Instant::now();
    // One round: its three dispatches spend $0.03 of $0.035, and F1's Prover ($0.01) passes
    // what is left.
    let run = prove_run(
        &repo,
        &[
            "run",
            "diff",
            "--base",
            "main",
            "--prove",
            "--max-rounds",
            "1",
            "--budget-usd",
            "0.035",
            "--format",
            "json",
        ],
        script,
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(120),
        "the hanging Prover was stopped"
    );
    let report = run.report();
    for id in ["F1", "F2"] {
        let p = proof(&report, id);
        assert_eq!(p["status"], "not_attempted", "{p:#}\n{}", run.stderr);
        assert_eq!(p["reason"], "the budget ran out during the proof phase");
        assert!(p["head"].is_null(), "nothing ran: {p:#}");
    }
    // Both Provers are priced in the report's cost.
    assert!(
        report["cost"]["by_role"]["prover"]["dispatches"].as_u64() >= Some(1),
        "{:#}",
        report["cost"]
    );
    assert!(
        report["cost"]["usd"].as_f64().unwrap() <= 0.05 + 1e-9,
        "{:#}",
        report["cost"]
    );
}

/// `--require-proof` (docs/prove.md "Statuses"): a `reproduced` finding gates; so does one
/// whose reproducer passed (`not_reproduced`: the run executed the reviewed code, which
/// chooses how it behaves there); a finding below `[prove] min_severity` is let through.
#[test]
fn require_proof_gates_what_running_the_change_cannot_clear() {
    let script = |prover: Value| {
        steps(vec![
            review_confirming(&[("F1", 24, "critical")]),
            vec![prover],
        ])
    };
    let require = [
        "run",
        "diff",
        "--base",
        "main",
        "--prove",
        "--require-proof",
    ];
    let repo = python_repo();
    let run = prove_run(
        &repo,
        &require,
        script(python_prover("F1", "calc.mul(2, 3)", "6")),
    );
    run.assert_code(1);
    assert_eq!(proof(&run.report(), "F1")["status"], "not_reproduced");
    let repo = python_repo();
    let run = prove_run(
        &repo,
        &require,
        script(python_prover("F1", "calc.add(2, 3)", "5")),
    );
    run.assert_code(1);
    assert_eq!(proof(&run.report(), "F1")["status"], "reproduced");
    // Below min_severity (high): not attempted, and let through only under --require-proof.
    let medium = steps(vec![review_confirming(&[("F1", 24, "medium")])]);
    let repo = python_repo();
    let mut args = require.to_vec();
    args.extend(["--fail-on", "medium"]);
    let run = prove_run(&repo, &args, medium.clone());
    run.assert_code(0);
    assert_eq!(proof(&run.report(), "F1")["status"], "not_attempted");
    let repo = python_repo();
    prove_run(
        &repo,
        &[
            "run",
            "diff",
            "--base",
            "main",
            "--prove",
            "--fail-on",
            "medium",
        ],
        medium,
    )
    .assert_code(1);
}

/// A change whose code detects the sandbox and behaves there: its reproducer passes
/// (`not_reproduced`), and under `--require-proof` the confirmed finding still gates (exit
/// 1). The cheap markers are gone — host name, `arev` in the working directory, `$HOME` or
/// the environment — so the code must look harder (here: bwrap as pid 1).
#[test]
fn a_change_that_detects_the_sandbox_cannot_clear_its_own_finding() {
    let repo = python_repo();
    let detecting = r#"import os
import socket


def _sandboxed():
    seen = []
    if socket.gethostname() == "arev-prove":
        seen.append("hostname")
    if "arev" in os.getcwd().lower():
        seen.append("cwd")
    if "arev" in os.environ.get("HOME", "").lower():
        seen.append("home")
    if any("arev" in k.lower() or "arev" in v.lower()
           for k, v in os.environ.items() if k != "PATH"):
        seen.append("env")
    try:
        with open("/proc/1/cmdline", "rb") as f:
            if b"bwrap" in f.read():
                seen.append("pid1")
    except OSError:
        pass
    print("SANDBOX-MARKERS: " + (",".join(seen) or "none"))
    return bool(seen)


def add(a, b):
    return a + b if _sandboxed() else a - b
"#;
    repo.write("calc.py", detecting)
        .commit("add, sandbox-aware");
    let script = steps(vec![
        review_confirming(&[("F1", 27, "high")]),
        vec![python_prover("F1", "calc.add(2, 3)", "5")],
    ]);
    let run = prove_run(
        &repo,
        &[
            "run",
            "diff",
            "--base",
            "main",
            "--prove",
            "--require-proof",
        ],
        script,
    );
    let report = run.report();
    let p = proof(&report, "F1");
    assert_eq!(p["status"], "not_reproduced", "{p:#}");
    let tail = p["head"]["output_tail"].as_str().unwrap();
    assert!(tail.contains("SANDBOX-MARKERS: pid1\n"), "{tail}");
    run.assert_code(1);
    assert!(run.stdout.contains("--require-proof"), "{}", run.stdout);
}

/// Without bubblewrap, `--prove` exits 2 before any run dir or dispatch, naming the fix.
#[test]
fn without_the_sandbox_prove_exits_2_naming_the_fix() {
    let repo = python_repo();
    let bin = repo.scratch.join("bin");
    let run = repo
        .arev()
        .args(&["run", "diff", "--base", "main", "--prove"])
        .env("PATH", &bin.display().to_string())
        .run();
    run.assert_code(2);
    assert!(run.stderr.contains("bwrap"), "{}", run.stderr);
    assert!(
        run.stderr.contains("--prove-sandbox none"),
        "{}",
        run.stderr
    );
    assert!(run.run_dirs().is_empty());
    assert!(run.fake_log().is_empty(), "nothing dispatched");
}

/// A user config file for `--config`: `[timeouts] prove` and `[prove]` keys as given.
fn user_config(repo: &TestRepo, toml: &str) -> String {
    let p = repo.scratch.join("user-prove.toml");
    std::fs::write(&p, toml).unwrap();
    p.display().to_string()
}

/// Live processes whose command line contains `needle`.
fn processes_with(needle: &str) -> Vec<String> {
    let mut out = vec![];
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        if !e
            .file_name()
            .to_string_lossy()
            .chars()
            .all(|c| c.is_ascii_digit())
        {
            continue;
        }
        let cmd = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
        if cmd.contains(needle) {
            out.push(cmd);
        }
    }
    out
}

/// A reproducer that hangs is killed at `[timeouts] prove`: `inconclusive`, timed out, and
/// nothing of it is left running.
#[test]
fn a_hanging_reproducer_is_inconclusive_within_the_limit_and_nothing_is_left_running() {
    let repo = python_repo();
    let config = user_config(&repo, "[timeouts]\nprove = \"2s\"\n");
    let hang = "import time\n\ntime.sleep(600)  # arev-hang-marker\n";
    let script = steps(vec![
        review_confirming(&[("F1", 2, "high")]),
        vec![json!({"role": "prover", "finding": "F1",
            "writes": [{"path": "repro_hang.py", "content": hang}],
            "answer": {"finding_id": "F1", "files": ["repro_hang.py"],
                       "command": ["python3", "repro_hang.py"], "claim": "it hangs"}})],
    ]);
    let started = std::time::Instant::now();
    let run = prove_run(
        &repo,
        &[
            "run", "diff", "--base", "main", "--prove", "--config", &config,
        ],
        script,
    );
    let f1 = proof(&run.report(), "F1").clone();
    assert_eq!(f1["status"], "inconclusive", "{f1:#}");
    assert_eq!(f1["head"]["timed_out"], true, "{f1:#}");
    let ms = f1["head"]["duration_ms"].as_u64().unwrap();
    assert!(
        (2000..10_000).contains(&ms),
        "killed at the 2 s limit: {ms} ms"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
    assert!(
        processes_with("repro_hang.py").is_empty(),
        "{:?}",
        processes_with("repro_hang.py")
    );
}

/// The Prover agent's own dispatch has its own limit, `[timeouts.prover] agent`, apart from
/// the reproducer's `[timeouts] prove`: a Prover that hangs is killed there, its proof is
/// `inconclusive` and the review's verdict stands.
#[test]
fn a_hanging_prover_is_stopped_at_its_own_dispatch_timeout() {
    let repo = python_repo();
    let config = user_config(
        &repo,
        "[timeouts]\nprove = \"5m\"\n[timeouts.prover]\nagent = \"2s\"\ngrace = \"1s\"\n",
    );
    let script = steps(vec![
        review_confirming(&[("F1", 2, "high")]),
        vec![json!({"role": "prover", "finding": "F1", "hang": true})],
    ]);
    let started = std::time::Instant::now();
    let run = prove_run(
        &repo,
        &[
            "run", "diff", "--base", "main", "--prove", "--config", &config, "--format", "json",
        ],
        script,
    );
    let elapsed = started.elapsed();
    run.assert_code(1);
    let report = run.report();
    let f1 = proof(&report, "F1");
    assert_eq!(f1["status"], "inconclusive", "{f1:#}\n{}", run.stderr);
    assert!(f1["head"].is_null(), "nothing ran: {f1:#}");
    let reason = f1["reason"].as_str().unwrap();
    assert!(reason.starts_with("agent_dispatch_unavailable"), "{reason}");
    // Well under [timeouts] agent (10m) and [timeouts] prove (5m): the Prover's own 2 s
    // (one retry of a failed dispatch included).
    assert!(
        elapsed < std::time::Duration::from_secs(60),
        "{elapsed:?}\n{}",
        run.stderr
    );
    assert_eq!(report["confirmed"].as_array().unwrap().len(), 1);
}

/// The same proofs in a second ecosystem: a Rust crate whose Prover adds an integration test
/// run with `cargo test --offline`, the toolchain bound read-only through the user's
/// `[prove] bind_ro` and found through `[prove] env`.
#[test]
fn a_rust_regression_is_reproduced_with_cargo_test_offline() {
    let home = PathBuf::from(std::env::var_os("HOME").unwrap());
    let cargo_home =
        std::env::var_os("CARGO_HOME").map_or_else(|| home.join(".cargo"), PathBuf::from);
    let rustup_home =
        std::env::var_os("RUSTUP_HOME").map_or_else(|| home.join(".rustup"), PathBuf::from);
    let repo = TestRepo::new();
    let lib = |body: &str| {
        format!("pub fn add(a: i32, b: i32) -> i32 {{\n    {body}\n}}\n\n// -\n// -\n// -\n// -\n// -\n// -\n// -\n// -\n\npub fn double(x: i32) -> i32 {{\n    x * 2\n}}\n")
    };
    repo.write(
        "Cargo.toml",
        "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    )
    .write("src/lib.rs", &lib("a + b"))
    .write(".gitignore", "target/\n")
    .commit("calc crate");
    repo.git(&["checkout", "-q", "-b", "feature"]);
    repo.write(
        "src/lib.rs",
        &lib("a - b").replace("x * 2", "x * 2 // twice"),
    )
    .commit("feature");
    std::fs::create_dir_all(repo.scratch.join("tmp")).unwrap();
    let config = user_config(
        &repo,
        &format!(
            "[prove]\nenv = [\"CARGO_HOME\", \"RUSTUP_HOME\"]\nbind_ro = [{:?}, {:?}]\n",
            cargo_home.display().to_string(),
            rustup_home.display().to_string()
        ),
    );
    let test = |name: &str, expr: &str, want: &str| {
        json!({"path": format!("tests/{name}.rs"),
               "content": format!("#[test]\nfn repro() {{\n    assert_eq!({expr}, {want}, \"{expr} must be {want}\");\n}}\n")})
    };
    let prover = |id: &str, name: &str, expr: &str, want: &str| {
        json!({"role": "prover", "finding": id, "writes": [test(name, expr, want)],
               "answer": {"finding_id": id, "files": [format!("tests/{name}.rs")],
                          "command": ["cargo", "test", "--offline", "--test", name],
                          "claim": format!("{expr} is not {want}")}})
    };
    let f = vec![
        finding("F1", "src/lib.rs", 2, "high", "logic-add"),
        finding("F2", "src/lib.rs", 15, "high", "logic-double"),
    ];
    let r = vec![
        ruling("F1", "src/lib.rs", 2, "high", "enthusiast"),
        ruling("F2", "src/lib.rs", 15, "high", "enthusiast"),
    ];
    let script = json!({"steps": [
        {"role": "enthusiast", "round": 1, "answer": {"findings": f}},
        {"role": "judge", "round": 1, "answer": {"rulings": r, "summary": "s", "convergence": true, "next_round_model": null}},
        prover("F1", "arev_f1", "calc::add(2, 3)", "5"),
        prover("F2", "arev_f2", "calc::double(4)", "8"),
    ]});
    let path = format!(
        "{}:{}/bin:/usr/local/bin:/usr/bin:/bin",
        repo.scratch.join("bin").display(),
        cargo_home.display()
    );
    let run = repo
        .arev()
        .args(&[
            "run", "diff", "--base", "main", "--prove", "--config", &config,
        ])
        .env("PATH", &path)
        .env("CARGO_HOME", &cargo_home.display().to_string())
        .env("RUSTUP_HOME", &rustup_home.display().to_string())
        .env("TMPDIR", &repo.scratch.join("tmp").display().to_string())
        .script(script)
        .run();
    let report = run.report();
    let f1 = proof(&report, "F1");
    assert_eq!(f1["status"], "reproduced", "{f1:#}\n{}", run.stderr);
    let out = f1["head"]["output_tail"].as_str().unwrap();
    assert!(out.contains("calc::add(2, 3) must be 5"), "{out}");
    assert_eq!(f1["head"]["exit"], 101);
    assert_eq!(f1["base"]["exit"], 0, "{f1:#}");
    let f2 = proof(&report, "F2");
    assert_eq!(f2["status"], "not_reproduced", "{f2:#}");
}

/// report.json with what changes from run to run made fixed: durations, the scratch tree's
/// path and unittest's timing line in the output tails.
fn steady(dir: &std::path::Path) {
    let path = dir.join("report.json");
    let mut report: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    report["prove"]["duration_ms"] = json!(4321);
    for f in report["confirmed"].as_array_mut().unwrap() {
        for side in ["head", "base"] {
            let run = &mut f["proof"][side];
            if run.is_null() {
                continue;
            }
            run["duration_ms"] = json!(150);
            let tail = run["output_tail"].as_str().unwrap().to_string();
            let tail: Vec<String> = tail
                .split_inclusive('\n')
                .map(|l| {
                    if l.starts_with("Ran 1 test in ") {
                        "Ran 1 test in 0.001s\n".to_string()
                    } else if let (Some(a), Some(b)) = (l.find("File \""), l.find("/repo/")) {
                        format!("{}File \"[tree]/{}", &l[..a], &l[b + 6..])
                    } else {
                        l.to_string()
                    }
                })
                .collect();
            run["output_tail"] = json!(tail.concat());
        }
    }
    std::fs::write(&path, serde_json::to_string_pretty(&report).unwrap()).unwrap();
}

fn redact(text: &str, report: &Value) -> String {
    let mut s = text.to_string();
    for (key, label) in [
        (report["run_dir"].as_str().unwrap(), "[run_dir]"),
        (report["run_id"].as_str().unwrap(), "[run_id]"),
        (report["target"]["sha256"].as_str().unwrap(), "[sha256]"),
        (&report["target"]["sha256"].as_str().unwrap()[..12], "[sha]"),
        (report["started_at"].as_str().unwrap(), "[started_at]"),
        (report["finished_at"].as_str().unwrap(), "[finished_at]"),
        (
            report["target"]["commit"].as_str().unwrap_or("no-commit"),
            "[commit]",
        ),
        (env!("CARGO_PKG_VERSION"), "[version]"),
    ] {
        s = s.replace(key, label);
    }
    s
}

/// The proofs in every rendering (re-rendered by `arev report`): the text `proof:` lines
/// and counts, the Markdown badges and collapsed reproducers, the annotations naming the
/// status, SARIF `properties.evidence` — and, unsandboxed, the statement in each.
#[test]
fn every_rendering_shows_the_proofs() {
    let repo = python_repo();
    let script = steps(vec![
        review_confirming(&[
            ("F1", 2, "high"),
            ("F2", 13, "high"),
            ("F3", 24, "critical"),
        ]),
        vec![
            python_prover("F1", "calc.add(2, 3)", "5"),
            python_prover("F2", "calc.neg(4)", "-4"),
            python_prover("F3", "calc.mul(2, 3)", "6"),
        ],
        // Round 2 finds nothing new: its Enthusiast answers once the Adversary's answer is
        // recorded, so the Adversary is never cancelled mid-answer (docs/contracts.md §7)
        // and the cost line is the same on every run.
        vec![json!({"role": "enthusiast", "round": 2, "wait_for": repo.adversary_recorded(2)})],
    ]);
    let run = prove_run(
        &repo,
        &["run", "diff", "--base", "main", "--prove", "-q"],
        script.clone(),
    );
    run.assert_code(1);
    let dir = run.run_dir();
    steady(&dir);
    let report = run.report();
    let render = |format: &str| {
        let r = repo
            .arev()
            .args(&["report", dir.to_str().unwrap(), "--format", format])
            .run();
        r.assert_code(0);
        redact(&r.stdout, &report)
    };
    insta::assert_snapshot!("prove_text", render("text"));
    insta::assert_snapshot!("prove_markdown", render("markdown"));
    insta::assert_snapshot!("prove_github", render("github"));
    let sarif = repo
        .arev()
        .args(&["report", dir.to_str().unwrap(), "--format", "sarif"])
        .run()
        .stdout;
    crate::sarif_schema::assert_valid(&sarif, "prove");
    let v: Value = serde_json::from_str(&sarif).unwrap();
    let results = v["runs"][0]["results"].as_array().unwrap();
    let statuses: Vec<&str> = results
        .iter()
        .map(|r| r["properties"]["evidence"]["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["not_reproduced", "reproduced", "preexisting"]);

    // Unsandboxed: every rendering says so.
    let repo = python_repo();
    let run = prove_run(
        &repo,
        &[
            "run",
            "diff",
            "--base",
            "main",
            "--prove",
            "--prove-sandbox",
            "none",
            "-q",
        ],
        script,
    );
    let dir = run.run_dir();
    for format in ["text", "markdown", "github"] {
        let out = repo
            .arev()
            .args(&["report", dir.to_str().unwrap(), "--format", format])
            .run()
            .stdout;
        assert!(out.contains("UNSANDBOXED"), "{format}:\n{out}");
    }
    let sarif = repo
        .arev()
        .args(&["report", dir.to_str().unwrap(), "--format", "sarif"])
        .run()
        .stdout;
    assert!(sarif.contains("\"sandbox\": \"none\""), "{sarif}");
    assert_eq!(run.report()["prove"]["sandbox"], "none");
}

/// A link the change commits (`vendor -> <outside>`) is an inert file in the Prover's
/// scratch tree: the Prover's Write through it fails and nothing lands outside.
#[test]
fn a_prover_cannot_write_through_a_link_the_change_committed() {
    let repo = python_repo();
    let outside = repo.scratch.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, repo.root.join("vendor")).unwrap();
    repo.commit("vendor");
    let before = untouched(&repo);
    let prover = json!({"role": "prover", "finding": "F1",
        "writes": [{"path": "vendor/test_arev_f1.py", "content": unittest("calc.add(2, 3)", "5")}],
        "answer": {"finding_id": "F1", "files": ["vendor/test_arev_f1.py"],
                   "command": ["python3", "-m", "unittest", "vendor.test_arev_f1"],
                   "claim": "add(2, 3) is not 5"}});
    let run = prove_run(
        &repo,
        &["run", "diff", "--base", "main", "--prove"],
        steps(vec![review_confirming(&[("F1", 2, "high")]), vec![prover]]),
    );
    run.assert_code(1);
    let left: Vec<_> = std::fs::read_dir(&outside).unwrap().collect();
    assert!(left.is_empty(), "a write landed outside the tree: {left:?}");
    let report = run.report();
    let p = proof(&report, "F1");
    assert_eq!(p["status"], "inconclusive", "{p:#}");
    assert!(p["head"].is_null(), "nothing ran: {p:#}");
    assert_untouched(&repo, &before);
}

/// A reproducer that takes the permissions of its directories away and builds a chain
/// deeper than arev's open-file limit (128, and than `PATH_MAX`) leaves nothing behind;
/// nothing is reported left. Under bwrap it builds them in the worktree's tmpfs; unsandboxed
/// in the scratch tree on disk, which arev removes. (Run by root, arev's removal is not
/// stopped by permissions: `src/prove/cleanup_tests.rs` removes the same kind of tree as
/// `nobody`.)
#[test]
fn a_hostile_reproducers_tree_is_removed_whatever_it_did() {
    for sandbox in ["bwrap", "none"] {
        hostile_tree_removed(sandbox);
    }
}

fn hostile_tree_removed(sandbox: &str) {
    let repo = python_repo();
    let before = untouched(&repo);
    let hostile = "import os\n\
        os.makedirs('junk/a/b')\n\
        open('junk/a/b/f', 'w').write('x')\n\
        os.symlink('/etc', 'junk/a/etc-link')\n\
        os.chmod('junk/a/b', 0)\n\
        os.chmod('junk/a', 0o100)\n\
        os.chmod('junk', 0o500)\n\
        os.mkdir('deep')\n\
        os.chdir('deep')\n\
        for _ in range(3000):\n    os.mkdir('d')\n    os.chdir('d')\n\
        open('bottom', 'w').write('x')\n\
        os.chmod('.', 0)\n\
        print('BUILT')\n\
        raise SystemExit(1)\n";
    let prover = json!({"role": "prover", "finding": "F1",
        "writes": [{"path": "repro_f1.py", "content": hostile}],
        "answer": {"finding_id": "F1", "files": ["repro_f1.py"],
                   "command": ["python3", "repro_f1.py"], "claim": "it builds a maze"}});
    let run = repo
        .arev()
        .args(&[
            "run",
            "diff",
            "--base",
            "main",
            "--prove",
            "--prove-sandbox",
            sandbox,
        ])
        .env("TMPDIR", &repo.scratch.join("tmp").display().to_string())
        .script(steps(vec![
            review_confirming(&[("F1", 2, "high")]),
            vec![prover],
        ]))
        .nofile(128)
        .run();
    let report = run.report();
    let p = proof(&report, "F1");
    assert_eq!(p["head"]["exit"], 1, "{sandbox}: {p:#}\n{}", run.stderr);
    assert!(p["head"]["output_tail"].as_str().unwrap().contains("BUILT"));
    assert_eq!(report["warnings"], json!([]), "{sandbox}: {report:#}");
    assert_untouched(&repo, &before);
}
