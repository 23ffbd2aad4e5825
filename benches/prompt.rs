//! Prompt bytes per dispatch for a 1-file target vs a 20,000-file target, measured through
//! the real `arev` binary with the fake agent (pointer over payload: prompts must not grow
//! with the target). Run: `cargo bench --features fake-agent --bench prompt`.
// A benchmark is test code: a broken fixture may panic.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::print_stdout)]

use std::path::Path;
use std::process::Command;

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .args(args)
        .current_dir(dir)
        .status()
        .unwrap()
        .success();
    assert!(ok, "git {args:?}");
}

fn repo(dir: &Path, files: usize) {
    std::fs::create_dir_all(dir).unwrap();
    git(dir, &["init", "-q"]);
    for i in 0..files {
        let p = dir.join(format!("src/d{:03}/f{:05}.rs", i / 100, i));
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, format!("pub fn f{i}() -> u32 {{ {i} }}\n")).unwrap();
    }
}

/// Bytes between `<brief>` and `</brief>` in a prompt.
fn brief_bytes(prompt: &str) -> u64 {
    match (prompt.find("<brief>"), prompt.find("</brief>")) {
        (Some(a), Some(b)) if a < b => (b - a - "<brief>".len()) as u64,
        _ => 0,
    }
}

fn run(dir: &Path, bin: &Path, target: &str) -> (u64, u64, usize, u64) {
    let out = Command::new(env!("CARGO_BIN_EXE_arev"))
        .args([
            "run",
            target,
            "--passes",
            "1",
            "--max-rounds",
            "1",
            "-q",
            "--format",
            "json",
            // Every run reviews: the verdict cache would answer the repeats.
            "--no-cache",
        ])
        .current_dir(dir)
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .output()
        .unwrap();
    assert!(
        out.status.code() == Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let run = Path::new(report["run_dir"].as_str().unwrap()).to_path_buf();
    let size = |rel: &str| std::fs::metadata(run.join(rel)).unwrap().len();
    let tag_path_len = std::fs::read_to_string(run.join("meta.json"))
        .ok()
        .and_then(|m| serde_json::from_str::<serde_json::Value>(&m).ok())
        .and_then(|m| m["target"]["path"].as_str().map(str::len))
        .unwrap_or(0);
    let brief =
        brief_bytes(&std::fs::read_to_string(run.join("agents/r1/adversary/prompt.md")).unwrap());
    (
        size("agents/r1/enthusiast-p1/prompt.md"),
        size("agents/r1/adversary/prompt.md"),
        tag_path_len,
        brief,
    )
}

fn main() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_arev-fake-agent"), bin.join("claude")).unwrap();
    let one = tmp.path().join("one");
    let many = tmp.path().join("many");
    repo(&one, 1);
    repo(&many, 20_000);
    let (e1, a1, p1, b1) = run(&one, &bin, "src/d000/f00000.rs");
    let (e2, a2, p2, b2) = run(&many, &bin, "src/**/*.rs");
    println!("prompt bytes per dispatch (enthusiast / adversary):");
    println!("  1 file        : {e1} / {a1}   (target path {p1} B, brief {b1} B)");
    println!("  20,000 files  : {e2} / {a2}   (target path {p2} B, brief {b2} B)");
    println!(
        "  ratio 20k/1   : {:.3} / {:.3}   (difference {} / {} B)",
        e2 as f64 / e1 as f64,
        a2 as f64 / a1 as f64,
        e2 as i64 - e1 as i64,
        a2 as i64 - a1 as i64
    );
    // The brief is capped at 2 KB whatever the target size; the path appears twice (tag and
    // guide). What is left is the kind-specific guide wording (file vs manifest).
    let rest = |e: u64, p: usize, b: u64| e as i64 - 2 * p as i64 - b as i64;
    println!(
        "  without path and brief: {} vs {} B (enthusiast), {} vs {} B (adversary)",
        rest(e1, p1, b1),
        rest(e2, p2, b2),
        rest(a1, p1, b1),
        rest(a2, p2, b2)
    );
}
