//! The user's tokens and minutes (docs/contracts.md §19, §7 "debunked once"), through the real binary
//! with scripted fake-agent answers: a finding the Judge dismissed is never judged (nor
//! counted) again, later Enthusiast prompts list it, and an Adversary whose map would be
//! thrown away is cancelled with its dispatch recorded.

use crate::harness::{finding, ruling, TestRepo};
use serde_json::{json, Value};
use std::time::Duration;

/// Two 60-line files: findings far apart stay distinct.
fn two_files() -> TestRepo {
    let repo = TestRepo::new();
    let body: String = (1..=60)
        .map(|i| format!("pub fn f{i}() -> u32 {{ {i} }}\n"))
        .collect();
    repo.write("src/lib.rs", &body)
        .write("src/b.rs", &body)
        .commit("long");
    repo
}

fn judge(round: u32, rulings: Vec<Value>) -> Value {
    json!({"role": "judge", "round": round, "answer": {"rulings": rulings,
        "summary": format!("round {round}"), "convergence": false, "next_round_model": null}})
}

/// Round 1 dismisses src/lib.rs:10 and confirms src/lib.rs:30; round 2 raises the dismissed
/// defect again two lines off (the same defect) beside a new one in src/b.rs.
fn rejudge_script(round2_rulings: Vec<Value>) -> Value {
    json!({"steps": [
        {"role": "enthusiast", "round": 1, "answer": {"findings": [
            finding("F1", "src/lib.rs", 10, "high", "logic"),
            finding("F2", "src/lib.rs", 30, "high", "logic"),
        ]}},
        judge(1, vec![
            ruling("F1", "src/lib.rs", 10, "dismissed", "adversary"),
            ruling("F2", "src/lib.rs", 30, "high", "enthusiast"),
        ]),
        {"role": "enthusiast", "round": 2, "answer": {"findings": [
            finding("F1", "src/lib.rs", 12, "high", "logic"),
            finding("F2", "src/b.rs", 20, "high", "logic"),
        ]}},
        judge(2, round2_rulings),
    ]})
}

#[test]
fn a_dismissed_finding_is_judged_and_counted_once() {
    let repo = two_files();
    let run = repo
        .arev()
        .args(&["run", "src/*.rs", "--passes", "1", "--fail-on", "never"])
        .script(rejudge_script(vec![ruling(
            "F1",
            "src/b.rs",
            20,
            "high",
            "enthusiast",
        )]))
        .run();
    run.assert_code(0);
    let r2 = run.json("round-2.json");
    // Only the new finding reached the Judge; the repeat carries the round-1 ruling.
    assert_eq!(r2["counts"]["novel"], 1, "{r2}");
    assert_eq!(r2["counts"]["debunked_before"], 1, "{r2}");
    let repeat = &r2["debunked_before"][0];
    assert_eq!(repeat["round"], 1);
    assert_eq!(repeat["finding_id"], "F1");
    assert_eq!(repeat["matched_by"], "same defect");
    assert_eq!(repeat["ruling"]["final_severity"], "dismissed");
    assert_eq!(repeat["finding"]["finding"]["line"], 12);
    assert!(
        r2["decision"]["reasons"]
            .to_string()
            .contains("debunked once: 1 finding(s)"),
        "{r2}"
    );
    let judge_prompt =
        std::fs::read_to_string(run.run_dir().join("agents/r2/judge/prompt.md")).unwrap();
    assert!(!judge_prompt.contains("\"line\":12"), "{judge_prompt}");
    // The report counts the dismissal once: 2 confirmed, 1 debunked (33 %, not 50 %).
    let report = run.report();
    assert_eq!(report["debunked"].as_array().unwrap().len(), 1, "{report}");
    assert_eq!(report["confirmed"].as_array().unwrap().len(), 2, "{report}");
    let rate = report["quality"]["debunk_rate"].as_f64().unwrap();
    assert!((rate - 1.0 / 3.0).abs() < 1e-9, "{rate}");
    // Round 2's Enthusiast was told where the dismissal is, beside the BLOCKLIST.
    let e2 =
        std::fs::read_to_string(run.run_dir().join("agents/r2/enthusiast-p1/prompt.md")).unwrap();
    assert!(
        e2.contains("DEBUNKED — dismissed by the Judge, do not re-raise")
            && e2.contains("src/lib.rs:10 logic (round 1 F1)"),
        "{e2}"
    );
    let e1 =
        std::fs::read_to_string(run.run_dir().join("agents/r1/enthusiast-p1/prompt.md")).unwrap();
    assert!(!e1.contains("DEBUNKED"), "{e1}");
}

#[test]
fn an_adversary_with_nothing_to_judge_is_cancelled_and_recorded() {
    let repo = TestRepo::new();
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs", "--passes", "2"])
        // The passes answer once the Adversary has started: it is cancelled while it works.
        .script(json!({"steps": [
            {"role": "adversary", "delay_ms": 60000},
            {"role": "enthusiast", "wait_for": repo.started("adversary", 1)}
        ]}))
        .run();
    run.assert_code(0);
    assert!(run.elapsed < Duration::from_secs(30), "{:?}", run.elapsed);
    let r1 = run.json("round-1.json");
    let adv = r1["dispatches"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["role"] == "adversary")
        .unwrap_or_else(|| panic!("no adversary dispatch: {r1}"))
        .clone();
    assert_eq!(adv["outcome"]["end"]["kind"], "cancelled", "{adv}");
    assert_eq!(adv["gates"]["authenticity"], "cancelled", "{adv}");
    assert!(
        r1["decision"]["reasons"].to_string().contains(
            "the Adversary was cancelled: every Enthusiast pass answered with nothing new to judge"
        ),
        "{r1}"
    );
    assert_eq!(r1["adversary"], Value::Null);
    let meta = run.meta();
    assert_eq!(meta["status"], "complete");
    assert_eq!(meta["stop_reason"], "zero-findings");
    // A cancellation arev chose is not an agent error (only the round's error codes count).
    assert_eq!(
        run.report()["quality"]["agent_errors"],
        r1["errors"].as_array().unwrap().len()
    );
    // With findings to judge, the Adversary is awaited, however slow.
    let f = finding("F1", "src/lib.rs", 2, "high", "logic");
    let repo = TestRepo::new();
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs", "--passes", "1", "--fail-on", "never"])
        .script(json!({"steps": [
            {"role": "adversary", "delay_ms": 1500},
            {"role": "enthusiast", "answer": {"findings": [f]}},
            judge(1, vec![ruling("F1", "src/lib.rs", 2, "high", "enthusiast")]),
        ]}))
        .run();
    run.assert_code(0);
    let r1 = run.json("round-1.json");
    assert!(r1["adversary"].is_object(), "{r1}");
    assert!(!r1["decision"]["reasons"].to_string().contains("cancelled"));
}

/// `arev status --json` measures a running agent's time against now: it grows between two
/// calls although progress.json is not rewritten while the agent waits.
#[test]
fn status_shows_live_times_and_the_spend() {
    let repo = TestRepo::new();
    // The Adversary answers only once the test has seen it running twice (a file gate the
    // test opens), however long the Enthusiast and the status calls take under load.
    let release = repo.scratch.join("release-adversary");
    let script = json!({"steps": [
        {"role": "adversary", "wait_for": {"path": release.display().to_string()}},
        crate::harness::a_finding_to_judge(),
        judge(1, vec![ruling("F1", "src/lib.rs", 2, "dismissed", "adversary")]),
    ]});
    let mut child = repo
        .arev()
        .args(&["run", "src/lib.rs", "--passes", "1", "--fail-on", "never"])
        .script(script.clone())
        .command()
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let status = || -> Value {
        // (Every invocation rewrites the fake's script file: the same one.)
        let run = repo
            .arev()
            .args(&["status", "--json"])
            .script(script.clone())
            .run();
        serde_json::from_str(&run.stdout).unwrap_or(Value::Null)
    };
    let adversary_ms = |v: &Value| {
        v["running"]
            .as_array()
            .and_then(|a| a.iter().find(|x| x["label"] == "adversary"))
            .and_then(|x| x["elapsed_ms"].as_u64())
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let first = loop {
        let v = status();
        // The Enthusiast has answered (its spend is in), the Adversary still waits.
        if adversary_ms(&v).is_some() && v["counts"]["dispatches_finished"] == 1 {
            break v;
        }
        assert!(std::time::Instant::now() < deadline, "never saw it: {v}");
        std::thread::sleep(Duration::from_millis(100));
    };
    std::thread::sleep(Duration::from_millis(1500));
    let second = status();
    let (a, b) = (
        adversary_ms(&first).unwrap(),
        adversary_ms(&second).unwrap(),
    );
    assert!(b >= a + 1400, "{a} ms then {b} ms");
    assert_eq!(second["state"], "running");
    assert_eq!(second["round"], 1);
    assert_eq!(second["spent"]["tokens"], 150, "the Enthusiast's: {second}");
    assert!(second["spent"]["cost_usd"].as_f64().unwrap() > 0.0);
    // The Adversary's spend so far, from the Read its events streamed (10 input tokens
    // and the block's output).
    let adversary = second["running"]
        .as_array()
        .and_then(|a| a.iter().find(|x| x["label"] == "adversary"))
        .unwrap();
    let tokens = adversary["spent"]["tokens"].as_u64().unwrap();
    assert!(tokens > 10, "{adversary}");
    assert!(adversary["spent"]["cost_usd"].as_f64().unwrap() > 0.0);
    // The screen says the same.
    let screen = repo
        .arev()
        .args(&["status"])
        .script(script.clone())
        .run()
        .stdout;
    assert!(screen.contains("agents    adversary ("), "{screen}");
    assert!(
        screen.contains("spent     $0.0100 · 150 tokens"),
        "{screen}"
    );
    assert!(
        screen.contains("tokens (finished dispatches) + $")
            && screen.contains(&format!("· {tokens} tokens running")),
        "{screen}"
    );
    std::fs::write(&release, "").unwrap();
    assert!(child.wait().unwrap().success());
    let done = status();
    assert_eq!(done["state"], "complete");
    assert_eq!(done["running"], json!([]));
    assert_eq!(done["spent"]["tokens"], 450, "{done}");
}

/// Without a terminal, a waiting agent is not silent: a heartbeat line names it with its
/// time and the spend (every 30 s; here every 0.3 s). `-q` silences it.
#[test]
fn a_slow_agent_gets_a_heartbeat_on_a_non_tty_stderr() {
    let repo = TestRepo::new();
    // The Adversary waits 1.5 s once the Enthusiast's answer is recorded, so the beats
    // while it waits carry the Enthusiast's spend whatever the load.
    let enthusiast_done = repo
        .root
        .join(".arev/runs/*/agents/r1/enthusiast-p1/outcome.json");
    let script = json!({"steps": [
        {"role": "adversary", "delay_ms": 1500,
         "wait_for": {"path": enthusiast_done.display().to_string()}},
        crate::harness::a_finding_to_judge(),
        judge(1, vec![ruling("F1", "src/lib.rs", 2, "dismissed", "adversary")]),
    ]});
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs", "--passes", "1", "--fail-on", "never"])
        .env("AREV_PROGRESS_INTERVAL", "0.3")
        .script(script.clone())
        .run();
    run.assert_code(0);
    let beats: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.contains("waiting · round 1 · adversary ("))
        .collect();
    assert!(beats.len() >= 2, "{}", run.stderr);
    assert!(
        beats
            .iter()
            .any(|l| l.contains("spent $0.0100 · 150 tokens (finished dispatches)")),
        "{beats:?}"
    );
    let repo = TestRepo::new();
    let run = repo
        .arev()
        .args(&[
            "run",
            "src/lib.rs",
            "--passes",
            "1",
            "--fail-on",
            "never",
            "-q",
        ])
        .env("AREV_PROGRESS_INTERVAL", "0.3")
        .script(script)
        .run();
    run.assert_code(0);
    assert!(!run.stderr.contains("waiting ·"), "{}", run.stderr);
}

/// The value after `flag` in a fake-log line's argv.
fn arg_after(line: &Value, flag: &str) -> Option<String> {
    let argv: Vec<&str> = line["argv"]
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let i = argv.iter().position(|a| *a == flag)?;
    argv.get(i + 1).map(|s| s.to_string())
}

/// `--budget-usd`: each dispatch gets its share of what is left as Claude's
/// `--max-budget-usd` (the finders split it, the Judge gets the rest), and the Judge is not
/// started when the finders spent it all (docs/contracts.md §19.3): no verdict, exit 3.
#[test]
fn a_usd_budget_caps_each_dispatch_and_starts_no_work_it_cannot_pay_for() {
    let repo = TestRepo::new();
    let script = json!({"steps": [
        crate::harness::a_finding_to_judge(),
        judge(1, vec![ruling("F1", "src/lib.rs", 2, "dismissed", "adversary")]),
    ]});
    let run = repo
        .arev()
        .args(&[
            "run",
            "src/lib.rs",
            "--passes",
            "3",
            "--budget-usd",
            "1",
            "--fail-on",
            "never",
        ])
        .script(script.clone())
        .run();
    run.assert_code(0);
    let log = run.fake_log();
    for l in &log {
        let cap: f64 = arg_after(l, "--max-budget-usd")
            .unwrap_or_else(|| panic!("no cap: {l}"))
            .parse()
            .unwrap();
        let want = if l["role"] == "judge" {
            // $1 less the three passes' and the Adversary's $0.01 each.
            0.96
        } else {
            0.25
        };
        assert!((cap - want).abs() < 1e-6, "{}: {cap}", l["role"]);
    }
    assert!(log.iter().any(|l| l["role"] == "judge"));
    // Without a budget, no cap.
    let repo = TestRepo::new();
    let run = repo.arev().args(&["run", "src/lib.rs"]).run();
    run.assert_code(0);
    assert!(run
        .fake_log()
        .iter()
        .all(|l| arg_after(l, "--max-budget-usd").is_none()));
    // The finders spend the whole $0.02: the Judge is never started.
    let repo = TestRepo::new();
    let run = repo
        .arev()
        .args(&[
            "run",
            "src/lib.rs",
            "--passes",
            "1",
            "--budget-usd",
            "0.02",
            "--fail-on",
            "never",
        ])
        .script(script)
        .run();
    // No verdict: never green, whatever `--fail-on` says.
    run.assert_code(3);
    assert!(
        run.fake_log().iter().all(|l| l["role"] != "judge"),
        "{:?}",
        run.fake_log()
    );
    let meta = run.meta();
    assert_eq!(
        meta["abort_reason"], "budget_exhausted_before_verdict",
        "{meta}"
    );
    let r1 = run.json("round-1.json");
    assert!(
        r1["decision"]["reasons"]
            .to_string()
            .contains("budget exhausted before the Judge"),
        "{r1}"
    );
    assert_eq!(run.report()["unresolved"].as_array().unwrap().len(), 1);
}

/// A fake-agent step whose every `assistant` event reports `tokens` written to the cache
/// (at Opus list price, $5 per million) and that then waits `delay_ms` before answering
/// (its Read done: the request with the Read's result is sent, not answered).
fn spending(role: &str, tokens: u64, delay_ms: u64) -> Value {
    json!({"role": role, "delay_ms": delay_ms,
        "message_usage": {"input_tokens": 0, "cache_creation_input_tokens": tokens,
            "cache_read_input_tokens": 0, "output_tokens": 1}})
}

/// `--budget-usd` holds while agents run (docs/contracts.md §19.3): the Enthusiast's Read
/// reports $1 of a $1.02 budget, and the request it then sends with the Read's result
/// (its next line, waiting 60 s for the answer) passes it, so it is stopped at once (not
/// after its 60 s), the Judge is never started, and the run aborts
/// `budget_exhausted_before_verdict` (exit 3) having spent the budget and that one answer
/// at most. The budget is passed by the last line the fake prints before it waits, so the
/// stop lands at one point whatever the load.
#[test]
fn a_budget_passed_mid_dispatch_stops_the_agents_in_flight() {
    let repo = TestRepo::new();
    let script = json!({"steps": [
        spending("enthusiast", 200_000, 60_000),
        {"role": "adversary", "delay_ms": 60_000},
        crate::harness::a_finding_to_judge(),
    ]});
    let run = repo
        .arev()
        .args(&[
            "run",
            "src/lib.rs",
            "--passes",
            "1",
            "--budget-usd",
            "1.02",
            "--fail-on",
            "never",
        ])
        .script(script)
        .run();
    run.assert_code(3);
    assert!(run.elapsed < Duration::from_secs(20), "{:?}", run.elapsed);
    let meta = run.meta();
    assert_eq!(
        meta["abort_reason"], "budget_exhausted_before_verdict",
        "{meta}"
    );
    assert!(run.fake_log().iter().all(|l| l["role"] != "judge"));
    let r1 = run.json("round-1.json");
    assert!(
        r1["decision"]["reasons"]
            .to_string()
            .contains("budget exhausted while the finders ran"),
        "{r1}"
    );
    let dispatches = r1["dispatches"].as_array().unwrap();
    for d in dispatches {
        assert_eq!(d["outcome"]["end"]["kind"], "cancelled", "{d}");
    }
    let enth = dispatches
        .iter()
        .find(|d| d["role"] == "enthusiast")
        .unwrap();
    // The Read's 200k cache-write tokens at $5 per million and its output, then the
    // request sent with its result (waiting for the answer): the 200k read back at $0.20
    // per million, the Read and its result written.
    let answer = enth["outcome"]["cost_usd"].as_f64().unwrap();
    assert!((1.04..1.045).contains(&answer), "{enth}");
    let cost = &run.report()["cost"];
    let total = cost["usd"].as_f64().unwrap();
    assert!(total > 1.02 && total <= 1.02 + answer, "{cost}");
    // outcome.json keeps the usage it was priced from.
    let o: Value = serde_json::from_str(
        &std::fs::read_to_string(run.run_dir().join("agents/r1/enthusiast-p1/outcome.json"))
            .unwrap(),
    )
    .unwrap();
    let usage = &o["streamed"]["usage"];
    assert_eq!(usage["cache_read_input_tokens"], 200_000, "{o}");
    assert!(
        usage["cache_creation_input_tokens"].as_u64().unwrap() > 200_000,
        "{o}"
    );
}

/// A dispatch that timed out records what its events show it spent (docs/contracts.md §19.1), in
/// round-N.json, the run's spend and report.json's cost.
#[test]
fn a_timed_out_dispatch_records_what_it_spent() {
    let repo = TestRepo::new();
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs", "--passes", "1", "--fail-on", "never"])
        .env("AREV_AGENT_TIMEOUT", "1s")
        .env("AREV_AGENT_GRACE", "200ms")
        .script(json!({"steps": [spending("enthusiast", 1000, 60_000)]}))
        .run();
    let r1 = run.json("round-1.json");
    let enth: Vec<&Value> = r1["dispatches"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["role"] == "enthusiast")
        .collect();
    assert_eq!(enth.len(), 2, "the dispatch and its retry: {r1}");
    let mut sum = 0.0;
    for d in &enth {
        assert_eq!(d["outcome"]["end"]["kind"], "timed_out", "{d}");
        let usd = d["outcome"]["cost_usd"].as_f64().unwrap();
        // The Read's request: 1000 cache-write tokens at $5 per million and its output;
        // the next one, sent with its result: the 1000 read back at $0.20 per million.
        assert!((0.006..0.0065).contains(&usd), "{d}");
        assert!(d["outcome"]["tokens"].as_u64().unwrap() > 2000, "{d}");
        sum += usd;
    }
    let cost = &run.report()["cost"];
    let enth_cost = cost["by_role"]["enthusiast"]["usd"].as_f64().unwrap();
    assert!((enth_cost - sum).abs() < 1e-9, "{cost}");
    assert!(cost["usd"].as_f64().unwrap() >= sum, "{cost}");
}
