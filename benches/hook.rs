//! Whole-process latency of `arev hook stop`, side by side with a shell hook doing the same
//! state lookup (`jq`, or `python3` when jq is missing — the output says which).
//!
//! `cargo bench --features fake-agent --bench hook` (optimised build). Prints medians and
//! ratios; it asserts nothing about time (goals: not enabled < 5 ms, cached verdict < 20 ms).
//!
//! Cases, each on a temp git repo with one uncommitted file:
//! - not enabled: no session state → `arev hook stop` exits 0 with no output;
//! - cached verdict: the session opted in (`arev hook prompt` with `#arev`, which snapshots
//!   the working tree), changed one more file, and one Stop reviewed that diff (the fake
//!   agent, clean), which left its verdict in the verdict cache; the session state is put
//!   back to before that Stop before each run → `arev hook stop` snapshots the working tree,
//!   identifies the diff against the baseline snapshot, resolves the review's inputs, finds
//!   the verdict in the cache, approves (silently: not fresh), moves the baseline, prints
//!   nothing. The shell equivalent reads `state.json` with jq, hashes `git diff <baseline
//!   tree>` and tests for a file named by it (a weaker lookup: no untracked files, no
//!   review inputs, no chain update).
// A benchmark is test code: a broken fixture may panic.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::print_stdout)]

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const RUNS: usize = 200;

/// Environment variables set for every process.
type Env = Vec<(String, String)>;
const SESSION: &str = "bench-session";

fn git(root: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .args(args)
        .current_dir(root)
        .output()
        .expect("git")
        .status
        .success();
    assert!(ok, "git {args:?}");
}

/// Run `argv` in `cwd` with `env` and `stdin`; its output.
fn feed(argv: &[&str], stdin: &str, cwd: &Path, env: &Env) -> Output {
    let mut child = Command::new(argv[0])
        .args(&argv[1..])
        .envs(env.iter().map(|(k, v)| (k, v)))
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("write stdin");
    child.wait_with_output().expect("wait")
}

/// Median wall time of `argv` with `stdin`, which must exit 0 with an empty stdout;
/// `before` runs ahead of each (untimed).
fn median(argv: &[&str], stdin: &str, cwd: &Path, env: &Env, before: &dyn Fn()) -> Duration {
    let mut times = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        before();
        let start = Instant::now();
        let out = feed(argv, stdin, cwd, env);
        times.push(start.elapsed());
        assert!(
            out.status.success() && out.stdout.is_empty(),
            "{argv:?}: {} {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    times.sort();
    times[RUNS / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

fn main() {
    let arev = env!("CARGO_BIN_EXE_arev");
    let dir = tempfile::tempdir().expect("tempdir");
    let tmp = dir.path().canonicalize().expect("canonical");
    let root = tmp.join("repo");
    std::fs::create_dir_all(&root).expect("mkdir repo");
    git(&root, &["init", "-q", "-b", "main"]);
    git(&root, &["config", "user.email", "b@example.com"]);
    git(&root, &["config", "user.name", "B"]);
    std::fs::create_dir_all(root.join("src")).expect("mkdir");
    for i in 0..50 {
        std::fs::write(
            root.join(format!("src/m{i}.rs")),
            format!("pub fn f{i}() -> u32 {{ {i} }}\n").repeat(40),
        )
        .expect("write");
    }
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-q", "-m", "init"]);
    std::fs::write(root.join("src/m0.rs"), "pub fn changed() {}\n").expect("write");

    let stop = format!(
        r#"{{"session_id":"{SESSION}","cwd":"{}","hook_event_name":"Stop","stop_hook_active":false}}"#,
        root.display()
    );
    let (tool, lookup_off, lookup_cached) = if Command::new("jq").arg("--version").output().is_ok()
    {
        (
            "jq",
            r#"s=$(jq -r .session_id); f=".arev/sessions/$s/state.json"; [ -f "$f" ] || exit 0; jq -e .enabled "$f" >/dev/null || exit 0"#,
            r#"s=$(jq -r .session_id); d=".arev/sessions/$s"; [ -f "$d/state.json" ] || exit 0; b=$(jq -r .baseline_tree "$d/state.json"); sha=$(git diff "$b" | sha256sum | cut -d' ' -f1); [ -f "$d/verdicts/$sha.json" ] && exit 0; exit 0"#,
        )
    } else {
        (
            "python3",
            r#"python3 -c 'import json,sys,os; s=json.load(sys.stdin)["session_id"]; f=".arev/sessions/%s/state.json"%s; os.path.exists(f) and json.load(open(f))["enabled"]'"#,
            r#"python3 -c 'import json,sys,os,subprocess,hashlib; s=json.load(sys.stdin)["session_id"]; d=".arev/sessions/"+s; st=json.load(open(d+"/state.json")); h=hashlib.sha256(subprocess.run(["git","diff",st["baseline_tree"]],capture_output=True).stdout).hexdigest(); os.path.exists(d+"/verdicts/"+h+".json")'"#,
        )
    };

    // The fake agent as `claude`, the verdict cache in the temp dir.
    let bin = tmp.join("bin");
    std::fs::create_dir_all(&bin).expect("mkdir bin");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_arev-fake-agent"), bin.join("claude"))
        .expect("symlink");
    let env: Env = vec![
        (
            "PATH".into(),
            format!(
                "{}:{}",
                bin.display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        ),
        (
            "XDG_CACHE_HOME".into(),
            tmp.join("cache").display().to_string(),
        ),
    ];
    let nothing = || {};

    // Not enabled.
    let arev_off = median(&[arev, "hook", "stop"], &stop, &root, &env, &nothing);
    let sh_off = median(&["sh", "-c", lookup_off], &stop, &root, &env, &nothing);

    // Opt in, then cache a clean verdict for the current diff.
    let prompt = format!(
        r##"{{"session_id":"{SESSION}","cwd":"{}","prompt":"#arev bench"}}"##,
        root.display()
    );
    assert!(feed(&[arev, "hook", "prompt"], &prompt, &root, &env)
        .status
        .success());
    let store = arev::hook::SessionStore::new(&root, SESSION);
    // The session's own change (the uncommitted file above predates the baseline).
    std::fs::write(root.join("src/m1.rs"), "pub fn by_the_agent() {}\n").expect("write");
    let before_stop = std::fs::read(store.state_path()).expect("state.json");
    // One Stop reviews the diff (clean): its verdict goes into the verdict cache.
    let out = feed(&[arev, "hook", "stop"], &stop, &root, &env);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("no concerns"),
        "the seeding stop reviewed and approved: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    let reset = || std::fs::write(store.state_path(), &before_stop).expect("reset state");
    let arev_cached = median(&[arev, "hook", "stop"], &stop, &root, &env, &reset);
    let sh_cached = median(&["sh", "-c", lookup_cached], &stop, &root, &env, &reset);

    println!("arev hook stop, whole process, median of {RUNS} runs (50-file repo, 1 changed file)");
    println!(
        "{:<28} {:>10} {:>14} {:>7}",
        "case",
        "arev",
        format!("sh+{tool}"),
        "ratio"
    );
    for (name, a, s, goal) in [
        ("not enabled (goal < 5 ms)", arev_off, sh_off, 5.0),
        (
            "cached verdict (goal < 20 ms)",
            arev_cached,
            sh_cached,
            20.0,
        ),
    ] {
        println!(
            "{name:<28} {:>10} {:>14} {:>6.2}x  {}",
            ms(a),
            ms(s),
            a.as_secs_f64() / s.as_secs_f64(),
            if a.as_secs_f64() * 1e3 < goal {
                "goal met"
            } else {
                "goal MISSED"
            }
        );
    }
}
