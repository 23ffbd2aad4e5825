//! The one JSONL reader behind every event-format parser (Claude stream-json, Codex
//! `--json`, Gemini stream-json), and the lenient field wrappers their typed events use.
//!
//! One JSON object per line. Blank lines are skipped; a line that is not a JSON object (a
//! truncated last line, garbage, `[1,2]`, `42`) is counted as malformed. A JSON object is
//! then read as the format's event enum, tagged by its string `type`: an unknown `type` is
//! that enum's catch-all, and a known event whose fields have unexpected shapes still parses,
//! field by field (`Lax`, `LaxObject`, `Tagged`): a field that is missing or of the wrong type
//! reads as absent. An object without a string `type` is skipped, not malformed.
//!
//! Reading is typed and single-pass: each line is parsed once, straight into the event
//! (no `serde_json::Value` tree), and what an event does not use is parsed without being
//! kept ([`Skip`]: every string unescaped into serde_json's scratch buffer, every number
//! range-checked, so a line is rejected exactly when reading it into a `Value` would fail).
//! The events are declared with [`lax_struct!`] and [`tagged_enum!`] rather than serde's
//! derives: a derived struct fails on a duplicate key and skips unknown values without
//! validating them, and `#[serde(tag = "type")]` buffers the whole object first.
//! Two cases are left to the exact path, the line read into a `Value` map first (what the
//! readers did before): a line that fails the one pass (malformed or not), and a tagged
//! object with two `type` keys (a map keeps the last one, which one pass cannot). Duplicate
//! keys otherwise keep the last value, as a map does.

use serde::de::{
    self, DeserializeOwned, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor as _,
};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::fmt;
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
            match read_line(line) {
                Ok(Some(event)) => return Some(event),
                Ok(None) => {}
                Err(()) => self.malformed += 1,
            }
        }
        None
    }
}

/// One line: `Err` when it is not a JSON object, `Ok(None)` when it has no string `type`
/// (or, on the exact path, the enum does not read it).
fn read_line<E: Variants>(line: &[u8]) -> Result<Option<E>, ()> {
    let mut de = serde_json::Deserializer::from_slice(line);
    let one_pass = (&mut de)
        .deserialize_map(ShapeVisitor::<TaggedShape<E>>(PhantomData))
        .and_then(|event| de.end().map(|()| event));
    if let Ok(event) = one_pass {
        return Ok(event);
    }
    // The exact path (rare: see the module docs).
    let object = serde_json::from_slice::<Map<String, Value>>(line).map_err(|_| ())?;
    Ok(Tagged::<E>::deserialize(Value::Object(object))
        .ok()
        .and_then(|t| t.0))
}

/// A struct read from a JSON object key by key: [`lax_struct!`] implements it.
pub trait Fields: Default {
    /// Read `value` into the field named `key`; the value of any other key is skipped
    /// ([`Skip`]). Overwrites: the last of duplicate keys wins.
    fn field<'de, D: Deserializer<'de>>(&mut self, key: &str, value: D) -> Result<(), D::Error>;
}

/// An enum read from a JSON object tagged by its string `type`: [`tagged_enum!`]
/// implements it.
pub trait Variants: Sized {
    /// The variant for `tag` with every field absent (the catch-all `Other` for an
    /// unknown tag).
    fn variant(tag: &str) -> Self;
    /// Read `value` into the current variant's field named `key` (see [`Fields::field`]).
    fn field<'de, D: Deserializer<'de>>(&mut self, key: &str, value: D) -> Result<(), D::Error>;
}

/// A struct whose fields are all read leniently ([`Lax`], [`LaxObject`], [`Tagged`], or a
/// verbatim `Value`), each absent by default; `field as "key"` reads the field from another
/// key. Unknown keys are skipped.
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
            fn field<'de, D: serde::Deserializer<'de>>(
                &mut self,
                key: &str,
                value: D,
            ) -> Result<(), D::Error> {
                $(
                    if key == $crate::dispatch::events::lax_key!($field $(, $key)?) {
                        self.$field = serde::Deserialize::deserialize(value)?;
                        return Ok(());
                    }
                )*
                $crate::dispatch::events::skip(value)
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
/// `Other` for every other tag (its fields are skipped).
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

            fn field<'de, D: serde::Deserializer<'de>>(
                &mut self,
                key: &str,
                value: D,
            ) -> Result<(), D::Error> {
                $($crate::dispatch::events::tagged_variant!(field self key value $variant $body);)*
                $crate::dispatch::events::skip(value)
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
    (field $this:ident $k:ident $v:ident $variant:ident ($ty:ty)) => {
        if let Self::$variant(fields) = $this {
            return $crate::dispatch::events::Fields::field(fields, $k, $v);
        }
    };
    (field $this:ident $k:ident $v:ident $variant:ident {
        $($(#[$fm:meta])* $field:ident $(as $key:literal)?: $ty:ty),* $(,)?
    }) => {
        if let Self::$variant { $($field),* } = $this {
            $(
                if $k == $crate::dispatch::events::lax_key!($field $(, $key)?) {
                    *$field = serde::Deserialize::deserialize($v)?;
                    return Ok(());
                }
            )*
            return $crate::dispatch::events::skip($v);
        }
    };
}
pub(crate) use tagged_variant;

/// Parse a value and keep nothing of it (see [`Skip`]).
pub fn skip<'de, D: Deserializer<'de>>(value: D) -> Result<(), D::Error> {
    Skip::deserialize(value).map(|_| ())
}

/// A JSON value parsed and dropped: strings are unescaped (into the parser's scratch
/// buffer, not a `String`) and numbers range-checked exactly as reading a `Value` would,
/// so a value is skipped exactly when it could have been read. (serde's `IgnoredAny` takes
/// serde_json's faster path, which accepts a lone surrogate escape or `1e400`.)
pub struct Skip;

impl<'de> Deserialize<'de> for Skip {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(SkipVisitor)
    }
}

struct SkipVisitor;

impl<'de> de::Visitor<'de> for SkipVisitor {
    type Value = Skip;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_str<E>(self, _: &str) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_unit<E>(self) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_none<E>(self) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Skip, D::Error> {
        Skip::deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Skip, A::Error> {
        while seq.next_element::<Skip>()?.is_some() {}
        Ok(Skip)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Skip, A::Error> {
        while map.next_entry::<Skip, Skip>()?.is_some() {}
        Ok(Skip)
    }
}

/// A string borrowed from the line when it has no escapes (an object key, a `type`).
struct Str<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Str<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(StrVisitor)
    }
}

struct StrVisitor;

impl<'de> de::Visitor<'de> for StrVisitor {
    type Value = Str<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Self::Value, E> {
        Ok(Str(Cow::Borrowed(s)))
    }
    fn visit_str<E>(self, s: &str) -> Result<Self::Value, E> {
        Ok(Str(Cow::Owned(s.to_owned())))
    }
    fn visit_string<E>(self, s: String) -> Result<Self::Value, E> {
        Ok(Str(Cow::Owned(s)))
    }
}

/// A value read as `T` when it has one of the shapes `T` takes, else (after parsing it, see
/// [`Skip`]) as absent: the reading behind [`Lax`], [`LaxObject`] and [`Tagged`].
trait Shape<'de>: Sized {
    type Out;
    fn expecting() -> &'static str;
    fn absent() -> Self::Out;
    fn on_bool<E: de::Error>(_: bool) -> Result<Self::Out, E> {
        Ok(Self::absent())
    }
    fn on_u64<E: de::Error>(_: u64) -> Result<Self::Out, E> {
        Ok(Self::absent())
    }
    fn on_i64<E: de::Error>(_: i64) -> Result<Self::Out, E> {
        Ok(Self::absent())
    }
    fn on_f64<E: de::Error>(_: f64) -> Result<Self::Out, E> {
        Ok(Self::absent())
    }
    fn on_borrowed_str<E: de::Error>(s: &'de str) -> Result<Self::Out, E> {
        Self::on_str(s)
    }
    fn on_str<E: de::Error>(_: &str) -> Result<Self::Out, E> {
        Ok(Self::absent())
    }
    fn on_string<E: de::Error>(s: String) -> Result<Self::Out, E> {
        Self::on_str(&s)
    }
    fn on_seq<A: SeqAccess<'de>>(seq: A) -> Result<Self::Out, A::Error> {
        SkipVisitor.visit_seq(seq)?;
        Ok(Self::absent())
    }
    fn on_map<A: MapAccess<'de>>(map: A) -> Result<Self::Out, A::Error> {
        SkipVisitor.visit_map(map)?;
        Ok(Self::absent())
    }
}

/// The visitor of a [`Shape`].
struct ShapeVisitor<S>(PhantomData<S>);

impl<'de, S: Shape<'de>> de::Visitor<'de> for ShapeVisitor<S> {
    type Value = S::Out;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(S::expecting())
    }
    fn visit_bool<E: de::Error>(self, b: bool) -> Result<S::Out, E> {
        S::on_bool(b)
    }
    fn visit_i64<E: de::Error>(self, n: i64) -> Result<S::Out, E> {
        S::on_i64(n)
    }
    fn visit_u64<E: de::Error>(self, n: u64) -> Result<S::Out, E> {
        S::on_u64(n)
    }
    fn visit_f64<E: de::Error>(self, n: f64) -> Result<S::Out, E> {
        S::on_f64(n)
    }
    fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<S::Out, E> {
        S::on_borrowed_str(s)
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<S::Out, E> {
        S::on_str(s)
    }
    fn visit_string<E: de::Error>(self, s: String) -> Result<S::Out, E> {
        S::on_string(s)
    }
    fn visit_unit<E>(self) -> Result<S::Out, E> {
        Ok(S::absent())
    }
    fn visit_none<E>(self) -> Result<S::Out, E> {
        Ok(S::absent())
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<S::Out, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<S::Out, A::Error> {
        S::on_seq(seq)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<S::Out, A::Error> {
        S::on_map(map)
    }
}

/// A type a [`Lax`] field can hold: the JSON shapes it is read from (as serde reads it
/// from a `Value`); every other shape reads as absent.
pub trait LaxValue: Sized {
    fn from_bool(_: bool) -> Option<Self> {
        None
    }
    fn from_u64(_: u64) -> Option<Self> {
        None
    }
    fn from_i64(_: i64) -> Option<Self> {
        None
    }
    fn from_f64(_: f64) -> Option<Self> {
        None
    }
    fn from_str(_: &str) -> Option<Self> {
        None
    }
    fn from_string(s: String) -> Option<Self> {
        Self::from_str(&s)
    }
    /// Read from an array; `None` (absent) when `Self` is not an array type, after
    /// skipping its elements.
    fn from_seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<Option<Self>, A::Error> {
        while seq.next_element::<Skip>()?.is_some() {}
        Ok(None)
    }
}

impl LaxValue for String {
    fn from_str(s: &str) -> Option<Self> {
        Some(s.to_owned())
    }
    fn from_string(s: String) -> Option<Self> {
        Some(s)
    }
}

impl LaxValue for bool {
    fn from_bool(b: bool) -> Option<Self> {
        Some(b)
    }
}

impl LaxValue for u64 {
    fn from_u64(n: u64) -> Option<Self> {
        Some(n)
    }
    fn from_i64(n: i64) -> Option<Self> {
        u64::try_from(n).ok()
    }
}

impl LaxValue for f64 {
    fn from_u64(n: u64) -> Option<Self> {
        Some(n as f64)
    }
    fn from_i64(n: i64) -> Option<Self> {
        Some(n as f64)
    }
    fn from_f64(n: f64) -> Option<Self> {
        Some(n)
    }
}

/// An array of elements that read from any JSON value ([`Tagged`], `Value`).
impl<T: DeserializeOwned> LaxValue for Vec<T> {
    fn from_seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<Option<Self>, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
        while let Some(t) = seq.next_element::<T>()? {
            out.push(t);
        }
        Ok(Some(out))
    }
}

/// The [`Shape`] of a [`Lax`] field.
struct LaxShape<T>(PhantomData<T>);

impl<'de, T: LaxValue> Shape<'de> for LaxShape<T> {
    type Out = Option<T>;
    fn expecting() -> &'static str {
        "any JSON value"
    }
    fn absent() -> Option<T> {
        None
    }
    fn on_bool<E: de::Error>(b: bool) -> Result<Option<T>, E> {
        Ok(T::from_bool(b))
    }
    fn on_u64<E: de::Error>(n: u64) -> Result<Option<T>, E> {
        Ok(T::from_u64(n))
    }
    fn on_i64<E: de::Error>(n: i64) -> Result<Option<T>, E> {
        Ok(T::from_i64(n))
    }
    fn on_f64<E: de::Error>(n: f64) -> Result<Option<T>, E> {
        Ok(T::from_f64(n))
    }
    fn on_str<E: de::Error>(s: &str) -> Result<Option<T>, E> {
        Ok(T::from_str(s))
    }
    fn on_string<E: de::Error>(s: String) -> Result<Option<T>, E> {
        Ok(T::from_string(s))
    }
    fn on_seq<A: SeqAccess<'de>>(seq: A) -> Result<Option<T>, A::Error> {
        T::from_seq(seq)
    }
}

/// The [`Shape`] of a [`LaxObject`] field: only an object.
struct ObjectShape<T>(PhantomData<T>);

impl<'de, T: Fields> Shape<'de> for ObjectShape<T> {
    type Out = Option<T>;
    fn expecting() -> &'static str {
        "any JSON value"
    }
    fn absent() -> Option<T> {
        None
    }
    fn on_map<A: MapAccess<'de>>(mut map: A) -> Result<Option<T>, A::Error> {
        let mut out = T::default();
        while let Some(Str(key)) = map.next_key()? {
            map.next_value_seed(FieldSeed(&mut out, &key))?;
        }
        Ok(Some(out))
    }
}

/// Reads one map value into the field `.1` of a [`Fields`] struct.
struct FieldSeed<'a, T>(&'a mut T, &'a str);

impl<'de, T: Fields> DeserializeSeed<'de> for FieldSeed<'_, T> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        self.0.field(self.1, d)
    }
}

/// Reads one map value into the field `.1` of a [`Variants`] enum's variant.
struct VariantFieldSeed<'a, T>(&'a mut T, &'a str);

impl<'de, T: Variants> DeserializeSeed<'de> for VariantFieldSeed<'_, T> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        self.0.field(self.1, d)
    }
}

/// A `type` value: the tag when it is a string.
struct TagShape;

impl<'de> Shape<'de> for TagShape {
    type Out = Option<Cow<'de, str>>;
    fn expecting() -> &'static str {
        "any JSON value"
    }
    fn absent() -> Self::Out {
        None
    }
    fn on_borrowed_str<E: de::Error>(s: &'de str) -> Result<Self::Out, E> {
        Ok(Some(Cow::Borrowed(s)))
    }
    fn on_str<E: de::Error>(s: &str) -> Result<Self::Out, E> {
        Ok(Some(Cow::Owned(s.to_owned())))
    }
    fn on_string<E: de::Error>(s: String) -> Result<Self::Out, E> {
        Ok(Some(Cow::Owned(s)))
    }
}

impl<'de> Deserialize<'de> for Tag<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ShapeVisitor::<TagShape>(PhantomData))
            .map(Tag)
    }
}

/// The value of a `type` key.
struct Tag<'de>(Option<Cow<'de, str>>);

/// The [`Shape`] of a [`Tagged`] value (and of a whole line, read with `deserialize_map`):
/// an object with a string `type`.
struct TaggedShape<T>(PhantomData<T>);

/// Where the reading of a tagged object is.
enum TagState<T> {
    /// No `type` key yet: the values before it are kept.
    Unseen(Vec<(String, Value)>),
    /// A string `type`: the rest are read into its variant.
    Tagged(T),
    /// A `type` that is not a string: the object reads as absent.
    NotString,
}

/// The error that hands a line to the exact path: a second `type` key (a map keeps the
/// last one, but this one pass has read the object as the first).
const SECOND_TYPE: &str = "a second `type` key";

impl<'de, T: Variants> Shape<'de> for TaggedShape<T> {
    type Out = Option<T>;
    fn expecting() -> &'static str {
        "a JSON object"
    }
    fn absent() -> Option<T> {
        None
    }
    fn on_map<A: MapAccess<'de>>(mut map: A) -> Result<Option<T>, A::Error> {
        let mut state = TagState::Unseen(Vec::new());
        while let Some(Str(key)) = map.next_key()? {
            if key == "type" {
                let TagState::Unseen(before) = state else {
                    return Err(de::Error::custom(SECOND_TYPE));
                };
                state = match map.next_value::<Tag>()?.0 {
                    Some(tag) => {
                        let mut event = T::variant(&tag);
                        for (k, v) in before {
                            event.field(&k, v).map_err(de::Error::custom)?;
                        }
                        TagState::Tagged(event)
                    }
                    None => TagState::NotString,
                };
                continue;
            }
            match &mut state {
                TagState::Unseen(before) => before.push((key.into_owned(), map.next_value()?)),
                TagState::Tagged(event) => map.next_value_seed(VariantFieldSeed(event, &key))?,
                TagState::NotString => {
                    map.next_value::<Skip>()?;
                }
            }
        }
        Ok(match state {
            TagState::Tagged(event) => Some(event),
            TagState::Unseen(_) | TagState::NotString => None,
        })
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

impl<'de, T: Variants> Deserialize<'de> for Tagged<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ShapeVisitor::<TaggedShape<T>>(PhantomData))
            .map(Self)
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

impl<'de, T: LaxValue> Deserialize<'de> for Lax<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ShapeVisitor::<LaxShape<T>>(PhantomData))
            .map(Self)
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

/// A struct field read leniently, and only from a JSON object (serde would also read a
/// JSON array positionally into a struct).
#[derive(Debug, Clone, PartialEq)]
pub struct LaxObject<T>(pub Option<T>);

impl<T> Default for LaxObject<T> {
    fn default() -> Self {
        Self(None)
    }
}

impl<'de, T: Fields> Deserialize<'de> for LaxObject<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ShapeVisitor::<ObjectShape<T>>(PhantomData))
            .map(Self)
    }
}

impl<T> LaxObject<T> {
    pub fn get(&self) -> Option<&T> {
        self.0.as_ref()
    }
}

/// The events of `stdout` as `Debug` text, and the malformed count (for `events_oracle`).
#[cfg(test)]
pub(super) fn debug_events<E: Variants + fmt::Debug>(stdout: &[u8]) -> (String, u64) {
    let mut lines = EventLines::<E>::new(stdout);
    let events: Vec<E> = lines.by_ref().collect();
    (format!("{events:?}"), lines.malformed())
}

#[cfg(test)]
mod tests {
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
