//! API faults (docs/contracts.md §19.2) through whole arev reviews driven by the REAL Claude Code CLI
//! (`AREV_TEST_CLAUDE_BIN`) against [`FakeAnthropic`], which injects the API's failures:
//! a burst of 529s on one pass, a 429 with `retry-after`, a 401, a 400, a refusal, an answer
//! cut at `max_tokens`, and a pass stuck before its first byte while a sibling dies. Each
//! test asserts the exit code, the recorded reason and a wall-time bound.
//!
//! Skipped (with a note on stderr) when `AREV_TEST_CLAUDE_BIN` is unset, unless
//! `AREV_REQUIRE_REAL_CLIS=1`, in which case a missing binary is a failure (CI sets both).

use std::time::Duration;

use serde_json::{json, Value};

use crate::fake_anthropic::{FakeAnthropic, Script, Step};
use crate::harness::{finding, ruling, Run, TestRepo};
use crate::real_claude::claude_bin;

/// The clean one-finding review every test starts from: round 1 confirms F1, round 2
/// finds nothing.
fn review() -> Script {
    Script::new()
        .answer(
            "Enthusiast",
            1,
            json!({"findings": [finding("F1", "src/lib.rs", 2, "high", "error-handling")]}),
        )
        .answer("Adversary", 1, json!({"heuristics": [], "safe_zones": []}))
        .answer(
            "Judge",
            1,
            json!({"rulings": [ruling("F1", "src/lib.rs", 2, "high", "enthusiast")],
                "summary": "1 confirmed.", "convergence": false, "next_round_model": null}),
        )
        .answer("Enthusiast", 2, json!({"findings": []}))
        .answer("Adversary", 2, json!({"heuristics": [], "safe_zones": []}))
}

/// Runs `arev run src/lib.rs --format json <extra>` with the real CLI against `fake`;
/// `env` goes on top of the fake's environment (e.g. the CLI's own retry count), `config`
/// after the agent's table in arev.toml. The repository is returned with the run: its run
/// dir lives as long as it does.
fn run_with(
    bin: &std::path::Path,
    fake: &FakeAnthropic,
    extra: &[&str],
    env: &[(&str, &str)],
    config: &str,
) -> (TestRepo, Run) {
    let repo = TestRepo::new();
    repo.write(
        "arev.toml",
        &format!(
            "[agents.claude]\nbackend = \"claude\"\nbinary = {}\n{config}",
            crate::real_backends::toml_str(&bin.display().to_string())
        ),
    );
    repo.commit("config");
    let mut args = vec!["run", "src/lib.rs", "--format", "json"];
    args.extend_from_slice(extra);
    let mut arev = repo.arev().args(&args);
    for (k, v) in fake.claude_env(&repo.scratch.join("home")) {
        arev = arev.env(k, &v);
    }
    arev = arev.env("AREV_AGENT_TIMEOUT", "120s");
    for (k, v) in env {
        arev = arev.env(k, v);
    }
    let run = arev.run();
    (repo, run)
}

pub(crate) fn debug(run: &Run) -> String {
    // Each dispatch: how it ended, how long it took, and its event types.
    let mut dispatches = String::new();
    for dir in run.run_dirs() {
        let Ok(entries) = std::fs::read_dir(dir.join("agents/r1")) else {
            continue;
        };
        for e in entries.flatten() {
            let o = std::fs::read_to_string(e.path().join("outcome.json")).unwrap_or_default();
            let o: Value = serde_json::from_str(&o).unwrap_or(Value::Null);
            let events = std::fs::read_to_string(e.path().join("events.jsonl")).unwrap_or_default();
            let kinds: Vec<String> = events
                .lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .map(|v| {
                    format!(
                        "{}/{}",
                        v["type"].as_str().unwrap_or("?"),
                        v["subtype"].as_str().unwrap_or("")
                    )
                })
                .collect();
            if std::env::var_os("AREV_TEST_DUMP_EVENTS").is_some() {
                for l in events.lines().filter(|l| !l.contains("\"init\"")) {
                    dispatches.push_str(&format!("    {}\n", &l[..l.len().min(700)]));
                }
            }
            dispatches.push_str(&format!(
                "{}: {} in {} ms, fault {}; events {kinds:?}\n",
                e.file_name().to_string_lossy(),
                o["end"],
                o["duration_ms"],
                o["fault"]
            ));
        }
    }
    format!(
        "code {} in {:?}\n--- dispatches\n{dispatches}--- stdout\n{}\n--- stderr\n{}",
        run.code, run.elapsed, run.stdout, run.stderr
    )
}

pub(crate) fn read_json(run: &Run, rel: &str) -> Value {
    let p = run.run_dir().join(rel);
    let text = std::fs::read_to_string(&p)
        .unwrap_or_else(|e| panic!("{}: {e}\n{}", p.display(), debug(run)));
    serde_json::from_str(&text).unwrap()
}

pub(crate) fn assert_aborted_with(run: &Run, detail: &str, within: Duration) {
    assert_eq!(run.code, 3, "{}", debug(run));
    let meta = run.meta();
    assert_eq!(
        meta["abort_reason"],
        "agent_dispatch_unavailable",
        "{meta}\n{}",
        debug(run)
    );
    let got = meta["abort_detail"].as_str().unwrap_or_default();
    assert!(got.contains(detail), "abort_detail {got:?}\n{}", debug(run));
    assert!(
        run.elapsed < within,
        "took {:?}\n{}",
        run.elapsed,
        debug(run)
    );
}

/// Two passes; pass 2 gets 529 overloaded twice. arev re-dispatches it with backoff (the
/// CLI's own retries are off), records each retry, and the review completes undegraded.
#[test]
fn real_claude_529_burst_on_one_pass_is_retried_with_backoff() {
    let Some(bin) = claude_bin("real_claude_529_burst_on_one_pass_is_retried_with_backoff") else {
        return;
    };
    let fake = FakeAnthropic::start(review().fail_first(
        "Enthusiast",
        1,
        Some(2),
        2,
        Step::HttpError {
            status: 529,
            message: "Overloaded".into(),
        },
    ));
    let (_repo, run) = run_with(&bin, &fake, &["--passes", "2"], &[], "");
    assert_eq!(run.code, 1, "a confirmed high finding\n{}", debug(&run));
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["status"], "complete", "{}", debug(&run));
    assert!(report.get("degraded").is_none(), "{report}");
    let first = read_json(&run, "agents/r1/enthusiast-p2/retry.json");
    assert_eq!(first["fault"]["cause"], "overloaded", "{first}");
    assert_eq!(first["fault"]["status"], 529);
    assert_eq!(
        (first["retry"].as_u64(), first["next"].as_str()),
        (Some(1), Some("enthusiast-p2-retry"))
    );
    let second = read_json(&run, "agents/r1/enthusiast-p2-retry/retry.json");
    assert_eq!(second["retry"], 2);
    // Exponential: ~1 s then ~2 s (±25 %).
    let (d1, d2) = (
        first["delay_ms"].as_u64().unwrap(),
        second["delay_ms"].as_u64().unwrap(),
    );
    assert!(
        (750..1250).contains(&d1) && (1500..2500).contains(&d2),
        "{d1} {d2}"
    );
    let third = read_json(&run, "agents/r1/enthusiast-p2-retry2/outcome.json");
    assert!(third.get("fault").is_none(), "{third}");
    assert!(run.stderr.contains("retrying in"), "{}", run.stderr);
    assert!(run.elapsed < Duration::from_secs(90), "{:?}", run.elapsed);
}

/// A 429 the CLI retried once itself (its `api_retry` event shows the API's `retry-after`
/// of 3 s) before giving up: arev waits at least that long before its re-dispatch.
#[test]
fn real_claude_429_retry_after_is_honoured() {
    let Some(bin) = claude_bin("real_claude_429_retry_after_is_honoured") else {
        return;
    };
    let fake = FakeAnthropic::start(review().fail_first(
        "Adversary",
        1,
        None,
        2,
        Step::RateLimited { retry_after: 3 },
    ));
    let (_repo, run) = run_with(&bin, &fake, &[], &[("CLAUDE_CODE_MAX_RETRIES", "1")], "");
    assert_eq!(run.code, 1, "{}", debug(&run));
    let retry = read_json(&run, "agents/r1/adversary/retry.json");
    assert_eq!(retry["fault"]["cause"], "rate_limited", "{retry}");
    assert!(
        retry["delay_ms"].as_u64().unwrap() >= 3000,
        "retry-after honoured: {retry}"
    );
    assert!(run.elapsed < Duration::from_secs(90), "{:?}", run.elapsed);
}

/// A bad API key: the CLI would retry the 401 ten times over minutes; arev stops it at its
/// first retry, aborts within 10 s naming the fix, and stops the parallel Adversary.
#[test]
fn real_claude_401_aborts_within_10s_naming_the_key() {
    let Some(bin) = claude_bin("real_claude_401_aborts_within_10s_naming_the_key") else {
        return;
    };
    let unauthorized = Step::HttpError {
        status: 401,
        message: "invalid x-api-key".into(),
    };
    let fake = FakeAnthropic::start(
        review()
            .fail_first("Enthusiast", 1, None, 100, unauthorized.clone())
            .fail_first("Adversary", 1, None, 100, unauthorized),
    );
    // The CLI's default retries are left on (10 attempts, backoff up to ~18 s each).
    let (_repo, run) = run_with(&bin, &fake, &[], &[("CLAUDE_CODE_MAX_RETRIES", "10")], "");
    // Within 10 s of the first 401 (the CLIs' own start-up before it is not counted).
    let first = fake
        .requests()
        .first()
        .map(|r| r.arrived)
        .expect("a request");
    let since_error = first.elapsed();
    assert_aborted_with(
        &run,
        "authentication failed: check ANTHROPIC_API_KEY",
        Duration::from_secs(60),
    );
    assert!(
        since_error < Duration::from_secs(10),
        "{since_error:?}\n{}",
        debug(&run)
    );
    assert!(
        fake.requests().len() <= 8,
        "a few requests, not 44: {}",
        fake.requests().len()
    );
}

/// An invalid request (HTTP 400) is permanent: no re-dispatch, abort at once.
#[test]
fn real_claude_400_aborts_at_once() {
    let Some(bin) = claude_bin("real_claude_400_aborts_at_once") else {
        return;
    };
    let fake = FakeAnthropic::start(review().fail_first(
        "Judge",
        1,
        None,
        100,
        Step::HttpError {
            status: 400,
            message: "messages.0: unexpected role".into(),
        },
    ));
    let (_repo, run) = run_with(&bin, &fake, &[], &[], "");
    assert_aborted_with(
        &run,
        "invalid request rejected by the API",
        Duration::from_secs(60),
    );
    assert!(
        !run.run_dir().join("agents/r1/judge-retry").exists(),
        "never re-dispatched"
    );
    // One Judge process (the CLI may itself resend a 400 with fewer beta features).
    let sessions: std::collections::BTreeSet<String> = fake
        .requests()
        .iter()
        .filter(|r| r.role() == Some("Judge"))
        .filter_map(|r| r.header("x-claude-code-session-id").map(str::to_owned))
        .collect();
    assert_eq!(sessions.len(), 1, "one Judge dispatch: {sessions:?}");
}

/// The model refuses after reading, and again when the CLI continues once with the refusal
/// noted (what Claude Code 2.1.330 does): a permanent fault, the refusal's text in the detail.
#[test]
fn real_claude_refusal_aborts_with_its_text() {
    let Some(bin) = claude_bin("real_claude_refusal_aborts_with_its_text") else {
        return;
    };
    let fake = FakeAnthropic::start(review().steps(
        "Adversary",
        1,
        vec![
            Step::ReadTarget,
            Step::Refusal("I can't help with that.".into()),
            Step::Refusal("I can't help with that.".into()),
        ],
    ));
    let (_repo, run) = run_with(&bin, &fake, &[], &[], "");
    assert_aborted_with(&run, "I can't help with that.", Duration::from_secs(60));
    assert!(run.meta()["abort_detail"]
        .as_str()
        .unwrap_or_default()
        .contains("refused"));
}

/// An answer cut at `max_tokens`: never reported as invalid JSON; recorded
/// `output_truncated`, and the review still completes.
#[test]
fn real_claude_max_tokens_is_recovered_or_redispatched() {
    let Some(bin) = claude_bin("real_claude_max_tokens_is_recovered_or_redispatched") else {
        return;
    };
    let fake = FakeAnthropic::start(review().steps(
        "Enthusiast",
        1,
        vec![Step::ReadTarget, Step::MaxTokens(40), Step::AnswerRest(40)],
    ));
    let (_repo, run) = run_with(&bin, &fake, &[], &[], "");
    assert_eq!(run.code, 1, "{}", debug(&run));
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["confirmed"][0]["line"], 2, "{}", debug(&run));
    let r1 = read_json(&run, "round-1.json");
    let text = r1.to_string();
    assert!(text.contains("output_truncated"), "{text}");
    assert!(!text.contains("enthusiast_malformed_json"), "{text}");
    assert!(run.elapsed < Duration::from_secs(90), "{:?}", run.elapsed);
}

/// Pass 1 waits 60 s for its first byte while the Adversary's key is refused: the abort
/// does not wait for pass 1, whose work would be thrown away; it is cancelled.
#[test]
fn real_claude_slow_first_byte_with_a_dead_sibling_aborts_without_waiting() {
    let Some(bin) =
        claude_bin("real_claude_slow_first_byte_with_a_dead_sibling_aborts_without_waiting")
    else {
        return;
    };
    let fake = FakeAnthropic::start(
        review()
            .steps_pass(
                "Enthusiast",
                1,
                Some(1),
                vec![Step::Delay(
                    Duration::from_secs(60),
                    Box::new(Step::ReadTarget),
                )],
            )
            .fail_first(
                "Adversary",
                1,
                None,
                100,
                Step::HttpError {
                    status: 403,
                    message: "permission denied".into(),
                },
            ),
    );
    let (_repo, run) = run_with(&bin, &fake, &["--passes", "2"], &[], "");
    let first = fake
        .requests()
        .first()
        .map(|r| r.arrived)
        .expect("a request");
    let since_start = first.elapsed();
    assert_aborted_with(&run, "permission denied", Duration::from_secs(40));
    // Far from the 60 s pass 1 would have taken.
    assert!(
        since_start < Duration::from_secs(15),
        "{since_start:?}\n{}",
        debug(&run)
    );
    let p1 = read_json(&run, "agents/r1/enthusiast-p1/outcome.json");
    assert_eq!(p1["end"]["kind"], "cancelled", "{p1}");
}

/// With a short retry window, a pass that stays overloaded is lost and the round goes on
/// with the other pass: `degraded` in report.json and a warning; with
/// `require_all_passes` the same run aborts.
#[test]
fn real_claude_lost_pass_degrades_the_round() {
    let Some(bin) = claude_bin("real_claude_lost_pass_degrades_the_round") else {
        return;
    };
    let overloaded = || {
        review().fail_first(
            "Enthusiast",
            1,
            Some(2),
            100,
            Step::HttpError {
                status: 529,
                message: "Overloaded".into(),
            },
        )
    };
    let fake = FakeAnthropic::start(overloaded());
    let window = [("AREV_RETRY_WINDOW", "4s")];
    let (_repo1, run1) = run_with(&bin, &fake, &["--passes", "2"], &window, "");
    assert_eq!(run1.code, 1, "{}", debug(&run1));
    let report: Value = serde_json::from_str(&run1.stdout).unwrap();
    assert_eq!(report["status"], "complete");
    assert_eq!(report["degraded"][0]["round"], 1, "{report}");
    assert_eq!(report["degraded"][0]["pass"], 2);
    assert!(
        report["degraded"][0]["cause"]
            .as_str()
            .unwrap()
            .contains("overloaded"),
        "{report}"
    );
    assert!(
        report["warnings"].to_string().contains("degraded"),
        "{report}"
    );
    assert!(run1.elapsed < Duration::from_secs(60), "{:?}", run1.elapsed);

    let fake = FakeAnthropic::start(overloaded());
    let strict = "[review]\nrequire_all_passes = true\n";
    let (_repo2, run2) = run_with(&bin, &fake, &["--passes", "2"], &window, strict);
    assert_aborted_with(&run2, "require_all_passes", Duration::from_secs(60));
}
