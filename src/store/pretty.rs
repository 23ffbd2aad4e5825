//! Pretty JSON as arev writes its records (report.json, meta.json, …): byte for byte what
//! `serde_json::to_writer_pretty` writes (two-space indent), with each line break and its
//! indentation written at once instead of one write per indent level — a report of 1,000
//! findings has ~35,000 indented lines.

use serde::Serialize;
use std::io::{self, Write};

/// `value` as pretty JSON into `w` (serde_json's layout).
pub fn write_pretty<W: Write, T: Serialize + ?Sized>(w: W, value: &T) -> serde_json::Result<()> {
    let mut ser = serde_json::Serializer::with_formatter(w, Indented::default());
    value.serialize(&mut ser)
}

/// A line break followed by the indentation of the deepest level written in one piece;
/// deeper levels add to it.
const BREAK: &[u8; 1 + 2 * 32] =
    b"\n                                                                ";

#[derive(Default)]
struct Indented {
    depth: usize,
    has_value: bool,
}

/// A line break and the indentation of `depth` (two spaces a level), after a comma unless
/// `first`: the layout of arev's pretty records and of the JSON in its prompts.
pub(crate) fn json_line<W: ?Sized + Write>(w: &mut W, depth: usize, first: bool) -> io::Result<()> {
    if !first {
        w.write_all(b",")?;
    }
    let width = 2 * depth;
    let here = width.min(BREAK.len() - 1);
    w.write_all(&BREAK[..1 + here])?;
    for _ in 0..(width - here) / 2 {
        w.write_all(b"  ")?;
    }
    Ok(())
}

impl Indented {
    /// An array or object opens: one level deeper, nothing in it yet.
    fn open<W: ?Sized + Write>(&mut self, w: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.depth += 1;
        self.has_value = false;
        w.write_all(bracket)
    }

    /// It closes: on a line of its own at its parent's depth unless it is empty.
    fn close<W: ?Sized + Write>(&mut self, w: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.depth -= 1;
        if self.has_value {
            json_line(w, self.depth, true)?;
        }
        w.write_all(bracket)
    }
}

impl serde_json::ser::Formatter for Indented {
    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.open(w, b"[")
    }

    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.close(w, b"]")
    }

    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        json_line(w, self.depth, first)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.open(w, b"{")
    }

    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.close(w, b"}")
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        json_line(w, self.depth, first)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ours(v: &serde_json::Value) -> String {
        let mut out = vec![];
        write_pretty(&mut out, v).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn writes_what_serde_json_pretty_writes() {
        let mut deep = json!({"leaf": [1, {"x": null}]});
        for i in 0..40 {
            deep = if i % 2 == 0 {
                json!([deep, i])
            } else {
                json!({"k": deep, "e": [], "o": {}})
            };
        }
        let values = [
            json!(null),
            json!("a \"quoted\" \n line"),
            json!([]),
            json!({}),
            json!([[], {}, [[]], {"a": {}}]),
            json!({"findings": [{"id": "F1", "line": 3, "cites": ["H1"], "x": 1.5}], "n": -2}),
            deep,
        ];
        for v in &values {
            assert_eq!(ours(v), serde_json::to_string_pretty(v).unwrap(), "{v}");
        }
    }
}
