//! `arev runs` over 500 finished runs whose reports hold 1,000 confirmed findings each
//! (docs/architecture.md §7.2): listings read meta.json and summary.json, never the
//! reports. Side by side, in alternating whole-process runs: `cat */meta.json` (reading
//! every run's meta.json and nothing else), and `arev runs` over the same runs without
//! their summary.json (the fallback for older run dirs: every report.json parsed).
//!
//! Run: `cargo bench --features fake-agent --bench runs`.
// A benchmark is test code: a broken fixture may panic.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::print_stdout)]

mod common;

use common::{git, median_ms, timed};
use serde_json::{json, Value};
use std::path::Path;

const RUNS: usize = 500;
const FINDINGS: usize = 1000;
const REPS: usize = 9;

fn finding(id: usize) -> Value {
    json!({"id": format!("F{id}"), "severity": "high", "target_type": "code", "file": "src/lib.rs",
        "line": 10 * id, "category": "logic", "description": format!("defect {id} in the thing"),
        "evidence": format!("pub fn f{}()", 10 * id), "source": "enthusiast", "prior_finding_id": null})
}

fn ruling(id: usize) -> Value {
    json!({"finding_id": format!("F{id}"), "file": "src/lib.rs", "line": 10 * id, "target_type": "code",
        "final_severity": "high", "winner": "enthusiast", "resolution": "real", "edit_instruction": "fix it", "cites": []})
}

/// One real run with FINDINGS confirmed findings; returns its run dir.
fn seed_run(repo: &Path, bin: &Path) -> std::path::PathBuf {
    std::fs::create_dir_all(repo.join("src")).unwrap();
    // Findings 10 lines apart: the union keeps them apart.
    let body: String = (1..=10 * FINDINGS + 10)
        .map(|i| format!("pub fn f{i}() -> u32 {{ {i} }}\n"))
        .collect();
    std::fs::write(repo.join("src/lib.rs"), body).unwrap();
    git(repo, &["init", "-q"]);
    let script = repo.join("script.json");
    let s = json!({"steps": [
        {"role": "enthusiast", "answer": {"findings": (1..=FINDINGS).map(finding).collect::<Vec<_>>()}},
        {"role": "judge", "answer": {"rulings": (1..=FINDINGS).map(ruling).collect::<Vec<_>>(),
            "summary": "s", "convergence": false, "next_round_model": null}}
    ]});
    std::fs::write(&script, s.to_string()).unwrap();
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let arev = env!("CARGO_BIN_EXE_arev");
    let out = std::process::Command::new(arev)
        .args([
            "run",
            "src/lib.rs",
            "--max-rounds",
            "1",
            "--passes",
            "1",
            "-q",
        ])
        .current_dir(repo)
        .env("PATH", path)
        .env("AREV_FAKE_SCRIPT", &script)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let base = repo.join(".arev/runs");
    let dir = std::fs::read_dir(&base)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let report: Value =
        serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap();
    assert_eq!(report["confirmed"].as_array().unwrap().len(), FINDINGS);
    dir
}

/// RUNS copies of the seed's records under `base` (with or without summary.json).
fn replicate(seed: &Path, base: &Path, summaries: bool) -> u64 {
    std::fs::create_dir_all(base).unwrap();
    let mut bytes = 0;
    for i in 0..RUNS {
        let dir = base.join(format!(
            "20260101-{:06}-{:06x}-src-lib-rs",
            i,
            i * 7919 % 0xffffff
        ));
        std::fs::create_dir_all(&dir).unwrap();
        for f in ["meta.json", "report.json", "summary.json", "report.md"] {
            if f == "summary.json" && !summaries {
                continue;
            }
            bytes += std::fs::copy(seed.join(f), dir.join(f)).unwrap();
        }
    }
    bytes
}

fn main() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_arev-fake-agent"), bin.join("claude")).unwrap();
    let repo = tmp.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let seed = seed_run(&repo, &bin);
    let with = tmp.path().join("with");
    let without = tmp.path().join("without");
    let bytes = replicate(&seed, &with, true);
    replicate(&seed, &without, false);
    let report_kib = std::fs::metadata(seed.join("report.json")).unwrap().len() / 1024;
    let summary_b = std::fs::metadata(seed.join("summary.json")).unwrap().len();
    println!(
        "{RUNS} runs, {FINDINGS} confirmed findings each: report.json {report_kib} KiB, summary.json {summary_b} B; {:.0} MiB of records",
        bytes as f64 / 1048576.0
    );

    let arev = env!("CARGO_BIN_EXE_arev");
    let list = |base: &Path| {
        let (t, out) = timed(
            &[arev, "runs", "--run-dir", base.to_str().unwrap()],
            tmp.path(),
            &[],
            None,
        );
        let text = String::from_utf8(out.stdout).unwrap();
        assert_eq!(text.lines().count(), RUNS + 1, "header + one line per run");
        assert!(text.lines().nth(1).unwrap().contains(&FINDINGS.to_string()));
        t
    };
    let cat = |base: &Path| {
        timed(
            &["sh", "-c", "cat */meta.json > /dev/null"],
            base,
            &[],
            None,
        )
        .0
    };
    // Warm the page cache.
    list(&with);
    list(&without);
    cat(&with);
    let (mut a, mut c, mut old) = (vec![], vec![], vec![]);
    for _ in 0..REPS {
        a.push(list(&with));
        c.push(cat(&with));
        old.push(list(&without));
    }
    let (a, c, old) = (median_ms(&a), median_ms(&c), median_ms(&old));
    println!("whole process, median of {REPS} alternating runs:");
    println!("  arev runs (summary.json)                  {a:8.1} ms  (goal < 50 ms)");
    println!("  cat */meta.json > /dev/null               {c:8.1} ms");
    println!("  arev runs without summaries (reports)     {old:8.1} ms");
    println!(
        "ratio arev runs / cat meta: {:.2}x; speed-up over parsing reports: {:.1}x; goal {}",
        a / c,
        old / a,
        if a < 50.0 { "met" } else { "MISSED" }
    );
}
