//! `arev install claude` through the binary: project and user scope, idempotent, merged into
//! an existing settings.json, `--uninstall` restores it.

use crate::harness::TestRepo;
use serde_json::Value;

fn settings(path: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn project_scope_install_is_idempotent_and_uninstall_restores() {
    let repo = TestRepo::new();
    let original =
        "{\n  \"permissions\": {\"allow\": [\"Bash(ls:*)\"]},\n  \"model\": \"opus\"\n}\n";
    repo.write(".claude/settings.json", original);
    std::fs::create_dir_all(repo.root.join("src/deep")).unwrap();
    // From a subdirectory: the repo root's .claude is used.
    let run = repo
        .arev()
        .args(&["install", "claude"])
        .cwd(repo.root.join("src/deep"))
        .run();
    run.assert_code(0);
    assert!(run.stdout.contains("#arev"), "{}", run.stdout);
    let dir = repo.root.join(".claude");
    let s = settings(&dir.join("settings.json"));
    // Plain `arev` from PATH: what works on a teammate's machine (never this build's path).
    assert_eq!(
        s["hooks"]["Stop"][0]["hooks"][0]["command"],
        "arev hook stop"
    );
    assert_eq!(s["model"], "opus");
    // The harness's PATH has no arev: the user is told.
    assert!(
        run.stderr.contains("`arev` is not on PATH here"),
        "{}",
        run.stderr
    );
    for cmd in [
        "adversarial-review",
        "arev-status",
        "arev-result",
        "arev-cancel",
    ] {
        let body = std::fs::read_to_string(dir.join(format!("commands/{cmd}.md"))).unwrap();
        assert!(
            body.contains("!`arev ") && !body.contains("CLAUDE_PLUGIN_ROOT"),
            "{cmd}: {body}"
        );
    }
    // arev's roles are not Claude Code subagents.
    assert!(!dir.join("agents").exists());
    let first = std::fs::read_to_string(dir.join("settings.json")).unwrap();
    let again = repo.arev().args(&["install", "claude"]).run();
    again.assert_code(0);
    assert_eq!(
        std::fs::read_to_string(dir.join("settings.json")).unwrap(),
        first
    );
    // A byte-identical file is said to be unchanged, not merged.
    assert!(
        again.stdout.contains(&format!(
            "unchanged {}",
            dir.join("settings.json").display()
        )) && !again.stdout.contains("merged"),
        "{}",
        again.stdout
    );

    repo.arev()
        .args(&["install", "claude", "--uninstall"])
        .run()
        .assert_code(0);
    assert_eq!(
        settings(&dir.join("settings.json")),
        serde_json::from_str::<Value>(original).unwrap()
    );
    assert!(!dir.join("commands").exists() && !dir.join("agents").exists());
    assert!(!dir.join("arev-install.json").exists());
}

#[test]
fn user_scope_goes_to_home_and_bad_settings_are_exit_2() {
    let repo = TestRepo::new();
    repo.arev()
        .args(&["install", "claude", "--scope", "user"])
        .run()
        .assert_code(0);
    let home = repo.scratch.join("home/.claude");
    assert!(home.join("settings.json").is_file());
    assert!(!repo.root.join(".claude").exists());
    repo.arev()
        .args(&["install", "claude", "--scope", "user", "--uninstall"])
        .run()
        .assert_code(0);
    assert!(!home.exists());

    repo.write(".claude/settings.json", "{\"hooks\": [1]}");
    let run = repo.arev().args(&["install", "claude"]).run();
    run.assert_code(2);
    assert!(run.stderr.contains("nothing was changed"), "{}", run.stderr);
    assert_eq!(
        std::fs::read_to_string(repo.root.join(".claude/settings.json")).unwrap(),
        "{\"hooks\": [1]}"
    );
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A committed `.claude/arev-install.json` is the repository's, not arev's: the files it
/// names outside `.claude/` (`..`, an absolute path, through a symlinked directory) and the
/// ones that no longer hold what arev wrote are neither deleted by an install nor by
/// `--uninstall`; each is named on stderr (docs/trust.md).
#[test]
fn a_hostile_install_record_deletes_nothing_outside_or_changed() {
    let repo = TestRepo::new();
    let victims = repo.scratch.join("victims");
    std::fs::create_dir_all(victims.join("empty")).unwrap();
    let abs = victims.join("abs.txt");
    std::fs::write(&abs, "absolute").unwrap();
    std::fs::write(victims.join("via-link.txt"), "linked").unwrap();
    repo.write("outside.txt", "outside");
    repo.write(".claude/commands/mine.md", "the user's own command, edited");
    std::os::unix::fs::symlink(&victims, repo.root.join(".claude/up")).unwrap();
    let record = |extra_files: &[&str]| {
        let mut files = vec![
            "../outside.txt".to_string(),
            abs.display().to_string(),
            "up/via-link.txt".to_string(),
            "commands/mine.md".to_string(),
        ];
        files.extend(extra_files.iter().map(|s| s.to_string()));
        serde_json::json!({
            "files": files,
            "dirs": ["..", victims.join("empty").display().to_string(), "up"],
            "created_settings": false,
            "created_hooks_key": false,
            "created_events": [],
            "program": "arev",
            // The hashes an attacker who knows the contents would write: still not removed.
            "sha256": {
                "../outside.txt": sha256_hex(b"outside"),
                abs.display().to_string(): sha256_hex(b"absolute"),
                "up/via-link.txt": sha256_hex(b"linked"),
                "commands/mine.md": sha256_hex(b"what arev once wrote"),
            }
        })
        .to_string()
    };
    repo.write(".claude/arev-install.json", &record(&[]));
    repo.commit("a hostile install record");

    let intact = |when: &str| {
        assert_eq!(
            std::fs::read_to_string(repo.root.join("outside.txt")).unwrap(),
            "outside",
            "{when}"
        );
        assert_eq!(std::fs::read_to_string(&abs).unwrap(), "absolute", "{when}");
        assert_eq!(
            std::fs::read_to_string(victims.join("via-link.txt")).unwrap(),
            "linked",
            "{when}"
        );
        assert!(victims.join("empty").is_dir(), "{when}");
        assert!(victims.is_dir() && repo.root.is_dir(), "{when}");
        assert_eq!(
            std::fs::read_to_string(repo.root.join(".claude/commands/mine.md")).unwrap(),
            "the user's own command, edited",
            "{when}"
        );
    };
    let reported = |run: &crate::harness::Run, needles: &[&str]| {
        for n in needles {
            assert!(
                run.stderr
                    .lines()
                    .any(|l| l.contains("left ") && l.contains(n) && l.contains("did not remove")),
                "no line for {n} in\n{}",
                run.stderr
            );
        }
    };
    let install = repo.arev().args(&["install", "claude"]).run();
    install.assert_code(0);
    intact("install");
    reported(
        &install,
        &[
            "outside.txt: not a plain path",
            "abs.txt: not a plain path",
            "up/via-link.txt: resolves outside .claude/",
            "commands/mine.md: changed since arev wrote it",
        ],
    );
    assert!(!install.stdout.contains("removed"), "{}", install.stdout);
    // The record arev wrote keeps only what it wrote, each with its checksum.
    let rec: Value = serde_json::from_str(
        &std::fs::read_to_string(repo.root.join(".claude/arev-install.json")).unwrap(),
    )
    .unwrap();
    let files: Vec<&str> = rec["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    assert!(
        files
            .iter()
            .all(|f| f.starts_with("commands/arev-") || *f == "commands/adversarial-review.md"),
        "{files:?}"
    );
    let body = std::fs::read(repo.root.join(".claude/commands/adversarial-review.md")).unwrap();
    assert_eq!(
        rec["sha256"]["commands/adversarial-review.md"],
        sha256_hex(&body)
    );

    // The same record planted again (with arev's own files), then --uninstall.
    repo.write(
        ".claude/arev-install.json",
        &record(&["commands/adversarial-review.md", "commands/arev-status.md"]),
    );
    let un = repo
        .arev()
        .args(&["install", "claude", "--uninstall"])
        .run();
    un.assert_code(0);
    intact("uninstall");
    reported(
        &un,
        &[
            "outside.txt: not a plain path",
            "abs.txt: not a plain path",
            "up/via-link.txt: resolves outside .claude/",
            "commands/mine.md: changed since arev wrote it",
            "empty/: not a plain path",
            "up/: not a directory",
        ],
    );
    // arev's own commands (what this arev writes, no checksum recorded) are removed.
    assert!(!repo
        .root
        .join(".claude/commands/adversarial-review.md")
        .exists());
    assert!(un.stdout.contains("removed"), "{}", un.stdout);
}

/// A committed `.claude` that is a symbolic link is refused before anything is written or
/// removed: the install would act outside the repository.
#[test]
fn a_symlinked_claude_dir_is_refused() {
    let repo = TestRepo::new();
    let elsewhere = repo.scratch.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, repo.root.join(".claude")).unwrap();
    for args in [
        &["install", "claude"][..],
        &["install", "claude", "--uninstall"][..],
    ] {
        let run = repo.arev().args(args).run();
        run.assert_code(2);
        assert!(
            run.stderr
                .contains("a symbolic link; arev installs only into a real .claude"),
            "{}",
            run.stderr
        );
        assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
    }
}
