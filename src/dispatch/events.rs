//! The one JSONL reader behind every event-format parser (Claude stream-json, Codex
//! `--json`, Gemini stream-json), and the lenient field wrappers their typed events use.
//!
//! One JSON object per line. Blank lines are skipped; a line that is not a JSON object (a
//! truncated last line, garbage, `[1,2]`, `42`) is counted as malformed. A JSON object is
//! then read as the format's event enum, tagged by its string `type`: an unknown `type` is
//! that enum's catch-all, and a known event whose fields have unexpected shapes still parses,
//! field by field (`Lax`, `LaxObject`, `Tagged`): a field that is missing or of the wrong type
//! reads as absent. An object without a string `type` is skipped, not malformed (serde would
//! read a number as a variant index).

use serde::de::{DeserializeOwned, Deserializer};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::marker::PhantomData;

/// The events of one agent's stdout, in order; `malformed()` counts the non-object lines
/// seen so far.
pub struct EventLines<'a, E> {
    /// What is left to read: None after the last line.
    rest: Option<&'a [u8]>,
    malformed: u64,
    _event: PhantomData<E>,
}

impl<'a, E: DeserializeOwned> EventLines<'a, E> {
    pub fn new(stdout: &'a [u8]) -> Self {
        Self {
            rest: Some(stdout),
            malformed: 0,
            _event: PhantomData,
        }
    }

    /// The next `\n`-separated line (as `split` would give it: the text after the last
    /// newline is a line too), found with `memchr` (an answer line is ~240 KiB).
    fn next_line(&mut self) -> Option<&'a [u8]> {
        let rest = self.rest?;
        Some(match memchr::memchr(b'\n', rest) {
            Some(i) => {
                self.rest = Some(&rest[i + 1..]);
                &rest[..i]
            }
            None => {
                self.rest = None;
                rest
            }
        })
    }

    /// Lines that were not a JSON object.
    pub fn malformed(&self) -> u64 {
        self.malformed
    }
}

impl<E: DeserializeOwned> Iterator for EventLines<'_, E> {
    type Item = E;

    fn next(&mut self) -> Option<E> {
        while let Some(raw) = self.next_line() {
            let line = raw.trim_ascii();
            if line.is_empty() {
                continue;
            }
            // An object first: serde would read a JSON array as a struct or a tagged enum.
            let Ok(object) = serde_json::from_slice::<Map<String, Value>>(line) else {
                self.malformed += 1;
                continue;
            };
            if let Some(event) = tagged(Value::Object(object)) {
                return Some(event);
            }
        }
        None
    }
}

/// `v` read as a tagged enum when it is an object with a string `type`.
fn tagged<T: DeserializeOwned>(v: Value) -> Option<T> {
    if !v.get("type").is_some_and(Value::is_string) {
        return None;
    }
    serde_json::from_value(v).ok()
}

/// A field holding a `type`-tagged object (a content block, a Codex item), read leniently:
/// `None` unless it is an object with a string `type` that the enum reads.
#[derive(Debug, Clone, PartialEq)]
pub struct Tagged<T>(pub Option<T>);

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

/// A field read leniently: `None` when absent or when its value is not a `T`.
#[derive(Debug, Clone, PartialEq)]
pub struct Lax<T>(pub Option<T>);

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

impl<T> Lax<T> {
    pub fn get(&self) -> Option<&T> {
        self.0.as_ref()
    }
}

impl Lax<String> {
    /// The string, or `""`.
    pub fn str(&self) -> &str {
        self.0.as_deref().unwrap_or_default()
    }
}

impl Lax<u64> {
    /// The count, or 0.
    pub fn n(&self) -> u64 {
        self.0.unwrap_or(0)
    }
}

/// A struct or tagged-enum field read leniently, and only from a JSON object (serde would
/// also read a JSON array positionally into a struct).
#[derive(Debug, Clone, PartialEq)]
pub struct LaxObject<T>(pub Option<T>);

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

impl<T> LaxObject<T> {
    pub fn get(&self) -> Option<&T> {
        self.0.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(tag = "type", rename_all = "snake_case")]
    enum Ev {
        Ping {
            #[serde(default)]
            n: Lax<u64>,
            #[serde(default)]
            inner: LaxObject<Inner>,
        },
        #[serde(other)]
        Other,
    }

    #[derive(Debug, PartialEq, Deserialize)]
    struct Inner {
        #[serde(default)]
        s: Lax<String>,
    }

    fn read(input: &str) -> (Vec<Ev>, u64) {
        let mut it = EventLines::<Ev>::new(input.as_bytes());
        let evs: Vec<Ev> = it.by_ref().collect();
        (evs, it.malformed())
    }

    #[test]
    fn objects_are_events_and_everything_else_is_malformed() {
        let (evs, bad) = read(
            "{\"type\":\"ping\",\"n\":3}\r\n\n  \nnot json\n[\"ping\"]\n42\n{\"type\":\"pong\"}\n{\"no\":\"type\"}\n{\"type\":7}\n{\"type\":\"ping\"",
        );
        assert_eq!(
            evs,
            [
                Ev::Ping {
                    n: Lax(Some(3)),
                    inner: LaxObject(None)
                },
                Ev::Other
            ]
        );
        assert_eq!(bad, 4, "garbage, an array, a number and a truncated line");
        let (evs, _) = read("{\"type\":0,\"n\":1}");
        assert!(evs.is_empty(), "a numeric tag is no variant index");
    }

    #[test]
    fn fields_of_the_wrong_shape_read_as_absent() {
        let (evs, _) = read(
            "{\"type\":\"ping\",\"n\":-1,\"inner\":[\"x\"]}\n{\"type\":\"ping\",\"n\":2.5,\"inner\":{\"s\":5}}\n{\"type\":\"ping\",\"inner\":{\"s\":\"ok\"}}",
        );
        assert_eq!(
            evs,
            [
                Ev::Ping {
                    n: Lax(None),
                    inner: LaxObject(None)
                },
                Ev::Ping {
                    n: Lax(None),
                    inner: LaxObject(Some(Inner { s: Lax(None) }))
                },
                Ev::Ping {
                    n: Lax(None),
                    inner: LaxObject(Some(Inner {
                        s: Lax(Some("ok".into()))
                    }))
                },
            ]
        );
    }

    use crate::dispatch::{parse_events, EventFormat};
    use proptest::prelude::*;
    use serde_json::json;

    const FORMATS: [EventFormat; 3] =
        [EventFormat::Claude, EventFormat::Codex, EventFormat::Gemini];
    const KEYS: &[&str] = &[
        "type",
        "subtype",
        "message",
        "content",
        "id",
        "name",
        "input",
        "result",
        "is_error",
        "usage",
        "input_tokens",
        "output_tokens",
        "cached",
        "total_cost_usd",
        "num_turns",
        "permission_denials",
        "item",
        "text",
        "command",
        "changes",
        "path",
        "server",
        "tool",
        "error",
        "status",
        "stats",
        "tool_calls",
        "role",
        "delta",
        "severity",
        "tool_id",
        "tool_name",
        "parameters",
        "file_path",
    ];
    const TYPES: &[&str] = &[
        "assistant",
        "result",
        "tool_use",
        "text",
        "system",
        "user",
        "item.started",
        "item.completed",
        "turn.completed",
        "turn.failed",
        "error",
        "agent_message",
        "command_execution",
        "file_change",
        "mcp_tool_call",
        "collab_tool_call",
        "web_search",
        "message",
        "read_file",
        "Read",
        "success",
        "cat a.rs",
        "",
    ];

    /// JSON built from the keys and values the three formats use, nested.
    fn event_like() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<u64>().prop_map(|n| json!(n)),
            any::<i64>().prop_map(|n| json!(n)),
            any::<f64>()
                .prop_filter("JSON numbers are finite", |f| f.is_finite())
                .prop_map(|f| json!(f)),
            proptest::sample::select(TYPES).prop_map(|t| json!(t)),
            any::<String>().prop_map(Value::String),
        ];
        leaf.prop_recursive(5, 64, 8, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                proptest::collection::vec((proptest::sample::select(KEYS), inner), 0..8).prop_map(
                    |kv| Value::Object(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
                ),
            ]
        })
    }

    fn check(format: EventFormat, stdout: &[u8]) -> Result<(), TestCaseError> {
        let (uses, _, malformed) = parse_events(format, stdout);
        let lines = stdout.split(|b| *b == b'\n').count() as u64;
        prop_assert!(malformed <= lines);
        let ids: std::collections::HashSet<&str> = uses.iter().map(|t| t.id.as_str()).collect();
        prop_assert_eq!(ids.len(), uses.len(), "tool uses are deduplicated by id");
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

        /// Arbitrary bytes never panic a parser.
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
            for f in FORMATS {
                check(f, &bytes)?;
            }
        }

        /// Arbitrary lines (JSON or not, truncated or not) never panic a parser.
        #[test]
        fn arbitrary_lines_never_panic(
            lines in proptest::collection::vec(
                prop_oneof![
                    4 => event_like().prop_map(|v| v.to_string()),
                    1 => any::<String>(),
                    1 => event_like().prop_flat_map(|v| {
                        let s = v.to_string();
                        let n = s.len();
                        (Just(s), 0..=n).prop_map(|(s, cut)| String::from_utf8_lossy(&s.as_bytes()[..cut]).into_owned())
                    }),
                ],
                0..16,
            ),
            crlf in any::<bool>(),
        ) {
            let text = lines.join(if crlf { "\r\n" } else { "\n" });
            for f in FORMATS {
                check(f, text.as_bytes())?;
            }
        }
    }
}
