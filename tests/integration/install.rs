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
