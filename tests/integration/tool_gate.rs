//! The fail-closed tool gate through the real path, for each event format (Claude
//! stream-json from the default agent; Codex JSONL and Gemini stream-json from `command`
//! agents declaring that format), and the output cap named in the dispatch failure.

use crate::harness::{a_finding_to_judge, Run, TestRepo};
use serde_json::{json, Value};

const FAKE: &str = env!("CARGO_BIN_EXE_arev-fake-agent");

/// Every role on one `command` agent running the fake in `format`.
fn command_config(format: &str) -> String {
    format!(
        "[agents.fake]\nbackend = \"command\"\nbinary = \"{FAKE}\"\nformat = \"{format}\"\n\
         extra_args = [\"--event-format\", \"{format}\", \"--model\", \"{{model}}\"]\n\
         [roles]\nenthusiast = \"fake\"\nadversary = \"fake\"\njudge = \"fake\"\n"
    )
}

fn repo_with(format: Option<&str>) -> TestRepo {
    let repo = TestRepo::new();
    if let Some(f) = format {
        repo.write("arev.toml", &command_config(f));
        repo.commit("config");
    }
    repo
}

/// The dispatch records of `role` in round 1.
fn dispatches(run: &Run, role: &str) -> Vec<Value> {
    run.json("round-1.json")["dispatches"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["role"] == role)
        .cloned()
        .collect()
}

/// Aborted with `<role>_forbidden_tool` at the first dispatch (no retry), the tool named in
/// meta.json, the report, stderr and the dispatch's gate record. (Every Enthusiast pass runs
/// the same step.)
fn assert_forbidden(run: &Run, role: &str, tool: &str) {
    run.assert_code(3);
    let reason = format!("{role}_forbidden_tool");
    let meta = run.meta();
    assert_eq!(meta["status"], "aborted");
    assert_eq!(meta["abort_reason"], reason.as_str(), "{}", run.stderr);
    let detail = meta["abort_detail"].as_str().unwrap();
    assert!(detail.contains(tool), "{detail:?} names {tool:?}");
    assert_eq!(run.report()["abort_reason"], reason.as_str());
    assert!(run.stderr.contains(&reason), "{}", run.stderr);
    let ds = dispatches(run, role);
    assert!(
        ds.iter()
            .all(|d| !d["label"].as_str().unwrap().contains("retry")),
        "a forbidden tool is not retried: {ds:?}"
    );
    let gate = ds
        .iter()
        .find_map(|d| d["gates"]["forbidden_tool"].as_str())
        .unwrap();
    assert!(gate.starts_with(tool), "{gate:?}");
    let decision = &run.json("round-1.json")["decision"];
    assert_eq!(decision["action"], "abort");
    assert_eq!(decision["abort_reason"], reason.as_str());
}

/// The event format works end to end through a `command` agent: its read-only reads pass
/// every gate (so the aborts below are the tool gate's doing).
#[test]
fn read_only_tools_pass_in_every_format() {
    for format in ["codex", "gemini"] {
        let repo = repo_with(Some(format));
        let run = repo
            .arev()
            .args(&["run", "src/lib.rs", "--max-rounds", "1"])
            .script(json!({"steps": [a_finding_to_judge()]}))
            .run();
        run.assert_code(0);
        assert_eq!(run.meta()["status"], "complete", "{format}: {}", run.stderr);
        run.assert_code(0);
        let d = &dispatches(&run, "adversary")[0];
        assert_eq!(d["gates"]["read_target"], true, "{format}");
        assert!(d["gates"].get("forbidden_tool").is_none(), "{format}: {d}");
        let want = if format == "codex" {
            "shell"
        } else {
            "read_file"
        };
        // round-N.json counts the tool uses; the dispatch's outcome.json lists them.
        assert_eq!(d["outcome"]["tool_uses"], 1, "{format}");
        let dir = run.run_dir().join(d["dir"].as_str().unwrap());
        let outcome: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("outcome.json")).unwrap())
                .unwrap();
        assert_eq!(outcome["tool_uses"][0]["name"], want, "{format}");
    }
}

/// Claude stream-json: Bash (even one the CLI refused), an MCP tool and WebFetch each abort
/// the review; the tool is named.
#[test]
fn claude_forbidden_tools_abort() {
    for (role, name, input) in [
        (
            "adversary",
            "Bash",
            json!({"command": "cat /proc/self/environ"}),
        ),
        ("enthusiast", "mcp__evil__read_secret", json!({"key": "x"})),
        (
            "enthusiast",
            "WebFetch",
            json!({"url": "http://127.0.0.1:9/"}),
        ),
        (
            "adversary",
            "Edit",
            json!({"file_path": "src/lib.rs", "old_string": "a", "new_string": "b"}),
        ),
    ] {
        let repo = repo_with(None);
        let run = repo
            .arev()
            .args(&["run", "src/lib.rs"])
            .script(json!({"steps": [{"role": role, "tools": [{"name": name, "input": input}]}, a_finding_to_judge()]}))
            .run();
        assert_forbidden(&run, role, name);
    }
}

/// Codex JSONL: a command the shell derivation cannot prove read-only, a write, an MCP tool
/// call and a web search each abort; a read-only command does not.
#[test]
fn codex_forbidden_tools_abort() {
    for (role, name, input, named) in [
        (
            "enthusiast",
            "shell",
            json!({"command": "/bin/bash -lc 'python3 -c \"print(1)\"'"}),
            "shell `/bin/bash -lc 'python3",
        ),
        (
            "adversary",
            "shell",
            json!({"command": "/bin/bash -lc 'cat src/lib.rs > /tmp/arev-copy'"}),
            "shell",
        ),
        (
            "adversary",
            "shell",
            json!({"command": "/bin/bash -lc \"sed -n '1e id' src/lib.rs\""}),
            "shell",
        ),
        (
            "enthusiast",
            "mcp:fs/read_file",
            json!({"path": "/etc/hostname"}),
            "mcp:fs/read_file",
        ),
        (
            "adversary",
            "web_search",
            json!({"query": "secrets"}),
            "web_search",
        ),
    ] {
        let repo = repo_with(Some("codex"));
        let run = repo
            .arev()
            .args(&["run", "src/lib.rs"])
            .script(json!({"steps": [{"role": role, "tools": [{"name": name, "input": input}]}, a_finding_to_judge()]}))
            .run();
        assert_forbidden(&run, role, named);
    }
    let repo = repo_with(Some("codex"));
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs"])
        .script(json!({"steps": [{"role": "adversary", "tools": [
            {"name": "shell", "input": {"command": "/bin/bash -lc 'wc -l src/lib.rs'"}}
        ]}, a_finding_to_judge()]}))
        .run();
    run.assert_code(0);
    let d = &dispatches(&run, "adversary")[0];
    assert!(d["gates"].get("forbidden_tool").is_none(), "{d}");
}

/// Gemini stream-json: a shell command, a web fetch and a sub-agent each abort.
#[test]
fn gemini_forbidden_tools_abort() {
    for (role, name, input) in [
        (
            "adversary",
            "run_shell_command",
            json!({"command": "cat src/lib.rs"}),
        ),
        (
            "enthusiast",
            "web_fetch",
            json!({"prompt": "http://127.0.0.1:9/"}),
        ),
        (
            "enthusiast",
            "codebase_investigator",
            json!({"objective": "x"}),
        ),
    ] {
        let repo = repo_with(Some("gemini"));
        let run = repo
            .arev()
            .args(&["run", "src/lib.rs"])
            .script(json!({"steps": [{"role": role, "tools": [{"name": name, "input": input}]}, a_finding_to_judge()]}))
            .run();
        assert_forbidden(&run, role, name);
    }
}

/// Output beyond `review.max_output_bytes` loses the result event: the dispatch failure
/// names the cap, not a missing result.
#[test]
fn output_cap_is_named() {
    let repo = TestRepo::new();
    repo.write("arev.toml", "[review]\nmax_output_bytes = 65536\n");
    repo.commit("config");
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs"])
        .script(json!({"steps": [{"role": "enthusiast", "flood_bytes": 200000}]}))
        .run();
    run.assert_code(3);
    let meta = run.meta();
    assert_eq!(meta["abort_reason"], "agent_dispatch_unavailable");
    let detail = meta["abort_detail"].as_str().unwrap();
    assert!(
        detail.contains("exceeded the 64 KiB output cap (`review.max_output_bytes`)"),
        "{detail}"
    );
    assert!(!detail.contains("without a result"), "{detail}");
    let ds = dispatches(&run, "enthusiast");
    let capped: Vec<&str> = ds
        .iter()
        .filter(|d| {
            d["outcome"]["stdout_truncated"] == true
                && d["gates"]["authenticity"]
                    .as_str()
                    .is_some_and(|a| a.contains("64 KiB output cap"))
        })
        .map(|d| d["label"].as_str().unwrap())
        .collect();
    assert!(
        capped.contains(&"enthusiast-p1") && capped.contains(&"enthusiast-p1-retry"),
        "the first pass hit the cap twice (retried once): {capped:?}"
    );
    assert!(run.stderr.contains("64 KiB output cap"), "{}", run.stderr);
}
