//! Context-map benchmark (docs/architecture.md §5.3): the map of a diff in a 20,000-file
//! repository against the diff pin it follows — a small review (12 changed signatures whose
//! functions 300 unchanged files call) and the `diff` bench's 5,000-file diff — with the
//! map's bytes and references. The map must take less than the pin (docs/architecture.md §5.3).
//!
//! Run with `cargo bench --bench map`. Prints medians of a few alternating in-process runs
//! and the ratio map / pin.
// A benchmark is test code: a broken fixture may panic.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::print_stdout)]

mod common;

use arev::target::map::for_target;
use arev::target::{resolve, Excludes, PinnedTarget, TargetRequest};
use common::{build_repo, git, median};
use std::path::Path;
use std::time::{Duration, Instant};

const DIRS: usize = 200;
const FILES_PER_DIR: usize = 100;
const REPS: usize = 5;
/// Files whose `pub fn f<id>` signature the small diff changes.
const CHANGED: usize = 12;
/// Committed files that call one of them.
const CALLERS: usize = 300;

fn pin(root: &Path) -> (f64, PinnedTarget) {
    let req = TargetRequest {
        args: vec!["diff".to_owned()],
        base: None,
        base_tree: None,
        cwd: root.to_path_buf(),
        max_file_bytes: 1024 * 1024,
        excludes: Excludes::new(vec![], true),
    };
    let start = Instant::now();
    let t = resolve(&req).expect("resolve");
    (start.elapsed().as_secs_f64() * 1e3, t)
}

fn measure(root: &Path, label: &str) {
    let listed = git(root, &["ls-files"]);
    let files: Vec<&str> = listed.lines().collect();
    let (mut pins, mut maps) = (vec![], vec![]);
    let mut last = None;
    for _ in 0..REPS {
        let (p, t) = pin(root);
        pins.push(p);
        let start = Instant::now();
        let m = for_target(&t, &files, 1024 * 1024);
        maps.push(start.elapsed().as_secs_f64() * 1e3);
        if let Some(prev) = &last {
            assert_eq!(prev, &m.text, "the map is deterministic");
        }
        last = Some(m.text.clone());
        if pins.len() == REPS {
            println!(
                "{label}: {} files in scope, {} changed; map {} bytes, {} references, {} symbols",
                files.len(),
                t.files.len(),
                m.text.len(),
                m.references,
                m.symbols
            );
        }
    }
    let (p, m) = (median(&pins), median(&maps));
    println!(
        "  diff pin {p:8.1} ms   map {m:8.1} ms   ratio map / pin {:.2}x (goal < 1.00)",
        m / p
    );
}

fn main() {
    let dir = tempfile::TempDir::new().expect("tempdir");
    let root = dir.path().canonicalize().expect("canonical");
    let setup = Instant::now();
    let paths = build_repo(&root, DIRS, FILES_PER_DIR);
    // Unchanged callers: every 66th file calls one of the functions the diff changes.
    for (n, p) in paths
        .iter()
        .enumerate()
        .skip(7)
        .step_by(paths.len() / CALLERS)
        .take(CALLERS)
    {
        let full = root.join(p);
        let mut text = std::fs::read_to_string(&full).expect("read");
        let callee = (n % CHANGED) * 1000 + 100;
        text.push_str(&format!(
            "\npub fn call_{n}() -> u64 {{\n    f{callee}(1)\n}}\n"
        ));
        std::fs::write(&full, text).expect("write");
    }
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-q", "-m", "callers"]);
    std::fs::create_dir_all(root.join(".arev")).expect("mkdir");
    std::fs::write(root.join(".git/info/exclude"), ".arev/\n").expect("exclude");
    for k in 0..CHANGED {
        let id = k * 1000 + 100;
        let full = root.join(&paths[id]);
        let text = std::fs::read_to_string(&full).expect("read");
        let sig = format!("pub fn f{id}(x: u64) -> u64 {{");
        assert!(text.contains(&sig), "{}", paths[id]);
        std::fs::write(
            &full,
            text.replace(&sig, &format!("pub fn f{id}(x: u64, y: u64) -> u64 {{")),
        )
        .expect("write");
    }
    println!(
        "corpus: {} files, built in {:.1} s",
        paths.len(),
        setup.elapsed().as_secs_f64()
    );
    // Let the changes age past the stat pre-key's racy window; warm the page cache.
    std::thread::sleep(Duration::from_millis(2500));
    let _ = pin(&root);
    measure(&root, "small diff");
    // The diff bench's shape: every 4th file gets lines inserted (5,000 of 20,000).
    for (i, p) in paths.iter().enumerate().filter(|(i, _)| i % 4 == 1) {
        let full = root.join(p);
        let mut text = std::fs::read_to_string(&full).expect("read");
        text.push_str(&format!("// reviewed change {i}\n"));
        std::fs::write(&full, text).expect("write");
    }
    std::thread::sleep(Duration::from_millis(2500));
    let _ = pin(&root);
    measure(&root, "5,000-file diff");
}
