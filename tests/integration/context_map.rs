//! The context map (docs/architecture.md §5.3) through the real binary and the fake agent:
//! a diff that changes a function gets a `<context_map>` naming its caller and its test —
//! never an ignored or untracked file — in every role's prompt, byte for byte the same in
//! every round and in a second run of the same review, and kept as
//! `target/context-map.txt` in the run dir.

use crate::harness::{finding, ruling, TestRepo};
use serde_json::json;
use std::path::Path;

/// (`r<round>/<agent>`, prompt.md) of every dispatch of `run`.
fn prompts(run: &Path) -> Vec<(String, String)> {
    let mut out = vec![];
    for round in std::fs::read_dir(run.join("agents")).unwrap().flatten() {
        for agent in std::fs::read_dir(round.path()).unwrap().flatten() {
            if let Ok(t) = std::fs::read_to_string(agent.path().join("prompt.md")) {
                let name = format!(
                    "{}/{}",
                    round.file_name().to_string_lossy(),
                    agent.file_name().to_string_lossy()
                );
                out.push((name, t));
            }
        }
    }
    out.sort();
    out
}

/// The `<context_map>…</context_map>` block of a prompt.
fn block(prompt: &str) -> Option<&str> {
    let start = prompt.find("<context_map>")?;
    let end = prompt[start..].find("</context_map>")? + start + "</context_map>".len();
    Some(&prompt[start..end])
}

/// A repository where `src/ring.py` defines `push_item`, `src/app.py` calls it,
/// `tests/test_ring.py` tests it, and an ignored and an untracked file mention it too; the
/// diff changes `push_item`'s signature.
fn ring_repo() -> TestRepo {
    let repo = TestRepo::new();
    repo.write(
        "src/ring.py",
        "class Ring:\n    def __init__(self):\n        self.items = []\n\n    def push_item(self, item):\n        self.items.append(item)\n",
    )
    .write("src/app.py", "from ring import Ring\n\n\ndef main():\n    r = Ring()\n    r.push_item(1)\n")
    .write(
        "tests/test_ring.py",
        "from ring import Ring\n\n\ndef test_push():\n    Ring().push_item(3)\n",
    )
    .write(".gitignore", "ignored.txt\n.env\n")
    .commit("ring");
    repo.write("ignored.txt", "push_item(secret)\n")
        .write(".env", "push_item=SECRET_VALUE\n")
        .write("scratch.py", "push_item(2)\n")
        .write(
            "src/ring.py",
            "class Ring:\n    def __init__(self):\n        self.items = []\n\n    def push_item(self, item, at):\n        self.items.insert(at, item)\n",
        );
    repo
}

fn two_rounds() -> serde_json::Value {
    json!({"steps": [
        {"role": "enthusiast", "round": 1, "answer": {"findings": [
            finding("F1", "src/ring.py", 5, "high", "api-misuse")]}},
        {"role": "judge", "round": 1, "answer": {"rulings": [
            ruling("F1", "src/ring.py", 5, "high", "enthusiast")],
            "summary": "1 confirmed", "convergence": false, "next_round_model": null}}
    ]})
}

#[test]
fn the_map_names_the_caller_and_the_test_in_every_prompt_the_same() {
    let repo = ring_repo();
    let run = repo
        .arev()
        .args(&["run", "diff", "--format", "json", "--no-cache"])
        .script(two_rounds())
        .run();
    let dir = run.run_dir();
    let stored = std::fs::read_to_string(dir.join("target/context-map.txt")).unwrap();
    assert!(
        stored.contains("push_item — src/app.py:6 (use)"),
        "{stored}"
    );
    assert!(
        stored.contains("push_item — tests/test_ring.py:5 (test)"),
        "{stored}"
    );
    for never in ["ignored.txt", ".env", "scratch.py", "SECRET_VALUE"] {
        assert!(!stored.contains(never), "{never} in the map: {stored}");
    }
    assert!(stored.len() <= 2048);
    let ps = prompts(&dir);
    for role in ["enthusiast", "adversary", "judge"] {
        assert!(
            ps.iter()
                .any(|(n, _)| n.starts_with("r1/") && n.contains(role)),
            "no round-1 {role} prompt: {:?}",
            ps.iter().map(|(n, _)| n).collect::<Vec<_>>()
        );
    }
    assert!(
        ps.iter().any(|(n, _)| n.starts_with("r2/")),
        "a second round ran: {:?}",
        ps.iter().map(|(n, _)| n).collect::<Vec<_>>()
    );
    for (name, text) in &ps {
        assert_eq!(block(text), Some(stored.as_str()), "{name}");
        assert_eq!(text.matches("<context_map>").count(), 1, "{name}");
    }
    // The same review again: the same bytes.
    let again = repo
        .arev()
        .args(&["run", "diff", "--format", "json", "--no-cache"])
        .script(two_rounds())
        .run();
    let runs = again.run_dirs();
    assert_eq!(runs.len(), 2, "{runs:?}");
    let other = runs.iter().find(|r| **r != dir).unwrap();
    let second = std::fs::read_to_string(other.join("target/context-map.txt")).unwrap();
    assert_eq!(second, stored);
}

#[test]
fn a_file_target_maps_its_definitions_outside_itself() {
    let repo = ring_repo();
    let run = repo
        .arev()
        .args(&["run", "src/ring.py", "--format", "json", "--no-cache"])
        .run();
    run.assert_code(0);
    let dir = run.run_dir();
    let stored = std::fs::read_to_string(dir.join("target/context-map.txt")).unwrap();
    assert!(stored.contains("Ring — src/app.py:1 (use)"), "{stored}");
    assert!(
        stored.contains("push_item — src/app.py:6 (use)"),
        "{stored}"
    );
    assert!(
        !stored.contains("src/ring.py:"),
        "the target itself is not elsewhere: {stored}"
    );
    for (name, text) in prompts(&dir) {
        assert_eq!(block(&text), Some(stored.as_str()), "{name}");
    }
}

#[test]
fn no_map_under_context_target() {
    let repo = ring_repo();
    repo.write("arev.toml", "[review]\ncontext = \"target\"\n");
    let run = repo
        .arev()
        .args(&["run", "diff", "--format", "json", "--no-cache"])
        .run();
    run.assert_code(0);
    let dir = run.run_dir();
    assert!(!dir.join("target/context-map.txt").exists());
    let ps = prompts(&dir);
    assert!(!ps.is_empty());
    for (name, text) in ps {
        assert!(!text.contains("<context_map>"), "{name}");
        assert!(!text.contains("push_item — "), "{name}");
    }
}
