//! Review context (docs/architecture.md §19) through the real binary: project rules in
//! every role's prompt and readable, the 8 KB cap, path instructions only for matching
//! files, excludes (globs, `--exclude`, `.gitattributes` generated/vendored, lockfiles)
//! listed in the coverage for diffs and globs, and `--focus`.

use crate::harness::{finding, ruling, Run, TestRepo};
use serde_json::{json, Value};

fn prompt(run: &Run, round: u32, dir: &str) -> String {
    let p = run
        .run_dir()
        .join(format!("agents/r{round}"))
        .join(dir)
        .join("prompt.md");
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// (path, reason) of every skipped file in the report's coverage.
fn skipped(report: &Value) -> Vec<(String, String)> {
    report["coverage"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["status"] == "skipped")
        .map(|f| {
            let reason = f["reason"].as_str().unwrap().to_string();
            let reason = match f["glob"].as_str() {
                Some(g) => format!("{reason}:{g}"),
                None => reason,
            };
            (f["path"].as_str().unwrap().to_string(), reason)
        })
        .collect()
}

/// The run dir of a `--format json` run (several runs share the runs base).
fn run_dir_of(run: &Run) -> std::path::PathBuf {
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    std::path::PathBuf::from(report["run_dir"].as_str().unwrap())
}

fn one_finding() -> Value {
    json!({"steps": [
        {"role": "enthusiast", "round": 1, "answer": {"findings": [finding("F1", "src/lib.rs", 2, "high", "error-handling")]}},
        {"role": "judge", "round": 1, "answer": {"rulings": [ruling("F1", "src/lib.rs", 2, "critical", "split")],
            "summary": "1 confirmed", "convergence": false, "next_round_model": null}}
    ]})
}

#[test]
fn project_rules_reach_every_role_and_may_be_read_but_not_reported_on() {
    let repo = TestRepo::new();
    repo.write(
        "REVIEW.md",
        "# Review rules\n\nA missing tenant filter is critical.\n",
    )
    .write(".arev/rules.md", "Never log a token.\n")
    .commit("rules");
    let mut script = one_finding();
    // The Enthusiast reads the rules (allowed) and names one in a finding (dropped).
    script["steps"][0]["reads"] = json!(["REVIEW.md", ".arev/rules.md"]);
    script["steps"][0]["answer"]["findings"]
        .as_array_mut()
        .unwrap()
        .push(finding("F2", "REVIEW.md", 3, "low", "docs"));
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs", "--max-rounds", "1"])
        .script(script)
        .run();
    run.assert_code(1);
    for (dir, mandate) in [
        ("enthusiast-p1", "use that severity"),
        ("adversary", "a safe zone still needs evidence"),
        ("judge", "say so in `resolution`"),
    ] {
        let p = prompt(&run, 1, dir);
        assert!(
            p.contains("<project_rules files=\"REVIEW.md, .arev/rules.md\">"),
            "{dir}: {p}"
        );
        assert!(p.contains("A missing tenant filter is critical."), "{dir}");
        assert!(p.contains("Never log a token."), "{dir}");
        assert!(p.contains(mandate), "{dir}: {mandate}");
    }
    let r1 = run.json("round-1.json");
    assert_eq!(r1["errors"], json!(["rules_file_finding"]), "{r1}");
    let report = run.report();
    assert_eq!(report["confirmed"].as_array().unwrap().len(), 1);
    assert_eq!(report["confirmed"][0]["file"], "src/lib.rs");
    // Rules files are context, never target files.
    assert_eq!(report["target"]["allowed_files"], json!(["src/lib.rs"]));
    assert_eq!(run.meta()["status"], "complete");
}

#[test]
fn reading_a_rules_file_is_off_target_when_there_are_no_rules() {
    let repo = TestRepo::new();
    // Untracked, so outside the context scope too.
    repo.write("NOTES.md", "not rules\n");
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs"])
        .script(json!({"steps": [{"role": "enthusiast", "reads": ["NOTES.md"], "answer": {"findings": []}}]}))
        .run();
    run.assert_code(3);
    assert_eq!(run.meta()["abort_reason"], "enthusiast_offtarget_read");
}

#[test]
fn rules_over_8_kb_in_all_exit_2_naming_the_files() {
    let repo = TestRepo::new();
    let half = "x".repeat(5000);
    repo.write("REVIEW.md", &half)
        .write(".arev/rules.md", &half)
        .commit("rules");
    let run = repo.arev().args(&["run", "src/lib.rs"]).run();
    run.assert_code(2);
    assert!(
        run.stderr
            .contains("REVIEW.md (5000 bytes), .arev/rules.md (5000 bytes)"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("10000 bytes in all"), "{}", run.stderr);
    assert!(run.run_dirs().is_empty(), "no run dir on exit 2");
}

#[test]
fn configured_rules_replace_the_defaults_and_must_exist() {
    let repo = TestRepo::new();
    repo.write("REVIEW.md", "default rules\n")
        .write(
            "docs/review.md",
            "Configured rule: SQL must be parameterised.\n",
        )
        .write("arev.toml", "[review]\nrules = [\"docs/review.md\"]\n")
        .commit("rules");
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs", "--max-rounds", "1"])
        .run();
    run.assert_code(0);
    let e = prompt(&run, 1, "enthusiast-p1");
    assert!(
        e.contains("<project_rules files=\"docs/review.md\">"),
        "{e}"
    );
    assert!(e.contains("SQL must be parameterised."));
    assert!(!e.contains("default rules"));
    repo.write("arev.toml", "[review]\nrules = [\"docs/missing.md\"]\n");
    let run = repo.arev().args(&["run", "src/lib.rs"]).run();
    run.assert_code(2);
    assert!(
        run.stderr
            .contains("[review] rules: docs/missing.md: no such file"),
        "{}",
        run.stderr
    );
}

#[test]
fn path_instructions_only_when_the_target_has_matching_files() {
    let repo = TestRepo::new();
    repo.write(
        "arev.toml",
        "[[review.paths]]\nglob = \"migrations/**\"\ninstructions = \"Every migration must be reversible.\"\n\n\
         [[review.paths]]\nglob = \"web/**\"\ninstructions = \"No inline scripts.\"\n",
    )
    .write("migrations/001.sql", "CREATE TABLE t (id int);\n")
    .commit("cfg");
    let run = repo
        .arev()
        .args(&[
            "run",
            "migrations/001.sql",
            "src/lib.rs",
            "--max-rounds",
            "1",
        ])
        .run();
    run.assert_code(0);
    for dir in ["enthusiast-p1", "adversary"] {
        let p = prompt(&run, 1, dir);
        assert!(p.contains("<path_instructions>"), "{dir}");
        assert!(
            p.contains(
                "- `migrations/**` (`migrations/001.sql`): Every migration must be reversible."
            ),
            "{dir}: {p}"
        );
        assert!(
            !p.contains("No inline scripts."),
            "{dir}: unmatched glob sent"
        );
    }
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs", "--max-rounds", "1", "--format", "json"])
        .run();
    let p = std::fs::read_to_string(run_dir_of(&run).join("agents/r1/enthusiast-p1/prompt.md"))
        .unwrap();
    assert!(!p.contains("<path_instructions>"), "{p}");
    // A bad glob is a usage error naming it.
    repo.write(
        "arev.toml",
        "[[review.paths]]\nglob = \"a/[\"\ninstructions = \"x\"\n",
    );
    let run = repo.arev().args(&["run", "src/lib.rs"]).run();
    run.assert_code(2);
    assert!(
        run.stderr.contains("[[review.paths]] glob `a/[`"),
        "{}",
        run.stderr
    );
}

/// A repo with generated, vendored, lockfile and excluded changes next to one real change.
fn excluded_repo() -> TestRepo {
    let repo = TestRepo::new();
    repo.write(
        ".gitattributes",
        "gen/** linguist-generated\nthird_party/** linguist-vendored\n",
    )
    .write("arev.toml", "[review]\nexclude = [\"*.min.js\"]\n")
    .commit("attrs");
    repo.write(
        "src/lib.rs",
        "pub fn parse(s: &str) -> u32 {\n    s.parse().unwrap_or(0)\n}\n",
    )
    .write("Cargo.lock", "# lock\n")
    .write("gen/api.rs", "pub fn generated() {}\n")
    .write("third_party/z.c", "int z;\n")
    .write("web/app.min.js", "var a=1;\n")
    .write("docs/tmp.md", "scratch\n");
    repo
}

#[test]
fn excludes_in_a_diff_are_left_out_and_listed_with_their_reason() {
    let repo = excluded_repo();
    let run = repo
        .arev()
        .args(&[
            "run",
            "diff",
            "--exclude",
            "docs/**",
            "--max-rounds",
            "1",
            "--format",
            "markdown",
        ])
        .run();
    run.assert_code(0);
    let report = run.report();
    assert_eq!(report["target"]["allowed_files"], json!(["src/lib.rs"]));
    let mut got = skipped(&report);
    got.sort();
    assert_eq!(
        got,
        [
            ("Cargo.lock".to_string(), "lockfile".to_string()),
            ("docs/tmp.md".into(), "excluded:docs/**".into()),
            ("gen/api.rs".into(), "generated".into()),
            ("third_party/z.c".into(), "vendored".into()),
            ("web/app.min.js".into(), "excluded:*.min.js".into()),
        ]
    );
    let patch = std::fs::read_to_string(run.run_dir().join("target/diff.patch")).unwrap();
    assert!(
        patch.contains("src/lib.rs") && !patch.contains("Cargo.lock"),
        "{patch}"
    );
    assert!(!patch.contains("gen/api.rs") && !patch.contains("app.min.js"));
    assert!(
        run.stdout
            .contains("`web/app.min.js` (excluded:\\*.min.js)")
            || run.stdout.contains("`web/app.min.js` (excluded:*.min.js)"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("`gen/api.rs` (generated)"),
        "{}",
        run.stdout
    );
    // Lockfiles can be reviewed on request.
    repo.write(
        "arev.toml",
        "[review]\nexclude = [\"*.min.js\"]\nskip_lockfiles = false\n",
    );
    let run = repo
        .arev()
        .args(&["run", "diff", "--max-rounds", "1", "--format", "json"])
        .run();
    run.assert_code(0);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    let allowed = report["target"]["allowed_files"].to_string();
    assert!(allowed.contains("Cargo.lock"), "{allowed}");
    assert!(allowed.contains("arev.toml"), "{allowed}");
}

#[test]
fn excludes_apply_to_globs_and_directories_but_never_to_a_named_file() {
    let repo = excluded_repo();
    repo.commit("all");
    let run = repo
        .arev()
        .args(&["run", ".", "--max-rounds", "1", "--passes", "1"])
        .run();
    run.assert_code(0);
    let report = run.report();
    let got = skipped(&report);
    for want in [
        ("Cargo.lock", "lockfile"),
        ("gen/api.rs", "generated"),
        ("third_party/z.c", "vendored"),
        ("web/app.min.js", "excluded:*.min.js"),
    ] {
        assert!(
            got.contains(&(want.0.to_string(), want.1.to_string())),
            "{want:?} in {got:?}"
        );
    }
    let allowed = report["target"]["allowed_files"].to_string();
    assert!(allowed.contains("src/lib.rs") && !allowed.contains("gen/api.rs"));
    // Named explicitly: reviewed, alone or in a list.
    let run = repo
        .arev()
        .args(&["run", "gen/api.rs", "--max-rounds", "1", "--format", "json"])
        .run();
    run.assert_code(0);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["target"]["allowed_files"], json!(["gen/api.rs"]));
    let run = repo
        .arev()
        .args(&[
            "run",
            "Cargo.lock",
            "src/lib.rs",
            "--max-rounds",
            "1",
            "--format",
            "json",
        ])
        .run();
    run.assert_code(0);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        report["target"]["allowed_files"],
        json!(["Cargo.lock", "src/lib.rs"])
    );
    // A glob that matches only excluded files has nothing to review: exit 2.
    let run = repo.arev().args(&["run", "gen/*.rs"]).run();
    run.assert_code(2);
    assert!(
        run.stderr.contains("1 generated: gen/api.rs"),
        "{}",
        run.stderr
    );
    // A bad --exclude glob names itself.
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs", "--exclude", "x/["])
        .run();
    run.assert_code(2);
    assert!(run.stderr.contains("`x/[`"), "{}", run.stderr);
}

#[test]
fn focus_goes_to_the_enthusiasts_and_the_judge_and_the_flag_wins() {
    let repo = TestRepo::new();
    repo.write("arev.toml", "[review]\nfocus = \"error handling\"\n")
        .commit("cfg");
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs", "--max-rounds", "1"])
        .script(one_finding())
        .run();
    run.assert_code(1);
    assert!(prompt(&run, 1, "enthusiast-p1").contains("<focus>\nerror handling\n"));
    assert!(prompt(&run, 1, "judge").contains("<focus>\nerror handling\n"));
    assert!(!prompt(&run, 1, "adversary").contains("<focus>"));
    let run = repo
        .arev()
        .args(&[
            "run",
            "src/lib.rs",
            "--max-rounds",
            "1",
            "--focus",
            "authorization checks",
            "--format",
            "json",
        ])
        .script(one_finding())
        .run();
    run.assert_code(1);
    let e = std::fs::read_to_string(run_dir_of(&run).join("agents/r1/enthusiast-p1/prompt.md"))
        .unwrap();
    assert!(e.contains("<focus>\nauthorization checks\n"), "{e}");
    assert!(!e.contains("error handling\n\nLook"), "the flag wins: {e}");
}
