//! CI outputs: SARIF (schema-validated), Markdown, GitHub annotations, text; `arev report`
//! re-rendering, `arev runs`, and fingerprints that survive re-runs and line shifts.

use crate::harness::{finding, ruling, Run, TestRepo, LIB_RS};
use crate::sarif_schema;
use serde_json::{json, Value};
use std::path::Path;

/// One round over src/lib.rs: confirmed high/medium/low, one debunked, one unresolved.
/// After the union the ids are F1..F5 by line.
fn rich_script() -> Value {
    let mut style = finding("X", "src/lib.rs", 3, "low", "style");
    style["description"] = json!("50% slower:\nsee callers a, b");
    json!({"steps": [
        {"role": "enthusiast", "round": 1, "answer": {"findings": [
            finding("A", "src/lib.rs", 1, "medium", "api-design"),
            finding("B", "src/lib.rs", 2, "high", "error-handling"),
            style,
            finding("D", "src/lib.rs", 4, "low", "docs"),
            finding("E", "src/lib.rs", 5, "low", "naming"),
        ]}},
        {"role": "judge", "round": 1, "answer": {"rulings": [
            ruling("F1", "src/lib.rs", 1, "medium", "enthusiast"),
            ruling("F2", "src/lib.rs", 2, "high", "enthusiast"),
            ruling("F3", "src/lib.rs", 3, "low", "split"),
            ruling("F5", "src/lib.rs", 5, "low", "adversary"),
        ], "summary": "s", "convergence": false, "next_round_model": null}}
    ]})
}

fn rich_run(repo: &TestRepo, extra: &[&str]) -> Run {
    let mut args = vec!["run", "src/lib.rs", "--max-rounds", "1"];
    args.extend_from_slice(extra);
    repo.arev().args(&args).script(rich_script()).run()
}

#[test]
fn the_validator_rejects_invalid_sarif() {
    // The check below can fail: a wrong level, a missing message and a bad version.
    let v = sarif_schema::validator();
    let bad = json!({"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "arev"}},
        "results": [{"ruleId": "x", "level": "fatal", "message": {"text": "m"}}]}]});
    assert!(!v.is_valid(&bad));
    let no_msg = json!({"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "arev"}},
        "results": [{"ruleId": "x"}]}]});
    assert!(!v.is_valid(&no_msg));
    assert!(!v.is_valid(&json!({"version": "2.0.0", "runs": []})));
    assert!(v.is_valid(&json!({"version": "2.1.0", "runs": []})));
}

#[test]
fn sarif_is_valid_and_maps_findings() {
    let repo = TestRepo::new();
    let file = repo.scratch.join("arev.sarif");
    let run = rich_run(
        &repo,
        &["--format", "sarif", "--sarif", file.to_str().unwrap()],
    );
    run.assert_code(1);
    let stdout = sarif_schema::assert_valid(&run.stdout, "rich-run-stdout");
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let in_run_dir: Value =
        serde_json::from_str(&std::fs::read_to_string(run.run_dir().join("report.sarif")).unwrap())
            .unwrap();
    assert_eq!(stdout, written);
    assert_eq!(stdout, in_run_dir);

    let report = run.report();
    let r = &stdout["runs"][0];
    assert_eq!(r["tool"]["driver"]["name"], "arev");
    assert_eq!(r["tool"]["driver"]["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(
        r["automationDetails"]["id"],
        format!("arev/{}", report["run_id"].as_str().unwrap())
    );
    assert_eq!(r["invocations"][0]["executionSuccessful"], true);
    let rules: Vec<&str> = r["tool"]["driver"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["id"].as_str().unwrap())
        .collect();
    // One rule per category of the reported (not debunked) findings.
    assert_eq!(rules, ["error-handling", "api-design", "style", "docs"]);
    let results = r["results"].as_array().unwrap();
    let by_rule = |id: &str| results.iter().find(|x| x["ruleId"] == id).unwrap();
    assert_eq!(by_rule("error-handling")["level"], "error");
    assert_eq!(by_rule("api-design")["level"], "warning");
    assert_eq!(by_rule("style")["level"], "note");
    assert_eq!(by_rule("docs")["kind"], "review", "unresolved");
    assert_eq!(by_rule("docs")["level"], "none");
    assert!(
        !results.iter().any(|x| x["ruleId"] == "naming"),
        "debunked omitted"
    );
    assert_eq!(results.len(), 4);
    for x in results {
        let idx = x["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[idx], x["ruleId"]);
        let loc = &x["locations"][0]["physicalLocation"];
        assert_eq!(loc["artifactLocation"]["uri"], "src/lib.rs");
        assert_eq!(loc["artifactLocation"]["uriBaseId"], "%SRCROOT%");
        assert!(loc["region"]["startLine"].as_u64().unwrap() >= 1);
    }
    let eh = by_rule("error-handling");
    assert_eq!(
        eh["locations"][0]["physicalLocation"]["region"]["startLine"],
        2
    );
    let fp = report["confirmed"][0]["fingerprint"].as_str().unwrap();
    assert_eq!(eh["partialFingerprints"]["arev/v2"], fp);
    assert_eq!(eh["partialFingerprints"]["primaryLocationLineHash"], fp);
}

#[test]
fn an_aborted_run_is_not_a_clean_sarif() {
    let repo = TestRepo::new();
    let script = json!({"steps": [{"role": "enthusiast", "read_target": false}]});
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs", "--format", "sarif"])
        .script(script)
        .run();
    run.assert_code(3);
    let sarif = sarif_schema::assert_valid(&run.stdout, "aborted-run");
    let inv = &sarif["runs"][0]["invocations"][0];
    assert_eq!(inv["executionSuccessful"], false);
    assert!(inv["toolExecutionNotifications"][0]["message"]["text"]
        .as_str()
        .unwrap()
        .contains("no verdict"));
    let gh = repo
        .arev()
        .args(&[
            "report",
            run.run_dir().to_str().unwrap(),
            "--format",
            "github",
        ])
        .run();
    gh.assert_code(0);
    assert!(
        gh.stdout
            .starts_with("::error title=arev%3A no verdict::review aborted"),
        "{}",
        gh.stdout
    );
}

/// Replace run-specific values (ids, paths, times, version, target sha) in a rendering.
fn redact(text: &str, report: &Value) -> String {
    let mut s = text.to_string();
    for (key, label) in [
        (report["run_dir"].as_str().unwrap(), "[run_dir]"),
        (report["run_id"].as_str().unwrap(), "[run_id]"),
        (report["target"]["sha256"].as_str().unwrap(), "[sha256]"),
        (&report["target"]["sha256"].as_str().unwrap()[..12], "[sha]"),
        (report["started_at"].as_str().unwrap(), "[started_at]"),
        (report["finished_at"].as_str().unwrap(), "[finished_at]"),
        (env!("CARGO_PKG_VERSION"), "[version]"),
    ] {
        s = s.replace(key, label);
    }
    s
}

/// Every format of one scripted review, re-rendered with `arev report`, as snapshots.
#[test]
fn every_format_snapshots() {
    let repo = TestRepo::new();
    let run = rich_run(&repo, &["-q"]);
    run.assert_code(1);
    let report = run.report();
    let dir = run.run_dir();
    let id = report["run_id"].as_str().unwrap().to_string();
    let render = |format: &str| {
        let r = repo.arev().args(&["report", &id, "--format", format]).run();
        r.assert_code(0);
        assert!(r.stderr.is_empty(), "{}", r.stderr);
        r.stdout
    };
    // JSON re-rendering is exactly report.json.
    let json: Value = serde_json::from_str(&render("json")).unwrap();
    assert_eq!(json, report);
    // The text of `arev run` and of `arev report` agree.
    let text = render("text");
    assert_eq!(text, run.stdout);
    insta::assert_snapshot!("rich_text", redact(&text, &report));
    let md = render("markdown");
    assert_eq!(md, std::fs::read_to_string(dir.join("report.md")).unwrap());
    insta::assert_snapshot!("rich_markdown", redact(&md, &report));
    insta::assert_snapshot!("rich_github", redact(&render("github"), &report));
    let sarif = render("sarif");
    sarif_schema::assert_valid(&sarif, "report-rerender");
    insta::assert_snapshot!("rich_sarif", redact(&sarif, &report));
}

#[test]
fn json_on_stdout_and_in_out_files_is_report_json_byte_for_byte() {
    let repo = TestRepo::new();
    let out = repo.scratch.join("ci/arev.json");
    std::fs::create_dir_all(out.parent().unwrap()).unwrap();
    let run = rich_run(
        &repo,
        &["-q", "--format", "json", "--out", out.to_str().unwrap()],
    );
    run.assert_code(1);
    let written = std::fs::read_to_string(run.run_dir().join("report.json")).unwrap();
    assert!(written.ends_with("}\n") && written.contains("\n  \"confirmed\": ["));
    assert_eq!(run.stdout, written, "stdout is report.json");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), written, "--out");
    // A text report on stdout, JSON in --out: the same file.
    let repo = TestRepo::new();
    let other = repo.scratch.join("also.json");
    let run = rich_run(&repo, &["-q", "--out", other.to_str().unwrap()]);
    run.assert_code(1);
    let written = std::fs::read_to_string(run.run_dir().join("report.json")).unwrap();
    assert_eq!(std::fs::read_to_string(&other).unwrap(), written);
    assert!(
        !run.stdout.starts_with('{'),
        "text on stdout: {}",
        run.stdout
    );
}

#[test]
fn github_annotations_escape_data_and_properties() {
    let repo = TestRepo::new();
    repo.write("src/we:ird,name.rs", LIB_RS).commit("odd name");
    let mut f = finding("A", "src/we:ird,name.rs", 2, "high", "error-handling");
    f["description"] = json!("d: 5%");
    let mut r = ruling("F1", "src/we:ird,name.rs", 2, "high", "enthusiast");
    r["resolution"] = json!("100% sure:\r\nline two, really");
    r["edit_instruction"] = Value::Null;
    let script = json!({"steps": [
        {"role": "enthusiast", "round": 1, "answer": {"findings": [f]}},
        {"role": "judge", "round": 1, "answer": {"rulings": [r], "summary": "s", "convergence": false, "next_round_model": null}}
    ]});
    let run = repo
        .arev()
        .args(&[
            "run",
            "src/we:ird,name.rs",
            "--max-rounds",
            "1",
            "--format",
            "github",
        ])
        .script(script)
        .run();
    run.assert_code(1);
    let first = run.stdout.lines().next().unwrap();
    assert_eq!(
        first,
        "::error file=src/we%3Aird%2Cname.rs,line=2,title=arev high · error-handling::d: 5%25%0AJudge: 100%25 sure:%0D%0Aline two, really"
    );
}

#[test]
fn fingerprints_survive_reruns_and_line_shifts() {
    let repo = TestRepo::new();
    let script = |line: u32| {
        json!({"steps": [
            {"role": "enthusiast", "round": 1, "answer": {"findings": [finding("F1", "src/lib.rs", line, "high", "error-handling")]}},
            {"role": "judge", "round": 1, "answer": {"rulings": [ruling("F1", "src/lib.rs", line, "high", "enthusiast")], "summary": "s", "convergence": false, "next_round_model": null}}
        ]})
    };
    let review = |line: u32| {
        let out = repo.scratch.join("r.sarif");
        let run = repo
            .arev()
            .args(&[
                "run",
                "src/lib.rs",
                "--max-rounds",
                "1",
                "--format",
                "json",
                "--sarif",
                out.to_str().unwrap(),
            ])
            .script(script(line))
            .run();
        run.assert_code(1);
        let report: Value = serde_json::from_str(&run.stdout).unwrap();
        let sarif =
            sarif_schema::assert_valid(&std::fs::read_to_string(&out).unwrap(), "fingerprints");
        let fp = report["confirmed"][0]["fingerprint"]
            .as_str()
            .unwrap()
            .to_string();
        let pfp = sarif["runs"][0]["results"][0]["partialFingerprints"]["arev/v2"]
            .as_str()
            .unwrap()
            .to_string();
        assert_eq!(fp, pfp);
        (fp, report["run_id"].as_str().unwrap().to_string())
    };
    let (a, id_a) = review(2);
    let (b, id_b) = review(2);
    assert_ne!(id_a, id_b);
    assert_eq!(a, b, "the same review twice gives the same fingerprint");
    // An unrelated edit moves the flagged line down by 10.
    let shifted = format!("{}{LIB_RS}", "// unrelated header line\n".repeat(10));
    repo.write("src/lib.rs", &shifted).commit("header");
    let (c, _) = review(12);
    assert_eq!(a, c, "a finding moved down 10 lines keeps its fingerprint");
    // Editing the flagged line itself is a different defect.
    repo.write(
        "src/lib.rs",
        &shifted.replace("s.parse().unwrap()", "s.parse().expect(\"n\")"),
    )
    .commit("edit");
    let (d, _) = review(12);
    assert_ne!(a, d);
}

#[test]
fn report_command_finds_runs_and_refuses_unfinished_or_corrupt_ones() {
    let repo = TestRepo::new();
    let run = rich_run(&repo, &["-q"]);
    run.assert_code(1);
    let dir = run.run_dir();
    let mut meta = run.meta();
    let id = dir.file_name().unwrap().to_str().unwrap().to_string();
    // By run dir, by id, by a unique prefix; --fail-on gates like `arev run`.
    for arg in [dir.to_str().unwrap(), &id, &id[..22]] {
        repo.arev()
            .args(&["report", arg, "--format", "json"])
            .run()
            .assert_code(0);
    }
    repo.arev()
        .args(&["report", &id, "--fail-on", "high"])
        .run()
        .assert_code(1);
    repo.arev()
        .args(&["report", &id, "--fail-on", "critical"])
        .run()
        .assert_code(0);
    // --sarif/--markdown/--out files next to another stdout format.
    let (sarif, md, out) = (
        repo.scratch.join("again.sarif"),
        repo.scratch.join("again.md"),
        repo.scratch.join("again.txt"),
    );
    let text = repo
        .arev()
        .args(&[
            "report",
            &id,
            "--sarif",
            sarif.to_str().unwrap(),
            "--markdown",
            md.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .run();
    text.assert_code(0);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), text.stdout);
    assert_eq!(
        std::fs::read_to_string(&md).unwrap(),
        std::fs::read_to_string(dir.join("report.md")).unwrap()
    );
    let direct = repo
        .arev()
        .args(&["report", &id, "--format", "sarif"])
        .run();
    assert_eq!(std::fs::read_to_string(&sarif).unwrap(), direct.stdout);
    // `--out x.json` is JSON whatever --format is, and a report.json file can be re-rendered.
    let as_json = repo.scratch.join("copied.json");
    repo.arev()
        .args(&["report", &id, "--out", as_json.to_str().unwrap()])
        .run()
        .assert_code(0);
    let copied: Value = serde_json::from_str(&std::fs::read_to_string(&as_json).unwrap()).unwrap();
    assert_eq!(copied, run.report());
    let from_file = repo
        .arev()
        .args(&["report", as_json.to_str().unwrap(), "--format", "sarif"])
        .run();
    from_file.assert_code(0);
    assert_eq!(from_file.stdout, direct.stdout);

    let one_line_error = |r: &Run, needle: &str| {
        r.assert_code(2);
        assert!(r.stdout.is_empty());
        let lines: Vec<&str> = r.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{}", r.stderr);
        assert!(
            lines[0].starts_with("arev: error: ") && lines[0].contains(needle),
            "{:?} lacks {needle:?}",
            lines[0]
        );
    };
    one_line_error(
        &repo.arev().args(&["report", "19990101-nope"]).run(),
        "no run `19990101-nope` under",
    );
    // A corrupt report.json.
    let copy = dir.with_file_name("20000101-000000-abcdef-corrupt");
    std::fs::create_dir_all(&copy).unwrap();
    std::fs::copy(dir.join("meta.json"), copy.join("meta.json")).unwrap();
    std::fs::write(copy.join("report.json"), "{\"schema_version\": 1,").unwrap();
    one_line_error(
        &repo.arev().args(&["report", copy.to_str().unwrap()]).run(),
        "not a valid arev report",
    );
    // A run that is still running: its recorded process, an arev (waiting on its stdin), is
    // alive. (A live process that is not arev is no running arev run: docs/contracts.md §14.1.)
    let running = dir.with_file_name("20000101-000001-abcdef-running");
    std::fs::create_dir_all(&running).unwrap();
    meta["status"] = json!("running");
    let mut live = std::process::Command::new(env!("CARGO_BIN_EXE_arev"))
        .args(["hook", "prompt"])
        .env("AREV_DISABLE", "1")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = live.id();
    let start: u64 = loop {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
        if stat.contains("(arev)") {
            break stat
                .rsplit_once(')')
                .unwrap()
                .1
                .split_whitespace()
                .nth(19)
                .unwrap()
                .parse()
                .unwrap();
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    meta["process"] = json!({"pid": pid, "start_time": start});
    std::fs::write(running.join("meta.json"), meta.to_string()).unwrap();
    one_line_error(
        &repo.arev().args(&["report", "20000101-000001"]).run(),
        "not finished",
    );
    let _ = live.kill();
    let _ = live.wait();
    // An ambiguous prefix.
    one_line_error(
        &repo.arev().args(&["report", "20000101"]).run(),
        "matches 2 runs",
    );
}

#[test]
fn runs_lists_newest_first_with_status_and_reason() {
    let repo = TestRepo::new();
    let first = rich_run(&repo, &["-q"]);
    first.assert_code(1);
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let second = repo.arev().args(&["run", "src/lib.rs", "-q"]).run();
    second.assert_code(0);
    let listed = repo.arev().args(&["runs", "--json"]).run();
    listed.assert_code(0);
    let runs: Value = serde_json::from_str(&listed.stdout).unwrap();
    let runs = runs.as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0]["stop_reason"], "zero-findings");
    assert_eq!(runs[0]["confirmed"], 0);
    assert_eq!(runs[1]["stop_reason"], "max-rounds");
    assert_eq!(runs[1]["confirmed"], 3);
    for r in runs {
        assert_eq!(r["status"], "complete");
        assert_eq!(r["target"], "src/lib.rs");
        assert!(Path::new(r["run_dir"].as_str().unwrap()).is_dir());
    }
    assert!(runs[0]["started_at"].as_str() > runs[1]["started_at"].as_str());
    let table = repo.arev().args(&["runs"]).run();
    table.assert_code(0);
    let lines: Vec<&str> = table.stdout.lines().collect();
    assert!(lines[0].starts_with("RUN ID"), "{}", table.stdout);
    assert!(lines[1].contains("complete") && lines[1].contains("zero-findings"));
    assert!(lines[2].contains("max-rounds") && lines[2].ends_with("src/lib.rs"));
    // An empty base is not an error.
    let none = repo
        .arev()
        .args(&[
            "runs",
            "--json",
            "--run-dir",
            repo.scratch.join("no-runs-here").to_str().unwrap(),
        ])
        .run();
    none.assert_code(0);
    assert_eq!(none.stdout.trim(), "[]");
}
