//! `arev-fake-agent`: a test-only impersonation of the `claude` CLI (never shipped).
//!
//! It reads the whole prompt from stdin, recognises the dispatch from the prompt's first line
//! `[AR Round {N} — {MODE}] {Role} (pass {p}/{P})` (the pass suffix is optional; a Prover's
//! is `(finding F3)`) and its
//! `<target path="…" kind="…" sha256="…" />` tag, and prints realistic Claude stream-json
//! (`system/init`, one `assistant` event per content block, `user` tool results, a final
//! `result`). A prompt containing `Your previous answer was rejected` is a retry.
//!
//! `--version` prints `2.1.330 (Claude Code) [arev fake]`.
//!
//! `--event-format codex|gemini` (for a `command` agent declaring that format) prints the
//! same dispatch as Codex `exec --json` JSONL or Gemini CLI stream-json instead: a Read is a
//! `command_execution` of `nl -ba '<path>'` / a `read_file` call, the answer an
//! `agent_message` item / assistant `message` events, the result `turn.completed` (or
//! `turn.failed`) / a `result` event. Edits and writes are Claude-only.
//!
//! # Environment
//! - `AREV_FAKE_LOG`: if set, one JSON line per invocation is appended to this file:
//!   `{"argv":[…args after the program name…],"role":"enthusiast","round":1,"pass":1,
//!   "retry":false,"target_path":"…","target_kind":"file","model":"opus","pid":123,
//!   "tmpdir":"…"}` (`round`/`pass`/`target_*` are `null` when absent from the prompt;
//!   `tmpdir` is `$TMPDIR`, `null` when unset).
//! - `AREV_FAKE_PIDS`: if set, a directory where the fake records the processes it starts,
//!   one empty-named file each: `agent-<pid>` (itself, on start) and `grandchild-<pid>`
//!   (each `spawn_grandchild` / `setsid_grandchild`), so tests can check none survives.
//! - `AREV_FAKE_CPU_FILE`: if set, a line `<user µs> <system µs>` of the fake's own CPU is
//!   appended to this file when it answers or prints its version (the round bench subtracts the agents' CPU from
//!   what arev and its agents used together).
//! - `AREV_FAKE_SCRIPT`: a JSON script file (unreadable or invalid → stderr message, exit 2):
//!
//! ```json
//! {"steps": [
//!   {"role": "enthusiast", "round": 1, "pass": 2, "retry": false, "answer": {"findings": []}},
//!   {"role": "judge", "answer_text": "```json\n{oops\n```"}
//! ]}
//! ```
//!
//! The first step whose selectors match is used: `role` (required; lower-case role name,
//! `fixer` for iterate mode's Fixer, `prover` for `--prove`'s Prover), `round`, `pass`,
//! `finding` (the Prover's finding id, the Matcher's pair `g1-c2`), `retry` (optional; compared only when
//! present), `if_file_contains` / `unless_file_contains` (optional
//! `{"path": "src/lib.rs", "text": "…"}`: the file, relative to the agent's cwd, contains /
//! does not contain the text; a missing file contains nothing). No match (or no script)
//! → default behaviour: Read the target, answer with the role's empty valid answer
//! (`{"findings":[]}`, `{"heuristics":[],"safe_zones":[]}`,
//! `{"rulings":[],"summary":"No findings to arbitrate.","convergence":false,"next_round_model":null}`,
//! `{"applied":[],"skipped":[]}`, `{"finding_id":"<its finding>","unprovable":"…"}`).
//!
//! Behaviour fields (all optional), in the order they take effect:
//! - `stderr` (string): written to stderr first.
//! - `hang` (bool): after init, sleep forever.
//! - `ignore_sigterm` (bool): like `hang`, but SIGTERM is blocked (stays pending, never
//!   delivered), so only SIGKILL ends it; a `spawn_grandchild` inherits the blocked mask.
//! - `spawn_grandchild` (bool): right after init, spawn `sleep 1000` (same process group,
//!   inheriting stdout/stderr). Without `hang`/`ignore_sigterm` the run then continues
//!   normally and exits, leaving the grandchild holding the pipes.
//! - `setsid_grandchild` (bool): right after init, spawn a grandchild in a session of its
//!   own (`setsid`, so outside the agent's process group) that ignores SIGTERM, inherits
//!   stdout/stderr and sleeps 1000 s; with `AREV_FAKE_PIDS` the fake waits until it has
//!   recorded its pid.
//! - `read_target` (bool, default true): an assistant `tool_use` Read of the tag's path,
//!   then a `user` tool_result.
//! - `reads` (list of paths): extra Read tool uses (relative paths emitted as given).
//! - `greps` (list of `{"pattern","path"}`): Grep tool uses.
//! - `tools` (list of `{"name","input"}`): raw tool calls, answered with an error result
//!   (as a CLI that does not offer the tool would). Claude and Gemini: a tool use of that
//!   name and input. Codex: `shell` is a `command_execution` of `input.command`,
//!   `file_change` a `file_change` item with `input` as its changes, `mcp:<server>/<tool>`
//!   an `mcp_tool_call`, `web_search` a `web_search` of `input.query`, `collab:<tool>` a
//!   `collab_tool_call`.
//! - `edits` (list of `{"path","find","replace"}`): Edit tool uses, applied to the file
//!   relative to the cwd (first occurrence of `find`; not found → an error tool result and
//!   no change). `writes` (list of `{"path","content"}`): Write tool uses, creating parent
//!   directories. Paths may be absolute; the tool use carries the absolute path.
//!   `symlinks` (list of `{"path","target"}`): symbolic links created directly, with no tool
//!   use (no CLI tool makes one: this is a Prover that got one planted some other way).
//! - `tmp_file` (string): a file of that name written into `$TMPDIR` (as a CLI's own temp
//!   files are, with no tool use).
//! - `crash` (bool): after the tool uses, print an assistant text event and exit 1 with no
//!   result event.
//! - `garbage_lines` (n): n non-JSON lines on stdout.
//! - `flood_bytes` (n): about n bytes (exactly n when n ≥ 64) of JSON filler lines
//!   (`{"type":"fake_filler","pad":"…"}`) on stdout.
//! - `wait_for` (a gate `{"path","contains","timeout_ms"}`, or a list of them): hold the
//!   answer until each gate's file exists (and, with `contains`, holds that text), so a test
//!   decides the order of events instead of leaving it to timing — e.g. an Enthusiast that
//!   answers only once the Adversary's `outcome.json` is written, or once the fake log shows
//!   the Adversary started. `path` is absolute or relative to the cwd; a component that is
//!   exactly `*` matches any directory entry (`.arev/runs/*/agents/r1/adversary/outcome.json`).
//!   With `count` (n), it opens once n paths match (with `contains`: once the text occurs n
//!   times over them), for a repository whose earlier runs left the same files. A gate
//!   still shut after `timeout_ms` (default 60 000) ends the fake with exit 2 and a message
//!   naming it.
//! - `delay_ms` (n): sleep before the answer.
//! - `answer` (any JSON, serialized compactly) or `answer_text` (verbatim string; wins over
//!   `answer`): the result text (an assistant text event, then the `result` event).
//! - `is_error` (bool): the result has `is_error:true` (subtype stays `"success"`, like an
//!   API error of the real CLI).
//! - `cost_usd` (default 0.01), `usage` (`{input_tokens, output_tokens}`, default 100/50).
//! - `message_usage` (object, default `{"input_tokens":10,"output_tokens":5}`): the `usage`
//!   every Claude `assistant` event carries (what arev tallies while the events stream).
//! - `linger_ms` (n): sleep after the result event before exiting (a real CLI takes a
//!   moment to exit once it has printed its result).
//! - `exit_code`: exit status after printing (default 1 when `is_error`, else 0).
// A test-only binary (never shipped): a broken script panics, which the tests see.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// Its `main` plays one scripted agent run top to bottom: the 100-line rule is for `src/`.
#![allow(clippy::too_many_lines)]

use serde_json::{json, Value};
use std::io::{Read, Write};
use std::time::{Duration, Instant};

const SESSION: &str = "fa4e0000-0000-4000-8000-00000000fa4e";

struct Dispatch {
    role: String,
    round: Option<u64>,
    pass: Option<u64>,
    retry: bool,
    target_path: Option<String>,
    target_kind: Option<String>,
    /// A Prover's `(finding F3)`.
    finding: Option<String>,
}

fn parse_first_line(line: &str) -> (String, Option<u64>, Option<u64>) {
    let digits = |s: &str| -> Option<u64> {
        let d: String = s
            .trim_start()
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        d.parse().ok()
    };
    let round = line.find("Round ").and_then(|i| digits(&line[i + 6..]));
    let after = line.find(']').map_or(line, |i| &line[i + 1..]);
    let role = after
        .split_whitespace()
        .next()
        .unwrap_or("unknown")
        .to_ascii_lowercase();
    let pass = after.find("(pass").and_then(|i| digits(&after[i + 5..]));
    (role, round, pass)
}

fn attr(tag: &str, name: &str) -> Option<String> {
    let key = format!("{name}=\"");
    let start = tag.find(&key)? + key.len();
    let end = tag[start..].find('"')? + start;
    Some(tag[start..end].to_string())
}

fn parse_prompt(prompt: &str) -> Dispatch {
    let first = prompt.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let (role, round, pass) = parse_first_line(first);
    // A Prover's `(finding F3)`, a Matcher's `(pair g1-c2)`: the `finding` selector.
    let finding = first
        .find("(finding ")
        .map(|i| i + 9)
        .or_else(|| first.find("(pair ").map(|i| i + 6))
        .map(|i| first[i..].trim_end().trim_end_matches(')').to_string());
    let tag = prompt.find("<target path=\"").map(|i| {
        let rest = &prompt[i..];
        &rest[..rest.find("/>").unwrap_or(rest.len())]
    });
    Dispatch {
        role,
        round,
        pass,
        retry: prompt.contains("Your previous answer was rejected"),
        target_path: tag.and_then(|t| attr(t, "path")),
        target_kind: tag.and_then(|t| attr(t, "kind")),
        finding,
    }
}

fn default_answer(d: &Dispatch) -> Value {
    match d.role.as_str() {
        "prover" => json!({
            "finding_id": d.finding.as_deref().unwrap_or(""),
            "unprovable": "the fake agent writes no reproducer unless scripted"
        }),
        "adversary" => json!({"heuristics": [], "safe_zones": []}),
        "judge" => json!({
            "rulings": [],
            "summary": "No findings to arbitrate.",
            "convergence": false,
            "next_round_model": null
        }),
        "fixer" => json!({"applied": [], "skipped": []}),
        "matcher" => json!({"reasoning": "not scripted", "match": false, "confidence": 0.0}),
        _ => json!({"findings": []}),
    }
}

fn fail(msg: &str) -> ! {
    let _ = writeln!(std::io::stderr(), "arev-fake-agent: {msg}");
    std::process::exit(2);
}

/// `{"path","text"}`: whether the file (relative to the cwd) contains the text.
fn file_contains(sel: &Value) -> bool {
    let path = sel.get("path").and_then(Value::as_str).unwrap_or("");
    let text = sel.get("text").and_then(Value::as_str).unwrap_or("");
    std::fs::read_to_string(path).is_ok_and(|t| t.contains(text))
}

fn load_step(d: &Dispatch) -> Value {
    let Some(path) = std::env::var_os("AREV_FAKE_SCRIPT") else {
        return json!({});
    };
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        fail(&format!(
            "cannot read script {}: {e}",
            path.to_string_lossy()
        ))
    });
    let script: Value =
        serde_json::from_str(&text).unwrap_or_else(|e| fail(&format!("invalid script: {e}")));
    let steps = script
        .get("steps")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    steps
        .into_iter()
        .find(|s| {
            s.get("role").and_then(Value::as_str) == Some(d.role.as_str())
                && s.get("round")
                    .is_none_or(|r| r.is_null() || r.as_u64() == d.round)
                && s.get("pass")
                    .is_none_or(|p| p.is_null() || p.as_u64() == d.pass)
                && s.get("finding")
                    .is_none_or(|f| f.is_null() || f.as_str() == d.finding.as_deref())
                && s.get("retry")
                    .is_none_or(|r| r.is_null() || r.as_bool() == Some(d.retry))
                && s.get("if_file_contains")
                    .is_none_or(|c| c.is_null() || file_contains(c))
                && s.get("unless_file_contains")
                    .is_none_or(|c| c.is_null() || !file_contains(c))
        })
        .unwrap_or_else(|| json!({}))
}

fn log_invocation(args: &[String], d: &Dispatch, model: &str) {
    let Some(path) = std::env::var_os("AREV_FAKE_LOG") else {
        return;
    };
    let line = json!({
        "argv": args,
        "role": d.role,
        "round": d.round,
        "pass": d.pass,
        "retry": d.retry,
        "target_path": d.target_path,
        "target_kind": d.target_kind,
        "finding": d.finding,
        "model": model,
        "pid": std::process::id(),
        "tmpdir": std::env::var("TMPDIR").ok(),
    });
    let mut bytes = serde_json::to_vec(&line).unwrap_or_default();
    bytes.push(b'\n');
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(&bytes));
    if let Err(e) = written {
        fail(&format!("cannot append to {}: {e}", path.to_string_lossy()));
    }
}

/// `AREV_FAKE_PIDS/<kind>-<pid>` (nothing without the variable).
fn record_pid(kind: &str, pid: u32) {
    if let Some(dir) = std::env::var_os("AREV_FAKE_PIDS") {
        let path = std::path::Path::new(&dir).join(format!("{kind}-{pid}"));
        if let Err(e) = std::fs::write(&path, "") {
            fail(&format!("cannot write {}: {e}", path.display()));
        }
    }
}

/// A SIGTERM-ignoring `sleep 1000` in a session of its own, holding our stdout/stderr.
fn setsid_grandchild() {
    let dir = std::env::var_os("AREV_FAKE_PIDS").unwrap_or_default();
    let script = r#"trap '' TERM
if [ -n "$1" ]; then : > "$1/grandchild-$$.tmp" && mv "$1/grandchild-$$.tmp" "$1/grandchild-$$"; fi
exec sleep 1000"#;
    let spawned = std::process::Command::new("setsid")
        .args(["sh", "-c", script, "sh"])
        .arg(&dir)
        .spawn();
    let pid = match spawned {
        Ok(c) => c.id(),
        Err(e) => fail(&format!("cannot spawn a setsid grandchild: {e}")),
    };
    if dir.is_empty() {
        return;
    }
    let recorded = std::path::Path::new(&dir).join(format!("grandchild-{pid}"));
    let deadline = Instant::now() + Duration::from_secs(10);
    while !recorded.exists() {
        if Instant::now() > deadline {
            fail("the setsid grandchild never recorded its pid");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// One stdout line, flushed. A closed stdout ends the fake quietly.
fn emit_raw(line: &str) {
    let mut out = std::io::stdout().lock();
    if writeln!(out, "{line}").and_then(|()| out.flush()).is_err() {
        std::process::exit(141);
    }
}

fn emit(event: &Value) {
    emit_raw(&event.to_string());
}

/// Which CLI's event format the fake prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Claude,
    Codex,
    Gemini,
}

struct Stream {
    format: Format,
    model: String,
    next_tool: u32,
    next_msg: u32,
    turns: u64,
    /// The `usage` of every Claude `assistant` event.
    message_usage: Value,
}

/// `s` single-quoted for a POSIX shell.
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

impl Stream {
    fn init(&self) {
        match self.format {
            Format::Claude => emit(&json!({
                "type": "system",
                "subtype": "init",
                "cwd": std::env::current_dir().map(|p| p.display().to_string()).unwrap_or_default(),
                "session_id": SESSION,
                "tools": ["Read", "Grep", "Glob"],
                "mcp_servers": [],
                "model": self.model,
                "permissionMode": "dontAsk",
                "slash_commands": [],
                "agents": [],
                "skills": [],
                "plugins": [],
                "apiKeySource": "ANTHROPIC_API_KEY",
                "claude_code_version": "2.1.330",
                "output_style": "default",
                "uuid": "fake-uuid-init"
            })),
            Format::Codex => {
                emit(&json!({"type": "thread.started", "thread_id": SESSION}));
                emit(&json!({"type": "turn.started"}));
            }
            Format::Gemini => emit(&json!({
                "type": "init",
                "timestamp": "2026-01-01T00:00:00.000Z",
                "session_id": SESSION,
                "model": self.model
            })),
        }
    }

    /// Assistant text (the answer, or a remark before a crash).
    fn text(&mut self, text: &str) {
        match self.format {
            Format::Claude => self.assistant(json!({"type": "text", "text": text})),
            Format::Codex => {
                self.next_msg += 1;
                emit(&json!({"type": "item.completed", "item": {
                    "id": format!("item_msg_{}", self.next_msg), "type": "agent_message", "text": text
                }}));
            }
            Format::Gemini => emit(&json!({
                "type": "message", "timestamp": "2026-01-01T00:00:00.000Z",
                "role": "assistant", "content": text, "delta": true
            })),
        }
    }

    /// A raw tool call from the script's `tools`, answered with an error.
    fn raw_tool(&mut self, name: &str, input: Value) {
        let refused = format!("<tool_use_error>No such tool available: {name}</tool_use_error>");
        match self.format {
            Format::Claude | Format::Gemini => self.tool(name, input, &refused, true),
            Format::Codex => {
                self.next_tool += 1;
                self.turns += 1;
                let id = format!("item_{}", self.next_tool);
                let s = |k: &str| input.get(k).cloned().unwrap_or(Value::Null);
                let item = if name == "shell" {
                    json!({"id": id, "type": "command_execution", "command": s("command"),
                           "aggregated_output": "", "exit_code": 1, "status": "failed"})
                } else if name == "file_change" {
                    json!({"id": id, "type": "file_change", "changes": input, "status": "failed"})
                } else if name == "web_search" {
                    json!({"id": id, "type": "web_search", "query": s("query")})
                } else if let Some(rest) = name.strip_prefix("mcp:") {
                    let (server, tool) = rest.split_once('/').unwrap_or((rest, ""));
                    json!({"id": id, "type": "mcp_tool_call", "server": server, "tool": tool,
                           "arguments": input, "status": "failed"})
                } else if let Some(tool) = name.strip_prefix("collab:") {
                    json!({"id": id, "type": "collab_tool_call", "tool": tool, "status": "failed"})
                } else {
                    fail(&format!("no Codex item for the tool `{name}`"))
                };
                emit(&json!({"type": "item.started", "item": item}));
                emit(&json!({"type": "item.completed", "item": item}));
            }
        }
    }

    /// The final event: the result (Claude, Gemini) or the end of the turn (Codex).
    fn result(&self, text: &str, is_error: bool, step: &Value, duration_ms: u64) {
        let usage = |k: &str, d: u64| {
            step.get("usage")
                .and_then(|u| u.get(k))
                .and_then(Value::as_u64)
                .unwrap_or(d)
        };
        let (input_tokens, output_tokens) =
            (usage("input_tokens", 100), usage("output_tokens", 50));
        match self.format {
            Format::Claude => emit(&json!({
                "type": "result",
                "subtype": "success",
                "is_error": is_error,
                "result": text,
                "stop_reason": "end_turn",
                "terminal_reason": if is_error { "api_error" } else { "completed" },
                "num_turns": self.turns,
                "duration_ms": duration_ms,
                "duration_api_ms": duration_ms,
                "session_id": SESSION,
                "total_cost_usd": step.get("cost_usd").and_then(Value::as_f64).unwrap_or(0.01),
                "usage": {
                    "input_tokens": input_tokens,
                    "output_tokens": output_tokens,
                    "cache_creation_input_tokens": 0,
                    "cache_read_input_tokens": 0,
                    "service_tier": "standard"
                },
                "modelUsage": {},
                "permission_denials": [],
                "result_index": 0,
                "uuid": "fake-uuid-result"
            })),
            Format::Codex if is_error => {
                emit(&json!({"type": "error", "message": text}));
                emit(&json!({"type": "turn.failed", "error": {"message": text}}));
            }
            Format::Codex => emit(&json!({"type": "turn.completed", "usage": {
                "input_tokens": input_tokens, "cached_input_tokens": 0,
                "output_tokens": output_tokens, "reasoning_output_tokens": 0
            }})),
            Format::Gemini => {
                let mut result = json!({
                    "type": "result",
                    "timestamp": "2026-01-01T00:00:00.000Z",
                    "status": if is_error { "error" } else { "success" },
                    "stats": {"total_tokens": input_tokens + output_tokens,
                              "input_tokens": input_tokens, "output_tokens": output_tokens,
                              "cached": 0, "input": input_tokens, "duration_ms": duration_ms,
                              "tool_calls": self.next_tool}
                });
                if is_error {
                    result["error"] = json!({"type": "FatalError", "message": text});
                }
                emit(&result);
            }
        }
    }

    fn assistant(&mut self, block: Value) {
        self.next_msg += 1;
        emit(&json!({
            "type": "assistant",
            "message": {
                "id": format!("msg_fake_{}", self.next_msg),
                "type": "message",
                "role": "assistant",
                "model": self.model,
                "content": [block],
                "stop_reason": null,
                "usage": self.message_usage
            },
            "parent_tool_use_id": null,
            "session_id": SESSION,
            "uuid": format!("fake-uuid-a{}", self.next_msg)
        }));
    }

    fn tool(&mut self, name: &str, input: Value, result: &str, is_error: bool) {
        if self.format == Format::Codex {
            fail(&format!(
                "`{name}` tool uses are not scripted for the Codex format"
            ));
        }
        self.next_tool += 1;
        self.turns += 1;
        if self.format == Format::Gemini {
            let id = format!("{name}__fake_{}", self.next_tool);
            emit(
                &json!({"type": "tool_use", "timestamp": "2026-01-01T00:00:00.000Z",
                         "tool_name": name, "tool_id": id, "parameters": input}),
            );
            let mut res = json!({"type": "tool_result", "timestamp": "2026-01-01T00:00:00.000Z",
                                 "tool_id": id, "status": if is_error { "error" } else { "success" },
                                 "output": if is_error { "" } else { result }});
            if is_error {
                res["error"] = json!({"type": "tool_not_registered", "message": result});
            }
            emit(&res);
            return;
        }
        let id = format!("toolu_fake_{}", self.next_tool);
        self.assistant(json!({"type": "tool_use", "id": id, "name": name, "input": input}));
        emit(&json!({
            "type": "user",
            "message": {
                "role": "user",
                "content": [{
                    "type": "tool_result",
                    "tool_use_id": id,
                    "content": result,
                    "is_error": is_error
                }]
            },
            "parent_tool_use_id": null,
            "tool_result_meta": [{
                "id": id,
                "permission_decision": {"decision": "accept", "source": "config", "reason_type": "rule"}
            }],
            "session_id": SESSION,
            "uuid": format!("fake-uuid-u{}", self.next_tool)
        }));
    }

    fn read(&mut self, path: &str) {
        match self.format {
            Format::Claude => {}
            Format::Gemini => {
                let ok = std::fs::metadata(path).is_ok();
                self.tool("read_file", json!({"file_path": path}), "", !ok);
                return;
            }
            Format::Codex => {
                self.next_tool += 1;
                self.turns += 1;
                let out = std::fs::read_to_string(path).unwrap_or_default();
                let item = json!({"id": format!("item_{}", self.next_tool), "type": "command_execution",
                                  "command": format!("/bin/bash -lc {}", shell_quote(&format!("nl -ba {}", shell_quote(path)))),
                                  "aggregated_output": out, "exit_code": 0, "status": "completed"});
                emit(&json!({"type": "item.started", "item": item}));
                emit(&json!({"type": "item.completed", "item": item}));
                return;
            }
        }
        match std::fs::read_to_string(path) {
            Ok(text) => {
                let numbered: String = text
                    .lines()
                    .take(200)
                    .enumerate()
                    .map(|(i, l)| format!("{}\t{l}\n", i + 1))
                    .collect();
                self.tool("Read", json!({"file_path": path}), &numbered, false);
            }
            Err(e) => self.tool(
                "Read",
                json!({"file_path": path}),
                &format!("<tool_use_error>{e}</tool_use_error>"),
                true,
            ),
        }
    }
}

fn sleep_forever() -> ! {
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}

fn main() {
    let started = Instant::now();
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--version") {
        emit_raw("2.1.330 (Claude Code) [arev fake]");
        record_cpu();
        return;
    }
    // `--model=<m>` (as arev passes it) or `--model <m>`.
    let model = args
        .iter()
        .find_map(|a| a.strip_prefix("--model="))
        .map(str::to_string)
        .or_else(|| {
            args.iter()
                .position(|a| a == "--model")
                .and_then(|i| args.get(i + 1))
                .cloned()
        })
        .unwrap_or_else(|| "claude-opus-5-5".into());

    let mut prompt = String::new();
    if let Err(e) = std::io::stdin().read_to_string(&mut prompt) {
        fail(&format!("cannot read the prompt from stdin: {e}"));
    }
    let d = parse_prompt(&prompt);
    record_pid("agent", std::process::id());
    log_invocation(&args, &d, &model);
    let step = load_step(&d);
    let flag = |k: &str| step.get(k).and_then(Value::as_bool).unwrap_or(false);
    let num = |k: &str| step.get(k).and_then(Value::as_u64);

    if let Some(text) = step.get("stderr").and_then(Value::as_str) {
        let _ = std::io::stderr().write_all(text.as_bytes());
    }

    let format = match args
        .iter()
        .position(|a| a == "--event-format")
        .and_then(|i| args.get(i + 1))
        .map(String::as_str)
    {
        None | Some("claude") => Format::Claude,
        Some("codex") => Format::Codex,
        Some("gemini") => Format::Gemini,
        Some(other) => fail(&format!("unknown --event-format {other}")),
    };
    let mut s = Stream {
        format,
        model,
        next_tool: 0,
        next_msg: 0,
        turns: 1,
        message_usage: step
            .get("message_usage")
            .cloned()
            .unwrap_or_else(|| json!({"input_tokens": 10, "output_tokens": 5})),
    };
    s.init();

    if flag("ignore_sigterm") {
        // Blocked, not handled: SIGTERM stays pending forever (single-threaded process),
        // and children inherit the mask.
        let mask = nix::sys::signal::SigSet::from(nix::sys::signal::Signal::SIGTERM);
        if let Err(e) = mask.thread_block() {
            fail(&format!("cannot block SIGTERM: {e}"));
        }
    }
    if flag("spawn_grandchild") {
        match std::process::Command::new("sleep").arg("1000").spawn() {
            Ok(c) => record_pid("grandchild", c.id()),
            Err(e) => fail(&format!("cannot spawn grandchild: {e}")),
        }
    }
    if flag("setsid_grandchild") {
        setsid_grandchild();
    }
    if flag("hang") || flag("ignore_sigterm") {
        sleep_forever();
    }

    if step
        .get("read_target")
        .and_then(Value::as_bool)
        .unwrap_or(true)
    {
        if let Some(path) = d.target_path.as_deref() {
            s.read(path);
        }
    }
    for r in step
        .get("reads")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(path) = r.as_str() {
            s.read(path);
        }
    }
    for g in step
        .get("greps")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let mut input = json!({"pattern": g.get("pattern").cloned().unwrap_or(json!(""))});
        if let Some(p) = g.get("path") {
            input["path"] = p.clone();
        }
        input["output_mode"] = json!("files_with_matches");
        s.tool("Grep", input, "No files found", false);
    }
    for t in step
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let name = t.get("name").and_then(Value::as_str).unwrap_or("");
        s.raw_tool(name, t.get("input").cloned().unwrap_or_else(|| json!({})));
    }

    let cwd = std::env::current_dir().unwrap_or_default();
    for e in step
        .get("edits")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let path = cwd.join(e.get("path").and_then(Value::as_str).unwrap_or(""));
        let find = e.get("find").and_then(Value::as_str).unwrap_or("");
        let replace = e.get("replace").and_then(Value::as_str).unwrap_or("");
        let input = json!({"file_path": path, "old_string": find, "new_string": replace});
        match std::fs::read_to_string(&path) {
            Ok(text) if !find.is_empty() && text.contains(find) => {
                let next = text.replacen(find, replace, 1);
                if let Err(err) = std::fs::write(&path, next) {
                    fail(&format!("cannot edit {}: {err}", path.display()));
                }
                s.tool("Edit", input, "The file has been updated.", false);
            }
            _ => s.tool(
                "Edit",
                input,
                "<tool_use_error>String to replace not found in file.</tool_use_error>",
                true,
            ),
        }
    }
    for w in step
        .get("writes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let path = cwd.join(w.get("path").and_then(Value::as_str).unwrap_or(""));
        let content = w.get("content").and_then(Value::as_str).unwrap_or("");
        if let Some(parent) = path.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        if let Err(err) = std::fs::write(&path, content) {
            fail(&format!("cannot write {}: {err}", path.display()));
        }
        s.tool(
            "Write",
            json!({"file_path": path, "content": content}),
            "File created successfully.",
            false,
        );
    }

    for l in step
        .get("symlinks")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let path = cwd.join(l.get("path").and_then(Value::as_str).unwrap_or(""));
        let target = l.get("target").and_then(Value::as_str).unwrap_or("");
        if let Err(err) = std::os::unix::fs::symlink(target, &path) {
            fail(&format!("cannot link {}: {err}", path.display()));
        }
    }

    if let Some(name) = step.get("tmp_file").and_then(Value::as_str) {
        let dir = std::env::var_os("TMPDIR").map_or_else(std::env::temp_dir, Into::into);
        let path = std::path::Path::new(&dir).join(name);
        if let Err(err) = std::fs::write(&path, "a CLI's own temp file\n") {
            fail(&format!("cannot write {}: {err}", path.display()));
        }
    }
    match step.get("wait_for") {
        Some(Value::Array(gates)) => gates.iter().for_each(wait_for),
        Some(gate) => wait_for(gate),
        None => {}
    }
    if flag("crash") {
        s.text("Reviewing the target…");
        std::process::exit(1);
    }
    for i in 0..num("garbage_lines").unwrap_or(0) {
        emit_raw(&format!("fake garbage line {i}: not json <<<"));
    }
    if let Some(n) = num("flood_bytes") {
        flood(n);
    }
    if let Some(ms) = num("delay_ms") {
        std::thread::sleep(Duration::from_millis(ms));
    }

    let text = match step.get("answer_text").and_then(Value::as_str) {
        Some(t) => t.to_string(),
        None => step
            .get("answer")
            .cloned()
            .unwrap_or_else(|| default_answer(&d))
            .to_string(),
    };
    s.text(&text);
    let is_error = flag("is_error");
    let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    s.result(&text, is_error, &step, duration_ms);
    if let Some(ms) = num("linger_ms") {
        std::thread::sleep(Duration::from_millis(ms));
    }

    let code = step
        .get("exit_code")
        .and_then(Value::as_i64)
        .and_then(|c| i32::try_from(c).ok())
        .unwrap_or(i32::from(is_error));
    record_cpu();
    std::process::exit(code);
}

/// Append this process's CPU so far to `AREV_FAKE_CPU_FILE` (nothing without the variable).
fn record_cpu() {
    let Some(path) = std::env::var_os("AREV_FAKE_CPU_FILE") else {
        return;
    };
    use nix::sys::resource::{getrusage, UsageWho};
    let usage = match getrusage(UsageWho::RUSAGE_SELF) {
        Ok(u) => u,
        Err(e) => fail(&format!("getrusage: {e}")),
    };
    let us = |t: nix::sys::time::TimeVal| t.tv_sec() * 1_000_000 + t.tv_usec();
    let line = format!("{} {}\n", us(usage.user_time()), us(usage.system_time()));
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(line.as_bytes()));
    if let Err(e) = written {
        fail(&format!("cannot append to {}: {e}", path.to_string_lossy()));
    }
}

/// The paths `pattern` names, a component that is exactly `*` matching any entry (relative
/// patterns are taken from the cwd).
fn expand(pattern: &str) -> Vec<std::path::PathBuf> {
    use std::path::{Component, PathBuf};
    let mut found = vec![PathBuf::new()];
    for c in std::path::Path::new(pattern).components() {
        found = match c {
            Component::Normal(name) if name == "*" => found
                .iter()
                .flat_map(|dir| {
                    let at = if dir.as_os_str().is_empty() {
                        std::path::Path::new(".")
                    } else {
                        dir
                    };
                    std::fs::read_dir(at)
                        .into_iter()
                        .flatten()
                        .flatten()
                        .map(|e| dir.join(e.file_name()))
                        .collect::<Vec<_>>()
                })
                .collect(),
            other => found.into_iter().map(|p| p.join(other)).collect(),
        };
    }
    found
}

/// Hold until the gate's file exists (holding its `contains` text, when given).
fn wait_for(gate: &Value) {
    let pattern = gate.get("path").and_then(Value::as_str).unwrap_or("");
    let contains = gate.get("contains").and_then(Value::as_str);
    let limit = gate
        .get("timeout_ms")
        .and_then(Value::as_u64)
        .unwrap_or(60_000);
    let count = gate.get("count").and_then(Value::as_u64).unwrap_or(1);
    let deadline = Instant::now() + Duration::from_millis(limit);
    loop {
        let seen: u64 = expand(pattern)
            .iter()
            .map(|p| match contains {
                Some(text) => {
                    std::fs::read_to_string(p).map_or(0, |t| t.matches(text).count() as u64)
                }
                None => u64::from(p.exists()),
            })
            .sum();
        if seen >= count {
            return;
        }
        if Instant::now() > deadline {
            fail(&format!(
                "wait_for: {pattern} (containing {contains:?}, {count} time(s)) never appeared in {limit} ms"
            ));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// About `n` bytes of JSON filler lines (exactly `n` when `n` is at least 64).
fn flood(n: u64) {
    const PREFIX: &str = r#"{"type":"fake_filler","pad":""#;
    const SUFFIX: &str = "\"}";
    let overhead = (PREFIX.len() + SUFFIX.len() + 1) as u64;
    let mut left = n;
    while left > 0 {
        let line_len = if left > 4096 + overhead + 64 {
            4096
        } else {
            left
        };
        let pad = line_len.saturating_sub(overhead) as usize;
        emit_raw(&format!("{PREFIX}{}{SUFFIX}", "x".repeat(pad)));
        left = left.saturating_sub((pad as u64) + overhead);
    }
}
