//! Ctrl-C: every agent is stopped (SIGTERM, then SIGKILL), exit 130, status interrupted.

use crate::harness::{group_members, TestRepo};
use serde_json::json;
use std::time::{Duration, Instant};

#[test]
fn sigint_cancels_agents_and_records_interrupted() {
    let repo = TestRepo::new();
    let mut child = repo
        .arev()
        .args(&["run", "src/lib.rs"])
        .env("AREV_AGENT_GRACE", "300ms")
        .script(json!({"steps": [{"role": "enthusiast", "ignore_sigterm": true, "spawn_grandchild": true}, {"role": "adversary", "hang": true}]}))
        .command()
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait until both agents have started (they log on start).
    let log = repo.scratch.join("fake.log");
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .count()
        < 2
    {
        assert!(Instant::now() < deadline, "agents never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(200));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "arev did not stop after SIGINT"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(130));
    let runs: Vec<_> = std::fs::read_dir(repo.root.join(".arev/runs"))
        .unwrap()
        .collect();
    let dir = runs[0].as_ref().unwrap().path();
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("meta.json")).unwrap()).unwrap();
    assert_eq!(meta["status"], "interrupted");
    assert!(meta["finished_at"].is_string());
    for line in std::fs::read_to_string(&log).unwrap().lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let pid = v["pid"].as_i64().unwrap();
        assert!(
            group_members(pid).is_empty(),
            "agent group {pid} survived Ctrl-C"
        );
    }
}
