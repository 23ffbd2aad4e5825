//! A model without a price through the real path (docs/configuration.md "Budgets and
//! `[prices]`"): the fake agent in Codex's format on `local-coder`, which has no default
//! price, as the Adversary beside a priced Claude-format Enthusiast, and as every role.
//! Each rendering — the text report, report.md, report.json, summary.json, `arev runs` and
//! its `--json` — gives the known part and says "price unknown", never `$0`.

use crate::harness::{Run, TestRepo};
use serde_json::{json, Value};

const FAKE: &str = env!("CARGO_BIN_EXE_arev-fake-agent");

/// The `local` agent: the fake in Codex's format on `local-coder` (no price), taking the
/// roles in `roles`.
fn config(roles: &str) -> String {
    format!(
        "[agents.local]\nbackend = \"command\"\nbinary = \"{FAKE}\"\nformat = \"codex\"\n\
         extra_args = [\"--event-format\", \"codex\", \"--model\", \"{{model}}\"]\n\
         [agents.local.models]\nhaiku = \"local-coder\"\nsonnet = \"local-coder\"\nopus = \"local-coder\"\n\
         [roles]\n{roles}"
    )
}

/// A review in which the Enthusiast answers once the Adversary's answer is recorded, so
/// that both answer (docs/contracts.md §7), and the run's report.md, `arev runs` and
/// `arev runs --json`.
fn review(repo: &TestRepo) -> (Run, String, String, Value) {
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs"])
        .script(json!({"steps": [
            {"role": "enthusiast", "wait_for": repo.adversary_recorded(1)}
        ]}))
        .run();
    run.assert_code(0);
    let md = std::fs::read_to_string(run.run_dir().join("report.md")).unwrap();
    let runs = repo.arev().args(&["runs"]).run();
    runs.assert_code(0);
    let json = repo.arev().args(&["runs", "--json"]).run();
    json.assert_code(0);
    let listed: Value = serde_json::from_str(&json.stdout).unwrap();
    (run, md, runs.stdout, listed)
}

/// The Adversary's dispatch in round-1.json.
fn adversary(run: &Run) -> Value {
    run.json("round-1.json")["dispatches"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["role"] == "adversary")
        .unwrap()
        .clone()
}

/// A priced Enthusiast (the fake as Claude Code, which reports its cost) and an unpriced
/// Adversary: the total is the Enthusiast's cost, the Adversary's tokens are counted as
/// unpriced and named with their agent and model, and every rendering says so.
#[test]
fn a_mixed_panel_reports_the_known_cost_and_the_unpriced_model() {
    let repo = TestRepo::new();
    repo.write(
        "arev.toml",
        &config("enthusiast = \"claude\"\nadversary = \"local\"\njudge = \"local\"\n"),
    );
    repo.commit("config");
    let (run, md, runs, listed) = review(&repo);
    let adv = adversary(&run);
    assert_eq!(adv["outcome"]["agent"], "local", "{adv}");
    assert_eq!(adv["outcome"]["unpriced"], true, "{adv}");
    // The fake's 100 input and 50 output tokens.
    let unpriced = adv["outcome"]["tokens"].as_u64().unwrap();
    assert_eq!(unpriced, 150, "{adv}");
    let report = run.report();
    let cost = &report["cost"];
    let enthusiast = &cost["by_role"]["enthusiast"];
    assert!(enthusiast["usd"].as_f64().unwrap() > 0.0, "{cost}");
    assert!(enthusiast.get("unpriced_tokens").is_none(), "{cost}");
    assert_eq!(cost["usd"], enthusiast["usd"], "the known part: {cost}");
    assert_eq!(cost["unpriced_tokens"], 150, "{cost}");
    assert_eq!(
        cost["unpriced"],
        json!([{"agent": "local", "model": "local-coder", "tokens": 150}]),
        "{cost}"
    );
    assert_eq!(cost["by_agent"]["local"]["unpriced_tokens"], 150, "{cost}");
    assert_eq!(report["rounds"][0]["unpriced_tokens"], 150, "{report}");
    let usd = format!("${:.4}", cost["usd"].as_f64().unwrap());
    // The text report on stdout.
    let line = run
        .stdout
        .lines()
        .find(|l| l.starts_with("cost: "))
        .unwrap();
    assert!(
        line.starts_with(&format!("cost: {usd} + price unknown, ")),
        "{line}"
    );
    assert!(line.contains("adversary price unknown"), "{line}");
    assert!(
        run.stdout
            .contains("price unknown for local-coder (agent local, 150 tokens)"),
        "{}",
        run.stdout
    );
    // report.md (the PR summary's rendering).
    assert!(
        md.contains(&format!("Cost: {usd} + price unknown, ")),
        "{md}"
    );
    assert!(
        md.contains("**Price unknown** for `local-coder` (agent `local`, 150 tokens)"),
        "{md}"
    );
    // summary.json and `arev runs`.
    let summary = run.json("summary.json");
    assert_eq!(summary["unpriced_tokens"], 150, "{summary}");
    assert!(runs.contains(&format!("{usd} + price unknown")), "{runs}");
    assert_eq!(listed[0]["unpriced_tokens"], 150, "{listed}");
    assert_eq!(listed[0]["cost_usd"], cost["usd"], "{listed}");
}

/// Every role on the unpriced model: no rendering shows a dollar figure for the run.
#[test]
fn an_all_unpriced_run_reads_price_unknown_never_zero_dollars() {
    let repo = TestRepo::new();
    repo.write(
        "arev.toml",
        &config("enthusiast = \"local\"\nadversary = \"local\"\njudge = \"local\"\n"),
    );
    repo.commit("config");
    let (run, md, runs, listed) = review(&repo);
    assert_eq!(adversary(&run)["outcome"]["unpriced"], true);
    let report = run.report();
    let cost = &report["cost"];
    assert_eq!(cost["usd"], 0.0, "{cost}");
    assert_eq!(cost["unpriced_tokens"], cost["tokens"], "{cost}");
    assert_eq!(cost["unpriced_tokens"], 300, "two dispatches: {cost}");
    let line = run
        .stdout
        .lines()
        .find(|l| l.starts_with("cost: "))
        .unwrap();
    assert_eq!(
        line,
        "cost: price unknown, 300 tokens in 1 round(s) (enthusiast price unknown · adversary price unknown)"
    );
    assert!(!run.stdout.contains("$0"), "{}", run.stdout);
    assert!(md.contains("Cost: price unknown, 300 tokens."), "{md}");
    assert!(!md.contains("$0"), "{md}");
    let row = runs
        .lines()
        .find(|l| l.contains(run.run_dir().file_name().unwrap().to_str().unwrap()))
        .unwrap();
    assert!(row.contains("price unknown") && !row.contains('$'), "{row}");
    assert_eq!(listed[0]["unpriced_tokens"], 300, "{listed}");
}
