//! Enclosing-symbol index for the union's "same enclosing symbol" rule: a cheap, language-
//! agnostic scan of function/method/class starts by keyword and indentation.

use std::collections::BTreeMap;

/// Symbol starts per file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SymbolIndex {
    files: BTreeMap<String, FileSymbols>,
}

/// One file's symbols.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct FileSymbols {
    /// The symbol starts, by line.
    starts: Vec<Start>,
    /// Each line's indentation; None for a blank line.
    indents: Vec<Option<usize>>,
}

/// Where a symbol starts.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Start {
    /// 1-based.
    line: u32,
    indent: usize,
    /// Keyword and name: `fn parse`.
    name: String,
}

const KEYWORDS: [&str; 7] = [
    "fn ",
    "def ",
    "class ",
    "function ",
    "func ",
    "sub ",
    "trait ",
];
const PREFIXES: [&str; 12] = [
    "pub(crate) ",
    "pub(super) ",
    "pub ",
    "export default ",
    "export ",
    "async ",
    "static ",
    "private ",
    "public ",
    "protected ",
    "unsafe ",
    "const ",
];

/// The symbol a line starts, if any, as its keyword and name (`fn parse`, `def run`,
/// `class Foo`).
fn symbol_start(line: &str) -> Option<(&'static str, &str)> {
    let mut t = line.trim_start();
    while let Some(p) = PREFIXES.iter().find(|p| t.starts_with(*p)) {
        t = &t[p.len()..];
    }
    let kw = KEYWORDS.iter().find(|k| t.starts_with(*k))?;
    let mut rest = t[kw.len()..].trim_start();
    // Go methods: `func (r *T) Name(`.
    if kw.starts_with("func") && rest.starts_with('(') {
        rest = rest.split_once(')').map(|(_, r)| r.trim_start())?;
    }
    let end = rest
        .char_indices()
        .find(|(_, c)| !(c.is_alphanumeric() || *c == '_' || *c == '$'))
        .map_or(rest.len(), |(i, _)| i);
    let name = &rest[..end];
    if name.is_empty() {
        return None;
    }
    Some((kw.trim_end(), name))
}

impl SymbolIndex {
    /// The index of the `files` (repo-relative, repeats allowed), each read once through
    /// `text_of` (the review's `Texts`, which the suppression checks and the report read the
    /// same files from); a file without a text (unreadable) has no symbols.
    pub fn of_files<'a, T>(
        files: impl Iterator<Item = &'a str>,
        mut text_of: impl FnMut(&str) -> Option<T>,
    ) -> Self
    where
        T: std::ops::Deref,
        T::Target: AsRef<str>,
    {
        let mut idx = Self::default();
        for f in files {
            if idx.files.contains_key(f) {
                continue;
            }
            match text_of(f) {
                Some(text) => idx.add_file(f, (*text).as_ref()),
                None => {
                    idx.files.insert(f.to_string(), FileSymbols::default());
                }
            }
        }
        idx
    }

    /// Index one file's text.
    pub fn add_file(&mut self, path: &str, text: &str) {
        let mut file = FileSymbols::default();
        for (i, line) in text.lines().enumerate() {
            let body = line.trim_start();
            if body.trim_end().is_empty() {
                file.indents.push(None);
                continue;
            }
            let indent = line.len() - body.len();
            file.indents.push(Some(indent));
            if let Some((kw, name)) = symbol_start(line) {
                file.starts.push(Start {
                    line: u32::try_from(i + 1).unwrap_or(u32::MAX),
                    indent,
                    name: format!("{kw} {name}"),
                });
            }
        }
        self.files.insert(path.to_string(), file);
    }

    /// The innermost symbol whose body holds `line`: the nearest preceding symbol start that
    /// is `line` itself or less indented than it. Blank lines and top-level lines after a
    /// body belong to no symbol.
    pub fn enclosing(&self, file: &str, line: u32) -> Option<&str> {
        let f = self.files.get(file)?;
        let ind = (*f.indents.get(line.checked_sub(1)? as usize)?)?;
        let upto = f.starts.partition_point(|s| s.line <= line);
        f.starts[..upto]
            .iter()
            .rev()
            .find(|s| s.line == line || s.indent < ind)
            .map(|s| s.name.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbol_starts_are_found_after_any_prefix() {
        for line in [
            "fn a()",
            "pub(crate) async fn b()",
            "export default function c()",
            "def d(self):",
            "class E:",
            "func (r *T) F()",
            "sub g {",
            "trait H {",
            "unsafe fn i()",
            "const fn j()",
            "static fn k()",
            "protected function l()",
        ] {
            assert!(symbol_start(line).is_some(), "{line}");
        }
        for line in [
            "let x = 1;",
            "    return 1",
            "// fn not()",
            "#[test]",
            "}",
            "impl A {",
        ] {
            assert_eq!(symbol_start(line), None, "{line}");
        }
    }

    #[test]
    fn finds_enclosing_functions_across_languages() {
        let mut idx = SymbolIndex::default();
        idx.add_file(
            "a.rs",
            "pub fn parse(s: &str) -> u32 {\n    let x = 1;\n\n    s.parse().unwrap()\n}\nconst K: u32 = 1;\nimpl A {\n    pub(crate) async fn go(&self) {\n        todo!()\n    }\n}\n",
        );
        assert_eq!(idx.enclosing("a.rs", 1), Some("fn parse"));
        assert_eq!(idx.enclosing("a.rs", 4), Some("fn parse"));
        assert_eq!(idx.enclosing("a.rs", 3), None, "blank line");
        assert_eq!(idx.enclosing("a.rs", 6), None, "top level after the body");
        assert_eq!(idx.enclosing("a.rs", 9), Some("fn go"));
        idx.add_file("b.py", "class C:\n    def run(self):\n        return 1\n");
        assert_eq!(idx.enclosing("b.py", 3), Some("def run"));
        idx.add_file("c.go", "func (r *T) Serve(x int) {\n\treturn\n}\n");
        assert_eq!(idx.enclosing("c.go", 2), Some("func Serve"));
        assert_eq!(idx.enclosing("missing.rs", 1), None);
        assert_eq!(idx.enclosing("a.rs", 0), None);
    }

    #[test]
    fn indexes_only_the_files_asked_for_once_and_skips_unreadable_ones() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.rs"), "fn a() {\n    1\n}\n").unwrap();
        std::fs::write(dir.path().join("b.rs"), "fn b() {\n    1\n}\n").unwrap();
        let mut reads = vec![];
        let idx = SymbolIndex::of_files(["a.rs", "a.rs", "gone.rs"].into_iter(), |f| {
            reads.push(f.to_string());
            std::fs::read_to_string(dir.path().join(f)).ok()
        });
        assert_eq!(reads, ["a.rs", "gone.rs"], "each file read once");
        assert_eq!(idx.enclosing("a.rs", 2), Some("fn a"));
        assert_eq!(idx.enclosing("b.rs", 2), None, "not asked for");
        assert_eq!(idx.enclosing("gone.rs", 1), None);
    }
}
