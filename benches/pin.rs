//! Pinning benchmark: arev's manifest `resolve()` of `src/**/*.rs` against the seed's shell
//! pipeline (`find | sort | xargs sha256sum | sha256sum`) on a 20,000-file git repository.
//!
//! Run with `cargo bench --bench pin`. Prints the median of each, the ratio, and whether the
//! two digests are identical.
// A benchmark is test code: a broken fixture may panic.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use arev::target::{resolve, Excludes, TargetKind, TargetRequest};
use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const TOP_DIRS: usize = 20;
const SUB_DIRS: usize = 10;
const FILES_PER_DIR: usize = 100;
const REPS: usize = 7;
const SEED_PIPELINE: &str =
    "find src -type f -name '*.rs' | LC_ALL=C sort | xargs sha256sum | sha256sum";

/// xorshift64*: deterministic content without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const WORDS: &[&str] = &[
    "let", "value", "self", "count", "into", "match", "Some", "None", "return", "config", "items",
    "iter", "map", "collect", "buffer", "len", "push", "result", "error", "state",
];

/// A Rust-looking source file of 512–4096 bytes.
fn source(rng: &mut Rng, id: usize) -> String {
    let target = 512 + rng.below(4096 - 512) as usize;
    let mut s = format!("//! Module {id}.\n\npub fn f{id}(x: u64) -> u64 {{\n");
    while s.len() < target.saturating_sub(2) {
        let words = 3 + rng.below(8);
        s.push_str("    ");
        for w in 0..words {
            if w > 0 {
                s.push(' ');
            }
            s.push_str(WORDS[rng.below(WORDS.len() as u64) as usize]);
        }
        s.push_str(";\n");
    }
    s.truncate(target.saturating_sub(2));
    s.push_str("}\n");
    s
}

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args([
            "-c",
            "user.name=bench",
            "-c",
            "user.email=bench@example.invalid",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(dir)
        .status()
        .expect("run git");
    assert!(status.success(), "git {args:?} failed");
}

fn build_repo(root: &Path) -> u64 {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut bytes = 0u64;
    let mut id = 0;
    for top in 0..TOP_DIRS {
        for sub in 0..SUB_DIRS {
            let dir = root.join(format!("src/mod_{top:02}/part_{sub:02}"));
            std::fs::create_dir_all(&dir).expect("mkdir");
            for file in 0..FILES_PER_DIR {
                let text = source(&mut rng, id);
                bytes += text.len() as u64;
                std::fs::write(dir.join(format!("file_{file:03}.rs")), text).expect("write");
                id += 1;
            }
        }
    }
    git(root, &["init", "-q"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "bench corpus"]);
    // Flush the fresh corpus to disk so write-back does not compete with the measurements.
    let _ = Command::new("sync").status();
    bytes
}

fn run_arev(root: &Path) -> (Duration, String, usize) {
    let req = TargetRequest {
        args: vec!["src/**/*.rs".to_owned()],
        base: None,
        base_tree: None,
        cwd: root.to_path_buf(),
        max_file_bytes: 1024 * 1024,
        excludes: Excludes::new(vec![], true),
    };
    let start = Instant::now();
    let pinned = resolve(&req).expect("resolve");
    let elapsed = start.elapsed();
    assert_eq!(pinned.kind, TargetKind::Manifest);
    (elapsed, pinned.sha256, pinned.files.len())
}

fn run_seed(root: &Path) -> (Duration, String) {
    let start = Instant::now();
    let out = Command::new("sh")
        .args(["-c", SEED_PIPELINE])
        .current_dir(root)
        .output()
        .expect("sh");
    let elapsed = start.elapsed();
    assert!(out.status.success(), "seed pipeline failed");
    let text = String::from_utf8(out.stdout).expect("utf8");
    let digest = text.split_whitespace().next().unwrap_or("").to_owned();
    (elapsed, digest)
}

fn median(mut v: Vec<Duration>) -> f64 {
    v.sort();
    v[v.len() / 2].as_secs_f64() * 1000.0
}

fn main() {
    let mut out = std::io::stdout().lock();
    let dir = tempfile::TempDir::new().expect("tempdir");
    let root = dir.path();
    let setup = Instant::now();
    let bytes = build_repo(root);
    let files = TOP_DIRS * SUB_DIRS * FILES_PER_DIR;
    writeln!(
        out,
        "corpus: {files} files, {:.1} MiB, {} dirs (built and committed in {:.1} s)",
        bytes as f64 / (1024.0 * 1024.0),
        TOP_DIRS * SUB_DIRS,
        setup.elapsed().as_secs_f64()
    )
    .expect("stdout");

    // Warm the page cache and both code paths once.
    let (_, arev_sha, listed) = run_arev(root);
    let (_, seed_sha) = run_seed(root);
    assert_eq!(listed, files);

    let mut arev_times = Vec::with_capacity(REPS);
    let mut seed_times = Vec::with_capacity(REPS);
    let mut identical = arev_sha == seed_sha;
    for _ in 0..REPS {
        let (t, sha, _) = run_arev(root);
        identical &= sha == arev_sha;
        arev_times.push(t);
        let (t, sha) = run_seed(root);
        identical &= sha == seed_sha;
        seed_times.push(t);
    }
    let arev_ms = median(arev_times);
    let seed_ms = median(seed_times);
    writeln!(
        out,
        "arev resolve('src/**/*.rs'):  median {arev_ms:8.1} ms over {REPS} runs"
    )
    .expect("stdout");
    writeln!(
        out,
        "seed pipeline ({SEED_PIPELINE}):  median {seed_ms:8.1} ms over {REPS} runs"
    )
    .expect("stdout");
    writeln!(
        out,
        "ratio seed/arev: {:.2}x (goal >= 2x)",
        seed_ms / arev_ms
    )
    .expect("stdout");
    writeln!(
        out,
        "digests identical: {} (arev {arev_sha}, seed {seed_sha})",
        if identical { "yes" } else { "NO" }
    )
    .expect("stdout");
}
