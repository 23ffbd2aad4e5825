//! Finding fingerprints: stable across runs for the same defect, even when lines shift.
//!
//! Rule (v2; also SARIF `partialFingerprints["arev/v2"]` and `primaryLocationLineHash`):
//! the first 16 bytes, as hex, of
//! `sha256("v2\0" + file + "\0" + category + "\0" + anchor + "\0" + occurrence)`, where
//! - `file` is the repo-relative path (empty for a target-wide finding);
//! - `category` is trimmed and lower-cased (ASCII letters only);
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
use std::sync::{Arc, Mutex};

/// `s` with runs of whitespace collapsed to one space and the ends trimmed.
fn normalise(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A file's lines, whitespace-normalised, with each line's occurrence number (how many
/// earlier lines have the same text), computed once per file.
pub(crate) struct FileLines {
    /// The text as read.
    text: String,
    lines: Vec<String>,
    occurrence: Vec<u32>,
}

impl FileLines {
    /// How many lines the file has.
    pub(crate) fn len(&self) -> usize {
        self.lines.len()
    }

    /// The whitespace-normalised text of the line at `index` (0 is line 1).
    pub(crate) fn line(&self, index: usize) -> Option<&str> {
        self.lines.get(index).map(String::as_str)
    }

    /// The lines of `text`, kept.
    pub(crate) fn from_text(text: String) -> Self {
        let lines: Vec<String> = text.lines().map(normalise).collect();
        let mut seen: HashMap<&str, u32> = HashMap::new();
        let occurrence = lines
            .iter()
            .map(|l| {
                let n = seen.entry(l.as_str()).or_insert(0);
                *n += 1;
                *n - 1
            })
            .collect();
        Self {
            text,
            lines,
            occurrence,
        }
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
            .map(|text| Arc::new(FileLines::from_text(text)));
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
            .map(FileLines::from_text),
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
    // ASCII lower case, as the rule has always been (fingerprints must not move).
    h.update(category.trim().to_ascii_lowercase().as_bytes());
    h.update(b"\0");
    h.update(text.as_bytes());
    h.update(b"\0");
    h.update(occurrence.to_string().as_bytes());
    hex::encode(&h.finalize()[..16])
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
    fn file_lines_are_normalised_with_occurrences_and_crlf() {
        let f = FileLines::from_text("  a  b\r\nx\n\tx \n\u{a0}é\u{3000}ü\n\nx".to_string());
        let lines: Vec<&str> = (0..f.len()).map(|i| f.line(i).unwrap()).collect();
        assert_eq!(lines, ["a b", "x", "x", "é ü", "", "x"]);
        assert_eq!(f.occurrence, [0, 0, 1, 0, 0, 2]);
        assert_eq!(f.line(6), None);
        assert_eq!(FileLines::from_text(String::new()).len(), 0);
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
