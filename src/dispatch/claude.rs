//! The `claude` backend: read-only argv (docs/architecture.md §16.1) and the
//! stream-json parser.

use super::events::{lax, lax_object, lax_tagged_list, EventLines};
use super::{AgentSpec, DispatchRequest, FileAccess, ResultEvent, ToolUse, Usage};
use crate::findings::Role;
use serde::Deserialize;
use serde_json::Value;
use std::collections::HashSet;
use std::path::PathBuf;

/// The only tools a reviewer of several files gets: Read and Grep (no Glob: the prompt
/// names every file, and each tool's schema is resent with every request).
const READ_ONLY_TOOLS: &str = "Read,Grep";
/// A reviewer of one file Reads it whole: Read is all it uses.
const READ_TOOL: &str = "Read";
/// The Fixer's tools (iterate mode; cwd = the isolated worktree): read plus Edit and Write,
/// still under `dontAsk`, so anything else (Bash, WebFetch, …) is denied.
const FIXER_TOOLS: &str = "Read,Grep,Glob,Edit,Write";

/// A path as a literal permission-rule pattern (gitignore syntax): glob characters escaped.
fn rule_path(dir: &std::path::Path) -> String {
    let mut out = String::new();
    for c in dir.display().to_string().trim_end_matches('/').chars() {
        if matches!(
            c,
            '\\' | '*' | '?' | '[' | ']' | '{' | '}' | '(' | ')' | '!'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The session's own settings layer (`--settings`): no hooks at all, and allow rules that
/// confine Read/Grep/Glob to `req.read_dirs` (and, for the Fixer, edits to its cwd).
///
/// Verified against Claude Code 2.1.330 (tests/integration/trust.rs): under `dontAsk` a read
/// outside the working directory is denied unless a rule allows it, a bare `Read` rule allows
/// ANY path (which is why there is none), and symlinks are resolved before the rules apply,
/// so an in-repo link to `/etc/hostname` is denied too. `//` starts an absolute path in a
/// rule. An `Edit(…)` rule also covers Write (a `Write(…)` rule alone does not allow it
/// outside the cwd). The rules go in `--settings` JSON rather than `--allowedTools`, whose
/// value is split at commas and spaces (a path containing them would break the rule).
///
/// VCS metadata is denied whatever allows it (deny rules beat allow rules, in every settings
/// layer): `.git` at any depth under each read directory and the working directory — the
/// repository's `.git/` (where `actions/checkout` leaves the job's token in `.git/config`),
/// and the `.git` files of worktrees and submodules — for Read, Grep, Glob and Edit.
fn session_settings(req: &DispatchRequest) -> String {
    let mut allow = vec![];
    for dir in &req.read_dirs {
        let p = rule_path(dir);
        for tool in ["Read", "Grep", "Glob"] {
            allow.push(format!("{tool}(/{p}/**)"));
        }
    }
    if req.role == crate::findings::Role::Fixer {
        allow.push(format!("Edit(/{}/**)", rule_path(&req.cwd)));
    }
    let mut deny = vec![];
    let mut dirs: Vec<&std::path::Path> = req.read_dirs.iter().map(PathBuf::as_path).collect();
    if !dirs.contains(&req.cwd.as_path()) {
        dirs.push(&req.cwd);
    }
    for dir in dirs {
        let p = rule_path(dir);
        for tool in ["Read", "Grep", "Glob", "Edit"] {
            deny.push(format!("{tool}(/{p}/**/.git)"));
            deny.push(format!("{tool}(/{p}/**/.git/**)"));
        }
    }
    serde_json::json!({
        "disableAllHooks": true,
        "permissions": {"allow": allow, "deny": deny},
    })
    .to_string()
}

/// The argv (without the program) for a read-only Claude Code worker; the prompt goes on stdin.
///
/// Nothing of the reviewed repository configures the session: `--setting-sources user`
/// loads the user's own settings (trusted: authentication, `env`) but never the project's
/// `.claude/settings.json` / `settings.local.json` (hooks, `apiKeyHelper`, permission rules);
/// `--strict-mcp-config` ignores `.mcp.json`; the `--settings` layer turns every hook off and
/// scopes the allow rules (see [`session_settings`]). The Fixer alone gets Edit and Write;
/// never `acceptEdits`, `bypassPermissions` or `--dangerously-*`, for any role (and the
/// config's argv floor keeps `extra_args` from adding them).
pub fn claude_args(agent: &AgentSpec, req: &DispatchRequest) -> Vec<String> {
    let tools = match req.role {
        crate::findings::Role::Fixer => FIXER_TOOLS,
        _ if req.search => READ_ONLY_TOOLS,
        _ => READ_TOOL,
    };
    let mut args: Vec<String> = [
        "-p",
        "--output-format",
        "stream-json",
        "--verbose",
        "--tools",
        tools,
        "--permission-mode",
        "dontAsk",
        "--strict-mcp-config",
        "--setting-sources",
        "user",
        "--no-session-persistence",
        "--max-turns",
    ]
    .iter()
    .map(|s| (*s).to_string())
    .collect();
    args.push(agent.max_turns.to_string());
    args.push("--settings".into());
    args.push(session_settings(req));
    args.push("--model".into());
    args.push(agent.models.get(req.tier).to_string());
    if let Some(m) = &agent.fallback_model {
        args.push("--fallback-model".into());
        args.push(m.clone());
    }
    // The role body REPLACES Claude Code's own system prompt (~1,750 tokens on every
    // request, most of it about tools and memory files a reviewer does not have): measured
    // with benches/cost.rs.
    args.push("--system-prompt".into());
    args.push(req.system_prompt.clone());
    if let Some(usd) = req.max_budget_usd {
        // The CLI stops this session once it has spent its share of the run's budget.
        args.push("--max-budget-usd".into());
        args.push(format!("{usd:.6}"));
    }
    args.extend(agent.extra_args.iter().cloned());
    args
}

/// The environment a Claude Code reviewer runs with on top of the allowlisted one: no
/// `CLAUDE.md` (the user's `~/.claude/CLAUDE.md`, nor the reviewed repository's) and no
/// auto-memory reach the session (SPEC §19.1; verified with the real CLI in
/// tests/integration/real_claude.rs).
pub fn claude_env() -> Vec<(String, String)> {
    [
        ("CLAUDE_CODE_DISABLE_CLAUDE_MDS", "1"),
        ("CLAUDE_CODE_DISABLE_AUTO_MEMORY", "1"),
    ]
    .iter()
    .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
    .collect()
}

/// Claude Code stream-json events arev reads; every other `type` (`system`, `user`,
/// `stream_event`, …) is `Other`.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ClaudeEvent {
    Assistant {
        #[serde(default, deserialize_with = "lax_object")]
        message: Option<AssistantMessage>,
    },
    Result(ClaudeResult),
    #[serde(other)]
    Other,
}

#[derive(Debug, Deserialize)]
struct AssistantMessage {
    #[serde(default, deserialize_with = "lax_tagged_list")]
    content: Vec<ContentBlock>,
}

/// A block of an assistant message; text and thinking blocks are `Other`.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ContentBlock {
    ToolUse {
        #[serde(default, deserialize_with = "lax")]
        id: Option<String>,
        #[serde(default, deserialize_with = "lax")]
        name: Option<String>,
        /// Verbatim.
        #[serde(default)]
        input: Value,
    },
    #[serde(other)]
    Other,
}

#[derive(Debug, Deserialize)]
struct ClaudeResult {
    #[serde(default, deserialize_with = "lax")]
    subtype: Option<String>,
    #[serde(default, deserialize_with = "lax")]
    is_error: Option<bool>,
    #[serde(default, deserialize_with = "lax")]
    result: Option<String>,
    #[serde(default, deserialize_with = "lax")]
    total_cost_usd: Option<f64>,
    #[serde(default, deserialize_with = "lax_object")]
    usage: Option<ClaudeUsage>,
    #[serde(default, deserialize_with = "lax")]
    permission_denials: Option<Vec<Value>>,
    #[serde(default, deserialize_with = "lax")]
    num_turns: Option<u64>,
}

/// Token counts of a result or a message; a missing or unreadable one is 0 (also read by
/// `dispatch::usage` while the stream arrives).
#[derive(Debug, Default, Deserialize)]
pub(super) struct ClaudeUsage {
    #[serde(default, deserialize_with = "lax")]
    input_tokens: Option<u64>,
    #[serde(default, deserialize_with = "lax")]
    output_tokens: Option<u64>,
    #[serde(default, deserialize_with = "lax")]
    cache_creation_input_tokens: Option<u64>,
    #[serde(default, deserialize_with = "lax")]
    cache_read_input_tokens: Option<u64>,
}

impl From<ClaudeUsage> for Usage {
    fn from(u: ClaudeUsage) -> Self {
        Self {
            input_tokens: u.input_tokens.unwrap_or(0),
            output_tokens: u.output_tokens.unwrap_or(0),
            cache_creation_input_tokens: u.cache_creation_input_tokens.unwrap_or(0),
            cache_read_input_tokens: u.cache_read_input_tokens.unwrap_or(0),
        }
    }
}

/// Parsed stream-json: tool uses (dedup by id), the last result, count of non-JSON lines.
///
/// Lines are read by `EventLines` (blank lines skipped, non-objects counted as malformed,
/// unknown event types and fields ignored). Tool uses come from every `assistant` event's
/// `message.content[]` `tool_use` blocks that have a string id (subagent traffic included),
/// first-seen order.
pub fn parse_stream_json(stdout: &[u8]) -> (Vec<ToolUse>, Option<ResultEvent>, u64) {
    let mut tool_uses = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    let mut result = None;
    let mut events = EventLines::<ClaudeEvent>::new(stdout);
    for event in events.by_ref() {
        match event {
            ClaudeEvent::Assistant { message } => {
                let blocks = message.map(|m| m.content).unwrap_or_default();
                for block in blocks {
                    let ContentBlock::ToolUse { id, name, input } = block else {
                        continue;
                    };
                    let Some(id) = id else { continue };
                    if !seen.insert(id.clone()) {
                        continue;
                    }
                    let name = name.unwrap_or_default();
                    tool_uses.push(ToolUse {
                        id,
                        access: claude_access(&name, &input),
                        name,
                        input,
                    });
                }
            }
            ClaudeEvent::Result(r) => result = Some(to_result(r)),
            ClaudeEvent::Other => {}
        }
    }
    (tool_uses, result, events.malformed())
}

/// The file access of a Claude Code tool use: `Read` reads `file_path`; `Grep` and `Glob`
/// search `path` (the working directory without one); `Edit`/`Write` (the Fixer's) are
/// checked by the Fixer's write gate instead. Which tools a role may call at all is
/// `claude_permits`.
pub fn claude_access(name: &str, input: &Value) -> FileAccess {
    let arg = |k: &str| {
        input
            .get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    match name {
        "Read" => FileAccess::read(arg("file_path")),
        "Grep" | "Glob" => FileAccess::search(arg("path")),
        _ => FileAccess::none(),
    }
}

/// Whether `role` may call the Claude Code tool `name`: a reviewer only `Read`, `Grep` and
/// `Glob` (all it is given); the Fixer also its `Edit` and `Write`.
pub fn claude_permits(role: Role, name: &str) -> bool {
    match name {
        "Read" | "Grep" | "Glob" => true,
        "Edit" | "Write" => role == Role::Fixer,
        _ => false,
    }
}

fn to_result(r: ClaudeResult) -> ResultEvent {
    let subtype = r.subtype.unwrap_or_default();
    // Key on `is_error` (an API error reports subtype "success"); if the field is missing,
    // only an explicit "success" subtype counts as success.
    let is_error = r.is_error.unwrap_or(subtype != "success");
    ResultEvent {
        is_error,
        subtype,
        text: r.result,
        total_cost_usd: r.total_cost_usd.unwrap_or(0.0),
        usage: r.usage.unwrap_or_default().into(),
        permission_denials: r.permission_denials.unwrap_or_default(),
        num_turns: r.num_turns,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dispatch::{BackendKind, TierModels};
    use crate::findings::{Role, Tier};
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
        let (tools, result, bad) = parse_stream_json(&out);
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
        let (_, result, _) = parse_stream_json(&out);
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
        let (tools, _, _) = parse_stream_json(&out);
        let ids: Vec<&str> = tools.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(ids, ["toolu_01A", "toolu_02B"]);
        assert_eq!(tools[1].name, "Grep");
        assert_eq!(tools[1].input["pattern"], "unsafe");
    }

    #[test]
    fn api_error_with_success_subtype_is_an_error() {
        let api_err = r#"{"type":"result","subtype":"success","is_error":true,"terminal_reason":"api_error","api_error_status":500,"api_error_type":"api_error","result":"API Error: 500 fake 500.","session_id":"5f0c","total_cost_usd":0,"usage":{"input_tokens":0,"output_tokens":0},"permission_denials":[]}"#;
        let (_, result, _) = parse_stream_json(&lines(&[INIT, api_err]));
        let r = result.unwrap();
        assert!(r.is_error);
        assert_eq!(r.subtype, "success");
        assert_eq!(r.text.as_deref(), Some("API Error: 500 fake 500."));
    }

    #[test]
    fn max_turns_result_without_text() {
        let mt = r#"{"type":"result","subtype":"error_max_turns","is_error":true,"terminal_reason":"max_turns","errors":["Reached maximum number of turns (1)"],"result":null,"session_id":"5f0c","total_cost_usd":0.001}"#;
        let (_, result, _) = parse_stream_json(&lines(&[INIT, mt]));
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
        let (tools, result, bad) = parse_stream_json(&out);
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
        let (tools, result, bad) = parse_stream_json(s.as_bytes());
        assert!(tools.is_empty());
        assert_eq!(bad, 0);
        assert_eq!(result.unwrap().text.as_deref(), Some("first"));
    }

    #[test]
    fn wrong_typed_fields_read_as_absent_and_the_event_still_counts() {
        let wrong = r#"{"type":"result","subtype":"success","is_error":"no","result":{"findings":[]},"num_turns":"2","usage":[1,2],"total_cost_usd":"0.1","permission_denials":{}}"#;
        let (_, result, bad) = parse_stream_json(&lines(&[wrong]));
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
        let r = parse_stream_json(&lines(&[odd_usage])).1.unwrap();
        assert!(r.is_error, "no is_error and a subtype other than success");
        assert_eq!(r.usage, Usage::default(), "the last duplicate key wins");
        assert_eq!(r.total_cost_usd, 3.0, "an integer cost");
    }

    #[test]
    fn the_answer_text_block_is_read_past_escapes_and_all() {
        let text = r#"{"type":"assistant","message":{"content":[{"type":"text","text":"{\"findings\":[{\"d\":\"a\\\"b \\u00e9 \ud83d\ude00 \\n\"}]}\n\t"},{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"a\"b.rs","n":[1,{"x":null}]}}]}}"#;
        let (tools, _, bad) = parse_stream_json(&lines(&[text]));
        assert_eq!(bad, 0);
        assert_eq!(tools.len(), 1);
        assert_eq!(tools[0].input["file_path"], "a\"b.rs", "verbatim input");
        assert_eq!(tools[0].input["n"][1]["x"], Value::Null);
        assert_eq!(tools[0].access.read, ["a\"b.rs"]);
        // A lone surrogate cannot be read into a string: the line is malformed, as before.
        let lone = r#"{"type":"assistant","message":{"content":[{"type":"text","text":"\ud800"},{"type":"tool_use","id":"t2","name":"Read","input":{}}]}}"#;
        let (tools, _, bad) = parse_stream_json(&lines(&[lone]));
        assert!(tools.is_empty());
        assert_eq!(bad, 1);
        let out_of_range = r#"{"type":"system","n":1e400}"#;
        assert_eq!(parse_stream_json(&lines(&[out_of_range])).2, 1);
    }

    #[test]
    fn tags_numeric_late_duplicated_or_truncated() {
        let numeric = r#"{"type":1,"result":"x"}"#;
        let (_, result, bad) = parse_stream_json(&lines(&[numeric]));
        assert!(result.is_none(), "a numeric type is no result");
        assert_eq!(bad, 0, "and no malformed line either");
        let late = r#"{"result":"late","is_error":false,"num_turns":3,"type":"result"}"#;
        let r = parse_stream_json(&lines(&[late])).1.unwrap();
        assert_eq!(
            r.text.as_deref(),
            Some("late"),
            "fields before the type count"
        );
        assert_eq!(r.num_turns, Some(3));
        // A map keeps the last of duplicate keys: the event is a result.
        let dup = r#"{"type":"assistant","type":"result","result":"dup"}"#;
        let r = parse_stream_json(&lines(&[dup])).1.unwrap();
        assert_eq!(r.text.as_deref(), Some("dup"));
        let block = r#"{"type":"assistant","message":{"content":[{"id":"t3","type":"text","name":"Read","type":"tool_use","input":{}}]}}"#;
        assert_eq!(parse_stream_json(&lines(&[block])).0[0].id, "t3");
        let mut out = lines(&[late]);
        out.extend_from_slice(br#"{"type":"result","result":"cut"#);
        let (_, result, bad) = parse_stream_json(&out);
        assert_eq!(result.unwrap().text.as_deref(), Some("late"));
        assert_eq!(bad, 1, "a truncated last line is malformed");
    }

    #[test]
    fn argv_is_read_only_and_prompt_free() {
        let agent = AgentSpec {
            name: "claude".into(),
            backend: BackendKind::Claude,
            format: crate::dispatch::EventFormat::Claude,
            binary: PathBuf::from("/usr/bin/claude"),
            extra_args: vec!["--effort".into(), "high".into()],
            models: TierModels::default(),
            max_turns: 8,
            timeout: None,
            pass_env: vec![],
            fallback_model: None,
        };
        let req = DispatchRequest {
            role: Role::Adversary,
            label: "adversary".into(),
            prompt: "THE PROMPT".into(),
            system_prompt: "You are the Adversary.".into(),
            tier: Tier::Sonnet,
            cwd: PathBuf::from("/repo"),
            read_dirs: vec![PathBuf::from("/repo"), PathBuf::from("/runs/r (1)/target")],
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
            "--model",
            "sonnet",
            "--system-prompt",
            "You are the Adversary.",
            "--effort",
            "high",
        ];
        assert_eq!(args, expected);
        assert!(!args.iter().any(|a| a.contains("THE PROMPT")));
        assert!(!args.iter().any(|a| a == "acceptEdits"
            || a == "bypassPermissions"
            || a.starts_with("--dangerously")));
        // The project's settings never load; no bare (unscoped) allow rule exists.
        assert!(!args
            .iter()
            .any(|a| a.contains("project") || a == "--allowedTools"));
    }

    #[test]
    fn only_the_fixer_may_edit_and_nobody_bypasses_permissions() {
        let agent = AgentSpec {
            name: "claude".into(),
            backend: BackendKind::Claude,
            binary: PathBuf::from("/usr/bin/claude"),
            extra_args: vec![],
            models: TierModels::default(),
            max_turns: 8,
            format: crate::dispatch::EventFormat::Claude,
            timeout: None,
            pass_env: vec![],
            fallback_model: None,
        };
        for role in [Role::Enthusiast, Role::Adversary, Role::Judge, Role::Fixer] {
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
            let want = if role == Role::Fixer {
                "Read,Grep,Glob,Edit,Write"
            } else {
                "Read,Grep"
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
            let want = if role == Role::Fixer {
                "Read,Grep,Glob,Edit,Write"
            } else {
                "Read"
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
            // the Fixer may edit, and only below its cwd (the worktree).
            assert!(allow.iter().all(|r| r.contains("(//")), "{role}: {allow:?}");
            assert!(allow.contains(&"Read(//repo/.arev/runs/r/target/**)"));
            let edits: Vec<&&str> = allow.iter().filter(|r| r.starts_with("Edit")).collect();
            if role == Role::Fixer {
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
}
