//! Every gate of docs/architecture.md §10 fires through the real path: exit 3 and the abort
//! reason in meta.json.

use crate::harness::{a_finding_to_judge, finding, group_members, ruling, TestRepo};
use serde_json::json;
use std::time::Duration;

fn assert_aborted(run: &crate::harness::Run, reason: &str) {
    run.assert_code(3);
    let meta = run.meta();
    assert_eq!(meta["status"], "aborted");
    assert_eq!(meta["abort_reason"], reason, "{}", run.stderr);
    assert!(meta["stop_reason"].is_null());
    assert!(meta["finished_at"].is_string());
    let report = run.report();
    assert_eq!(report["abort_reason"], reason);
    assert_eq!(
        report["coverage"]["reviewed"], 0,
        "an aborted review covers nothing"
    );
    assert!(
        run.stderr.contains(reason),
        "stderr names the reason: {}",
        run.stderr
    );
    assert!(run.stdout.contains("ABORTED"), "{}", run.stdout);
}

#[test]
fn missing_read_of_the_target() {
    let repo = TestRepo::new();
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs"])
        .script(json!({"steps": [{"role": "enthusiast", "read_target": false}]}))
        .run();
    assert_aborted(&run, "enthusiast_no_tool_invocation");
}

#[test]
fn read_outside_the_target() {
    // An untracked file is outside the context scope (a tracked one may be read).
    let repo = TestRepo::new();
    repo.write("secret.rs", "const KEY: &str = \"x\";\n");
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs"])
        .script(
            json!({"steps": [{"role": "adversary", "reads": ["secret.rs"]}, a_finding_to_judge()]}),
        )
        .run();
    assert_aborted(&run, "adversary_offtarget_read");
    let r1 = run.json("round-1.json");
    let adv = r1["dispatches"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["role"] == "adversary")
        .unwrap();
    assert!(adv["gates"]["offtarget_read"]
        .as_str()
        .unwrap()
        .ends_with("secret.rs"));
}

#[test]
fn grep_without_a_path_is_an_offtarget_read() {
    let repo = TestRepo::new();
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs"])
        .script(json!({"steps": [{"role": "enthusiast", "greps": [{"pattern": "unwrap", "path": ""}]}]}))
        .run();
    assert_aborted(&run, "enthusiast_offtarget_read");
}

#[test]
fn finding_naming_an_offtarget_file() {
    let repo = TestRepo::new();
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs"])
        .script(json!({"steps": [{"role": "enthusiast", "answer": {"findings": [finding("F1", "src/other.rs", 1, "high", "logic")]}}]}))
        .run();
    assert_aborted(&run, "offtarget_hallucination");
    assert!(
        run.report()["confirmed"].as_array().unwrap().is_empty(),
        "all findings discarded"
    );
}

#[test]
fn ruling_naming_an_offtarget_file() {
    let repo = TestRepo::new();
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs"])
        .script(json!({"steps": [
            {"role": "enthusiast", "answer": {"findings": [finding("F1", "src/lib.rs", 2, "high", "logic")]}},
            {"role": "judge", "answer": {"rulings": [ruling("F1", "../etc/passwd", 2, "high", "enthusiast")], "summary": "s", "convergence": false, "next_round_model": null}}
        ]}))
        .run();
    assert_aborted(&run, "offtarget_hallucination");
}

#[test]
fn anchor_beyond_the_file_is_dropped_not_aborted() {
    let repo = TestRepo::new();
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs"])
        .script(json!({"steps": [{"role": "enthusiast", "round": 1, "answer": {"findings": [finding("F1", "src/lib.rs", 999, "critical", "logic")]}}]}))
        .run();
    run.assert_code(0);
    let r1 = run.json("round-1.json");
    assert_eq!(r1["counts"]["anchor_invalid"], 1);
    assert!(r1["errors"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e == "anchor_invalid"));
    assert!(!run.run_dir().join("agents/r1/judge").exists());
}

#[test]
fn malformed_json_is_redispatched_once_with_the_error() {
    let repo = TestRepo::new();
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs"])
        .script(json!({"steps": [
            {"role": "enthusiast", "round": 1, "retry": false, "answer_text": "{\"findings\": [oops"},
            {"role": "enthusiast", "round": 1, "retry": true, "answer": {"findings": [finding("F1", "src/lib.rs", 2, "high", "logic")]}},
            {"role": "judge", "round": 1, "answer": {"rulings": [ruling("F1", "src/lib.rs", 2, "high", "enthusiast")], "summary": "s", "convergence": false, "next_round_model": null}}
        ]}))
        .run();
    run.assert_code(1);
    let dir = run.run_dir();
    let retry =
        std::fs::read_to_string(dir.join("agents/r1/enthusiast-p1-retry/prompt.md")).unwrap();
    assert!(
        retry.contains("Your previous answer was rejected: invalid JSON"),
        "{retry}"
    );
    assert!(retry.starts_with("[AR Round 1 — LIGHTWEIGHT] Enthusiast (pass 1/1)"));
}

#[test]
fn malformed_twice_in_every_pass_is_no_verdict() {
    let repo = TestRepo::new();
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs"])
        .script(
            json!({"steps": [{"role": "enthusiast", "answer_text": "I found nothing, all good!"}]}),
        )
        .run();
    assert_aborted(&run, "enthusiast_malformed_json");
}

#[test]
fn adversary_malformed_falls_back_to_an_empty_map() {
    let repo = TestRepo::new();
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs"])
        .script(json!({"steps": [
            {"role": "adversary", "answer_text": "```json\n{\"heuristics\": 3}\n```"},
            a_finding_to_judge(),
            {"role": "judge", "answer": {"rulings": [ruling("F1", "src/lib.rs", 2, "dismissed", "adversary")], "summary": "s"}},
        ]}))
        .run();
    run.assert_code(0);
    let r1 = run.json("round-1.json");
    assert!(r1["errors"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e == "adversary_malformed_json"));
}

#[test]
fn judge_malformed_twice_leaves_findings_unresolved_and_aborts() {
    let repo = TestRepo::new();
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs"])
        .script(json!({"steps": [
            {"role": "enthusiast", "answer": {"findings": [finding("F1", "src/lib.rs", 2, "high", "logic")]}},
            {"role": "judge", "answer_text": "{\"rulings\": \"F1 is fine\"}"}
        ]}))
        .run();
    assert_aborted(&run, "judge_malformed_json");
    assert_eq!(run.report()["unresolved"].as_array().unwrap().len(), 1);
}

#[test]
fn crash_without_result_is_retried_then_unavailable() {
    let repo = TestRepo::new();
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs"])
        .script(json!({"steps": [{"role": "judge", "crash": true}, {"role": "enthusiast", "answer": {"findings": [finding("F1", "src/lib.rs", 2, "high", "logic")]}}]}))
        .run();
    assert_aborted(&run, "agent_dispatch_unavailable");
    assert!(run
        .run_dir()
        .join("agents/r1/judge-retry/events.jsonl")
        .is_file());
}

#[test]
fn is_error_result_is_unavailable() {
    let repo = TestRepo::new();
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs"])
        .script(json!({"steps": [{"role": "enthusiast", "is_error": true, "answer_text": "API Error: 500", "exit_code": 1}]}))
        .run();
    assert_aborted(&run, "agent_dispatch_unavailable");
}

// A missing agent binary is found by the preflight before any run dir (exit 2):
// tests/integration/setup.rs.

#[test]
fn hanging_agent_is_killed_within_timeout_plus_grace() {
    let repo = TestRepo::new();
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs"])
        .env("AREV_AGENT_TIMEOUT", "1s")
        .env("AREV_AGENT_GRACE", "500ms")
        .script(json!({"steps": [{"role": "adversary", "ignore_sigterm": true, "spawn_grandchild": true}, a_finding_to_judge()]}))
        .run();
    assert_aborted(&run, "agent_dispatch_unavailable");
    // Two attempts (the retry), each bounded by timeout + grace, plus process overhead.
    assert!(
        run.elapsed < Duration::from_secs(6),
        "took {:?}",
        run.elapsed
    );
    let dir = run.run_dir();
    for label in ["adversary", "adversary-retry"] {
        let o: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join("agents/r1").join(label).join("outcome.json"))
                .unwrap(),
        )
        .unwrap();
        assert_eq!(o["end"]["kind"], "timed_out", "{o}");
        assert_eq!(
            o["end"]["killed"], true,
            "SIGTERM was ignored, so SIGKILL was needed"
        );
        assert!(o["duration_ms"].as_u64().unwrap() < 1500 + 700, "{o}");
    }
    for l in run.fake_log() {
        let pid = l["pid"].as_i64().unwrap();
        assert!(
            group_members(pid).is_empty(),
            "process group {pid} survived"
        );
    }
}

#[test]
fn a_role_timeout_table_applies_to_that_role_only() {
    let repo = TestRepo::new();
    repo.write(
        "arev.toml",
        "[timeouts.adversary]\nagent = \"1s\"\ngrace = \"200ms\"\n",
    )
    .commit("cfg");
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs"])
        .script(json!({"steps": [{"role": "adversary", "hang": true}, a_finding_to_judge()]}))
        .run();
    assert_aborted(&run, "agent_dispatch_unavailable");
    assert!(
        run.elapsed < Duration::from_secs(5),
        "took {:?}",
        run.elapsed
    );
    let o: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(run.run_dir().join("agents/r1/adversary/outcome.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(o["end"]["kind"], "timed_out", "{o}");
    // The Enthusiast (default 10 min limit) answered normally.
    let e: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(run.run_dir().join("agents/r1/enthusiast-p1/outcome.json"))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(e["end"]["kind"], "exited", "{e}");
}
