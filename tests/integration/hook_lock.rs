//! One review per hook session at a time: concurrent Stop hooks of one session share one
//! review (the second waits for the session's review lock, then takes the cached verdict).

use crate::harness::TestRepo;
use crate::interrupt::{enable_session_and_change, pid_dir, recorded, spawn_hook, wait_exit};
use serde_json::json;
use std::io::Read;
use std::time::Duration;

#[test]
fn concurrent_stop_hooks_of_one_session_share_one_review() {
    let repo = TestRepo::new();
    let pids = pid_dir(&repo);
    let stop = enable_session_and_change(&repo, &pids);
    // A slow Enthusiast: the two hooks overlap for certain.
    let script = json!({"steps": [{"role": "enthusiast", "delay_ms": 1500}]});
    let mut hooks: Vec<_> = (0..2)
        .map(|_| spawn_hook(&repo, "stop", &stop, &pids, script.clone()))
        .collect();
    let mut outputs = Vec::new();
    for h in &mut hooks {
        let status = wait_exit(h, Duration::from_secs(60), "arev hook stop");
        assert!(status.success());
        let mut out = String::new();
        h.stdout.take().unwrap().read_to_string(&mut out).unwrap();
        outputs.push(out);
    }
    let runs: Vec<_> = std::fs::read_dir(repo.root.join(".arev/runs"))
        .unwrap()
        .flatten()
        .collect();
    assert_eq!(runs.len(), 1, "one review, not two: {runs:?}");
    let agents = recorded(&pids).iter().filter(|(k, _)| k == "agent").count();
    let log = std::fs::read_to_string(repo.scratch.join("fake.log")).unwrap();
    assert_eq!(agents, log.lines().count(), "{log}");
    assert_eq!(
        outputs[0], outputs[1],
        "both hooks answer with the one verdict"
    );
}
