//! Review memory through the real binary: `--baseline` (new / unchanged / updated / fixed,
//! also when lines move), `--only-new`, suppressions (inline, `.arev/suppressions.toml`,
//! expiry, reasonless entries, `arev suppress`), `--incremental` (manifests with renamed and
//! deleted files, diffs) and the verdict cache.

use crate::harness::{finding, ruling, Run, TestRepo};
use crate::sarif_schema;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// The report a `--format json` run printed.
fn report(run: &Run) -> Value {
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not a report: {e}\n{}\n{}",
            run.stdout, run.stderr
        )
    })
}

fn judge(rulings: Vec<Value>) -> Value {
    json!({"rulings": rulings, "summary": "ruled", "convergence": false, "next_round_model": null})
}

/// One round: the Enthusiast reports `findings`, the Judge answers `rulings`.
fn script(findings: Vec<Value>, rulings: Vec<Value>) -> Value {
    json!({"steps": [
        {"role": "enthusiast", "answer": {"findings": findings}},
        {"role": "judge", "answer": judge(rulings)}
    ]})
}

/// One round in which the Judge confirms every finding, as (file, line, severity, category),
/// at its severity.
fn confirmed(found: &[(&str, u32, &str, &str)]) -> Value {
    let id = |i: usize| format!("F{}", i + 1);
    script(
        found
            .iter()
            .enumerate()
            .map(|(i, (file, line, sev, cat))| finding(&id(i), file, *line, sev, cat))
            .collect(),
        found
            .iter()
            .enumerate()
            .map(|(i, (file, line, sev, _))| ruling(&id(i), file, *line, sev, "enthusiast"))
            .collect(),
    )
}

/// Findings of `report[list]` as (category, line, baseline_state).
fn states(report: &Value, list: &str) -> Vec<(String, u64, String)> {
    let mut v: Vec<(String, u64, String)> = report[list]
        .as_array()
        .unwrap_or(&vec![])
        .iter()
        .map(|f| {
            (
                f["category"].as_str().unwrap().to_string(),
                f["line"].as_u64().unwrap_or(0),
                f["baseline_state"].as_str().unwrap_or("-").to_string(),
            )
        })
        .collect();
    v.sort();
    v
}

fn dispatches(run: &Run) -> usize {
    run.fake_log().len()
}

const V1: &str = "pub fn parse(s: &str) -> u32 {\n    s.parse().unwrap()\n}\n\npub fn id(x: u32) -> u32 { x }\n\npub fn half(x: u32) -> u32 {\n    x / 2\n}\n\npub fn gone() -> u32 {\n    danger()\n}\n";

/// V1 with three lines above everything and `gone` removed: every line moved by 3.
fn v2() -> String {
    let kept = V1.split("\npub fn gone").next().unwrap();
    format!("// header\n//\n\n{kept}\n")
}

#[test]
fn a_baseline_marks_findings_new_unchanged_updated_and_fixed_when_lines_move() {
    let repo = TestRepo::new();
    repo.write("src/lib.rs", V1).commit("v1");
    let args = ["run", "src/lib.rs", "--max-rounds", "1", "--format", "json"];
    let first = repo
        .arev()
        .args(&args)
        .script(confirmed(&[
            ("src/lib.rs", 2, "high", "error-handling"),
            ("src/lib.rs", 5, "medium", "logic"),
            ("src/lib.rs", 12, "high", "security"),
        ]))
        .run();
    first.assert_code(1);
    let base = report(&first);
    assert!(base.get("baseline").is_none() && base.get("absent").is_none());
    let base_id = base["run_id"].as_str().unwrap().to_string();

    // Every line moves by 3; `gone` (the security finding) is deleted; `logic` is now high;
    // a new arithmetic finding.
    repo.write("src/lib.rs", &v2());
    let second_script = script(
        vec![
            finding("F1", "src/lib.rs", 5, "high", "error-handling"),
            finding("F2", "src/lib.rs", 8, "medium", "logic"),
            finding("F3", "src/lib.rs", 11, "low", "arithmetic"),
        ],
        vec![
            ruling("F1", "src/lib.rs", 5, "high", "enthusiast"),
            ruling("F2", "src/lib.rs", 8, "high", "enthusiast"),
            ruling("F3", "src/lib.rs", 11, "low", "enthusiast"),
        ],
    );
    let sarif = repo.scratch.join("second.sarif");
    let second = repo
        .arev()
        .args(&args)
        .args(&["--baseline", &base_id, "--sarif", sarif.to_str().unwrap()])
        .script(second_script.clone())
        .run();
    second.assert_code(1);
    let r = report(&second);
    assert_eq!(
        states(&r, "confirmed"),
        [
            ("arithmetic".into(), 11, "new".into()),
            ("error-handling".into(), 5, "unchanged".into()),
            ("logic".into(), 8, "updated".into()),
        ]
    );
    assert_eq!(
        states(&r, "absent"),
        [("security".into(), 12, "absent".into())]
    );
    let b = &r["baseline"];
    assert_eq!(b["run_id"], base_id.as_str());
    assert_eq!(
        (
            &b["new"],
            &b["unchanged"],
            &b["updated"],
            &b["absent"],
            &b["only_new"]
        ),
        (&json!(1), &json!(1), &json!(1), &json!(1), &json!(false))
    );
    let meta: Value = serde_json::from_str(
        &std::fs::read_to_string(Path::new(r["run_dir"].as_str().unwrap()).join("meta.json"))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(meta["baseline_run_id"], base_id.as_str());
    // The fingerprints of the moved findings are the baseline's.
    let fp = |r: &Value, cat: &str| {
        r["confirmed"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["category"] == cat)
            .map(|f| f["fingerprint"].clone())
    };
    assert_eq!(fp(&r, "error-handling"), fp(&base, "error-handling"));

    // SARIF: baselineState on every result, the fixed one included (kind pass).
    let s = sarif_schema::assert_valid(&std::fs::read_to_string(&sarif).unwrap(), "baseline");
    let results = s["runs"][0]["results"].as_array().unwrap();
    let by_rule = |rule: &str| results.iter().find(|x| x["ruleId"] == rule).unwrap();
    assert_eq!(by_rule("arithmetic")["baselineState"], "new");
    assert_eq!(by_rule("error-handling")["baselineState"], "unchanged");
    assert_eq!(by_rule("logic")["baselineState"], "updated");
    assert_eq!(by_rule("security")["baselineState"], "absent");
    assert_eq!(by_rule("security")["kind"], "pass");

    // Text and Markdown group New / Still open / Fixed.
    let text = repo
        .arev()
        .args(&["report", r["run_id"].as_str().unwrap()])
        .run();
    text.assert_code(0);
    for part in ["New (2):", "Still open (1):", "Fixed (1):"] {
        assert!(text.stdout.contains(part), "{part}\n{}", text.stdout);
    }
    let md = std::fs::read_to_string(Path::new(r["run_dir"].as_str().unwrap()).join("report.md"))
        .unwrap();
    for part in ["### New (2)", "### Still open (1)", "### Fixed (1)"] {
        assert!(md.contains(part), "{part}\n{md}");
    }

    // --only-new against the second run: nothing is new, so nothing gates — but the report
    // still lists every finding. Without --only-new the unchanged high findings fail.
    let second_id = r["run_id"].as_str().unwrap().to_string();
    let third = repo
        .arev()
        .args(&args)
        .args(&["--baseline", &second_id, "--only-new"])
        .script(second_script.clone())
        .run();
    third.assert_code(0);
    let t = report(&third);
    assert_eq!(t["confirmed"].as_array().unwrap().len(), 3);
    assert_eq!(t["baseline"]["only_new"], true);
    let github = repo
        .arev()
        .args(&[
            "report",
            t["run_id"].as_str().unwrap(),
            "--format",
            "github",
        ])
        .args(&["--fail-on", "low"])
        .run();
    github.assert_code(0);
    assert!(!github.stdout.contains("::error") && !github.stdout.contains("::notice"));
    assert!(
        github
            .stdout
            .contains("0 new, 0 updated, 3 still open, 0 fixed"),
        "{}",
        github.stdout
    );
    repo.arev()
        .args(&args)
        .args(&["--baseline", &second_id])
        .script(second_script)
        .run()
        .assert_code(1);
}

#[test]
fn baseline_flags_are_checked_before_anything_runs() {
    let repo = TestRepo::new();
    for (argv, why) in [
        (&["run", "src/lib.rs", "--only-new"][..], "--baseline"),
        (&["run", "src/lib.rs", "--incremental"][..], "--baseline"),
        (
            &["run", "src/lib.rs", "--baseline", "nope"][..],
            "no run `nope`",
        ),
    ] {
        let run = repo.arev().args(argv).run();
        run.assert_code(2);
        assert!(run.stderr.contains(why), "{argv:?}: {}", run.stderr);
        assert!(run.run_dirs().is_empty(), "{argv:?} left a run dir");
    }
    // An aborted run has no verdict to compare with.
    let aborted = repo
        .arev()
        .args(&["run", "src/lib.rs", "--format", "json"])
        .script(json!({"steps": [{"role": "enthusiast", "read_target": false}]}))
        .run();
    aborted.assert_code(3);
    let id = report(&aborted)["run_id"].as_str().unwrap().to_string();
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs", "--baseline", &id])
        .run();
    run.assert_code(2);
    assert!(
        run.stderr.contains("no verdict to compare with"),
        "{}",
        run.stderr
    );
}

const SUPPRESSED_SRC: &str = "pub fn parse(s: &str) -> u32 {\n    // arev-ignore[error-handling]: the caller validates s\n    s.parse().unwrap()\n}\n\npub fn id(x: u32) -> u32 { x } // arev-ignore[logic]\n\npub fn half(x: u32) -> u32 {\n    x / 2\n}\n\npub fn twice(x: u32) -> u32 {\n    x * 2\n}\n";

#[test]
fn suppressions_keep_findings_from_the_judge_with_their_reasons() {
    let repo = TestRepo::new();
    repo.write("src/lib.rs", SUPPRESSED_SRC).commit("src");
    let fp = |line: u32, cat: &str| {
        arev::report::fingerprint(
            &repo.root,
            Some("src/lib.rs"),
            Some(line),
            cat,
            &format!("{cat} defect"),
        )
    };
    repo.write(
        ".arev/suppressions.toml",
        &format!(
            "[[suppress]]\nfingerprint = \"{}\"\nreason = \"halving is exact here\"\n\n\
             [[suppress]]\nfingerprint = \"{}\"\nreason = \"was fine once\"\nexpires = 2000-01-01\n",
            fp(9, "arithmetic"),
            fp(13, "overflow")
        ),
    );
    let sarif = repo.scratch.join("s.sarif");
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs", "--max-rounds", "1", "--format", "json"])
        .args(&["--sarif", sarif.to_str().unwrap()])
        .script(script(
            vec![
                finding("F1", "src/lib.rs", 3, "critical", "error-handling"),
                finding("F2", "src/lib.rs", 6, "medium", "logic"),
                finding("F3", "src/lib.rs", 9, "critical", "arithmetic"),
                finding("F4", "src/lib.rs", 13, "high", "overflow"),
            ],
            // The Judge sees only the logic finding (reasonless marker: not applied) and the
            // overflow one (expired entry), renumbered F1, F2.
            vec![
                ruling("F1", "src/lib.rs", 6, "medium", "enthusiast"),
                ruling("F2", "src/lib.rs", 13, "high", "enthusiast"),
            ],
        ))
        .run();
    run.assert_code(1);
    let r = report(&run);
    assert_eq!(
        states(&r, "confirmed"),
        [
            ("logic".into(), 6, "-".into()),
            ("overflow".into(), 13, "-".into())
        ]
    );
    let suppressed = r["suppressed"].as_array().unwrap();
    assert_eq!(suppressed.len(), 2, "{suppressed:#?}");
    let by_cat = |c: &str| suppressed.iter().find(|f| f["category"] == c).unwrap();
    let inline = &by_cat("error-handling")["suppression"];
    assert_eq!(inline["kind"], "in_source");
    assert_eq!(inline["justification"], "the caller validates s");
    assert_eq!(inline["source"], "src/lib.rs:2");
    let external = &by_cat("arithmetic")["suppression"];
    assert_eq!(external["kind"], "external");
    assert_eq!(external["justification"], "halving is exact here");
    assert_eq!(
        r["by_severity"]["critical"], 0,
        "suppressed findings never count"
    );
    // Warnings: the reasonless marker and the expired entry, in the report and on stderr.
    let warnings = r["warnings"].to_string();
    assert!(
        warnings.contains("src/lib.rs:6") && warnings.contains("without a reason"),
        "{warnings}"
    );
    assert!(warnings.contains("expired on 2000-01-01"), "{warnings}");
    assert!(
        run.stderr.contains("without a reason is not applied"),
        "{}",
        run.stderr
    );
    // The Judge never saw the suppressed findings; the round records them.
    let dir = PathBuf::from(r["run_dir"].as_str().unwrap());
    let judge_prompt = std::fs::read_to_string(dir.join("agents/r1/judge/prompt.md")).unwrap();
    assert!(
        !judge_prompt.contains("error-handling defect")
            && !judge_prompt.contains("arithmetic defect")
    );
    let round: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("round-1.json")).unwrap()).unwrap();
    assert_eq!(round["counts"]["suppressed"], 2);
    // SARIF: the suppressed findings are results with their suppressions.
    let s = sarif_schema::assert_valid(&std::fs::read_to_string(&sarif).unwrap(), "suppressions");
    let results = s["runs"][0]["results"].as_array().unwrap();
    let sup = |rule: &str| {
        results.iter().find(|x| x["ruleId"] == rule).unwrap()["suppressions"][0].clone()
    };
    assert_eq!(sup("error-handling")["kind"], "inSource");
    assert_eq!(
        sup("error-handling")["justification"],
        "the caller validates s"
    );
    assert_eq!(sup("arithmetic")["kind"], "external");
    assert!(results
        .iter()
        .find(|x| x["ruleId"] == "logic")
        .unwrap()
        .get("suppressions")
        .is_none());
}

#[test]
fn suppressed_findings_never_gate_nor_annotate() {
    let repo = TestRepo::new();
    repo.write("src/lib.rs", SUPPRESSED_SRC).commit("src");
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs", "--max-rounds", "1", "--fail-on", "low"])
        .args(&["--format", "github"])
        .script(script(
            vec![finding("F1", "src/lib.rs", 3, "critical", "error-handling")],
            vec![],
        ))
        .run();
    run.assert_code(0);
    assert!(!run.stdout.contains("::error"), "{}", run.stdout);
    assert!(
        run.stdout.contains("1 finding(s) suppressed"),
        "{}",
        run.stdout
    );
    assert!(
        !run.run_dir().join("agents/r1/judge").exists(),
        "nothing left to judge"
    );
}

#[test]
fn external_suppressions_need_a_reason_and_arev_suppress_appends_one() {
    let repo = TestRepo::new();
    repo.write(
        ".arev/suppressions.toml",
        "[[suppress]]\nfingerprint = \"0123456789abcdef0123456789abcdef\"\n",
    );
    let run = repo.arev().args(&["run", "src/lib.rs"]).run();
    run.assert_code(2);
    assert!(
        run.stderr
            .contains(".arev/suppressions.toml: [[suppress]] entry 1")
            && run.stderr.contains("no reason"),
        "{}",
        run.stderr
    );
    assert!(run.run_dirs().is_empty());
    std::fs::remove_file(repo.root.join(".arev/suppressions.toml")).unwrap();

    let first = repo
        .arev()
        .args(&["run", "src/lib.rs", "--max-rounds", "1", "--format", "json"])
        .script(confirmed(&[("src/lib.rs", 2, "high", "error-handling")]))
        .run();
    first.assert_code(1);
    let r = report(&first);
    let id = r["run_id"].as_str().unwrap();
    for (argv, why) in [
        (vec!["suppress", id, "F1", "--reason", "  "], "must say why"),
        (
            vec!["suppress", id, "F9", "--reason", "x"],
            "no finding `F9`",
        ),
        (
            vec!["suppress", id, "F1", "--reason", "x", "--expires", "soon"],
            "not a date",
        ),
    ] {
        let run = repo.arev().args(&argv).run();
        run.assert_code(2);
        assert!(run.stderr.contains(why), "{argv:?}: {}", run.stderr);
    }
    repo.arev()
        .args(&[
            "suppress",
            id,
            "F1",
            "--reason",
            "parse errors are impossible here",
        ])
        .run()
        .assert_code(0);
    let file = std::fs::read_to_string(repo.root.join(".arev/suppressions.toml")).unwrap();
    assert!(
        file.contains(r["confirmed"][0]["fingerprint"].as_str().unwrap()),
        "{file}"
    );
    assert!(
        file.contains("reason = \"parse errors are impossible here\""),
        "{file}"
    );
    let again = repo
        .arev()
        .args(&["suppress", id, "F1", "--reason", "twice"])
        .run();
    again.assert_code(2);
    assert!(
        again.stderr.contains("already suppressed"),
        "{}",
        again.stderr
    );

    // The next review of the same code: suppressed, exit 0, and (against the first run) the
    // finding is neither fixed nor new.
    let next = repo
        .arev()
        .args(&["run", "src/lib.rs", "--max-rounds", "1", "--format", "json"])
        .args(&["--baseline", id])
        .script(script(
            vec![finding("F1", "src/lib.rs", 2, "high", "error-handling")],
            vec![],
        ))
        .run();
    next.assert_code(0);
    let n = report(&next);
    assert_eq!(n["suppressed"][0]["suppression"]["kind"], "external");
    assert!(n["absent"].is_null() && n["confirmed"].as_array().unwrap().is_empty());
}

/// Four files, one error-handling finding on line 2 of each of a, b and c.
fn manifest_repo() -> TestRepo {
    let repo = TestRepo::new();
    for f in ["a", "b", "c", "d"] {
        repo.write(
            &format!("src/{f}.rs"),
            &format!("pub fn {f}(s: &str) -> u32 {{\n    s.parse().unwrap()\n}}\n"),
        );
    }
    repo.commit("files");
    repo
}

#[test]
fn incremental_manifests_review_changed_files_and_carry_the_rest() {
    let repo = manifest_repo();
    let args = [
        "run",
        "src/*.rs",
        "--max-rounds",
        "1",
        "--passes",
        "1",
        "--format",
        "json",
    ];
    let first = repo
        .arev()
        .args(&args)
        .script(script(
            ["a", "b", "c"]
                .iter()
                .enumerate()
                .map(|(i, f)| {
                    finding(
                        &format!("F{}", i + 1),
                        &format!("src/{f}.rs"),
                        2,
                        "high",
                        "error-handling",
                    )
                })
                .collect(),
            ["a", "b", "c"]
                .iter()
                .enumerate()
                .map(|(i, f)| {
                    ruling(
                        &format!("F{}", i + 1),
                        &format!("src/{f}.rs"),
                        2,
                        "high",
                        "enthusiast",
                    )
                })
                .collect(),
        ))
        .run();
    first.assert_code(1);
    let base = report(&first);
    let base_id = base["run_id"].as_str().unwrap().to_string();
    let before = dispatches(&first);

    // a unchanged; b's flagged line edited; c renamed to e; d deleted; f new.
    repo.write(
        "src/b.rs",
        "pub fn b(s: &str) -> u32 {\n    s.parse().unwrap_or(0)\n}\n",
    );
    std::fs::rename(repo.root.join("src/c.rs"), repo.root.join("src/e.rs")).unwrap();
    std::fs::remove_file(repo.root.join("src/d.rs")).unwrap();
    repo.write("src/f.rs", "pub fn f() {}\n");
    let second = repo
        .arev()
        .args(&args)
        .args(&["--baseline", &base_id, "--incremental"])
        .script(confirmed(&[("src/e.rs", 2, "high", "error-handling")]))
        .run();
    second.assert_code(1);
    let r = report(&second);
    let dir = PathBuf::from(r["run_dir"].as_str().unwrap());
    // The agents were given only the changed files.
    assert_eq!(
        std::fs::read_to_string(dir.join("target/manifest.txt")).unwrap(),
        "src/b.rs\nsrc/e.rs\nsrc/f.rs\n"
    );
    let log = second.fake_log();
    assert!(log.len() > before, "something was dispatched");
    for d in &log[before..] {
        assert_eq!(d["target_kind"], "manifest");
        assert!(d["target_path"]
            .as_str()
            .unwrap()
            .starts_with(dir.to_str().unwrap()));
    }
    // Coverage is the full picture.
    let coverage: Vec<(String, String)> = r["coverage"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().into(),
                f["status"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        coverage,
        [
            ("src/a.rs".to_string(), "carried_over".to_string()),
            ("src/b.rs".into(), "reviewed".into()),
            ("src/e.rs".into(), "reviewed".into()),
            ("src/f.rs".into(), "reviewed".into()),
            ("src/lib.rs".into(), "carried_over".into()),
        ]
    );
    assert_eq!(r["coverage"]["carried_over"], 2);
    assert_eq!(r["target"]["allowed_files"].as_array().unwrap().len(), 5);
    let inc = &r["incremental"];
    assert_eq!(inc["baseline_run_id"], base_id.as_str());
    assert_eq!(inc["reviewed"], json!(["src/b.rs", "src/e.rs", "src/f.rs"]));
    // a's finding is carried (unchanged); e's is new (a renamed file is another file); b's
    // and c's are fixed.
    let confirmed: Vec<(String, String, Value)> = r["confirmed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["file"].as_str().unwrap().into(),
                f["baseline_state"].as_str().unwrap().into(),
                f["carried_over_from"].clone(),
            )
        })
        .collect();
    assert_eq!(
        confirmed,
        [
            (
                "src/a.rs".to_string(),
                "unchanged".to_string(),
                json!(base_id)
            ),
            ("src/e.rs".into(), "new".into(), Value::Null),
        ]
    );
    let absent: Vec<&str> = r["absent"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["file"].as_str().unwrap())
        .collect();
    assert_eq!(absent, ["src/b.rs", "src/c.rs"]);

    // Nothing changed since the second run: nothing is dispatched, its verdict carries over.
    let before = second.fake_log().len();
    let third = repo
        .arev()
        .args(&args)
        .args(&["--baseline", r["run_id"].as_str().unwrap(), "--incremental"])
        .run();
    third.assert_code(1);
    assert_eq!(third.fake_log().len(), before, "nothing dispatched");
    let t = report(&third);
    assert_eq!(t["status"], "complete");
    assert_eq!(t["incremental"]["reviewed"], json!([]));
    assert_eq!(t["coverage"]["carried_over"], 5);
    assert_eq!(states(&t, "confirmed").len(), 2);
    assert!(states(&t, "confirmed").iter().all(|s| s.2 == "unchanged"));
}

#[test]
fn incremental_diffs_review_only_files_whose_change_changed() {
    let repo = TestRepo::new();
    repo.write("src/x.rs", "pub fn x(s: &str) -> u32 {\n    0\n}\n")
        .write("src/y.rs", "pub fn y() -> u32 {\n    1\n}\n")
        .commit("base");
    repo.write(
        "src/x.rs",
        "pub fn x(s: &str) -> u32 {\n    s.parse().unwrap()\n}\n",
    )
    .write("src/y.rs", "pub fn y() -> u32 {\n    1 / 0\n}\n");
    let args = ["run", "diff", "--max-rounds", "1", "--format", "json"];
    let first = repo
        .arev()
        .args(&args)
        .script(confirmed(&[
            ("src/x.rs", 2, "high", "error-handling"),
            ("src/y.rs", 2, "high", "arithmetic"),
        ]))
        .run();
    first.assert_code(1);
    let base = report(&first);
    let patch_sha = base["coverage"]["files"][0]["patch_sha256"].clone();
    assert!(
        patch_sha.is_string(),
        "diff coverage records a per-file patch digest"
    );

    // y's change is fixed (its diff is new); x's diff is byte-identical.
    repo.write("src/y.rs", "pub fn y() -> u32 {\n    1 / 1\n}\n");
    let second = repo
        .arev()
        .args(&args)
        .args(&[
            "--baseline",
            base["run_id"].as_str().unwrap(),
            "--incremental",
        ])
        .script(script(vec![], vec![]))
        .run();
    second.assert_code(1);
    let r = report(&second);
    let dir = PathBuf::from(r["run_dir"].as_str().unwrap());
    let patch = std::fs::read_to_string(dir.join("target/diff.patch")).unwrap();
    assert!(
        patch.contains("src/y.rs") && !patch.contains("src/x.rs"),
        "{patch}"
    );
    assert_eq!(r["incremental"]["reviewed"], json!(["src/y.rs"]));
    assert_eq!(
        states(&r, "confirmed"),
        [("error-handling".into(), 2, "unchanged".into())]
    );
    assert_eq!(
        states(&r, "absent"),
        [("arithmetic".into(), 2, "absent".into())]
    );
    assert_eq!(r["target"]["sha256"], r["target"]["sha256_final"]);
    assert_ne!(r["target"]["sha256"], r["incremental"]["reviewed_sha256"]);
}

fn cache_script() -> Value {
    confirmed(&[("src/lib.rs", 2, "high", "error-handling")])
}

#[test]
fn a_cache_hit_reuses_the_verdict_without_dispatching() {
    let repo = TestRepo::new();
    let cache = repo.scratch.join("shared-cache");
    let run = |extra: &[&str]| {
        repo.arev()
            .args(&["run", "src/lib.rs", "--max-rounds", "1", "--format", "json"])
            .args(extra)
            .env("XDG_CACHE_HOME", cache.to_str().unwrap())
            .script(cache_script())
            .run()
    };
    let first = run(&[]);
    first.assert_code(1);
    let a = report(&first);
    assert!(a.get("cached_from").is_none());
    let entries = std::fs::read_dir(cache.join("arev/verdicts"))
        .unwrap()
        .count();
    assert_eq!(entries, 1);
    let n = dispatches(&first);

    let second = run(&[]);
    second.assert_code(1);
    assert_eq!(dispatches(&second), n, "a hit dispatches nothing");
    let b = report(&second);
    assert_eq!(b["cached_from"], a["run_id"]);
    assert_ne!(b["run_id"], a["run_id"]);
    assert_eq!(b["status"], "complete");
    assert_eq!(b["stop_reason"], a["stop_reason"]);
    assert_eq!(b["confirmed"], a["confirmed"]);
    assert_eq!(b["rounds"], json!([]));
    assert_eq!(b["cost"]["usd"], 0.0);
    let dir = PathBuf::from(b["run_dir"].as_str().unwrap());
    let meta: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("meta.json")).unwrap()).unwrap();
    assert_eq!(meta["status"], "complete");
    assert_eq!(meta["cached_from"], a["run_id"]);
    assert!(dir.join("report.md").is_file());
    let runs = repo.arev().args(&["runs", "--json"]).run();
    assert!(runs.stdout.contains("\"cached_from\""), "{}", runs.stdout);

    // --no-cache reviews again.
    let third = run(&["--no-cache"]);
    third.assert_code(1);
    assert!(dispatches(&third) > n);
    assert!(report(&third).get("cached_from").is_none());
}

#[test]
fn a_changed_prompt_config_or_suppression_misses_the_cache() {
    let repo = TestRepo::new();
    let cache = repo.scratch.join("shared-cache");
    let run = || {
        let r = repo
            .arev()
            .args(&["run", "src/lib.rs", "--max-rounds", "1", "--format", "json"])
            .env("XDG_CACHE_HOME", cache.to_str().unwrap())
            .script(cache_script())
            .run();
        r.assert_code(1);
        report(&r).get("cached_from").cloned()
    };
    assert_eq!(run(), None);
    assert!(run().is_some(), "warm");
    // A repository override of the checklist changes a prompt.
    repo.write(
        ".arev/heuristics/code-escape-categories.md",
        "- check the parse calls\n",
    );
    assert_eq!(run(), None, "changed prompt");
    assert!(run().is_some());
    // A configuration change.
    repo.write("arev.toml", "[review]\nmax_output_bytes = 8388608\n");
    assert_eq!(run(), None, "changed config");
    assert!(run().is_some());
    // A new suppression.
    repo.write(
        ".arev/suppressions.toml",
        "[[suppress]]\nfingerprint = \"0123456789abcdef0123456789abcdef\"\nreason = \"r\"\n",
    );
    assert_eq!(run(), None, "changed suppressions");
    // A changed target.
    repo.write(
        "src/lib.rs",
        &format!("{}// more\n", crate::harness::LIB_RS),
    );
    assert_eq!(run(), None, "changed target");
}

#[test]
fn a_cache_dir_inside_the_repository_is_refused() {
    let repo = TestRepo::new();
    let inside = repo.root.join("cache");
    repo.write(
        "arev.toml",
        &format!("[cache]\ndir = \"{}\"\n", inside.display()),
    );
    let run = repo.arev().args(&["run", "src/lib.rs"]).run();
    run.assert_code(2);
    assert!(run.stderr.contains("[cache] dir"), "{}", run.stderr);
    let outside = repo.scratch.join("ci-cache");
    repo.write(
        "arev.toml",
        &format!("[cache]\ndir = \"{}\"\n", outside.display()),
    );
    repo.arev()
        .args(&["run", "src/lib.rs", "--max-rounds", "1"])
        .script(cache_script())
        .run()
        .assert_code(1);
    assert!(outside.join("verdicts").is_dir());
}

#[test]
fn a_default_cache_inside_the_repository_is_not_used() {
    let repo = TestRepo::new();
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs", "--max-rounds", "1"])
        .env("XDG_CACHE_HOME", repo.root.join("forged").to_str().unwrap())
        .script(cache_script())
        .run();
    run.assert_code(1);
    assert!(
        run.stderr.contains("inside the repository: not used"),
        "{}",
        run.stderr
    );
    assert!(!repo.root.join("forged").exists());
}

/// `arev run diff --base main` on a PR branch whose agents confirm one finding at
/// src/lib.rs:2.
fn review_pr(repo: &TestRepo, extra: &[&str]) -> Run {
    repo.arev()
        .args(&["run", "diff", "--base", "main", "--max-rounds", "1"])
        .args(&["--format", "json"])
        .args(extra)
        .script(confirmed(&[("src/lib.rs", 2, "high", "error-handling")]))
        .run()
}

/// The run gated (exit 1) on its one finding, suppressed nothing, and warned with a line
/// containing `needle`: the report and that line.
fn gated_unsuppressed(run: &Run, needle: &str) -> (Value, String) {
    run.assert_code(1);
    let r = report(run);
    let reviewed = states(&r, "confirmed")
        .into_iter()
        .filter(|s| s.0 != "unreviewed-change")
        .count();
    assert_eq!(reviewed, 1, "{r:#}");
    assert!(
        r["suppressed"].as_array().is_none_or(Vec::is_empty),
        "{r:#}"
    );
    let warning = run
        .stderr
        .lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no warning with {needle}: {}", run.stderr))
        .to_string();
    (r, warning)
}

#[test]
fn a_suppression_the_change_adds_applies_only_when_its_tree_is_trusted() {
    let repo = TestRepo::new();
    repo.git(&["checkout", "-q", "-b", "pr"]);
    repo.write(
        "src/lib.rs",
        &crate::harness::LIB_RS.replace("s.parse()", "s.trim().parse()"),
    )
    .commit("pr: trim");
    let fp = arev::report::fingerprint(
        &repo.root,
        Some("src/lib.rs"),
        Some(2),
        "error-handling",
        "error-handling defect",
    );
    // The pull request adds a suppression of the very finding its change causes.
    let entry = format!("[[suppress]]\nfingerprint = \"{fp}\"\nreason = \"trust me\"\n");
    repo.write(".arev/suppressions.toml", &entry);
    let run = |extra: &[&str]| review_pr(&repo, extra);
    let files = |run: &Run| {
        let dir = PathBuf::from(report(run)["run_dir"].as_str().unwrap());
        let meta: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("meta.json")).unwrap()).unwrap();
        meta["repo_inputs"]["files"].clone()
    };

    // `--base` reads repository inputs from the merge-base: the PR's suppression is not
    // applied, and the warning names the file.
    let base = run(&[]);
    let (_, warning) = gated_unsuppressed(&base, "--repo-config worktree");
    assert!(warning.contains(".arev/suppressions.toml"), "{warning}");
    assert_eq!(files(&base), json!([]));

    // `--repo-config worktree` trusts the checked-out tree: the suppression applies.
    let wt = run(&["--repo-config", "worktree"]);
    wt.assert_code(0);
    let r = report(&wt);
    assert!(states(&r, "confirmed").is_empty(), "{r:#}");
    let sup = &r["suppressed"][0]["suppression"];
    assert_eq!(sup["kind"], "external");
    assert_eq!(sup["justification"], "trust me");
    assert_eq!(files(&wt), json!([".arev/suppressions.toml"]));

    // `ignore` reads none.
    let ignored = run(&["--repo-config", "ignore"]);
    ignored.assert_code(1);
    assert_eq!(files(&ignored), json!([]));

    // Once the suppression is on the base branch, `--base` applies it (read from the
    // merge-base commit).
    std::fs::remove_file(repo.root.join(".arev/suppressions.toml")).unwrap();
    repo.git(&["checkout", "-q", "main"]);
    repo.write(".arev/suppressions.toml", &entry);
    repo.git(&["add", "-f", ".arev/suppressions.toml"]);
    repo.git(&["commit", "-q", "-m", "accept the finding"]);
    repo.git(&["checkout", "-q", "pr"]);
    repo.git(&["rebase", "-q", "main"]);
    let base = run(&[]);
    base.assert_code(0);
    let r = report(&base);
    assert_eq!(
        r["suppressed"][0]["suppression"]["justification"],
        "trust me"
    );
    assert_eq!(files(&base), json!([".arev/suppressions.toml"]));
}

#[test]
fn an_inline_suppression_the_change_adds_is_not_honoured_from_an_untrusted_tree() {
    let repo = TestRepo::new();
    repo.git(&["checkout", "-q", "-b", "pr"]);
    // The pull request's change and, on its own flagged line, a marker silencing it.
    let marked = "s.trim().parse().unwrap() // arev-ignore: trust me";
    repo.write(
        "src/lib.rs",
        &crate::harness::LIB_RS.replace("s.parse().unwrap()", marked),
    )
    .commit("pr: trim, and silence the reviewer");
    let run = |extra: &[&str]| review_pr(&repo, extra);

    // `--base`: the merge-base has no such line, so the marker is not honoured; the finding
    // gates and the warning names the marker's place.
    let base = run(&[]);
    let (r, warning) = gated_unsuppressed(&base, "src/lib.rs:2: `arev-ignore` is not applied");
    assert!(warning.contains("the merge-base"), "{warning}");
    assert!(
        r["warnings"]
            .to_string()
            .contains("src/lib.rs:2: `arev-ignore` is not applied"),
        "{r:#}"
    );

    // `ignore`: no tree is trusted, no marker honoured.
    run(&["--repo-config", "ignore"]).assert_code(1);

    // `worktree` trusts the checked-out tree: the marker applies.
    let wt = run(&["--repo-config", "worktree"]);
    wt.assert_code(0);
    let sup = &report(&wt)["suppressed"][0]["suppression"];
    assert_eq!(
        (&sup["kind"], &sup["justification"]),
        (&json!("in_source"), &json!("trust me"))
    );

    // Once the marked line is on the base branch, a later change to the file is reviewed under
    // `--base` with that (reviewed, merged) marker honoured.
    repo.git(&["checkout", "-q", "main"]);
    repo.git(&["merge", "-q", "--ff-only", "pr"]);
    repo.git(&["checkout", "-q", "pr"]);
    repo.write(
        "src/lib.rs",
        &crate::harness::LIB_RS
            .replace("s.parse().unwrap()", marked)
            .replace("pub fn parse", "pub(crate) fn parse"),
    )
    .commit("pr: narrow parse");
    let later = run(&[]);
    let r = report(&later);
    assert_eq!(
        r["suppressed"][0]["suppression"]["source"], "src/lib.rs:2",
        "{r:#}"
    );
    later.assert_code(0);
}

#[test]
fn a_copy_of_an_existing_marker_above_the_changes_own_code_is_not_honoured() {
    let repo = TestRepo::new();
    // The base branch has a reviewed, merged marker for its own code at the end of the file.
    let vetted = "// arev-ignore: vetted, ids are checked upstream";
    let base_text = format!("{}{vetted}\npub fn legacy() {{}}\n", crate::harness::LIB_RS);
    repo.write("src/lib.rs", &base_text)
        .commit("main: a vetted marker");
    repo.git(&["checkout", "-q", "-b", "pr"]);
    // The pull request copies that very line above its own new code (line 2, flagged).
    let pr_text = format!(
        "{vetted}\npub fn parse(s: &str) -> u32 {{ s.trim().parse().unwrap() }}\n{}",
        base_text
            .lines()
            .skip(3)
            .map(|l| format!("{l}\n"))
            .collect::<String>()
    );
    repo.write("src/lib.rs", &pr_text)
        .commit("pr: copy a marker");
    let base = review_pr(&repo, &[]);
    let (_, warning) = gated_unsuppressed(&base, "src/lib.rs:1: `arev-ignore` is not applied");
    assert!(warning.contains("at this place"), "{warning}");
    // The trusted tree's own marker, where it is, still counts (worktree trusts all).
    review_pr(&repo, &["--repo-config", "worktree"]).assert_code(0);
}

#[test]
fn the_review_context_is_part_of_the_cache_key() {
    let repo = TestRepo::new();
    let cache = repo.scratch.join("shared-cache");
    let intent = repo.scratch.join("intent.md");
    std::fs::write(&intent, "Make parse total.\n").unwrap();
    let run = |extra: &[&str]| {
        let r = repo
            .arev()
            .args(&["run", "src/lib.rs", "--max-rounds", "1", "--format", "json"])
            .args(extra)
            .env("XDG_CACHE_HOME", cache.to_str().unwrap())
            .script(cache_script())
            .run();
        r.assert_code(1);
        report(&r).get("cached_from").cloned()
    };
    assert_eq!(run(&[]), None);
    assert!(run(&[]).is_some(), "warm");
    // --focus.
    assert_eq!(run(&["--focus", "error handling"]), None, "new focus");
    assert!(run(&["--focus", "error handling"]).is_some());
    assert_eq!(run(&["--focus", "overflow"]), None, "changed focus");
    // Project rules: added, then changed.
    repo.write("REVIEW.md", "A panic on user input is critical.\n");
    assert_eq!(run(&[]), None, "new rules");
    assert!(run(&[]).is_some());
    repo.write("REVIEW.md", "A panic on user input is low.\n");
    assert_eq!(run(&[]), None, "changed rule");
    assert!(run(&[]).is_some());
    // --intent, --exclude and --repo-config.
    let intent_arg = ["--intent", intent.to_str().unwrap()];
    assert_eq!(run(&intent_arg), None, "an intent");
    assert!(run(&intent_arg).is_some());
    std::fs::write(&intent, "Make parse fast.\n").unwrap();
    assert_eq!(run(&intent_arg), None, "changed intent");
    assert_eq!(run(&["--exclude", "docs/**"]), None, "changed excludes");
    assert_eq!(
        run(&["--repo-config", "ignore"]),
        None,
        "other repository inputs"
    );
    // Path instructions (configuration, whose text also reaches the agents).
    repo.write(
        "arev.toml",
        "[[review.paths]]\nglob = \"src/**\"\ninstructions = \"check the parse calls\"\n",
    );
    assert_eq!(run(&[]), None, "path instructions");
    assert!(run(&[]).is_some());
}
