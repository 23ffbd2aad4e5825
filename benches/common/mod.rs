//! Shared by the benches: a deterministic Rust-looking corpus, git, whole-process timing,
//! medians and peak memory of a child process.
// Each bench uses a different subset.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// xorshift64*: deterministic content without a dependency.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const WORDS: &[&str] = &[
    "let", "value", "self", "count", "into", "match", "Some", "None", "return", "config", "items",
    "iter", "map", "collect", "buffer", "len", "push", "result", "error", "state",
];

/// A Rust-looking source file of 512–4096 bytes.
pub fn source(rng: &mut Rng, id: usize) -> String {
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

/// Run git in `dir` with a neutral identity; panics on failure.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=bench",
            "-c",
            "user.email=bench@example.invalid",
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `dirs × files_per_dir` source files under `src/`, committed; returns their paths.
pub fn build_repo(root: &Path, dirs: usize, files_per_dir: usize) -> Vec<String> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut paths = Vec::with_capacity(dirs * files_per_dir);
    for d in 0..dirs {
        let dir = root.join(format!("src/mod_{:02}/part_{:02}", d / 10, d % 10));
        std::fs::create_dir_all(&dir).expect("mkdir");
        for f in 0..files_per_dir {
            let rel = format!("src/mod_{:02}/part_{:02}/file_{f:03}.rs", d / 10, d % 10);
            std::fs::write(root.join(&rel), source(&mut rng, paths.len())).expect("write");
            paths.push(rel);
        }
    }
    git(root, &["init", "-q"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "bench corpus"]);
    // Flush the fresh corpus so write-back does not compete with the measurements.
    let _ = Command::new("sync").status();
    paths
}

/// Wall time and output of one whole process (`argv` in `cwd`, optional stdin).
pub fn timed(
    argv: &[&str],
    cwd: &Path,
    envs: &[(&str, &str)],
    stdin: Option<&[u8]>,
) -> (Duration, Output) {
    let start = Instant::now();
    let mut child = Command::new(argv[0])
        .args(&argv[1..])
        .current_dir(cwd)
        .envs(envs.iter().copied())
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    if let Some(input) = stdin {
        use std::io::Write;
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input)
            .expect("write stdin");
    }
    let out = child.wait_with_output().expect("wait");
    let elapsed = start.elapsed();
    assert!(
        out.status.success(),
        "{argv:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (elapsed, out)
}

/// Median in milliseconds.
pub fn median_ms(v: &[Duration]) -> f64 {
    let mut v = v.to_vec();
    v.sort();
    v[v.len() / 2].as_secs_f64() * 1e3
}

/// Median of plain numbers.
pub fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Peak resident set of this process so far, in KiB (`VmHWM` of /proc/self/status).
pub fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}
