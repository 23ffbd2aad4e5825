//! The hook's stdin JSON (docs/architecture.md §16.2): only the fields arev reads; the
//! rest (transcript_path, permission_mode, effort, …) is ignored.

use serde::Deserialize;
use std::path::PathBuf;

/// Stop / UserPromptSubmit input, the union of what either hook reads.
#[derive(Debug, Clone, Deserialize)]
pub struct HookInput {
    pub session_id: String,
    /// The project cwd (defaults to the process cwd).
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    /// Stop: true when Claude continues because a Stop hook blocked.
    #[serde(default)]
    pub stop_hook_active: bool,
    /// UserPromptSubmit: the prompt text.
    #[serde(default)]
    pub prompt: Option<String>,
}

/// Parse the hook input, or say in one line what is wrong with it.
pub fn parse(bytes: &[u8]) -> Result<HookInput, String> {
    let input: HookInput = serde_json::from_slice(bytes)
        .map_err(|e| format!("the hook input on stdin is not the expected JSON ({e})"))?;
    check_session_id(&input.session_id)?;
    Ok(input)
}

/// A session id becomes a directory name: only `[A-Za-z0-9._-]`, 1–128 chars, not `.`/`..`.
pub fn check_session_id(id: &str) -> Result<(), String> {
    let ok = !id.is_empty()
        && id.len() <= 128
        && id != "."
        && id != ".."
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "the hook input has an unusable session_id {id:?} (expected letters, digits, `-`, `_`, `.`)"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_real_stop_input_and_ignores_unknown_fields() {
        let raw = br#"{"session_id":"afd8-1","transcript_path":"/x.jsonl","cwd":"/home/u/proj",
            "prompt_id":"1","permission_mode":"dontAsk","effort":{"level":"medium"},
            "hook_event_name":"Stop","stop_hook_active":true,"last_assistant_message":"m",
            "background_tasks":[],"session_crons":[]}"#;
        let i = parse(raw).unwrap();
        assert_eq!(i.session_id, "afd8-1");
        assert!(i.stop_hook_active);
        assert_eq!(i.cwd.unwrap(), PathBuf::from("/home/u/proj"));
    }

    #[test]
    fn rejects_bad_json_and_path_like_session_ids() {
        assert!(parse(b"not json")
            .unwrap_err()
            .contains("not the expected JSON"));
        assert!(parse(br#"{"cwd":"/x"}"#).is_err());
        for bad in ["", "..", "a/b", "x y", &"a".repeat(129)] {
            assert!(check_session_id(bad).is_err(), "{bad}");
        }
        check_session_id("0b5e1d4c-2f6a-4c11-9d7e-3f1a2b3c4d5e").unwrap();
    }
}
