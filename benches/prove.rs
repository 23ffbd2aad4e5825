//! Proof-phase benchmark (`--prove`, docs/prove.md), through the real `arev` binary and the
//! fake agent: three confirmed findings whose Provers take a fixed latency and whose
//! reproducers sleep for different times (on the reviewed code and on the base). The proof
//! phase should take about ONE Prover call plus the slowest reproducer's runs (the Provers
//! run side by side, each reproducer starts when its Prover answered), not the sum of every
//! Prover call and every run. Prints the phase's time against both.
//!
//! Run: `cargo bench --features fake-agent --bench prove`.
// A benchmark is test code: a broken fixture may panic.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::print_stdout)]

use serde_json::{json, Value};
use std::path::Path;
use std::process::{Command, Stdio};

fn git(dir: &Path, args: &[&str]) {
    assert!(Command::new("git")
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .status()
        .unwrap()
        .success());
}

/// `calc.py` with three functions 11 lines apart; `change` marks each one's line.
fn calc(change: &str) -> String {
    let gap = "\n\n# -\n# -\n# -\n# -\n# -\n# -\n\n";
    format!(
        "def f1():\n    return 1{change}\n{gap}def f2():\n    return 2{change}\n{gap}def f3():\n    return 3{change}\n"
    )
}

#[allow(clippy::too_many_lines)] // one scenario, read top to bottom
fn main() {
    let base = std::env::var_os("AREV_BENCH_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| env!("CARGO_TARGET_TMPDIR").into());
    let tmp = tempfile::tempdir_in(&base).unwrap();
    let root = tmp.path().join("repo");
    std::fs::create_dir_all(&root).unwrap();
    let bin = tmp.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_arev-fake-agent"), bin.join("claude")).unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    git(&root, &["init", "-q", "-b", "main"]);
    git(&root, &["config", "user.email", "b@example.com"]);
    git(&root, &["config", "user.name", "B"]);
    std::fs::write(root.join("calc.py"), calc("")).unwrap();
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-q", "-m", "calc"]);
    std::fs::write(root.join("calc.py"), calc("  # changed")).unwrap();

    let prover_ms: u64 = 1500;
    let sleeps = [0.5f64, 1.0, 2.0];
    let lines = [2u32, 13, 24];
    let mut steps = vec![];
    let findings: Vec<Value> = (1..=3)
        .map(|i| {
            json!({"id": format!("F{i}"), "severity": "high", "target_type": "code",
                   "file": "calc.py", "line": lines[i - 1], "category": format!("logic-{i}"),
                   "description": "d", "evidence": "e", "source": "enthusiast", "prior_finding_id": null})
        })
        .collect();
    let rulings: Vec<Value> = (1..=3)
        .map(|i| {
            json!({"finding_id": format!("F{i}"), "file": "calc.py", "line": lines[i - 1],
                   "target_type": "code", "final_severity": "high", "winner": "enthusiast",
                   "resolution": "r", "edit_instruction": null, "cites": []})
        })
        .collect();
    steps.push(json!({"role": "enthusiast", "round": 1, "answer": {"findings": findings}}));
    steps.push(
        json!({"role": "judge", "round": 1, "answer": {"rulings": rulings,
        "summary": "s", "convergence": true, "next_round_model": null}}),
    );
    for (i, s) in sleeps.iter().enumerate() {
        let id = format!("F{}", i + 1);
        let file = format!("repro_{}.py", i + 1);
        steps.push(json!({"role": "prover", "finding": id, "delay_ms": prover_ms,
            "writes": [{"path": file, "content": format!("import time\ntime.sleep({s})\nraise SystemExit(1)\n")}],
            "answer": {"finding_id": id, "files": [file], "command": ["python3", file], "claim": "c"}}));
    }
    let script = tmp.path().join("script.json");
    std::fs::write(&script, json!({"steps": steps}).to_string()).unwrap();

    let out = Command::new(env!("CARGO_BIN_EXE_arev"))
        .args(["run", "diff", "--prove", "--format", "json", "-q"])
        .current_dir(&root)
        .env_clear()
        .env(
            "PATH",
            format!("{}:/usr/local/bin:/usr/bin:/bin", bin.display()),
        )
        .env("HOME", &home)
        .env("XDG_CACHE_HOME", tmp.path().join("cache"))
        .env("TMPDIR", tmp.path())
        .env("AREV_FAKE_SCRIPT", &script)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&out.stderr));
    });
    let phase = report["prove"]["duration_ms"].as_u64().unwrap();
    let run_dir = Path::new(report["run_dir"].as_str().unwrap());
    let mut calls = vec![];
    let mut runs = vec![];
    for f in report["confirmed"].as_array().unwrap() {
        let key = format!("r{}-{}", f["round"], f["id"].as_str().unwrap());
        let outcome: Value = serde_json::from_str(
            &std::fs::read_to_string(
                run_dir.join(format!("agents/p/{key}/prover-{key}/outcome.json")),
            )
            .unwrap(),
        )
        .unwrap();
        calls.push(outcome["duration_ms"].as_u64().unwrap());
        let p = &f["proof"];
        assert_eq!(p["status"], "preexisting", "{p:#}");
        let head = p["head"]["duration_ms"].as_u64().unwrap();
        let base = p["base"]["duration_ms"].as_u64().unwrap();
        runs.push((head, base));
    }
    let one_call = *calls.iter().max().unwrap();
    // Head and base of one finding run side by side when cores allow; the bound counts them
    // one after the other, the slowest finding's.
    let slowest = runs.iter().map(|(h, b)| h + b).max().unwrap();
    let sum: u64 = calls.iter().sum::<u64>() + runs.iter().map(|(h, b)| h + b).sum::<u64>();
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    println!("proof phase, 3 findings, {cores} core(s):");
    println!("  Prover calls (ms):            {calls:?}");
    println!("  reproducer runs (head, base): {runs:?}");
    println!("  phase:                        {phase} ms");
    println!(
        "  one Prover call + slowest reproducer (both runs): {} ms  → phase / that = {:.2}",
        one_call + slowest,
        phase as f64 / (one_call + slowest) as f64
    );
    println!(
        "  sum of every call and run:    {sum} ms  → phase / sum = {:.2}",
        phase as f64 / sum as f64
    );
}
