//! A JSON value that keeps object keys in document order, for editing a user's
//! `settings.json` without reordering it (serde_json's own `Map` sorts keys unless the
//! crate-wide `preserve_order` feature is on, which would change every other output).

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use std::fmt;

#[derive(Debug, Clone, PartialEq)]
pub enum OJson {
    Null,
    Bool(bool),
    Num(serde_json::Number),
    Str(String),
    Arr(Vec<OJson>),
    /// Keys in document order.
    Obj(Vec<(String, OJson)>),
}

impl OJson {
    pub fn str(s: &str) -> Self {
        Self::Str(s.to_string())
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Self::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The value at `key` of an object.
    pub fn get(&self, key: &str) -> Option<&OJson> {
        match self {
            Self::Obj(kv) => kv.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut OJson> {
        match self {
            Self::Obj(kv) => kv.iter_mut().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Append `key` to an object (no-op on other values).
    pub fn push(&mut self, key: &str, value: OJson) {
        if let Self::Obj(kv) = self {
            kv.push((key.to_string(), value));
        }
    }

    /// Remove `key` from an object.
    pub fn remove(&mut self, key: &str) {
        if let Self::Obj(kv) = self {
            kv.retain(|(k, _)| k != key);
        }
    }

    pub fn is_empty_container(&self) -> bool {
        match self {
            Self::Obj(kv) => kv.is_empty(),
            Self::Arr(v) => v.is_empty(),
            _ => false,
        }
    }

    /// Pretty JSON (2 spaces) with a trailing newline.
    pub fn to_pretty(&self) -> String {
        let mut s = crate::output::json_string(self, true).unwrap_or_default();
        s.push('\n');
        s
    }
}

impl Serialize for OJson {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Null => s.serialize_unit(),
            Self::Bool(b) => s.serialize_bool(*b),
            Self::Num(n) => n.serialize(s),
            Self::Str(v) => s.serialize_str(v),
            Self::Arr(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for i in items {
                    seq.serialize_element(i)?;
                }
                seq.end()
            }
            Self::Obj(kv) => {
                let mut map = s.serialize_map(Some(kv.len()))?;
                for (k, v) in kv {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

struct V;

impl<'de> Visitor<'de> for V {
    type Value = OJson;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E>(self) -> Result<OJson, E> {
        Ok(OJson::Null)
    }
    fn visit_none<E>(self) -> Result<OJson, E> {
        Ok(OJson::Null)
    }
    fn visit_bool<E>(self, b: bool) -> Result<OJson, E> {
        Ok(OJson::Bool(b))
    }
    fn visit_i64<E>(self, n: i64) -> Result<OJson, E> {
        Ok(OJson::Num(n.into()))
    }
    fn visit_u64<E>(self, n: u64) -> Result<OJson, E> {
        Ok(OJson::Num(n.into()))
    }
    fn visit_f64<E: serde::de::Error>(self, n: f64) -> Result<OJson, E> {
        serde_json::Number::from_f64(n)
            .map(OJson::Num)
            .ok_or_else(|| E::custom("a number that is not finite"))
    }
    fn visit_str<E>(self, v: &str) -> Result<OJson, E> {
        Ok(OJson::Str(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<OJson, E> {
        Ok(OJson::Str(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<OJson, A::Error> {
        let mut v = Vec::new();
        while let Some(x) = seq.next_element()? {
            v.push(x);
        }
        Ok(OJson::Arr(v))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<OJson, A::Error> {
        let mut kv = Vec::new();
        while let Some((k, v)) = map.next_entry::<String, OJson>()? {
            kv.push((k, v));
        }
        Ok(OJson::Obj(kv))
    }
}

impl<'de> Deserialize<'de> for OJson {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<OJson, D::Error> {
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_in_document_order() {
        let text = r#"{"zeta": 1, "alpha": {"y": [true, null, 2.5, -3], "b": "s"}, "m": {}}"#;
        let v: OJson = serde_json::from_str(text).unwrap();
        let out = v.to_pretty();
        let zi = out.find("zeta").unwrap();
        let ai = out.find("alpha").unwrap();
        let yi = out.find("\"y\"").unwrap();
        let bi = out.find("\"b\"").unwrap();
        assert!(zi < ai && yi < bi, "{out}");
        let back: serde_json::Value = serde_json::from_str(&out).unwrap();
        let orig: serde_json::Value = serde_json::from_str(text).unwrap();
        assert_eq!(back, orig);
    }
}
