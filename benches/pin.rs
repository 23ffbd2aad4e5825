//! Pinning benchmark: arev's manifest `resolve()` of `src/**/*.rs` against the seed's shell
//! pipeline (`find | sort | xargs sha256sum | sha256sum`) on a 20,000-file git repository;
//! then the end-of-run drift check (`repin`) of that pin, nothing moved and one file moved.
//!
//! Run with `cargo bench --bench pin`. Prints the median of each, the ratio, and whether the
//! two digests are identical.
// A benchmark is test code: a broken fixture may panic.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// Its `main` runs the bench's scenarios in order: the 100-line rule is for `src/`.
#![allow(clippy::too_many_lines)]

mod common;

use arev::target::{repin, resolve, Excludes, PinnedTarget, TargetKind, TargetRequest};
use common::{git, source, Rng};
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
    let (elapsed, pinned) = pin(root);
    (elapsed, pinned.sha256, pinned.files.len())
}

fn pin(root: &Path) -> (Duration, PinnedTarget) {
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
    (elapsed, pinned)
}

/// The drift check of `pinned`, timed, with the digest it gives.
fn run_repin(pinned: &PinnedTarget) -> (Duration, String) {
    let start = Instant::now();
    let sha = repin(pinned).expect("repin");
    (start.elapsed(), sha)
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

    // Warm up: a block of alternated runs, printed but not counted. Right after the corpus
    // is written, the first few passes over its 20,000 inodes run slower on this machine's
    // ext4 (the first read of each file also updates its access time), arev's more than the
    // pipeline's since its work is mostly metadata: measured ~45 % and ~7 %; from the
    // second block on, both are steady.
    let (_, arev_sha, listed) = run_arev(root);
    let (_, seed_sha) = run_seed(root);
    assert_eq!(listed, files);
    let (mut warm_arev, mut warm_seed) = (Vec::new(), Vec::new());
    for _ in 0..REPS {
        warm_arev.push(run_arev(root).0);
        warm_seed.push(run_seed(root).0);
    }
    let (warm_arev, warm_seed) = (median(warm_arev), median(warm_seed));
    writeln!(
        out,
        "warm-up block (not counted): arev {warm_arev:.1} ms, pipeline {warm_seed:.1} ms, ratio {:.2}x",
        warm_seed / warm_arev
    )
    .expect("stdout");

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

    // The drift check at the end of a run, on a pin taken now (the corpus is older than the
    // 2 s racy window, so its stat keys are trusted), alternated with a fresh pin.
    let (_, pinned) = pin(root);
    // The same pin without its keys: every file read and hashed again.
    let unkeyed = PinnedTarget {
        keys: None,
        ..pinned.clone()
    };
    let mut repin_times = Vec::with_capacity(REPS);
    let mut unkeyed_times = Vec::with_capacity(REPS);
    let mut pin_times = Vec::with_capacity(REPS);
    for _ in 0..REPS {
        let (t, sha) = run_repin(&pinned);
        assert_eq!(sha, pinned.sha256, "nothing moved");
        repin_times.push(t);
        let (t, sha) = run_repin(&unkeyed);
        assert_eq!(sha, pinned.sha256, "nothing moved");
        unkeyed_times.push(t);
        pin_times.push(pin(root).0);
    }
    let one = &pinned.files[pinned.files.len() / 2].path;
    std::fs::write(root.join(one), "fn moved() {}\n").expect("write");
    let mut moved_times = Vec::with_capacity(REPS);
    for _ in 0..REPS {
        let (t, sha) = run_repin(&pinned);
        assert_ne!(sha, pinned.sha256, "one file moved");
        moved_times.push(t);
    }
    let (repin_ms, unkeyed_ms, pin_ms, moved_ms) = (
        median(repin_times),
        median(unkeyed_times),
        median(pin_times),
        median(moved_times),
    );
    writeln!(
        out,
        "drift check of that pin: nothing moved {repin_ms:.1} ms, one file moved {moved_ms:.1} ms; every file read again (the pin without its keys) {unkeyed_ms:.1} ms (ratios {:.3}x / {:.3}x); the pin itself {pin_ms:.1} ms",
        repin_ms / unkeyed_ms,
        moved_ms / unkeyed_ms
    )
    .expect("stdout");
}
