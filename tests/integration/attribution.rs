//! A mixed panel's "found by / ruled by" attribution survives every report arev assembles:
//! the merge of `--shard` runs and the report of `--iterate` (both sum the cost of several
//! reviews, and `cost.by_agent` is what marks a panel as mixed).

use crate::harness::{finding, ruling, TestRepo, LIB_RS};
use serde_json::{json, Value};

/// Two agents on the fake: the Judge runs as `second`, everything else as `claude`.
const MIXED: &str =
    "[agents.second]\nbackend = \"claude\"\nbinary = \"claude\"\n[roles]\njudge = \"second\"\n";

fn confirm(file: &str) -> Vec<Value> {
    vec![
        json!({"role": "enthusiast", "round": 1, "answer": {"findings": [finding("F1", file, 2, "high", "error-handling")]}}),
        json!({"role": "judge", "round": 1, "answer": {"rulings": [ruling("F1", file, 2, "high", "enthusiast")],
            "summary": "s", "convergence": false, "next_round_model": null}}),
    ]
}

fn assert_mixed(report: &Value, stdout: &str) {
    let by_agent = report["cost"]["by_agent"].as_object().unwrap();
    assert!(
        by_agent.contains_key("claude") && by_agent.contains_key("second"),
        "{by_agent:?}"
    );
    assert_eq!(report["confirmed"][0]["found_by"], json!(["claude"]));
    assert_eq!(report["confirmed"][0]["ruled_by"], "second");
    assert!(
        stdout.contains("found by claude · ruled by second"),
        "{stdout}"
    );
}

#[test]
fn a_merge_of_a_mixed_panel_names_who_found_and_who_ruled() {
    let repo = TestRepo::new();
    repo.write("src/m0.rs", LIB_RS).write("arev.toml", MIXED);
    repo.commit("panel");
    let files = ["src/lib.rs", "src/m0.rs"];
    let slots = arev::target::partition(&files, 2);
    let mut outs = vec![];
    for i in 1..=2u32 {
        let out = repo.scratch.join(format!("shard-{i}.json"));
        let mine: Vec<&str> = files
            .iter()
            .zip(&slots)
            .filter(|(_, s)| **s == i)
            .map(|(f, _)| *f)
            .collect();
        let steps: Vec<Value> = mine.iter().flat_map(|f| confirm(f)).collect();
        let run = repo
            .arev()
            .args(&[
                "run",
                "src/*.rs",
                "-q",
                "--shard",
                &format!("{i}/2"),
                "--max-rounds",
                "1",
                "--out",
                out.to_str().unwrap(),
            ])
            .script(json!({ "steps": steps }))
            .run();
        run.assert_code(if mine.is_empty() { 0 } else { 1 });
        outs.push(out.display().to_string());
    }
    let merged_json = repo.scratch.join("merged.json");
    let merged = repo
        .arev()
        .args(&[
            "merge",
            &outs[0],
            &outs[1],
            "--out",
            merged_json.to_str().unwrap(),
        ])
        .run();
    merged.assert_code(1);
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(&merged_json).unwrap()).unwrap();
    // Round-robin: one file, so one confirmed finding, per shard.
    assert_eq!(report["confirmed"].as_array().unwrap().len(), files.len());
    assert_mixed(&report, &merged.stdout);
}

#[test]
fn an_iterate_report_of_a_mixed_panel_names_who_found_and_who_ruled() {
    let repo = TestRepo::new();
    repo.write("arev.toml", MIXED);
    repo.commit("panel");
    // The Fixer changes nothing: the run stops (no-progress) with the review's finding.
    let mut steps = confirm("src/lib.rs");
    steps.push(json!({"role": "fixer", "answer": {"applied": [], "skipped": [{"finding_id": "F1", "reason": "cannot"}]}}));
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs", "--iterate", "--max-rounds", "1"])
        .script(json!({ "steps": steps }))
        .run();
    run.assert_code(1);
    let report = run.report();
    assert_eq!(report["iterate"]["stop_reason"], "no-progress");
    assert_mixed(&report, &run.stdout);
    // The Fixer's dispatch counts too.
    assert_eq!(report["cost"]["by_role"]["fixer"]["dispatches"], 1);
}
