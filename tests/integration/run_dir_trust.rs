//! What the commands that read runs back trust (docs/trust.md): `arev result` and `arev
//! merge` exit by the gate the run recorded, never by the working tree's `fail_on`; every
//! run-dir file is read under a cap with a clear error past it; `status`/`runs` print no
//! control character of a run dir raw, C1 included.

use crate::harness::{finding, ruling, TestRepo};
use serde_json::{json, Value};
use std::path::Path;

/// Round 1: one high finding at src/lib.rs:2, confirmed.
fn confirmed_script() -> Value {
    json!({"steps": [
        {"role": "enthusiast", "round": 1, "answer": {"findings": [finding("F1", "src/lib.rs", 2, "high", "error-handling")]}},
        {"role": "judge", "round": 1, "answer": {"rulings": [ruling("F1", "src/lib.rs", 2, "high", "enthusiast")],
            "summary": "1 confirmed", "convergence": false, "next_round_model": null}}
    ]})
}

fn read_json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

#[test]
fn result_and_merge_exit_by_the_runs_recorded_gate_not_the_changes_config() {
    let repo = TestRepo::new();
    let out = repo.scratch.join("shard.json");
    let run = repo
        .arev()
        .args(&[
            "run",
            "src/*.rs",
            "--shard",
            "1/1",
            "--out",
            out.to_str().unwrap(),
        ])
        .script(confirmed_script())
        .run();
    run.assert_code(1);
    let dir = run.run_dir();
    assert_eq!(read_json(&dir.join("meta.json"))["fail_on"], "high");
    assert_eq!(read_json(&dir.join("report.json"))["fail_on"], "high");
    assert_eq!(read_json(&out)["fail_on"], "high");
    // The change under review says never: result and merge still fail.
    repo.write("arev.toml", "[review]\nfail_on = \"never\"\n");
    let result = repo.arev().args(&["result"]).run();
    result.assert_code(1);
    let merge = repo
        .arev()
        .args(&["merge", out.to_str().unwrap(), "--format", "json"])
        .run();
    merge.assert_code(1);
    assert_eq!(
        serde_json::from_str::<Value>(&merge.stdout).unwrap()["fail_on"],
        "high"
    );
    // Trusted inputs still decide: the flag.
    repo.arev()
        .args(&["result", "--fail-on", "never"])
        .run()
        .assert_code(0);
    repo.arev()
        .args(&["merge", out.to_str().unwrap(), "--fail-on", "never"])
        .run()
        .assert_code(0);
    // A run that recorded no gate (an older arev's): the trusted config — the user's
    // AREV_FAIL_ON, not the working tree's arev.toml.
    for f in ["meta.json", "report.json"] {
        let mut v = read_json(&dir.join(f));
        v.as_object_mut().unwrap().remove("fail_on");
        std::fs::write(dir.join(f), v.to_string()).unwrap();
    }
    repo.arev().args(&["result"]).run().assert_code(1);
    repo.arev()
        .args(&["result"])
        .env("AREV_FAIL_ON", "never")
        .run()
        .assert_code(0);
}

/// A planted or corrupted run dir whose records are huge: refused by size, each with a line
/// naming the file and the cap, never read whole.
#[test]
fn oversized_run_dir_files_are_refused_with_a_clear_error() {
    let repo = TestRepo::new();
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs"])
        .script(confirmed_script())
        .run();
    run.assert_code(1);
    let dir = run.run_dir();
    let id = dir.file_name().unwrap().to_str().unwrap().to_string();
    // Valid JSON, padded past 1 MiB with whitespace.
    let pad = |f: &str| {
        let mut text = std::fs::read_to_string(dir.join(f)).unwrap();
        text.push_str(&" ".repeat(1 << 20));
        std::fs::write(dir.join(f), text).unwrap();
    };
    pad("progress.json");
    let status = repo.arev().args(&["status", &id]).run();
    status.assert_code(0);
    assert!(
        status.stderr.contains(
            "progress.json: larger than 1 MiB, the most arev reads of a run record; refused"
        ),
        "{}",
        status.stderr
    );
    pad("meta.json");
    let runs = repo.arev().args(&["runs", "--json"]).run();
    runs.assert_code(0);
    let listed: Value = serde_json::from_str(&runs.stdout).unwrap();
    let err = listed[0]["error"].as_str().unwrap();
    assert!(
        err.ends_with("meta.json: larger than 1 MiB, the most arev reads of a run record; refused"),
        "{err}"
    );
    let status = repo.arev().args(&["status", &id, "--json"]).run();
    status.assert_code(0);
    assert!(
        serde_json::from_str::<Value>(&status.stdout).unwrap()["state"].is_null(),
        "{}",
        status.stdout
    );
    // A shard report past 64 MiB (sparse: nothing is written) is refused by merge.
    let big = repo.scratch.join("big.json");
    std::fs::File::create(&big)
        .unwrap()
        .set_len((64 << 20) + 1)
        .unwrap();
    let merge = repo.arev().args(&["merge", big.to_str().unwrap()]).run();
    merge.assert_code(2);
    assert!(
        merge
            .stderr
            .contains("larger than 64 MiB, the most arev reads of a report; refused"),
        "{}",
        merge.stderr
    );
}

/// `status --json` and `runs --json` escape DEL and the C1 controls (U+009B is a
/// one-character CSI) as JSON does C0: `\u009b`, the same value to a JSON reader; the text
/// screens show them as `\u{9b}`.
#[test]
fn status_and_runs_never_print_c1_controls_raw() {
    let repo = TestRepo::new();
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs"])
        .script(confirmed_script())
        .run();
    run.assert_code(1);
    let dir = run.run_dir();
    let hostile = dir.with_file_name(format!(
        "{}-\u{9b}31m\u{7f}x",
        dir.file_name().unwrap().to_str().unwrap()
    ));
    std::fs::rename(&dir, &hostile).unwrap();
    let mut meta = read_json(&hostile.join("meta.json"));
    meta["target"]["display"] = json!("src/\u{9b}2Jlib.rs\u{85}");
    std::fs::write(hostile.join("meta.json"), meta.to_string()).unwrap();
    let raw = |s: &str| s.chars().any(|c| ('\u{7f}'..='\u{9f}').contains(&c));
    let status = repo
        .arev()
        .args(&["status", hostile.to_str().unwrap(), "--json"])
        .run();
    status.assert_code(0);
    assert!(!raw(&status.stdout), "{:?}", status.stdout);
    assert!(
        status.stdout.contains("\\u009b31m\\u007fx"),
        "{}",
        status.stdout
    );
    let v: Value = serde_json::from_str(&status.stdout).unwrap();
    assert!(v["run_id"].as_str().unwrap().ends_with("-\u{9b}31m\u{7f}x"));
    let runs = repo.arev().args(&["runs", "--json"]).run();
    runs.assert_code(0);
    assert!(!raw(&runs.stdout), "{:?}", runs.stdout);
    assert!(
        runs.stdout.contains("src/\\u009b2Jlib.rs\\u0085"),
        "{}",
        runs.stdout
    );
    for args in [vec!["status", hostile.to_str().unwrap()], vec!["runs"]] {
        let r = repo.arev().args(&args).run();
        r.assert_code(0);
        assert!(
            !raw(&r.stdout) && !raw(&r.stderr),
            "{args:?}: {:?}",
            r.stdout
        );
        assert!(r.stdout.contains("\\u{9b}"), "{args:?}: {}", r.stdout);
    }
}
