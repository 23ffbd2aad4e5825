//! Finding fingerprints: stable across runs for the same defect, even when lines shift.
//!
//! Rule (v2; also SARIF `partialFingerprints["arev/v2"]` and `primaryLocationLineHash`):
//! the first 16 bytes, as hex, of
//! `sha256("v2\0" + file + "\0" + category + "\0" + anchor + "\0" + occurrence)`, where
//! - `file` is the repo-relative path (empty for a target-wide finding);
//! - `category` is trimmed and lower-cased;
//! - `anchor` is the flagged line's text with runs of whitespace collapsed to one space and
//!   the ends trimmed; a blank flagged line is replaced by the nearest non-blank line below it
//!   (else above it). Without a readable file/line the anchor is the normalised description;
//! - `occurrence` is how many earlier lines of the file have the same normalised text, so two
//!   identical lines (`}` or a repeated call) flagged for the same category stay distinct.
//!
//! So an unrelated edit that moves the line (lines added or removed elsewhere, re-indentation)
//! keeps the fingerprint; editing the flagged line itself, renaming the file, or adding an
//! identical line above it changes it. The line number and the agent's wording (which vary
//! between runs) are deliberately not part of it.

use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::ops::Range;
use std::path::Path;
use std::sync::{Arc, Mutex};

fn normalise(s: &str) -> String {
    let mut extra = String::new();
    let t = s.trim();
    match normalise_into(t, &mut extra) {
        None => t.to_string(),
        Some(_) => extra,
    }
}

/// Trimmed `t` whitespace-normalised: None when it already is (ASCII, single spaces
/// between words: most lines), else the range of `extra` the normalised copy was appended to.
fn normalise_into(t: &str, extra: &mut String) -> Option<Range<usize>> {
    if is_plain(t.as_bytes()) {
        return None;
    }
    let start = extra.len();
    for (n, w) in t.split_whitespace().enumerate() {
        if n > 0 {
            extra.push(' ');
        }
        extra.push_str(w);
    }
    Some(start..extra.len())
}

/// Whether trimmed text is already normal: ASCII, no whitespace but single spaces
/// (`char::is_whitespace` in ASCII: space, \t, \n, \x0b, \x0c, \r). Eight bytes at a time:
/// a high bit is non-ASCII; an ASCII byte `x` is in 9..=13 when `x + 0x77` reaches 0x80
/// and `x + 0x72` does not; a space is a zero byte of `x ^ 0x20`, told exactly (no borrow
/// runs on), so two marks next to each other, or across words, are two spaces in a row.
fn is_plain(t: &[u8]) -> bool {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let mut after_space = false;
    let mut words = t.chunks_exact(8);
    for word in &mut words {
        let w = u64::from_le_bytes(word.try_into().unwrap_or([0x80; 8]));
        if w & HI != 0 {
            return false;
        }
        if w.wrapping_add(LO * 0x77) & !w.wrapping_add(LO * 0x72) & HI != 0 {
            return false;
        }
        let x = w ^ (LO * u64::from(b' '));
        let spaces = !((x & !HI).wrapping_add(!HI) | x) & HI;
        if spaces & (spaces << 8) != 0 || (after_space && spaces & 0x80 != 0) {
            return false;
        }
        after_space = spaces >> 63 != 0;
    }
    words.remainder().iter().all(|&c| {
        let ok = c.is_ascii() && !(b'\t'..=b'\r').contains(&c) && !(c == b' ' && after_space);
        after_space = c == b' ';
        ok
    })
}

/// Where one normalised line is: `start..end` of the file's text followed by its normalised
/// copies (`extra` begins at `text.len()`; an empty line reads the same from either). Eight
/// bytes a line: a file of 2 GiB or more is not indexed (`FileLines::from_text`).
#[derive(Clone, Copy)]
struct Span {
    start: u32,
    end: u32,
}

/// A file's lines, whitespace-normalised, with each line's occurrence number (how many
/// earlier lines have the same text), computed once per file. The text is kept as read and
/// a line that is already normal (most are) is a range of it: no allocation per line.
pub(crate) struct FileLines {
    text: String,
    /// Normalised copies of the lines that are not already normal.
    extra: String,
    spans: Vec<Span>,
    occurrence: Vec<u32>,
}

impl FileLines {
    /// How many lines the file has.
    pub(crate) fn len(&self) -> usize {
        self.spans.len()
    }

    /// The whitespace-normalised text of the line at `index` (0 is line 1).
    pub(crate) fn line(&self, index: usize) -> Option<&str> {
        let span = self.spans.get(index)?;
        let (start, end) = (span.start as usize, span.end as usize);
        match start.checked_sub(self.text.len()) {
            None => self.text.get(start..end),
            Some(at) => self.extra.get(at..end - self.text.len()),
        }
    }

    /// The lines of `text`, kept; None when it is too large to index (2 GiB: the offsets are
    /// `u32`, and the normalised copies are at most as long as the text).
    pub(crate) fn from_text(text: String) -> Option<Self> {
        if text.len() > (u32::MAX / 2) as usize {
            return None;
        }
        let mut extra = String::new();
        let base = text.as_ptr() as usize;
        let n = text.len();
        let span = |a: usize, b: usize| Span {
            start: a as u32,
            end: b as u32,
        };
        let spans: Vec<Span> = super::lines(&text)
            .map(|l| {
                let t = l.trim();
                match normalise_into(t, &mut extra) {
                    Some(r) => span(n + r.start, n + r.end),
                    None => {
                        let a = t.as_ptr() as usize - base;
                        span(a, a + t.len())
                    }
                }
            })
            .collect();
        let mut this = Self {
            text,
            extra,
            spans,
            occurrence: vec![],
        };
        let mut seen: HashMap<&str, u32, foldhash::fast::RandomState> =
            HashMap::with_capacity_and_hasher(this.spans.len(), Default::default());
        let occurrence = (0..this.spans.len())
            .map(|i| {
                let n = seen.entry(this.line(i).unwrap_or_default()).or_insert(0);
                *n += 1;
                *n - 1
            })
            .collect();
        this.occurrence = occurrence;
        Some(this)
    }
}

/// The file's text as read (what the symbol index scans).
impl AsRef<str> for FileLines {
    fn as_ref(&self) -> &str {
        &self.text
    }
}

impl super::LineAt for FileLines {
    fn line_at(&self, index: usize) -> Option<&str> {
        self.line(index)
    }
}

/// (anchor text, occurrence) of 1-based `line`, or None when out of range or when every
/// line is blank.
fn anchor(f: &FileLines, line: u32) -> Option<(&str, u32)> {
    let n = f.len();
    let at = (line as usize).checked_sub(1).filter(|i| *i < n)?;
    let text = |i: usize| f.line(i).unwrap_or_default();
    let pick = (at..n)
        .chain((0..at).rev())
        .find(|i| !text(*i).is_empty())?;
    Some((text(pick), f.occurrence[pick]))
}

/// Normalised file lines, read and split once per file: for a review, the same map serves
/// the rounds' suppression checks and the report's fingerprints (`ReviewResult::texts`).
#[derive(Default, Clone)]
pub(crate) struct Texts(Arc<Mutex<HashMap<String, Option<Arc<FileLines>>>>>);

impl std::fmt::Debug for Texts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let files = self.0.lock().map(|m| m.len()).unwrap_or(0);
        write!(f, "Texts({files} files)")
    }
}

impl Texts {
    pub(crate) fn get(&self, root: &Path, file: &str) -> Option<Arc<FileLines>> {
        let mut map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(lines) = map.get(file) {
            return lines.clone();
        }
        let lines = std::fs::read_to_string(root.join(file))
            .ok()
            .and_then(FileLines::from_text)
            .map(Arc::new);
        map.insert(file.to_string(), lines.clone());
        lines
    }
}

/// The fingerprint of a finding (see the module docs for the rule). Reads `root/file`.
pub fn fingerprint(
    root: &Path,
    file: Option<&str>,
    line: Option<u32>,
    category: &str,
    description: &str,
) -> String {
    let lines = match (file, line) {
        (Some(f), Some(_)) => std::fs::read_to_string(root.join(f))
            .ok()
            .and_then(FileLines::from_text),
        _ => None,
    };
    fingerprint_with(lines.as_ref(), line, file, category, description)
}

/// The fingerprint given the file's normalised lines (from `Texts`).
pub(crate) fn fingerprint_with(
    lines: Option<&FileLines>,
    line: Option<u32>,
    file: Option<&str>,
    category: &str,
    description: &str,
) -> String {
    let located = match (lines, line) {
        (Some(t), Some(l)) => anchor(t, l),
        _ => None,
    };
    let described;
    let (text, occurrence) = match located {
        Some(x) => x,
        None => {
            described = normalise(description);
            (described.as_str(), 0)
        }
    };
    let mut h = Sha256::new();
    h.update(b"v2\0");
    h.update(file.unwrap_or("").as_bytes());
    h.update(b"\0");
    // The category lower-cased a chunk at a time (one fingerprint per finding: no String).
    let mut lower = [0u8; 64];
    for chunk in category.trim().as_bytes().chunks(lower.len()) {
        let part = &mut lower[..chunk.len()];
        part.copy_from_slice(chunk);
        part.make_ascii_lowercase();
        h.update(&*part);
    }
    h.update(b"\0");
    h.update(text.as_bytes());
    h.update(b"\0");
    h.update(itoa::Buffer::new().format(occurrence).as_bytes());
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(32);
    for b in &h.finalize()[..16] {
        out.push(char::from(HEX[usize::from(b >> 4)]));
        out.push(char::from(HEX[usize::from(b & 0xf)]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `is_plain` computes, a byte at a time.
    fn plain_by_bytes(t: &[u8]) -> bool {
        let mut after_space = false;
        t.iter().all(|&c| {
            let ok = c.is_ascii() && !(b'\t'..=b'\r').contains(&c) && !(c == b' ' && after_space);
            after_space = c == b' ';
            ok
        })
    }

    proptest::proptest! {
        /// The word-at-a-time check agrees with the byte loop wherever the bytes fall.
        #[test]
        fn is_plain_agrees_with_a_byte_loop(
            bytes in proptest::collection::vec(proptest::sample::select(&[b'a', b' ', b'\t', b'\n', 0x0b, 0x0c, b'\r', 0x08, 0x0e, 0x1f, 0x7f, 0x80, 0xc3, 0xa9, b'!'][..]), 0..40)
        ) {
            proptest::prop_assert_eq!(is_plain(&bytes), plain_by_bytes(&bytes));
        }
    }

    #[test]
    fn two_spaces_are_found_at_every_offset_and_across_words() {
        for at in 0..20 {
            let mut t = vec![b'a'; 24];
            t[at] = b' ';
            assert!(is_plain(&t), "{at}");
            t[at + 1] = b' ';
            assert!(!is_plain(&t), "{at}");
        }
    }

    fn fp_in(text: &str, line: u32, category: &str) -> String {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/a.rs"), text).unwrap();
        fingerprint(dir.path(), Some("src/a.rs"), Some(line), category, "desc")
    }

    const SRC: &str = "fn a() {\n    x.unwrap();\n}\n\nfn b() {\n    x.unwrap();\n}\n";

    #[test]
    fn survives_line_shifts_and_reindentation() {
        let base = fp_in(SRC, 2, "error-handling");
        let shifted = format!("{}{SRC}", "// unrelated\n".repeat(10));
        assert_eq!(base, fp_in(&shifted, 12, "error-handling"));
        let reindented = SRC.replace("    x.unwrap();", "\tx.unwrap(); ");
        assert_eq!(base, fp_in(&reindented, 2, "error-handling"));
        assert_eq!(base, fp_in(SRC, 2, " Error-Handling "));
    }

    #[test]
    fn distinguishes_identical_lines_categories_and_edits() {
        let first = fp_in(SRC, 2, "error-handling");
        assert_ne!(first, fp_in(SRC, 6, "error-handling"), "second occurrence");
        assert_ne!(first, fp_in(SRC, 2, "logic"), "category");
        let edited = SRC.replacen("x.unwrap()", "x.expect(\"x\")", 1);
        assert_ne!(
            first,
            fp_in(&edited, 2, "error-handling"),
            "flagged line edited"
        );
        // The second occurrence becomes the first when the first is edited away: a known,
        // documented limit.
        assert_eq!(first, fp_in(&edited, 6, "error-handling"));
    }

    #[test]
    fn file_lines_are_normalised_with_occurrences_and_crlf() {
        let f =
            FileLines::from_text("  a  b\r\nx\n\tx \n\u{a0}é\u{3000}ü\n\nx".to_string()).unwrap();
        let lines: Vec<&str> = (0..f.len()).map(|i| f.line(i).unwrap()).collect();
        assert_eq!(lines, ["a b", "x", "x", "é ü", "", "x"]);
        assert_eq!(f.occurrence, [0, 0, 1, 0, 0, 2]);
        assert_eq!(f.line(6), None);
        assert_eq!(FileLines::from_text(String::new()).unwrap().len(), 0);
    }

    #[test]
    fn normalise_collapses_every_whitespace_run() {
        for s in [
            "a b",
            "  a  b ",
            "a\tb",
            "a\x0bb\x0c",
            "\u{a0}a\u{3000}b",
            "é  ü",
            "",
            "   ",
            "a\x1fb",
        ] {
            let want = s.split_whitespace().collect::<Vec<_>>().join(" ");
            assert_eq!(normalise(s), want, "{s:?}");
        }
    }

    #[test]
    fn blank_lines_anchor_to_the_next_code_and_out_of_range_uses_the_description() {
        assert_eq!(fp_in(SRC, 4, "style"), fp_in(SRC, 5, "style"));
        let dir = tempfile::tempdir().unwrap();
        let a = fingerprint(dir.path(), Some("missing.rs"), Some(3), "c", "Some  text");
        let b = fingerprint(dir.path(), Some("missing.rs"), Some(9), "c", "Some text");
        assert_eq!(a, b);
        assert_ne!(a, fingerprint(dir.path(), None, None, "c", "Some text"));
        assert_eq!(fp_in(SRC, 99, "c"), fp_in(SRC, 0, "c"));
    }
}
