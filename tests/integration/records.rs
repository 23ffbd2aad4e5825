//! A run's records while it runs and after its process dies: progress.json follows every
//! dispatch, meta.json names the arev process, and a run whose process was SIGKILLed is
//! shown `abandoned` by `arev runs` and refused as such by `arev report` — while meta.json,
//! never rewritten by a reader, still says `running`.

use crate::harness::{finding, ruling, TestRepo};
use serde_json::{json, Value};
use std::path::Path;
use std::time::{Duration, Instant};

fn read(path: &Path) -> Option<Value> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

fn runs_json(repo: &TestRepo) -> Value {
    let run = repo.arev().args(&["runs", "--json"]).run();
    run.assert_code(0);
    serde_json::from_str(&run.stdout).unwrap()
}

#[test]
fn progress_follows_every_dispatch_of_a_finished_run() {
    let repo = TestRepo::new();
    let f = finding("F1", "src/lib.rs", 2, "high", "error-handling");
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs", "--max-rounds", "1"])
        .script(json!({"steps": [
            {"role": "enthusiast", "round": 1, "delay_ms": 150, "answer": {"findings": [f]}},
            {"role": "judge", "round": 1, "answer": {"rulings": [ruling("F1", "src/lib.rs", 2, "high", "enthusiast")],
                "summary": "s", "convergence": false, "next_round_model": null}},
        ]}))
        .run();
    run.assert_code(1);
    let dispatches = run.fake_log().len() as u64;
    let p = run.json("progress.json");
    assert_eq!(p["phase"], "done");
    assert_eq!(p["run_id"], run.meta()["run_id"]);
    assert_eq!(p["round"], 1);
    assert_eq!(p["role"], "judge", "the Judge dispatched last");
    assert_eq!(p["state"], "finished");
    assert_eq!(p["running"], json!([]));
    assert_eq!(p["counts"]["dispatches_started"], dispatches);
    assert_eq!(p["counts"]["dispatches_finished"], dispatches);
    assert_eq!(p["counts"]["rounds"], 1);
    assert_eq!(p["counts"]["findings"], 1);
    assert_eq!(p["counts"]["confirmed"], 1);
    assert!(p["elapsed_ms"].as_u64().unwrap() >= 150, "{p}");
    // meta.json names the process that ran the review (this one has exited since).
    let meta = run.meta();
    assert!(meta["process"]["pid"].as_u64().unwrap() > 0);
    assert!(meta["process"]["start_time"].is_u64());
    assert_eq!(runs_json(&repo)[0]["status"], "complete");
}

#[test]
fn a_sigkilled_run_is_abandoned_never_running_forever() {
    let repo = TestRepo::new();
    // Slow agents: the review is still going when arev is killed.
    let mut child = repo
        .arev()
        .args(&["run", "src/lib.rs"])
        .script(json!({"steps": [
            {"role": "enthusiast", "delay_ms": 20000},
            {"role": "adversary", "delay_ms": 20000},
        ]}))
        .command()
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let base = repo.root.join(".arev/runs");
    let deadline = Instant::now() + Duration::from_secs(30);
    let (dir, progress) = loop {
        assert!(Instant::now() < deadline, "the agents never started");
        let dir = std::fs::read_dir(&base)
            .ok()
            .and_then(|mut d| d.next())
            .and_then(Result::ok)
            .map(|e| e.path());
        let p = dir.as_ref().and_then(|d| read(&d.join("progress.json")));
        if let (Some(d), Some(p)) = (dir, p) {
            if p["running"].as_array().is_some_and(|r| r.len() >= 2) {
                break (d, p);
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    // progress.json while the agents run.
    assert_eq!(progress["phase"], "review");
    assert_eq!(progress["round"], 1);
    assert_eq!(progress["state"], "started");
    assert_eq!(progress["counts"]["dispatches_finished"], 0);
    let roles: Vec<&str> = progress["running"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["role"].as_str().unwrap())
        .collect();
    assert!(
        roles.contains(&"enthusiast") && roles.contains(&"adversary"),
        "{roles:?}"
    );
    let meta = read(&dir.join("meta.json")).unwrap();
    assert_eq!(meta["process"]["pid"], child.id());
    // Alive: running.
    assert_eq!(runs_json(&repo)[0]["status"], "running");

    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    child.wait().unwrap();

    let runs = runs_json(&repo);
    assert_eq!(runs[0]["status"], "abandoned", "{runs}");
    let table = repo.arev().args(&["runs"]).run();
    assert!(table.stdout.contains("abandoned"), "{}", table.stdout);
    let id = runs[0]["run_id"].as_str().unwrap();
    let report = repo.arev().args(&["report", id]).run();
    report.assert_code(2);
    assert!(report.stderr.contains("abandoned"), "{}", report.stderr);
    assert!(
        report.stderr.contains(&format!("pid {}", child.id())),
        "{}",
        report.stderr
    );
    // Readers derive the status; the record itself is left as it was.
    let meta = read(&dir.join("meta.json")).unwrap();
    assert_eq!(meta["status"], "running");

    // The orphaned agents: SIGKILL took arev before it could stop them.
    for line in std::fs::read_to_string(repo.scratch.join("fake.log"))
        .unwrap()
        .lines()
    {
        let v: Value = serde_json::from_str(line).unwrap();
        let pgid = v["pid"].as_i64().unwrap() as i32;
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(pgid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
}

/// `arev runs` shows each run's age and cost and marks a verdict-cache hit in its table;
/// `--prune-older-than` lists (`--dry-run`) and then deletes only arev's own finished run
/// dirs that ended before the cut-off — never a newer run, nor a directory without meta.json.
#[test]
fn runs_shows_age_cost_and_cache_hits_and_prunes_only_old_finished_runs() {
    let repo = TestRepo::new();
    let cache = repo.scratch.join("shared-cache");
    let f = finding("F1", "src/lib.rs", 2, "high", "error-handling");
    let review = || {
        repo.arev()
            .args(&["run", "src/lib.rs", "--max-rounds", "1"])
            .env("XDG_CACHE_HOME", cache.to_str().unwrap())
            .script(json!({"steps": [
                {"role": "enthusiast", "round": 1, "answer": {"findings": [f]}},
                {"role": "judge", "round": 1, "answer": {"rulings": [ruling("F1", "src/lib.rs", 2, "high", "enthusiast")],
                    "summary": "s", "convergence": false, "next_round_model": null}},
            ]}))
            .run()
    };
    let first = review();
    first.assert_code(1);
    let old_dir = first.run_dir();
    let old_id = first.meta()["run_id"].as_str().unwrap().to_owned();
    let cost = first.report()["cost"]["usd"].as_f64().unwrap();
    assert!(cost > 0.0, "the fake agents report a cost");
    let second = review();
    second.assert_code(1);
    let new_dir = second
        .run_dirs()
        .into_iter()
        .find(|d| *d != old_dir)
        .expect("a second run dir");
    assert_eq!(
        read(&new_dir.join("meta.json")).unwrap()["cached_from"],
        json!(old_id),
        "the second review is a cache hit"
    );

    // The first run started two and a half hours ago (its meta.json says so): its age
    // reads `2h` however long this test takes under load.
    let meta_path = old_dir.join("meta.json");
    let mut meta = read(&meta_path).unwrap();
    let started = chrono::Utc::now() - chrono::Duration::minutes(150);
    meta["started_at"] = json!(started.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string());
    std::fs::write(&meta_path, serde_json::to_string_pretty(&meta).unwrap()).unwrap();
    let table = repo.arev().args(&["runs"]).run();
    table.assert_code(0);
    let head = table.stdout.lines().next().unwrap();
    for col in [
        "RUN ID",
        "STATUS",
        "AGE",
        "REASON",
        "CONFIRMED",
        "COST",
        "TARGET",
    ] {
        assert!(head.contains(col), "{head}");
    }
    let row = |id: &str| {
        table
            .stdout
            .lines()
            .find(|l| l.starts_with(id))
            .unwrap_or_else(|| panic!("no row for {id}: {}", table.stdout))
            .to_owned()
    };
    let old_row = row(&old_id);
    assert!(old_row.contains(&format!("${cost:.4}")), "{old_row}");
    assert!(old_row.contains("complete"), "{old_row}");
    assert!(old_row.contains(" 2h "), "its age: {old_row}");
    let new_id = new_dir.file_name().unwrap().to_str().unwrap().to_owned();
    assert!(
        row(&new_id).contains(&format!("(cache hit of {old_id})")),
        "{}",
        table.stdout
    );
    assert!(runs_json(&repo)[0]["cost_usd"].as_f64().is_some());

    // Age the first run by 40 days; put a directory arev did not make next to it.
    let meta_path = old_dir.join("meta.json");
    let mut meta = read(&meta_path).unwrap();
    meta["started_at"] = json!("2020-01-01T00:00:00.000Z");
    meta["finished_at"] = json!("2020-01-01T00:05:00.000Z");
    std::fs::write(&meta_path, serde_json::to_string_pretty(&meta).unwrap()).unwrap();
    let base = old_dir.parent().unwrap().to_path_buf();
    let foreign = base.join("20200101-000000-abcdef-not-arevs");
    std::fs::create_dir_all(&foreign).unwrap();
    std::fs::write(foreign.join("notes.txt"), "mine\n").unwrap();

    let dry = repo
        .arev()
        .args(&["runs", "--prune-older-than", "30d", "--dry-run"])
        .run();
    dry.assert_code(0);
    assert_eq!(dry.stdout.lines().count(), 1, "{}", dry.stdout);
    assert!(
        dry.stdout.starts_with("would remove ") && dry.stdout.contains(&old_id),
        "{}",
        dry.stdout
    );
    assert!(old_dir.is_dir(), "--dry-run deletes nothing");

    let prune = repo
        .arev()
        .args(&["runs", "--prune-older-than", "30d"])
        .run();
    prune.assert_code(0);
    assert!(prune.stdout.starts_with("removed "), "{}", prune.stdout);
    assert!(
        prune.stderr.contains("removed 1 run dir(s)"),
        "{}",
        prune.stderr
    );
    assert!(!old_dir.exists(), "the old finished run is gone");
    assert!(new_dir.is_dir(), "a newer run is kept");
    assert!(
        foreign.join("notes.txt").is_file(),
        "a directory arev did not make is kept"
    );

    let bad = repo
        .arev()
        .args(&["runs", "--prune-older-than", "soon"])
        .run();
    bad.assert_code(2);
    assert!(bad.stderr.contains("30d"), "{}", bad.stderr);
    let lone = repo.arev().args(&["runs", "--dry-run"]).run();
    lone.assert_code(2);
}
