//! The one JSONL reader behind every event-format parser (Claude stream-json, Codex
//! `--json`, Gemini stream-json), and the lenient field wrappers their typed events use.
//!
//! One JSON object per line. Blank lines are skipped; a line that is not a JSON object (a
//! truncated last line, garbage, `[1,2]`, `42`) is counted as malformed. A JSON object is
//! then read as the format's event enum, tagged by its string `type`: an unknown `type` is
//! that enum's catch-all, and a known event whose fields have unexpected shapes still parses,
//! field by field (`Lax`, `LaxObject`, `Tagged`): a field that is missing or of the wrong type
//! reads as absent. An object without a string `type` is skipped, not malformed. Of duplicate
//! keys the last one counts.
//!
//! Each line is scanned once (`dispatch::json`: validated as a `serde_json::Value` would be,
//! no tree built) and the events are read from that scan: a string is unescaped and copied
//! only when a field the event keeps holds it (the answer in a `result`, not the same answer
//! in the `assistant` text block that precedes it). The events are declared with
//! [`lax_struct!`] and [`tagged_enum!`] rather than serde's derives.

use super::json::{Doc, Node};
use serde_json::Value;
use std::marker::PhantomData;

/// The events of one agent's stdout, in order; `malformed()` counts the non-object lines
/// seen so far.
pub struct EventLines<'a, E> {
    /// What is left to read: None after the last line.
    rest: Option<&'a [u8]>,
    malformed: u64,
    _event: PhantomData<E>,
}

impl<'a, E: Variants> EventLines<'a, E> {
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

impl<E: Variants> Iterator for EventLines<'_, E> {
    type Item = E;

    fn next(&mut self) -> Option<E> {
        while let Some(raw) = self.next_line() {
            let line = raw.trim_ascii();
            if line.is_empty() {
                continue;
            }
            let Some(doc) = Doc::object(line) else {
                self.malformed += 1;
                continue;
            };
            if let Some(event) = Tagged::<E>::read(&doc, doc.root()).0 {
                return Some(event);
            }
        }
        None
    }
}

/// A field type: read from its value in a scanned line, never failing (what it cannot read
/// is absent).
pub trait Read: Sized {
    fn read(doc: &Doc, value: Node) -> Self;
}

/// Verbatim.
impl Read for Value {
    fn read(doc: &Doc, value: Node) -> Self {
        doc.value(value)
    }
}

/// A struct read from a JSON object key by key: [`lax_struct!`] implements it.
pub trait Fields: Default {
    /// Read `value` into the field named `key` (other keys are ignored).
    fn field(&mut self, key: &str, doc: &Doc, value: Node);
}

/// An enum read from a JSON object tagged by its string `type`: [`tagged_enum!`]
/// implements it.
pub trait Variants: Sized {
    /// The variant for `tag` with every field absent (the catch-all `Other` for an
    /// unknown tag).
    fn variant(tag: &str) -> Self;
    /// Read `value` into the current variant's field named `key` (see [`Fields::field`]).
    fn field(&mut self, key: &str, doc: &Doc, value: Node);
}

/// A struct whose fields are all read leniently ([`Lax`], [`LaxObject`], [`Tagged`], or a
/// verbatim `Value`), each absent by default; `field as "key"` reads the field from another
/// key. Other keys are ignored.
macro_rules! lax_struct {
    ($(#[$m:meta])* $vis:vis struct $name:ident {
        $($(#[$fm:meta])* $field:ident $(as $key:literal)?: $ty:ty),* $(,)?
    }) => {
        $(#[$m])*
        #[derive(Default)]
        $vis struct $name {
            $($(#[$fm])* $field: $ty,)*
        }

        impl $crate::dispatch::events::Fields for $name {
            fn field(
                &mut self,
                key: &str,
                doc: &$crate::dispatch::json::Doc,
                value: $crate::dispatch::json::Node,
            ) {
                $(
                    if key == $crate::dispatch::events::lax_key!($field $(, $key)?) {
                        self.$field = $crate::dispatch::events::Read::read(doc, value);
                        return;
                    }
                )*
            }
        }
    };
}
pub(crate) use lax_struct;

/// The JSON key of a [`lax_struct!`] or [`tagged_enum!`] field.
macro_rules! lax_key {
    ($field:ident) => {
        stringify!($field)
    };
    ($field:ident, $key:literal) => {
        $key
    };
}
pub(crate) use lax_key;

/// An enum tagged by a string `type`, `"tag" => Variant { fields }` (fields as in
/// [`lax_struct!`]) or `"tag" => Variant(AStruct)` (a [`lax_struct!`]), plus the catch-all
/// `Other` for every other tag.
macro_rules! tagged_enum {
    ($(#[$m:meta])* $vis:vis enum $name:ident {
        $($tag:literal => $variant:ident $body:tt),* $(,)?
    }) => {
        $(#[$m])*
        $vis enum $name {
            $($variant $body,)*
            Other,
        }

        impl $crate::dispatch::events::Variants for $name {
            fn variant(tag: &str) -> Self {
                $(
                    if tag == $tag {
                        return $crate::dispatch::events::tagged_variant!(new $variant $body);
                    }
                )*
                Self::Other
            }

            fn field(
                &mut self,
                key: &str,
                doc: &$crate::dispatch::json::Doc,
                value: $crate::dispatch::json::Node,
            ) {
                $($crate::dispatch::events::tagged_variant!(field self key doc value $variant $body);)*
            }
        }
    };
}
pub(crate) use tagged_enum;

/// The per-variant parts of [`tagged_enum!`]: a variant with absent fields (`new`), and the
/// statement reading a key of that variant (`field`: returns when `this` is that variant).
macro_rules! tagged_variant {
    (new $variant:ident ($ty:ty)) => {
        Self::$variant(<$ty>::default())
    };
    (new $variant:ident { $($(#[$fm:meta])* $field:ident $(as $key:literal)?: $ty:ty),* $(,)? }) => {
        Self::$variant { $($field: <$ty>::default()),* }
    };
    (field $this:ident $k:ident $doc:ident $v:ident $variant:ident ($ty:ty)) => {
        if let Self::$variant(fields) = $this {
            return $crate::dispatch::events::Fields::field(fields, $k, $doc, $v);
        }
    };
    (field $this:ident $k:ident $doc:ident $v:ident $variant:ident {
        $($(#[$fm:meta])* $field:ident $(as $key:literal)?: $ty:ty),* $(,)?
    }) => {
        if let Self::$variant { $($field),* } = $this {
            $(
                if $k == $crate::dispatch::events::lax_key!($field $(, $key)?) {
                    *$field = $crate::dispatch::events::Read::read($doc, $v);
                    return;
                }
            )*
            return;
        }
    };
}
pub(crate) use tagged_variant;

/// A type a [`Lax`] field can hold, read from the JSON shapes serde reads it from out of a
/// `Value` (a count from a non-negative integer, a cost from any number, …).
pub trait LaxValue: Sized {
    fn lax(doc: &Doc, value: Node) -> Option<Self>;
}

impl LaxValue for String {
    fn lax(doc: &Doc, value: Node) -> Option<Self> {
        doc.as_str(value).map(|s| s.into_owned())
    }
}

impl LaxValue for bool {
    fn lax(doc: &Doc, value: Node) -> Option<Self> {
        doc.as_bool(value)
    }
}

impl LaxValue for u64 {
    fn lax(doc: &Doc, value: Node) -> Option<Self> {
        doc.as_number(value)?.as_u64()
    }
}

impl LaxValue for f64 {
    fn lax(doc: &Doc, value: Node) -> Option<Self> {
        doc.as_number(value)?.as_f64()
    }
}

/// An array of elements that read from any JSON value ([`Tagged`], `Value`).
impl<T: Read> LaxValue for Vec<T> {
    fn lax(doc: &Doc, value: Node) -> Option<Self> {
        Some(doc.elements(value)?.map(|e| T::read(doc, e)).collect())
    }
}

/// A field holding a `type`-tagged object (a content block, a Codex item), read leniently:
/// `None` unless it is an object with a string `type` (an unknown one is the enum's `Other`).
#[derive(Debug, Clone, PartialEq)]
pub struct Tagged<T>(pub Option<T>);

impl<T> Default for Tagged<T> {
    fn default() -> Self {
        Self(None)
    }
}

impl<T: Variants> Read for Tagged<T> {
    fn read(doc: &Doc, value: Node) -> Self {
        // The last `type` key counts, as in a map.
        let tag = doc
            .entries(value)
            .filter(|(k, _)| k == "type")
            .last()
            .and_then(|(_, v)| doc.as_str(v));
        Self(tag.map(|tag| {
            let mut event = T::variant(&tag);
            for (k, v) in doc.entries(value) {
                if k != "type" {
                    event.field(&k, doc, v);
                }
            }
            event
        }))
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

impl<T: LaxValue> Read for Lax<T> {
    fn read(doc: &Doc, value: Node) -> Self {
        Self(T::lax(doc, value))
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

/// A struct field read leniently, and only from a JSON object.
#[derive(Debug, Clone, PartialEq)]
pub struct LaxObject<T>(pub Option<T>);

impl<T> Default for LaxObject<T> {
    fn default() -> Self {
        Self(None)
    }
}

impl<T: Fields> Read for LaxObject<T> {
    fn read(doc: &Doc, value: Node) -> Self {
        if !doc.is_object(value) {
            return Self(None);
        }
        let mut out = T::default();
        for (k, v) in doc.entries(value) {
            out.field(&k, doc, v);
        }
        Self(Some(out))
    }
}

impl<T> LaxObject<T> {
    pub fn get(&self) -> Option<&T> {
        self.0.as_ref()
    }
}

/// The events of `stdout` as `Debug` text, and the malformed count (for `events_oracle`).
#[cfg(test)]
pub(super) fn debug_events<E: Variants + std::fmt::Debug>(stdout: &[u8]) -> (String, u64) {
    let mut lines = EventLines::<E>::new(stdout);
    let events: Vec<E> = lines.by_ref().collect();
    (format!("{events:?}"), lines.malformed())
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    tagged_enum! {
        #[derive(Debug, PartialEq)]
        enum Ev {
            "ping" => Ping {
                n: Lax<u64>,
                inner: LaxObject<Inner>,
            },
        }
    }

    lax_struct! {
        #[derive(Debug, PartialEq)]
        struct Inner {
            s: Lax<String>,
        }
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
    /// Keys the three formats read (the oracle draws from them too).
    pub(in crate::dispatch) const KEYS: &[&str] = &[
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
    /// The event and item types of the three formats (the oracle draws from them too).
    pub(in crate::dispatch) const TYPES: &[&str] = &[
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
