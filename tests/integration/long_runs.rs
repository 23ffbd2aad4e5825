//! Long reviews (docs/architecture.md §4.4), at real speed: `arev run --background` detaches
//! (its caller returns while the agents still work; the run finishes on its own and records
//! its exit code), `--wait` prints the report when it comes in time and the run id when it
//! does not (exit 4), `arev status` / `arev result` / `arev cancel` on running, finished,
//! cancelled and abandoned runs, and bad input still failing before anything detaches.

use crate::harness::{finding, ruling, Run, TestRepo};
use crate::interrupt::{assert_all_gone, pid_dir, recorded, wait_recorded};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// One round: an Enthusiast that finds F1 (high) after `delay_ms`, a Judge that confirms it.
fn one_finding(delay_ms: u64) -> Value {
    json!({"steps": [
        {"role": "enthusiast", "round": 1, "delay_ms": delay_ms,
         "answer": {"findings": [finding("F1", "src/lib.rs", 2, "high", "error-handling")]}},
        {"role": "judge", "round": 1, "answer": {
            "rulings": [ruling("F1", "src/lib.rs", 2, "high", "enthusiast")],
            "summary": "1 confirmed", "convergence": false, "next_round_model": null}},
    ]})
}

fn read_json(p: &Path) -> Option<Value> {
    serde_json::from_str(&std::fs::read_to_string(p).ok()?).ok()
}

/// The value of `key` in the `key   value` lines arev prints for a started run.
fn field(stdout: &str, key: &str) -> String {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix(key).map(|v| v.trim().to_string()))
        .unwrap_or_else(|| panic!("no `{key}` line in:\n{stdout}"))
}

/// Wait until the run in `dir` has recorded its exit code; its meta.json.
fn wait_exit_code(dir: &Path, within: Duration) -> Value {
    let deadline = Instant::now() + within;
    loop {
        if let Some(m) = read_json(&dir.join("meta.json")) {
            if !m["exit_code"].is_null() {
                return m;
            }
        }
        assert!(
            Instant::now() < deadline,
            "{}: no exit code within {within:?}",
            dir.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Fields 5 and 6 of `/proc/<pid>/stat`: (process group, session).
fn group_and_session(pid: i64) -> (i64, i64) {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let (_, rest) = stat.rsplit_once(')').unwrap();
    let f: Vec<i64> = rest
        .split_whitespace()
        .skip(2)
        .take(2)
        .map(|v| v.parse().unwrap())
        .collect();
    (f[0], f[1])
}

fn alive(pid: i64) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        s.rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z'))
    })
}

/// `arev run src/lib.rs --background <extra>` with `script`; the caller's result.
fn start(repo: &TestRepo, extra: &[&str], script: Value, pids: Option<&Path>) -> Run {
    let mut args = vec!["run", "src/lib.rs", "--max-rounds", "1", "--background"];
    args.extend_from_slice(extra);
    let mut a = repo.arev().args(&args).script(script);
    if let Some(p) = pids {
        a = a.env("AREV_FAKE_PIDS", p.to_str().unwrap());
    }
    a.run()
}

/// A follow-up command while a background run may still dispatch agents: with the same
/// script (the harness rewrites the script file on every invocation).
fn follow(repo: &TestRepo, args: &[&str], script: &Value) -> Run {
    repo.arev().args(args).script(script.clone()).run()
}

#[test]
fn a_background_run_outlives_its_caller_and_records_its_exit_code() {
    let repo = TestRepo::new();
    let pids = pid_dir(&repo);
    let script = one_finding(3000);
    let caller = start(&repo, &[], script.clone(), Some(&pids));
    // The caller is back (its pipes closed) while the Enthusiast still works.
    caller.assert_code(0);
    assert!(
        caller.elapsed < Duration::from_millis(2500),
        "{:?}",
        caller.elapsed
    );
    assert!(
        caller
            .stdout
            .starts_with("arev: the review runs in the background."),
        "{}",
        caller.stdout
    );
    let id = field(&caller.stdout, "run id");
    let dir = PathBuf::from(field(&caller.stdout, "run dir"));
    assert_eq!(dir, caller.run_dir());
    assert!(dir.ends_with(&id));
    assert!(
        caller.stdout.contains(&format!("arev result {id}")),
        "{}",
        caller.stdout
    );
    let meta = read_json(&dir.join("meta.json")).unwrap();
    assert_eq!(meta["status"], "running");
    assert_eq!(meta["exit_code"], Value::Null);
    // The detached process: a session of its own, not the test's.
    let pid = meta["process"]["pid"].as_i64().unwrap();
    assert!(alive(pid), "the run's process is gone");
    // The detached process leads a session and a process group of its own: the caller's
    // terminal, its Ctrl-C and a kill of its process group do not reach it.
    assert_eq!(group_and_session(pid), (pid, pid));
    assert_ne!(group_and_session(std::process::id() as i64).1, pid);
    wait_recorded(&pids, 1, 0);
    // progress.json may lag the run by up to 200 ms (coalesced writes).
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    let s = loop {
        let s = follow(&repo, &["status", &id], &script);
        s.assert_code(0);
        if s.stdout.contains("status    running — round 1 of 1")
            || std::time::Instant::now() > deadline
        {
            break s;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(
        s.stdout.contains("status    running — round 1 of 1"),
        "{}",
        s.stdout
    );
    assert!(s.stdout.contains(&format!("pid {pid}")), "{}", s.stdout);

    // It finishes on its own, exactly like a run in the foreground.
    let meta = wait_exit_code(&dir, Duration::from_secs(60));
    assert_eq!(meta["status"], "complete", "{meta}");
    assert_eq!(meta["exit_code"], 1, "a confirmed high finding");
    let report = read_json(&dir.join("report.json")).unwrap();
    assert_eq!(report["confirmed"][0]["file"], "src/lib.rs");
    assert!(dir.join("report.md").is_file());
    assert!(
        dir.join("arev.log").is_file(),
        "its stderr goes to the run dir"
    );
    assert_all_gone(&recorded(&pids), "after the background run");
    let s = follow(&repo, &["status", &id], &script);
    assert!(s.stdout.contains("; 1 confirmed (1 high)"), "{}", s.stdout);
    assert!(s.stdout.contains("exit code 1"), "{}", s.stdout);
}

#[test]
fn wait_prints_the_report_when_it_comes_in_time() {
    let repo = TestRepo::new();
    let run = start(
        &repo,
        &["--wait", "60s", "--format", "json"],
        one_finding(300),
        None,
    );
    run.assert_code(1);
    let report: Value =
        serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.stdout));
    assert_eq!(report["status"], "complete");
    assert_eq!(report["confirmed"][0]["severity"], "high");
    assert!(run.elapsed < Duration::from_secs(30), "{:?}", run.elapsed);
    assert_eq!(run.meta()["exit_code"], 1);
    // A foreground-like --fail-on: never → exit 0.
    let run = TestRepo::new();
    let r = start(
        &run,
        &["--wait", "60s", "--fail-on", "never"],
        one_finding(0),
        None,
    );
    r.assert_code(0);
    assert!(r.stdout.contains("src/lib.rs:2"), "{}", r.stdout);
}

#[test]
fn wait_gives_the_run_id_when_the_verdict_is_late_and_result_follows_up() {
    let repo = TestRepo::new();
    let script = one_finding(4000);
    let run = start(
        &repo,
        &["--wait", "1s", "--format", "markdown"],
        script.clone(),
        None,
    );
    run.assert_code(4);
    assert!(run.elapsed < Duration::from_secs(4), "{:?}", run.elapsed);
    assert!(
        run.stdout
            .starts_with("arev: no verdict within 1s; the review goes on in the background."),
        "{}",
        run.stdout
    );
    let id = field(&run.stdout, "run id");
    // Still going: its status, exit 4 (and the same for the newest run by default).
    for args in [vec!["result", id.as_str()], vec!["result"]] {
        let r = follow(&repo, &args, &script);
        r.assert_code(4);
        assert!(r.stdout.contains("status    running"), "{}", r.stdout);
        assert!(
            r.stdout.contains(&format!("arev cancel {id}")),
            "{}",
            r.stdout
        );
    }
    wait_exit_code(&run.run_dir(), Duration::from_secs(60));
    // Done: the report in any format, the verdict as exit code.
    let r = repo.arev().args(&["result", &id, "--format", "json"]).run();
    r.assert_code(1);
    let report: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(report["confirmed"][0]["id"], "F1");
    let r = repo.arev().args(&["result", "--format", "markdown"]).run();
    r.assert_code(1);
    assert_eq!(
        r.stdout,
        std::fs::read_to_string(run.run_dir().join("report.md")).unwrap()
    );
    let out = repo.scratch.join("r.sarif");
    repo.arev()
        .args(&[
            "result",
            &id,
            "--fail-on",
            "critical",
            "--sarif",
            out.to_str().unwrap(),
        ])
        .run()
        .assert_code(0);
    assert!(read_json(&out).unwrap()["runs"].is_array());
    let r = repo.arev().args(&["result", "nope"]).run();
    r.assert_code(2);
    assert!(r.stderr.contains("no run `nope`"), "{}", r.stderr);
}

#[test]
fn bad_input_fails_before_anything_detaches() {
    let repo = TestRepo::new();
    let run = repo
        .arev()
        .args(&["run", "nosuch.rs", "--background", "--wait", "5s"])
        .run();
    run.assert_code(2);
    assert!(run.stderr.contains("nosuch.rs"), "{}", run.stderr);
    assert_eq!(run.stderr.lines().count(), 1, "one line: {}", run.stderr);
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    assert!(run.run_dirs().is_empty());
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs", "--wait", "5s"])
        .run();
    run.assert_code(2);
    let none = repo.arev().args(&["status"]).run();
    none.assert_code(2);
    assert!(none.stderr.contains("no run"), "{}", none.stderr);
}

#[test]
fn cancel_stops_the_run_and_every_agent() {
    let repo = TestRepo::new();
    let pids = pid_dir(&repo);
    let script = json!({"steps": [
        {"role": "enthusiast", "ignore_sigterm": true, "setsid_grandchild": true},
        {"role": "adversary", "hang": true},
    ]});
    let caller = repo
        .arev()
        .args(&["run", "src/lib.rs", "--background"])
        .env("AREV_AGENT_GRACE", "300ms")
        .env("AREV_FAKE_PIDS", pids.to_str().unwrap())
        .script(script)
        .without_ptrace()
        .run();
    caller.assert_code(0);
    wait_recorded(&pids, 2, 1);
    // arev is non-dumpable: to another arev of the same (ordinary) user its
    // /proc/<pid>/exe is denied. Still seen running, and cancelled.
    let s = repo.arev().args(&["status"]).without_ptrace().run();
    s.assert_code(0);
    assert!(
        s.stdout.contains("status    running"),
        "{}{}",
        s.stdout,
        s.stderr
    );
    let started = Instant::now();
    let c = repo.arev().args(&["cancel"]).without_ptrace().run();
    c.assert_code(0);
    assert!(
        c.stdout.contains("cancelled") && c.stdout.contains("status interrupted"),
        "{}",
        c.stdout
    );
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    let meta = caller.meta();
    assert_eq!(meta["status"], "interrupted");
    assert_eq!(meta["exit_code"], 143, "SIGTERM");
    assert!(!alive(meta["process"]["pid"].as_i64().unwrap()));
    assert_all_gone(&recorded(&pids), "after arev cancel");
    // Idempotent; and the interrupted run's report has no verdict (130).
    let again = repo.arev().args(&["cancel"]).run();
    again.assert_code(0);
    assert!(
        again.stdout.contains("is not running (status interrupted)"),
        "{}",
        again.stdout
    );
    repo.arev().args(&["result"]).run().assert_code(130);
}

#[test]
fn a_sigkilled_background_run_is_abandoned() {
    let repo = TestRepo::new();
    let pids = pid_dir(&repo);
    let caller = start(&repo, &[], one_finding(20_000), Some(&pids));
    caller.assert_code(0);
    wait_recorded(&pids, 1, 0);
    let pid = caller.meta()["process"]["pid"].as_i64().unwrap();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while alive(pid) {
        assert!(Instant::now() < deadline, "pid {pid} survived SIGKILL");
        std::thread::sleep(Duration::from_millis(20));
    }
    let s = repo.arev().args(&["status"]).run();
    s.assert_code(0);
    assert!(
        s.stdout
            .contains(&format!("abandoned — its arev process (pid {pid}) is gone")),
        "{}",
        s.stdout
    );
    assert!(
        s.stdout.contains("next      arev run src/lib.rs"),
        "{}",
        s.stdout
    );
    let r = repo.arev().args(&["result"]).run();
    r.assert_code(3);
    assert!(r.stderr.contains("abandoned"), "{}", r.stderr);
    let c = repo.arev().args(&["cancel"]).run();
    c.assert_code(0);
    assert!(c.stdout.contains("status abandoned"), "{}", c.stdout);
    let runs = repo.arev().args(&["runs"]).run();
    assert!(runs.stdout.contains("abandoned"), "{}", runs.stdout);
    // SIGKILL took arev before it could stop its agents: clean them up.
    for (_, p) in recorded(&pids) {
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(p as i32),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
}

#[test]
fn an_iterate_run_detaches_too() {
    let repo = TestRepo::new();
    let run = start(
        &repo,
        &["--iterate", "--wait", "60s", "--format", "json"],
        one_finding(0),
        None,
    );
    run.assert_code(1);
    let report: Value =
        serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.stdout));
    assert_eq!(
        report["iterate"]["stop_reason"], "no-progress",
        "{}",
        run.stderr
    );
    // The child's log is relayed: where the fixes are.
    assert!(
        run.stderr.contains("iterate stopped: no-progress"),
        "{}",
        run.stderr
    );
    let meta = run.meta();
    assert_eq!(meta["exit_code"], 1);
    assert!(meta["iterate"]["branch"].is_string());
}
