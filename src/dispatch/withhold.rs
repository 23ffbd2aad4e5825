//! Withholding what an aborted agent saw: when a gate aborts a dispatch because of one tool
//! call (an off-target read), the dispatch's run files keep the agent's events up to that
//! call and nothing after it — neither the tool's output (which may hold a secret the CLI
//! let it read: Codex's sandbox allows reads anywhere) nor anything the agent said once it
//! had seen it. The offending call itself is named in the abort and in outcome.json's
//! `tool_uses`.

use super::AgentOutcome;
use crate::store::{write_atomic, write_json_atomic};
use std::path::Path;

/// Cut `events.jsonl` in `out_dir` before the first line that mentions the tool use `id`
/// (its quoted form, as every event format writes ids), appending one `arev_withheld` line;
/// drop the answer text from `outcome` and rewrite `outcome.json`.
pub fn withhold_after(
    out_dir: &Path,
    id: &str,
    reason: &str,
    outcome: &mut AgentOutcome,
) -> std::io::Result<()> {
    let events = out_dir.join("events.jsonl");
    let raw = std::fs::read(&events).unwrap_or_default();
    let needle = serde_json::Value::String(id.to_string()).to_string();
    let mut kept = Vec::with_capacity(raw.len());
    let mut withheld = 0usize;
    for line in raw.split_inclusive(|b| *b == b'\n') {
        if withheld == 0 && !contains(line, needle.as_bytes()) {
            kept.extend_from_slice(line);
        } else {
            withheld += 1;
        }
    }
    if !kept.is_empty() && !kept.ends_with(b"\n") {
        kept.push(b'\n');
    }
    let note = serde_json::json!({
        "type": "arev_withheld",
        "tool_use_id": id,
        "reason": reason,
        "lines_withheld": withheld,
    });
    kept.extend_from_slice(note.to_string().as_bytes());
    kept.push(b'\n');
    write_atomic(&events, &kept)?;
    if let Some(r) = outcome.result.as_mut() {
        r.text = None;
    }
    write_json_atomic(&out_dir.join("outcome.json"), outcome)
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && hay.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backends::{parse_events, EventFormat};

    #[test]
    fn events_after_the_offending_call_are_withheld() {
        let d = tempfile::tempdir().unwrap();
        let lines = [
            r#"{"type":"thread.started","thread_id":"t"}"#,
            r#"{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"cat src/lib.rs","aggregated_output":"fn a() {}","exit_code":0,"status":"completed"}}"#,
            r#"{"type":"item.completed","item":{"id":"item_10","type":"reasoning","text":"next"}}"#,
            r#"{"type":"item.completed","item":{"id":"item_2","type":"command_execution","command":"cat /etc/hostname","aggregated_output":"SECRET","exit_code":0,"status":"completed"}}"#,
            r#"{"type":"item.completed","item":{"id":"item_3","type":"agent_message","text":"the host is SECRET"}}"#,
            r#"{"type":"turn.completed","usage":{"input_tokens":1,"output_tokens":1}}"#,
        ];
        let raw = lines.join("\n") + "\n";
        std::fs::write(d.path().join("events.jsonl"), &raw).unwrap();
        let (tool_uses, result, _) = parse_events(EventFormat::Codex, raw.as_bytes());
        let mut outcome: AgentOutcome = serde_json::from_value(serde_json::json!({
            "label": "enthusiast-p1", "agent": "codex", "role": "enthusiast", "tier": "opus",
            "model": "m", "end": {"kind": "exited", "code": 0}, "tool_uses": tool_uses,
            "result": result, "malformed_lines": 0, "stdout_bytes": raw.len(),
            "stdout_truncated": false, "stderr_truncated": false, "duration_ms": 1
        }))
        .unwrap();
        assert!(outcome.answer().is_some());
        withhold_after(d.path(), "item_2", "offtarget_read", &mut outcome).unwrap();
        let kept = std::fs::read_to_string(d.path().join("events.jsonl")).unwrap();
        assert!(!kept.contains("SECRET"), "{kept}");
        assert!(
            kept.contains("item_10"),
            "a longer id that starts alike is kept"
        );
        let last: serde_json::Value = serde_json::from_str(kept.lines().last().unwrap()).unwrap();
        assert_eq!(last["type"], "arev_withheld");
        assert_eq!(last["lines_withheld"], 3);
        let written = std::fs::read_to_string(d.path().join("outcome.json")).unwrap();
        assert!(!written.contains("SECRET"), "{written}");
        assert!(outcome.answer().is_none());
        assert_eq!(
            outcome.tool_uses.len(),
            2,
            "the calls themselves stay on record"
        );
    }
}
