//! Multi-round reviews (docs/architecture.md §11) with the scripted fake agent: each of the
//! five stop reasons, the tier the CLI received in every round, RELEVANT_FILES, spec
//! targets, localization and progress.

use crate::harness::{finding, ruling, Run, TestRepo};
use serde_json::{json, Value};

/// A 60-line file so findings can be far apart.
fn long_repo() -> TestRepo {
    let repo = TestRepo::new();
    let body: String = (1..=60)
        .map(|i| format!("pub fn f{i}() -> u32 {{ {i} }}\n"))
        .collect();
    repo.write("src/lib.rs", &body).commit("long");
    repo
}

fn e(round: u32, findings: Vec<Value>) -> Value {
    json!({"role": "enthusiast", "round": round, "answer": {"findings": findings}})
}

fn j(round: u32, rulings: Vec<Value>) -> Value {
    json!({"role": "judge", "round": round, "answer": {"rulings": rulings, "summary": format!("round {round}"), "convergence": false, "next_round_model": null}})
}

fn f(id: &str, line: u32, sev: &str) -> Value {
    finding(id, "src/lib.rs", line, sev, "logic")
}

fn r(id: &str, line: u32, sev: &str) -> Value {
    ruling(id, "src/lib.rs", line, sev, "enthusiast")
}

/// The `--model` value each dispatch of `round` received.
fn tiers(run: &Run, round: u64) -> Vec<String> {
    run.fake_log()
        .iter()
        .filter(|l| l["round"] == round)
        .map(|l| {
            let argv: Vec<String> = serde_json::from_value(l["argv"].clone()).unwrap();
            crate::harness::flag_value(&argv, "--model").unwrap()
        })
        .collect()
}

fn assert_round_tier(run: &Run, round: u64, tier: &str) {
    let t = tiers(run, round);
    assert!(!t.is_empty(), "round {round} dispatched nothing");
    assert!(
        t.iter().all(|x| x == tier),
        "round {round}: {t:?} != {tier}"
    );
}

fn decision(run: &Run, round: u32) -> Value {
    run.json(&format!("round-{round}.json"))["decision"].clone()
}

#[test]
fn zero_findings_after_a_confirmation_round_at_opus() {
    let repo = long_repo();
    // haiku → round 2 finds nothing below opus → confirmation round 3 at opus → stop.
    let script =
        json!({"steps": [e(1, vec![f("F1", 10, "medium")]), j(1, vec![r("F1", 10, "medium")])]});
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs", "--model", "haiku"])
        .script(script)
        .run();
    run.assert_code(0);
    assert_eq!(run.meta()["stop_reason"], "zero-findings");
    assert_round_tier(&run, 1, "haiku");
    assert_round_tier(&run, 2, "haiku");
    assert_round_tier(&run, 3, "opus");
    assert_eq!(decision(&run, 2)["action"], "continue");
    assert_eq!(decision(&run, 2)["next_tier"], "opus");
    assert!(decision(&run, 2)["reasons"]
        .to_string()
        .contains("confirmation round at opus"));
    assert_eq!(decision(&run, 3)["stop_reason"], "zero-findings");
    assert_eq!(
        run.meta()["model_history"],
        json!(["haiku", "haiku", "opus"])
    );
}

#[test]
fn all_self_reference_stops_at_opus() {
    let repo = long_repo();
    let mut again = f("F1", 30, "medium");
    again["prior_finding_id"] = json!("F1");
    let script = json!({"steps": [
        e(1, vec![f("F1", 10, "high")]), j(1, vec![r("F1", 10, "high")]),
        e(2, vec![again]), j(2, vec![r("F1", 30, "medium")])
    ]});
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs"])
        .script(script)
        .run();
    run.assert_code(1);
    assert_eq!(run.meta()["stop_reason"], "all-self-reference");
    assert_round_tier(&run, 1, "opus");
    assert_round_tier(&run, 2, "opus");
    let r2 = run.json("round-2.json");
    assert_eq!(r2["counts"]["self_reference"], 1);
    assert_eq!(r2["counts"]["substantive"], 0);
    // The round-2 Enthusiast prompt carried the blocklist with the earlier finding's id.
    let p =
        std::fs::read_to_string(run.run_dir().join("agents/r2/enthusiast-p1/prompt.md")).unwrap();
    assert!(p.contains("src/lib.rs:10 (round 1 F1)"), "{p}");
}

#[test]
fn anti_divergence_halt_after_two_worsening_rounds() {
    let repo = long_repo();
    let script = json!({"steps": [
        e(1, vec![f("F1", 10, "medium")]), j(1, vec![r("F1", 10, "medium")]),
        e(2, vec![f("F1", 20, "medium"), f("F2", 30, "medium")]), j(2, vec![r("F1", 20, "medium"), r("F2", 30, "medium")]),
        e(3, vec![f("F1", 40, "medium"), f("F2", 50, "medium"), f("F3", 58, "medium")]),
        j(3, vec![r("F1", 40, "medium"), r("F2", 50, "medium"), r("F3", 58, "medium")])
    ]});
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs", "--max-rounds", "5"])
        .script(script)
        .run();
    run.assert_code(0);
    assert_eq!(run.meta()["stop_reason"], "anti-divergence-halt");
    assert_eq!(run.meta()["rounds_completed"], 3);
    for round in 1..=3 {
        assert_round_tier(&run, round, "opus");
    }
    assert!(decision(&run, 2)["reasons"]
        .to_string()
        .contains("worsening rounds = 1"));
    assert_eq!(run.report()["confirmed"].as_array().unwrap().len(), 6);
}

#[test]
fn max_rounds_with_escalation_in_full_mode() {
    let repo = long_repo();
    repo.write("src/b.rs", "pub fn b() {}\n").commit("b");
    // FULL (manifest), starting at haiku; the Judge asks for sonnet after round 1.
    let script = json!({"steps": [
        e(1, vec![f("F1", 10, "medium")]),
        {"role": "judge", "round": 1, "answer": {"rulings": [r("F1", 10, "medium")], "summary": "s", "convergence": false, "next_round_model": "sonnet"}},
        e(2, vec![f("F1", 40, "medium")]), j(2, vec![r("F1", 40, "medium")])
    ]});
    let run = repo
        .arev()
        .args(&[
            "run",
            "src/*.rs",
            "--model",
            "haiku",
            "--max-rounds",
            "2",
            "--passes",
            "1",
        ])
        .script(script)
        .run();
    run.assert_code(0);
    assert_eq!(run.meta()["stop_reason"], "max-rounds");
    assert_round_tier(&run, 1, "haiku");
    assert_round_tier(&run, 2, "sonnet");
    // Round 1: the Judge asks for sonnet; round 2: nothing debunked (0 % debunk rate).
    assert_eq!(
        run.report()["quality"]["escalations"],
        json!(["round 1: haiku → sonnet", "round 2: sonnet → opus"])
    );
    assert!(decision(&run, 2)["reasons"]
        .to_string()
        .contains("max rounds"));
}

#[test]
fn budget_exhausted_stops_the_run() {
    let repo = long_repo();
    let script =
        json!({"steps": [e(1, vec![f("F1", 10, "medium")]), j(1, vec![r("F1", 10, "medium")])]});
    // Every fake dispatch costs $0.01: round 1 spends $0.03.
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs", "--budget-usd", "0.025"])
        .script(script)
        .run();
    run.assert_code(0);
    assert_eq!(run.meta()["stop_reason"], "budget-exhausted");
    assert_round_tier(&run, 1, "opus");
    assert!(decision(&run, 1)["reasons"]
        .to_string()
        .contains("spent $0.0300 of $0.025"));
    repo.arev()
        .args(&["run", "src/lib.rs", "--budget-usd", "-1"])
        .run()
        .assert_code(2);
}

#[test]
fn relevant_files_budget_in_round_two() {
    let repo = TestRepo::new();
    repo.write("src/a.rs", "pub fn a() {}\n")
        .write("src/c.rs", "pub fn c() {}\n")
        .commit("more");
    let script = json!({"steps": [
        e(1, vec![finding("F1", "src/a.rs", 1, "high", "logic")]),
        j(1, vec![ruling("F1", "src/a.rs", 1, "high", "enthusiast")])
    ]});
    let run = repo
        .arev()
        .args(&["run", "src/*.rs", "--passes", "1"])
        .script(script)
        .run();
    run.assert_code(1);
    let dir = run.run_dir();
    assert_eq!(
        std::fs::read_to_string(dir.join("target/relevant-2.txt")).unwrap(),
        "src/a.rs\n"
    );
    let r2: Vec<Value> = run
        .fake_log()
        .into_iter()
        .filter(|l| l["round"] == 2)
        .collect();
    assert!(!r2.is_empty());
    for l in &r2 {
        assert_eq!(l["target_kind"], "relevant_manifest");
        assert!(l["target_path"]
            .as_str()
            .unwrap()
            .ends_with("target/relevant-2.txt"));
    }
    assert_eq!(
        run.json("round-2.json")["relevant_files"],
        json!(["src/a.rs"])
    );
    assert_eq!(run.meta()["stop_reason"], "zero-findings");
}

#[test]
fn spec_targets_use_spec_agents_and_sections() {
    let repo = TestRepo::new();
    repo.write("docs/plan.md", "# Cache\n\n## Design\n\nThe cache keeps entries forever.\nEviction: TBD.\n\n## Phase 2\n\nWill add metrics.\n")
        .commit("spec");
    let spec_finding = json!({"id": "F1", "severity": "high", "target_type": "spec", "file": "# Cache / ## Design",
        "line": 5, "category": "requirement-gap", "description": "no eviction", "evidence": "The cache keeps entries forever.",
        "source": "enthusiast", "prior_finding_id": null});
    let spec_ruling = json!({"finding_id": "F1", "file": "# Cache / ## Design", "line": 5, "target_type": "spec",
        "final_severity": "medium", "winner": "split", "resolution": "unbounded growth", "edit_instruction": null, "cites": []});
    let script = json!({"steps": [
        {"role": "enthusiast", "round": 1, "answer": {"findings": [spec_finding]}},
        {"role": "judge", "round": 1, "answer": {"rulings": [spec_ruling], "summary": "s", "convergence": false, "next_round_model": null}}
    ]});
    let run = repo
        .arev()
        .args(&["run", "docs/plan.md", "--max-rounds", "1"])
        .script(script)
        .run();
    run.assert_code(0);
    let report = run.report();
    assert_eq!(report["target"]["target_type"], "spec");
    assert_eq!(report["target"]["mode"], "FULL");
    // Outputs point at the document and the line; the section is canonical.
    assert_eq!(report["confirmed"][0]["file"], "docs/plan.md");
    assert_eq!(report["confirmed"][0]["line"], 5);
    assert_eq!(report["confirmed"][0]["section"], "## Design");
    let first = &run.fake_log()[0];
    let argv: Vec<String> = serde_json::from_value(first["argv"].clone()).unwrap();
    let sys = &crate::harness::flag_value(&argv, "--system-prompt").unwrap();
    assert!(sys.to_lowercase().contains("section"), "spec body expected");
    let p =
        std::fs::read_to_string(run.run_dir().join("agents/r1/enthusiast-p1/prompt.md")).unwrap();
    assert!(
        !p.contains("## Escape checklist (code targets)") && !sys.contains("## Escape checklist"),
        "no code checklist for specs"
    );
    // A code target's Enthusiast gets the checklist after its role body, in the system
    // prompt every pass and round shares (the cacheable prefix), not in the per-round prompt.
    // The Enthusiast finds something, so the Adversary is never cancelled for having
    // nothing to judge before its (logged) dispatch started.
    let code_repo = TestRepo::new();
    let code_run = code_repo
        .arev()
        .args(&["run", "src/lib.rs", "--max-rounds", "1"])
        .script(json!({"steps": [
            crate::harness::a_finding_to_judge(),
            {"role": "judge", "answer": {"rulings": [ruling("F1", "src/lib.rs", 2, "high", "enthusiast")],
                "summary": "s", "convergence": false, "next_round_model": null}}
        ]}))
        .run();
    code_run.assert_code(1);
    let code =
        std::fs::read_to_string(code_run.run_dir().join("agents/r1/enthusiast-p1/prompt.md"))
            .unwrap();
    assert!(!code.contains("## Escape checklist (code targets)"));
    let log = code_run.fake_log();
    let enthusiast = log.iter().find(|l| l["role"] == "enthusiast").unwrap();
    let argv: Vec<String> = serde_json::from_value(enthusiast["argv"].clone()).unwrap();
    let sys = &crate::harness::flag_value(&argv, "--system-prompt").unwrap();
    assert!(
        sys.starts_with("# Role: Enthusiast") && sys.contains("## Escape checklist (code targets)"),
        "code targets get the checklist"
    );
    let adversary = log.iter().find(|l| l["role"] == "adversary").unwrap();
    let argv: Vec<String> = serde_json::from_value(adversary["argv"].clone()).unwrap();
    let sys = &crate::harness::flag_value(&argv, "--system-prompt").unwrap();
    assert!(
        !sys.contains("## Escape checklist"),
        "only the Enthusiast's"
    );
}

#[test]
fn localization_block_reaches_all_roles_when_configured() {
    let repo = TestRepo::new();
    repo.write(
        "arev.toml",
        "[localization]\nprimary = \"en\"\nallowed = [\"de\"]\n",
    )
    .commit("cfg");
    let script = json!({"steps": [e(1, vec![f("F1", 2, "low")]), j(1, vec![r("F1", 2, "low")])]});
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs"])
        .script(script)
        .run();
    run.assert_code(0);
    for a in ["enthusiast-p1", "adversary", "judge"] {
        let p = std::fs::read_to_string(run.run_dir().join("agents/r1").join(a).join("prompt.md"))
            .unwrap();
        assert!(
            p.contains("<localization primary=\"en\" allowed=\"de\">"),
            "{a}"
        );
    }
    let plain = TestRepo::new();
    let run = plain.arev().args(&["run", "src/lib.rs"]).run();
    let p = std::fs::read_to_string(run.run_dir().join("agents/r1/adversary/prompt.md")).unwrap();
    assert!(!p.contains("<localization"), "no block when not configured");
}

#[test]
fn progress_lines_with_live_counts() {
    let repo = TestRepo::new();
    let script = json!({"steps": [e(1, vec![f("F1", 2, "high")]), j(1, vec![r("F1", 2, "high")])]});
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs", "--max-rounds", "1"])
        .env("AREV_PROGRESS", "1")
        .script(script.clone())
        .run();
    for line in [
        "Round 1 · opus · 1 Enthusiast pass(es) ∥ Adversary",
        "Round 1 · Enthusiast pass 1/1 (1 finding(s))",
        "Round 1 · Adversary (0 heuristic(s), 0 safe zone(s))",
        "Round 1 · Judge (1 confirmed, 0 debunked)",
    ] {
        assert!(
            run.stderr.contains(line),
            "missing {line:?} in {}",
            run.stderr
        );
    }
    // Not a TTY (and with -q): no progress.
    let quiet = repo
        .arev()
        .args(&["run", "src/lib.rs", "--max-rounds", "1"])
        .script(script.clone())
        .run();
    assert!(!quiet.stderr.contains("Round 1"), "{}", quiet.stderr);
    let q = repo
        .arev()
        .args(&["run", "src/lib.rs", "--max-rounds", "1", "-q"])
        .env("AREV_PROGRESS", "1")
        .script(script)
        .run();
    assert!(!q.stderr.contains("Round 1"), "{}", q.stderr);
}
