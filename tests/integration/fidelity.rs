//! Protocol details of the source protocol (docs/architecture.md §19.6), each driven through
//! the real binary by scripted fake-agent answers: the near-convergence stop at opus, the
//! Judge's cites (one re-prompt, then unresolved), prior rulings to the Judge, spec sections
//! that must exist and every output pointing at the document, spec self-reference by
//! section, no re-prompt of a valid answer however short, the 0 % debunk escalation, and the identity check
//! of file-less rulings.

use crate::harness::{finding, ruling, Run, TestRepo};
use crate::sarif_schema;
use serde_json::{json, Value};

/// Two 60-line files: a FULL-mode manifest with room between findings.
fn full_repo() -> TestRepo {
    let repo = TestRepo::new();
    let body: String = (1..=60)
        .map(|i| format!("pub fn f{i}() -> u32 {{ {i} }}\n"))
        .collect();
    repo.write("src/lib.rs", &body)
        .write("src/b.rs", &body)
        .commit("long");
    repo
}

fn e(round: u32, findings: Vec<Value>) -> Value {
    json!({"role": "enthusiast", "round": round, "answer": {"findings": findings}})
}

fn j(round: u32, rulings: Vec<Value>) -> Value {
    json!({"role": "judge", "round": round, "answer": {"rulings": rulings, "summary": format!("round {round}"), "convergence": false, "next_round_model": null}})
}

fn f(id: &str, line: u32) -> Value {
    finding(id, "src/lib.rs", line, "high", "logic")
}

fn conf(id: &str, line: u32) -> Value {
    ruling(id, "src/lib.rs", line, "high", "enthusiast")
}

fn debunked(id: &str, line: u32) -> Value {
    ruling(id, "src/lib.rs", line, "dismissed", "adversary")
}

fn read(run: &Run, rel: &str) -> String {
    let p = run.run_dir().join(rel);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn reasons(run: &Run, round: u32) -> String {
    run.json(&format!("round-{round}.json"))["decision"]["reasons"].to_string()
}

#[test]
fn near_convergence_at_opus_stops_the_run() {
    let repo = full_repo();
    // Round 1: five findings (one debunked); round 2: one new finding, yield 1 < 0.4 × 5.
    let script = json!({"steps": [
        e(1, vec![f("F1", 5), f("F2", 15), f("F3", 25), f("F4", 35), f("F5", 45)]),
        j(1, vec![conf("F1", 5), conf("F2", 15), conf("F3", 25), conf("F4", 35), debunked("F5", 45)]),
        e(2, vec![f("F1", 55)]),
        j(2, vec![conf("F1", 55)]),
    ]});
    let run = repo
        .arev()
        .args(&["run", "src/*.rs", "--passes", "1"])
        .script(script)
        .run();
    run.assert_code(1);
    assert_eq!(run.meta()["stop_reason"], "all-self-reference");
    assert_eq!(run.meta()["rounds_completed"], 2);
    let r = reasons(&run, 2);
    assert!(r.contains("near-convergence at opus"), "{r}");
    assert_eq!(run.report()["confirmed"].as_array().unwrap().len(), 5);
}

fn adversary_map() -> Value {
    json!({"role": "adversary", "answer": {"heuristics": [], "safe_zones": [
        {"id": "Z1", "file": "src/lib.rs", "line_start": 1, "line_end": 3, "reason": "parse result handled", "evidence": "L2"}
    ]}})
}

fn citing(id: &str, line: u32, cites: &[&str]) -> Value {
    let mut r = debunked(id, line);
    r["cites"] = json!(cites);
    r
}

#[test]
fn cites_outside_the_map_are_re_prompted_once_then_accepted_when_fixed() {
    let repo = TestRepo::new();
    let script = json!({"steps": [
        adversary_map(),
        e(1, vec![finding("F1", "src/lib.rs", 2, "high", "logic")]),
        {"role": "judge", "round": 1, "retry": false, "answer": {"rulings": [citing("F1", 2, &["Z9"])], "summary": "s", "convergence": false, "next_round_model": null}},
        {"role": "judge", "round": 1, "retry": true, "answer": {"rulings": [citing("F1", 2, &["Z1"])], "summary": "s", "convergence": false, "next_round_model": null}},
    ]});
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs", "--max-rounds", "1"])
        .script(script)
        .run();
    run.assert_code(0);
    let retry = read(&run, "agents/r1/judge-retry/prompt.md");
    assert!(
        retry.contains("Your previous answer was rejected: the `cites` of 1 ruling(s) do not hold (F1: `Z9` is not an id of the Adversary's map)"),
        "{retry}"
    );
    let report = run.report();
    assert_eq!(report["debunked"][0]["cites"], json!(["Z1"]));
    assert!(report["unresolved"].as_array().unwrap().is_empty());
    let r1 = run.json("round-1.json");
    let judge = r1["dispatches"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["label"] == "judge")
        .unwrap()
        .clone();
    assert!(
        judge["gates"]["reprompt"]
            .as_str()
            .unwrap()
            .starts_with("cites:"),
        "{judge}"
    );
    // Each dispatch's answer size, as round-1.json gives it, is the one its outcome.json
    // points at in events.jsonl (the texts are dropped only after round-1.json is written).
    for d in r1["dispatches"].as_array().unwrap() {
        let dir = d["dir"].as_str().unwrap();
        let outcome = run.json(&format!("{dir}/outcome.json"));
        assert!(d["outcome"]["answer_bytes"].is_u64(), "{d}");
        assert_eq!(
            d["outcome"]["answer_bytes"], outcome["answer"]["bytes"],
            "{d}"
        );
    }
}

#[test]
fn cites_that_still_do_not_cover_the_line_leave_the_ruling_unresolved() {
    let repo = TestRepo::new();
    // Z1 covers lines 1–3; the ruling is at line 5.
    let script = json!({"steps": [
        adversary_map(),
        e(1, vec![finding("F1", "src/lib.rs", 5, "high", "logic")]),
        {"role": "judge", "round": 1, "answer": {"rulings": [citing("F1", 5, &["Z1"])], "summary": "s", "convergence": false, "next_round_model": null}},
    ]});
    let run = repo
        .arev()
        .args(&[
            "run",
            "src/lib.rs",
            "--max-rounds",
            "1",
            "--format",
            "sarif",
        ])
        .script(script)
        .run();
    run.assert_code(0);
    let retry = read(&run, "agents/r1/judge-retry/prompt.md");
    assert!(
        retry.contains("F1: `Z1` does not cover src/lib.rs:5"),
        "{retry}"
    );
    let report = run.report();
    assert_eq!(
        report["unresolved"].as_array().unwrap().len(),
        1,
        "{report}"
    );
    assert!(report["debunked"].as_array().unwrap().is_empty());
    let r1 = run.json("round-1.json");
    assert_eq!(r1["counts"]["unresolved"], 1);
    assert!(
        r1["errors"]
            .as_array()
            .unwrap()
            .contains(&json!("judge_invalid_cites")),
        "{r1}"
    );
    assert!(reasons(&run, 1).contains("F1 is unresolved: its cites do not hold"));
    // An unresolved finding is a SARIF result of kind review.
    let sarif = sarif_schema::assert_valid(&run.stdout, "unresolved-cites");
    assert_eq!(sarif["runs"][0]["results"][0]["kind"], "review");
}

#[test]
fn the_judge_gets_the_prior_rounds_rulings_with_their_severities() {
    let repo = full_repo();
    let mut r1 = conf("F1", 10);
    r1["resolution"] = json!("Confirmed: f10 returns a constant.");
    let script = json!({"steps": [
        e(1, vec![f("F1", 10), f("F2", 20)]),
        j(1, vec![r1, debunked("F2", 20)]),
        e(2, vec![f("F1", 40)]),
        j(2, vec![conf("F1", 40)]),
    ]});
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs", "--max-rounds", "2"])
        .script(script)
        .run();
    run.assert_code(1);
    let p = read(&run, "agents/r2/judge/prompt.md");
    let block = p
        .split("<prior_rulings>")
        .nth(1)
        .and_then(|b| b.split("</prior_rulings>").next())
        .unwrap_or_else(|| panic!("no prior rulings: {p}"));
    let list: Value = serde_json::from_str(block.trim()).unwrap();
    assert_eq!(list.as_array().unwrap().len(), 2, "{list}");
    assert_eq!(list[0]["round"], 1);
    assert_eq!(list[0]["file"], "src/lib.rs");
    assert_eq!(list[0]["line"], 10);
    assert_eq!(list[0]["final_severity"], "high");
    assert_eq!(list[0]["winner"], "enthusiast");
    assert_eq!(list[0]["resolution"], "Confirmed: f10 returns a constant.");
    assert_eq!(list[1]["final_severity"], "dismissed");
    assert!(p.contains("with the same final_severity"), "{p}");
    // Round 1's Judge has none.
    assert!(!read(&run, "agents/r1/judge/prompt.md").contains("<prior_rulings>"));
}

const SPEC: &str = "# Cache\n\n## Design\n\nThe cache keeps entries forever.\nEviction: TBD.\n\n## Rollout\n\nShip it.\nThen measure.\n\n### Metrics\n\nCount hits.\n";

fn spec_finding(id: &str, section: &str, line: Option<u32>) -> Value {
    json!({"id": id, "severity": "high", "target_type": "spec", "file": section, "line": line,
        "category": "requirement-gap", "description": "no eviction", "evidence": "L5: The cache keeps entries forever.",
        "source": "enthusiast", "prior_finding_id": null})
}

fn spec_ruling(id: &str, section: &str, line: Option<u32>) -> Value {
    json!({"finding_id": id, "file": section, "line": line, "target_type": "spec",
        "final_severity": "medium", "winner": "split", "resolution": "unbounded growth", "edit_instruction": null, "cites": []})
}

#[test]
fn an_invented_spec_section_aborts_the_review() {
    let repo = TestRepo::new();
    repo.write("docs/plan.md", SPEC).commit("spec");
    let script = json!({"steps": [
        {"role": "enthusiast", "round": 1, "answer": {"findings": [spec_finding("F1", "## Totally Invented Section", Some(5))]}},
    ]});
    let run = repo
        .arev()
        .args(&["run", "docs/plan.md", "--format", "sarif"])
        .script(script)
        .run();
    run.assert_code(3);
    assert_eq!(run.meta()["abort_reason"], "offtarget_hallucination");
    assert!(run.meta()["abort_detail"]
        .as_str()
        .unwrap()
        .contains("## Totally Invented Section"));
    let sarif = sarif_schema::assert_valid(&run.stdout, "spec-invented-section");
    assert_eq!(
        sarif["runs"][0]["invocations"][0]["executionSuccessful"],
        false
    );
    assert!(!run.stdout.contains("Totally%20Invented"), "{sarif}");
}

#[test]
fn spec_findings_point_at_the_document_and_the_heading_line_in_every_format() {
    let repo = TestRepo::new();
    repo.write("docs/plan.md", SPEC).commit("spec");
    // F1 names its section alone (no line): outputs use the heading's line (3).
    let script = json!({"steps": [
        {"role": "enthusiast", "round": 1, "answer": {"findings": [
            spec_finding("F1", "# Cache / ## design", None),
            spec_finding("F2", "## Rollout / ### Metrics", Some(15)),
        ]}},
        {"role": "judge", "round": 1, "answer": {"rulings": [
            spec_ruling("F1", "## Design", None), spec_ruling("F2", "## Rollout / ### Metrics", Some(15))
        ], "summary": "s", "convergence": false, "next_round_model": null}},
    ]});
    let sarif_path = repo.scratch.join("spec.sarif");
    let run = repo
        .arev()
        .args(&[
            "run",
            "docs/plan.md",
            "--max-rounds",
            "1",
            "--fail-on",
            "never",
            "--format",
            "github",
            "--sarif",
            sarif_path.to_str().unwrap(),
        ])
        .script(script)
        .run();
    run.assert_code(0);
    let report = run.report();
    let places: Vec<(Value, Value, Value)> = report["confirmed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["file"].clone(), c["line"].clone(), c["section"].clone()))
        .collect();
    assert_eq!(
        places,
        [
            (json!("docs/plan.md"), json!(3), json!("## Design")),
            (
                json!("docs/plan.md"),
                json!(15),
                json!("## Rollout / ### Metrics")
            ),
        ]
    );
    let sarif =
        sarif_schema::assert_valid(&std::fs::read_to_string(&sarif_path).unwrap(), "spec-track");
    for (i, line) in [(0, 3), (1, 15)] {
        let loc = &sarif["runs"][0]["results"][i]["locations"][0]["physicalLocation"];
        assert_eq!(loc["artifactLocation"]["uri"], "docs/plan.md", "{sarif}");
        assert_eq!(loc["region"]["startLine"], line);
    }
    assert_eq!(
        sarif["runs"][0]["results"][0]["properties"]["arev.section"],
        "## Design"
    );
    assert!(
        run.stdout.contains("::warning file=docs/plan.md,line=3,"),
        "{}",
        run.stdout
    );
    let md = read(&run, "report.md");
    assert!(
        md.contains("`docs/plan.md:15` (`## Rollout / ### Metrics`)"),
        "{md}"
    );
}

#[test]
fn spec_self_reference_is_the_same_section_not_five_lines() {
    let repo = TestRepo::new();
    let filler: String = (1..=20).map(|i| format!("Requirement {i}.\n")).collect();
    repo.write(
        "docs/plan.md",
        &format!("## Design\n\n{filler}\n## Rollout\n\nShip it.\n"),
    )
    .commit("spec");
    // Round 2 confirms another finding in ## Design, 17 lines from the first (far outside
    // ±5) but in the same section: self-reference, so the run stops at opus.
    let script = json!({"steps": [
        {"role": "enthusiast", "round": 1, "answer": {"findings": [spec_finding("F1", "## Design", Some(4))]}},
        {"role": "judge", "round": 1, "answer": {"rulings": [spec_ruling("F1", "## Design", Some(4))], "summary": "s", "convergence": false, "next_round_model": null}},
        {"role": "enthusiast", "round": 2, "answer": {"findings": [spec_finding("F1", "## Design", Some(21))]}},
        {"role": "judge", "round": 2, "answer": {"rulings": [spec_ruling("F1", "## Design", Some(21))], "summary": "s", "convergence": false, "next_round_model": null}},
    ]});
    let run = repo
        .arev()
        .args(&["run", "docs/plan.md", "--fail-on", "never"])
        .script(script)
        .run();
    run.assert_code(0);
    let r2 = run.json("round-2.json");
    assert_eq!(r2["counts"]["self_reference"], 1, "{r2}");
    assert_eq!(r2["counts"]["substantive"], 0);
    assert_eq!(run.meta()["stop_reason"], "all-self-reference");
    assert!(reasons(&run, 2).contains("rule 2"), "{}", reasons(&run, 2));
}

/// `(role, pass, round, retry)` of every agent process the run started.
fn dispatched(run: &Run) -> Vec<(String, Option<u64>, Option<u64>, bool)> {
    run.fake_log()
        .iter()
        .map(|l| {
            (
                l["role"].as_str().unwrap_or("").to_string(),
                l["pass"].as_u64(),
                l["round"].as_u64(),
                l["retry"].as_bool().unwrap_or(false),
            )
        })
        .collect()
}

#[test]
fn a_clean_review_dispatches_each_agent_exactly_once() {
    // The default fake answers `{"findings":[]}` (15 characters): a complete answer, never
    // re-prompted for being short (it once cost every clean review a second call).
    let clean = TestRepo::new();
    // Both passes answer once the Adversary's answer is recorded, so it is not cancelled
    // for having nothing to judge (docs/contracts.md §7): every agent answers once.
    let run = clean
        .arev()
        .args(&["run", "src/lib.rs", "--passes", "2"])
        .script(json!({"steps": [
            {"role": "enthusiast", "wait_for": clean.adversary_recorded(1)}
        ]}))
        .run();
    run.assert_code(0);
    let mut got = dispatched(&run);
    got.sort();
    let want = vec![
        ("adversary".to_string(), None, Some(1), false),
        ("enthusiast".to_string(), Some(1), Some(1), false),
        ("enthusiast".to_string(), Some(2), Some(1), false),
    ];
    assert_eq!(got, want, "one process per agent, no retry");
    let r1 = run.json("round-1.json");
    assert_eq!(r1["dispatches"].as_array().unwrap().len(), 3, "{r1}");
    for d in r1["dispatches"].as_array().unwrap() {
        assert_eq!(d["gates"]["schema"], "ok", "{d}");
        assert!(d["gates"].get("reprompt").is_none(), "{d}");
    }
    assert!(!run.run_dir().join("agents/r1/enthusiast-p1-retry").exists());
}

#[test]
fn empty_arrays_may_be_omitted_without_a_re_dispatch() {
    // Pass 1 answers `{}`, the Adversary leaves out `heuristics`: both valid. (Pass 2 has a
    // finding, so the Adversary's map is needed and awaited, not cancelled.)
    let repo = full_repo();
    let script = json!({"steps": [
        {"role": "enthusiast", "round": 1, "pass": 1, "answer": {}},
        {"role": "enthusiast", "round": 1, "pass": 2, "answer": {"findings": [f("F1", 2)]}},
        {"role": "adversary", "round": 1, "answer": {"safe_zones": [
            {"id": "Z1", "file": "src/lib.rs", "line_start": 1, "line_end": 3, "reason": "r", "evidence": "L2"}
        ]}},
        j(1, vec![debunked("F1", 2)]),
    ]});
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs", "--passes", "2"])
        .script(script)
        .run();
    run.assert_code(0);
    assert_eq!(dispatched(&run).len(), 4, "{:?}", dispatched(&run));
    let r1 = run.json("round-1.json");
    assert!(!r1["errors"].to_string().contains("malformed"), "{r1}");
    assert_eq!(r1["adversary"]["safe_zones"][0]["id"], "Z1", "{r1}");
    assert_eq!(r1["adversary"]["heuristics"], json!([]), "{r1}");
    // A really invalid answer is still re-dispatched once, with the parse error.
    let script = json!({"steps": [
        {"role": "enthusiast", "round": 1, "retry": false, "answer": {"findings": [{"id": "F1"}]}},
    ]});
    let repo = full_repo();
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs", "--passes", "1"])
        .script(script)
        .run();
    run.assert_code(0);
    let retry = read(&run, "agents/r1/enthusiast-p1-retry/prompt.md");
    assert!(
        retry.contains("Your previous answer was rejected: invalid JSON"),
        "{retry}"
    );
    assert_eq!(dispatched(&run).len(), 3, "{:?}", dispatched(&run));
}

#[test]
fn a_zero_debunk_rate_escalates_one_tier() {
    let repo = full_repo();
    let script = json!({"steps": [
        e(1, vec![f("F1", 10)]), j(1, vec![conf("F1", 10)]),
        e(2, vec![f("F1", 40)]), j(2, vec![conf("F1", 40), ]),
    ]});
    let run = repo
        .arev()
        .args(&[
            "run",
            "src/*.rs",
            "--model",
            "haiku",
            "--passes",
            "1",
            "--max-rounds",
            "2",
        ])
        .script(script)
        .run();
    run.assert_code(1);
    let r = reasons(&run, 1);
    assert!(
        r.contains("0 % debunk rate (1 ruling(s), none debunked) → escalate to sonnet"),
        "{r}"
    );
    assert_eq!(run.meta()["model_history"], json!(["haiku", "sonnet"]));
}

fn file_less(id: &str, resolution: &str) -> (Value, Value) {
    let mut fi = finding(id, "src/lib.rs", 1, "high", "design");
    fi["file"] = Value::Null;
    fi["line"] = Value::Null;
    let mut r = ruling(id, "src/lib.rs", 1, "high", "enthusiast");
    r["file"] = Value::Null;
    r["line"] = Value::Null;
    r["resolution"] = json!(resolution);
    (fi, r)
}

#[test]
fn the_identity_check_keys_file_less_rulings_by_their_resolution() {
    let run_with = |repo: &TestRepo, second: &str| {
        let (f1, r1) = file_less("F1", "The module has no error type at all.");
        let (f2, r2) = file_less("F1", second);
        let script = json!({"steps": [
            e(1, vec![f1]), j(1, vec![r1]),
            e(2, vec![f2]), j(2, vec![r2]),
        ]});
        repo.arev()
            .args(&[
                "run",
                "src/lib.rs",
                "--max-rounds",
                "3",
                "--fail-on",
                "never",
            ])
            .script(script)
            .run()
    };
    // The same file-less ruling again: identical rulings at opus → all-self-reference.
    let repo = TestRepo::new();
    let same = run_with(&repo, "The module has no error type at all.");
    same.assert_code(0);
    assert_eq!(same.meta()["stop_reason"], "all-self-reference");
    assert!(reasons(&same, 2).contains("rulings identical to the prior round"));
    // A different file-less ruling is new: the run goes on (round 3 finds nothing).
    let repo = TestRepo::new();
    let other = run_with(&repo, "Retries have no upper bound anywhere.");
    other.assert_code(0);
    assert_eq!(other.meta()["rounds_completed"], 3);
    assert_eq!(other.meta()["stop_reason"], "zero-findings");
}
