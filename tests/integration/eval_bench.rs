//! `arev eval bench` through the real binary: a fixture in the offline code-review
//! benchmark's format (written for these tests: three PRs over two local bare repositories,
//! a loopback fake of GitHub's pulls API, `--mirror` to the bare repositories), the fake
//! agent reviewing; the candidates file's layout, resumption, a PR that cannot be fetched,
//! the Matcher's P/R/F1 on a known match matrix with a malformed answer, and bad input.

use crate::background::{bind, Background};
use crate::harness::{finding, ruling, TestRepo};
use axum::extract::{Path as UrlPath, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

const UTIL: &str = "pub fn first(v: &[u32]) -> u32 {\n    v[0]\n}\n\npub fn last(v: &[u32]) -> u32 {\n    v[v.len() - 1]\n}\n";
const PR1: &str = "https://github.com/acme/widgets/pull/1";
const PR2: &str = "https://github.com/acme/widgets/pull/2";
const PR3: &str = "https://github.com/acme/gadgets/pull/7";

fn git(dir: &Path, args: &[&str]) -> String {
    let o = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// The fixture: `mirror/acme/widgets.git` with a base commit and two PR heads, a fake
/// forge answering for PR 1 and 2 (PR 3's repository is not there: 404), golden files.
struct Fixture {
    repo: TestRepo,
    golden: PathBuf,
    mirror: PathBuf,
    _forge: Background,
    api: String,
}

fn fixture() -> Fixture {
    let repo = TestRepo::new();
    let work = repo.scratch.join("widgets");
    std::fs::create_dir_all(work.join("src")).unwrap();
    git(&work, &["init", "-q", "-b", "main"]);
    git(&work, &["config", "user.email", "t@example.com"]);
    git(&work, &["config", "user.name", "T"]);
    std::fs::write(work.join("src/util.rs"), UTIL).unwrap();
    git(&work, &["add", "-A"]);
    git(&work, &["commit", "-q", "-m", "base"]);
    let base = git(&work, &["rev-parse", "HEAD"]);
    git(&work, &["checkout", "-q", "-b", "pr1"]);
    std::fs::write(
        work.join("src/util.rs"),
        UTIL.replace("v[0]", "v[1]")
            .replace("v.len() - 1", "v.len()"),
    )
    .unwrap();
    git(&work, &["commit", "-q", "-am", "pr1"]);
    let head1 = git(&work, &["rev-parse", "HEAD"]);
    git(&work, &["checkout", "-q", "main"]);
    git(&work, &["checkout", "-q", "-b", "pr2"]);
    std::fs::write(
        work.join("src/util.rs"),
        format!("{UTIL}\npub fn two() -> u32 {{ 2 }}\n"),
    )
    .unwrap();
    git(&work, &["commit", "-q", "-am", "pr2"]);
    let head2 = git(&work, &["rev-parse", "HEAD"]);
    let mirror = repo.scratch.join("mirror");
    std::fs::create_dir_all(mirror.join("acme")).unwrap();
    let bare = mirror.join("acme/widgets.git");
    git(
        &repo.scratch,
        &[
            "clone",
            "-q",
            "--bare",
            work.to_str().unwrap(),
            bare.to_str().unwrap(),
        ],
    );
    let pulls: Arc<BTreeMap<String, Value>> = Arc::new(
        [("acme/widgets/1", &head1), ("acme/widgets/2", &head2)]
            .into_iter()
            .map(|(k, h)| {
                (
                    k.to_string(),
                    json!({"base": {"ref": "main", "sha": base}, "head": {"ref": "pr", "sha": h}}),
                )
            })
            .collect(),
    );
    async fn pull(
        State(p): State<Arc<BTreeMap<String, Value>>>,
        UrlPath((o, r, n)): UrlPath<(String, String, String)>,
    ) -> Response {
        match p.get(&format!("{o}/{r}/{n}")) {
            Some(v) => Json(v.clone()).into_response(),
            None => (StatusCode::NOT_FOUND, Json(json!({"message": "Not Found"}))).into_response(),
        }
    }
    let app = Router::new()
        .route("/repos/{o}/{r}/pulls/{n}", get(pull))
        .with_state(pulls);
    let (listener, addr) = bind();
    let forge = Background::spawn("fake-forge", listener, app);
    let golden = repo.scratch.join("golden");
    std::fs::create_dir_all(&golden).unwrap();
    write_golden(
        &golden.join("widgets.json"),
        &json!([
            {"pr_title": "first reads the second element", "url": PR1, "comments": [
                {"comment": "first() returns v[1], the second element: off by one.", "severity": "High"},
                {"comment": "first() panics on a one-element slice.", "severity": "Medium"},
                {"comment": "last() reads one past the end.", "severity": "High"}
            ]},
            {"pr_title": "add two", "url": PR2, "comments": [
                {"comment": "two() should be const.", "severity": "Low"}
            ]}
        ]),
    );
    write_golden(
        &golden.join("gadgets.json"),
        &json!([{"pr_title": "gone", "url": PR3, "comments": [{"comment": "x", "severity": "Low"}]}]),
    );
    Fixture {
        repo,
        golden,
        mirror,
        _forge: forge,
        api: format!("http://{addr}"),
    }
}

fn write_golden(p: &Path, v: &Value) {
    std::fs::write(p, serde_json::to_string_pretty(v).unwrap()).unwrap();
}

/// PR 1's review confirms two findings (util.rs:2 and :6); PR 2's finds nothing.
fn review_script(extra: &[Value]) -> Value {
    let pr1 = json!({"path": "src/util.rs", "text": "v[1]"});
    let mut steps = vec![
        json!({"role": "enthusiast", "round": 1, "if_file_contains": pr1, "answer": {"findings": [
            finding("F1", "src/util.rs", 2, "high", "off-by-one"),
            finding("F2", "src/util.rs", 6, "high", "bounds")]}}),
        json!({"role": "judge", "round": 1, "if_file_contains": pr1, "answer": {"rulings": [
            ruling("F1", "src/util.rs", 2, "high", "enthusiast"),
            ruling("F2", "src/util.rs", 6, "high", "enthusiast")],
            "summary": "2 confirmed", "convergence": true, "next_round_model": null}}),
    ];
    steps.extend(extra.iter().cloned());
    json!({ "steps": steps })
}

/// `arev eval bench` over the fixture's golden files and mirror into `out`, then `extra`.
fn bench_args(f: &Fixture, out: &Path, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = [
        "eval",
        "bench",
        "--golden",
        f.golden.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--api-url",
        &f.api,
        "--mirror",
        &format!("https://github.com/={}/", f.mirror.display()),
    ]
    .map(String::from)
    .to_vec();
    args.extend(extra.iter().map(|a| a.to_string()));
    args
}

fn bench(f: &Fixture, out: &Path, extra: &[&str], script: Value) -> crate::harness::Run {
    let args = bench_args(f, out, extra);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    f.repo.arev().args(&args).script(script).run()
}

fn read_json(p: &Path) -> Value {
    serde_json::from_str(
        &std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())),
    )
    .unwrap()
}

/// The benchmark's candidates layout: url → tool → [{text, path, line, source}], exactly.
fn assert_candidates_layout(v: &Value) {
    let prs = v.as_object().expect("an object keyed by PR url");
    for (url, tools) in prs {
        assert!(
            url.starts_with("https://github.com/") && url.contains("/pull/"),
            "{url}"
        );
        for (tool, cands) in tools.as_object().expect("tool → candidates") {
            assert!(tool == "arev" || tool == "arev-unresolved", "{tool}");
            for c in cands.as_array().expect("a list") {
                let o = c.as_object().unwrap();
                let mut keys: Vec<&str> = o.keys().map(String::as_str).collect();
                keys.sort_unstable();
                assert_eq!(keys, ["line", "path", "source", "text"], "{c}");
                assert!(o["text"].as_str().is_some_and(|t| !t.is_empty()));
                assert!(o["path"].is_string() || o["path"].is_null());
                assert!(o["line"].is_u64() || o["line"].is_null());
                assert_eq!(o["source"], tool.as_str());
            }
        }
    }
}

/// Assert `v` is valid against `schemas/<name>.schema.json`.
fn assert_schema(name: &str, v: &Value) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("schemas/{name}.schema.json"));
    let validator = jsonschema::validator_for(&read_json(&path)).unwrap();
    let errors: Vec<String> = validator.iter_errors(v).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{name}: {errors:#?}");
}

fn fake_dispatches(f: &Fixture, role: &str) -> usize {
    std::fs::read_to_string(f.repo.scratch.join("fake.log"))
        .unwrap_or_default()
        .lines()
        .filter(|l| serde_json::from_str::<Value>(l).is_ok_and(|v| v["role"] == role))
        .count()
}

#[test]
fn bench_reviews_each_pr_writes_the_candidates_file_and_resumes() {
    let f = fixture();
    let out = f.repo.scratch.join("out");
    let run = bench(&f, &out, &["--jobs", "2"], review_script(&[]));
    // PR 3 cannot be fetched: reported, the others go on; exit 3.
    assert_eq!(run.code, 3, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr
            .contains(&format!("bench {PR3}: FAILED (the forge API: GET ")),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("HTTP 404"), "{}", run.stderr);
    assert!(
        run.stdout
            .contains("3 pull request(s), 1 failed, 0 not run; cost $"),
        "{}",
        run.stdout
    );
    let cands = read_json(&out.join("candidates.json"));
    assert_candidates_layout(&cands);
    assert_schema("eval-bench-candidates", &cands);
    assert_schema("eval-bench-report", &read_json(&out.join("bench.json")));
    let pr1 = &cands[PR1]["arev"];
    assert_eq!(pr1.as_array().unwrap().len(), 2, "{cands}");
    assert_eq!(
        pr1[0],
        json!({"text": "off-by-one defect\n\nchecked the code", "path": "src/util.rs", "line": 2, "source": "arev"})
    );
    assert_eq!(cands[PR1]["arev-unresolved"], json!([]));
    assert_eq!(cands[PR2], json!({"arev": [], "arev-unresolved": []}));
    assert!(cands.get(PR3).is_none());
    // arev's own JSON of every review: the run dirs are kept under the output dir.
    let bench_json = read_json(&out.join("bench.json"));
    for pr in bench_json["prs"].as_array().unwrap() {
        if pr["outcome"] == "complete" {
            let dir = PathBuf::from(pr["run_dir"].as_str().unwrap());
            assert!(dir.starts_with(out.join("runs")), "{}", dir.display());
            assert!(dir.join("report.json").is_file());
        }
    }
    let enthusiasts = fake_dispatches(&f, "enthusiast");
    assert!(enthusiasts >= 2);
    // Again: PR 1 and 2 are kept (nothing dispatched), PR 3 is tried again.
    let again = bench(&f, &out, &[], review_script(&[]));
    assert_eq!(again.code, 3);
    assert!(
        again
            .stderr
            .contains(&format!("bench {PR1}: kept (2 confirmed, 0 unresolved)")),
        "{}",
        again.stderr
    );
    assert!(
        again.stderr.contains(&format!("bench {PR2}: kept")),
        "{}",
        again.stderr
    );
    assert!(
        again.stderr.contains(&format!("bench {PR3}: FAILED")),
        "{}",
        again.stderr
    );
    assert_eq!(fake_dispatches(&f, "enthusiast"), enthusiasts);
    assert_eq!(read_json(&out.join("candidates.json")), cands);
}

#[test]
fn bench_score_computes_the_benchmarks_figures_and_reports_a_malformed_matcher() {
    let f = fixture();
    let labels = f.repo.scratch.join("pr_labels.json");
    std::fs::write(
        &labels,
        json!({
            PR1: {"llm_pr_labels": {"requires_context": "cross_file"}},
            PR2: {"llm_pr_labels": {"requires_context": "local"}}
        })
        .to_string(),
    )
    .unwrap();
    let out = f.repo.scratch.join("out");
    // g1-c1 and g2-c1 match (candidate 1 names two golden comments); g3-c2 is malformed
    // twice; every other pair is the fake's default: no match.
    let script = review_script(&[
        json!({"role": "matcher", "finding": "g1-c1", "answer": {"reasoning": "same off-by-one", "match": true, "confidence": 0.9}}),
        json!({"role": "matcher", "finding": "g2-c1", "answer": {"reasoning": "related", "match": true, "confidence": 0.5}}),
        json!({"role": "matcher", "finding": "g3-c2", "answer_text": "I think so"}),
    ]);
    let run = bench(
        &f,
        &out,
        &[
            "--only",
            "widgets",
            "--score",
            "--labels",
            labels.to_str().unwrap(),
        ],
        script,
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let score = &read_json(&out.join("bench.json"))["score"];
    // PR 1: golden 1 and 2 matched, 3 not; candidate 2 matched nothing → tp 2, fp 1, fn 1.
    // PR 2: no candidate → fn 1. Overall P = 2/3, R = 2/4, F1 = 4/7.
    assert_eq!(
        (
            score["overall"]["tp"].as_u64(),
            score["overall"]["fp"].as_u64(),
            score["overall"]["fn"].as_u64()
        ),
        (Some(2), Some(1), Some(2)),
        "{score}"
    );
    let close = |v: &Value, x: f64| (v.as_f64().unwrap() - x).abs() < 1e-9;
    assert!(close(&score["overall"]["precision"], 2.0 / 3.0));
    assert!(close(&score["overall"]["recall"], 0.5));
    assert!(close(&score["overall"]["f1"], 4.0 / 7.0));
    assert_eq!(score["overall"]["errors"], 1);
    assert_eq!(score["by_repo"]["widgets"]["tp"], 2);
    assert!(close(
        &score["by_context"]["cross_file"]["recall"],
        2.0 / 3.0
    ));
    assert_eq!(score["by_context"]["local"]["fn"], 1);
    // The malformed answer was re-prompted once, then counted as no match and reported.
    let pr1 = score["prs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["url"] == PR1)
        .unwrap();
    let bad = pr1["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["golden"] == 2 && v["candidate"] == 1)
        .unwrap();
    assert!(
        bad["error"]
            .as_str()
            .unwrap()
            .starts_with("matcher_malformed_json: "),
        "{bad}"
    );
    let log = std::fs::read_to_string(f.repo.scratch.join("fake.log")).unwrap();
    // The first dispatch, then one re-prompt (it carries the rejection note).
    let g3c2: Vec<Value> = log
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["role"] == "matcher" && v["finding"] == "g3-c2")
        .map(|v| v["retry"].clone())
        .collect();
    assert_eq!(g3c2, [json!(false), json!(true)], "one re-prompt");
    assert!(
        run.stdout.contains(
            "overall                      2     2     1     2       66.7     50.0  0.571       1"
        ),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("1 Matcher answer(s) unusable, counted as no match:"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(&format!(
            "  {PR1} golden 2 × candidate 1: matcher_malformed_json: "
        )),
        "{}",
        run.stdout
    );
    // Six pairs for PR 1, none for PR 2 (no candidate).
    assert_eq!(fake_dispatches(&f, "matcher"), 7);
}

#[test]
fn bench_bad_input_exits_2_naming_the_file_and_entry() {
    let f = fixture();
    let out = f.repo.scratch.join("out");
    let bad = f.repo.scratch.join("bad");
    std::fs::create_dir_all(&bad).unwrap();
    let case = |name: &str, body: &str| {
        let _ = std::fs::remove_dir_all(&bad);
        std::fs::create_dir_all(&bad).unwrap();
        let file = bad.join(name);
        std::fs::write(&file, body).unwrap();
        let run = f
            .repo
            .arev()
            .args(&[
                "eval",
                "bench",
                "--golden",
                bad.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
                "--api-url",
                &f.api,
            ])
            .run();
        assert_eq!(run.code, 2, "{}", run.stderr);
        assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
        (file, run.stderr)
    };
    let (file, err) = case("x.json", r#"{"url": "https://github.com/a/b/pull/1"}"#);
    assert!(
        err.contains(&format!("{}: not a golden comments file", file.display())),
        "{err}"
    );
    let (file, err) = case("x.json", &json!([{"url": PR1, "comments": []}, {"url": "https://github.com/acme/widgets/issues/3", "comments": []}]).to_string());
    assert!(
        err.contains(&format!(
            "{}: entry 1 (https://github.com/acme/widgets/issues/3): ",
            file.display()
        )),
        "{err}"
    );
    assert!(err.contains("is not a pull request URL"), "{err}");
    let (file, err) = case(
        "x.json",
        &json!([{"url": "https://gitlab.example/acme/widgets/pull/3", "comments": []}]).to_string(),
    );
    assert!(
        err.contains(&format!(
            "{}: entry 0 (https://gitlab.example/acme/widgets/pull/3): ",
            file.display()
        )),
        "{err}"
    );
    assert!(
        err.contains("unknown repository host `gitlab.example`"),
        "{err}"
    );
    let (_, err) = case(
        "x.json",
        &json!([{"url": "file:///etc/passwd", "comments": []}]).to_string(),
    );
    assert!(err.contains("is not an https URL"), "{err}");
    assert!(!out.exists(), "nothing was written");
}

/// Whether an enthusiast the fake agent logged is still running (its process group alive).
fn an_enthusiast_runs(f: &Fixture) -> bool {
    std::fs::read_to_string(f.repo.scratch.join("fake.log"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["role"] == "enthusiast")
        .any(|v| !crate::harness::group_members(v["pid"].as_i64().unwrap()).is_empty())
}

#[test]
fn bench_sigterm_stops_every_review_keeps_the_finished_prs_and_resumes() {
    use std::time::{Duration, Instant};
    let f = fixture();
    let out = f.repo.scratch.join("out");
    let tmp = f.repo.scratch.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let args = bench_args(&f, &out, &["--jobs", "1"]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    // PR 2's Enthusiasts wait until `release` exists: never, in the first bench. The same
    // script (so the same configuration digest) serves the second.
    let release = f.repo.scratch.join("release");
    let gate = json!({"path": release.to_str().unwrap(), "timeout_ms": 600_000});
    let script = review_script(&[
        json!({"role": "enthusiast", "if_file_contains": {"path": "src/util.rs", "text": "two()"}, "wait_for": gate}),
    ]);
    let mut child = f
        .repo
        .arev()
        .args(&args)
        .env("TMPDIR", tmp.to_str().unwrap())
        .env("AREV_AGENT_GRACE", "300ms")
        .script(script.clone())
        .command()
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // PR 1 is reviewed and recorded (its agents have ended), then PR 2's Enthusiast runs.
    let pr1 = arev::eval::pr_result_path(&out, PR1);
    let deadline = Instant::now() + Duration::from_secs(120);
    while !(pr1.is_file() && an_enthusiast_runs(&f)) {
        assert!(Instant::now() < deadline, "PR 2's review never started");
        assert!(child.try_wait().unwrap().is_none(), "the bench ended early");
        std::thread::sleep(Duration::from_millis(50));
    }
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let status = crate::interrupt::wait_exit(
        &mut child,
        Duration::from_secs(30),
        "arev eval bench after SIGTERM",
    );
    assert_eq!(status.code(), Some(130));
    let report = read_json(&out.join("bench.json"));
    assert_schema("eval-bench-report", &report);
    assert_eq!(report["not_run"], json!([PR2]), "{report}");
    let urls: Vec<&str> = report["prs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["url"].as_str().unwrap())
        .collect();
    assert_eq!(urls, [PR3, PR1], "{report}");
    assert!(!arev::eval::pr_result_path(&out, PR2).exists());
    // No agent outlived it, and no checkout is left.
    for line in std::fs::read_to_string(f.repo.scratch.join("fake.log"))
        .unwrap()
        .lines()
    {
        let v: Value = serde_json::from_str(line).unwrap();
        let pid = v["pid"].as_i64().unwrap();
        assert!(
            crate::harness::group_members(pid).is_empty(),
            "agent group {pid} survived"
        );
    }
    let left: Vec<_> = std::fs::read_dir(&tmp).unwrap().flatten().collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    // Again: PR 1 is kept, PR 2 is reviewed now, PR 3 still cannot be fetched (exit 3).
    std::fs::write(&release, "").unwrap();
    let again = f
        .repo
        .arev()
        .args(&args)
        .env("TMPDIR", tmp.to_str().unwrap())
        .env("AREV_AGENT_GRACE", "300ms")
        .script(script)
        .run();
    assert_eq!(again.code, 3, "{}", again.stderr);
    assert!(
        again.stderr.contains(&format!("bench {PR1}: kept")),
        "{}",
        again.stderr
    );
    assert!(
        again.stderr.contains(&format!("bench {PR2}: complete")),
        "{}",
        again.stderr
    );
    assert_eq!(read_json(&out.join("bench.json"))["not_run"], json!([]));
}
