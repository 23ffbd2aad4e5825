//! API faults (docs/contracts.md §19.2) through whole arev reviews driven by the REAL Codex
//! (`AREV_TEST_CODEX_BIN`) and Gemini (`AREV_TEST_GEMINI_BIN`) CLIs against their loopback
//! fakes, which inject the APIs' failures: a 401, a 400, a transient burst that then
//! recovers, a safety block, an answer cut at the output token limit. Each test asserts the
//! exit code, the recorded reason and a wall-time bound (what each CLI does by itself is in
//! docs/architecture.md, "Faults").
//!
//! Skipped (with a note on stderr) when a binary is unset, unless `AREV_REQUIRE_REAL_CLIS=1`,
//! in which case a missing binary is a failure (CI sets them).

use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};

use crate::fake_gemini::FakeGemini;
use crate::fake_llm::{Recorded, Script, Step};
use crate::fake_openai::{FakeOpenAi, KEY_VAR};
use crate::harness::{finding, ruling, Run, TestRepo};
use crate::real_backends::{real_bin, toml_str};
use crate::real_faults::{assert_aborted_with, debug, read_json};

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

/// Which CLI drives the review, and how.
enum Cli<'a> {
    /// Codex with its own retries on (the OpenAI provider's defaults) or off.
    Codex {
        fake: &'a FakeOpenAi,
        cli_retries: bool,
    },
    Gemini(&'a FakeGemini),
}

/// Runs `arev run src/lib.rs --format json --agent <cli> <extra>` with the real CLI `bin`;
/// `env` goes on top of the fake's environment. The repository is returned with the run:
/// its run dir lives as long as it does.
fn run_with(bin: &Path, cli: &Cli<'_>, extra: &[&str], env: &[(&str, &str)]) -> (TestRepo, Run) {
    let repo = TestRepo::new();
    let binary = toml_str(&bin.display().to_string());
    let (name, config) = match cli {
        Cli::Codex { fake, cli_retries } => {
            let args = if *cli_retries {
                fake.codex_args_cli_retries()
            } else {
                fake.codex_args()
            };
            let args = toml::Value::Array(args.into_iter().map(toml::Value::String).collect());
            (
                "codex",
                format!(
                    "[agents.codex]\nbackend = \"codex\"\nbinary = {binary}\nextra_args = {args}\npass_env = [\"{KEY_VAR}\"]\n"
                ),
            )
        }
        Cli::Gemini(_) => (
            "gemini",
            format!("[agents.gemini]\nbackend = \"gemini\"\nbinary = {binary}\n"),
        ),
    };
    repo.write("arev.toml", &config);
    repo.commit("config");
    let mut args = vec!["run", "src/lib.rs", "--format", "json", "--agent", name];
    args.extend_from_slice(extra);
    let mut arev = repo.arev().args(&args).env("AREV_AGENT_TIMEOUT", "120s");
    let home = repo.scratch.join("home");
    let fake_env = match cli {
        Cli::Codex { fake, .. } => fake.codex_env(&home),
        Cli::Gemini(fake) => fake.gemini_env(&home),
    };
    for (k, v) in fake_env {
        arev = arev.env(k, &v);
    }
    for (k, v) in env {
        arev = arev.env(k, v);
    }
    let run = arev.run();
    (repo, run)
}

fn codex(test: &str) -> Option<std::path::PathBuf> {
    real_bin("AREV_TEST_CODEX_BIN", test)
}

fn gemini(test: &str) -> Option<std::path::PathBuf> {
    real_bin("AREV_TEST_GEMINI_BIN", test)
}

/// The requests of `role` in round 1.
fn of_role<'a>(reqs: &'a [Recorded], role: &str) -> Vec<&'a Recorded> {
    reqs.iter()
        .filter(|r| r.role() == Some(role) && r.round() == Some(1))
        .collect()
}

/// How long after the first request that played a fault the run ended (the CLI's start-up
/// before it is not counted).
fn since_first_fault(reqs: &[Recorded], run_ended: std::time::Instant) -> Duration {
    let first = reqs
        .iter()
        .filter(|r| is_fault(r))
        .map(|r| r.arrived)
        .min()
        .expect("a fault was played");
    run_ended.duration_since(first)
}

/// Whether a request played a fault.
fn is_fault(r: &Recorded) -> bool {
    matches!(
        r.played,
        Step::HttpError { .. } | Step::Blocked | Step::RateLimited { .. }
    )
}

/// The round-1 dispatches arev retried after a fault (those with a `retry.json`).
fn retried(run: &Run) -> Vec<String> {
    let mut dirs: Vec<String> = std::fs::read_dir(run.run_dir().join("agents/r1"))
        .expect("agents/r1")
        .flatten()
        .filter(|e| e.path().join("retry.json").exists())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    dirs.sort();
    dirs
}

fn assert_completed(run: &Run) -> Value {
    assert_eq!(run.code, 1, "a confirmed high finding\n{}", debug(run));
    let report: Value = serde_json::from_str(&run.stdout).expect("json report");
    assert_eq!(report["status"], "complete", "{}", debug(run));
    assert_eq!(report["confirmed"][0]["line"], 2, "{}", debug(run));
    report
}

fn unauthorized(message: &str) -> Step {
    Step::HttpError {
        status: 401,
        message: message.into(),
    }
}

/// A bad key: Codex would retry the 401 five times (~7 s per agent); arev stops it at its
/// first reconnect and aborts within 10 s naming the key. Its reconnect, if Codex sends it
/// before it is stopped, is never answered (`hold_after_faults`): a CLI arev did not stop
/// would wait on it past the time bound, whenever the reconnect comes.
#[test]
fn real_codex_401_aborts_within_10s_naming_the_key() {
    let Some(bin) = codex("real_codex_401_aborts_within_10s_naming_the_key") else {
        return;
    };
    let bad = || unauthorized("Incorrect API key provided: sk-fake***000.");
    // The Enthusiast's 401 ends the run: its first answer waits for the Adversary's request,
    // which is never answered (the Adversary is stopped with the run).
    let fake = FakeOpenAi::start(
        review()
            .fail_first("Enthusiast", 1, None, (None, 1), bad())
            .hold_after_faults("Enthusiast", 1)
            .fail_first("Adversary", 1, None, (None, 100), bad())
            .hold_for_request("Enthusiast", 1, 0, ("Adversary", 1))
            .hold_forever("Adversary", 1, 0),
    );
    let cli = Cli::Codex {
        fake: &fake,
        cli_retries: true,
    };
    let (_repo, run) = run_with(&bin, &cli, &[], &[]);
    let ended = std::time::Instant::now();
    assert_aborted_with(
        &run,
        "authentication failed: check OPENAI_API_KEY",
        Duration::from_secs(60),
    );
    let reqs = fake.requests();
    let since = since_first_fault(&reqs, ended);
    assert!(
        since < Duration::from_secs(10),
        "{since:?}\n{}",
        debug(&run)
    );
    // One 401 was answered: the reconnect after it (sent or not) was held, so the abort in
    // time is arev's stop at the first retry.
    let of = |role: &str| reqs.iter().filter(|r| r.role() == Some(role)).count();
    assert_eq!(of("Adversary"), 1, "{}", debug(&run));
    let answered_401 = reqs
        .iter()
        .filter(|r| r.role() == Some("Enthusiast") && matches!(r.played, Step::HttpError { .. }))
        .count();
    assert_eq!(answered_401, 1, "{}", debug(&run));
    let detail = run.meta()["abort_detail"].to_string();
    assert!(!detail.contains("retry"), "never re-dispatched: {detail}");
}

/// An invalid request (HTTP 400) is permanent: Codex does not retry it, arev aborts at once
/// with the API's message and never re-dispatches.
#[test]
fn real_codex_400_aborts_at_once() {
    let Some(bin) = codex("real_codex_400_aborts_at_once") else {
        return;
    };
    let fake = FakeOpenAi::start(review().fail_first(
        "Judge",
        1,
        None,
        (None, 100),
        Step::HttpError {
            status: 400,
            message: "Invalid value for 'input[0].content'.".into(),
        },
    ));
    let cli = Cli::Codex {
        fake: &fake,
        cli_retries: true,
    };
    let (_repo, run) = run_with(&bin, &cli, &[], &[]);
    let ended = std::time::Instant::now();
    assert_aborted_with(
        &run,
        "invalid request rejected by the API (Invalid value for 'input[0].content'.)",
        Duration::from_secs(90),
    );
    assert!(
        !run.run_dir().join("agents/r1/judge-retry").exists(),
        "never re-dispatched"
    );
    let reqs = fake.requests();
    assert_eq!(of_role(&reqs, "Judge").len(), 1, "{}", debug(&run));
    assert!(since_first_fault(&reqs, ended) < Duration::from_secs(10));
}

/// With the CLI's own retries off, a 503 burst on one pass is retried by arev with
/// backoff (each retry recorded) and the review completes.
#[test]
fn real_codex_503_burst_is_retried_with_backoff() {
    let Some(bin) = codex("real_codex_503_burst_is_retried_with_backoff") else {
        return;
    };
    let fake = FakeOpenAi::start(review().fail_first(
        "Enthusiast",
        1,
        Some(2),
        (None, 2),
        Step::HttpError {
            status: 503,
            message: "Service unavailable".into(),
        },
    ));
    let cli = Cli::Codex {
        fake: &fake,
        cli_retries: false,
    };
    let (_repo, run) = run_with(&bin, &cli, &["--passes", "2"], &[]);
    let report = assert_completed(&run);
    assert!(report.get("degraded").is_none(), "{report}");
    let first = read_json(&run, "agents/r1/enthusiast-p2/retry.json");
    assert_eq!(first["fault"]["cause"], "server_error", "{first}");
    assert_eq!(first["fault"]["status"], 503);
    let second = read_json(&run, "agents/r1/enthusiast-p2-retry/retry.json");
    let (d1, d2) = (
        first["delay_ms"].as_u64().unwrap(),
        second["delay_ms"].as_u64().unwrap(),
    );
    assert!(
        (750..1250).contains(&d1) && (1500..2500).contains(&d2),
        "{d1} {d2}"
    );
    assert!(run.elapsed < Duration::from_secs(120), "{:?}", run.elapsed);
}

/// A 429 with `retry-after`: Codex (its own retries on) waits as the API asks and
/// recovers by itself; the review completes without a re-dispatch.
#[test]
fn real_codex_429_burst_recovers_within_the_cli() {
    let Some(bin) = codex("real_codex_429_burst_recovers_within_the_cli") else {
        return;
    };
    let fake = FakeOpenAi::start(review().fail_first(
        "Adversary",
        1,
        None,
        (None, 2),
        Step::RateLimited { retry_after: 2 },
    ));
    let cli = Cli::Codex {
        fake: &fake,
        cli_retries: true,
    };
    let (_repo, run) = run_with(&bin, &cli, &[], &[]);
    assert_completed(&run);
    assert_eq!(retried(&run), Vec::<String>::new(), "{}", debug(&run));
    let reqs = fake.requests();
    let adv = of_role(&reqs, "Adversary");
    assert!(adv.len() >= 3, "{}", adv.len());
    let gap = adv[1].arrived.duration_since(adv[0].arrived);
    assert!(
        gap >= Duration::from_millis(1900),
        "retry-after honoured: {gap:?}"
    );
    assert!(run.elapsed < Duration::from_secs(120), "{:?}", run.elapsed);
}

/// The API's content filter stops the Adversary's answer: Codex would reconnect five times
/// (~7 s); arev stops it at the first and aborts naming the refusal (a reconnect, if Codex
/// sends it before it is stopped, is held: a CLI arev did not stop would wait past the bound).
#[test]
fn real_codex_content_filter_aborts_as_refusal() {
    let Some(bin) = codex("real_codex_content_filter_aborts_as_refusal") else {
        return;
    };
    // The filtered answer is played once; Codex's reconnect after it is never answered.
    let fake = FakeOpenAi::start(
        review()
            .fail_first("Adversary", 1, None, (Some(1), 1), Step::Blocked)
            .hold_after_faults("Adversary", 1),
    );
    let cli = Cli::Codex {
        fake: &fake,
        cli_retries: true,
    };
    let (_repo, run) = run_with(&bin, &cli, &[], &[]);
    let ended = std::time::Instant::now();
    assert_aborted_with(&run, "the model refused to answer", Duration::from_secs(90));
    assert!(run.meta()["abort_detail"]
        .as_str()
        .unwrap_or_default()
        .contains("content filter"));
    let reqs = fake.requests();
    assert!(since_first_fault(&reqs, ended) < Duration::from_secs(10));
    let blocked = reqs.iter().filter(|r| r.played == Step::Blocked).count();
    assert_eq!(blocked, 1, "stopped at the first reconnect");
}

/// An answer cut at `max_output_tokens`: Codex fails the turn; arev records
/// `output_truncated` (never "invalid JSON") and re-dispatches; the review completes.
#[test]
fn real_codex_max_output_tokens_is_redispatched() {
    let Some(bin) = codex("real_codex_max_output_tokens_is_redispatched") else {
        return;
    };
    let fake = FakeOpenAi::start(review().fail_first(
        "Enthusiast",
        1,
        None,
        (Some(1), 1),
        Step::MaxTokens(40),
    ));
    let cli = Cli::Codex {
        fake: &fake,
        cli_retries: true,
    };
    let (_repo, run) = run_with(&bin, &cli, &[], &[]);
    assert_completed(&run);
    let text = read_json(&run, "round-1.json").to_string();
    assert!(text.contains("output_truncated"), "{text}");
    assert!(!text.contains("enthusiast_malformed_json"), "{text}");
    assert!(run.elapsed < Duration::from_secs(120), "{:?}", run.elapsed);
}

/// A bad key: the Gemini CLI does not retry a 401; arev aborts at once naming the key.
#[test]
fn real_gemini_401_aborts_within_10s_naming_the_key() {
    let Some(bin) = gemini("real_gemini_401_aborts_within_10s_naming_the_key") else {
        return;
    };
    let bad = || unauthorized("Request had invalid authentication credentials.");
    // Both agents send their request, and the Enthusiast's 401 ends the run: its answer
    // waits for the Adversary's request, whose answer never comes (the run is aborted, and
    // the Adversary stopped, by the Enthusiast's fault).
    let fake = FakeGemini::start(
        review()
            .fail_first("Enthusiast", 1, None, (None, 100), bad())
            .fail_first("Adversary", 1, None, (None, 100), bad())
            .hold_for_request("Enthusiast", 1, 0, ("Adversary", 1))
            .hold_forever("Adversary", 1, 0),
    );
    let (_repo, run) = run_with(&bin, &Cli::Gemini(&fake), &[], &[]);
    let ended = std::time::Instant::now();
    assert_aborted_with(
        &run,
        "authentication failed: check GEMINI_API_KEY",
        Duration::from_secs(60),
    );
    let reqs = fake.requests();
    assert!(since_first_fault(&reqs, ended) < Duration::from_secs(10));
    // One request each: neither the CLI nor arev retried the 401.
    let roles: Vec<_> = reqs.iter().map(|r| r.role()).collect();
    assert_eq!(roles.len(), 2, "{roles:?}");
    assert!(roles.contains(&Some("Enthusiast")) && roles.contains(&Some("Adversary")));
}

/// The real API's answer to a bad key is a 400 naming `API_KEY_INVALID`: authentication,
/// not an invalid request; a plain 400 is an invalid request. Both abort at once.
#[test]
fn real_gemini_400_aborts_at_once() {
    let Some(bin) = gemini("real_gemini_400_aborts_at_once") else {
        return;
    };
    let fake = FakeGemini::start(review().fail_first(
        "Judge",
        1,
        None,
        (None, 100),
        Step::HttpError {
            status: 400,
            message: "Invalid JSON payload received.".into(),
        },
    ));
    let (_repo, run) = run_with(&bin, &Cli::Gemini(&fake), &[], &[]);
    let ended = std::time::Instant::now();
    assert_aborted_with(
        &run,
        "invalid request rejected by the API (Invalid JSON payload received.)",
        Duration::from_secs(90),
    );
    assert!(!run.run_dir().join("agents/r1/judge-retry").exists());
    let reqs = fake.requests();
    assert_eq!(of_role(&reqs, "Judge").len(), 1);
    assert!(since_first_fault(&reqs, ended) < Duration::from_secs(10));

    let fake = FakeGemini::start(review().fail_first(
        "Enthusiast",
        1,
        None,
        (None, 100),
        Step::HttpError {
            status: 400,
            message: "API key not valid. Please pass a valid API key.".into(),
        },
    ));
    let (_repo, run) = run_with(&bin, &Cli::Gemini(&fake), &[], &[]);
    assert_aborted_with(
        &run,
        "authentication failed: check GEMINI_API_KEY",
        Duration::from_secs(60),
    );
}

/// A 429 then a 503: the Gemini CLI retries them itself (~5 s, ~10 s) and the review
/// completes without a re-dispatch.
#[test]
fn real_gemini_429_503_burst_recovers_within_the_cli() {
    let Some(bin) = gemini("real_gemini_429_503_burst_recovers_within_the_cli") else {
        return;
    };
    let fake = FakeGemini::start(
        review()
            .fail_first(
                "Adversary",
                1,
                None,
                (Some(0), 1),
                Step::RateLimited { retry_after: 1 },
            )
            .fail_first(
                "Enthusiast",
                1,
                None,
                (Some(0), 1),
                Step::HttpError {
                    status: 503,
                    message: "The model is overloaded. Please try again later.".into(),
                },
            ),
    );
    let (_repo, run) = run_with(&bin, &Cli::Gemini(&fake), &[], &[]);
    assert_completed(&run);
    assert_eq!(retried(&run), Vec::<String>::new(), "{}", debug(&run));
    let reqs = fake.requests();
    let faults = reqs.iter().filter(|r| is_fault(r)).count();
    assert_eq!(faults, 2, "the 429 and the 503 were played");
    assert!(run.elapsed < Duration::from_secs(150), "{:?}", run.elapsed);
}

/// Streams that end without a finish reason outlast the CLI's own retries (it sends each
/// turn 4 times, ~7 s): arev re-dispatches with backoff, records why, and completes.
#[test]
fn real_gemini_cut_streams_are_retried_with_backoff() {
    let Some(bin) = gemini("real_gemini_cut_streams_are_retried_with_backoff") else {
        return;
    };
    let fake = FakeGemini::start(review().fail_first(
        "Enthusiast",
        1,
        Some(1),
        (Some(0), 4),
        Step::CutStream,
    ));
    let (_repo, run) = run_with(&bin, &Cli::Gemini(&fake), &[], &[]);
    assert_completed(&run);
    assert_eq!(retried(&run), ["enthusiast-p1"], "{}", debug(&run));
    let retry = read_json(&run, "agents/r1/enthusiast-p1/retry.json");
    assert_eq!(retry["fault"]["class"], "transient", "{retry}");
    assert_eq!(retry["fault"]["cause"], "connection", "{retry}");
    assert!(run.elapsed < Duration::from_secs(150), "{:?}", run.elapsed);
}

/// A safety block (`finishReason: SAFETY`): the CLI resends it 3 times, then reports it;
/// arev aborts naming the refusal.
#[test]
fn real_gemini_safety_block_aborts_as_refusal() {
    let Some(bin) = gemini("real_gemini_safety_block_aborts_as_refusal") else {
        return;
    };
    let fake =
        FakeGemini::start(review().steps("Adversary", 1, vec![Step::ReadTarget, Step::Blocked]));
    let (_repo, run) = run_with(&bin, &Cli::Gemini(&fake), &[], &[]);
    let ended = std::time::Instant::now();
    assert_aborted_with(
        &run,
        "blocked due to safety settings",
        Duration::from_secs(90),
    );
    assert!(run.meta()["abort_detail"]
        .as_str()
        .unwrap_or_default()
        .contains("refused"));
    let reqs = fake.requests();
    assert!(since_first_fault(&reqs, ended) < Duration::from_secs(12));
}

/// An answer cut at `MAX_TOKENS`: the Gemini CLI reports it as a success; arev sees the
/// answer end inside its JSON object, records `output_truncated` (never "invalid JSON")
/// and re-dispatches; the review completes.
#[test]
fn real_gemini_max_tokens_is_redispatched() {
    let Some(bin) = gemini("real_gemini_max_tokens_is_redispatched") else {
        return;
    };
    let fake = FakeGemini::start(review().fail_first(
        "Enthusiast",
        1,
        None,
        (Some(1), 1),
        Step::MaxTokens(40),
    ));
    let (_repo, run) = run_with(&bin, &Cli::Gemini(&fake), &[], &[]);
    assert_completed(&run);
    let text = read_json(&run, "round-1.json").to_string();
    assert!(text.contains("output_truncated"), "{text}");
    assert!(!text.contains("enthusiast_malformed_json"), "{text}");
    assert!(run.elapsed < Duration::from_secs(150), "{:?}", run.elapsed);
}
