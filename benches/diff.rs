//! Diff pin benchmark (docs/architecture.md §5.1): `arev run diff`'s pin of a 5,000-file
//! diff in a 20,000-file repository, side by side with `git diff HEAD | sha256sum`, and the
//! end-of-run drift check with the stat pre-key.
//!
//! Run with `cargo bench --bench diff`. Every case is a whole process (this bench re-runs
//! itself as the arev child), runs alternate, and the output gives medians, ratios, the
//! child's peak memory against the patch size, and whether arev's digest equals the one of
//! the documented plain-git command (README "Reproducing the pin with git").
// A benchmark is test code: a broken fixture may panic.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::print_stdout)]

mod common;

use arev::target::{repin, resolve, ArtefactContent, TargetKind, TargetRequest};
use common::{build_repo, git, median, median_ms, peak_rss_kib, timed};
use std::path::Path;
use std::time::{Duration, Instant};

const DIRS: usize = 200;
const FILES_PER_DIR: usize = 100;
/// Every CHANGE_EVERY-th file gets lines inserted (5,000 of 20,000).
const CHANGE_EVERY: usize = 4;
const REPS: usize = 7;
const CHILD: &str = "AREV_BENCH_DIFF_CHILD";
const GIT_DIFF: &str = "git diff HEAD | sha256sum";
/// The documented plain-git command for `diff.patch` (no skipped files), hashed.
const PLAIN_GIT: &str = r#"i=$(mktemp -u) && cp -p "$(git rev-parse --git-path index)" "$i" && GIT_INDEX_FILE="$i" git add -A && GIT_INDEX_FILE="$i" git diff-index --cached -p --full-index HEAD -- ':!.arev' | sha256sum; rm -f "$i""#;

/// The child: pin, copy the patch into a run dir, drift check; prints
/// `sha pin_ms repin_ms peak_kib patch_bytes`. `moved`: one pinned file changes before the
/// drift check.
fn child(root: &Path, moved: bool) {
    let req = TargetRequest {
        args: vec!["diff".to_owned()],
        base: None,
        base_tree: None,
        cwd: root.to_path_buf(),
        max_file_bytes: 1024 * 1024,
        // The default configuration's: lockfiles, generated and vendored files left out.
        excludes: arev::target::Excludes::new(vec![], true),
    };
    let start = Instant::now();
    let t = resolve(&req).expect("resolve");
    let art = t.artefact.as_ref().expect("artefact");
    let ArtefactContent::Patch(spool) = &art.content else {
        panic!("a diff is spooled")
    };
    let run = tempfile::tempdir_in(root.join(".arev")).expect("run dir");
    arev::store::copy_record(spool.path(), &run.path().join("diff.patch")).expect("copy");
    let pin = start.elapsed();
    assert_eq!(t.kind, TargetKind::Diff);
    if moved {
        let f = &t.files[t.files.len() / 2].path;
        let p = root.join(f);
        let mut text = std::fs::read_to_string(&p).expect("read");
        text.push_str("// moved during the review\n");
        std::fs::write(&p, text).expect("write");
    }
    let start = Instant::now();
    let sha = repin(&t).expect("repin");
    let repin_time = start.elapsed();
    assert_eq!(
        sha == t.sha256,
        !moved,
        "drift detected exactly when a file moved"
    );
    println!(
        "{} {} {} {} {}",
        t.sha256,
        pin.as_secs_f64() * 1e3,
        repin_time.as_secs_f64() * 1e3,
        peak_rss_kib(),
        art.len()
    );
}

fn change(root: &Path, paths: &[String]) -> (usize, usize) {
    let mut changed = 0;
    for (i, p) in paths.iter().enumerate() {
        let full = root.join(p);
        if i % CHANGE_EVERY == 0 {
            let text = std::fs::read_to_string(&full).expect("read");
            let mut out = String::with_capacity(text.len() + 400);
            for (n, line) in text.lines().enumerate() {
                out.push_str(line);
                out.push('\n');
                if n % 5 == 4 {
                    out.push_str("    // reviewed change\n");
                }
            }
            std::fs::write(&full, out).expect("write");
            changed += 1;
        } else if i % 400 == 1 {
            std::fs::remove_file(&full).expect("rm");
            changed += 1;
        }
    }
    for n in 0..100 {
        let p = root.join(format!("src/new/n{n:03}.rs"));
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, format!("pub fn new_{n}() {{}}\n").repeat(20)).expect("write");
        changed += 1;
    }
    (changed, paths.len())
}

fn run_child(root: &Path, moved: bool) -> (Duration, String, f64, f64, u64, u64) {
    let exe = std::env::current_exe().expect("exe");
    let exe = exe.to_str().expect("utf8");
    let mode = if moved { "moved" } else { "pin" };
    let (t, out) = timed(&[exe], root, &[(CHILD, mode)], None);
    let text = String::from_utf8(out.stdout).expect("utf8");
    let f: Vec<&str> = text.split_whitespace().collect();
    (
        t,
        f[0].to_owned(),
        f[1].parse().expect("ms"),
        f[2].parse().expect("ms"),
        f[3].parse().expect("kib"),
        f[4].parse().expect("bytes"),
    )
}

fn sh(root: &Path, script: &str) -> (Duration, String) {
    let (t, out) = timed(&["sh", "-c", script], root, &[], None);
    let text = String::from_utf8(out.stdout).expect("utf8");
    (t, text.split_whitespace().next().unwrap_or("").to_owned())
}

fn main() {
    if let Ok(mode) = std::env::var(CHILD) {
        child(&std::env::current_dir().expect("cwd"), mode == "moved");
        return;
    }
    let dir = tempfile::TempDir::new().expect("tempdir");
    let root = dir.path().canonicalize().expect("canonical");
    // AREV_BENCH_KEEP=1 keeps the corpus (for profiling the child in it).
    let dir = if std::env::var_os("AREV_BENCH_KEEP").is_some() {
        println!("corpus kept at {}", root.display());
        let _ = dir.keep();
        None
    } else {
        Some(dir)
    };
    let setup = Instant::now();
    let paths = build_repo(&root, DIRS, FILES_PER_DIR);
    let (changed, files) = change(&root, &paths);
    std::fs::create_dir_all(root.join(".arev")).expect("mkdir");
    std::fs::write(root.join(".git/info/exclude"), ".arev/\n").expect("exclude");
    let stat = git(&root, &["diff", "HEAD", "--shortstat"]);
    println!(
        "corpus: {files} files, {changed} changed or new ({}); built in {:.1} s",
        stat.trim(),
        setup.elapsed().as_secs_f64()
    );
    // Let the changes age past the stat pre-key's racy window, as edits made before a
    // review do; then warm the page cache and both paths.
    std::thread::sleep(Duration::from_millis(2500));
    let (_, arev_sha, ..) = run_child(&root, false);
    let (_, git_sha) = sh(&root, GIT_DIFF);
    let (_, plain_sha) = sh(&root, PLAIN_GIT);

    let (mut arev_t, mut git_t, mut plain_t) = (vec![], vec![], vec![]);
    let (mut pin_ms, mut repin_ms, mut peak, mut bytes) = (vec![], vec![], 0, 0);
    let mut same = true;
    for _ in 0..REPS {
        let (t, sha, p, r, kib, len) = run_child(&root, false);
        same &= sha == arev_sha;
        arev_t.push(t);
        pin_ms.push(p);
        repin_ms.push(r);
        peak = peak.max(kib);
        bytes = len;
        let (t, _) = sh(&root, GIT_DIFF);
        git_t.push(t);
        let (t, sha) = sh(&root, PLAIN_GIT);
        same &= sha == plain_sha;
        plain_t.push(t);
    }
    let (a, g, p) = (median_ms(&arev_t), median_ms(&git_t), median_ms(&plain_t));
    println!(
        "patch: {:.1} MiB; arev peak RSS {:.1} MiB",
        bytes as f64 / 1048576.0,
        peak as f64 / 1024.0
    );
    println!("whole process, median of {REPS} alternating runs:");
    println!(
        "  arev pin + run dir + drift check     {a:8.1} ms  (pin {:.1} ms, drift check {:.2} ms)",
        median(&pin_ms),
        median(&repin_ms)
    );
    println!("  {GIT_DIFF:<36} {g:8.1} ms");
    println!("  plain-git reproduction | sha256sum   {p:8.1} ms");
    println!("ratio arev / git diff: {:.2}x (goal <= 1.00)", a / g);
    println!(
        "digest equals the plain-git reproduction: {} (arev {arev_sha}, git {plain_sha}; `git diff HEAD` differs by design: {git_sha})",
        if same && arev_sha == plain_sha { "yes" } else { "NO" }
    );

    // One pinned file moves during the review: only it is re-rendered.
    let mut moved_ms = vec![];
    for _ in 0..3 {
        let (_, _, _, r, _, _) = run_child(&root, true);
        moved_ms.push(r);
        git(&root, &["checkout", "-q", "--", "."]);
        let _ = change(&root, &paths);
        std::thread::sleep(Duration::from_millis(2500));
    }
    println!(
        "drift check with one moved file: median {:.2} ms (full re-pin: the pin itself)",
        median(&moved_ms)
    );
    drop(dir);
}
