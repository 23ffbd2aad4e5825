//! The one JSONL reader behind every event-format parser (Claude stream-json, Codex
//! `--json`, Gemini stream-json), and the lenient field readers their serde-derived events
//! use.
//!
//! One JSON object per line. Blank lines are skipped; a line that is not a JSON object (a
//! truncated last line, garbage, `[1,2]`, `42`, a lone surrogate escape, a number out of
//! range) is counted as malformed. A JSON object is then read as the format's event enum
//! (`#[serde(tag = "type")]` with an `#[serde(other)]` catch-all for every unknown `type`);
//! an object without a string `type` is skipped, not malformed. Of duplicate keys the last
//! one counts (the line is read into a map first). A known event whose fields have
//! unexpected shapes still parses, field by field: the fields use [`lax`], [`lax_object`]
//! and [`lax_tagged`], so a field that is missing or of the wrong shape reads as absent, and
//! unknown fields are ignored. Strings move from the map into the event (no copy).

use serde::de::{DeserializeOwned, Deserializer};
use serde::Deserialize;
use serde_json::{Map, Value};

/// One line of an agent's stdout.
pub(super) enum Line {
    /// Empty or only whitespace: skipped.
    Blank,
    /// Not a JSON object.
    Malformed,
    /// A JSON object (of duplicate keys the last).
    Object(Value),
}

/// What `raw` (one `\n`-separated line, `\r` and blanks around it ignored) is.
pub(super) fn line(raw: &[u8]) -> Line {
    let line = raw.trim_ascii();
    if line.is_empty() {
        return Line::Blank;
    }
    match serde_json::from_slice::<Map<String, Value>>(line) {
        Ok(object) => Line::Object(Value::Object(object)),
        Err(_) => Line::Malformed,
    }
}

/// `value` as the `type`-tagged enum `T`: `None` unless it is an object with a string
/// `type` (a numeric one is no variant index) that reads as a `T`.
pub(super) fn tagged<T: DeserializeOwned>(value: Value) -> Option<T> {
    if !value.get("type").is_some_and(Value::is_string) {
        return None;
    }
    serde_json::from_value(value).ok()
}

/// A field read leniently (`#[serde(default, deserialize_with = "lax")]`): `None` when its
/// value is not a `T` (a count from a non-negative integer, a cost from any number, …).
pub fn lax<'de, D: Deserializer<'de>, T: DeserializeOwned>(d: D) -> Result<Option<T>, D::Error> {
    Ok(serde_json::from_value(Value::deserialize(d)?).ok())
}

/// A struct field read leniently, and only from a JSON object (serde would read a struct
/// from an array too).
pub fn lax_object<'de, D: Deserializer<'de>, T: DeserializeOwned>(
    d: D,
) -> Result<Option<T>, D::Error> {
    Ok(match Value::deserialize(d)? {
        object @ Value::Object(_) => serde_json::from_value(object).ok(),
        _ => None,
    })
}

/// A field holding a `type`-tagged object (a Codex item): `None` unless it is an object
/// with a string `type` (an unknown one is the enum's catch-all).
pub fn lax_tagged<'de, D: Deserializer<'de>, T: DeserializeOwned>(
    d: D,
) -> Result<Option<T>, D::Error> {
    Ok(tagged(Value::deserialize(d)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(tag = "type", rename_all = "snake_case")]
    enum Ev {
        Ping {
            #[serde(default, deserialize_with = "lax")]
            n: Option<u64>,
            #[serde(default, deserialize_with = "lax_object")]
            inner: Option<Inner>,
        },
        #[serde(other)]
        Other,
    }

    #[derive(Debug, PartialEq, Deserialize)]
    struct Inner {
        #[serde(default, deserialize_with = "lax")]
        s: Option<String>,
    }

    fn read(input: &str) -> (Vec<Ev>, u64) {
        let (mut evs, mut bad) = (vec![], 0);
        for raw in input.as_bytes().split(|b| *b == b'\n') {
            match line(raw) {
                Line::Blank => {}
                Line::Malformed => bad += 1,
                Line::Object(v) => evs.extend(tagged::<Ev>(v)),
            }
        }
        (evs, bad)
    }

    fn ping(n: Option<u64>, inner: Option<Inner>) -> Ev {
        Ev::Ping { n, inner }
    }

    #[test]
    fn objects_are_events_and_everything_else_is_malformed() {
        let (evs, bad) = read(
            "{\"type\":\"ping\",\"n\":3}\r\n\n  \nnot json\n[\"ping\"]\n42\n{\"type\":\"pong\"}\n{\"no\":\"type\"}\n{\"type\":7}\n{\"type\":\"ping\"",
        );
        assert_eq!(evs, [ping(Some(3), None), Ev::Other]);
        assert_eq!(bad, 4, "garbage, an array, a number and a truncated line");
        let (evs, _) = read("{\"type\":0,\"n\":1}");
        assert!(evs.is_empty(), "a numeric tag is no variant index");
        let (evs, bad) =
            read("{\"type\":\"pong\",\"x\":\"\\ud800\"}\n{\"type\":\"pong\",\"x\":1e400}");
        assert!(evs.is_empty());
        assert_eq!(bad, 2, "a lone surrogate and an out-of-range number");
    }

    #[test]
    fn fields_of_the_wrong_shape_read_as_absent() {
        let (evs, _) = read(
            "{\"type\":\"ping\",\"n\":-1,\"inner\":[\"x\"]}\n{\"type\":\"ping\",\"n\":2.5,\"inner\":{\"s\":5}}\n{\"type\":\"ping\",\"inner\":{\"s\":\"ok\"},\"type\":\"ping\",\"n\":1,\"n\":\"2\"}",
        );
        assert_eq!(
            evs,
            [
                ping(None, None),
                ping(None, Some(Inner { s: None })),
                ping(
                    None,
                    Some(Inner {
                        s: Some("ok".into())
                    })
                ),
            ]
        );
    }

    use crate::backends::{decode_all, EventFormat};
    use proptest::prelude::*;
    use serde_json::json;

    const FORMATS: [EventFormat; 3] =
        [EventFormat::Claude, EventFormat::Codex, EventFormat::Gemini];
    /// Keys the three formats read.
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
    /// The event and item types of the three formats.
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
        let folded = decode_all(format, stdout, "m");
        let (uses, malformed) = (folded.tool_uses, folded.malformed);
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
