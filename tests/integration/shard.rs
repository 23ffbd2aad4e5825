//! `--shard i/n` and `arev merge`: the merge of the shards equals the unsharded review of the
//! same manifest with the same scripted agents (apart from ids and timings), and merges with
//! gaps, overlaps or another target are refused with exit 2.

use crate::harness::{finding, ruling, TestRepo, LIB_RS};
use serde_json::{json, Value};

const SHARDS: u32 = 3;

/// A repo with 8 files under src/, and the two files (in different shards) that get findings.
fn setup() -> (TestRepo, String, String) {
    let repo = TestRepo::new();
    for i in 0..7 {
        repo.write(&format!("src/m{i}.rs"), LIB_RS);
    }
    repo.commit("modules");
    let mut paths: Vec<String> = (0..7).map(|i| format!("src/m{i}.rs")).collect();
    paths.push("src/lib.rs".into());
    paths.sort();
    let refs: Vec<&str> = paths.iter().map(String::as_str).collect();
    let slots = arev::target::partition(&refs, SHARDS);
    let fa = paths[0].clone();
    let fb = paths
        .iter()
        .zip(&slots)
        .find(|(_, s)| **s != slots[0])
        .map(|(p, _)| p.clone())
        .unwrap();
    (repo, fa, fb)
}

fn judge(rulings: Vec<Value>) -> Value {
    json!({"role": "judge", "round": 1, "answer": {"rulings": rulings, "summary": "s", "convergence": false, "next_round_model": null}})
}

/// Script for a review that sees `files` (the union numbers findings by file, then line).
fn script(fa: &str, fb: &str, sees_a: bool, sees_b: bool) -> Value {
    let mut findings = vec![];
    let mut rulings = vec![];
    if sees_a {
        findings.push(finding("A", fa, 2, "high", "error-handling"));
        findings.push(finding("B", fa, 5, "low", "naming"));
        rulings.push(ruling("F1", fa, 2, "high", "enthusiast"));
        rulings.push(ruling("F2", fa, 5, "low", "adversary"));
    }
    if sees_b {
        findings.push(finding("C", fb, 2, "medium", "logic"));
        let id = format!("F{}", rulings.len() + 1);
        rulings.push(ruling(&id, fb, 2, "medium", "enthusiast"));
    }
    if findings.is_empty() {
        return json!({"steps": []});
    }
    json!({"steps": [
        {"role": "enthusiast", "round": 1, "answer": {"findings": findings}},
        judge(rulings)
    ]})
}

fn strip_ids(v: &Value) -> Value {
    let mut v = v.clone();
    for f in v.as_array_mut().unwrap() {
        f.as_object_mut().unwrap().remove("id");
    }
    v
}

/// The results of a SARIF file, schema-checked, without the run-local finding ids.
fn sarif_results(path: &std::path::Path) -> Value {
    let name = path.file_stem().unwrap().to_str().unwrap();
    let mut s = crate::sarif_schema::assert_valid(
        &std::fs::read_to_string(path).unwrap(),
        &format!("shard-{name}"),
    );
    let mut results = s["runs"][0]["results"].take();
    for r in results.as_array_mut().unwrap() {
        r["properties"]
            .as_object_mut()
            .unwrap()
            .remove("arev.findingId");
    }
    results
}

#[test]
fn merged_shards_equal_the_unsharded_review() {
    let (repo, fa, fb) = setup();
    let scratch = &repo.scratch;
    let full_sarif = scratch.join("full.sarif");
    let full = repo
        .arev()
        .args(&[
            "run",
            "src/*.rs",
            "-q",
            "--format",
            "json",
            "--sarif",
            full_sarif.to_str().unwrap(),
        ])
        .script(script(&fa, &fb, true, true))
        .run();
    full.assert_code(1);
    let full: Value = serde_json::from_str(&full.stdout).unwrap();
    assert_eq!(full["confirmed"].as_array().unwrap().len(), 2);
    assert_eq!(full["debunked"].as_array().unwrap().len(), 1);
    assert!(full["shard"].is_null());

    let mut outs = vec![];
    let mut covered = vec![];
    for i in 1..=SHARDS {
        let spec = format!("{i}/{SHARDS}");
        let out = scratch.join(format!("shard-{i}.json"));
        // Which of the two files this shard holds decides its script.
        let probe: Vec<String> = {
            let paths: Vec<String> = full["target"]["allowed_files"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p.as_str().unwrap().to_string())
                .collect();
            let refs: Vec<&str> = paths.iter().map(String::as_str).collect();
            let slots = arev::target::partition(&refs, SHARDS);
            paths
                .iter()
                .zip(slots)
                .filter(|(_, s)| *s == i)
                .map(|(p, _)| p.clone())
                .collect()
        };
        let run = repo
            .arev()
            .args(&[
                "run",
                "src/*.rs",
                "-q",
                "--shard",
                &spec,
                "--format",
                "json",
                "--out",
                out.to_str().unwrap(),
            ])
            .script(script(&fa, &fb, probe.contains(&fa), probe.contains(&fb)))
            .run();
        let report: Value = serde_json::from_str(&run.stdout).unwrap();
        let expected = if probe.contains(&fa) { 1 } else { 0 };
        run.assert_code(expected);
        let shard = &report["shard"];
        assert_eq!(shard["index"], i);
        assert_eq!(shard["count"], SHARDS);
        assert_eq!(shard["manifest_sha256"], full["target"]["sha256"]);
        assert_eq!(shard["manifest_files"], full["target"]["allowed_files"]);
        assert_eq!(shard["files"], json!(probe));
        // The shard reviews (and its agents may read) only its own slice.
        assert_eq!(report["target"]["allowed_files"], json!(probe));
        let manifest = std::fs::read_to_string(
            std::path::Path::new(report["run_dir"].as_str().unwrap()).join("target/manifest.txt"),
        )
        .unwrap();
        assert_eq!(manifest.lines().collect::<Vec<_>>(), probe);
        covered.extend(probe);
        outs.push(out);
    }
    covered.sort();
    assert_eq!(json!(covered), full["target"]["allowed_files"]);

    let merged_sarif = scratch.join("merged.sarif");
    let mut args: Vec<String> = vec!["merge".into()];
    // Any order.
    args.extend(outs.iter().rev().map(|p| p.display().to_string()));
    args.extend(["--format".into(), "json".into(), "--sarif".into()]);
    args.push(merged_sarif.display().to_string());
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let merged = repo.arev().args(&refs).run();
    merged.assert_code(1);
    let merged: Value = serde_json::from_str(&merged.stdout).unwrap();

    for key in [
        "status",
        "stop_reason",
        "abort_reason",
        "target",
        "by_severity",
        "coverage",
    ] {
        assert_eq!(merged[key], full[key], "{key}");
    }
    for key in ["confirmed", "debunked", "unresolved"] {
        assert_eq!(strip_ids(&merged[key]), strip_ids(&full[key]), "{key}");
    }
    assert_eq!(
        merged["quality"]["debunk_rate"],
        full["quality"]["debunk_rate"]
    );
    assert_eq!(
        merged["merged_from"].as_array().unwrap().len(),
        SHARDS as usize
    );
    assert_eq!(sarif_results(&merged_sarif), sarif_results(&full_sarif));

    // Refusals: a missing shard, a shard given twice, a shard of another target.
    let refuse = |args: Vec<String>, needle: &str| {
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let r = repo.arev().args(&refs).run();
        r.assert_code(2);
        assert!(r.stdout.is_empty());
        assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
        assert!(r.stderr.contains(needle), "{:?} lacks {needle:?}", r.stderr);
    };
    let p = |i: usize| outs[i].display().to_string();
    refuse(vec!["merge".into(), p(0), p(1)], "is covered by no shard");
    refuse(
        vec!["merge".into(), p(0), p(0), p(1), p(2)],
        "are both shard 1/3",
    );
    refuse(
        vec![
            "merge".into(),
            p(0),
            p(1),
            p(2),
            scratch.join("nope.json").display().to_string(),
        ],
        "cannot read report",
    );
    repo.write("src/m0.rs", "pub fn changed() {}\n")
        .commit("change");
    let other = scratch.join("other-3.json");
    repo.arev()
        .args(&[
            "run",
            "src/*.rs",
            "-q",
            "--shard",
            &format!("3/{SHARDS}"),
            "--format",
            "json",
            "--out",
            other.to_str().unwrap(),
        ])
        .run();
    refuse(
        vec!["merge".into(), p(0), p(1), other.display().to_string()],
        "review different targets",
    );
}

#[test]
fn shard_needs_a_manifest_and_a_valid_slice() {
    let repo = TestRepo::new();
    let r = repo
        .arev()
        .args(&["run", "src/lib.rs", "--shard", "1/2"])
        .run();
    r.assert_code(2);
    assert!(
        r.stderr.contains("a file target cannot be sharded"),
        "{}",
        r.stderr
    );
    assert!(r.run_dirs().is_empty());
    repo.write("src/lib.rs", "pub fn x() {}\n");
    let r = repo.arev().args(&["run", "diff", "--shard", "1/2"]).run();
    r.assert_code(2);
    assert!(
        r.stderr.contains("a diff target cannot be sharded"),
        "{}",
        r.stderr
    );
    for bad in ["0/2", "3/2", "x"] {
        let r = repo.arev().args(&["run", "src/*.rs", "--shard", bad]).run();
        r.assert_code(2);
        assert!(r.stderr.contains("--shard"), "{}", r.stderr);
    }
}

#[test]
fn a_shard_without_files_is_empty_and_merges() {
    let repo = TestRepo::new();
    repo.write("src/b.rs", "pub fn b() {}\n").commit("b");
    // 2 files in 3 shards: exactly one shard is empty.
    let mut outs = vec![];
    let mut empty = 0;
    for i in 1..=3 {
        let out = repo.scratch.join(format!("s{i}.json"));
        let r = repo
            .arev()
            .args(&[
                "run",
                "src/*.rs",
                "-q",
                "--shard",
                &format!("{i}/3"),
                "--format",
                "json",
                "--out",
                out.to_str().unwrap(),
            ])
            .run();
        r.assert_code(0);
        let report: Value = serde_json::from_str(&r.stdout).unwrap();
        if report["shard"]["files"].as_array().unwrap().is_empty() {
            empty += 1;
            assert_eq!(report["status"], "empty");
            assert!(r.stderr.contains("nothing to review"), "{}", r.stderr);
        } else {
            assert_eq!(report["status"], "complete");
        }
        outs.push(out.display().to_string());
    }
    assert_eq!(empty, 1);
    let mut args = vec!["merge"];
    args.extend(outs.iter().map(String::as_str));
    let m = repo.arev().args(&args).run();
    m.assert_code(0);
    assert!(m.stdout.contains("2 file(s) reviewed"), "{}", m.stdout);
}
