//! Budgets through the real path (docs/architecture.md §11.4, rule 7): a budget that runs
//! out before the Judge has ruled is never green (exit 3, `budget_exhausted_before_verdict`),
//! the answers already received kept as unresolved findings; every backend's tokens are
//! priced (`[prices]`), a USD budget over a model without a price is refused before the run
//! (exit 2), and Codex and Gemini dispatches — the real CLIs against their loopback fakes —
//! record a cost and trip a USD budget.

use crate::fake_gemini::FakeGemini;
use crate::fake_llm::Script;
use crate::fake_openai::FakeOpenAi;
use crate::harness::{finding, ruling, Run, TestRepo};
use crate::real_backends::{codex_agent, gemini_agent, real_bin};
use serde_json::{json, Value};
use std::time::Duration;

const FAKE: &str = env!("CARGO_BIN_EXE_arev-fake-agent");

/// The dispatch records of round 1.
fn dispatches(run: &Run) -> Vec<Value> {
    run.json("round-1.json")["dispatches"]
        .as_array()
        .unwrap()
        .clone()
}

/// The run aborted `budget_exhausted_before_verdict` (exit 3) in meta.json and report.json,
/// and no Judge ruled.
fn assert_no_verdict(run: &Run) {
    run.assert_code(3);
    let (meta, report) = (run.meta(), run.report());
    assert_eq!(meta["status"], "aborted", "{meta}");
    assert_eq!(
        meta["abort_reason"], "budget_exhausted_before_verdict",
        "{meta}"
    );
    assert_eq!(report["status"], "aborted");
    assert_eq!(report["abort_reason"], "budget_exhausted_before_verdict");
    assert!(report["confirmed"].as_array().unwrap().is_empty());
    assert!(dispatches(run).iter().all(|d| d["role"] != "judge"));
}

/// The Enthusiast's own result event passes `--budget-tokens` while the CLI is still
/// exiting: the round is cancelled (the Adversary, still at work, is stopped at once), but
/// the answer that had arrived is kept — its finding reported unresolved — and the run,
/// without a verdict, exits 3 even under `--fail-on never`. The same with `--budget-usd`.
#[test]
fn a_budget_passed_by_an_answer_keeps_it_and_is_never_green() {
    for budget in [["--budget-tokens", "10000"], ["--budget-usd", "0.5"]] {
        let repo = TestRepo::new();
        // 200k tokens read: 200k × $4 per million (Opus input) = $0.80.
        let script = json!({"steps": [
            {"role": "enthusiast", "linger_ms": 30_000,
             "usage": {"input_tokens": 200_000, "output_tokens": 50},
             "answer": {"findings": [finding("F1", "src/lib.rs", 2, "high", "logic")]}},
            {"role": "adversary", "delay_ms": 60_000},
            {"role": "judge", "answer": {"rulings": [ruling("F1", "src/lib.rs", 2, "high", "enthusiast")],
                "summary": "1 confirmed.", "convergence": false, "next_round_model": null}},
        ]});
        let run = repo
            .arev()
            .args(&["run", "src/lib.rs", "--passes", "1", "--fail-on", "never"])
            .args(&budget)
            .script(script)
            .run();
        assert_no_verdict(&run);
        assert!(run.elapsed < Duration::from_secs(25), "{:?}", run.elapsed);
        assert!(run.fake_log().iter().all(|l| l["role"] != "judge"));
        // The answer is kept: parsed and gated, its finding unresolved.
        let enth = dispatches(&run)
            .into_iter()
            .find(|d| d["role"] == "enthusiast")
            .unwrap();
        assert_eq!(enth["outcome"]["end"]["kind"], "cancelled", "{enth}");
        assert_eq!(enth["gates"]["schema"], "ok", "{enth}");
        let report = run.report();
        let unresolved = report["unresolved"].as_array().unwrap();
        assert_eq!(unresolved.len(), 1, "{report}");
        assert_eq!(
            (&unresolved[0]["file"], &unresolved[0]["line"]),
            (&json!("src/lib.rs"), &json!(2))
        );
        let r1 = run.json("round-1.json");
        assert_eq!(r1["decision"]["action"], "abort", "{r1}");
        assert_eq!(
            r1["decision"]["abort_reason"],
            "budget_exhausted_before_verdict"
        );
        assert_eq!(r1["counts"]["unresolved"], 1);
        assert!(
            r1["decision"]["reasons"]
                .to_string()
                .contains("budget exhausted while the finders ran"),
            "{r1}"
        );
        // Every rendering says so: the text report on stdout names the reason.
        assert!(
            run.stdout.contains("budget_exhausted_before_verdict"),
            "{}",
            run.stdout
        );
    }
}

/// The Judge's own result passes the budget: a verdict exists, so the run stops
/// `budget-exhausted` and exits by its confirmed findings (here 1: a high one).
#[test]
fn a_budget_passed_by_the_judges_answer_keeps_the_verdict() {
    let repo = TestRepo::new();
    let script = json!({"steps": [
        crate::harness::a_finding_to_judge(),
        {"role": "judge", "linger_ms": 30_000,
         "usage": {"input_tokens": 200_000, "output_tokens": 50},
         "answer": {"rulings": [ruling("F1", "src/lib.rs", 2, "high", "enthusiast")],
            "summary": "1 confirmed.", "convergence": false, "next_round_model": null}},
    ]});
    let run = repo
        .arev()
        .args(&[
            "run",
            "src/lib.rs",
            "--passes",
            "1",
            "--budget-tokens",
            "10000",
        ])
        .script(script)
        .run();
    run.assert_code(1);
    assert!(run.elapsed < Duration::from_secs(25), "{:?}", run.elapsed);
    let meta = run.meta();
    assert_eq!(meta["status"], "complete", "{meta}");
    assert_eq!(meta["stop_reason"], "budget-exhausted", "{meta}");
    let report = run.report();
    assert_eq!(report["confirmed"].as_array().unwrap().len(), 1, "{report}");
    let judge = dispatches(&run)
        .into_iter()
        .find(|d| d["role"] == "judge")
        .unwrap();
    assert_eq!(judge["outcome"]["end"]["kind"], "cancelled", "{judge}");
}

/// Every role on one `command` agent running the fake in Codex's format, on the model
/// `local-coder` (no default price), with `extra` appended to the config.
fn local_config(extra: &str) -> String {
    format!(
        "[agents.local]\nbackend = \"command\"\nbinary = \"{FAKE}\"\nformat = \"codex\"\n\
         extra_args = [\"--event-format\", \"codex\", \"--model\", \"{{model}}\"]\n\
         [agents.local.models]\nhaiku = \"local-coder\"\nsonnet = \"local-coder\"\nopus = \"local-coder\"\n\
         [roles]\nenthusiast = \"local\"\nadversary = \"local\"\njudge = \"local\"\n{extra}"
    )
}

/// A USD budget over a model with no price is refused before the run (exit 2, no run dir,
/// no agent started), naming the agent, the model and `--budget-tokens`; a token budget
/// runs. With `[prices."local-coder"]` the USD budget runs too, and each Codex-format
/// dispatch records its cost from the table (the fake's 100 input and 50 output tokens at
/// $1 and $2 per million).
#[test]
fn a_usd_budget_needs_a_price_for_every_model() {
    let repo = TestRepo::new();
    repo.write("arev.toml", &local_config(""));
    repo.commit("config");
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs", "--budget-usd", "1"])
        .run();
    run.assert_code(2);
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one line expected: {:?}", run.stderr);
    for needle in [
        "agent `local`",
        "`local-coder`",
        "--budget-tokens",
        "[prices.",
    ] {
        assert!(lines[0].contains(needle), "{:?} lacks {needle:?}", lines[0]);
    }
    assert!(run.run_dirs().is_empty(), "no run dir");
    assert!(run.fake_log().is_empty(), "no agent ran");
    // The same from `[budget] usd`.
    let config = repo.scratch.join("budget.toml");
    std::fs::write(&config, "[budget]\nusd = 1.0\n").unwrap();
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs", "--config", config.to_str().unwrap()])
        .run();
    run.assert_code(2);
    assert!(run.stderr.contains("--budget-tokens"), "{}", run.stderr);
    // A token budget needs no price.
    repo.arev()
        .args(&["run", "src/lib.rs", "--budget-tokens", "100000"])
        .run()
        .assert_code(0);
    // With a price the USD budget runs, and the cost is recorded.
    let repo = TestRepo::new();
    repo.write(
        "arev.toml",
        &local_config("[prices.\"local-coder\"]\ninput = 1.0\noutput = 2.0\n"),
    );
    repo.commit("config");
    // The Enthusiast answers once the Adversary's answer is recorded, so the Adversary is
    // not cancelled for having nothing to judge (docs/contracts.md §7): both answer.
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs", "--budget-usd", "1"])
        .script(json!({"steps": [
            {"role": "enthusiast", "wait_for": repo.adversary_recorded(1)}
        ]}))
        .run();
    run.assert_code(0);
    let per_dispatch = (100.0 * 1.0 + 50.0 * 2.0) / 1e6;
    let all = dispatches(&run);
    let roles: Vec<&str> = all.iter().map(|d| d["role"].as_str().unwrap()).collect();
    assert_eq!(roles.len(), 2, "{roles:?}");
    assert!(
        roles.contains(&"enthusiast") && roles.contains(&"adversary"),
        "{roles:?}"
    );
    for d in &all {
        assert_eq!(d["outcome"]["subtype"], "success", "{d}");
        let cost = d["outcome"]["cost_usd"].as_f64().unwrap();
        assert!((cost - per_dispatch).abs() < 1e-12, "{d}");
    }
    let total = run.report()["cost"]["usd"].as_f64().unwrap();
    assert!(
        (total - 2.0 * per_dispatch).abs() < 1e-12,
        "{}",
        run.report()["cost"]
    );
}

/// The script of a one-pass round whose Judge would confirm F1.
fn finder_script() -> Script {
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
}

/// A real CLI's review under a tiny `--budget-usd`: its first finished dispatch is priced
/// from the default table (Codex `gpt-5.5`, Gemini `gemini-2.5-pro`), passes the budget and
/// stops the round before the Judge — exit 3. (Priced at $0, as before, the whole review
/// ran and exited 1.)
fn assert_a_usd_budget_trips(run: &Run, judge_requests: usize) {
    assert_no_verdict(run);
    assert_eq!(judge_requests, 0, "the Judge reached the model");
    let cost = run.report()["cost"]["usd"].as_f64().unwrap();
    assert!(cost > 0.0005, "{}", run.report()["cost"]);
    let priced: Vec<Value> = dispatches(run)
        .into_iter()
        .filter(|d| d["outcome"]["subtype"] == "success")
        .collect();
    assert!(!priced.is_empty(), "a dispatch answered");
    for d in priced {
        assert!(d["outcome"]["cost_usd"].as_f64().unwrap() > 0.0, "{d}");
    }
}

#[test]
fn a_usd_budget_trips_with_the_real_codex_cli() {
    let Some(bin) = real_bin(
        "AREV_TEST_CODEX_BIN",
        "a_usd_budget_trips_with_the_real_codex_cli",
    ) else {
        return;
    };
    let repo = TestRepo::new();
    let fake = FakeOpenAi::start(finder_script());
    repo.write("arev.toml", &codex_agent(&bin, &fake));
    repo.commit("config");
    let home = repo.scratch.join("home");
    let mut arev = repo
        .arev()
        .args(&[
            "run",
            "src/lib.rs",
            "--agent",
            "codex",
            "--passes",
            "1",
            "--budget-usd",
            "0.0005",
        ])
        .env("AREV_AGENT_TIMEOUT", "120s");
    for (k, v) in fake.codex_env(&home) {
        arev = arev.env(k, &v);
    }
    let run = arev.run();
    let judged = fake
        .requests()
        .iter()
        .filter(|r| r.role() == Some("Judge"))
        .count();
    assert_a_usd_budget_trips(&run, judged);
}

#[test]
fn a_usd_budget_trips_with_the_real_gemini_cli() {
    let Some(bin) = real_bin(
        "AREV_TEST_GEMINI_BIN",
        "a_usd_budget_trips_with_the_real_gemini_cli",
    ) else {
        return;
    };
    let repo = TestRepo::new();
    let fake = FakeGemini::start(finder_script());
    repo.write("arev.toml", &gemini_agent(&bin));
    repo.commit("config");
    let home = repo.scratch.join("home");
    let mut arev = repo
        .arev()
        .args(&[
            "run",
            "src/lib.rs",
            "--agent",
            "gemini",
            "--passes",
            "1",
            "--budget-usd",
            "0.0005",
        ])
        .env("AREV_AGENT_TIMEOUT", "120s");
    for (k, v) in fake.gemini_env(&home) {
        arev = arev.env(k, &v);
    }
    let run = arev.run();
    let judged = fake
        .requests()
        .iter()
        .filter(|r| r.role() == Some("Judge"))
        .count();
    assert_a_usd_budget_trips(&run, judged);
}
