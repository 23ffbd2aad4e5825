//! Bad input: a clear one-line error on stderr, exit 2, and no run dir left behind.

use crate::harness::TestRepo;

fn assert_usage(run: &crate::harness::Run, needle: &str) {
    run.assert_code(2);
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one line expected: {:?}", run.stderr);
    assert!(lines[0].starts_with("arev: error: "), "{}", lines[0]);
    assert!(lines[0].contains(needle), "{:?} lacks {needle:?}", lines[0]);
    assert!(run.stdout.is_empty(), "nothing on stdout: {}", run.stdout);
    assert!(run.run_dirs().is_empty(), "no run dir for bad input");
}

#[test]
fn no_such_file() {
    let repo = TestRepo::new();
    assert_usage(
        &repo.arev().args(&["run", "src/nope.rs"]).run(),
        "no such file: src/nope.rs",
    );
}

#[test]
fn glob_matching_nothing() {
    let repo = TestRepo::new();
    assert_usage(
        &repo.arev().args(&["run", "src/**/*.py"]).run(),
        "matched no files",
    );
}

#[test]
fn diff_outside_a_repo() {
    let repo = TestRepo::new();
    let outside = repo.scratch.join("plain");
    std::fs::create_dir_all(&outside).unwrap();
    let run = repo
        .arev()
        .args(&["run", "diff"])
        .cwd(outside.clone())
        .run();
    run.assert_code(2);
    assert!(run.stderr.contains("not inside one"), "{}", run.stderr);
    assert!(!outside.join(".arev").exists());
}

#[test]
fn empty_diff_and_allow_empty() {
    let repo = TestRepo::new();
    assert_usage(
        &repo.arev().args(&["run", "diff"]).run(),
        "the diff is empty",
    );
    let run = repo.arev().args(&["run", "diff", "--allow-empty"]).run();
    run.assert_code(0);
    assert_eq!(run.meta()["status"], "empty");
    assert_eq!(run.report()["status"], "empty");
    assert!(run.fake_log().is_empty(), "no agent runs for an empty diff");
}

#[test]
fn binary_and_non_utf8_single_files() {
    let repo = TestRepo::new();
    repo.write_bytes("bin.dat", b"ab\0cd");
    repo.write_bytes("latin1.txt", b"caf\xe9\n");
    assert_usage(&repo.arev().args(&["run", "bin.dat"]).run(), "binary");
    assert_usage(&repo.arev().args(&["run", "latin1.txt"]).run(), "not UTF-8");
}

#[test]
fn bad_base_and_base_without_diff() {
    let repo = TestRepo::new();
    repo.write("src/lib.rs", "changed\n");
    assert_usage(
        &repo
            .arev()
            .args(&["run", "diff", "--base", "no-such-rev"])
            .run(),
        "--base no-such-rev",
    );
    assert_usage(
        &repo
            .arev()
            .args(&["run", "src/lib.rs", "--base", "main"])
            .run(),
        "--base is only valid",
    );
}

#[test]
fn config_errors_name_key_and_file() {
    let repo = TestRepo::new();
    repo.write("arev.toml", "[review]\nfial_on = \"low\"\n");
    assert_usage(
        &repo.arev().args(&["run", "src/lib.rs"]).run(),
        "arev.toml: unknown key `review.fial_on`",
    );
    repo.write("arev.toml", "[review\n");
    assert_usage(&repo.arev().args(&["run", "src/lib.rs"]).run(), "arev.toml");
    std::fs::remove_file(repo.root.join("arev.toml")).unwrap();
    assert_usage(
        &repo
            .arev()
            .args(&["run", "src/lib.rs", "--agent", "nobody"])
            .run(),
        "unknown agent `nobody`",
    );
    assert_usage(
        &repo
            .arev()
            .args(&["run", "src/lib.rs"])
            .env("AREV_AGENT_TIMEOUT", "soon")
            .run(),
        "AREV_AGENT_TIMEOUT=soon",
    );
}

#[test]
fn usage_errors_exit_two() {
    let repo = TestRepo::new();
    repo.arev().args(&["run"]).run().assert_code(2);
    repo.arev()
        .args(&["run", "src/lib.rs", "--passes", "0"])
        .run()
        .assert_code(2);
    repo.arev().args(&["frobnicate"]).run().assert_code(2);
    let help = repo.arev().args(&["run", "--help"]).run();
    help.assert_code(0);
    assert!(help.stdout.contains("130"), "exit codes in --help");
}

/// Every setting a run reads is parsed when the config loads: a value that used to be read
/// (with a silent fallback) only where it was used — the retry window, `--verify`'s limit, a
/// role's timeouts — is refused before anything runs, naming its key, exit 2.
#[test]
fn settings_are_checked_at_load() {
    let repo = TestRepo::new();
    for (text, needle) in [
        (
            "[timeouts]\nretry = \"soon\"\n",
            "timeouts.retry: `soon` is not a duration",
        ),
        (
            "[timeouts]\nverify = \"0s\"\n",
            "timeouts.verify: must be greater than zero",
        ),
        (
            "[timeouts.judge]\ngrace = \"x\"\n",
            "timeouts.judge.grace: `x` is not a duration",
        ),
        (
            "[timeouts.fixer]\nagent = \"later\"\n",
            "timeouts.fixer.agent: `later` is not a duration",
        ),
        (
            "[prove]\nmemory = \"lots\"\n",
            "prove.memory: `lots` is not a size",
        ),
        (
            "[review]\npasses = 17\n",
            "review.passes: 17 is not in 1..=16 (the same bounds as its flag)",
        ),
    ] {
        repo.write("arev.toml", text);
        assert_usage(&repo.arev().args(&["run", "src/lib.rs"]).run(), needle);
    }
}
