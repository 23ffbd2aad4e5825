//! The hook's stdin JSON (docs/architecture.md §16.2): only the fields arev reads; the
//! rest (transcript_path, permission_mode, effort, …) is ignored.

use super::error::HookError;
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
pub fn parse(bytes: &[u8]) -> Result<HookInput, HookError> {
    let input: HookInput = serde_json::from_slice(bytes).map_err(HookError::Input)?;
    check_session_id(&input.session_id)?;
    Ok(input)
}

/// A session id becomes a directory name: only `[A-Za-z0-9._-]`, 1–128 chars, not `.`/`..`.
pub fn check_session_id(id: &str) -> Result<(), HookError> {
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
        Err(HookError::SessionId(id.to_string()))
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
            .to_string()
            .contains("not the expected JSON"));
        assert!(parse(br#"{"cwd":"/x"}"#).is_err());
        for bad in ["", "..", "a/b", "x y", &"a".repeat(129)] {
            assert!(check_session_id(bad).is_err(), "{bad}");
        }
        check_session_id("0b5e1d4c-2f6a-4c11-9d7e-3f1a2b3c4d5e").unwrap();
    }

    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

        /// Arbitrary bytes never panic the parser, and whatever it accepts has a session id
        /// that is safe as a directory name.
        #[test]
        fn arbitrary_input_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            if let Ok(i) = parse(&bytes) {
                prop_assert!(check_session_id(&i.session_id).is_ok());
            }
        }

        /// Hook-shaped JSON with arbitrary field values: accepted only with a usable
        /// session id, never a path.
        #[test]
        fn arbitrary_fields_never_panic(
            session in prop_oneof![any::<String>(), "[A-Za-z0-9._/-]{0,140}"],
            cwd in any::<String>(),
            active in prop_oneof![Just(serde_json::json!(true)), Just(serde_json::json!("yes")), Just(serde_json::Value::Null)],
            prompt in any::<Option<String>>(),
        ) {
            let raw = serde_json::json!({
                "session_id": session, "cwd": cwd, "stop_hook_active": active,
                "prompt": prompt, "transcript_path": "/x.jsonl",
            });
            match parse(raw.to_string().as_bytes()) {
                Ok(i) => {
                    prop_assert_eq!(&i.session_id, &session);
                    prop_assert!(!session.contains('/') && session != "." && session != "..");
                    prop_assert!(!session.is_empty() && session.len() <= 128);
                }
                Err(e) => prop_assert!(!e.to_string().contains('\n'), "one line: {e}"),
            }
        }
    }
}
