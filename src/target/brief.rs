//! CONTEXT_BRIEF: a ≤ 2 KB summary of the target computed from the target bytes only.
//!
//! Code: per file a `### path` line, then the first line of each top-level item and the
//! TODO/FIXME/HACK/XXX markers (`L12: text`). Diff: per changed file `### path (+A/-R)`, the
//! hunk headers' function context and the markers / new top-level items among added lines.
//! Spec: every `#`/`##` heading with the first sentence of its section, plus planned-work
//! markers (Phase N, Future, TODO, Will add, will be implemented). Deterministic.

/// Hard cap on the brief, in bytes (including the final `…` line when truncated).
pub(crate) const BRIEF_CAP: usize = 2048;
/// Manifest files whose items are extracted: more can never fit in the cap (each file
/// costs at least a `### path` line).
pub(crate) const BRIEF_FILES: usize = 80;
/// Per-line limit, in characters.
const LINE_CHARS: usize = 100;
/// Items kept per file before the cap applies (bounds the work on huge files).
const ITEMS_PER_FILE: usize = 40;

const ITEM_KEYWORDS: &[&str] = &[
    "fn",
    "pub",
    "struct",
    "enum",
    "trait",
    "impl",
    "mod",
    "type",
    "const",
    "static",
    "union",
    "unsafe",
    "async",
    "extern",
    "macro_rules!",
    "class",
    "def",
    "function",
    "export",
    "interface",
    "func",
    "package",
    "module",
    "namespace",
    "typedef",
    "var",
    "let",
    "abstract",
    "public",
    "private",
    "protected",
    "sealed",
    "object",
    "record",
    "protocol",
    "extension",
];

const MARKERS: &[&str] = &["TODO", "FIXME", "HACK", "XXX"];

/// `s` cut to `max` characters (with a trailing `…` when cut).
fn clip(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => s.to_owned(),
        Some((idx, _)) => {
            let mut out = s[..idx].to_owned();
            out.push('…');
            out
        }
    }
}

/// Whether an unindented line starts a top-level item (heuristic over common languages).
fn is_top_level_item(line: &str) -> bool {
    let Some(first) = line.chars().next() else {
        return false;
    };
    if first.is_whitespace() {
        return false;
    }
    if line.starts_with("#define") {
        return true;
    }
    let mut words = line.split(|c: char| c.is_whitespace() || matches!(c, '(' | '<' | '{' | ':'));
    let head = words.next().unwrap_or("");
    if !ITEM_KEYWORDS.contains(&head) {
        return false;
    }
    // `pub use …` / `export * from …` re-exports are noise, not items.
    const REEXPORTS: &[&str] = &[
        "pub use ",
        "pub(crate) use ",
        "pub(super) use ",
        "export * ",
    ];
    !REEXPORTS.iter().any(|p| line.starts_with(p))
}

/// The first TODO/FIXME/HACK/XXX marker in `line` as a whole word: the text from it on.
fn marker(line: &str) -> Option<&str> {
    let bytes = line.as_bytes();
    let mut best: Option<usize> = None;
    for m in MARKERS {
        let mut from = 0;
        while let Some(pos) = line[from..].find(m) {
            let at = from + pos;
            let end = at + m.len();
            let word_char = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
            let before_ok = at == 0 || !word_char(bytes[at - 1]);
            let after_ok = end >= bytes.len() || !word_char(bytes[end]);
            if before_ok && after_ok {
                best = Some(best.map_or(at, |b| b.min(at)));
                break;
            }
            from = end;
        }
    }
    best.map(|at| &line[at..])
}

/// Top-level items and markers of one code file, as `L<n>: text` lines.
pub(crate) fn code_items(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (idx, line) in text.lines().enumerate() {
        if out.len() >= ITEMS_PER_FILE {
            break;
        }
        let n = idx + 1;
        if is_top_level_item(line) {
            out.push(format!("L{n}: {}", clip(line.trim_end(), LINE_CHARS)));
        } else if let Some(m) = marker(line) {
            out.push(format!("L{n}: {}", clip(m.trim_end(), LINE_CHARS)));
        }
    }
    out
}

/// The brief of code files: `(path, items)` in manifest order.
pub(crate) fn code_brief<'a>(files: impl IntoIterator<Item = (&'a str, &'a [String])>) -> String {
    let mut lines = Vec::new();
    for (path, items) in files {
        lines.push(format!("### {path}"));
        lines.extend(items.iter().cloned());
        if lines.iter().map(|l| l.len() + 1).sum::<usize>() > BRIEF_CAP {
            break;
        }
    }
    finish(&lines)
}

/// The brief of a spec (a Markdown plan/design): headings with their first sentence, and
/// planned-work markers.
pub(crate) fn spec_brief(text: &str) -> String {
    let all: Vec<&str> = text.lines().collect();
    let mut lines = Vec::new();
    let mut in_fence = false;
    for (idx, raw) in all.iter().enumerate() {
        let line = raw.trim_end();
        if line.trim_start().starts_with("```") || line.trim_start().starts_with("~~~") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        let n = idx + 1;
        if line.starts_with("# ") || line.starts_with("## ") {
            let heading = clip(line, LINE_CHARS);
            match first_sentence(&all[idx + 1..]) {
                Some(s) => lines.push(format!("L{n}: {heading} — {}", clip(&s, 160))),
                None => lines.push(format!("L{n}: {heading}")),
            }
        } else if is_planned_work(line) {
            lines.push(format!("L{n}: {}", clip(line.trim(), LINE_CHARS)));
        }
    }
    finish(&lines)
}

/// The first sentence of the section that starts at `rest` (before the next heading).
fn first_sentence(rest: &[&str]) -> Option<String> {
    let mut in_fence = false;
    for raw in rest {
        let line = raw.trim();
        if line.starts_with("```") || line.starts_with("~~~") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence || line.is_empty() {
            continue;
        }
        if line.starts_with('#') {
            return None;
        }
        if line.starts_with('|') || line.starts_with("---") || line.starts_with("<!--") {
            continue;
        }
        let body = strip_list_marker(line);
        let end = body
            .match_indices(['.', '!', '?'])
            .map(|(i, _)| i + 1)
            .find(|&i| i == body.len() || body[i..].starts_with(' '))
            .unwrap_or(body.len());
        return Some(body[..end].to_owned());
    }
    None
}

fn strip_list_marker(line: &str) -> &str {
    for m in ["- ", "* ", "+ ", "> "] {
        if let Some(rest) = line.strip_prefix(m) {
            return rest.trim_start();
        }
    }
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 {
        if let Some(rest) = line[digits..].strip_prefix(". ") {
            return rest.trim_start();
        }
    }
    line
}

fn is_planned_work(line: &str) -> bool {
    if line.contains("Future") || line.contains("TODO") || line.contains("Will add") {
        return true;
    }
    if line.to_ascii_lowercase().contains("will be implemented") {
        return true;
    }
    // `Phase N`
    line.match_indices("Phase ").any(|(i, m)| {
        line[i + m.len()..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_digit())
    })
}

/// One changed file while reading a patch.
#[derive(Debug)]
struct DiffFile {
    path: String,
    added: u32,
    removed: u32,
    binary: bool,
    deleted: bool,
    notes: Vec<String>,
}

impl DiffFile {
    /// Keep a note (the first `ITEMS_PER_FILE` only).
    fn note(&mut self, note: String) {
        if self.notes.len() < ITEMS_PER_FILE {
            self.notes.push(note);
        }
    }

    /// A lower bound of the bytes this file adds to the brief (`### path …` and its notes,
    /// each with its newline).
    fn brief_bytes(&self) -> usize {
        self.path.len() + 5 + self.notes.iter().map(|n| n.len() + 1).sum::<usize>()
    }

    fn header(&self) -> String {
        if self.binary {
            format!("### {} (binary)", self.path)
        } else if self.deleted {
            format!("### {} (deleted, -{})", self.path, self.removed)
        } else {
            format!("### {} (+{}/-{})", self.path, self.added, self.removed)
        }
    }
}

/// Path from a `diff --git a/X b/Y` line: Y (best effort; refined by `+++`/`---`).
fn path_from_diff_git(rest: &str) -> String {
    match rest.rfind(" b/") {
        Some(i) => unquote(&rest[i + 3..]),
        None => unquote(rest),
    }
}

/// A header's path: without git's trailing tab (after a name holding a space) and quotes.
fn unquote(s: &str) -> String {
    s.strip_suffix('\t')
        .unwrap_or(s)
        .trim_matches('"')
        .to_owned()
}

/// The brief of a whole unified patch at once.
pub(crate) fn diff_brief(patch: &str) -> String {
    let mut brief = DiffBrief::default();
    brief.feed(patch);
    brief.finish()
}

/// The brief of a unified patch fed piece by piece (each piece whole lines, e.g. one file's
/// part of the patch), so that the patch itself is never held: per file only its counts and
/// at most `ITEMS_PER_FILE` notes are kept, and once the brief is past its cap later files
/// are not even noted.
#[derive(Debug, Default)]
pub(crate) struct DiffBrief {
    files: Vec<DiffFile>,
    in_hunk: bool,
    new_line: u32,
    /// Bytes of the brief lines of the files before the last one.
    done_bytes: usize,
}

impl DiffBrief {
    pub(crate) fn feed(&mut self, text: &str) {
        for line in text.lines() {
            self.line(line);
        }
    }

    fn line(&mut self, line: &str) {
        if let Some(rest) = line.strip_prefix("diff --git ") {
            if let Some(prev) = self.files.last() {
                self.done_bytes += prev.brief_bytes();
            }
            if self.done_bytes > BRIEF_CAP {
                // Nothing of this file can show: count it no more.
                self.in_hunk = false;
                return;
            }
            self.files.push(DiffFile {
                path: path_from_diff_git(rest),
                added: 0,
                removed: 0,
                binary: false,
                deleted: false,
                notes: Vec::new(),
            });
            self.in_hunk = false;
            return;
        }
        if self.done_bytes > BRIEF_CAP {
            return;
        }
        let Some(file) = self.files.last_mut() else {
            return;
        };
        if let Some(rest) = line.strip_prefix("@@ ") {
            self.in_hunk = true;
            // "-a,b +c,d @@ context"
            let mut parts = rest.splitn(3, ' ');
            let _old = parts.next();
            let new = parts.next().unwrap_or("+0");
            self.new_line = new
                .trim_start_matches('+')
                .split(',')
                .next()
                .and_then(|n| n.parse().ok())
                .unwrap_or(0);
            let context = parts
                .next()
                .and_then(|r| r.strip_prefix("@@"))
                .map(str::trim)
                .unwrap_or("");
            if !context.is_empty() {
                file.note(format!(
                    "L{}: @@ {}",
                    self.new_line,
                    clip(context, LINE_CHARS)
                ));
            }
            return;
        }
        if !self.in_hunk {
            if let Some(p) = line.strip_prefix("+++ b/") {
                file.path = unquote(p);
            } else if line.starts_with("deleted file mode") {
                file.deleted = true;
            } else if let Some(p) = line.strip_prefix("--- a/") {
                file.path = unquote(p);
            } else if line.starts_with("Binary files ") {
                file.binary = true;
            }
            return;
        }
        match line.as_bytes().first() {
            Some(b'+') => {
                file.added += 1;
                let text = &line[1..];
                if is_top_level_item(text) {
                    file.note(format!(
                        "L{}: {}",
                        self.new_line,
                        clip(text.trim_end(), LINE_CHARS)
                    ));
                } else if let Some(m) = marker(text) {
                    file.note(format!(
                        "L{}: {}",
                        self.new_line,
                        clip(m.trim_end(), LINE_CHARS)
                    ));
                }
                self.new_line += 1;
            }
            Some(b'-') => file.removed += 1,
            Some(b' ') => self.new_line += 1,
            _ => {}
        }
    }

    pub(crate) fn finish(self) -> String {
        let mut lines = Vec::new();
        for f in &self.files {
            lines.push(f.header());
            lines.extend(f.notes.iter().cloned());
        }
        finish(&lines)
    }
}

/// Join `lines` and cap the result at `BRIEF_CAP` bytes, cutting at a line boundary (or a
/// char boundary) and ending with a `…` line when something was left out.
pub(crate) fn finish(lines: &[String]) -> String {
    let mut out = String::new();
    for l in lines {
        out.push_str(l);
        out.push('\n');
    }
    if out.len() <= BRIEF_CAP {
        return out;
    }
    const ELLIPSIS: &str = "…\n";
    let budget = BRIEF_CAP - ELLIPSIS.len();
    let mut cut = out.as_bytes()[..=budget]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1)
        .min(budget);
    if cut == 0 {
        cut = budget;
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
    }
    out.truncate(cut);
    out.push_str(ELLIPSIS);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_items_lists_items_and_markers() {
        let text = "use std::io;\n\npub fn a() {\n    // TODO inner\n}\n#[derive(Debug)]\nstruct S;\nimpl S {}\n// FIXME: later\nconst X: u8 = 1; // XXXL not a marker\npub use foo::bar;\n";
        let items = code_items(text);
        assert_eq!(
            items,
            vec![
                "L3: pub fn a() {",
                "L4: TODO inner",
                "L7: struct S;",
                "L8: impl S {}",
                "L9: FIXME: later",
                "L10: const X: u8 = 1; // XXXL not a marker",
            ]
        );
    }

    #[test]
    fn code_items_clip_long_lines() {
        let long = format!("fn {}() {{}}\n", "x".repeat(300));
        let items = code_items(&long);
        assert_eq!(items.len(), 1);
        assert!(items[0].chars().count() <= LINE_CHARS + 6);
        assert!(items[0].ends_with('…'));
    }

    #[test]
    fn brief_is_capped_at_2048_bytes_on_a_char_boundary() {
        let items: Vec<String> = (0..200).map(|i| format!("L{i}: fn é{i}() ✓")).collect();
        let b = code_brief([("a.rs", items.as_slice())]);
        assert!(b.len() <= BRIEF_CAP, "{}", b.len());
        assert!(b.ends_with("…\n"));
        assert!(b.starts_with("### a.rs\n"));
        // One giant line: cut at a char boundary.
        let giant = vec!["é".repeat(3000)];
        let g = finish(&giant);
        assert!(g.len() <= BRIEF_CAP);
        assert!(g.ends_with("…\n"));
        // Short briefs are untouched.
        assert_eq!(finish(&["a".to_owned()]), "a\n");
    }

    #[test]
    fn spec_brief_headings_sentences_and_markers() {
        let text = "# Title\nIntro here. More.\n\n## Spec\n\n- First point! Second.\n```\n## not a heading\n```\n## Design\n| table |\nThe design is simple.\nPhase 2 adds caching.\nFuture: sharding\nThis will be implemented later\nPhase x is not a phase\n";
        let b = spec_brief(text);
        assert_eq!(
            b,
            "L1: # Title — Intro here.\nL4: ## Spec — First point!\nL10: ## Design — The design is simple.\nL13: Phase 2 adds caching.\nL14: Future: sharding\nL15: This will be implemented later\n"
        );
    }

    #[test]
    fn diff_brief_counts_and_notes() {
        let patch = "diff --git a/s p.rs b/s p.rs\nnew file mode 100644\nindex 0..1\n--- /dev/null\n+++ b/s p.rs\t\n@@ -0,0 +1 @@\n+x\ndiff --git a/src/a.rs b/src/a.rs\nindex 1..2 100644\n--- a/src/a.rs\n+++ b/src/a.rs\n@@ -1,2 +1,3 @@ fn main() {\n ctx\n-old\n+new // TODO fix\n+fn added() {}\ndiff --git a/gone.txt b/gone.txt\ndeleted file mode 100644\n--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\ndiff --git a/img.png b/img.png\nBinary files a/img.png and b/img.png differ\n";
        let b = diff_brief(patch);
        assert_eq!(
            b,
            "### s p.rs (+1/-0)\n### src/a.rs (+2/-1)\nL1: @@ fn main() {\nL2: TODO fix\nL3: fn added() {}\n### gone.txt (deleted, -1)\n### img.png (binary)\n"
        );
    }
}
