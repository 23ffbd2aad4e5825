//! One review per hook session at a time: concurrent Stop hooks of one session share one
//! review (the second waits for the session's review lock, then takes the cached verdict).

use crate::harness::TestRepo;
use crate::interrupt::{pid_dir, recorded, spawn_hook, wait_exit, SESSION};
use serde_json::json;
use std::io::Read;
use std::time::Duration;

#[test]
fn concurrent_stop_hooks_of_one_session_share_one_review() {
    let repo = TestRepo::new();
    let pids = pid_dir(&repo);
    let prompt = json!({"session_id": SESSION, "transcript_path": "/nowhere.jsonl",
        "cwd": repo.root, "hook_event_name": "UserPromptSubmit",
        "prompt": "#arev change it", "permission_mode": "default"});
    let mut enable = spawn_hook(&repo, "prompt", &prompt, &pids, json!({"steps": []}));
    assert!(wait_exit(&mut enable, Duration::from_secs(30), "hook prompt").success());
    repo.write(
        "src/calc.rs",
        "pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n",
    );

    let stop = json!({"session_id": SESSION, "transcript_path": "/nowhere.jsonl",
        "cwd": repo.root, "hook_event_name": "Stop", "stop_hook_active": false,
        "last_assistant_message": "done"});
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
