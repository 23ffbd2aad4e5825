//! Set-up (docs/contracts.md §20.4): `arev doctor` (git, config, each agent CLI: found, version,
//! credentials) and the preflight of `arev run` (a missing CLI is exit 2 before any run dir).

use crate::harness::TestRepo;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

const CLAUDE_INSTALL: &str = "npm install -g @anthropic-ai/claude-code@2.1.330";

/// An executable shell script at `scratch/<name>`.
fn script(repo: &TestRepo, name: &str, body: &str) -> PathBuf {
    let p = repo.scratch.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

fn claude_binary(repo: &TestRepo, path: &Path) {
    repo.write(
        "arev.toml",
        &format!("[agents.claude]\nbinary = \"{}\"\n", path.display()),
    );
    repo.commit("config");
}

fn line_with<'a>(text: &'a str, needle: &str) -> &'a str {
    text.lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?} in:\n{text}"))
}

#[test]
fn doctor_is_ready_with_the_tested_cli_and_a_key() {
    let repo = TestRepo::new();
    let run = repo
        .arev()
        .args(&["doctor"])
        .env("ANTHROPIC_API_KEY", "sk-test")
        .run();
    run.assert_code(0);
    assert!(run.stdout.starts_with("arev 0.1.0"), "{}", run.stdout);
    assert!(line_with(&run.stdout, "git version").starts_with("ok   "));
    let cli = line_with(&run.stdout, "2.1.330");
    assert!(
        cli.starts_with("ok   agent `claude` (claude; enthusiast, adversary, judge, fixer): ")
            && cli.ends_with("claude 2.1.330 (the tested version)"),
        "{cli}"
    );
    assert!(line_with(&run.stdout, "credentials").contains("from ANTHROPIC_API_KEY"));
    assert!(line_with(&run.stdout, "agent `codex`").contains("no role uses it"));
    assert!(run.stdout.contains("ready: "), "{}", run.stdout);
    assert!(!run.stdout.contains("FAIL"), "{}", run.stdout);
}

#[test]
fn doctor_names_each_problem_with_its_fix() {
    let repo = TestRepo::new();
    // No claude on PATH, no credentials: the missing CLI is the agent's one problem line.
    let run = repo.arev().args(&["doctor"]).without_agent().run();
    run.assert_code(2);
    let fail = line_with(&run.stdout, "FAIL");
    assert!(
        fail.contains("agent `claude` (claude backend): `claude` is not on PATH")
            && fail.contains(CLAUDE_INSTALL)
            && fail.contains("[agents.claude] binary"),
        "{fail}"
    );
    assert!(
        run.stdout.contains("not ready: 1 problem(s)"),
        "{}",
        run.stdout
    );

    // Found, but no credentials.
    let run = repo.arev().args(&["doctor"]).run();
    run.assert_code(2);
    let fail = line_with(&run.stdout, "FAIL");
    assert!(
        fail.contains("no credentials — set ANTHROPIC_API_KEY"),
        "{fail}"
    );
    // A Claude Code login file counts.
    let home = repo.scratch.join("home/.claude");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join(".credentials.json"), "{}").unwrap();
    let run = repo.arev().args(&["doctor"]).run();
    run.assert_code(0);
    assert!(line_with(&run.stdout, "credentials").contains("the CLI's login"));
}

#[test]
fn doctor_warns_on_another_version_and_fails_on_a_broken_cli() {
    let repo = TestRepo::new();
    let old = script(&repo, "old-claude", "echo '2.1.100 (Claude Code)'");
    claude_binary(&repo, &old);
    let run = repo
        .arev()
        .args(&["doctor"])
        .env("ANTHROPIC_API_KEY", "k")
        .run();
    run.assert_code(0);
    let warn = line_with(&run.stdout, "2.1.100");
    assert!(
        warn.starts_with("warn ")
            && warn.contains("arev is tested with 2.1.330")
            && warn.contains(CLAUDE_INSTALL),
        "{warn}"
    );

    let broken = script(
        &repo,
        "broken-claude",
        "echo 'node: cannot find module cli.js' >&2; exit 1",
    );
    claude_binary(&repo, &broken);
    let run = repo
        .arev()
        .args(&["doctor"])
        .env("ANTHROPIC_API_KEY", "k")
        .run();
    run.assert_code(2);
    let fail = line_with(&run.stdout, "FAIL");
    assert!(
        fail.contains("is broken: `--version` failed (exit 1: node: cannot find module cli.js)")
            && fail.contains(CLAUDE_INSTALL),
        "{fail}"
    );
}

#[test]
fn doctor_reports_a_bad_config_with_its_file() {
    let repo = TestRepo::new();
    repo.write("arev.toml", "[review]\nmodle = \"opus\"\n");
    let run = repo
        .arev()
        .args(&["doctor"])
        .env("ANTHROPIC_API_KEY", "k")
        .run();
    run.assert_code(2);
    let fail = line_with(&run.stdout, "FAIL");
    assert!(
        fail.starts_with("FAIL config: ") && fail.contains("modle") && fail.contains("arev.toml"),
        "{fail}"
    );
}

/// `arev run` with no `claude` anywhere: exit 2 before any run dir, one line naming the CLI,
/// its install command and the config key — in the foreground and with --background.
#[test]
fn run_without_the_agent_cli_is_exit_two_before_any_run_dir() {
    let repo = TestRepo::new();
    for extra in [&[][..], &["--background"][..]] {
        let mut args = vec!["run", "src/lib.rs"];
        args.extend_from_slice(extra);
        let run = repo.arev().args(&args).without_agent().run();
        run.assert_code(2);
        let lines: Vec<&str> = run.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{extra:?}: {}", run.stderr);
        assert_eq!(
            lines[0],
            format!(
                "arev: error: agent `claude` (claude backend): `claude` is not on PATH — install \
                 it with `{CLAUDE_INSTALL}`, or point [agents.claude] binary (arev.toml) at it"
            ),
            "{extra:?}"
        );
        assert!(run.run_dirs().is_empty(), "{extra:?}: no run dir");
        assert!(run.stdout.is_empty(), "{}", run.stdout);
    }
}

/// Two agents missing: one line each; a binary that is not executable is named as such.
#[test]
fn run_lists_every_missing_agent_cli() {
    let repo = TestRepo::new();
    let plain = repo.scratch.join("not-executable");
    std::fs::write(&plain, "#!/bin/sh\n").unwrap();
    repo.write(
        "arev.toml",
        &format!(
            "[agents.gem]\nbackend = \"gemini\"\nbinary = \"{}\"\n[roles]\nadversary = \"codex\"\njudge = \"gem\"\n",
            plain.display()
        ),
    );
    repo.commit("config");
    let run = repo.arev().args(&["run", "src/lib.rs"]).run();
    run.assert_code(2);
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{}", run.stderr);
    assert!(
        lines[0].contains("agent `codex` (codex backend): `codex` is not on PATH")
            && lines[0].contains("npm install -g @openai/codex@0.169.0"),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].contains(&format!("{} is not executable", plain.display()))
            && lines[1].contains("npm install -g @google/gemini-cli@0.61.0")
            && lines[1].contains("(set in ")
            && lines[1].contains("arev.toml)"),
        "{}",
        lines[1]
    );
    assert!(run.run_dirs().is_empty());
}

/// `--version` names the commit the binary was built from (this checkout's HEAD when the
/// tests run inside one).
#[test]
fn version_names_the_commit() {
    let repo = TestRepo::new();
    let run = repo.arev().args(&["--version"]).run();
    run.assert_code(0);
    let line = run.stdout.trim();
    assert!(line.starts_with("arev 0.1.0"), "{line}");
    let manifest = env!("CARGO_MANIFEST_DIR");
    let head = std::process::Command::new("git")
        .args(["-C", manifest, "rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success());
    if let Some(head) = head {
        let head = String::from_utf8_lossy(&head.stdout).trim().to_string();
        assert_eq!(line, format!("arev 0.1.0 (commit {head})"));
    }
}

/// `arev doctor` reads the repository's config from where `arev run` would
/// (`--repo-config`, `AREV_REPO_CONFIG`, `--base`): a change's `arev.toml` naming a binary
/// is never run (`--version`) when the review would not read that config (docs/trust.md).
#[test]
fn doctor_honours_repo_config_and_runs_no_binary_the_change_names() {
    let repo = TestRepo::new();
    let marker = repo.scratch.join("ran");
    let evil = script(
        &repo,
        "evil-claude",
        &format!("touch '{}'; echo '2.1.330 (Claude Code)'", marker.display()),
    );
    // The change (a branch off main) names the binary.
    repo.git(&["checkout", "-q", "-b", "pr"]);
    claude_binary(&repo, &evil);
    let doctor = |args: &[&str], env: Option<(&str, &str)>| {
        let mut a = repo
            .arev()
            .args(&["doctor"])
            .args(args)
            .env("ANTHROPIC_API_KEY", "k");
        if let Some((k, v)) = env {
            a = a.env(k, v);
        }
        a.run()
    };
    for (args, env, line) in [
        (
            &["--repo-config", "ignore"][..],
            None,
            "repository config: ignored (--repo-config ignore)",
        ),
        (
            &[][..],
            Some(("AREV_REPO_CONFIG", "ignore")),
            "repository config: ignored",
        ),
        (
            &["--base", "main"][..],
            None,
            "repository config: from the merge-base",
        ),
        (
            &["--repo-config", "base", "--base", "main"][..],
            None,
            "repository config: from the merge-base",
        ),
        (
            &["--base", "main"][..],
            Some(("AREV_REPO_CONFIG", "base")),
            "repository config: from the merge-base",
        ),
    ] {
        let run = doctor(args, env);
        run.assert_code(0);
        assert!(
            run.stdout.contains(line),
            "{args:?} {env:?}: {}",
            run.stdout
        );
        assert!(
            !run.stdout.contains("evil-claude") && !marker.exists(),
            "{args:?} {env:?} ran the change's binary: {}",
            run.stdout
        );
        // The agent checked is the one on PATH (the default config).
        assert!(
            line_with(&run.stdout, "2.1.330").contains("(the tested version)"),
            "{}",
            run.stdout
        );
    }
    // `base` without --base is refused like `arev run`'s.
    let run = doctor(&["--repo-config", "base"], None);
    run.assert_code(2);
    assert!(
        line_with(&run.stdout, "FAIL").contains("--repo-config base needs --base REV"),
        "{}",
        run.stdout
    );
    assert!(!marker.exists());
    let run = doctor(&[], Some(("AREV_REPO_CONFIG", "nowhere")));
    run.assert_code(2);
    assert!(
        line_with(&run.stdout, "FAIL").contains("AREV_REPO_CONFIG=nowhere"),
        "{}",
        run.stdout
    );
    // The working tree's config, when asked for (the default without --base): its binary
    // is the one checked.
    let run = doctor(&[], None);
    run.assert_code(0);
    assert!(
        run.stdout
            .contains("repository config: the working tree's (--repo-config worktree)"),
        "{}",
        run.stdout
    );
    assert!(line_with(&run.stdout, "2.1.330").contains("evil-claude"));
    assert!(marker.exists());
}
