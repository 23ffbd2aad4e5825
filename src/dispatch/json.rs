//! One JSON line scanned once into a tape of its values (`Doc`): validated exactly as
//! serde_json validates a `Value` (so a line is rejected exactly when reading it into a
//! `serde_json::Map` would fail), with each string left in place until a reader asks for
//! it. The event readers (`dispatch::events`) navigate the tape: what they do not use is
//! never unescaped or copied, and their `type` lookup sees every key (the last duplicate
//! wins, as in a map).

use serde_json::Value;
use std::borrow::Cow;

/// serde_json's nesting limit: a container at depth 128 is an error.
const MAX_DEPTH: usize = 128;

/// A value of a [`Doc`]: its index on the tape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Node(usize);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Null,
    Bool(bool),
    Number,
    /// A string; `true` when it holds an escape.
    Str(bool),
    Array,
    Object,
}

/// One value on the tape: its kind, its text (`start..end`; a string's without the quotes)
/// and, for a container, the tape index just past its last descendant.
#[derive(Debug, Clone, Copy)]
struct Tok {
    kind: Kind,
    start: usize,
    end: usize,
    next: usize,
}

/// A validated JSON line and the tape of its values (pre-order: an object's keys and
/// values alternate after it).
pub struct Doc<'a> {
    text: &'a str,
    tape: Vec<Tok>,
}

impl<'a> Doc<'a> {
    /// The line when it is one valid JSON object (surrounding JSON whitespace allowed).
    pub fn object(line: &'a [u8]) -> Option<Self> {
        let text = std::str::from_utf8(line).ok()?;
        let mut s = Scanner {
            b: line,
            i: 0,
            tape: Vec::with_capacity(32),
        };
        s.ws();
        if s.peek() != Some(b'{') {
            return None;
        }
        s.value(0)?;
        s.ws();
        (s.i == line.len()).then_some(Doc { text, tape: s.tape })
    }

    /// The top-level object.
    pub fn root(&self) -> Node {
        Node(0)
    }

    fn tok(&self, n: Node) -> Option<&Tok> {
        self.tape.get(n.0)
    }

    /// The index just past `n`'s subtree.
    fn after(&self, n: Node) -> usize {
        match self.tok(n) {
            Some(t) if matches!(t.kind, Kind::Array | Kind::Object) => t.next,
            _ => n.0 + 1,
        }
    }

    /// An object's entries (key, value), in order; empty for anything else.
    pub fn entries(&self, n: Node) -> Entries<'_, 'a> {
        let (at, end) = match self.tok(n) {
            Some(t) if t.kind == Kind::Object => (n.0 + 1, t.next),
            _ => (0, 0),
        };
        Entries { doc: self, at, end }
    }

    /// An array's elements, in order; `None` for anything else.
    pub fn elements(&self, n: Node) -> Option<Elements<'_, 'a>> {
        let t = self.tok(n)?;
        (t.kind == Kind::Array).then_some(Elements {
            doc: self,
            at: n.0 + 1,
            end: t.next,
        })
    }

    pub fn is_object(&self, n: Node) -> bool {
        self.tok(n).is_some_and(|t| t.kind == Kind::Object)
    }

    pub fn as_bool(&self, n: Node) -> Option<bool> {
        match self.tok(n)?.kind {
            Kind::Bool(b) => Some(b),
            _ => None,
        }
    }

    /// A string, unescaped (borrowed from the line when it has no escape).
    pub fn as_str(&self, n: Node) -> Option<Cow<'a, str>> {
        let t = self.tok(n)?;
        let Kind::Str(escaped) = t.kind else {
            return None;
        };
        let raw = self.text.get(t.start..t.end)?;
        Some(if escaped {
            Cow::Owned(unescape(raw))
        } else {
            Cow::Borrowed(raw)
        })
    }

    /// A number, read as serde_json reads it into a `Value`.
    pub fn as_number(&self, n: Node) -> Option<serde_json::Number> {
        let t = self.tok(n)?;
        if t.kind != Kind::Number {
            return None;
        }
        match serde_json::from_str(self.text.get(t.start..t.end)?) {
            Ok(Value::Number(n)) => Some(n),
            _ => None,
        }
    }

    /// The value as a `serde_json::Value` (what the line's text says, verbatim).
    pub fn value(&self, n: Node) -> Value {
        let Some(t) = self.tok(n) else {
            return Value::Null;
        };
        let (start, end) = match t.kind {
            Kind::Str(_) => (t.start.saturating_sub(1), t.end + 1),
            Kind::Array | Kind::Object => (t.start, t.end),
            Kind::Null => return Value::Null,
            Kind::Bool(b) => return Value::Bool(b),
            Kind::Number => (t.start, t.end),
        };
        self.text
            .get(start..end)
            .and_then(|raw| serde_json::from_str(raw).ok())
            .unwrap_or(Value::Null)
    }
}

/// The entries of an object ([`Doc::entries`]).
pub struct Entries<'d, 'a> {
    doc: &'d Doc<'a>,
    at: usize,
    end: usize,
}

impl<'a> Iterator for Entries<'_, 'a> {
    type Item = (Cow<'a, str>, Node);

    fn next(&mut self) -> Option<Self::Item> {
        if self.at >= self.end {
            return None;
        }
        let key = self.doc.as_str(Node(self.at))?;
        let value = Node(self.at + 1);
        self.at = self.doc.after(value);
        Some((key, value))
    }
}

/// The elements of an array ([`Doc::elements`]).
pub struct Elements<'d, 'a> {
    doc: &'d Doc<'a>,
    at: usize,
    end: usize,
}

impl Iterator for Elements<'_, '_> {
    type Item = Node;

    fn next(&mut self) -> Option<Node> {
        if self.at >= self.end {
            return None;
        }
        let n = Node(self.at);
        self.at = self.doc.after(n);
        Some(n)
    }
}

/// The validating scanner behind [`Doc::object`]. Every method returns `None` on the first
/// byte serde_json would refuse.
struct Scanner<'a> {
    b: &'a [u8],
    i: usize,
    tape: Vec<Tok>,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    /// JSON whitespace (serde_json's: space, tab, newline, carriage return).
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> Option<()> {
        (self.peek()? == c).then(|| self.i += 1)
    }

    fn push(&mut self, kind: Kind, start: usize, end: usize) -> usize {
        self.tape.push(Tok {
            kind,
            start,
            end,
            next: 0,
        });
        self.tape.len() - 1
    }

    /// Open the container whose bracket is at `start`, at nesting `depth`: the depth limit,
    /// its tape entry (closed by [`Self::close`]) and the whitespace after the bracket.
    fn open(&mut self, kind: Kind, depth: usize, start: usize) -> Option<usize> {
        if depth + 1 >= MAX_DEPTH {
            return None;
        }
        let at = self.push(kind, start, start);
        self.i += 1;
        self.ws();
        Some(at)
    }

    /// One value at nesting `depth` (the number of containers around it).
    fn value(&mut self, depth: usize) -> Option<()> {
        let start = self.i;
        match self.peek()? {
            b'{' => {
                let at = self.open(Kind::Object, depth, start)?;
                if self.eat(b'}').is_none() {
                    loop {
                        if self.peek()? != b'"' {
                            return None;
                        }
                        self.string()?;
                        self.ws();
                        self.eat(b':')?;
                        self.ws();
                        self.value(depth + 1)?;
                        if !self.next_member(b'}')? {
                            break;
                        }
                    }
                }
                self.close(at);
            }
            b'[' => {
                let at = self.open(Kind::Array, depth, start)?;
                if self.eat(b']').is_none() {
                    loop {
                        self.value(depth + 1)?;
                        if !self.next_member(b']')? {
                            break;
                        }
                    }
                }
                self.close(at);
            }
            b'"' => self.string()?,
            b't' => self.literal(b"true", Kind::Bool(true))?,
            b'f' => self.literal(b"false", Kind::Bool(false))?,
            b'n' => self.literal(b"null", Kind::Null)?,
            b'-' | b'0'..=b'9' => self.number()?,
            _ => return None,
        }
        Some(())
    }

    /// After a member of a container: `,` (another member follows: true) or the
    /// container's `close` byte (it ends: false).
    fn next_member(&mut self, close: u8) -> Option<bool> {
        self.ws();
        match self.peek()? {
            b',' => {
                self.i += 1;
                self.ws();
                Some(true)
            }
            c if c == close => {
                self.i += 1;
                Some(false)
            }
            _ => None,
        }
    }

    /// Ends the container opened at tape index `at`.
    fn close(&mut self, at: usize) {
        let next = self.tape.len();
        let end = self.i;
        if let Some(t) = self.tape.get_mut(at) {
            t.next = next;
            t.end = end;
        }
    }

    fn literal(&mut self, word: &[u8], kind: Kind) -> Option<()> {
        let start = self.i;
        if !self.b.get(start..)?.starts_with(word) {
            return None;
        }
        self.i += word.len();
        self.push(kind, start, self.i);
        Some(())
    }

    /// A number: its extent (every byte a number can hold), then serde_json's own reading
    /// of it (grammar and range: `01`, `1.`, `1e400` are refused, as in a `Value`). A byte
    /// of the extent that does not belong to the number would be refused by serde_json
    /// too, as the next token.
    fn number(&mut self) -> Option<()> {
        let start = self.i;
        while let Some(b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E') = self.peek() {
            self.i += 1;
        }
        let text = self.b.get(start..self.i)?;
        match serde_json::from_slice::<Value>(text) {
            Ok(Value::Number(_)) => {
                self.push(Kind::Number, start, self.i);
                Some(())
            }
            _ => None,
        }
    }

    /// A string (at its opening quote): control characters refused, escapes checked as
    /// serde_json checks them for a `String` (a `\u` surrogate must be a lead followed by
    /// a trail). UTF-8 was checked for the whole line. The specials of 64 bytes are found at
    /// once ([`specials_from`]) and visited in order, the byte after a simple escape
    /// skipped; a `\u` escape, or an escape at the block's end, moves on from past it.
    fn string(&mut self) -> Option<()> {
        self.i += 1;
        let start = self.i;
        let mut escaped = false;
        'blocks: loop {
            let base = self.i;
            let rest = self.b.get(base..)?;
            let mut bits = specials_from(rest);
            while bits != 0 {
                let k = bits.trailing_zeros() as usize;
                let at = base + k;
                match self.b[at] {
                    b'"' => {
                        self.i = at;
                        return self.end_string(start, escaped);
                    }
                    b'\\' => {
                        escaped = true;
                        let code = *self.b.get(at + 1)?;
                        if SIMPLE_ESCAPE[usize::from(code)] == 0 {
                            self.i = at + 1;
                            self.unicode_escape()?;
                            continue 'blocks;
                        }
                        if k + 2 >= 64 {
                            self.i = at + 2;
                            continue 'blocks;
                        }
                        // The escaped byte (a `"` or `\\` is marked too) is not a special.
                        bits &= !0u64 << (k + 2);
                    }
                    // A control character.
                    _ => return None,
                }
            }
            if rest.len() <= 64 {
                // The line ends inside the string.
                return None;
            }
            self.i = base + 64;
        }
    }

    /// The string that started at `start` ends at the quote at `self.i`.
    fn end_string(&mut self, start: usize, escaped: bool) -> Option<()> {
        self.push(Kind::Str(escaped), start, self.i);
        self.i += 1;
        Some(())
    }

    /// The escape whose code (after the backslash) is at `self.i` when it is not a simple
    /// one: a `\u` with four hex digits, a lead surrogate followed by a trail; anything
    /// else is refused. Leaves `self.i` past it.
    fn unicode_escape(&mut self) -> Option<()> {
        if self.b.get(self.i)? != &b'u' {
            return None;
        }
        self.i += 1;
        let n = self.hex4()?;
        if (0xDC00..=0xDFFF).contains(&n) {
            return None;
        }
        if (0xD800..=0xDBFF).contains(&n) {
            if self.b.get(self.i..self.i + 2)? != b"\\u" {
                return None;
            }
            self.i += 2;
            if !(0xDC00..=0xDFFF).contains(&self.hex4()?) {
                return None;
            }
        }
        Some(())
    }

    fn hex4(&mut self) -> Option<u16> {
        let digits = self.b.get(self.i..self.i + 4)?;
        let mut n = 0u16;
        for d in digits {
            n = n << 4 | u16::from(hex(*d)?);
        }
        self.i += 4;
        Some(n)
    }
}

fn hex(d: u8) -> Option<u8> {
    match d {
        b'0'..=b'9' => Some(d - b'0'),
        b'a'..=b'f' => Some(d - b'a' + 10),
        b'A'..=b'F' => Some(d - b'A' + 10),
        _ => None,
    }
}

/// Bit `k` is set when `block[k]` is `"`, `\\` or below 0x20: every special of 64 bytes,
/// exactly (each set bit is one).
#[inline]
fn block_specials(block: &[u8; 64]) -> u64 {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    {
        // SAFETY: the function needs SSE2, which this target enables (it is part of
        // x86_64's baseline); it reads nothing but `block`.
        #[allow(unsafe_code)]
        unsafe {
            block_specials_sse2(block)
        }
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    {
        block_specials_bytes(block)
    }
}

/// [`block_specials`] sixteen bytes at a time: compare with `"` and `\\`, and
/// `min(byte, 0x1f) == byte` for the control characters; one bit per byte.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[target_feature(enable = "sse2")]
fn block_specials_sse2(block: &[u8; 64]) -> u64 {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
        _mm_set_epi64x,
    };
    let quote = _mm_set1_epi8(b'"' as i8);
    let slash = _mm_set1_epi8(b'\\' as i8);
    let control = _mm_set1_epi8(0x1f);
    let mut bits = 0u64;
    for (n, chunk) in block.chunks_exact(16).enumerate() {
        let word = |at: usize| {
            i64::from_le_bytes(
                chunk
                    .get(at..at + 8)
                    .and_then(|w| w.try_into().ok())
                    .unwrap_or_default(),
            )
        };
        let x = _mm_set_epi64x(word(8), word(0));
        let marked = _mm_or_si128(
            _mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, slash)),
            _mm_cmpeq_epi8(_mm_min_epu8(x, control), x),
        );
        bits |= u64::from(_mm_movemask_epi8(marked) as u16) << (16 * n);
    }
    bits
}

/// [`block_specials`] a byte at a time (the reference, and the other targets' way).
#[cfg_attr(all(target_arch = "x86_64", target_feature = "sse2"), allow(dead_code))]
fn block_specials_bytes(block: &[u8; 64]) -> u64 {
    block
        .iter()
        .enumerate()
        .filter(|&(_, &c)| c == b'"' || c == b'\\' || c < 0x20)
        .fold(0, |bits, (k, _)| bits | 1 << k)
}

/// [`block_specials`] of the 64 bytes `rest` starts with; a shorter `rest` is padded with
/// spaces (never special), so the last bytes of a line are scanned like any block.
#[inline]
fn specials_from(rest: &[u8]) -> u64 {
    match rest.first_chunk::<64>() {
        Some(block) => block_specials(block),
        None => {
            let mut block = [b' '; 64];
            block[..rest.len()].copy_from_slice(rest);
            block_specials(&block)
        }
    }
}

/// The text of a string the scanner accepted, escapes decoded. Decoding only shrinks (an
/// escape of 2 bytes gives 1, `\\uXXXX` at most 3, a surrogate pair's 12 bytes 4), so the
/// output is a buffer of the input's size written at `o <= i`. The backslashes of 64 bytes
/// are found at once ([`block_specials`]: in an accepted string the only other marks are
/// escaped bytes, which are skipped), and the plain run before each is copied whole.
fn unescape(raw: &str) -> String {
    let b = raw.as_bytes();
    let mut out = vec![0u8; b.len() + RUN];
    // `run`: where the plain bytes not yet copied start; `i`: the next block.
    let (mut i, mut run, mut o) = (0, 0, 0);
    'blocks: while let Some(rest) = b.get(i..).filter(|rest| !rest.is_empty()) {
        let base = i;
        let mut bits = specials_from(rest);
        while bits != 0 {
            let at = base + bits.trailing_zeros() as usize;
            o = copy_run(b, run..at, &mut out, o);
            (run, o) = escape_at(b, at, &mut out, o);
            if run >= base + 64 {
                i = run;
                continue 'blocks;
            }
            bits &= !0u64 << (run - base);
        }
        i = base + 64;
    }
    o = copy_run(b, run..b.len(), &mut out, o);
    out.truncate(o);
    // Valid: the line was UTF-8 and every escape gives a whole character.
    String::from_utf8(out).unwrap_or_default()
}

/// The longest plain run [`copy_run`] copies as one fixed-size block.
const RUN: usize = 16;

/// Copies the plain bytes `b[from]` to `out` at `o` (which has `RUN` bytes of room past
/// the decoded text); returns the index after them. A short run is copied as `RUN` bytes
/// (the bytes past it are overwritten by what follows).
#[inline]
fn copy_run(b: &[u8], from: std::ops::Range<usize>, out: &mut [u8], o: usize) -> usize {
    let n = from.len();
    match (b.get(from.start..from.start + RUN), out.get_mut(o..o + RUN)) {
        (Some(src), Some(dst)) if n <= RUN => dst.copy_from_slice(src),
        _ => {
            if let (Some(src), Some(dst)) = (b.get(from), out.get_mut(o..o + n)) {
                dst.copy_from_slice(src);
            }
        }
    }
    o + n
}

/// The byte a one-character escape stands for (`\\n` → newline), 0 for `u` and for what
/// is not an escape.
const SIMPLE_ESCAPE: [u8; 256] = {
    let mut t = [0u8; 256];
    t[b'"' as usize] = b'"';
    t[b'\\' as usize] = b'\\';
    t[b'/' as usize] = b'/';
    t[b'b' as usize] = 0x08;
    t[b'f' as usize] = 0x0c;
    t[b'n' as usize] = b'\n';
    t[b'r' as usize] = b'\r';
    t[b't' as usize] = b'\t';
    t
};

/// Decodes the escape at `b[i]` (a backslash the scanner accepted) into `out` at `o`;
/// returns the indexes after it in both.
#[inline]
fn escape_at(b: &[u8], i: usize, out: &mut [u8], o: usize) -> (usize, usize) {
    let code = b.get(i + 1).copied().unwrap_or(b'\\');
    match SIMPLE_ESCAPE[usize::from(code)] {
        0 => unicode_escape_at(b, i + 2, out, o),
        byte => {
            if let Some(d) = out.get_mut(o) {
                *d = byte;
            }
            (i + 2, o + 1)
        }
    }
}

/// Decodes the four hex digits of a `\\u` escape at `b[i]` (and the trail of a surrogate
/// pair) into `out` at `o`; returns the indexes after them.
fn unicode_escape_at(b: &[u8], mut i: usize, out: &mut [u8], o: usize) -> (usize, usize) {
    let n = u32::from(hex4_at(b, i));
    i += 4;
    let c = if (0xD800..=0xDBFF).contains(&n) {
        let low = u32::from(hex4_at(b, i + 2));
        i += 6;
        0x1_0000 + ((n - 0xD800) << 10) + (low.wrapping_sub(0xDC00) & 0x3FF)
    } else {
        n
    };
    let c = char::from_u32(c).unwrap_or(char::REPLACEMENT_CHARACTER);
    let len = out.get_mut(o..).map_or(0, |d| c.encode_utf8(d).len());
    (i, o + len)
}

fn hex4_at(b: &[u8], i: usize) -> u16 {
    b.get(i..i + 4)
        .unwrap_or_default()
        .iter()
        .fold(0u16, |n, d| n << 4 | u16::from(hex(*d).unwrap_or(0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The scanner accepts exactly what serde_json reads into a map.
    fn agrees(line: &str) {
        let ours = Doc::object(line.as_bytes()).is_some();
        let serde = serde_json::from_str::<serde_json::Map<String, Value>>(line).is_ok();
        assert_eq!(ours, serde, "{line}");
    }

    #[test]
    fn validates_as_serde_json_does() {
        for line in [
            "{}",
            " {\"a\" : [ 1 , -2.5e3 , true , null , \"x\" ] } \r\n",
            "{\"a\":1,}",
            "{\"a\":[1,]}",
            "{\"a\":01}",
            "{\"a\":1.}",
            "{\"a\":-}",
            "{\"a\":1e400}",
            "{\"a\":-1e400}",
            "{\"a\":1e-400}",
            "{\"a\":18446744073709551616}",
            "{\"a\":1.5.2}",
            "{\"a\":1true}",
            "{\"a\":tru}",
            "{\"a\":\"\\ud800\"}",
            "{\"a\":\"\\udc00\"}",
            "{\"a\":\"\\ud83d\\ude00\"}",
            "{\"a\":\"\\ud83d\\u0041\"}",
            "{\"a\":\"\\ud83dx\"}",
            "{\"a\":\"\\u00e9\\/\\b\\f\\n\\r\\t\\\"\\\\\"}",
            "{\"a\":\"\\x\"}",
            "{\"a\":\"\t\"}",
            "{\"a\":\"\u{7f}é\"}",
            "{\"a\" 1}",
            "{\"a\":1 \"b\":2}",
            "{1:2}",
            "[1]",
            "\"s\"",
            "{\"a\":1} x",
            "{\"a\":1}\u{c}",
            "{\"a\":\"b",
        ] {
            agrees(line);
        }
        assert!(Doc::object(b"{\"a\":\"\xff\"}").is_none());
        let nest = |n: usize| format!("{{\"a\":{}1{}}}", "[".repeat(n), "]".repeat(n));
        for n in [125, 126, 127, 128] {
            agrees(&nest(n));
        }
    }

    #[test]
    fn strings_unescape_as_serde_json_does() {
        let line =
            r#"{"a":"x\"y\\z\/\b\f\n\r\t\u00e9\ud83d\ude00\u0041end","b":"plain","a2":"é\u00E9"}"#;
        let doc = Doc::object(line.as_bytes()).unwrap();
        let want: serde_json::Map<String, Value> = serde_json::from_str(line).unwrap();
        for (k, v) in doc.entries(doc.root()) {
            assert_eq!(doc.as_str(v).as_deref(), want[k.as_ref()].as_str(), "{k}");
            assert_eq!(doc.value(v), want[k.as_ref()]);
        }
    }

    /// Every special at every offset of the first blocks (and past them, in the tail), so
    /// escapes straddle the 64-byte block edges.
    #[test]
    fn specials_at_every_offset_of_a_block() {
        for tail in [
            "\\\"",
            "\\\\",
            "\\n",
            "\\u00e9",
            "\\ud83d\\ude00",
            "\\ud83d",
            "\\x",
            "\u{1}",
            "\"",
            "\\",
        ] {
            for pad in 0..140 {
                let text = format!("{}{tail}{}", "a".repeat(pad), "b".repeat(pad % 7));
                let line = format!("{{\"k\":\"{text}\",\"z\":1}}");
                agrees(&line);
                if let Some(doc) = Doc::object(line.as_bytes()) {
                    let want: serde_json::Map<String, Value> = serde_json::from_str(&line).unwrap();
                    let k = doc.entries(doc.root()).next().unwrap().1;
                    assert_eq!(doc.as_str(k).as_deref(), want["k"].as_str(), "{line}");
                }
            }
        }
    }

    /// Pieces of a string's text: plain runs of every length (so escapes fall on every
    /// offset of the eight-byte words), escapes valid and not, raw quotes and control
    /// characters, multi-byte characters.
    const PIECES: &[&str] = &[
        "a",
        "ab",
        "abc",
        "abcdefg",
        "abcdefghijklmnop",
        "é",
        "😀",
        " ",
        "\\\"",
        "\\\\",
        "\\/",
        "\\b",
        "\\f",
        "\\n",
        "\\r",
        "\\t",
        "\\u00e9",
        "\\u0041",
        "\\uD83D\\uDE00",
        "\\ud800",
        "\\udc00",
        "\\ud83dx",
        "\\u12",
        "\\x",
        "\\",
        "\"",
        "\t",
        "\u{1}",
        "\u{1f}",
        "\u{7f}",
    ];

    proptest::proptest! {
        /// The 64-byte masks mark exactly the specials, wherever they fall.
        #[test]
        fn block_specials_marks_every_special_and_nothing_else(
            bytes in proptest::collection::vec(proptest::sample::select(&[b'a', b'"', b'\\', 0, 0x1f, 0x20, 0x7f, 0x80, 0xff][..]), 64)
        ) {
            let block: [u8; 64] = bytes.try_into().unwrap();
            proptest::prop_assert_eq!(block_specials(&block), block_specials_bytes(&block));
        }

        /// Strings of every shape are accepted and decoded exactly as serde_json does.
        #[test]
        fn strings_agree_with_serde_json(
            pieces in proptest::collection::vec(proptest::sample::select(PIECES), 0..120)
        ) {
            let text: String = pieces.concat();
            let line = format!("{{\"k\":\"{text}\",\"z\":1}}");
            let ours = Doc::object(line.as_bytes());
            let serde = serde_json::from_str::<serde_json::Map<String, Value>>(&line);
            proptest::prop_assert_eq!(ours.is_some(), serde.is_ok(), "{}", line);
            if let (Some(doc), Ok(want)) = (ours, serde) {
                for (k, v) in doc.entries(doc.root()) {
                    if k == "k" {
                        let got = doc.as_str(v);
                        proptest::prop_assert_eq!(got.as_deref(), want["k"].as_str());
                    }
                }
            }
        }
    }
}
