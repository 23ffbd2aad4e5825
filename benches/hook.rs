//! Whole-process latency of `arev hook stop`, side by side with what it replaces or must
//! not exceed, in alternating runs (docs/architecture.md §5.1, §14).
//!
//! `cargo bench --features fake-agent --bench hook` (optimised build). Prints medians and ratios; it asserts
//! which path each case took (from the session log), never a time.
//!
//! Cases:
//! - not enabled (50-file repo): no session state → `arev hook stop` exits at once; beside a
//!   shell hook doing the same state lookup (`jq`, or `python3` when jq is missing);
//! - cached verdict (50-file repo; 20,000-file repo with one changed line; the same repo with
//!   5,000 changed files): the session opted in on a clean tree (`arev hook prompt`, which
//!   snapshots it as the baseline), the agent edited files afterwards, and one Stop already
//!   ran on this tree: it rendered the diff, stored the working tree's key, and reviewed the
//!   diff (the fake agent, clean), which left its verdict in the verdict cache. So the hook
//!   finds the diff by the key (`"diff":"keyed"` in the log), finds the verdict in the
//!   cache and approves (`approve`). The session state is put back
//!   before every run (an approval moves the baseline), outside the timing. Beside
//!   `git status` and `git diff HEAD | sha256sum` on the same tree (goal: no slower than
//!   `git status`).
// A benchmark is test code: a broken fixture may panic.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::print_stdout)]
// Its `main` runs the bench's scenarios in order: the 100-line rule is for `src/`.
#![allow(clippy::too_many_lines)]

mod common;

use common::{build_repo, git, median_ms, timed};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

const SESSION: &str = "bench-session";

/// The environment of every process: the fake agent as `claude` first on PATH, the verdict
/// cache in a temp dir (set up once by `main`).
static ENV: std::sync::OnceLock<Vec<(String, String)>> = std::sync::OnceLock::new();

fn env() -> &'static [(String, String)] {
    ENV.get().map_or(&[], Vec::as_slice)
}

fn stop_input(root: &Path) -> String {
    format!(
        r#"{{"session_id":"{SESSION}","cwd":"{}","hook_event_name":"Stop","stop_hook_active":false}}"#,
        root.display()
    )
}

/// Median of `runs` whole-process runs of each command, alternating; every one must exit 0
/// with an empty stdout when `quiet`. `reset` runs before each round, untimed.
fn side_by_side(
    cases: &[(&[&str], Option<&str>, bool)],
    cwd: &Path,
    runs: usize,
    reset: &dyn Fn(),
) -> Vec<f64> {
    let mut times = vec![vec![]; cases.len()];
    for _ in 0..runs {
        reset();
        for (i, (argv, stdin, quiet)) in cases.iter().enumerate() {
            let envs: Vec<(&str, &str)> = env()
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect();
            let (t, out) = timed(argv, cwd, &envs, stdin.map(str::as_bytes));
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

/// The session's logged Stops: `(decision, diff path)` of each.
fn logged_stops(root: &Path) -> Vec<(String, String)> {
    let log = std::fs::read_to_string(root.join(".arev/sessions").join(SESSION).join("log.jsonl"))
        .unwrap_or_default();
    log.lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v["event"] == "stop")
        .map(|v| {
            let s = |k: &str| v[k].as_str().unwrap_or("").to_owned();
            (s("decision"), s("diff"))
        })
        .collect()
}

/// Assert that the Stops logged from the `from`-th on all took the named path.
fn assert_path(root: &Path, from: usize, decision: &str, diff: &str) {
    let stops = logged_stops(root);
    assert!(stops.len() > from, "no stop was logged");
    for (i, (d, p)) in stops[from..].iter().enumerate() {
        assert_eq!(
            (d.as_str(), p.as_str()),
            (decision, diff),
            "stop {} took another path",
            from + i
        );
    }
}

/// Opt the session in (on the tree as it is), then run `edit`, then cache a clean verdict for
/// the diff the hook will see, age the edits, and run one Stop (which renders the diff and
/// stores the key). Returns a reset putting the session state back as it was before that
/// Stop, and the number of Stops logged so far.
fn opt_in_edit_and_cache(root: &Path, edit: impl FnOnce()) -> (impl Fn(), usize) {
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
    // The index refreshed once (a fresh clone's entries are all racily clean, which the
    // first `git status` rewrites), and the edits aged past the working-tree key's racy
    // window, as they are by the time an agent stops.
    git(root, &["status", "--porcelain"]);
    std::thread::sleep(Duration::from_millis(2500));
    let saved = std::fs::read(store.state_path()).unwrap();
    let state_path = store.state_path();
    let reset = move || std::fs::write(&state_path, &saved).unwrap();
    let before = logged_stops(root).len();
    // One Stop reviews the diff (the fake agent, clean): its verdict goes into the verdict
    // cache, the working tree's key into the session's key cache.
    let out = Command::new(env!("CARGO_BIN_EXE_arev"))
        .args(["hook", "stop"])
        .envs(env().iter().map(|(k, v)| (k, v)))
        .current_dir(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            c.stdin
                .take()
                .unwrap()
                .write_all(stop_input(root).as_bytes())?;
            c.wait_with_output()
        })
        .unwrap();
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stdout).contains("no concerns"),
        "the seeding stop reviewed and approved: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_path(root, before, "approve", "rendered");
    reset();
    (reset, before + 1)
}

/// The cached-verdict case on `root` after `edit` (see the module note): medians of `runs`
/// alternating runs of `arev hook stop`, `git status` and `git diff HEAD | sha256sum`, with
/// every Stop checked to have taken the keyed path to an approval. The session state is as
/// before the last Stop when it returns.
fn cached_case(root: &Path, runs: usize, edit: impl FnOnce()) -> Vec<f64> {
    let stop = stop_input(root);
    let (reset, from) = opt_in_edit_and_cache(root, edit);
    let times = side_by_side(
        &[
            (
                &[env!("CARGO_BIN_EXE_arev"), "hook", "stop"],
                Some(&stop),
                true,
            ),
            (&["git", "status", "--porcelain"], None, false),
            (&["sh", "-c", "git diff HEAD | sha256sum"], None, false),
        ],
        root,
        runs,
        &reset,
    );
    assert_path(root, from, "approve", "keyed");
    reset();
    times
}

fn main() {
    let arev = env!("CARGO_BIN_EXE_arev");
    let tools = tempfile::tempdir().unwrap();
    let bin = tools.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_arev-fake-agent"), bin.join("claude")).unwrap();
    let path = std::env::var("PATH").unwrap_or_default();
    let _ = ENV.set(vec![
        ("PATH".into(), format!("{}:{path}", bin.display())),
        (
            "XDG_CACHE_HOME".into(),
            tools.path().join("cache").display().to_string(),
        ),
    ]);
    let stop_argv: &[&str] = &[arev, "hook", "stop"];

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
        &|| {},
    );
    let small = cached_case(&root, 200, || {
        std::fs::write(root.join("src/m0.rs"), "pub fn changed() {}\n").unwrap();
    });

    // --- 20,000-file repo: one changed line, then 5,000 changed files.
    let big = tempfile::tempdir().unwrap();
    let broot = big.path().canonicalize().unwrap();
    // AREV_BENCH_KEEP=1 keeps this repo as it is after the one-changed-line case (for
    // profiling `arev hook stop` in it; put `state.json.kept` back as `state.json` first)
    // and ends the bench there.
    let keep = std::env::var_os("AREV_BENCH_KEEP").is_some();
    let _big = if keep {
        println!("20,000-file repo kept at {}", broot.display());
        let _ = big.keep();
        None
    } else {
        Some(big)
    };
    let paths = build_repo(&broot, 200, 100);
    let edit_one = || {
        let p = broot.join(&paths[0]);
        let mut text = std::fs::read_to_string(&p).unwrap();
        text.push_str("// one changed line\n");
        std::fs::write(&p, text).unwrap();
    };
    let one = cached_case(&broot, 30, edit_one);
    if keep {
        let state = arev::hook::SessionStore::new(&broot, SESSION).state_path();
        std::fs::copy(&state, state.with_extension("json.kept")).unwrap();
        println!(
            "one changed line: arev {:.2} ms, git status {:.2} ms, git diff|sha {:.2} ms",
            one[0], one[1], one[2]
        );
        return;
    }
    let many = cached_case(&broot, 30, || {
        for p in paths.iter().step_by(4) {
            let p = broot.join(p);
            let mut text = std::fs::read_to_string(&p).unwrap();
            text.push_str("// reviewed change\n");
            std::fs::write(&p, text).unwrap();
        }
    });

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
