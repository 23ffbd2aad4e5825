//! Tests of the `claude` backend: its argv and its decoder.

use super::*;
use crate::backends::{parse_events, BackendKind, DispatchRequest, EventFormat, TierModels};
use crate::records::Usage;
use crate::records::{Role, Tier};
use std::path::PathBuf;
use std::time::Duration;

const INIT: &str = r#"{"type":"system","subtype":"init","cwd":"/repo","session_id":"5f0c","tools":["Read","Grep","Glob"],"mcp_servers":[],"model":"claude-opus-5-5","permissionMode":"dontAsk","slash_commands":[],"agents":[],"skills":[],"plugins":[],"apiKeySource":"ANTHROPIC_API_KEY","claude_code_version":"2.1.330","output_style":"default","uuid":"u1"}"#;
const READ: &str = r#"{"type":"assistant","message":{"id":"msg_01","type":"message","role":"assistant","model":"claude-opus-5-5","content":[{"type":"tool_use","id":"toolu_01A","name":"Read","input":{"file_path":"/repo/src/lib.rs"}}],"stop_reason":null,"usage":{"input_tokens":10,"output_tokens":5}},"parent_tool_use_id":null,"session_id":"5f0c","uuid":"u2"}"#;
const TEXT: &str = r#"{"type":"assistant","message":{"id":"msg_01","type":"message","role":"assistant","model":"claude-opus-5-5","content":[{"type":"text","text":"Reading the target."}],"stop_reason":null},"parent_tool_use_id":null,"session_id":"5f0c","uuid":"u3"}"#;
const TOOL_RESULT: &str = r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01A","content":"1\tfn main() {}"}]},"parent_tool_use_id":null,"tool_use_result":{"type":"text","file":{"filePath":"/repo/src/lib.rs","content":"fn main() {}","numLines":1,"startLine":1,"totalLines":1}},"tool_result_meta":[{"id":"toolu_01A","permission_decision":{"decision":"accept","source":"config","reason_type":"rule"}}],"session_id":"5f0c"}"#;
const SUB_GREP: &str = r#"{"type":"assistant","message":{"id":"msg_02","type":"message","role":"assistant","content":[{"type":"tool_use","id":"toolu_02B","name":"Grep","input":{"pattern":"unsafe","path":"/repo/src","output_mode":"content","-n":true}},{"type":"tool_use","id":"toolu_01A","name":"Read","input":{"file_path":"/repo/src/lib.rs"}}]},"parent_tool_use_id":"toolu_00X","agent_id":"a1","session_id":"5f0c"}"#;
const RESULT0: &str = r#"{"type":"result","subtype":"success","is_error":false,"result":"first","stop_reason":"end_turn","terminal_reason":"completed","num_turns":2,"duration_ms":1200,"session_id":"5f0c","total_cost_usd":0.0032,"usage":{"input_tokens":400,"output_tokens":80,"cache_creation_input_tokens":0,"cache_read_input_tokens":12,"server_tool_use":{"web_search_requests":0},"service_tier":"standard"},"modelUsage":{},"permission_denials":[],"result_index":0,"uuid":"r0"}"#;
const RESULT1: &str = r#"{"type":"result","subtype":"success","is_error":false,"result":"{\"findings\":[]}","num_turns":5,"session_id":"5f0c","total_cost_usd":0.0071,"usage":{"input_tokens":900,"output_tokens":120},"permission_denials":[{"tool_name":"Bash","tool_use_id":"toolu_09","tool_input":{"command":"touch x"}}],"result_index":1,"uuid":"r1"}"#;

fn lines(ls: &[&str]) -> Vec<u8> {
    let mut s = ls.join("\n");
    s.push('\n');
    s.into_bytes()
}

#[test]
fn parses_a_normal_run() {
    let out = lines(&[INIT, TEXT, READ, TOOL_RESULT, RESULT0]);
    let (tools, result, bad) = parse_events(EventFormat::Claude, &out);
    assert_eq!(bad, 0);
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0].id, "toolu_01A");
    assert_eq!(tools[0].name, "Read");
    assert_eq!(tools[0].input["file_path"], "/repo/src/lib.rs");
    let r = result.unwrap();
    assert!(!r.is_error);
    assert_eq!(r.subtype, "success");
    assert_eq!(r.text.as_deref(), Some("first"));
    assert_eq!(r.usage.input_tokens, 400);
    assert_eq!(r.usage.cache_read_input_tokens, 12);
    assert_eq!(r.num_turns, Some(2));
    assert!((r.total_cost_usd - 0.0032).abs() < 1e-12);
}

#[test]
fn last_result_wins_and_missing_usage_fields_are_zero() {
    let out = lines(&[INIT, READ, RESULT0, RESULT1]);
    let (_, result, _) = parse_events(EventFormat::Claude, &out);
    let r = result.unwrap();
    assert_eq!(r.text.as_deref(), Some("{\"findings\":[]}"));
    assert_eq!(r.num_turns, Some(5));
    assert_eq!(r.usage.output_tokens, 120);
    assert_eq!(r.usage.cache_creation_input_tokens, 0);
    assert_eq!(r.permission_denials.len(), 1);
    assert_eq!(r.permission_denials[0]["tool_name"], "Bash");
}

#[test]
fn duplicate_tool_ids_are_deduplicated_in_first_seen_order() {
    let out = lines(&[INIT, READ, READ, SUB_GREP, RESULT0]);
    let (tools, _, _) = parse_events(EventFormat::Claude, &out);
    let ids: Vec<&str> = tools.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(ids, ["toolu_01A", "toolu_02B"]);
    assert_eq!(tools[1].name, "Grep");
    assert_eq!(tools[1].input["pattern"], "unsafe");
}

#[test]
fn api_error_with_success_subtype_is_an_error() {
    let api_err = r#"{"type":"result","subtype":"success","is_error":true,"terminal_reason":"api_error","api_error_status":500,"api_error_type":"api_error","result":"API Error: 500 fake 500.","session_id":"5f0c","total_cost_usd":0,"usage":{"input_tokens":0,"output_tokens":0},"permission_denials":[]}"#;
    let (_, result, _) = parse_events(EventFormat::Claude, &lines(&[INIT, api_err]));
    let r = result.unwrap();
    assert!(r.is_error);
    assert_eq!(r.subtype, "success");
    assert_eq!(r.text.as_deref(), Some("API Error: 500 fake 500."));
}

#[test]
fn max_turns_result_without_text() {
    let mt = r#"{"type":"result","subtype":"error_max_turns","is_error":true,"terminal_reason":"max_turns","errors":["Reached maximum number of turns (1)"],"result":null,"session_id":"5f0c","total_cost_usd":0.001}"#;
    let (_, result, _) = parse_events(EventFormat::Claude, &lines(&[INIT, mt]));
    let r = result.unwrap();
    assert!(r.is_error);
    assert_eq!(r.subtype, "error_max_turns");
    assert_eq!(r.text, None);
    assert_eq!(r.usage, Usage::default());
    assert!(r.permission_denials.is_empty());
    assert_eq!(r.num_turns, None);
}

#[test]
fn truncated_last_line_garbage_and_blank_lines() {
    let mut out = lines(&[INIT, "", "not json at all", "  ", READ, "[1,2]", "42"]);
    out.extend_from_slice(&RESULT1.as_bytes()[..RESULT1.len() / 2]);
    let (tools, result, bad) = parse_events(EventFormat::Claude, &out);
    assert_eq!(tools.len(), 1);
    assert!(result.is_none(), "a truncated result line is not a result");
    assert_eq!(bad, 4);
}

#[test]
fn unknown_events_and_crlf_are_tolerated() {
    let odd = r#"{"type":"stream_event","event":{"type":"message_start"},"session_id":"5f0c"}"#;
    let weird_assistant = r#"{"type":"assistant","message":{"content":"plain string"}}"#;
    let no_id = r#"{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Read","input":{}}]}}"#;
    let s = format!("{INIT}\r\n{odd}\r\n{weird_assistant}\n{no_id}\n{RESULT0}\r\n");
    let (tools, result, bad) = parse_events(EventFormat::Claude, s.as_bytes());
    assert!(tools.is_empty());
    assert_eq!(bad, 0);
    assert_eq!(result.unwrap().text.as_deref(), Some("first"));
}

#[test]
fn wrong_typed_fields_read_as_absent_and_the_event_still_counts() {
    let wrong = r#"{"type":"result","subtype":"success","is_error":"no","result":{"findings":[]},"num_turns":"2","usage":[1,2],"total_cost_usd":"0.1","permission_denials":{}}"#;
    let (_, result, bad) = parse_events(EventFormat::Claude, &lines(&[wrong]));
    let r = result.unwrap();
    assert_eq!(bad, 0);
    assert_eq!(r.text, None, "an object is no result text");
    assert!(
        !r.is_error,
        "a string is_error is absent: the success subtype decides"
    );
    assert_eq!(r.num_turns, None);
    assert_eq!(r.usage, Usage::default());
    assert_eq!(r.total_cost_usd, 0.0);
    assert!(r.permission_denials.is_empty());
    let odd_usage = r#"{"type":"result","subtype":"x","usage":{"input_tokens":-1,"output_tokens":2.5,"cache_read_input_tokens":7,"cache_read_input_tokens":"8"},"total_cost_usd":3}"#;
    let r = parse_events(EventFormat::Claude, &lines(&[odd_usage]))
        .1
        .unwrap();
    assert!(r.is_error, "no is_error and a subtype other than success");
    assert_eq!(r.usage, Usage::default(), "the last duplicate key wins");
    assert_eq!(r.total_cost_usd, 3.0, "an integer cost");
}

#[test]
fn the_answer_text_block_is_read_past_escapes_and_all() {
    let text = r#"{"type":"assistant","message":{"content":[{"type":"text","text":"{\"findings\":[{\"d\":\"a\\\"b \\u00e9 \ud83d\ude00 \\n\"}]}\n\t"},{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"a\"b.rs","n":[1,{"x":null}]}}]}}"#;
    let (tools, _, bad) = parse_events(EventFormat::Claude, &lines(&[text]));
    assert_eq!(bad, 0);
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0].input["file_path"], "a\"b.rs", "verbatim input");
    assert_eq!(tools[0].input["n"][1]["x"], Value::Null);
    assert_eq!(tools[0].access.read, ["a\"b.rs"]);
    // A lone surrogate cannot be read into a string: the line is malformed, as before.
    let lone = r#"{"type":"assistant","message":{"content":[{"type":"text","text":"\ud800"},{"type":"tool_use","id":"t2","name":"Read","input":{}}]}}"#;
    let (tools, _, bad) = parse_events(EventFormat::Claude, &lines(&[lone]));
    assert!(tools.is_empty());
    assert_eq!(bad, 1);
    let out_of_range = r#"{"type":"system","n":1e400}"#;
    assert_eq!(
        parse_events(EventFormat::Claude, &lines(&[out_of_range])).2,
        1
    );
}

#[test]
fn tags_numeric_late_duplicated_or_truncated() {
    let numeric = r#"{"type":1,"result":"x"}"#;
    let (_, result, bad) = parse_events(EventFormat::Claude, &lines(&[numeric]));
    assert!(result.is_none(), "a numeric type is no result");
    assert_eq!(bad, 0, "and no malformed line either");
    let late = r#"{"result":"late","is_error":false,"num_turns":3,"type":"result"}"#;
    let r = parse_events(EventFormat::Claude, &lines(&[late]))
        .1
        .unwrap();
    assert_eq!(
        r.text.as_deref(),
        Some("late"),
        "fields before the type count"
    );
    assert_eq!(r.num_turns, Some(3));
    // A map keeps the last of duplicate keys: the event is a result.
    let dup = r#"{"type":"assistant","type":"result","result":"dup"}"#;
    let r = parse_events(EventFormat::Claude, &lines(&[dup])).1.unwrap();
    assert_eq!(r.text.as_deref(), Some("dup"));
    let block = r#"{"type":"assistant","message":{"content":[{"id":"t3","type":"text","name":"Read","type":"tool_use","input":{}}]}}"#;
    assert_eq!(
        parse_events(EventFormat::Claude, &lines(&[block])).0[0].id,
        "t3"
    );
    let mut out = lines(&[late]);
    out.extend_from_slice(br#"{"type":"result","result":"cut"#);
    let (_, result, bad) = parse_events(EventFormat::Claude, &out);
    assert_eq!(result.unwrap().text.as_deref(), Some("late"));
    assert_eq!(bad, 1, "a truncated last line is malformed");
}

#[test]
fn argv_is_read_only_and_prompt_free() {
    let agent = AgentSpec {
        name: "claude".into(),
        backend: BackendKind::Claude,
        format: EventFormat::Claude,
        binary: PathBuf::from("/usr/bin/claude"),
        extra_args: vec!["--effort".into(), "high".into()],
        models: TierModels::default(),
        max_turns: 8,
        timeout: None,
        pass_env: vec![],
        fallback_model: None,
        base_url: None,
        api_key_env: None,
    };
    let req = DispatchRequest {
        role: Role::Adversary,
        label: "adversary".into(),
        prompt: "THE PROMPT".into(),
        system_prompt: "You are the Adversary.".into(),
        tier: Tier::Sonnet,
        cwd: PathBuf::from("/repo"),
        read_dirs: vec![PathBuf::from("/repo"), PathBuf::from("/runs/r (1)/target")],
        hidden: vec![],
        out_dir: PathBuf::from("/tmp/x"),
        timeout: Duration::from_secs(1),
        grace: Duration::from_secs(1),
        output_cap: 1024,
        max_budget_usd: None,
        price: None,
        search: true,
    };
    let args = claude_args(&agent, &req);
    let mut deny = vec![];
    for dir in ["/repo", "/runs/r \\(1\\)/target"] {
        for tool in ["Read", "Grep", "Glob", "Edit"] {
            deny.push(format!("{tool}(/{dir}/**/.git)"));
            deny.push(format!("{tool}(/{dir}/**/.git/**)"));
        }
    }
    assert_eq!(deny[1], "Read(//repo/**/.git/**)");
    let settings = serde_json::json!({
        "disableAllHooks": true,
        "permissions": {"allow": [
            "Read(//repo/**)", "Grep(//repo/**)", "Glob(//repo/**)",
            "Read(//runs/r \\(1\\)/target/**)", "Grep(//runs/r \\(1\\)/target/**)",
            "Glob(//runs/r \\(1\\)/target/**)",
        ], "deny": deny},
    })
    .to_string();
    let expected: Vec<&str> = vec![
        "-p",
        "--output-format",
        "stream-json",
        "--verbose",
        "--tools",
        "Read,Grep",
        "--permission-mode",
        "dontAsk",
        "--strict-mcp-config",
        "--setting-sources",
        "user",
        "--no-session-persistence",
        "--max-turns",
        "8",
        "--settings",
        &settings,
        "--model=sonnet",
        "--system-prompt=You are the Adversary.",
        "--effort",
        "high",
    ];
    assert_eq!(args, expected);
    assert!(!args.iter().any(|a| a.contains("THE PROMPT")));
    assert!(!args
        .iter()
        .any(|a| a == "acceptEdits" || a == "bypassPermissions" || a.starts_with("--dangerously")));
    // The project's settings never load; no bare (unscoped) allow rule exists.
    assert!(!args
        .iter()
        .any(|a| a.contains("project") || a == "--allowedTools"));
}

#[test]
fn only_the_fixer_may_edit_the_prover_only_write_and_nobody_bypasses_permissions() {
    let agent = AgentSpec {
        name: "claude".into(),
        backend: BackendKind::Claude,
        binary: PathBuf::from("/usr/bin/claude"),
        extra_args: vec![],
        models: TierModels::default(),
        max_turns: 8,
        format: EventFormat::Claude,
        timeout: None,
        pass_env: vec![],
        fallback_model: None,
        base_url: None,
        api_key_env: None,
    };
    for role in [
        Role::Enthusiast,
        Role::Adversary,
        Role::Judge,
        Role::Fixer,
        Role::Prover,
    ] {
        let req = DispatchRequest {
            role,
            label: role.as_str().into(),
            prompt: "P".into(),
            system_prompt: "S".into(),
            tier: Tier::Opus,
            cwd: PathBuf::from("/repo/.arev/worktrees/x"),
            read_dirs: vec![
                PathBuf::from("/repo/.arev/worktrees/x"),
                PathBuf::from("/repo/.arev/runs/r/target"),
            ],
            hidden: vec![],
            out_dir: PathBuf::from("/tmp/x"),
            timeout: Duration::from_secs(1),
            grace: Duration::from_secs(1),
            output_cap: 1024,
            max_budget_usd: None,
            price: None,
            search: true,
        };
        let args = claude_args(&agent, &req);
        let after = |flag: &str| {
            let i = args.iter().position(|a| a == flag).unwrap();
            args[i + 1].as_str()
        };
        let want = match role {
            Role::Fixer => "Read,Grep,Glob,Edit,Write",
            Role::Prover => "Read,Grep,Write",
            _ => "Read,Grep",
        };
        assert_eq!(after("--tools"), want, "{role}");
        let one_file = claude_args(
            &agent,
            &DispatchRequest {
                search: false,
                ..req.clone()
            },
        );
        let i = one_file.iter().position(|a| a == "--tools").unwrap();
        let want = match role {
            Role::Fixer => "Read,Grep,Glob,Edit,Write",
            Role::Prover => "Read,Grep,Write",
            _ => "Read",
        };
        assert_eq!(one_file[i + 1], want, "{role}: one file");
        let settings: serde_json::Value = serde_json::from_str(after("--settings")).unwrap();
        assert_eq!(settings["disableAllHooks"], true);
        let allow: Vec<&str> = settings["permissions"]["allow"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|v| v.as_str())
            .collect();
        // Every rule is scoped (a bare `Read` or `Edit` rule would allow any path); only
        // the Fixer and the Prover may write, and only below their cwd (the worktree;
        // `Edit(…)` is the rule that allows Write, the Prover has no Edit tool).
        assert!(allow.iter().all(|r| r.contains("(//")), "{role}: {allow:?}");
        assert!(allow.contains(&"Read(//repo/.arev/runs/r/target/**)"));
        let edits: Vec<&&str> = allow.iter().filter(|r| r.starts_with("Edit")).collect();
        if matches!(role, Role::Fixer | Role::Prover) {
            assert_eq!(edits, vec![&"Edit(//repo/.arev/worktrees/x/**)"]);
        } else {
            assert!(edits.is_empty(), "{role}");
        }
        assert_eq!(after("--permission-mode"), "dontAsk", "{role}");
        assert!(
            !args.iter().any(|a| a.contains("acceptEdits")
                || a.contains("bypassPermissions")
                || a.starts_with("--dangerously")
                || a.starts_with("--allow-dangerously")),
            "{role}: {args:?}"
        );
    }
}

/// Everything in the repository outside the context scope is denied by the CLI's own rules
/// (deny beats allow); a layer too large for one argument goes to a file.
#[test]
fn paths_outside_the_context_scope_are_denied_and_a_large_layer_is_a_file() {
    let agent = AgentSpec {
        name: "claude".into(),
        binary: PathBuf::from("claude"),
        backend: crate::backends::BackendKind::Claude,
        format: crate::backends::EventFormat::Claude,
        extra_args: vec![],
        models: TierModels::default(),
        max_turns: 8,
        timeout: None,
        pass_env: vec![],
        fallback_model: None,
        base_url: None,
        api_key_env: None,
    };
    let mut req = DispatchRequest {
        role: Role::Enthusiast,
        label: "enthusiast-p1".into(),
        prompt: "P".into(),
        system_prompt: "S".into(),
        tier: Tier::Sonnet,
        cwd: PathBuf::from("/repo"),
        read_dirs: vec![PathBuf::from("/repo")],
        hidden: vec![PathBuf::from("/repo/.env"), PathBuf::from("/repo/build")],
        out_dir: PathBuf::from("/runs/r/agents/r1/enthusiast-p1"),
        timeout: Duration::from_secs(1),
        grace: Duration::from_secs(1),
        output_cap: 1024,
        max_budget_usd: None,
        price: None,
        search: true,
    };
    let settings: serde_json::Value = serde_json::from_str(&session_settings(&req)).unwrap();
    let deny: Vec<&str> = settings["permissions"]["deny"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    for rule in [
        "Read(//repo/.env)",
        "Read(//repo/.env/**)",
        "Grep(//repo/build/**)",
        "Glob(//repo/build)",
    ] {
        assert!(deny.contains(&rule), "{rule} not in {deny:?}");
    }
    let inv = Claude.invocation(&agent, &req);
    assert!(inv.files.is_empty());
    req.hidden = (0..2000)
        .map(|i| PathBuf::from(format!("/repo/untracked-{i}.txt")))
        .collect();
    let inv = Claude.invocation(&agent, &req);
    let file = PathBuf::from("/runs/r/agents/r1/enthusiast-p1/claude-settings.json");
    assert_eq!(inv.files.len(), 1);
    assert_eq!(inv.files[0].0, file);
    let i = inv.args.iter().position(|a| a == "--settings").unwrap();
    assert_eq!(inv.args[i + 1], file.display().to_string());
    let big: serde_json::Value = serde_json::from_slice(&inv.files[0].1).unwrap();
    assert!(big["permissions"]["deny"]
        .to_string()
        .contains("untracked-1999.txt"));
}

/// A temp repository holding an ignored-style `.env` and a file named `.env\xff` (not
/// UTF-8), and a reviewer's request with `hidden` and its agent.
fn unnamed_case(hidden_raw: bool) -> (tempfile::TempDir, AgentSpec, DispatchRequest, PathBuf) {
    use std::os::unix::ffi::OsStrExt;
    let d = tempfile::tempdir().unwrap();
    let repo = d.path().canonicalize().unwrap().join("repo");
    let out = repo.join(".arev/runs/r/agents/r1/enthusiast");
    std::fs::create_dir_all(&out).unwrap();
    let raw = repo.join(std::ffi::OsStr::from_bytes(b".env\xff"));
    std::fs::write(&raw, "SECRET=1\n").unwrap();
    std::fs::write(repo.join(".env"), "SECRET=2\n").unwrap();
    let agent = AgentSpec {
        name: "claude".into(),
        binary: PathBuf::from("/bin/true"),
        backend: crate::backends::BackendKind::Claude,
        format: crate::backends::EventFormat::Claude,
        extra_args: vec![],
        models: TierModels::default(),
        max_turns: 8,
        timeout: None,
        pass_env: vec![],
        fallback_model: None,
        base_url: None,
        api_key_env: None,
    };
    let mut hidden = vec![repo.join(".git"), repo.join(".env")];
    if hidden_raw {
        hidden.push(raw.clone());
    }
    let req = DispatchRequest {
        role: Role::Enthusiast,
        label: "enthusiast".into(),
        prompt: "P".into(),
        system_prompt: "S".into(),
        tier: Tier::Sonnet,
        cwd: repo.clone(),
        read_dirs: vec![repo],
        hidden,
        out_dir: out,
        timeout: Duration::from_secs(1),
        grace: Duration::from_secs(1),
        output_cap: 1024,
        max_budget_usd: None,
        price: None,
        search: true,
    };
    (d, agent, req, raw)
}

/// While every hidden path has a rule, Claude Code runs as it is: no view.
#[test]
fn claude_runs_without_a_view_while_every_hidden_path_has_a_rule() {
    let (_d, agent, req, _) = unnamed_case(false);
    assert!(Claude.wrap(&agent, &req).unwrap().is_none());
}

/// A hidden path whose name is not UTF-8 gets no (lossy) rule: the dispatch runs in the
/// scope view, where it is masked by an empty read-only file.
#[test]
fn a_hidden_path_not_utf8_puts_claude_in_the_scope_view_that_masks_it() {
    let (_d, agent, req, raw) = unnamed_case(true);
    let settings = session_settings(&req);
    assert!(!settings.contains('\u{fffd}'), "a lossy rule: {settings}");
    let w = Claude.wrap(&agent, &req).unwrap().expect("a view");
    assert_eq!(Some(w.program.clone()), crate::backends::view::find_bwrap());
    let i = w
        .args
        .windows(3)
        .position(|a| a[0] == "--ro-bind" && a[2] == raw.as_os_str())
        .unwrap_or_else(|| panic!("{raw:?} not masked: {:?}", w.args));
    assert_eq!(
        std::path::Path::new(&w.args[i + 1]).file_name(),
        Some(std::ffi::OsStr::new("view-empty"))
    );
}
