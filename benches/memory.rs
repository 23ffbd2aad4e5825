//! Review-memory benchmark (docs/architecture.md §20, issue #13), through the real `arev`
//! binary and the fake agent answering at once:
//! 1. the verdict cache: the first review of a 1,000-file manifest (cold cache) against the
//!    same review again (a hit: nothing dispatched), whole process, next to the time it takes
//!    to read and hash the 1,000 files once;
//! 2. `--incremental`: after a full review, one file changes; the incremental re-review
//!    dispatches its agents over that one file (checked), against a full re-review.
//!
//! Run: `cargo bench --features fake-agent --bench memory`.
// A benchmark is test code: a broken fixture may panic.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::print_stdout)]

use serde_json::Value;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const FILES: usize = 1000;
const RUNS: usize = 7;

fn git(dir: &Path, args: &[&str]) {
    assert!(Command::new("git")
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .status()
        .unwrap()
        .success());
}

struct Bench {
    dir: PathBuf,
    bin: PathBuf,
    cache: PathBuf,
    log: PathBuf,
}

impl Bench {
    /// `arev run 'src/*.rs' -q --format json` plus `extra`: (wall time, report).
    fn run(&self, extra: &[&str]) -> (Duration, Value) {
        let start = Instant::now();
        let out = Command::new(env!("CARGO_BIN_EXE_arev"))
            .args(["run", "src/*.rs", "-q", "--format", "json"])
            .args(extra)
            .current_dir(&self.dir)
            .env_clear()
            .env("PATH", format!("{}:/usr/bin:/bin", self.bin.display()))
            .env("HOME", self.dir.join("home"))
            .env("XDG_CACHE_HOME", &self.cache)
            .env("AREV_FAKE_LOG", &self.log)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let wall = start.elapsed();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        (wall, serde_json::from_slice(&out.stdout).unwrap())
    }

    /// The same command stopped right after pinning the target (a `--baseline` that does
    /// not exist is refused once the target is pinned): what any run pays before reviewing.
    fn pin_only(&self) -> Duration {
        let start = Instant::now();
        let out = Command::new(env!("CARGO_BIN_EXE_arev"))
            .args([
                "run",
                "src/*.rs",
                "-q",
                "--format",
                "json",
                "--baseline",
                "nope",
            ])
            .current_dir(&self.dir)
            .env_clear()
            .env("PATH", format!("{}:/usr/bin:/bin", self.bin.display()))
            .env("HOME", self.dir.join("home"))
            .env("XDG_CACHE_HOME", &self.cache)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let wall = start.elapsed();
        assert_eq!(out.status.code(), Some(2));
        wall
    }

    fn dispatches(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

/// Read and sha256 every file of the manifest once, in this process.
fn read_once(dir: &Path) -> Duration {
    let start = Instant::now();
    let mut h = Sha256::new();
    for i in 0..FILES {
        h.update(std::fs::read(dir.join(format!("src/m{i:04}.rs"))).unwrap());
    }
    std::hint::black_box(h.finalize());
    start.elapsed()
}

fn main() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("repo");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::create_dir_all(dir.join("home")).unwrap();
    git(&dir, &["init", "-q"]);
    for i in 0..FILES {
        let body: String = (0..40)
            .map(|l| format!("pub fn f{i}_{l}(x: u32) -> u32 {{ x + {l} }}\n"))
            .collect();
        std::fs::write(dir.join(format!("src/m{i:04}.rs")), body).unwrap();
    }
    let bin = tmp.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_arev-fake-agent"), bin.join("claude")).unwrap();
    let b = Bench {
        dir: dir.clone(),
        bin,
        cache: tmp.path().join("cache"),
        log: tmp.path().join("fake.log"),
    };

    // 1. The verdict cache.
    let mut cold = vec![];
    for _ in 0..RUNS {
        let _ = std::fs::remove_dir_all(&b.cache);
        let (t, r) = b.run(&[]);
        assert!(r.get("cached_from").is_none());
        cold.push(t);
    }
    let before = b.dispatches().len();
    let mut hit = vec![];
    for _ in 0..RUNS {
        let (t, r) = b.run(&[]);
        assert!(r["cached_from"].is_string(), "a hit");
        hit.push(t);
    }
    assert_eq!(b.dispatches().len(), before, "a hit dispatches nothing");
    let read: Vec<Duration> = (0..RUNS).map(|_| read_once(&dir)).collect();
    let pin: Vec<Duration> = (0..RUNS).map(|_| b.pin_only()).collect();
    let (cold, hit, read, pin) = (median(cold), median(hit), median(read), median(pin));
    println!("verdict cache, {FILES}-file manifest, whole process, median of {RUNS} runs (instant fake agents):");
    println!("  first review (cold cache): {}", ms(cold));
    println!(
        "  same review, cache hit:    {}  ({:.1}x faster; reading and hashing the {FILES} files once in-process: {})",
        ms(hit),
        cold.as_secs_f64() / hit.as_secs_f64(),
        ms(read)
    );
    println!(
        "  of which pinning (the same command stopped once the target is pinned): {}; the hit's own cost: {}",
        ms(pin),
        ms(hit.saturating_sub(pin))
    );

    // 2. --incremental with one changed file.
    let (_, base) = b.run(&["--no-cache"]);
    let base_id = base["run_id"].as_str().unwrap().to_string();
    std::fs::write(dir.join("src/m0500.rs"), "pub fn changed() -> u32 { 1 }\n").unwrap();
    let mut full = vec![];
    for _ in 0..RUNS {
        full.push(b.run(&["--no-cache"]).0);
    }
    let mut inc = vec![];
    for _ in 0..RUNS {
        let before = b.dispatches().len();
        let (t, r) = b.run(&["--no-cache", "--baseline", &base_id, "--incremental"]);
        inc.push(t);
        assert_eq!(
            r["incremental"]["reviewed"],
            serde_json::json!(["src/m0500.rs"])
        );
        assert_eq!(r["coverage"]["carried_over"], FILES as u64 - 1);
        let run_dir = PathBuf::from(r["run_dir"].as_str().unwrap());
        let manifest = std::fs::read_to_string(run_dir.join("target/manifest.txt")).unwrap();
        assert_eq!(manifest, "src/m0500.rs\n", "the agents get one file");
        let new = &b.dispatches()[before..];
        assert!(!new.is_empty());
        assert!(new.iter().all(|d| d["target_path"]
            .as_str()
            .is_some_and(|p| p.starts_with(run_dir.to_str().unwrap()))));
    }
    let (full, inc) = (median(full), median(inc));
    println!("--incremental, {FILES}-file manifest with 1 changed file, whole process, median of {RUNS} runs:");
    println!(
        "  full re-review:        {} (agents over {FILES} files)",
        ms(full)
    );
    println!("  incremental re-review: {} (agents over 1 file: checked in target/manifest.txt; {} files carried over)", ms(inc), FILES - 1);
}
