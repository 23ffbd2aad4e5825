//! `arev eval mine|run|compare` through the real binary: scripted histories (a defect
//! introduced then fixed, a refactor that says "fix", a whitespace-only "fix", a fix over two
//! files, a merge), the fake agent confirming or missing the defect, exact scores, the
//! tolerance edge, resumption, parallel jobs, Ctrl-C, hand-written cases.

use crate::harness::{finding, group_members, ruling, TestRepo};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// src/util.rs as the defect introduced it: `first` reads index 1.
const UTIL_BUGGY: &str = "pub fn first(v: &[u32]) -> u32 {\n    v[1]\n}\n\npub fn last(v: &[u32]) -> u32 {\n    v[v.len() - 1]\n}\n\npub fn mid(v: &[u32]) -> u32 {\n    v[v.len() / 2]\n}\n\npub fn sum(v: &[u32]) -> u32 {\n    v.iter().sum()\n}\n";

/// The commits of `history()`.
struct History {
    repo: TestRepo,
    /// The defect's introduction (buggy revision of the first fix).
    introduce: String,
    fix_first: String,
    rename: String,
    whitespace: String,
    fix_two_files: String,
    typo: String,
    merge: String,
}

fn head(repo: &TestRepo) -> String {
    repo.git(&["rev-parse", "HEAD"]).trim().to_string()
}

/// init → add helpers (defect) → fix it (+ a new test file) → rename (says "fix") →
/// whitespace-only "fix" → a fix across two files (a change and a pure insertion) →
/// README (no match) → README typo "fix" → a side branch merged with a "fix" message.
fn history() -> History {
    let repo = TestRepo::new();
    repo.write("src/util.rs", UTIL_BUGGY)
        .commit("add slice helpers");
    let introduce = head(&repo);
    repo.write("src/util.rs", &UTIL_BUGGY.replace("v[1]", "v[0]"))
        .write(
            "tests/util.rs",
            "#[test]\nfn first() { assert_eq!(arev_util::first(&[1, 2]), 1); }\n",
        )
        .commit("Fix off-by-one in first()");
    let fix_first = head(&repo);
    repo.git(&["mv", "src/util.rs", "src/helpers.rs"]);
    repo.commit("fix naming: rename util.rs to helpers.rs");
    let rename = head(&repo);
    let helpers = UTIL_BUGGY.replace("v[1]", "v[0]");
    repo.write(
        "src/helpers.rs",
        &helpers.replace("    v.iter().sum()", "        v.iter().sum()"),
    )
    .commit("Fix sum in helpers");
    let whitespace = head(&repo);
    let helpers = helpers.replace("    v.iter().sum()", "        v.iter().sum()");
    repo.write(
        "src/helpers.rs",
        &helpers.replace(
            "pub fn mid(v: &[u32]) -> u32 {\n",
            "pub fn mid(v: &[u32]) -> u32 {\n    if v.is_empty() {\n        return 0;\n    }\n",
        ),
    )
    .write(
        "src/lib.rs",
        &crate::harness::LIB_RS.replace("s.parse().unwrap()", "s.parse().unwrap_or(0)"),
    )
    .commit("Bugfix: parse panics on bad input; mid of an empty slice");
    let fix_two_files = head(&repo);
    repo.write("README.md", "# demo\n").commit("update README");
    repo.write("README.md", "# Demo\n")
        .commit("fix typo in README");
    let typo = head(&repo);
    repo.git(&["checkout", "-q", "-b", "side"]);
    repo.write("notes.txt", "side\n").commit("side work");
    repo.git(&["checkout", "-q", "main"]);
    repo.git(&[
        "merge",
        "-q",
        "--no-ff",
        "side",
        "-m",
        "Merge fix from side",
    ]);
    let merge = head(&repo);
    History {
        repo,
        introduce,
        fix_first,
        rename,
        whitespace,
        fix_two_files,
        typo,
        merge,
    }
}

fn short(sha: &str) -> &str {
    &sha[..12]
}

fn read_json(p: &Path) -> Value {
    let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap()
}

/// Assert `v` is valid against `schemas/<name>.schema.json`.
fn assert_schema(name: &str, v: &Value) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("schemas/{name}.schema.json"));
    let schema = read_json(&path);
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(v)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{name}: {errors:#?}");
}

fn mine_into(h: &History, out: &Path, extra: &[&str]) -> crate::harness::Run {
    let mut args = vec!["eval", "mine", "--out", out.to_str().unwrap()];
    args.extend_from_slice(extra);
    h.repo.arev().args(&args).run()
}

#[test]
fn mine_turns_fix_commits_into_cases_and_says_why_others_are_skipped() {
    let h = history();
    let before = h.repo.state();
    let out = h.repo.scratch.join("cases");
    let run = mine_into(&h, &out, &[]);
    run.assert_code(0);
    let expected_stdout = format!(
        "skip {}  merge commit  — Merge fix from side\n\
         skip {}  not a defect fix: a typo chore by its subject (--allow-chores typo to keep it)  — fix typo in README\n\
         case fix-{}  src/helpers.rs:9-10, src/lib.rs:2-2  — Bugfix: parse panics on bad input; mid of an empty slice\n\
         skip {}  no removed or changed line to point at: src/helpers.rs whitespace-only change  — Fix sum in helpers\n\
         skip {}  no removed or changed line to point at: src/util.rs renamed without changes  — fix naming: rename util.rs to helpers.rs\n\
         case fix-{}  src/util.rs:2-2  — Fix off-by-one in first()\n\
         mined 2 case(s) from 6 commit(s) whose subject matched, of 10 walked → {}\n",
        short(&h.merge),
        short(&h.typo),
        short(&h.fix_two_files),
        short(&h.whitespace),
        short(&h.rename),
        short(&h.fix_first),
        out.display()
    );
    assert_eq!(run.stdout, expected_stdout, "{}", run.stderr);
    let mut names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let (first_id, two_id) = (
        format!("fix-{}", short(&h.fix_first)),
        format!("fix-{}", short(&h.fix_two_files)),
    );
    let mut want = vec![format!("{first_id}.json"), format!("{two_id}.json")];
    want.sort();
    assert_eq!(names, want);
    // A defect introduced, then fixed: the buggy revision is the fix's parent, the new test
    // file is not a target, the changed line is the expected location.
    let first = read_json(&out.join(format!("{first_id}.json")));
    assert_schema("eval-case", &first);
    assert_eq!(
        first,
        json!({
            "schema_version": 1, "id": first_id, "revision": h.introduce,
            "targets": ["src/util.rs"],
            "expected": [{"file": "src/util.rs", "start": 2, "end": 2}],
            "origin": {"kind": "mined", "commit": h.fix_first, "message": "Fix off-by-one in first()"}
        })
    );
    // A fix spanning two files: a changed line, and a pure insertion after line 9 marking
    // lines 9–10 around the insertion point.
    let two = read_json(&out.join(format!("{two_id}.json")));
    assert_eq!(two["revision"], h.whitespace.as_str());
    assert_eq!(two["targets"], json!(["src/helpers.rs", "src/lib.rs"]));
    assert_eq!(
        two["expected"],
        json!([{"file": "src/helpers.rs", "start": 9, "end": 10}, {"file": "src/lib.rs", "start": 2, "end": 2}])
    );
    // Mining only reads.
    h.repo.assert_untouched(&before);
}

#[test]
fn mine_options_narrow_the_walk() {
    let h = history();
    let case_files = |out: &Path| {
        let mut v: Vec<String> = std::fs::read_dir(out)
            .map(|d| {
                d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    };
    let two = format!("fix-{}.json", short(&h.fix_two_files));
    let first = format!("fix-{}.json", short(&h.fix_first));
    // --max 1: the newest case only.
    let out = h.repo.scratch.join("max");
    mine_into(&h, &out, &["--max", "1"]).assert_code(0);
    assert_eq!(case_files(&out), std::slice::from_ref(&two));
    // --since: commits after the rename only.
    let out = h.repo.scratch.join("since");
    mine_into(&h, &out, &["--since", &h.rename]).assert_code(0);
    assert_eq!(case_files(&out), std::slice::from_ref(&two));
    // --grep replaces the message rule (case-insensitive).
    let out = h.repo.scratch.join("grep");
    let run = mine_into(&h, &out, &["--grep", "OFF-BY-ONE"]);
    run.assert_code(0);
    assert_eq!(case_files(&out), std::slice::from_ref(&first));
    assert!(run
        .stdout
        .contains("from 1 commit(s) whose subject matched"));
    // --paths keeps only matching files: the two-file fix becomes a lib.rs-only case.
    let out = h.repo.scratch.join("paths");
    mine_into(&h, &out, &["--paths", "src/lib.rs"]).assert_code(0);
    assert_eq!(case_files(&out), std::slice::from_ref(&two));
    let c = read_json(&out.join(&two));
    assert_eq!(c["targets"], json!(["src/lib.rs"]));
    // --max-lines: the two-file fix (5 lines added + removed) is too big for 4.
    let out = h.repo.scratch.join("lines");
    let run = mine_into(&h, &out, &["--max-lines", "4"]);
    assert!(
        run.stdout
            .contains("5 lines changed in code files (limit 4, --max-lines)"),
        "{}",
        run.stdout
    );
    assert_eq!(case_files(&out), [first]);
    // Bad input: one line, exit 2.
    for (args, needle) in [
        (vec!["--grep", "("], "--grep:"),
        (vec!["--since", "no-such-rev"], "--since no-such-rev"),
        (vec!["--paths", "src/[", "--"], "--paths src/["),
    ] {
        let run = mine_into(&h, &h.repo.scratch.join("bad"), &args);
        run.assert_code(2);
        assert!(run.stderr.contains(needle), "{args:?}: {}", run.stderr);
        assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    }
    let outside = tempfile::tempdir().unwrap();
    let run = h
        .repo
        .arev()
        .args(&["eval", "mine", "--out", "x"])
        .cwd(outside.path().to_path_buf())
        .run();
    run.assert_code(2);
    assert!(
        run.stderr.contains("needs a git repository"),
        "{}",
        run.stderr
    );
}

/// Every fixture of `tests/fixtures/eval/` (one file of a real commit of ripgrep, requests or
/// fzf; see its README) replayed as a two-commit history and mined: the verdict is the one
/// its `expect` file names.
#[test]
fn mine_rules_hold_on_real_commits() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/eval");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 10, "{dirs:?}");
    let mut verdicts = std::collections::BTreeMap::new();
    for dir in &dirs {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap_or_default();
        let path = read("path").trim().to_string();
        let message = read("message");
        let expect = read("expect").trim().to_string();
        let repo = TestRepo::new();
        repo.write(&path, &read("before")).commit("base");
        repo.write(&path, &read("after"));
        repo.git(&["add", "-A"]);
        repo.git(&["commit", "-q", "--cleanup=verbatim", "-m", &message]);
        let sha = head(&repo);
        let out = repo.scratch.join("cases");
        let mut args = vec!["eval", "mine", "--out", out.to_str().unwrap()];
        let extra = read("args");
        args.extend(extra.split_whitespace());
        let run = repo.arev().args(&args).run();
        run.assert_code(0);
        let line = run
            .stdout
            .lines()
            .find(|l| l.contains(short(&sha)))
            .map(str::to_string);
        let ok = match (expect.as_str(), &line) {
            ("unmatched", None) => true,
            ("case", Some(l)) => l.starts_with(&format!("case fix-{}", short(&sha))),
            (e, Some(l)) => e
                .strip_prefix("skip: ")
                .is_some_and(|reason| l.starts_with("skip ") && l.contains(reason)),
            _ => false,
        };
        assert!(
            ok,
            "{name}: expected {expect}, got {line:?}\n{}{}",
            run.stdout, run.stderr
        );
        verdicts.insert(name, expect);
    }
    // The set covers a real fix, a chore and a comment-only change in each language.
    for (lang, kinds) in [
        ("rust-", ["case", "skip: a typo chore", "skip: comments"]),
        ("python-", ["case", "skip: a lint chore", "skip: comments"]),
        ("go-", ["case", "skip: a docs chore", "skip: comments"]),
    ] {
        for k in kinds {
            assert!(
                verdicts
                    .iter()
                    .any(|(n, e)| n.starts_with(lang) && e.starts_with(k)),
                "no {lang} fixture expecting {k}"
            );
        }
    }
}

/// A docs commit whose body says `Fixes #12` is not a fix (subject only); a code fix whose
/// change is a comment only is listed with that reason; `--reject-pattern` and
/// `--allow-chores` narrow and widen; a bad chore kind is one line, exit 2.
#[test]
fn mine_reads_the_subject_and_the_code_change() {
    let repo = TestRepo::new();
    repo.write("src/a.rs", "pub fn a() -> u32 {\n    // one\n    1\n}\n")
        .commit("add a");
    repo.write("README.md", "# a\n");
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "describe a\n\nFixes #12"]);
    let body = head(&repo);
    repo.write(
        "src/a.rs",
        "pub fn a() -> u32 {\n    // the one\n    1\n}\n",
    )
    .commit("Fix a");
    let comment = head(&repo);
    repo.write(
        "src/a.rs",
        "pub fn a() -> u32 {\n    // the one\n    2\n}\n",
    )
    .commit("Fix a's value");
    let value = head(&repo);
    repo.write(
        "src/a.rs",
        "pub fn a() -> u32 {\n    // the one.\n    2\n}\n",
    )
    .commit("Fix typo in a");
    let typo = head(&repo);
    let out = repo.scratch.join("cases");
    let mine = |extra: &[&str]| {
        let mut args = vec!["eval", "mine", "--out", out.to_str().unwrap()];
        args.extend_from_slice(extra);
        repo.arev().args(&args).run()
    };
    let run = mine(&[]);
    run.assert_code(0);
    assert!(!run.stdout.contains(short(&body)), "{}", run.stdout);
    assert!(
        run.stdout.contains(&format!(
            "skip {}  no removed or changed line to point at: src/a.rs comments, docs or blank lines only  — Fix a\n",
            short(&comment)
        )),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(&format!(
            "case fix-{}  src/a.rs:3-3  — Fix a's value\n",
            short(&value)
        )),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(&format!(
            "skip {}  not a defect fix: a typo chore by its subject (--allow-chores typo to keep it)  — Fix typo in a\n",
            short(&typo)
        )),
        "{}",
        run.stdout
    );
    // Widened: the typo commit is measured, and its change is a comment only.
    let run = mine(&["--allow-chores", "typo"]);
    assert!(
        run.stdout.contains(&format!(
            "skip {}  no removed or changed line to point at: src/a.rs comments, docs or blank lines only  — Fix typo in a\n",
            short(&typo)
        )),
        "{}",
        run.stdout
    );
    // Narrowed.
    let run = mine(&["--reject-pattern", "value"]);
    assert!(
        run.stdout.contains(&format!(
            "skip {}  subject matches --reject-pattern  — Fix a's value\n",
            short(&value)
        )),
        "{}",
        run.stdout
    );
    for (args, needle) in [
        (
            vec!["--allow-chores", "typos"],
            "--allow-chores typos: not a chore kind",
        ),
        (vec!["--reject-pattern", "("], "--reject-pattern:"),
    ] {
        let run = mine(&args);
        run.assert_code(2);
        assert!(run.stderr.contains(needle), "{args:?}: {}", run.stderr);
        assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    }
}

/// Case "first" (src/util.rs has `v[1]`): F1 on the defect's line, F2 debunked, F3 twelve
/// lines away (confirmed, unmatched). Case "two" (src/helpers.rs exists): one confirmed
/// finding at helpers.rs:14, 4 lines below the expected 9–10 — a miss at ±3, a find at ±4.
fn panel_script() -> Value {
    let first = json!({"path": "src/util.rs", "text": "v[1]"});
    let two = json!({"path": "src/helpers.rs", "text": "pub fn mid"});
    json!({"steps": [
        {"role": "enthusiast", "round": 1, "if_file_contains": first, "answer": {"findings": [
            finding("F1", "src/util.rs", 2, "high", "off-by-one"),
            finding("F2", "src/util.rs", 10, "low", "logic"),
            finding("F3", "src/util.rs", 14, "medium", "overflow")]}},
        {"role": "judge", "round": 1, "if_file_contains": first, "answer": {"rulings": [
            ruling("F1", "src/util.rs", 2, "high", "enthusiast"),
            ruling("F2", "src/util.rs", 10, "low", "adversary"),
            ruling("F3", "src/util.rs", 14, "medium", "split")],
            "summary": "s", "convergence": false, "next_round_model": null}},
        {"role": "enthusiast", "round": 1, "if_file_contains": two, "answer": {"findings": [
            finding("F1", "src/helpers.rs", 14, "high", "overflow")]}},
        {"role": "judge", "round": 1, "if_file_contains": two, "answer": {"rulings": [
            ruling("F1", "src/helpers.rs", 14, "high", "enthusiast")],
            "summary": "s", "convergence": false, "next_round_model": null}}
    ]})
}

/// The repo, its mined cases dir and a private TMPDIR (where checkouts live).
fn mined() -> (History, PathBuf, PathBuf) {
    let h = history();
    let cases = h.repo.scratch.join("cases");
    mine_into(&h, &cases, &[]).assert_code(0);
    let tmp = h.repo.scratch.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    (h, cases, tmp)
}

fn eval_run(
    h: &History,
    cases: &Path,
    out: &Path,
    tmp: &Path,
    extra: &[&str],
) -> crate::harness::Run {
    let mut args = vec![
        "eval",
        "run",
        cases.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    if !extra.contains(&"--format") {
        args.extend_from_slice(&["--format", "json"]);
    }
    args.extend_from_slice(extra);
    h.repo
        .arev()
        .args(&args)
        .env("TMPDIR", tmp.to_str().unwrap())
        .script(panel_script())
        .run()
}

fn dir_is_empty(p: &Path) -> bool {
    std::fs::read_dir(p).unwrap().next().is_none()
}

fn status_of(report: &Value, id: &str) -> Value {
    report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["case_id"] == id)
        .unwrap_or_else(|| panic!("no case {id}"))
        .clone()
}

#[test]
fn run_scores_found_missed_unmatched_exactly_and_leaves_the_repo_alone() {
    let (h, cases, tmp) = mined();
    let before = h.repo.state();
    let worktrees_before = h.repo.git(&["worktree", "list", "--porcelain"]);
    let out = h.repo.scratch.join("out");
    let run = eval_run(&h, &cases, &out, &tmp, &[]);
    run.assert_code(0);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_schema("eval-report", &report);
    assert_eq!(report, read_json(&out.join("eval.json")));
    assert_eq!(report["status"], "complete");
    assert_eq!(report["tolerance"], 3);
    let first = status_of(&report, &format!("fix-{}", short(&h.fix_first)));
    assert_eq!(first["status"], "found");
    assert_eq!(first["outcome"], "complete");
    assert_eq!(first["commit"], h.introduce.as_str());
    assert_eq!(first["unmatched"], 1);
    assert_eq!(first["debunked"], 1);
    assert_eq!(
        first["confirmed"],
        json!([
            {"file": "src/util.rs", "line": 2, "severity": "high", "category": "off-by-one", "matches": 0},
            {"file": "src/util.rs", "line": 14, "severity": "medium", "category": "overflow", "matches": null}
        ])
    );
    assert_eq!(first["origin"]["message"], "Fix off-by-one in first()");
    let two = status_of(&report, &format!("fix-{}", short(&h.fix_two_files)));
    assert_eq!(two["status"], "missed");
    assert_eq!(two["unmatched"], 1);
    assert_eq!(two["debunked"], 0);
    let t = &report["totals"];
    assert_eq!(
        (
            t["cases"].clone(),
            t["scored"].clone(),
            t["found"].clone(),
            t["missed"].clone()
        ),
        (json!(2), json!(2), json!(1), json!(1))
    );
    assert_eq!(t["recall"], 0.5);
    let ci = t["recall_ci95"].as_array().unwrap();
    assert!((ci[0].as_f64().unwrap() - 0.0945).abs() < 5e-4, "{ci:?}");
    assert!((ci[1].as_f64().unwrap() - 0.9055).abs() < 5e-4, "{ci:?}");
    assert_eq!(
        (t["confirmed"].clone(), t["unmatched"].clone()),
        (json!(3), json!(2))
    );
    assert_eq!(t["unmatched_per_case"], 1.0);
    assert_eq!(t["debunk_rate"], 0.25);
    let case_cost = first["cost_usd"].as_f64().unwrap() + two["cost_usd"].as_f64().unwrap();
    assert!(case_cost > 0.0);
    assert!((t["cost_usd"].as_f64().unwrap() - case_cost).abs() < 1e-9);
    assert!((t["cost_per_found"].as_f64().unwrap() - case_cost).abs() < 1e-9);
    // Each case has its own run dir (a complete arev run) and its result file.
    for c in report["cases"].as_array().unwrap() {
        let run_dir = PathBuf::from(c["run_dir"].as_str().unwrap());
        assert!(run_dir.starts_with(out.join("runs")), "{run_dir:?}");
        assert_eq!(read_json(&run_dir.join("meta.json"))["status"], "complete");
        assert_eq!(
            read_json(&run_dir.join("meta.json"))["config_digest"],
            report["config_digest"]
        );
        let id = c["case_id"].as_str().unwrap();
        assert_eq!(
            &read_json(&out.join(format!("cases/{id}.json")))["status"],
            &c["status"]
        );
        // Nothing about the fix reaches the agents.
        for p in walk_files(&run_dir.join("agents")) {
            let text = std::fs::read_to_string(&p).unwrap_or_default();
            let origin = &c["origin"];
            for secret in [
                origin["commit"].as_str().unwrap(),
                origin["message"].as_str().unwrap(),
                id,
            ] {
                assert!(!text.contains(secret), "{} shows {secret:?}", p.display());
            }
        }
    }
    let md = std::fs::read_to_string(out.join("eval.md")).unwrap();
    assert!(
        md.starts_with("## arev eval: recall 1/2 = 50.0 % (95 % CI 9.5–90.5 %)"),
        "{md}"
    );
    // The checkouts are gone; the user's tree, index, HEAD, branches and worktrees unchanged.
    assert!(dir_is_empty(&tmp), "checkouts left in {tmp:?}");
    h.repo.assert_untouched(&before);
    assert_eq!(
        h.repo.git(&["worktree", "list", "--porcelain"]),
        worktrees_before
    );

    // Text and Markdown tables on stdout.
    let run = eval_run(&h, &cases, &out, &tmp, &["--format", "text"]);
    run.assert_code(0);
    assert!(
        run.stdout.contains("recall                 1/2 = 50.0 %"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("Fix off-by-one in first() (kept)"),
        "{}",
        run.stdout
    );
    let run = eval_run(&h, &cases, &out, &tmp, &["--format", "markdown"]);
    assert!(
        run.stdout.starts_with("## arev eval: recall 1/2"),
        "{}",
        run.stdout
    );
}

/// Honest cost: by default every case is reviewed afresh (`arev run --no-cache`), even when
/// the verdict cache holds its verdict; with `--use-cache` a cached case names the run that
/// produced the verdict and counts that run's cost, and the summary says which.
#[test]
fn cached_cases_report_the_original_cost_and_eval_bypasses_the_cache_by_default() {
    let (h, cases, tmp) = mined();
    let shared = h.repo.scratch.join("shared-cache");
    let eval = |out: &Path, extra: &[&str]| {
        let mut args = vec![
            "eval",
            "run",
            cases.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        h.repo
            .arev()
            .args(&args)
            .env("TMPDIR", tmp.to_str().unwrap())
            .env("XDG_CACHE_HOME", shared.to_str().unwrap())
            .script(panel_script())
            .run()
    };
    let json_of = |run: &crate::harness::Run| -> Value {
        run.assert_code(0);
        serde_json::from_str(&run.stdout).unwrap()
    };
    // Fresh reviews that fill the cache.
    let first = json_of(&eval(
        &h.repo.scratch.join("o1"),
        &["--use-cache", "--format", "json"],
    ));
    assert_eq!(first["use_cache"], true);
    assert_eq!(first["totals"]["cached"], 0);
    // Another output directory: every verdict comes from the cache, at its original cost.
    let second = json_of(&eval(
        &h.repo.scratch.join("o2"),
        &["--use-cache", "--format", "json"],
    ));
    assert_schema("eval-report", &second);
    assert_eq!(second["totals"]["cached"], 2);
    for (a, b) in first["cases"]
        .as_array()
        .unwrap()
        .iter()
        .zip(second["cases"].as_array().unwrap())
    {
        let run_dir = PathBuf::from(a["run_dir"].as_str().unwrap());
        let run_id = read_json(&run_dir.join("meta.json"))["run_id"].clone();
        assert_eq!(b["cached_from"], run_id, "{b}");
        assert!(a["cost_usd"].as_f64().unwrap() > 0.0);
        assert_eq!(b["cost_usd"], a["cost_usd"]);
        assert_eq!(b["tokens"], a["tokens"]);
        assert_eq!(b["status"], a["status"]);
        assert!(a.get("cached_from").is_none());
    }
    assert_eq!(
        second["totals"]["cost_per_found"],
        first["totals"]["cost_per_found"]
    );
    let text = eval(
        &h.repo.scratch.join("o3"),
        &["--use-cache", "--format", "text"],
    );
    run_ok_contains(
        &text,
        &[
            "(cached from ",
            "2 case(s) served from the verdict cache, counted at the cost of the review that produced the verdict",
        ],
    );
    // Without --use-cache the cache is bypassed: every case is a fresh, paid review.
    let fresh = json_of(&eval(&h.repo.scratch.join("o4"), &["--format", "json"]));
    assert_eq!(fresh["use_cache"], false);
    assert_eq!(fresh["totals"]["cached"], 0);
    for c in fresh["cases"].as_array().unwrap() {
        assert!(c.get("cached_from").is_none(), "{c}");
        assert!(c["cost_usd"].as_f64().unwrap() > 0.0, "{c}");
    }
    let text = eval(&h.repo.scratch.join("o5"), &["--format", "text"]);
    run_ok_contains(
        &text,
        &["(every case reviewed afresh; the verdict cache was bypassed)"],
    );
}

fn run_ok_contains(run: &crate::harness::Run, needles: &[&str]) {
    run.assert_code(0);
    for n in needles {
        assert!(run.stdout.contains(n), "{n}: {}", run.stdout);
    }
}

fn walk_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![];
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk_files(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn a_second_run_dispatches_nothing_and_rescores_at_a_new_tolerance() {
    let (h, cases, tmp) = mined();
    let out = h.repo.scratch.join("out");
    eval_run(&h, &cases, &out, &tmp, &[]).assert_code(0);
    let log = h.repo.scratch.join("fake.log");
    let dispatched = std::fs::read_to_string(&log).unwrap().lines().count();
    assert!(dispatched > 0);
    // Same cases, same configuration: kept, nothing dispatched; ±4 turns the miss at
    // distance 4 into a find.
    let run = eval_run(&h, &cases, &out, &tmp, &["--tolerance", "4"]);
    run.assert_code(0);
    assert_eq!(
        std::fs::read_to_string(&log).unwrap().lines().count(),
        dispatched,
        "a resumed run dispatched agents"
    );
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["tolerance"], 4);
    assert!(report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["resumed"] == true));
    let two = status_of(&report, &format!("fix-{}", short(&h.fix_two_files)));
    assert_eq!(two["status"], "found");
    assert_eq!(two["confirmed"][0]["matches"], 0);
    assert_eq!(report["totals"]["recall"], 1.0);
    assert_eq!(report["totals"]["unmatched"], 1);
    assert_eq!(report["totals"]["unmatched_per_case"], 0.5);
    // Another panel (a different configuration digest) re-runs every case.
    let cfg = h.repo.scratch.join("panel.toml");
    std::fs::write(&cfg, "[review]\npasses = 2\n").unwrap();
    let run = eval_run(&h, &cases, &out, &tmp, &["--config", cfg.to_str().unwrap()]);
    run.assert_code(0);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    assert!(report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["resumed"] == false));
    assert!(std::fs::read_to_string(&log).unwrap().lines().count() > dispatched);
    // A changed case is re-run too.
    let before = std::fs::read_to_string(&log).unwrap().lines().count();
    let id = format!("fix-{}", short(&h.fix_first));
    let path = cases.join(format!("{id}.json"));
    let mut c = read_json(&path);
    c["expected"][0]["end"] = json!(3);
    std::fs::write(&path, c.to_string()).unwrap();
    let run = eval_run(&h, &cases, &out, &tmp, &["--config", cfg.to_str().unwrap()]);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(status_of(&report, &id)["resumed"], false);
    assert_eq!(
        status_of(&report, &format!("fix-{}", short(&h.fix_two_files)))["resumed"],
        true
    );
    assert!(std::fs::read_to_string(&log).unwrap().lines().count() > before);
}

/// Two hand-written cases, `a` (src/a.rs at `rev_a`) and `b` (src/b.rs at HEAD), and a
/// script whose Enthusiasts each take 1.5 s.
fn slow_cases(dir: &Path, rev_a: &str) -> Value {
    std::fs::create_dir_all(dir).unwrap();
    for (id, file, rev) in [("a", "src/a.rs", rev_a), ("b", "src/b.rs", "HEAD")] {
        std::fs::write(
            dir.join(format!("{id}.json")),
            json!({"schema_version": 1, "id": id, "revision": rev, "targets": [file],
                   "expected": [{"file": file, "start": 1, "end": 1}]})
            .to_string(),
        )
        .unwrap();
    }
    json!({"steps": [{"role": "enthusiast", "round": 1, "delay_ms": 1500}]})
}

fn interval(c: &Value) -> (chrono::DateTime<chrono::Utc>, chrono::DateTime<chrono::Utc>) {
    let p = |k: &str| {
        chrono::DateTime::parse_from_rfc3339(c[k].as_str().unwrap())
            .unwrap()
            .with_timezone(&chrono::Utc)
    };
    (p("started_at"), p("finished_at"))
}

#[test]
fn jobs_run_cases_in_parallel() {
    let repo = TestRepo::new();
    repo.write("src/a.rs", "pub fn a() {}\n")
        .write("src/b.rs", "pub fn b() {}\n")
        .commit("two files");
    let cases = repo.scratch.join("cases");
    let slow = slow_cases(&cases, "HEAD");
    // With two jobs each case's Enthusiast answers only once both cases' have started (the
    // fake's log names both targets), so they overlap however slowly the second starts.
    let log = repo.scratch.join("fake.log").display().to_string();
    let together = json!({"steps": [{"role": "enthusiast", "round": 1, "wait_for": [
        {"path": log, "contains": "/src/a.rs\""},
        {"path": log, "contains": "/src/b.rs\""},
    ]}]});
    let overlap = |jobs: &str, script: &Value| {
        let out = repo.scratch.join(format!("out-{jobs}"));
        let run = repo
            .arev()
            .args(&[
                "eval",
                "run",
                cases.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
                "--format",
                "json",
                "--jobs",
                jobs,
            ])
            .script(script.clone())
            .run();
        run.assert_code(0);
        let report: Value = serde_json::from_str(&run.stdout).unwrap();
        let (a, b) = (interval(&report["cases"][0]), interval(&report["cases"][1]));
        // Each case's run dir is its own.
        assert_ne!(report["cases"][0]["run_dir"], report["cases"][1]["run_dir"]);
        a.0 < b.1 && b.0 < a.1
    };
    assert!(
        overlap("2", &together),
        "--jobs 2 ran the cases one after the other"
    );
    assert!(
        !overlap("1", &slow),
        "--jobs 1 ran the cases at the same time"
    );
}

#[test]
fn sigint_keeps_finished_cases_and_a_rerun_resumes() {
    let repo = TestRepo::new();
    repo.write("src/a.rs", "pub fn a() {}\n")
        .write("src/b.rs", "pub fn b() {}\n")
        .commit("two files");
    repo.write("src/b.rs", "pub fn b() { /* slow */ }\n")
        .commit("slow b");
    let cases = repo.scratch.join("cases");
    // Case a sees b.rs without the marker (its revision is the one before).
    slow_cases(&cases, "HEAD~1");
    let tmp = repo.scratch.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let out = repo.scratch.join("out");
    let args = [
        "eval",
        "run",
        cases.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--format",
        "json",
    ];
    let hang = json!({"steps": [{"role": "enthusiast", "if_file_contains": {"path": "src/b.rs", "text": "slow"}, "hang": true}]});
    let mut child = repo
        .arev()
        .args(&args)
        .env("TMPDIR", tmp.to_str().unwrap())
        .env("AREV_AGENT_GRACE", "300ms")
        .script(hang)
        .command()
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Case a finishes; case b's Enthusiast hangs.
    let log = repo.scratch.join("fake.log");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let b_started = text.lines().any(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            v["role"] == "enthusiast"
                && v["target_path"]
                    .as_str()
                    .is_some_and(|p| p.ends_with("src/b.rs"))
        });
        if out.join("cases/a.json").is_file() && b_started {
            break;
        }
        assert!(Instant::now() < deadline, "case b never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(200));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "arev eval did not stop after SIGINT"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(130));
    let report = read_json(&out.join("eval.json"));
    assert_eq!(report["status"], "interrupted");
    assert_eq!(report["not_run"], json!(["b"]));
    assert_eq!(report["cases"].as_array().unwrap().len(), 1);
    assert_eq!(report["cases"][0]["case_id"], "a");
    assert!(!out.join("cases/b.json").exists());
    // No agent outlived it, and no checkout is left.
    for line in std::fs::read_to_string(&log).unwrap().lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        let pid = v["pid"].as_i64().unwrap();
        assert!(group_members(pid).is_empty(), "agent group {pid} survived");
    }
    assert!(dir_is_empty(&tmp), "checkout left behind");
    // Running again keeps a and reviews only b.
    let before = std::fs::read_to_string(&log).unwrap().lines().count();
    let run = repo
        .arev()
        .args(&args)
        .env("TMPDIR", tmp.to_str().unwrap())
        .env("AREV_AGENT_GRACE", "300ms")
        .run();
    run.assert_code(0);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["status"], "complete");
    assert_eq!(status_of(&report, "a")["resumed"], true);
    assert_eq!(status_of(&report, "b")["resumed"], false);
    let new: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .skip(before)
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(!new.is_empty());
    assert!(
        new.iter().all(|v| v["target_path"]
            .as_str()
            .is_none_or(|p| !p.ends_with("src/a.rs"))),
        "case a was reviewed again: {new:?}"
    );
}

#[test]
fn aborted_and_failed_cases_are_reported_as_such() {
    let repo = TestRepo::new();
    repo.write("src/a.rs", "pub fn a() {}\n")
        .write_bytes("src/bin.rs", b"ab\x00\xff\n")
        .commit("files");
    let cases = repo.scratch.join("cases");
    std::fs::create_dir_all(&cases).unwrap();
    for (id, file) in [("aborts", "src/a.rs"), ("fails", "src/bin.rs")] {
        std::fs::write(
            cases.join(format!("{id}.json")),
            json!({"schema_version": 1, "id": id, "revision": "HEAD", "targets": [file],
                   "expected": [{"file": file, "start": 1, "end": 1}],
                   "origin": {"message": "seeded"}})
            .to_string(),
        )
        .unwrap();
    }
    let out = repo.scratch.join("out");
    // The Enthusiast never reads the target: the tool-use gate aborts the review.
    let run = repo
        .arev()
        .args(&[
            "eval",
            "run",
            cases.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .script(json!({"steps": [{"role": "enthusiast", "read_target": false}]}))
        .run();
    run.assert_code(3);
    assert!(
        run.stdout.contains("aborts                   aborted"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("aborts aborted: enthusiast_no_tool_invocation"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("fails failed: `arev run` exited with code 2 and no report"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("src/bin.rs is a binary file"),
        "{}",
        run.stdout
    );
    let report = read_json(&out.join("eval.json"));
    let t = &report["totals"];
    // The abort counts against recall; the failure is not scored.
    assert_eq!(
        (
            t["scored"].clone(),
            t["aborted"].clone(),
            t["failed"].clone()
        ),
        (json!(1), json!(1), json!(1))
    );
    assert_eq!(t["recall"], 0.0);
    // The failed case is tried again next time; the aborted one is kept.
    let run = repo
        .arev()
        .args(&[
            "eval",
            "run",
            cases.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--format",
            "json",
        ])
        .run();
    run.assert_code(3);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(status_of(&report, "aborts")["resumed"], true);
    assert_eq!(status_of(&report, "fails")["resumed"], false);
}

#[test]
fn hand_written_cases_are_validated_before_anything_runs() {
    let repo = TestRepo::new();
    let cases = repo.scratch.join("cases");
    let out = repo.scratch.join("out");
    let good = json!({"schema_version": 1, "id": "seeded", "revision": "HEAD",
        "targets": ["src/lib.rs"], "expected": [{"file": "src/lib.rs", "start": 2, "end": 2}],
        "origin": {"message": "unwrap on user input"}});
    let mut checks: Vec<(Value, &str)> = vec![];
    let mut with = |f: &dyn Fn(&mut Value), needle: &'static str| {
        let mut v = good.clone();
        f(&mut v);
        checks.push((v, needle));
    };
    with(&|v| v["expect"] = json!([]), "unknown field `expect`");
    with(
        &|v| v["revision"] = json!("no-such-branch"),
        "revision `no-such-branch`",
    );
    with(
        &|v| v["targets"] = json!(["src/lib.rs", "src/missing.rs"]),
        "target `src/missing.rs` does not exist at revision HEAD",
    );
    with(
        &|v| v["expected"][0]["end"] = json!(9),
        "but `src/lib.rs` has 5 lines at revision HEAD",
    );
    with(
        &|v| v["expected"][0]["file"] = json!("src/x.rs"),
        "not one of the targets",
    );
    with(&|v| v["id"] = json!("other"), "differs from the file name");
    for (case, needle) in checks {
        let _ = std::fs::remove_dir_all(&cases);
        std::fs::create_dir_all(&cases).unwrap();
        std::fs::write(cases.join("seeded.json"), case.to_string()).unwrap();
        let run = repo
            .arev()
            .args(&[
                "eval",
                "run",
                cases.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
            ])
            .run();
        run.assert_code(2);
        assert!(run.stderr.contains("seeded.json: "), "{}", run.stderr);
        assert!(run.stderr.contains(needle), "{needle}: {}", run.stderr);
        assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
        assert!(!out.exists(), "an invalid case set left {out:?}");
        assert!(
            std::fs::read_to_string(repo.scratch.join("fake.log"))
                .unwrap_or_default()
                .is_empty(),
            "an agent ran"
        );
    }
    let empty = repo.scratch.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let run = repo
        .arev()
        .args(&["eval", "run", empty.to_str().unwrap()])
        .run();
    run.assert_code(2);
    assert!(run.stderr.contains("no case files"), "{}", run.stderr);
    // The good case runs, with the default output dir under .arev/eval/, excluded from git.
    std::fs::write(cases.join("seeded.json"), good.to_string()).unwrap();
    let run = repo
        .arev()
        .args(&["eval", "run", cases.to_str().unwrap(), "-q"])
        .run();
    run.assert_code(0);
    assert_eq!(run.stderr, "");
    let base = repo.root.join(".arev/eval");
    let dirs: Vec<_> = std::fs::read_dir(&base).unwrap().collect();
    assert_eq!(dirs.len(), 1);
    assert!(dirs[0].as_ref().unwrap().path().join("eval.json").is_file());
    assert_eq!(repo.git(&["status", "--porcelain"]), "");
    // The panel is today's configuration: the repository's current arev.toml (two passes)
    // reviews a revision from before it existed, and the review's digest is the panel's.
    repo.write("arev.toml", "[review]\npasses = 2\n")
        .commit("configure arev");
    let mut old = good.clone();
    old["revision"] = json!("HEAD~1");
    std::fs::write(cases.join("seeded.json"), old.to_string()).unwrap();
    let run = repo
        .arev()
        .args(&[
            "eval",
            "run",
            cases.to_str().unwrap(),
            "--format",
            "json",
            "-q",
        ])
        .run();
    run.assert_code(0);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    let case = &report["cases"][0];
    assert_eq!(case["outcome"], "complete", "{case}");
    let meta = read_json(&Path::new(case["run_dir"].as_str().unwrap()).join("meta.json"));
    assert_eq!(meta["config_digest"], report["config_digest"]);
    let passes: Vec<Value> = std::fs::read_to_string(repo.scratch.join("fake.log"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["role"] == "enthusiast" && v["round"] == 1)
        .map(|v| v["pass"].clone())
        .collect();
    assert!(passes.contains(&json!(2)), "{passes:?}");
}

#[test]
fn compare_puts_two_panels_side_by_side() {
    let (h, cases, tmp) = mined();
    let a = h.repo.scratch.join("a");
    eval_run(&h, &cases, &a, &tmp, &[]).assert_code(0);
    // Panel B: two Enthusiast passes; its second pass finds the two-file fix's defect.
    let cfg = h.repo.scratch.join("b.toml");
    std::fs::write(&cfg, "[review]\npasses = 2\n").unwrap();
    let mut script = panel_script();
    let steps = script["steps"].as_array_mut().unwrap();
    steps.insert(
        2,
        json!({"role": "enthusiast", "round": 1, "pass": 2, "if_file_contains": {"path": "src/helpers.rs", "text": "pub fn mid"},
               "answer": {"findings": [finding("F1", "src/helpers.rs", 10, "high", "bounds")]}}),
    );
    steps.insert(
        3,
        json!({"role": "judge", "round": 1, "if_file_contains": {"path": "src/helpers.rs", "text": "pub fn mid"},
               "answer": {"rulings": [ruling("F1", "src/helpers.rs", 10, "high", "enthusiast"), ruling("F2", "src/helpers.rs", 14, "high", "enthusiast")],
               "summary": "s", "convergence": false, "next_round_model": null}}),
    );
    let b = h.repo.scratch.join("b");
    let run = h
        .repo
        .arev()
        .args(&[
            "eval",
            "run",
            cases.to_str().unwrap(),
            "--out",
            b.to_str().unwrap(),
            "--config",
            cfg.to_str().unwrap(),
            "--format",
            "json",
        ])
        .env("TMPDIR", tmp.to_str().unwrap())
        .script(script)
        .run();
    run.assert_code(0);
    let rb: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(rb["totals"]["found"], 2, "{}", run.stdout);
    let (ja, jb) = (a.join("eval.json"), b.join("eval.json"));
    let run = h
        .repo
        .arev()
        .args(&[
            "eval",
            "compare",
            ja.to_str().unwrap(),
            jb.to_str().unwrap(),
            "--format",
            "json",
        ])
        .run();
    run.assert_code(0);
    let c: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_schema("eval-compare", &c);
    assert_eq!(
        c["agreement"],
        json!({"common": 2, "both_found": 1, "only_a": 0, "only_b": 1, "neither": 0})
    );
    assert_eq!(c["a"]["totals"]["recall"], 0.5);
    assert_eq!(c["b"]["totals"]["recall"], 1.0);
    assert_ne!(c["a"]["config_digest"], c["b"]["config_digest"]);
    let two = format!("fix-{}", short(&h.fix_two_files));
    let row = c["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["case_id"] == two.as_str())
        .unwrap();
    assert_eq!(
        (row["a"]["status"].clone(), row["b"]["status"].clone()),
        (json!("missed"), json!("found"))
    );
    let run = h
        .repo
        .arev()
        .args(&[
            "eval",
            "compare",
            ja.to_str().unwrap(),
            jb.to_str().unwrap(),
        ])
        .run();
    run.assert_code(0);
    assert!(
        run.stdout.contains(&format!("{two:<24} missed   found")),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("on 2 common case(s): both found 1, only A 0, only B 1, neither 0"),
        "{}",
        run.stdout
    );
    let run = h
        .repo
        .arev()
        .args(&[
            "eval",
            "compare",
            ja.to_str().unwrap(),
            jb.to_str().unwrap(),
            "--format",
            "markdown",
        ])
        .run();
    assert!(
        run.stdout.contains("| recall | 1/2 = 50.0 %"),
        "{}",
        run.stdout
    );
    // Unreadable input: exit 2 naming the file.
    let run = h
        .repo
        .arev()
        .args(&[
            "eval",
            "compare",
            ja.to_str().unwrap(),
            cases.to_str().unwrap(),
        ])
        .run();
    run.assert_code(2);
    assert!(
        run.stderr.contains(cases.to_str().unwrap()),
        "{}",
        run.stderr
    );
}

/// Hostile histories (docs/contracts.md §14.1): a fix commit that also bumps a submodule is mined (the
/// submodule skipped with a reason, never fatal); a fix of a 100 MB blob is never loaded
/// (memory stays far below it) and is no case; a subject holding terminal escapes is shown
/// inert.
#[test]
fn mine_survives_submodules_huge_blobs_and_escapes_in_subjects() {
    let repo = TestRepo::new();
    repo.write(
        "src/util.rs",
        "pub fn first(v: &[u32]) -> u32 {\n    v[1]\n}\n",
    )
    .commit("add first");
    // A fix that also bumps a submodule (a gitlink entry, as `git submodule` records it).
    repo.write(
        "src/util.rs",
        "pub fn first(v: &[u32]) -> u32 {\n    v[0]\n}\n",
    );
    let sha = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    repo.git(&[
        "update-index",
        "--add",
        "--cacheinfo",
        &format!("160000,{sha},vendor/lib"),
    ]);
    repo.git(&["add", "src/util.rs"]);
    repo.git(&[
        "commit",
        "-q",
        "-m",
        "Fix first() and move the lib submodule",
    ]);
    // A 100 MB generated file, then a "fix" to it.
    let big = "0123456789abcdef\n".repeat(100 * 1024 * 1024 / 17);
    repo.write("data/table.rs", &big).commit("add the table");
    repo.write("data/table.rs", &big.replacen("0123", "x123", 1))
        .commit("Fix the table's first row");
    repo.write(
        "src/util.rs",
        "pub fn first(v: &[u32]) -> u32 {\n    v[0] + 0\n}\n",
    )
    .commit("Fix \u{1b}]0;pwned\u{7}\u{1b}[2J the title");
    let out = repo.scratch.join("cases");
    let arev = repo
        .arev()
        .args(&["eval", "mine", "--out", out.to_str().unwrap()]);
    let mut cmd = arev.command();
    let time = Path::new("/usr/bin/time");
    let run = if time.exists() {
        let mut t = std::process::Command::new(time);
        t.args(["-f", "AREV_MAXRSS_KIB=%M", env!("CARGO_BIN_EXE_arev")])
            .args(cmd.get_args())
            .current_dir(&repo.root)
            .env_clear()
            .envs(
                cmd.get_envs()
                    .filter_map(|(k, v)| Some((k.to_owned(), v?.to_owned()))),
            );
        crate::harness::Run::new(&repo, t.output().unwrap(), Default::default())
    } else {
        crate::harness::Run::new(&repo, cmd.output().unwrap(), Default::default())
    };
    run.assert_code(0);
    assert!(
        !run.stdout.contains('\u{1b}') && !run.stdout.contains('\u{7}'),
        "{:?}",
        run.stdout
    );
    assert!(run.stdout.contains("Fix \\u{1b}]0;pwned"), "{}", run.stdout);
    assert!(
        run.stdout.contains("data/table.rs over the size cap"),
        "{}",
        run.stdout
    );
    let bump = run
        .stdout
        .lines()
        .find(|l| l.contains("move the lib submodule"))
        .unwrap();
    assert!(
        bump.starts_with("case fix-"),
        "mined despite the submodule: {bump}"
    );
    if let Some(kib) = run
        .stderr
        .lines()
        .find_map(|l| l.strip_prefix("AREV_MAXRSS_KIB="))
        .and_then(|v| v.trim().parse::<u64>().ok())
    {
        assert!(kib < 80 * 1024, "peak RSS {kib} KiB mining a 100 MB blob");
    }
}
