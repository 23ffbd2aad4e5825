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
use std::path::Path;
use std::rc::Rc;

fn normalise(s: &str) -> String {
    let t = s.trim();
    // Most lines are already normalised (ASCII, single spaces between words): copy them.
    let b = t.as_bytes();
    // `char::is_whitespace` in ASCII: space, \t, \n, \x0b, \x0c, \r.
    let ws = |c: u8| c == b' ' || (b'\t'..=b'\r').contains(&c);
    let plain = b
        .iter()
        .enumerate()
        .all(|(i, &c)| c.is_ascii() && (!ws(c) || c == b' ' && i > 0 && b[i - 1] != b' '));
    if plain {
        return t.to_string();
    }
    let mut out = String::with_capacity(t.len());
    for w in t.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(w);
    }
    out
}

/// A file's lines, whitespace-normalised, with each line's occurrence number (how many
/// earlier lines have the same text), computed once per file.
pub(crate) struct FileLines {
    lines: Vec<String>,
    occurrence: Vec<usize>,
}

impl FileLines {
    /// The file's lines, whitespace-normalised (index 0 is line 1).
    pub(crate) fn lines(&self) -> &[String] {
        &self.lines
    }

    /// The lines of `text` (for tests and callers holding the text already).
    pub(crate) fn new(text: &str) -> Self {
        let lines: Vec<String> = text.lines().map(normalise).collect();
        let mut seen: HashMap<&str, usize> = HashMap::with_capacity(lines.len());
        let occurrence = lines
            .iter()
            .map(|l| {
                let n = seen.entry(l.as_str()).or_insert(0);
                *n += 1;
                *n - 1
            })
            .collect();
        Self { lines, occurrence }
    }
}

/// (anchor text, occurrence) of 1-based `line`, or None when out of range or when every
/// line is blank.
fn anchor(f: &FileLines, line: u32) -> Option<(&str, usize)> {
    let lines = &f.lines;
    let at = (line as usize)
        .checked_sub(1)
        .filter(|i| *i < lines.len())?;
    let pick = (at..lines.len())
        .chain((0..at).rev())
        .find(|i| !lines[*i].is_empty())?;
    Some((lines[pick].as_str(), f.occurrence[pick]))
}

/// Normalised file lines, read and split once per file while a report is built.
#[derive(Default)]
pub(crate) struct Texts(HashMap<String, Option<Rc<FileLines>>>);

impl Texts {
    pub(crate) fn get(&mut self, root: &Path, file: &str) -> Option<Rc<FileLines>> {
        self.0
            .entry(file.to_string())
            .or_insert_with(|| {
                std::fs::read_to_string(root.join(file))
                    .ok()
                    .map(|t| Rc::new(FileLines::new(&t)))
            })
            .clone()
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
            .map(|t| FileLines::new(&t)),
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
    h.update(category.trim().to_ascii_lowercase().as_bytes());
    h.update(b"\0");
    h.update(text.as_bytes());
    h.update(b"\0");
    h.update(occurrence.to_string().as_bytes());
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
