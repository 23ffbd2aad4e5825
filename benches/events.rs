//! Event-stream parsing cost (issue #16 item 3): the three parsers over the stdout of a
//! round whose 3 passes report 1,000 findings each, each answer (~240 KB) carried twice by
//! Claude stream-json (an `assistant` text block and the `result` string, as the fake agent
//! writes it) and once by Codex (`agent_message`) and Gemini (assistant `message`).
//! The fixtures are generated at run time. Printed next to serde_json reading every line
//! into a map (the reader before the scanner), alternated, medians and the ratio.
//!
//! Run: `cargo bench --features fake-agent --bench events`. For instruction counts:
//! `AREV_BENCH_ITERS=1 valgrind --tool=callgrind target/release/deps/events-<hash>`, or
//! with `--toggle-collect='*parse_events*'` for the parser alone.
// A benchmark is test code: a broken fixture may panic.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::print_stdout)]

use arev::dispatch::{parse_events, EventFormat};
use serde_json::{json, Value};
use std::time::Instant;

fn finding(id: usize, line: usize) -> Value {
    json!({"id": format!("F{id}"), "severity": "low", "target_type": "code", "file": "src/lib.rs",
        "line": line, "category": "logic", "description": format!("defect {id}"),
        "evidence": format!("pub fn f{line}()"), "source": "enthusiast", "prior_finding_id": null})
}

/// The answer of pass `p`: 1,000 findings.
fn answer(p: usize) -> String {
    let fs: Vec<Value> = (1..=1000).map(|i| finding(i, 10 * i + p)).collect();
    json!({ "findings": fs }).to_string()
}

fn lines(events: &[Value]) -> Vec<u8> {
    let mut out = String::new();
    for e in events {
        out.push_str(&e.to_string());
        out.push('\n');
    }
    out.into_bytes()
}

fn assistant(n: usize, block: Value) -> Value {
    json!({"type": "assistant", "message": {"id": format!("msg_fake_{n}"), "type": "message",
        "role": "assistant", "model": "opus", "content": [block], "stop_reason": null,
        "usage": {"input_tokens": 10, "output_tokens": 5}},
        "parent_tool_use_id": null, "session_id": "s", "uuid": format!("fake-uuid-a{n}")})
}

/// Claude stream-json as the fake agent writes it: init, a Read, its result, the answer as
/// a text block, the result event.
fn claude(answer: &str) -> Vec<u8> {
    lines(&[
        json!({"type": "system", "subtype": "init", "cwd": "/repo", "session_id": "s",
            "tools": ["Read", "Grep", "Glob"], "model": "opus", "permissionMode": "dontAsk"}),
        assistant(
            1,
            json!({"type": "tool_use", "id": "toolu_fake_1", "name": "Read",
            "input": {"file_path": "/repo/src/lib.rs"}}),
        ),
        json!({"type": "user", "message": {"role": "user", "content": [{"type": "tool_result",
            "tool_use_id": "toolu_fake_1", "content": "fn a() {}", "is_error": false}]},
            "parent_tool_use_id": null, "session_id": "s"}),
        assistant(2, json!({"type": "text", "text": answer})),
        json!({"type": "result", "subtype": "success", "is_error": false, "result": answer,
            "stop_reason": "end_turn", "terminal_reason": "completed", "num_turns": 2,
            "duration_ms": 5, "duration_api_ms": 5, "session_id": "s", "total_cost_usd": 0.01,
            "usage": {"input_tokens": 100, "output_tokens": 50, "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0, "service_tier": "standard"},
            "modelUsage": {}, "permission_denials": [], "result_index": 0, "uuid": "r"}),
    ])
}

fn codex(answer: &str) -> Vec<u8> {
    lines(&[
        json!({"type": "thread.started", "thread_id": "t"}),
        json!({"type": "turn.started"}),
        json!({"type": "item.started", "item": {"id": "item_1", "type": "command_execution",
            "command": "/bin/bash -lc 'cat src/lib.rs'", "aggregated_output": "",
            "exit_code": null, "status": "in_progress"}}),
        json!({"type": "item.completed", "item": {"id": "item_1", "type": "command_execution",
            "command": "/bin/bash -lc 'cat src/lib.rs'", "aggregated_output": "fn a() {}\n",
            "exit_code": 0, "status": "completed"}}),
        json!({"type": "item.completed", "item": {"id": "item_2", "type": "agent_message",
            "text": answer}}),
        json!({"type": "turn.completed", "usage": {"input_tokens": 100, "cached_input_tokens": 0,
            "output_tokens": 50, "reasoning_output_tokens": 0}}),
    ])
}

fn gemini(answer: &str) -> Vec<u8> {
    lines(&[
        json!({"type": "init", "timestamp": "t", "session_id": "s", "model": "flash"}),
        json!({"type": "tool_use", "timestamp": "t", "tool_name": "read_file",
            "tool_id": "read_file__fake_1", "parameters": {"file_path": "src/lib.rs"}}),
        json!({"type": "tool_result", "timestamp": "t", "tool_id": "read_file__fake_1",
            "status": "success", "output": "fn a() {}"}),
        json!({"type": "message", "timestamp": "t", "role": "assistant", "content": answer,
            "delta": true}),
        json!({"type": "result", "timestamp": "t", "status": "success", "stats": {
            "total_tokens": 150, "input_tokens": 100, "output_tokens": 50, "cached": 0,
            "input": 100, "duration_ms": 5, "tool_calls": 1}}),
    ])
}

fn main() {
    let iters: u32 = std::env::var("AREV_BENCH_ITERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    let answers: Vec<String> = (1..=3).map(answer).collect();
    for (format, make) in [
        (EventFormat::Claude, claude as fn(&str) -> Vec<u8>),
        (EventFormat::Codex, codex),
        (EventFormat::Gemini, gemini),
    ] {
        let stdouts: Vec<Vec<u8>> = answers.iter().map(|a| make(a)).collect();
        let bytes: usize = stdouts.iter().map(Vec::len).sum();
        // Every pass parses to its answer.
        for (out, a) in stdouts.iter().zip(&answers) {
            let (uses, result, malformed) = parse_events(format, out);
            assert_eq!((uses.len(), malformed), (1, 0), "{format:?}");
            assert_eq!(result.unwrap().text.as_deref(), Some(a.as_str()));
        }
        // Side by side, alternating: arev's reader, and serde_json reading every line into
        // a map (what the reader did before the scanner; the tree alone, no event built).
        let mut ours = Vec::with_capacity(iters as usize);
        let mut reference = Vec::with_capacity(iters as usize);
        for _ in 0..iters {
            let start = Instant::now();
            for out in &stdouts {
                std::hint::black_box(parse_events(format, std::hint::black_box(out)));
            }
            ours.push(start.elapsed().as_secs_f64() * 1000.0);
            let start = Instant::now();
            for out in &stdouts {
                for line in std::hint::black_box(out).split(|b| *b == b'\n') {
                    let map = serde_json::from_slice::<serde_json::Map<String, Value>>(line);
                    std::hint::black_box(map.ok());
                }
            }
            reference.push(start.elapsed().as_secs_f64() * 1000.0);
        }
        let (ours, reference) = (median(&mut ours), median(&mut reference));
        println!(
            "{format:?}: 3 stdouts, {:.0} KB: {ours:.2} ms per round; serde_json into maps \
             {reference:.2} ms; ratio {:.2} (medians of {iters})",
            bytes as f64 / 1000.0,
            ours / reference
        );
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}
