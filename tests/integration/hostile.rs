//! Hostile input through the real binary (docs/architecture.md, "untrusted code"): symlinks
//! never followed, size caps on diffs, unreviewable diffs, output destinations checked
//! before any agent runs, shard and config validation, run dirs / ignored prefixes /
//! control-character names / submodules left out, escaping of agent text, cloud credentials
//! only with their route, and no panic from the environment or a closed stderr.

use crate::harness::{finding, ruling, Run, TestRepo};
use serde_json::{json, Value};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;

const SECRET: &str = "ANTHROPIC_API_KEY=sk-hostile-0123456789";

/// `(path, reason)` of every skipped file in a report's coverage.
fn skipped(report: &Value) -> Vec<(String, String)> {
    report["coverage"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| !f["reason"].is_null())
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_owned(),
                f["reason"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn allowed(report: &Value) -> Vec<String> {
    report["target"]["allowed_files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap().to_owned())
        .collect()
}

/// Every file under `dir` with its bytes.
fn files_under(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = vec![];
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let ft = e.file_type().unwrap();
            if ft.is_dir() {
                stack.push(p);
            } else if ft.is_file() {
                out.push((p.clone(), std::fs::read(&p).unwrap()));
            }
        }
    }
    out
}

fn assert_nowhere(dir: &Path, needle: &str) {
    for (p, bytes) in files_under(dir) {
        assert!(
            !String::from_utf8_lossy(&bytes).contains(needle),
            "{needle:?} reached {}",
            p.display()
        );
    }
}

/// A file outside the repository holding a secret, and its directory.
fn secret_outside(repo: &TestRepo) -> (PathBuf, PathBuf) {
    let dir = repo.scratch.join("outside");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("environ");
    std::fs::write(&file, format!("{SECRET}\n")).unwrap();
    (file, dir)
}

fn one_line_error(run: &Run, needle: &str) {
    run.assert_code(2);
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one line expected: {:?}", run.stderr);
    assert!(lines[0].starts_with("arev: error: "), "{}", lines[0]);
    assert!(lines[0].contains(needle), "{:?} lacks {needle:?}", lines[0]);
    assert!(run.run_dirs().is_empty(), "no run dir for a usage error");
    assert!(run.fake_log().is_empty(), "no agent ran");
}

/// `env.rs -> …/environ` and `etcdir -> …/` in a diff: listed as skipped symlinks, never in
/// ALLOWED_FILES or diff.patch, the secret in no run file; an agent reading through them is
/// stopped by the read gate.
#[test]
fn symlinks_in_a_diff_are_skipped_never_followed() {
    let repo = TestRepo::new();
    let (secret, outside) = secret_outside(&repo);
    std::os::unix::fs::symlink(&secret, repo.root.join("env.rs")).unwrap();
    std::os::unix::fs::symlink(&outside, repo.root.join("etcdir")).unwrap();
    repo.write(
        "src/lib.rs",
        "pub fn parse(s: &str) -> u32 {\n    s.parse().unwrap_or(0)\n}\n",
    );
    let run = repo.arev().args(&["run", "diff"]).run();
    run.assert_code(0);
    let report = run.report();
    assert_eq!(allowed(&report), ["src/lib.rs"]);
    assert_eq!(
        skipped(&report),
        [
            ("env.rs".to_owned(), "symlink".to_owned()),
            ("etcdir".to_owned(), "symlink".to_owned())
        ]
    );
    let patch = std::fs::read_to_string(run.run_dir().join("target/diff.patch")).unwrap();
    assert!(
        !patch.contains("env.rs") && !patch.contains("etcdir"),
        "{patch}"
    );
    assert_nowhere(&run.run_dir(), "sk-hostile");
    assert!(run.stdout.contains("1 skipped") || run.stdout.contains("2 skipped"));

    // An agent that Reads the link (or through the linked dir) is stopped by the gate.
    for path in ["env.rs", "etcdir/environ"] {
        let repo2 = TestRepo::new();
        let (secret, outside) = secret_outside(&repo2);
        std::os::unix::fs::symlink(&secret, repo2.root.join("env.rs")).unwrap();
        std::os::unix::fs::symlink(&outside, repo2.root.join("etcdir")).unwrap();
        repo2.write("src/lib.rs", "pub fn f() {}\n");
        let run = repo2
            .arev()
            .args(&["run", "diff"])
            .script(json!({"steps": [{"role": "enthusiast", "reads": [path]}]}))
            .run();
        run.assert_code(3);
        assert_eq!(run.meta()["abort_reason"], "enthusiast_offtarget_read");
    }
}

/// A diff of nothing but links: exit 2 saying what was skipped (not "empty"); with
/// --allow-empty an `empty` run whose coverage lists the links.
#[test]
fn a_diff_of_only_links_is_unreviewable_not_empty() {
    let repo = TestRepo::new();
    let (secret, _) = secret_outside(&repo);
    std::os::unix::fs::symlink(&secret, repo.root.join("env.rs")).unwrap();
    let run = repo.arev().args(&["run", "diff"]).run();
    one_line_error(
        &run,
        "every file of the diff was skipped (1 symlink: env.rs)",
    );
    assert!(!run.stderr.contains("is empty"), "{}", run.stderr);

    let run = repo.arev().args(&["run", "diff", "--allow-empty"]).run();
    run.assert_code(0);
    assert_eq!(run.meta()["status"], "empty");
    let report = run.report();
    assert_eq!(
        skipped(&report),
        [("env.rs".to_owned(), "symlink".to_owned())]
    );
    assert!(run.fake_log().is_empty(), "no agent ran");
    assert!(
        run.stdout.contains("every file of diff was skipped"),
        "{}",
        run.stdout
    );
}

/// A single-file target that is a link (or reached through one) is exit 2, naming it; a
/// glob lists matching links as skipped and never hashes through them.
#[test]
fn file_and_glob_targets_never_follow_links() {
    let repo = TestRepo::new();
    let (secret, outside) = secret_outside(&repo);
    std::os::unix::fs::symlink(&secret, repo.root.join("src/env.rs")).unwrap();
    std::os::unix::fs::symlink(&outside, repo.root.join("linked")).unwrap();
    repo.commit("links");
    let run = repo.arev().args(&["run", "src/env.rs"]).run();
    one_line_error(&run, "src/env.rs is a symbolic link");
    let run = repo.arev().args(&["run", "linked/environ"]).run();
    one_line_error(&run, "linked is a symbolic link");

    let run = repo.arev().args(&["run", "src/*.rs"]).run();
    run.assert_code(0);
    let report = run.report();
    assert_eq!(allowed(&report), ["src/lib.rs"]);
    assert_eq!(
        skipped(&report),
        [("src/env.rs".to_owned(), "symlink".to_owned())]
    );
    let manifest = std::fs::read_to_string(run.run_dir().join("target/manifest.txt")).unwrap();
    assert_eq!(manifest, "src/lib.rs\n");
    assert_nowhere(&run.run_dir(), "sk-hostile");
}

/// Peak resident memory (KiB) of `arev` run under `/usr/bin/time`, if available.
fn peak_rss_kib(run: &Run) -> Option<u64> {
    run.stderr
        .lines()
        .find_map(|l| l.strip_prefix("AREV_MAXRSS_KIB="))
        .and_then(|v| v.trim().parse().ok())
}

/// A 50 MB untracked file is `too_large`, out of diff.patch, never loaded: the peak memory
/// of the whole run stays far below the file's size.
#[test]
fn diff_targets_apply_the_size_cap() {
    let repo = TestRepo::new();
    let big = "0123456789abcdef\n".repeat(50 * 1024 * 1024 / 17);
    repo.write("dump.sql", &big);
    repo.write("src/lib.rs", "pub fn f() {}\n");
    let time = Path::new("/usr/bin/time");
    let arev = repo.arev().args(&["run", "diff"]);
    let mut cmd = arev.command();
    let run = if time.exists() {
        let argv: Vec<String> = cmd
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let mut timed = std::process::Command::new(time);
        timed
            .args(["-f", "AREV_MAXRSS_KIB=%M", env!("CARGO_BIN_EXE_arev")])
            .args(argv)
            .current_dir(&repo.root)
            .env_clear()
            .envs(
                cmd.get_envs()
                    .filter_map(|(k, v)| Some((k.to_owned(), v?.to_owned()))),
            )
            .stdin(Stdio::null());
        Run::new(&repo, timed.output().unwrap(), Default::default())
    } else {
        Run::new(&repo, cmd.output().unwrap(), Default::default())
    };
    // The change chose its own size: it was not reviewed, and that gates (docs/contracts.md §14.1).
    run.assert_code(1);
    let report = run.report();
    assert_eq!(report["confirmed"][0]["category"], "unreviewed-change");
    assert_eq!(report["confirmed"][0]["file"], "dump.sql");
    assert_eq!(allowed(&report), ["src/lib.rs"]);
    assert_eq!(
        skipped(&report),
        [("dump.sql".to_owned(), "too_large".to_owned())]
    );
    let patch = std::fs::metadata(run.run_dir().join("target/diff.patch")).unwrap();
    assert!(patch.len() < 4096, "diff.patch is {} bytes", patch.len());
    if let Some(kib) = peak_rss_kib(&run) {
        assert!(
            kib < 40 * 1024,
            "peak RSS {kib} KiB for a 50 MB untracked file"
        );
    }
}

/// A binary-only diff does not claim to be empty: exit 2 naming the binary files.
#[test]
fn a_binary_only_diff_says_what_was_skipped() {
    let repo = TestRepo::new();
    repo.write_bytes("img.png", &[0x89, b'P', b'N', b'G', 0, 0, 1, 2]);
    let run = repo.arev().args(&["run", "diff"]).run();
    one_line_error(&run, "(1 binary: img.png)");
    assert!(run.stderr.contains("--allow-empty"), "{}", run.stderr);
}

/// An unwritable `--out`/`--sarif`/`--markdown` is exit 2 at once: no agent runs, no run dir.
#[test]
fn output_destinations_are_checked_before_any_agent_runs() {
    let repo = TestRepo::new();
    let missing = repo.scratch.join("no/such/dir/arev.json");
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs", "--out", missing.to_str().unwrap()])
        .run();
    one_line_error(&run, "--out");
    assert!(run.stderr.contains("does not exist"), "{}", run.stderr);
    let dir = repo.scratch.join("adir");
    std::fs::create_dir_all(&dir).unwrap();
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs", "--sarif", dir.to_str().unwrap()])
        .run();
    one_line_error(&run, "--sarif");
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs", "--markdown", "/proc/arev-report.md"])
        .run();
    one_line_error(&run, "--markdown /proc/arev-report.md");
    // A writable destination passes and gets the report.
    let ok = repo.scratch.join("ok.json");
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs", "--out", ok.to_str().unwrap()])
        .run();
    run.assert_code(0);
    assert!(ok.is_file());
}

/// `merge` refuses a report claiming shard 7/2; config values are checked like the flags.
#[test]
fn shards_and_config_values_are_validated_like_flags() {
    let repo = TestRepo::new();
    repo.write("src/a.rs", "pub fn a() {}\n").commit("a");
    let mut outs = vec![];
    for i in 1..=2 {
        let out = repo.scratch.join(format!("s{i}.json"));
        repo.arev()
            .args(&[
                "run",
                "src/*.rs",
                "-q",
                "--shard",
                &format!("{i}/2"),
                "--out",
                out.to_str().unwrap(),
            ])
            .run()
            .assert_code(0);
        outs.push(out);
    }
    let mut forged: Value = serde_json::from_slice(&std::fs::read(&outs[1]).unwrap()).unwrap();
    forged["shard"]["index"] = json!(7);
    std::fs::write(&outs[1], forged.to_string()).unwrap();
    let run = repo
        .arev()
        .args(&[
            "merge",
            outs[0].to_str().unwrap(),
            outs[1].to_str().unwrap(),
        ])
        .run();
    run.assert_code(2);
    assert!(run.stderr.contains("invalid shard 7/2"), "{}", run.stderr);

    let repo = TestRepo::new();
    let config = repo.scratch.join("c.toml");
    for (body, key) in [
        ("[review]\nmax_rounds = 1000000\n", "review.max_rounds"),
        ("[review]\npasses = 17\n", "review.passes"),
        ("[budget]\nusd = nan\n", "budget.usd"),
        ("[budget]\nusd = -1.0\n", "budget.usd"),
        ("[budget]\nusd = inf\n", "budget.usd"),
        // `[prices]`: finite, non-negative prices, no unknown key.
        (
            "[prices.\"m\"]\ninput = nan\noutput = 1.0\n",
            "prices.\"m\"",
        ),
        (
            "[prices.\"m\"]\ninput = 1.0\noutput = -1.0\n",
            "prices.\"m\"",
        ),
        ("[prices.\"m\"]\ninput = 0.0\noutput = 0.0\n", "both 0"),
        (
            "[prices.\"m\"]\ninput = 1.0\noutput = 1.0\ncached = 0.1\n",
            "prices.m.cached",
        ),
        ("[prices.\"m\"]\ninput = 1.0\n", "output"),
    ] {
        std::fs::write(&config, body).unwrap();
        let run = repo
            .arev()
            .args(&["run", "src/lib.rs", "--config", config.to_str().unwrap()])
            .run();
        one_line_error(&run, key);
    }
    for (flag, value) in [
        ("--max-rounds", "1000000"),
        ("--budget-usd", "nan"),
        ("--budget-usd", "-1"),
    ] {
        let arg = format!("{flag}={value}");
        let run = repo.arev().args(&["run", "src/lib.rs", &arg]).run();
        run.assert_code(2);
        assert!(run.stderr.contains(flag), "{}", run.stderr);
    }
}

/// A `--run-dir` inside the repo is never reviewed by the next `run diff`, nor a run dir
/// left by an earlier run elsewhere in the tree.
#[test]
fn run_dirs_inside_the_repo_are_never_reviewed() {
    let repo = TestRepo::new();
    repo.write("src/lib.rs", "pub fn f() {}\n");
    let first = repo
        .arev()
        .args(&["run", "diff", "--run-dir", "runs"])
        .run();
    first.assert_code(0);
    assert!(repo.root.join("runs").read_dir().unwrap().count() == 1);
    let list = || -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(repo.root.join("runs"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        v.sort();
        v
    };
    let before = list();
    let second = repo
        .arev()
        .args(&["run", "diff", "--run-dir", "runs"])
        .run();
    second.assert_code(0);
    let runs = list();
    assert_eq!(runs.len(), 2);
    let newest = runs.iter().find(|r| !before.contains(r)).unwrap();
    let report: Value =
        serde_json::from_slice(&std::fs::read(newest.join("report.json")).unwrap()).unwrap();
    assert_eq!(allowed(&report), ["src/lib.rs"]);
    assert_eq!(
        skipped(&report),
        [("runs".to_owned(), "run_dir".to_owned())]
    );
    let patch = std::fs::read_to_string(newest.join("target/diff.patch")).unwrap();
    assert!(!patch.contains("runs/"), "{patch}");

    // The default base now: the old run dirs under runs/ are recognised as run dirs.
    let third = repo.arev().args(&["run", "diff"]).run();
    third.assert_code(0);
    let report = third.report();
    assert_eq!(allowed(&report), ["src/lib.rs"]);
    let mut want: Vec<(String, String)> = runs
        .iter()
        .map(|r| {
            (
                r.strip_prefix(&repo.root).unwrap().display().to_string(),
                "run_dir".to_owned(),
            )
        })
        .collect();
    want.sort();
    assert_eq!(skipped(&report), want);
}

/// A glob whose fixed prefix is inside an ignored directory reviews nothing there.
#[test]
fn a_glob_inside_an_ignored_directory_matches_nothing() {
    let repo = TestRepo::new();
    repo.write(".gitignore", "ignored.txt\nbuild/\n")
        .commit("ignore build");
    repo.write("build/gen/x.rs", "pub fn x() {}\n");
    let run = repo.arev().args(&["run", "build/gen/*.rs"]).run();
    one_line_error(&run, "glob `build/gen/*.rs` matched no files");
}

/// A file name with a newline is never written raw into manifest.txt: listed escaped as
/// skipped `control_chars`.
#[test]
fn names_with_newlines_are_refused_with_a_reason() {
    let repo = TestRepo::new();
    repo.write("src/evil\nsrc/lib.rs", "pub fn e() {}\n");
    let run = repo.arev().args(&["run", "src/**/*.rs"]).run();
    run.assert_code(0);
    let manifest = std::fs::read(run.run_dir().join("target/manifest.txt")).unwrap();
    assert_eq!(manifest, b"src/lib.rs\n");
    assert_eq!(
        skipped(&run.report()),
        [(
            "src/evil\\nsrc/lib.rs".to_owned(),
            "control_chars".to_owned()
        )]
    );
}

/// A dirty submodule is listed as skipped `submodule`, not "reviewed".
#[test]
fn a_dirty_submodule_is_skipped() {
    let sub = TestRepo::new();
    let repo = TestRepo::new();
    repo.git(&[
        "-c",
        "protocol.file.allow=always",
        "submodule",
        "add",
        "-q",
        sub.root.to_str().unwrap(),
        "vendor/sub",
    ]);
    repo.commit("submodule");
    repo.write("vendor/sub/src/lib.rs", "pub fn dirty() {}\n");
    repo.write("src/lib.rs", "pub fn f() {}\n");
    let run = repo.arev().args(&["run", "diff"]).run();
    run.assert_code(0);
    let report = run.report();
    assert_eq!(allowed(&report), ["src/lib.rs"]);
    assert_eq!(
        skipped(&report),
        [("vendor/sub".to_owned(), "submodule".to_owned())]
    );
}

/// Agent text in the Markdown report cannot inject HTML, ping anyone, or forge the report
/// marker; in the text report it cannot start a workflow command or a terminal escape.
#[test]
fn agent_text_is_escaped_in_every_report() {
    let repo = TestRepo::new();
    let mut f = finding("A", "src/lib.rs", 2, "high", "xss<script>");
    f["description"] = json!(
        "<img src=x onerror=alert(1)> cc @octocat <!-- arev-report --> [x](javascript:alert(1))\n::error::forged\u{1b}[31m"
    );
    let mut r = ruling("F1", "src/lib.rs", 2, "high", "enthusiast");
    r["resolution"] = json!("confirmed @admin </td><!-- arev-report -->");
    r["edit_instruction"] = json!("line one\n::add-mask::x\n| a | b |");
    let md = repo.scratch.join("r.md");
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs", "--markdown", md.to_str().unwrap()])
        .script(json!({"steps": [
            {"role": "enthusiast", "round": 1, "answer": {"findings": [f]}},
            {"role": "judge", "round": 1, "answer": {"rulings": [r], "summary": "s", "convergence": false, "next_round_model": null}}
        ]}))
        .run();
    run.assert_code(1);
    let text = std::fs::read_to_string(&md).unwrap();
    assert_eq!(text.matches("<!-- arev-report -->").count(), 1, "{text}");
    assert!(text.starts_with("<!-- arev-report -->\n"));
    for bad in [
        "<img",
        "<script",
        "</td>",
        "@octocat",
        "@admin",
        "[x](javascript",
    ] {
        assert!(!text.contains(bad), "{bad:?} in\n{text}");
    }
    assert!(text.contains("@\u{200B}octocat"), "{text}");
    // The confirmed table keeps its shape: every row has the header's 5 cells.
    let rows: Vec<&str> = text.lines().filter(|l| l.starts_with("| ")).collect();
    for row in &rows {
        let cells = row.replace("\\|", "").matches('|').count();
        assert_eq!(cells, 6, "{row}");
    }
    // Text report: no line a CI runner reads as a command, no raw escape sequence.
    for line in run.stdout.lines() {
        assert!(!line.trim_start().starts_with("::"), "{line:?}");
    }
    assert!(!run.stdout.contains('\u{1b}'), "{}", run.stdout);
    // GitHub annotations: one command line per finding.
    let gh = repo
        .arev()
        .args(&[
            "report",
            run.report()["run_id"].as_str().unwrap(),
            "--format",
            "github",
        ])
        .run();
    let commands = gh.stdout.lines().filter(|l| l.starts_with("::")).count();
    assert_eq!(commands, 1, "{}", gh.stdout);
}

/// A wrapper `claude` that records its environment (NUL-separated) and runs the fake agent.
fn env_recording_agent(repo: &TestRepo) -> (PathBuf, PathBuf) {
    let bin = repo.scratch.join("envbin");
    std::fs::create_dir_all(&bin).unwrap();
    let log = repo.scratch.join("agent-env");
    let script = format!(
        "#!/bin/sh\nenv -0 >> '{}'\nexec '{}' \"$@\"\n",
        log.display(),
        env!("CARGO_BIN_EXE_arev-fake-agent")
    );
    let path = bin.join("claude");
    std::fs::write(&path, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    (bin, log)
}

fn agent_env(log: &Path) -> Vec<Vec<u8>> {
    std::fs::read(log)
        .unwrap()
        .split(|b| *b == 0)
        .filter(|v| !v.is_empty())
        .map(<[u8]>::to_vec)
        .collect()
}

fn has_var(env: &[Vec<u8>], name: &str) -> bool {
    env.iter()
        .any(|kv| kv.starts_with(format!("{name}=").as_bytes()))
}

/// AWS_* and GOOGLE_* reach the claude agent only with Bedrock / Vertex switched on.
#[test]
fn cloud_credentials_reach_claude_only_with_their_route() {
    let repo = TestRepo::new();
    let (bin, log) = env_recording_agent(&repo);
    let path = format!("{}:/usr/local/bin:/usr/bin:/bin", bin.display());
    let run = |bedrock: Option<&str>, vertex: Option<&str>| {
        let _ = std::fs::remove_file(&log);
        let mut a = repo
            .arev()
            .args(&["run", "src/lib.rs", "-q"])
            .without_agent()
            .env("PATH", &path)
            .env("AWS_SECRET_ACCESS_KEY", "aws-secret")
            .env("GOOGLE_APPLICATION_CREDENTIALS", "/gcp.json")
            .env("CLOUD_ML_REGION", "us-east5");
        if let Some(v) = bedrock {
            a = a.env("CLAUDE_CODE_USE_BEDROCK", v);
        }
        if let Some(v) = vertex {
            a = a.env("CLAUDE_CODE_USE_VERTEX", v);
        }
        a.run().assert_code(0);
        agent_env(&log)
    };
    let plain = run(None, None);
    assert!(
        has_var(&plain, "HOME"),
        "the wrapper recorded the environment"
    );
    for v in [
        "AWS_SECRET_ACCESS_KEY",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "CLOUD_ML_REGION",
    ] {
        assert!(!has_var(&plain, v), "{v} without a route");
    }
    let off = run(Some("0"), None);
    assert!(!has_var(&off, "AWS_SECRET_ACCESS_KEY"));
    let bedrock = run(Some("1"), None);
    assert!(has_var(&bedrock, "AWS_SECRET_ACCESS_KEY"));
    assert!(!has_var(&bedrock, "GOOGLE_APPLICATION_CREDENTIALS"));
    let vertex = run(None, Some("1"));
    assert!(has_var(&vertex, "GOOGLE_APPLICATION_CREDENTIALS"));
    assert!(has_var(&vertex, "CLOUD_ML_REGION"));
    assert!(!has_var(&vertex, "AWS_SECRET_ACCESS_KEY"));
}

/// Non-UTF-8 environment values (and names) never panic; allowed ones reach the agent as
/// the same bytes.
#[test]
fn non_utf8_environment_never_panics() {
    let repo = TestRepo::new();
    let (bin, log) = env_recording_agent(&repo);
    let arev = repo
        .arev()
        .args(&["run", "src/lib.rs"])
        .without_agent()
        .env(
            "PATH",
            &format!("{}:/usr/local/bin:/usr/bin:/bin", bin.display()),
        );
    let mut cmd = arev.command();
    let raw = |b: &[u8]| std::ffi::OsStr::from_bytes(b).to_owned();
    cmd.env(raw(b"LC_HOSTILE"), raw(b"caf\xe9\xff"))
        .env(raw(b"AREV_UNKNOWN_SETTING"), raw(b"\xff\xfe"))
        .env(raw(b"WEIRD_\xffNAME"), raw(b"x"))
        .env(raw(b"AREV_LOG"), raw(b"\xff"));
    let run = Run::new(&repo, cmd.output().unwrap(), Default::default());
    run.assert_code(0);
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    let env = agent_env(&log);
    assert!(
        env.iter().any(|kv| kv == b"LC_HOSTILE=caf\xe9\xff"),
        "the bytes are forwarded unchanged"
    );
    assert!(!env.iter().any(|kv| kv.starts_with(b"WEIRD_")));
    // A non-UTF-8 value of a setting is a clear error, not a panic.
    let mut cmd = repo.arev().args(&["run", "src/lib.rs"]).command();
    cmd.env("AREV_MODEL", raw(b"op\xffus"));
    let run = Run::new(&repo, cmd.output().unwrap(), Default::default());
    run.assert_code(2);
    assert!(run.stderr.contains("AREV_MODEL"), "{}", run.stderr);
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
}

/// With stderr closed (`2>&-`) or a log reader gone (a broken pipe) while progress and logs
/// are written, arev neither panics nor leaves the run `running`: it finishes and records it.
#[test]
fn a_closed_or_broken_stderr_never_panics() {
    let repo = TestRepo::new();
    let script = json!({"steps": [
        {"role": "enthusiast", "round": 1, "delay_ms": 300, "answer": {"findings": [finding("A", "src/lib.rs", 2, "high", "logic")]}},
        {"role": "judge", "round": 1, "answer": {"rulings": [ruling("F1", "src/lib.rs", 2, "high", "enthusiast")], "summary": "s", "convergence": false, "next_round_model": null}}
    ]});

    // 2>&- through a shell.
    let arev = repo
        .arev()
        .args(&["run", "src/lib.rs", "-vv", "--max-rounds", "1"])
        .env("AREV_PROGRESS", "1")
        .script(script);
    let mut cmd = arev.command();
    let argv: Vec<String> = cmd
        .get_args()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let mut sh = std::process::Command::new("/bin/sh");
    sh.arg("-c")
        .arg("exec \"$@\" 2>&-")
        .arg("sh")
        .arg(env!("CARGO_BIN_EXE_arev"))
        .args(&argv)
        .current_dir(&repo.root)
        .env_clear()
        .envs(
            cmd.get_envs()
                .filter_map(|(k, v)| Some((k.to_owned(), v?.to_owned()))),
        )
        .stdin(Stdio::null());
    let run = Run::new(&repo, sh.output().unwrap(), Default::default());
    run.assert_code(1);
    assert_eq!(run.meta()["status"], "complete");
    assert!(run.run_dir().join("report.json").is_file());
    assert!(run.stdout.contains("1 confirmed"), "{}", run.stdout);
    let first = run.run_dir();

    // A pipe whose reader is gone: every write to stderr fails with EPIPE.
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    drop(child.stderr.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let dirs: Vec<PathBuf> = std::fs::read_dir(repo.root.join(".arev/runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| *p != first)
        .collect();
    assert_eq!(dirs.len(), 1);
    let meta: Value =
        serde_json::from_slice(&std::fs::read(dirs[0].join("meta.json")).unwrap()).unwrap();
    assert_eq!(meta["status"], "complete");
    assert!(String::from_utf8_lossy(&out.stdout).contains("1 confirmed"));
}

/// A reader of stdout that went away before the report (`arev … --format json | true`) is not
/// an error: the run finishes, records itself and exits with its verdict.
#[test]
fn a_closed_stdout_is_not_an_error() {
    let repo = TestRepo::new();
    let script = json!({"steps": [
        {"role": "enthusiast", "round": 1, "delay_ms": 300, "answer": {"findings": [finding("A", "src/lib.rs", 2, "high", "logic")]}},
        {"role": "judge", "round": 1, "answer": {"rulings": [ruling("F1", "src/lib.rs", 2, "high", "enthusiast")], "summary": "s", "convergence": false, "next_round_model": null}}
    ]});
    for format in ["json", "text"] {
        let arev = repo
            .arev()
            .args(&["run", "src/lib.rs", "--max-rounds", "1", "--format", format])
            .script(script.clone());
        let mut cmd = arev.command();
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{format}: {stderr}");
        assert!(!stderr.contains("panicked"), "{format}: {stderr}");
        assert!(!stderr.contains("arev: error"), "{format}: {stderr}");
    }
    let dirs: Vec<PathBuf> = std::fs::read_dir(repo.root.join(".arev/runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(dirs.len(), 2);
    for d in dirs {
        let meta: Value =
            serde_json::from_slice(&std::fs::read(d.join("meta.json")).unwrap()).unwrap();
        assert_eq!(meta["status"], "complete");
    }
}

/// A write that fails for lack of space (here: the file-size limit, EFBIG, with SIGXFSZ
/// ignored) is a clear error naming the file, not a panic, and the run is marked.
#[test]
fn a_full_disk_is_a_clear_error_not_a_panic() {
    let repo = TestRepo::new();
    // Project rules (in every prompt) make each agent's prompt.md larger than the limit
    // below, as the escape checklist did before it moved to the system prompt.
    repo.write(
        "REVIEW.md",
        &"- Every public function must be total.\n".repeat(150),
    );
    repo.commit("rules");
    let arev = repo.arev().args(&["run", "src/lib.rs"]);
    let cmd = arev.command();
    let argv: Vec<String> = cmd
        .get_args()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let mut sh = std::process::Command::new("/bin/sh");
    // 8 blocks: meta.json fits, the agents' records do not.
    sh.arg("-c")
        .arg("trap '' XFSZ; ulimit -f 8; exec \"$@\"")
        .arg("sh")
        .arg(env!("CARGO_BIN_EXE_arev"))
        .args(&argv)
        .current_dir(&repo.root)
        .env_clear()
        .envs(
            cmd.get_envs()
                .filter_map(|(k, v)| Some((k.to_owned(), v?.to_owned()))),
        )
        .stdin(Stdio::null());
    let run = Run::new(&repo, sh.output().unwrap(), Default::default());
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    run.assert_code(3);
    assert!(run.stderr.contains("File too large"), "{}", run.stderr);
    let meta = run.meta();
    assert_eq!(meta["status"], "aborted");
    assert!(
        meta["abort_detail"]
            .as_str()
            .unwrap()
            .contains("File too large"),
        "{meta}"
    );
}

/// `arev` with its peak RSS measured by /usr/bin/time when present (`AREV_MAXRSS_KIB=` on
/// stderr), `stdin` fed to it.
fn timed_run(repo: &TestRepo, arev: crate::harness::Arev<'_>, stdin: &[u8]) -> Run {
    use std::io::Write;
    let cmd = arev.command();
    let time = Path::new("/usr/bin/time");
    let mut c = if time.exists() {
        let mut t = std::process::Command::new(time);
        t.args(["-f", "AREV_MAXRSS_KIB=%M", env!("CARGO_BIN_EXE_arev")])
            .args(cmd.get_args());
        t
    } else {
        std::process::Command::new(env!("CARGO_BIN_EXE_arev"))
    };
    if !time.exists() {
        c.args(cmd.get_args());
    }
    c.current_dir(&repo.root)
        .env_clear()
        .envs(
            cmd.get_envs()
                .filter_map(|(k, v)| Some((k.to_owned(), v?.to_owned()))),
        )
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    let mut input = child.stdin.take().unwrap();
    let _ = input.write_all(stdin);
    drop(input);
    Run::new(repo, child.wait_with_output().unwrap(), Default::default())
}

/// Bounded inputs (docs/contracts.md §14.1): a hook's stdin and a `--baseline` are read under caps, so
/// memory never follows the input; a baseline of another report version is exit 2.
#[test]
fn hook_stdin_and_baselines_are_read_under_caps() {
    let repo = TestRepo::new();
    // A 64 MB UserPromptSubmit input: drained, not kept.
    let huge = format!(
        "{{\"session_id\":\"s\",\"hook_event_name\":\"UserPromptSubmit\",\"cwd\":{:?},\"prompt\":\"{}\"}}",
        repo.root.display().to_string(),
        "x".repeat(64 << 20)
    );
    let run = timed_run(
        &repo,
        repo.arev().args(&["hook", "prompt"]),
        huge.as_bytes(),
    );
    run.assert_code(0);
    assert!(run.stdout.contains("over 4 MiB"), "{}", run.stdout);
    if let Some(kib) = peak_rss_kib(&run) {
        assert!(kib < 48 * 1024, "peak RSS {kib} KiB for a 64 MB hook input");
    }

    // A 300 MB baseline (sparse): refused after reading past the cap, not read whole.
    let big = repo.scratch.join("big-baseline.json");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(300 << 20)
        .unwrap();
    let run = timed_run(
        &repo,
        repo.arev()
            .args(&["run", "src/lib.rs", "--baseline", big.to_str().unwrap()]),
        b"",
    );
    run.assert_code(2);
    assert!(run.stderr.contains("larger than 64 MiB"), "{}", run.stderr);
    if let Some(kib) = peak_rss_kib(&run) {
        assert!(kib < 120 * 1024, "peak RSS {kib} KiB for a 300 MB baseline");
    }

    // A baseline of an unknown report version is exit 2, naming it.
    let ok = repo
        .arev()
        .args(&["run", "src/lib.rs", "--max-rounds", "1"])
        .script(json!({"steps": []}))
        .run();
    ok.assert_code(0);
    let mut report = ok.report();
    report["schema_version"] = json!(99);
    let v99 = repo.scratch.join("v99.json");
    std::fs::write(&v99, report.to_string()).unwrap();
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs", "--baseline", v99.to_str().unwrap()])
        .run();
    run.assert_code(2);
    assert!(
        run.stderr.contains("schema_version 99 is not 1"),
        "{}",
        run.stderr
    );
}

/// No raw control characters out (docs/contracts.md §14.1): a tool name an agent chose (in the abort
/// line), agent text in `--format github` annotations, and a run dir's id and target in
/// `runs`/`status` reach the terminal and CI log with ESC, BEL and OSC escaped.
#[test]
fn control_characters_never_reach_the_terminal_or_the_ci_log() {
    const OSC: &str = "\u{1b}]0;pwned\u{7}\u{1b}[2J\u{9d}";
    let raw = |s: &str| s.contains('\u{1b}') || s.contains('\u{7}') || s.contains('\u{9d}');
    // An agent-chosen tool name in the abort line.
    let repo = TestRepo::new();
    let tool = format!("mcp__x__{OSC}");
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs"])
        .script(json!({"steps": [{"role": "enthusiast", "tools": [{"name": tool, "input": {}}]}]}))
        .run();
    run.assert_code(3);
    assert!(!raw(&run.stderr) && !raw(&run.stdout), "{:?}", run.stderr);
    assert!(run.stderr.contains("\\u{1b}]0;pwned"), "{}", run.stderr);

    // Agent text in annotations.
    let repo = TestRepo::new();
    let mut f = finding("F1", "src/lib.rs", 2, "high", "error-handling");
    f["description"] = json!(format!("title {OSC} here\n::error::forged"));
    let run = repo
        .arev()
        .args(&[
            "run",
            "src/lib.rs",
            "--max-rounds",
            "1",
            "--format",
            "github",
        ])
        .script(json!({"steps": [
            {"role": "enthusiast", "round": 1, "answer": {"findings": [f]}},
            {"role": "judge", "round": 1, "answer": {"rulings": [
                ruling("F1", "src/lib.rs", 2, "high", "enthusiast")],
                "summary": "s", "convergence": false, "next_round_model": null}}
        ]}))
        .run();
    run.assert_code(1);
    assert!(!raw(&run.stdout), "{:?}", run.stdout);
    assert!(
        run.stdout
            .lines()
            .all(|l| !l.starts_with("::error::forged")),
        "{}",
        run.stdout
    );

    // A run dir whose id and target hold escapes (not tracked by git).
    let src = run.run_dir();
    let mut meta = run.meta();
    let id = format!("29990101-000000-abcdef-{OSC}");
    let dir = repo.root.join(".arev/runs").join(&id);
    std::fs::create_dir_all(&dir).unwrap();
    meta["run_id"] = json!(id);
    meta["target"]["display"] = json!(format!("src/{OSC}.rs"));
    meta["started_at"] = json!("2999-01-01T00:00:00.000Z");
    std::fs::write(dir.join("meta.json"), meta.to_string()).unwrap();
    std::fs::copy(src.join("report.json"), dir.join("report.json")).unwrap();
    for args in [&["runs"][..], &["status"][..]] {
        let out = repo.arev().args(args).run();
        assert!(
            !raw(&out.stdout) && !raw(&out.stderr),
            "{args:?}: {:?}",
            out.stdout
        );
        assert!(out.stdout.contains("\\u{1b}"), "{args:?}: {}", out.stdout);
    }
}

/// Every agent gets a `TMPDIR` of its own beside the private homes (in arev's cache, never
/// the user's temp dir), and it goes with what the CLI left there when the agent has ended:
/// a CLI's unasked temp files (OpenCode unpacks a 5 MiB library per start) never pile up
/// run after run, and no agent sees another's.
#[test]
fn each_agent_gets_a_temp_dir_of_its_own_removed_when_it_ends() {
    let repo = TestRepo::new();
    let user_tmp = repo.scratch.join("user-tmp");
    std::fs::create_dir_all(&user_tmp).unwrap();
    let leave = |role: &str| json!({"role": role, "tmp_file": "cli-native.so"});
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs", "--max-rounds", "1"])
        .env("TMPDIR", &user_tmp.display().to_string())
        .script(json!({"steps": [
            {"role": "enthusiast", "tmp_file": "cli-native.so",
             "answer": {"findings": [finding("F1", "src/lib.rs", 2, "high", "correctness")]}},
            leave("adversary"),
            {"role": "judge", "tmp_file": "cli-native.so",
             "answer": {"rulings": [ruling("F1", "src/lib.rs", 2, "high", "enthusiast")],
                        "summary": "s", "convergence": true, "next_round_model": null}},
        ]}))
        .run();
    run.assert_code(1);
    let dirs: Vec<PathBuf> = run
        .fake_log()
        .iter()
        .map(|l| PathBuf::from(l["tmpdir"].as_str().expect("TMPDIR set")))
        .collect();
    let roles: Vec<String> = run
        .fake_log()
        .iter()
        .map(|l| l["role"].as_str().unwrap().to_owned())
        .collect();
    assert!(
        ["enthusiast", "adversary", "judge"]
            .iter()
            .all(|r| roles.iter().any(|x| x == r)),
        "{roles:?}"
    );
    let unique: std::collections::BTreeSet<&PathBuf> = dirs.iter().collect();
    assert_eq!(unique.len(), dirs.len(), "one temp dir per agent: {dirs:?}");
    for d in &dirs {
        assert!(
            d.starts_with(repo.scratch.join("caches")),
            "{}",
            d.display()
        );
        assert!(!d.exists(), "{} left behind", d.display());
    }
    let left: Vec<_> = std::fs::read_dir(&user_tmp).unwrap().flatten().collect();
    assert!(left.is_empty(), "the user's temp dir holds {left:?}");
}
