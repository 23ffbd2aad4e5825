//! Test oracle for `dispatch::events`: the readers as they were before the single-pass
//! rewrite (each line read into a `Value` map, then `serde_json::from_value` into
//! `#[serde(tag = "type")]` derives), and a property test that the typed readers decode
//! every line exactly as these do, malformed count included.
// The old events' fields are compared through `Debug` only.
#![allow(dead_code)]

use serde::de::{DeserializeOwned, Deserializer};
use serde::Deserialize;
use serde_json::{Map, Value};

/// The old `EventLines`: every non-blank line into a `Map`, then into `E` when it has a
/// string `type`; the events and the malformed count.
fn old_lines<E: DeserializeOwned>(stdout: &[u8]) -> (Vec<E>, u64) {
    let (mut events, mut malformed) = (vec![], 0);
    for raw in stdout.split(|b| *b == b'\n') {
        let line = raw.trim_ascii();
        if line.is_empty() {
            continue;
        }
        let Ok(object) = serde_json::from_slice::<Map<String, Value>>(line) else {
            malformed += 1;
            continue;
        };
        if let Some(e) = tagged(Value::Object(object)) {
            events.push(e);
        }
    }
    (events, malformed)
}

fn tagged<T: DeserializeOwned>(v: Value) -> Option<T> {
    if !v.get("type").is_some_and(Value::is_string) {
        return None;
    }
    serde_json::from_value(v).ok()
}

#[derive(Debug)]
struct Tagged<T>(Option<T>);
impl<T> Default for Tagged<T> {
    fn default() -> Self {
        Self(None)
    }
}
impl<'de, T: DeserializeOwned> Deserialize<'de> for Tagged<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Self(tagged(Value::deserialize(d)?)))
    }
}

#[derive(Debug)]
struct Lax<T>(Option<T>);
impl<T> Default for Lax<T> {
    fn default() -> Self {
        Self(None)
    }
}
impl<'de, T: DeserializeOwned> Deserialize<'de> for Lax<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        Ok(Self(serde_json::from_value(v).ok()))
    }
}

#[derive(Debug)]
struct LaxObject<T>(Option<T>);
impl<T> Default for LaxObject<T> {
    fn default() -> Self {
        Self(None)
    }
}
impl<'de, T: DeserializeOwned> Deserialize<'de> for LaxObject<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Self(match Value::deserialize(d)? {
            v @ Value::Object(_) => serde_json::from_value(v).ok(),
            _ => None,
        }))
    }
}

/// The old Claude events.
mod claude {
    use super::{Lax, LaxObject, Tagged};
    use serde::Deserialize;
    use serde_json::Value;

    #[derive(Debug, Deserialize)]
    #[serde(tag = "type", rename_all = "snake_case")]
    pub enum ClaudeEvent {
        Assistant {
            #[serde(default)]
            message: LaxObject<AssistantMessage>,
        },
        Result(ClaudeResult),
        #[serde(other)]
        Other,
    }

    #[derive(Debug, Deserialize)]
    pub struct AssistantMessage {
        #[serde(default)]
        content: Lax<Vec<Tagged<ContentBlock>>>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(tag = "type", rename_all = "snake_case")]
    enum ContentBlock {
        ToolUse {
            #[serde(default)]
            id: Lax<String>,
            #[serde(default)]
            name: Lax<String>,
            #[serde(default)]
            input: Value,
        },
        #[serde(other)]
        Other,
    }

    #[derive(Debug, Deserialize)]
    pub struct ClaudeResult {
        #[serde(default)]
        subtype: Lax<String>,
        #[serde(default)]
        is_error: Lax<bool>,
        #[serde(default)]
        result: Lax<String>,
        #[serde(default)]
        total_cost_usd: Lax<f64>,
        #[serde(default)]
        usage: LaxObject<ClaudeUsage>,
        #[serde(default)]
        permission_denials: Lax<Vec<Value>>,
        #[serde(default)]
        num_turns: Lax<u64>,
    }

    #[derive(Debug, Default, Deserialize)]
    struct ClaudeUsage {
        #[serde(default)]
        input_tokens: Lax<u64>,
        #[serde(default)]
        output_tokens: Lax<u64>,
        #[serde(default)]
        cache_creation_input_tokens: Lax<u64>,
        #[serde(default)]
        cache_read_input_tokens: Lax<u64>,
    }
}

/// The old Codex events.
mod codex {
    use super::{Lax, LaxObject, Tagged};
    use serde::Deserialize;
    use serde_json::Value;

    #[derive(Debug, Deserialize)]
    #[serde(tag = "type")]
    pub enum CodexEvent {
        #[serde(rename = "item.started")]
        ItemStarted {
            #[serde(default)]
            item: Tagged<CodexItem>,
        },
        #[serde(rename = "item.updated")]
        ItemUpdated {
            #[serde(default)]
            item: Tagged<CodexItem>,
        },
        #[serde(rename = "item.completed")]
        ItemCompleted {
            #[serde(default)]
            item: Tagged<CodexItem>,
        },
        #[serde(rename = "turn.completed")]
        TurnCompleted {
            #[serde(default)]
            usage: LaxObject<CodexUsage>,
        },
        #[serde(rename = "turn.failed")]
        TurnFailed {
            #[serde(default)]
            error: LaxObject<CodexError>,
        },
        #[serde(rename = "error")]
        Error {
            #[serde(default)]
            message: Lax<String>,
        },
        #[serde(other)]
        Other,
    }

    #[derive(Debug, Deserialize)]
    #[serde(tag = "type", rename_all = "snake_case")]
    pub enum CodexItem {
        AgentMessage {
            #[serde(default)]
            text: Lax<String>,
        },
        CommandExecution {
            #[serde(default)]
            id: Lax<String>,
            #[serde(default)]
            command: Lax<String>,
        },
        FileChange {
            #[serde(default)]
            id: Lax<String>,
            #[serde(default)]
            changes: Value,
        },
        McpToolCall {
            #[serde(default)]
            id: Lax<String>,
            #[serde(default)]
            server: Lax<String>,
            #[serde(default)]
            tool: Lax<String>,
            #[serde(default)]
            arguments: Value,
        },
        CollabToolCall {
            #[serde(default)]
            id: Lax<String>,
            #[serde(default)]
            tool: Lax<String>,
        },
        WebSearch {
            #[serde(default)]
            id: Lax<String>,
            #[serde(default)]
            query: Value,
        },
        #[serde(other)]
        Other,
    }

    #[derive(Debug, Default, Deserialize)]
    pub struct CodexUsage {
        #[serde(default)]
        input_tokens: Lax<u64>,
        #[serde(default)]
        cached_input_tokens: Lax<u64>,
        #[serde(default)]
        cache_write_input_tokens: Lax<u64>,
        #[serde(default)]
        output_tokens: Lax<u64>,
    }

    #[derive(Debug, Deserialize)]
    pub struct CodexError {
        #[serde(default)]
        message: Lax<String>,
    }
}

/// The old Gemini events.
mod gemini {
    use super::{Lax, LaxObject};
    use serde::Deserialize;
    use serde_json::Value;

    #[derive(Debug, Deserialize)]
    #[serde(tag = "type", rename_all = "snake_case")]
    pub enum GeminiEvent {
        Message {
            #[serde(default)]
            role: Lax<String>,
            #[serde(default)]
            content: Lax<String>,
            #[serde(default)]
            delta: Lax<bool>,
        },
        ToolUse {
            #[serde(default)]
            tool_id: Lax<String>,
            #[serde(default)]
            tool_name: Lax<String>,
            #[serde(default)]
            parameters: Value,
        },
        Error {
            #[serde(default)]
            severity: Lax<String>,
            #[serde(default)]
            message: Lax<String>,
        },
        Result {
            #[serde(default)]
            status: Lax<String>,
            #[serde(default)]
            error: LaxObject<GeminiError>,
            #[serde(default)]
            stats: LaxObject<GeminiStats>,
        },
        #[serde(other)]
        Other,
    }

    #[derive(Debug, Deserialize)]
    pub struct GeminiError {
        #[serde(default, rename = "type")]
        kind: Lax<String>,
        #[serde(default)]
        message: Lax<String>,
    }

    #[derive(Debug, Default, Deserialize)]
    pub struct GeminiStats {
        #[serde(default)]
        input_tokens: Lax<u64>,
        #[serde(default)]
        output_tokens: Lax<u64>,
        #[serde(default)]
        cached: Lax<u64>,
        #[serde(default)]
        tool_calls: Lax<u64>,
    }
}

fn old<E: DeserializeOwned + std::fmt::Debug>(stdout: &[u8]) -> (String, u64) {
    let (events, malformed) = old_lines::<E>(stdout);
    (format!("{events:?}"), malformed)
}

/// Both readers, each format: the same events (their `Debug`), the same malformed count.
fn same(stdout: &[u8]) -> Result<(), proptest::test_runner::TestCaseError> {
    use proptest::prop_assert_eq;
    prop_assert_eq!(
        super::claude::debug_events(stdout),
        old::<claude::ClaudeEvent>(stdout)
    );
    prop_assert_eq!(
        super::codex::debug_events(stdout),
        old::<codex::CodexEvent>(stdout)
    );
    prop_assert_eq!(
        super::gemini::debug_events(stdout),
        old::<gemini::GeminiEvent>(stdout)
    );
    Ok(())
}

mod props {
    use super::same;
    use proptest::prelude::*;

    /// Keys beside the ones the formats read: `type` again, spelled with an escape, and
    /// strangers.
    const KEYS_EXTRA: &[&str] = &[
        "type",
        "type",
        "type",
        "\\u0074ype",
        "cache_read_input_tokens",
        "arguments",
        "query",
        "cached_input_tokens",
        "x",
    ];

    /// A key: one the three formats read, or one of the above.
    fn key() -> impl Strategy<Value = &'static str> {
        prop_oneof![
            proptest::sample::select(super::super::events::tests::KEYS),
            proptest::sample::select(KEYS_EXTRA),
        ]
    }
    /// String values beside the event types: escapes, a lone surrogate (which a `Value`
    /// refuses).
    const STRINGS_EXTRA: &[&str] = &[
        "item.updated",
        "warning",
        "a\\\"b\\n",
        "\\u0072esult",
        "\\ud83d\\ude00",
        "\\ud800",
        "\\udc00x",
        "é",
        "\\u0000",
    ];

    /// A string value: an event type of the three formats, or one of the above.
    fn string() -> impl Strategy<Value = &'static str> {
        prop_oneof![
            proptest::sample::select(super::super::events::tests::TYPES),
            proptest::sample::select(STRINGS_EXTRA),
        ]
    }
    /// Numbers, out-of-range ones included.
    const NUMBERS: &[&str] = &[
        "0",
        "-0",
        "1",
        "7",
        "-1",
        "2.5",
        "1e2",
        "18446744073709551615",
        "18446744073709551616",
        "-9223372036854775809",
        "1e400",
        "-1e400",
        "0.0032",
    ];

    /// JSON text (possibly with duplicate keys) from those keys and values, nested.
    fn json_text() -> impl Strategy<Value = String> {
        let leaf = prop_oneof![
            Just("null".to_string()),
            Just("true".to_string()),
            Just("false".to_string()),
            proptest::sample::select(NUMBERS).prop_map(str::to_string),
            string().prop_map(|s| format!("\"{s}\"")),
        ];
        leaf.prop_recursive(5, 64, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4)
                    .prop_map(|vs| format!("[{}]", vs.join(","))),
                proptest::collection::vec((key(), inner), 0..7).prop_map(|kvs| {
                    let kvs: Vec<String> = kvs
                        .into_iter()
                        .map(|(k, v)| format!("\"{k}\":{v}"))
                        .collect();
                    format!("{{{}}}", kvs.join(","))
                }),
            ]
        })
    }

    /// An event-like object: a `type` first most of the time, then other entries.
    fn event_text() -> impl Strategy<Value = String> {
        (
            proptest::option::weighted(0.8, string()),
            proptest::collection::vec((key(), json_text()), 0..6),
        )
            .prop_map(|(tag, kvs)| {
                let mut parts: Vec<String> = tag
                    .map(|t| format!("\"type\":\"{t}\""))
                    .into_iter()
                    .collect();
                parts.extend(kvs.into_iter().map(|(k, v)| format!("\"{k}\":{v}")));
                format!("{{{}}}", parts.join(","))
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2048, ..ProptestConfig::default() })]

        /// Arbitrary lines, truncated or not, decode as the old readers decoded them.
        #[test]
        fn typed_readers_decode_as_the_value_readers_did(
            lines in proptest::collection::vec(
                prop_oneof![
                    6 => event_text(),
                    2 => json_text(),
                    1 => event_text().prop_flat_map(|s| {
                        let n = s.len();
                        (Just(s), 0..=n).prop_map(|(s, cut)| String::from_utf8_lossy(&s.as_bytes()[..cut]).into_owned())
                    }),
                ],
                0..8,
            ),
        ) {
            same(lines.join("\n").as_bytes())?;
        }
    }

    #[test]
    fn edge_lines_decode_as_the_value_readers_did() {
        for line in [
            r#"{"type":"result","type":"assistant","message":{"content":[{"type":"tool_use","id":"a"}]}}"#,
            r#"{"type":7,"type":"result","result":"x"}"#,
            r#"{"result":"x","type":"result","result":5}"#,
            r#"{"type":"result","result":"\ud800"}"#,
            r#"{"type":"system","x":"\ud800"}"#,
            r#"{"type":"system","x":1e400}"#,
            r#"{"type":"assistant","message":{"content":[{"id":"b","type":"tool_use","type":"tool_use","name":"Read"}]}}"#,
            r#"{"type":"assistant","message":{"content":[{"id":"b","name":"Read","type":"tool_use","input":{"file_path":"a","file_path":"b"}}]}}"#,
            "{\"type\":\"result\",\"result\":\"\u{7f}\"}",
        ] {
            same(line.as_bytes()).unwrap();
        }
        same(b"{\"type\":\"result\",\"result\":\"\xff\"}").unwrap();
    }
}
