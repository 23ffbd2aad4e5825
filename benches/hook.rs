//! Whole-process latency of `arev hook stop`, side by side with what it replaces or must
//! not exceed, in alternating runs (docs/architecture.md §5.1, §14).
//!
//! `cargo bench --bench hook` (optimised build). Prints medians and ratios; it asserts
//! which path each case took (from the session log), never a time.
//!
//! Cases:
//! - not enabled (50-file repo): no session state → `arev hook stop` exits at once; beside a
//!   shell hook doing the same state lookup (`jq`, or `python3` when jq is missing);
//! - cached verdict (50-file repo; 20,000-file repo with one changed line; the same repo with
//!   5,000 changed files): the session opted in on a clean tree, the agent edited files
//!   afterwards, and a verdict for that diff is cached, so the hook finds the diff's sha,
//!   reads the verdict and approves (`approve` in the log). The sha comes from the
//!   working-tree key when the tree did not move since a Stop stored it; beside `git status`
//!   and `git diff HEAD | sha256sum` on the same tree (goal: no slower than `git status`).
// A benchmark is test code: a broken fixture may panic.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::print_stdout)]

mod common;

use common::{build_repo, git, median_ms, timed};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

const SESSION: &str = "bench-session";

fn stop_input(root: &Path) -> String {
    format!(
        r#"{{"session_id":"{SESSION}","cwd":"{}","hook_event_name":"Stop","stop_hook_active":false}}"#,
        root.display()
    )
}

/// Median of `runs` whole-process runs of each command, alternating; every one must exit 0
/// with an empty stdout when `quiet`.
fn side_by_side(cases: &[(&[&str], Option<&str>, bool)], cwd: &Path, runs: usize) -> Vec<f64> {
    let mut times = vec![vec![]; cases.len()];
    for _ in 0..runs {
        for (i, (argv, stdin, quiet)) in cases.iter().enumerate() {
            let (t, out) = timed(argv, cwd, &[], stdin.map(str::as_bytes));
            if *quiet {
                assert!(
                    out.stdout.is_empty(),
                    "{argv:?}: {}",
                    String::from_utf8_lossy(&out.stdout)
                );
            }
            times[i].push(t);
        }
    }
    times.iter().map(|t| median_ms(t)).collect()
}

/// The decision of the session's last logged Stop.
fn last_decision(root: &Path) -> String {
    let log = std::fs::read_to_string(root.join(".arev/sessions").join(SESSION).join("log.jsonl"))
        .unwrap_or_default();
    let last = log.lines().last().unwrap_or("{}");
    let v: serde_json::Value = serde_json::from_str(last).unwrap();
    v["decision"].as_str().unwrap_or("").to_owned()
}

/// Opt the session in (on the tree as it is), then run `edit`, then cache a clean verdict for
/// the diff the hook will see.
fn opt_in_edit_and_cache(root: &Path, edit: impl FnOnce()) {
    let arev = env!("CARGO_BIN_EXE_arev");
    let prompt = format!(
        r##"{{"session_id":"{SESSION}","cwd":"{}","prompt":"#arev bench"}}"##,
        root.display()
    );
    let mut p = Command::new(arev)
        .args(["hook", "prompt"])
        .current_dir(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    use std::io::Write;
    p.stdin
        .take()
        .unwrap()
        .write_all(prompt.as_bytes())
        .unwrap();
    assert!(p.wait().unwrap().success());
    edit();
    let store = arev::hook::SessionStore::new(root, SESSION);
    let state = store.load().unwrap().expect("enabled");
    let sha = arev::target::diff_sha(root, state.baseline_head.as_deref()).unwrap();
    assert_ne!(
        state.baseline_sha.as_deref(),
        Some(sha.as_str()),
        "the edit changed the diff"
    );
    store
        .save_verdict(&arev::hook::Verdict {
            sha,
            run_id: "bench".into(),
            report: "/dev/null".into(),
            critical: vec![],
            concerns: vec![],
            asides: vec![],
        })
        .unwrap();
    // The index refreshed once (a fresh clone's entries are all racily clean, which the
    // first `git status` rewrites), and the edits aged past the working-tree key's racy
    // window, as they are by the time an agent stops.
    git(root, &["status", "--porcelain"]);
    std::thread::sleep(Duration::from_millis(2500));
}

fn main() {
    let arev = env!("CARGO_BIN_EXE_arev");
    let stop_argv: &[&str] = &[arev, "hook", "stop"];
    let git_status: &[&str] = &["git", "status", "--porcelain"];
    let git_diff: &[&str] = &["sh", "-c", "git diff HEAD | sha256sum"];

    // --- 50-file repo.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    git(&root, &["init", "-q"]);
    std::fs::create_dir_all(root.join("src")).unwrap();
    for i in 0..50 {
        std::fs::write(
            root.join(format!("src/m{i}.rs")),
            format!("pub fn f{i}() -> u32 {{ {i} }}\n").repeat(40),
        )
        .unwrap();
    }
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-q", "-m", "init"]);
    let stop = stop_input(&root);
    let (tool, lookup_off) = if Command::new("jq").arg("--version").output().is_ok() {
        (
            "jq",
            r#"s=$(jq -r .session_id); f=".arev/sessions/$s/state.json"; [ -f "$f" ] || exit 0; jq -e .enabled "$f" >/dev/null || exit 0"#,
        )
    } else {
        (
            "python3",
            r#"python3 -c 'import json,sys,os; s=json.load(sys.stdin)["session_id"]; f=".arev/sessions/%s/state.json"%s; os.path.exists(f) and json.load(open(f))["enabled"]'"#,
        )
    };
    let off = side_by_side(
        &[
            (stop_argv, Some(&stop), true),
            (&["sh", "-c", lookup_off], Some(&stop), true),
        ],
        &root,
        200,
    );
    opt_in_edit_and_cache(&root, || {
        std::fs::write(root.join("src/m0.rs"), "pub fn changed() {}\n").unwrap();
    });
    let small = side_by_side(
        &[
            (stop_argv, Some(&stop), true),
            (git_status, None, false),
            (git_diff, None, false),
        ],
        &root,
        200,
    );
    assert_eq!(
        last_decision(&root),
        "approve",
        "the cached verdict was read"
    );

    // --- 20,000-file repo: one changed line, then 5,000 changed files.
    let big = tempfile::tempdir().unwrap();
    let broot = big.path().canonicalize().unwrap();
    let paths = build_repo(&broot, 200, 100);
    let bstop = stop_input(&broot);
    let edit_one = || {
        let p = broot.join(&paths[0]);
        let mut text = std::fs::read_to_string(&p).unwrap();
        text.push_str("// one changed line\n");
        std::fs::write(&p, text).unwrap();
    };
    opt_in_edit_and_cache(&broot, edit_one);
    let one = side_by_side(
        &[
            (stop_argv, Some(&bstop), true),
            (git_status, None, false),
            (git_diff, None, false),
        ],
        &broot,
        30,
    );
    assert_eq!(last_decision(&broot), "approve");
    opt_in_edit_and_cache(&broot, || {
        for p in paths.iter().step_by(4) {
            let p = broot.join(p);
            let mut text = std::fs::read_to_string(&p).unwrap();
            text.push_str("// reviewed change\n");
            std::fs::write(&p, text).unwrap();
        }
    });
    let many = side_by_side(
        &[
            (stop_argv, Some(&bstop), true),
            (git_status, None, false),
            (git_diff, None, false),
        ],
        &broot,
        30,
    );
    assert_eq!(last_decision(&broot), "approve");

    println!("arev hook stop, whole process, medians of alternating runs");
    println!(
        "not enabled (50 files, 200 runs): arev {:.2} ms, sh+{tool} {:.2} ms, ratio {:.2}x (goal < 5 ms)",
        off[0],
        off[1],
        off[0] / off[1]
    );
    println!(
        "{:<44} {:>9} {:>11} {:>14} {:>18}",
        "cached verdict", "arev", "git status", "git diff|sha", "arev / git status"
    );
    for (name, t) in [
        ("50 files, 1 changed (200 runs)", &small),
        ("20,000 files, 1 changed line (30 runs)", &one),
        ("20,000 files, 5,000 changed (30 runs)", &many),
    ] {
        println!(
            "{name:<44} {:>6.2} ms {:>8.2} ms {:>11.2} ms {:>17.2}x",
            t[0],
            t[1],
            t[2],
            t[0] / t[1]
        );
    }
    println!("goal: cached verdict no slower than git status (ratio <= 1.00)");
}
