//! Signals and leftover processes, at real speed: SIGINT, SIGTERM and SIGHUP each stop every
//! agent and record `interrupted` (exit 130/143/129); nothing an agent starts outlives its
//! dispatch (a `setsid` grandchild ignoring SIGTERM included); agents die with arev even when
//! it is SIGKILLed; a killed Stop hook takes its review with it; `--verify` stays bounded.
//! Every process the fake agent starts is recorded in `AREV_FAKE_PIDS` and checked.

use crate::harness::TestRepo;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// How long processes may take to disappear once they should be gone.
const GONE_WITHIN: Duration = Duration::from_secs(5);

/// Alive = its `/proc` entry exists and is not a zombie (a zombie has run its course).
fn alive(pid: i64) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        s.rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z'))
    })
}

/// The parent pid of a live process.
fn parent_of(pid: i64) -> i64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let (_, rest) = stat.rsplit_once(')').unwrap();
    rest.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// The directory the fake agent records its processes in, and the env pair that says so.
pub(crate) fn pid_dir(repo: &TestRepo) -> PathBuf {
    let d = repo.scratch.join("pids");
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `(kind, pid)` of every process the fake recorded (`agent`, `grandchild`, …).
pub(crate) fn recorded(dir: &Path) -> Vec<(String, i64)> {
    let mut v: Vec<(String, i64)> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let (kind, pid) = name.rsplit_once('-')?;
            Some((kind.to_string(), pid.parse().ok()?))
        })
        .collect();
    v.sort();
    v
}

/// Wait until `dir` records `agents` agents (and `grandchildren` grandchildren).
pub(crate) fn wait_recorded(dir: &Path, agents: usize, grandchildren: usize) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let r = recorded(dir);
        let count = |k: &str| r.iter().filter(|(kind, _)| kind == k).count();
        if count("agent") >= agents && count("grandchild") >= grandchildren {
            return;
        }
        assert!(Instant::now() < deadline, "processes never started: {r:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Assert every pid is gone within [`GONE_WITHIN`]; survivors are named and killed.
pub(crate) fn assert_all_gone(pids: &[(String, i64)], what: &str) {
    let deadline = Instant::now() + GONE_WITHIN;
    loop {
        let left: Vec<&(String, i64)> = pids.iter().filter(|(_, p)| alive(*p)).collect();
        if left.is_empty() {
            return;
        }
        if Instant::now() > deadline {
            // What each survivor was doing (state, signal masks), then it is killed.
            let states: Vec<String> = left
                .iter()
                .map(|(kind, p)| {
                    let status = std::fs::read_to_string(format!("/proc/{p}/status"));
                    let _ = kill(Pid::from_raw(*p as i32), Signal::SIGKILL);
                    format!("{kind} {p}:\n{}", status.unwrap_or_default())
                })
                .collect();
            panic!(
                "{what}: processes survived: {left:?}\n{}",
                states.join("\n")
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Wait for `child` to exit within `within`.
pub(crate) fn wait_exit(child: &mut Child, within: Duration, what: &str) -> ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        if start.elapsed() > within {
            let _ = child.kill();
            panic!("{what} did not exit within {within:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn signal(child: &Child, sig: Signal) {
    kill(Pid::from_raw(child.id() as i32), sig).unwrap();
}

fn meta_of(repo: &TestRepo) -> Value {
    let runs: Vec<_> = std::fs::read_dir(repo.root.join(".arev/runs"))
        .unwrap()
        .flatten()
        .collect();
    assert_eq!(runs.len(), 1, "{runs:?}");
    serde_json::from_str(&std::fs::read_to_string(runs[0].path().join("meta.json")).unwrap())
        .unwrap()
}

/// Two agents mid-round — an Enthusiast that ignores SIGTERM and left a `setsid` grandchild
/// ignoring it too, an Adversary that hangs — then `sig` to arev.
fn signal_mid_round(sig: Signal, code: i32) {
    let repo = TestRepo::new();
    let pids = pid_dir(&repo);
    let mut child = repo
        .arev()
        .args(&["run", "src/lib.rs"])
        .env("AREV_AGENT_GRACE", "300ms")
        .env("AREV_FAKE_PIDS", pids.to_str().unwrap())
        .script(json!({"steps": [
            {"role": "enthusiast", "ignore_sigterm": true, "spawn_grandchild": true, "setsid_grandchild": true},
            {"role": "adversary", "hang": true}
        ]}))
        .command()
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_recorded(&pids, 2, 2);
    std::thread::sleep(Duration::from_millis(200));
    signal(&child, sig);
    let status = wait_exit(&mut child, Duration::from_secs(10), "arev");
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert_eq!(
        status.code(),
        Some(code),
        "after {sig:?}; stderr:\n{stderr}"
    );
    assert!(
        stderr.contains(&format!("interrupted ({sig:?})")),
        "{stderr}"
    );
    let meta = meta_of(&repo);
    assert_eq!(meta["status"], "interrupted");
    assert!(meta["finished_at"].is_string());
    assert_all_gone(&recorded(&pids), &format!("after {sig:?}"));
}

#[test]
fn sigint_cancels_agents_and_records_interrupted() {
    signal_mid_round(Signal::SIGINT, 130);
}

#[test]
fn sigterm_shuts_down_like_sigint_with_exit_143() {
    signal_mid_round(Signal::SIGTERM, 143);
}

#[test]
fn sighup_shuts_down_like_sigint_with_exit_129() {
    signal_mid_round(Signal::SIGHUP, 129);
}

#[test]
fn an_agents_setsid_grandchild_does_not_outlive_the_run() {
    let repo = TestRepo::new();
    let pids = pid_dir(&repo);
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs", "--format", "json"])
        .env("AREV_FAKE_PIDS", pids.to_str().unwrap())
        // The first answer only (a re-dispatch would not spawn another grandchild).
        .script(
            json!({"steps": [{"role": "enthusiast", "retry": false, "setsid_grandchild": true}]}),
        )
        .run();
    run.assert_code(0);
    let r = recorded(&pids);
    assert_eq!(
        r.iter().filter(|(k, _)| k == "grandchild").count(),
        1,
        "{r:?}"
    );
    assert_all_gone(&r, "after a complete run");
    // Killed when the dispatch ended, not abandoned after the 2 s pipe-drain timeout.
    let outcome: Value = serde_json::from_str(
        &std::fs::read_to_string(run.run_dir().join("agents/r1/enthusiast-p1/outcome.json"))
            .unwrap(),
    )
    .unwrap();
    assert!(
        outcome["duration_ms"].as_u64().unwrap() < 2_000,
        "{outcome}"
    );
}

#[test]
fn sigkill_of_arev_mid_round_leaves_no_agent() {
    let repo = TestRepo::new();
    let pids = pid_dir(&repo);
    let mut child = repo
        .arev()
        .args(&["run", "src/lib.rs"])
        .env("AREV_FAKE_PIDS", pids.to_str().unwrap())
        .script(json!({"steps": [
            {"role": "enthusiast", "ignore_sigterm": true},
            {"role": "adversary", "hang": true}
        ]}))
        .command()
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_recorded(&pids, 2, 0);
    signal(&child, Signal::SIGKILL);
    wait_exit(&mut child, Duration::from_secs(5), "arev after SIGKILL");
    assert_all_gone(&recorded(&pids), "after SIGKILL of arev");
}

const SESSION: &str = "5e55104e-0000-4000-8000-00000000000a";

/// `arev hook <event>` with `input` on stdin, not waited for.
pub(crate) fn spawn_hook(
    repo: &TestRepo,
    event: &str,
    input: &Value,
    pids: &Path,
    script: Value,
) -> Child {
    let mut child = repo
        .arev()
        .args(&["hook", event])
        .env("AREV_AGENT_GRACE", "300ms")
        .env("AREV_FAKE_PIDS", pids.to_str().unwrap())
        .script(script)
        .command()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.to_string().as_bytes()).unwrap();
    drop(stdin);
    child
}

/// Opt the session in (`#arev`), then change `src/calc.rs`: the Stop input that reviews it.
pub(crate) fn enable_session_and_change(repo: &TestRepo, pids: &Path) -> Value {
    let prompt = json!({"session_id": SESSION, "transcript_path": "/nowhere.jsonl",
        "cwd": repo.root, "hook_event_name": "UserPromptSubmit",
        "prompt": "#arev change it", "permission_mode": "default"});
    let mut enable = spawn_hook(repo, "prompt", &prompt, pids, json!({"steps": []}));
    assert!(wait_exit(&mut enable, Duration::from_secs(30), "hook prompt").success());
    repo.write(
        "src/calc.rs",
        "pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n",
    );
    json!({"session_id": SESSION, "transcript_path": "/nowhere.jsonl",
        "cwd": repo.root, "hook_event_name": "Stop", "stop_hook_active": false,
        "last_assistant_message": "done"})
}

#[test]
fn killing_the_stop_hook_stops_its_review() {
    let repo = TestRepo::new();
    let pids = pid_dir(&repo);
    let stop = enable_session_and_change(&repo, &pids);
    let script = json!({"steps": [{"role": "enthusiast", "ignore_sigterm": true}]});
    let mut hook = spawn_hook(&repo, "stop", &stop, &pids, script);
    wait_recorded(&pids, 1, 0);
    let agents = recorded(&pids);
    // The agent's parent is the review (`arev run diff`), the hook's child.
    let review = parent_of(agents[0].1);
    assert_eq!(parent_of(review), i64::from(hook.id()));

    let t0 = Instant::now();
    signal(&hook, Signal::SIGTERM);
    wait_exit(
        &mut hook,
        Duration::from_secs(5),
        "arev hook stop after SIGTERM",
    );
    let mut all = agents;
    all.push(("review".into(), review));
    assert_all_gone(&all, "after SIGTERM of the Stop hook");
    // Promptly: the agent's grace (300 ms), not the review's own timeout.
    assert!(t0.elapsed() < Duration::from_secs(4), "{:?}", t0.elapsed());
    // The review recorded its interruption.
    let meta = meta_of(&repo);
    assert_eq!(meta["status"], "interrupted", "{meta}");
}

#[test]
fn a_stop_hook_review_over_its_timeout_is_stopped_and_leaves_nothing() {
    let repo = TestRepo::new();
    repo.write(
        "arev.toml",
        "[hook]\ntimeout = \"1s\"\n\n[timeouts]\ngrace = \"300ms\"\n",
    )
    .commit("config");
    let pids = pid_dir(&repo);
    let stop = enable_session_and_change(&repo, &pids);
    let script = json!({"steps": [{"role": "enthusiast", "ignore_sigterm": true, "setsid_grandchild": true}]});
    let t0 = Instant::now();
    let mut hook = spawn_hook(&repo, "stop", &stop, &pids, script);
    assert!(wait_exit(&mut hook, Duration::from_secs(20), "arev hook stop").success());
    let elapsed = t0.elapsed();
    let mut out = String::new();
    std::io::Read::read_to_string(&mut hook.stdout.take().unwrap(), &mut out).unwrap();
    let out: Value = serde_json::from_str(out.trim()).unwrap();
    let msg = out["systemMessage"].as_str().unwrap_or_default();
    assert!(
        msg.contains("took longer than [hook] timeout (1s)"),
        "{out}"
    );
    // 1 s, then the review stops its agent (300 ms grace) and exits on SIGTERM.
    assert!(elapsed < Duration::from_secs(8), "{elapsed:?}");
    let r = recorded(&pids);
    assert!(r.iter().any(|(k, _)| k == "grandchild"), "{r:?}");
    assert_all_gone(&r, "after the hook's review timed out");
    assert_eq!(meta_of(&repo)["status"], "interrupted");
}

#[test]
fn a_verify_command_that_ignores_sigterm_is_bounded_and_leaves_nothing() {
    let repo = TestRepo::new();
    repo.write(
        "src/lib.rs",
        "// state 1\npub fn parse(s: &str) -> u32 {\n    s.parse().unwrap()\n}\n",
    )
    .commit("marker");
    let pids = pid_dir(&repo);
    let config = repo.scratch.join("timeouts.toml");
    std::fs::write(&config, "[timeouts]\nverify = \"1s\"\ngrace = \"300ms\"\n").unwrap();
    let d = pids.display();
    let verify = format!(
        "trap '' TERM; setsid sh -c 'trap \"\" TERM; : > {d}/grandchild-$$.tmp; \
         mv {d}/grandchild-$$.tmp {d}/grandchild-$$; exec sleep 1000' & \
         while ! ls {d} | grep -q '^grandchild-[0-9]*$'; do sleep 0.05; done; \
         : > {d}/verify-$$; sleep 1000"
    );
    let when = json!({"path": "src/lib.rs", "text": "unwrap()"});
    let script = json!({"steps": [
        {"role": "enthusiast", "round": 1, "if_file_contains": when,
         "answer": {"findings": [crate::harness::finding("F1", "src/lib.rs", 3, "high", "error-handling")]}},
        {"role": "judge", "round": 1, "if_file_contains": when,
         "answer": {"rulings": [crate::harness::ruling("F1", "src/lib.rs", 3, "high", "enthusiast")],
                    "summary": "confirmed", "convergence": false, "next_round_model": null}},
        {"role": "fixer", "if_file_contains": when,
         "edits": [{"path": "src/lib.rs", "find": "s.parse().unwrap()", "replace": "s.parse().unwrap_or(0)"}],
         "answer": {"applied": ["F1"], "skipped": []}}
    ]});
    let run = repo
        .arev()
        .args(&[
            "run",
            "src/lib.rs",
            "--iterate",
            "--format",
            "json",
            "--config",
            config.to_str().unwrap(),
            "--verify",
            &verify,
        ])
        .env("AREV_FAKE_PIDS", pids.to_str().unwrap())
        .script(script)
        .run();
    let it = &run.report()["iterate"];
    assert_eq!(it["stop_reason"], "verify-failed", "{}", run.stderr);
    let v = &it["iterations"][0]["verify"];
    assert_eq!(v["timed_out"], true, "{v}");
    // 1 s limit + 300 ms grace, then SIGKILL: well under the 1000 s it asked for.
    let ms = v["duration_ms"].as_u64().unwrap();
    assert!((1_000..5_000).contains(&ms), "{v}");
    let r = recorded(&pids);
    assert!(r.iter().any(|(k, _)| k == "verify"), "{r:?}");
    assert!(r.iter().any(|(k, _)| k == "grandchild"), "{r:?}");
    assert_all_gone(&r, "after a timed-out verify");
}
