//! Unit tests of every gate.

use super::*;
use crate::dispatch::{claude_access, gemini_access, shell_access, ResultEvent, ToolUse, Usage};
use crate::findings::{EnthusiastOutput, JudgeOutput, Tier};
use crate::target::TargetKind;
use crate::test_support::{finding, target, with_hunks};
use serde_json::json;

fn outcome(end: ProcessEnd, result: Option<(bool, Option<&str>)>) -> AgentOutcome {
    AgentOutcome {
        label: "judge".into(),
        agent: "claude".into(),
        role: Role::Judge,
        tier: Tier::Opus,
        model: "opus".into(),
        end,
        tool_uses: vec![],
        result: result.map(|(is_error, text)| ResultEvent {
            is_error,
            subtype: "success".into(),
            text: text.map(Into::into),
            total_cost_usd: 0.0,
            usage: Usage::default(),
            permission_denials: vec![],
            num_turns: Some(2),
        }),
        malformed_lines: 0,
        stdout_bytes: 0,
        stdout_truncated: false,
        stderr_truncated: false,
        duration_ms: 5,
        fault: None,
        streamed: None,
        unpriced: false,
        answer_forgotten: None,
    }
}

const CAP: u64 = 16 * 1024 * 1024;

fn authentic_(o: &AgentOutcome) -> Result<(), String> {
    authentic(o, CAP).map_err(|e| e.to_string())
}

#[test]
fn authenticity() {
    let ok = outcome(ProcessEnd::Exited { code: 0 }, Some((false, Some("{}"))));
    assert!(authentic_(&ok).is_ok());
    let crashed = outcome(ProcessEnd::Exited { code: 1 }, None);
    assert!(authentic_(&crashed)
        .unwrap_err()
        .contains("without a result"));
    let err = outcome(
        ProcessEnd::Exited { code: 1 },
        Some((true, Some("API Error: 500"))),
    );
    assert!(authentic_(&err).unwrap_err().contains("is_error"));
    let spawn = outcome(
        ProcessEnd::SpawnFailed {
            message: "ENOENT".into(),
        },
        None,
    );
    assert!(authentic_(&spawn).is_err());
    let timeout = outcome(ProcessEnd::TimedOut { killed: true }, None);
    assert!(authentic_(&timeout).unwrap_err().contains("timed out"));
    let no_text = outcome(ProcessEnd::Exited { code: 0 }, Some((false, None)));
    assert!(authentic_(&no_text).is_err());
    // Cancelled: only an agent stopped before its result event has no answer; one whose
    // result had arrived (the budget its own result passed stopped it while it exited)
    // keeps it, unless the result was an error.
    let cut = outcome(ProcessEnd::Cancelled { killed: false }, None);
    assert_eq!(authentic_(&cut).unwrap_err(), "cancelled");
    let answered = outcome(
        ProcessEnd::Cancelled { killed: false },
        Some((false, Some("{}"))),
    );
    assert!(authentic_(&answered).is_ok());
    let failed = outcome(
        ProcessEnd::Cancelled { killed: true },
        Some((true, Some("API Error: 500"))),
    );
    assert!(authentic_(&failed).unwrap_err().contains("is_error"));
}

/// A result lost beyond the output cap is reported as the cap, not as a missing result.
#[test]
fn output_cap_is_named() {
    let mut flooded = outcome(ProcessEnd::Exited { code: 0 }, None);
    flooded.stdout_truncated = true;
    flooded.stdout_bytes = CAP + 5000;
    let e = authentic_(&flooded).unwrap_err();
    assert!(e.contains("16 MiB output cap"), "{e}");
    assert!(e.contains("review.max_output_bytes"), "{e}");
    assert!(e.contains(&(CAP + 5000).to_string()), "{e}");
    assert!(!e.contains("without a result"), "{e}");
    assert!(authentic(&flooded, 1000)
        .unwrap_err()
        .to_string()
        .contains("1000 bytes output cap"));
    assert!(authentic(&flooded, 64 * 1024)
        .unwrap_err()
        .to_string()
        .contains("64 KiB output cap"));
    // A timeout stays a timeout; a result that arrived before the cap still counts.
    flooded.end = ProcessEnd::TimedOut { killed: true };
    assert!(authentic_(&flooded).unwrap_err().contains("timed out"));
    let mut kept = outcome(ProcessEnd::Exited { code: 0 }, Some((false, Some("{}"))));
    kept.stdout_truncated = true;
    assert!(authentic_(&kept).is_ok());
}

fn codex_item(kind: &str, extra: serde_json::Value) -> ToolUse {
    let mut item = json!({"id": "i1", "type": kind});
    for (k, v) in extra.as_object().unwrap() {
        item[k] = v.clone();
    }
    let line = json!({"type": "item.completed", "item": item}).to_string();
    let mut uses =
        crate::backends::decode_all(crate::dispatch::EventFormat::Codex, line.as_bytes(), "m")
            .tool_uses;
    uses.pop().unwrap()
}

/// Fail closed: a reviewer may call only the backend's read-only tools; the Fixer keeps its
/// write tools; everything else is named.
#[test]
fn tool_gate() {
    use crate::dispatch::EventFormat::Claude;
    read_only_tools_pass();
    write_tools_are_the_fixers();
    other_tools_are_named();
    assert_eq!(forbidden_tool(Claude, Role::Judge, &[]), None);
}

const REVIEWERS: [Role; 3] = [Role::Enthusiast, Role::Adversary, Role::Judge];

fn claude_read_only() -> [ToolUse; 3] {
    [
        tool("Read", json!({"file_path": "/etc/passwd"})),
        tool("Grep", json!({"pattern": "x"})),
        tool("Glob", json!({"pattern": "*"})),
    ]
}

fn read_only_tools_pass() {
    use crate::dispatch::EventFormat::{Claude, Codex, Gemini};
    let reviewers = REVIEWERS;
    let claude_ok = claude_read_only();
    let codex_ok = [shell("/bin/bash -lc 'cat /etc/passwd'"), shell("rg -n x")];
    let gemini_ok = [
        gemini("read_file", json!({"file_path": "a.rs"})),
        gemini("read_many_files", json!({"include": ["a.rs"]})),
        gemini("grep_search", json!({"pattern": "x"})),
        gemini("glob", json!({"pattern": "*"})),
        gemini("list_directory", json!({"dir_path": "."})),
        gemini("update_topic", json!({"title": "t"})),
    ];
    for role in reviewers.into_iter().chain([Role::Fixer]) {
        // Read-only tools pass the tool gate (the read gate judges their paths).
        assert_eq!(forbidden_tool(Claude, role, &claude_ok), None, "{role}");
        assert_eq!(forbidden_tool(Codex, role, &codex_ok), None, "{role}");
        assert_eq!(forbidden_tool(Gemini, role, &gemini_ok), None, "{role}");
    }
}

fn write_tools_are_the_fixers() {
    use crate::dispatch::EventFormat::{Claude, Codex, Gemini};
    let reviewers = REVIEWERS;
    let edits = [
        tool("Edit", json!({"file_path": "a.rs"})),
        tool("Write", json!({"file_path": "a.rs"})),
    ];
    let changes = codex_item(
        "file_change",
        json!({"changes": [{"path": "a.rs", "kind": "add"}]}),
    );
    let gemini_writes = [
        gemini("write_file", json!({"file_path": "a.rs"})),
        gemini("replace", json!({"file_path": "a.rs"})),
    ];
    assert_eq!(forbidden_tool(Claude, Role::Fixer, &edits), None);
    assert_eq!(
        forbidden_tool(Codex, Role::Fixer, std::slice::from_ref(&changes)),
        None
    );
    assert_eq!(forbidden_tool(Gemini, Role::Fixer, &gemini_writes), None);
    for role in reviewers {
        assert_eq!(
            forbidden_tool(Claude, role, &edits).as_deref(),
            Some("Edit")
        );
        assert_eq!(
            forbidden_tool(Codex, role, std::slice::from_ref(&changes)).as_deref(),
            Some("file_change")
        );
        assert_eq!(
            forbidden_tool(Gemini, role, &gemini_writes).as_deref(),
            Some("write_file")
        );
    }
}

fn other_tools_are_named() {
    use crate::dispatch::EventFormat::{Claude, Codex, Gemini};
    let reviewers = REVIEWERS;
    let claude_ok = claude_read_only();
    for role in reviewers.into_iter().chain([Role::Fixer]) {
        for (name, input) in [
            ("WebFetch", json!({"url": "https://example.com"})),
            ("mcp__fs__read", json!({"path": "a.rs"})),
            ("Agent", json!({"prompt": "p"})),
            ("MultiEdit", json!({"file_path": "a.rs"})),
            ("read_file", json!({"file_path": "a.rs"})),
        ] {
            let mut uses = claude_ok.to_vec();
            uses.push(tool(name, input));
            assert_eq!(
                forbidden_tool(Claude, role, &uses).as_deref(),
                Some(name),
                "{role}"
            );
        }
        let bash = forbidden_tool(Claude, role, &[tool("Bash", json!({"command": "ls"}))]);
        assert_eq!(
            bash.as_deref(),
            Some("Bash `ls`"),
            "a claude Bash is not parsed"
        );
        let long = "x".repeat(500);
        let bash = forbidden_tool(Claude, role, &[tool("Bash", json!({ "command": long }))]);
        assert_eq!(bash, Some(format!("Bash `{}…`", "x".repeat(200))));
        for (name, input) in [
            ("run_shell_command", json!({"command": "cat a.rs"})),
            ("google_web_search", json!({"query": "x"})),
            ("web_fetch", json!({"prompt": "x"})),
            ("codebase_investigator", json!({})),
            ("Read", json!({"file_path": "a.rs"})),
        ] {
            let got = forbidden_tool(Gemini, role, &[gemini(name, input)]);
            assert!(
                got.as_deref().is_some_and(|g| g.starts_with(name)),
                "{role}: {got:?}"
            );
        }
        for (kind, extra, name) in [
            (
                "mcp_tool_call",
                json!({"server": "fs", "tool": "read"}),
                "mcp:fs/read",
            ),
            ("web_search", json!({"query": "x"}), "web_search"),
            (
                "collab_tool_call",
                json!({"tool": "spawn_agent"}),
                "collab:spawn_agent",
            ),
        ] {
            let t = codex_item(kind, extra);
            assert_eq!(
                forbidden_tool(Codex, role, &[t]).as_deref(),
                Some(name),
                "{role}"
            );
        }
        let find = forbidden_tool(Codex, role, &[shell("/bin/bash -lc 'find . -name x'")]).unwrap();
        assert!(
            find.starts_with(
                "shell `/bin/bash -lc 'find . -name x'` (not provably read-only: `find`"
            ),
            "{find}"
        );
        let write = forbidden_tool(Codex, role, &[shell("cat a.rs > b.rs")]).unwrap();
        assert_eq!(write, "shell `cat a.rs > b.rs` (writes b.rs)");
        let subst = forbidden_tool(Codex, role, &[shell("cat $(ls)")]).unwrap();
        assert!(subst.contains("substitution"), "{subst}");
    }
}

fn tool(name: &str, input: serde_json::Value) -> ToolUse {
    ToolUse {
        id: format!("t-{name}-{input}"),
        name: name.into(),
        access: claude_access(name, &input),
        input,
    }
}

fn shell(cmd: &str) -> ToolUse {
    ToolUse {
        id: format!("s-{cmd}"),
        name: "shell".into(),
        input: json!({ "command": cmd }),
        access: shell_access(cmd),
    }
}

fn gemini(name: &str, input: serde_json::Value) -> ToolUse {
    ToolUse {
        id: format!("g-{name}-{input}"),
        name: name.into(),
        access: gemini_access(name, &input),
        input,
    }
}

/// Codex shell reads and Gemini tools face the same membership rules as Claude's tools.
#[test]
fn read_scope_is_backend_neutral() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/a.rs"), "fn a() {}\n").unwrap();
    std::fs::write(root.join("secret.txt"), "x").unwrap();
    let target = root.join("src/a.rs");
    let scope = ReadScope::new(&root, ["src/a.rs"].into_iter(), &target, &[]);
    let abs = target.display().to_string();
    let good = [
        shell("/bin/bash -lc 'cat src/a.rs'"),
        shell(&format!("/bin/bash -lc \"nl -ba {abs} | sed -n '1,80p'\"")),
        shell("/bin/bash -lc 'rg -n unwrap src/a.rs'"),
        shell("/bin/bash -lc 'cd src && grep -n fn a.rs'"),
        gemini("read_file", json!({"file_path": abs})),
        gemini(
            "grep_search",
            json!({"pattern": "x", "dir_path": "src/a.rs"}),
        ),
        gemini("google_web_search", json!({"query": "x"})),
    ];
    assert_eq!(scope.violation(&good), None);
    assert!(
        scope.read_target(&good[..1]),
        "a cat of the target is a Read"
    );
    assert!(scope.read_target(&good[1..2]));
    assert!(scope.read_target(&good[4..5]));
    assert!(!scope.read_target(&good[2..4]), "a search is not a Read");
    for bad in [
        shell("/bin/bash -lc 'cat secret.txt'"),
        shell("/bin/bash -lc 'rg -n unwrap'"),
        shell("/bin/bash -lc 'ls'"),
        shell("/bin/bash -lc 'cd .. && cat a.rs'"),
        shell("/bin/bash -lc 'cat src/a.rs > /tmp/copy'"),
        gemini("read_file", json!({"file_path": "secret.txt"})),
        gemini(
            "list_directory",
            json!({"dir_path": root.display().to_string()}),
        ),
        gemini("glob", json!({"pattern": "**/*"})),
        gemini(
            "write_file",
            json!({"file_path": "src/a.rs", "content": ""}),
        ),
    ] {
        assert!(
            scope.violation(std::slice::from_ref(&bad)).is_some(),
            "{bad:?} should violate"
        );
    }
    let v = scope
        .violation(&[shell("/bin/bash -lc 'find . -name \"*.rs\"'")])
        .unwrap();
    assert!(
        v.path.contains("unverifiable") && v.path.contains("find"),
        "{v:?}"
    );
}

#[test]
fn read_scope_normalises_paths() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/a.rs"), "fn a() {}\n").unwrap();
    std::fs::write(root.join("secret.txt"), "x").unwrap();
    std::os::unix::fs::symlink(root.join("secret.txt"), root.join("src/link.rs")).unwrap();
    let manifest = root.join(".arev/runs/x/target/manifest.txt");
    let scope = ReadScope::new(&root, ["src/a.rs"].into_iter(), &manifest, &[]);
    let abs = root.join("src/a.rs").display().to_string();
    let good = [
        tool("Read", json!({"file_path": manifest.display().to_string()})),
        tool("Read", json!({"file_path": abs})),
        tool("Read", json!({"file_path": "src/../src/a.rs"})),
        tool("Grep", json!({"pattern": "x", "path": "./src/a.rs"})),
        tool("Bash", json!({"command": "ls"})),
    ];
    assert_eq!(scope.violation(&good), None);
    assert!(scope.read_target(&good));
    assert!(!scope.read_target(&good[1..]));
    for bad in [
        tool("Read", json!({"file_path": "secret.txt"})),
        tool("Read", json!({"file_path": "src/../secret.txt"})),
        tool("Read", json!({"file_path": "src/link.rs"})),
        tool("Grep", json!({"pattern": "x"})),
        tool(
            "Glob",
            json!({"pattern": "**/*.rs", "path": root.display().to_string()}),
        ),
        tool("Read", json!({"file_path": "/etc/passwd"})),
    ] {
        let v = scope.violation(std::slice::from_ref(&bad));
        assert!(v.is_some(), "{bad:?} should violate");
    }
}

/// VCS metadata is off-target always, even when a target lists it.
#[test]
fn git_metadata_is_never_in_scope() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::create_dir_all(root.join("vendor/lib")).unwrap();
    std::fs::write(root.join(".git/config"), "[core]\n").unwrap();
    std::fs::write(root.join("vendor/lib/.git"), "gitdir: x\n").unwrap();
    std::fs::write(root.join("a.rs"), "fn a() {}\n").unwrap();
    let target = root.join("a.rs");
    let listed = ["a.rs", ".git/config", "vendor/lib/.git"];
    let scope = ReadScope::new(&root, listed.into_iter(), &target, &[]);
    assert_eq!(
        scope.violation(&[tool("Read", json!({"file_path": "a.rs"}))]),
        None
    );
    for bad in [".git/config", "vendor/lib/.git", "./.git/../.git/config"] {
        let v = scope.violation(&[tool("Read", json!({"file_path": bad}))]);
        assert!(v.is_some(), "{bad} should violate");
    }
    assert!(super::reads::is_vcs_metadata(std::path::Path::new(
        "a/.git"
    )));
    assert!(!super::reads::is_vcs_metadata(std::path::Path::new(
        "a/.gitignore"
    )));
}

/// ALLOWED_FILES never widen through a symlink: a listed link (or a listed file swapped for
/// a link mid-review) resolves outside the scope, and reading it is a violation.
#[test]
fn read_scope_checks_the_resolved_path_and_never_follows_an_allowed_link() {
    let d = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let root = d.path().canonicalize().unwrap();
    std::fs::write(outside.path().join("environ"), "ANTHROPIC_API_KEY=x").unwrap();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/a.rs"), "fn a() {}\n").unwrap();
    std::fs::write(root.join("src/b.rs"), "fn b() {}\n").unwrap();
    std::os::unix::fs::symlink(outside.path().join("environ"), root.join("env.rs")).unwrap();
    std::os::unix::fs::symlink(outside.path(), root.join("etcdir")).unwrap();
    std::os::unix::fs::symlink("a.rs", root.join("src/alias.rs")).unwrap();
    let target = root.join("src/a.rs");
    let scope = ReadScope::new(
        &root,
        ["src/a.rs", "src/b.rs", "env.rs", "etcdir/environ"].into_iter(),
        &target,
        &[],
    );
    // An in-repo link to an allowed file reads allowed content.
    assert_eq!(
        scope.violation(&[tool("Read", json!({"file_path": "src/alias.rs"}))]),
        None
    );
    for bad in ["env.rs", "etcdir/environ", "etcdir/../etcdir/environ"] {
        let v = scope.violation(&[tool("Read", json!({"file_path": bad}))]);
        let v = v.unwrap_or_else(|| panic!("{bad} should violate"));
        assert!(v.path.ends_with("environ"), "{v:?}");
        assert!(!v.path.starts_with(root.to_str().unwrap()), "{v:?}");
    }
    // Swapped for a link after the scope was built.
    std::fs::remove_file(root.join("src/b.rs")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("environ"), root.join("src/b.rs")).unwrap();
    assert!(scope
        .violation(&[tool("Read", json!({"file_path": "src/b.rs"}))])
        .is_some());
    // The file target itself swapped for a link before the scope was built: still refused.
    std::fs::remove_file(root.join("src/a.rs")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("environ"), root.join("src/a.rs")).unwrap();
    let late = ReadScope::new(&root, ["src/a.rs"].into_iter(), &target, &[]);
    let read = [tool("Read", json!({"file_path": "src/a.rs"}))];
    assert!(late.violation(&read).is_some());
    assert!(!late.read_target(&read));
    // A missing path through a link to outside resolves outside too.
    assert!(scope
        .violation(&[tool("Read", json!({"file_path": "etcdir/none"}))])
        .is_some());
}

#[test]
fn finding_membership() {
    let root = std::path::Path::new("/repo");
    let t = target(root, TargetKind::Manifest, &[("src/a.rs", 10)]);
    for ok in ["src/a.rs", "./src/a.rs", "/repo/src/a.rs"] {
        assert_eq!(
            normalize_finding_file(ok, &t),
            FileCheck::Allowed("src/a.rs")
        );
    }
    assert_eq!(
        normalize_finding_file("src/b.rs", &t),
        FileCheck::Offtarget("src/b.rs")
    );
}

#[test]
fn anchors() {
    let root = std::path::Path::new("/repo");
    let t = target(root, TargetKind::File, &[("a.rs", 10)]);
    assert!(anchor_ok(&finding("F1", Some("a.rs"), Some(10), "x"), &t));
    assert!(!anchor_ok(&finding("F1", Some("a.rs"), Some(11), "x"), &t));
    assert!(anchor_ok(&finding("F1", Some("a.rs"), None, "x"), &t));
    assert!(anchor_ok(&finding("F1", None, None, "x"), &t));
    let d = with_hunks(
        target(root, TargetKind::Diff, &[("a.rs", 100)]),
        "a.rs",
        &[(5, 9), (40, 41)],
    );
    assert!(anchor_ok(&finding("F1", Some("a.rs"), Some(41), "x"), &d));
    assert!(!anchor_ok(&finding("F1", Some("a.rs"), Some(20), "x"), &d));
}

#[test]
fn schema_gate() {
    let fenced = "Here you go:\n```json\n{\"findings\":[]}\n```";
    assert_eq!(
        parse_answer::<EnthusiastOutput>(fenced).unwrap(),
        EnthusiastOutput { findings: vec![] }
    );
    assert_eq!(
        parse_answer::<EnthusiastOutput>("```json\n{\"findings\":[]}\n```").unwrap(),
        EnthusiastOutput { findings: vec![] }
    );
    assert_eq!(
        parse_answer::<EnthusiastOutput>("Result: {\"findings\":[]} done").unwrap(),
        EnthusiastOutput { findings: vec![] }
    );
    assert!(parse_answer::<EnthusiastOutput>("{\"findings\": [").is_err());
    assert!(parse_answer::<EnthusiastOutput>("").is_err());
    let dup = r#"{"findings":[
      {"id":"F1","severity":"low","target_type":"code","file":null,"line":null,"category":"x","description":"d","evidence":"e","source":"enthusiast"},
      {"id":"F1","severity":"low","target_type":"code","file":null,"line":null,"category":"x","description":"d","evidence":"e","source":"enthusiast"}]}"#;
    assert!(parse_answer::<EnthusiastOutput>(dup)
        .unwrap_err()
        .to_string()
        .contains("twice"));
    let bad_enum = r#"{"rulings":[{"finding_id":"F1","file":null,"line":null,"target_type":"code","final_severity":"huge","winner":"split","resolution":"r"}],"summary":"s"}"#;
    assert!(parse_answer::<JudgeOutput>(bad_enum).is_err());
}

/// The Prover's scope is its whole scratch worktree (and the target artefact), never a path
/// that resolves outside it: `..`, an absolute path elsewhere, or a link pointing out.
#[test]
fn the_prover_may_read_its_whole_worktree_and_nothing_outside() {
    let d = tempfile::tempdir().unwrap();
    let base = d.path().canonicalize().unwrap();
    let root = base.join("wt");
    std::fs::create_dir_all(root.join("tests")).unwrap();
    std::fs::write(root.join("tests/t.py"), "x").unwrap();
    std::fs::write(base.join("secret.txt"), "s").unwrap();
    std::os::unix::fs::symlink(base.join("secret.txt"), root.join("link")).unwrap();
    let artefact = base.join("run/target/diff.patch");
    let scope = ReadScope::tree(&root, &artefact, &[]);
    let ok = [
        tool("Read", json!({"file_path": root.join("tests/t.py")})),
        tool("Read", json!({"file_path": artefact})),
        tool("Grep", json!({"pattern": "x", "path": root})),
        tool("Grep", json!({"pattern": "x"})),
        tool("Read", json!({"file_path": root.join("not/yet.py")})),
    ];
    assert_eq!(scope.violation(&ok), None);
    assert!(scope.read_target(&ok[1..2]));
    for bad in [
        tool("Read", json!({"file_path": base.join("secret.txt")})),
        tool("Read", json!({"file_path": root.join("../secret.txt")})),
        tool("Read", json!({"file_path": root.join("link")})),
        tool("Grep", json!({"pattern": "x", "path": base})),
    ] {
        assert!(
            scope.violation(std::slice::from_ref(&bad)).is_some(),
            "{bad:?}"
        );
    }
    // A reviewer's scope over the same tree is still ALLOWED_FILES only.
    let narrow = ReadScope::new(&root, std::iter::empty(), &artefact, &[]);
    assert!(narrow.violation(&ok[..1]).is_some());
    // A file tool's write (Codex's file_change, Gemini's write_file) inside the worktree is
    // the write gate's to judge; outside it, or into VCS metadata, it is a violation here —
    // and any write still is for a reviewer.
    let write = |p: &std::path::Path| ToolUse {
        id: format!("w-{}", p.display()),
        name: "write_file".into(),
        input: json!({"file_path": p}),
        access: crate::records::FileAccess {
            write: vec![p.display().to_string()],
            ..Default::default()
        },
    };
    assert_eq!(scope.violation(&[write(&root.join("test_x.py"))]), None);
    for bad in [
        base.join("outside.py"),
        root.join("../outside.py"),
        root.join(".git/hooks/pre-commit"),
    ] {
        assert!(scope.violation(&[write(&bad)]).is_some(), "{bad:?}");
    }
    assert!(narrow
        .violation(&[write(&root.join("test_x.py"))])
        .is_some());
    // The Fixer's scope leaves every write to its write gate (`round::fixer`), inside the
    // worktree or not; its reads stay ALLOWED_FILES only.
    let fixer =
        ReadScope::new(&root, std::iter::empty(), &artefact, &[]).with_writes_gated_elsewhere();
    for w in [root.join("test_x.py"), base.join("outside.py")] {
        assert_eq!(fixer.violation(&[write(&w)]), None, "{w:?}");
    }
    assert!(fixer.violation(&ok[..1]).is_some());
}

#[test]
fn a_prover_answer_names_relative_files_and_an_argv() {
    let ok = r#"{"finding_id":"F1","files":["tests/t.py"],"command":["python3","-m","unittest"],"claim":"c"}"#;
    assert!(parse_answer::<crate::findings::ProverOutput>(ok).is_ok());
    assert!(parse_answer::<crate::findings::ProverOutput>(
        r#"{"finding_id":"F1","unprovable":"needs a browser"}"#
    )
    .is_ok());
    for bad in [
        r#"{"finding_id":"F1","files":[],"command":["x"],"claim":"c"}"#,
        r#"{"finding_id":"F1","files":["a"],"command":[],"claim":"c"}"#,
        r#"{"finding_id":"F1","files":["/etc/x"],"command":["x"],"claim":"c"}"#,
        r#"{"finding_id":"F1","files":["../x"],"command":["x"],"claim":"c"}"#,
        r#"{"finding_id":"F1","unprovable":" "}"#,
    ] {
        assert!(
            parse_answer::<crate::findings::ProverOutput>(bad).is_err(),
            "{bad}"
        );
    }
}
