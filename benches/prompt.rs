//! Prompt bytes per dispatch for a 1-file target vs a 20,000-file target, measured through
//! the real `arev` binary with the fake agent (pointer over payload: prompts must not grow
//! with the target). Run: `cargo bench --features fake-agent --bench prompt`.
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

fn run(dir: &Path, bin: &Path, target: &str) -> (u64, u64, usize) {
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
    (
        size("agents/r1/enthusiast-p1/prompt.md"),
        size("agents/r1/adversary/prompt.md"),
        tag_path_len,
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
    let (e1, a1, p1) = run(&one, &bin, "src/d000/f00000.rs");
    let (e2, a2, p2) = run(&many, &bin, "src/**/*.rs");
    println!("prompt bytes per dispatch (enthusiast / adversary):");
    println!("  1 file        : {e1} / {a1}   (target path {p1} bytes)");
    println!("  20,000 files  : {e2} / {a2}   (target path {p2} bytes)");
    println!(
        "  ratio 20k/1   : {:.3} / {:.3}   (difference {} / {} bytes; the bounded ≤2 KB brief and the path account for it)",
        e2 as f64 / e1 as f64,
        a2 as f64 / a1 as f64,
        e2 as i64 - e1 as i64,
        a2 as i64 - a1 as i64
    );
}
