//! What counts as code in a file (pure): per language family, comments (line and block),
//! blank lines and documentation (Python docstrings, Rust doc attributes) are not code.
//! `mine` uses it to tell a fix that changes code from one that only edits comments, and
//! to leave comment-only hunks out of a case's expected locations (`measure`).

use super::select::{Content, Hunk};
use regex::Regex;
use std::sync::OnceLock;

/// How a language writes comments and strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syntax {
    /// `//` and `/* */` (Rust, C/C++, Go, Java, JS/TS, C#, Kotlin, Swift, …). `'` opens a
    /// character literal only (`'a'`, `'\n'`): Rust lifetimes stay code.
    CLike,
    /// `//`, `/* */`, and `'…'` / `` `…` `` strings (JavaScript, TypeScript, PHP, Dart).
    Script,
    /// `#` comments, `'…'` and `"…"` strings; `"""`/`'''` docstrings (Python).
    Python,
    /// `#` comments (at the start of a word), `'…'` and `"…"` strings (shell, Ruby, Perl, R…).
    Hash,
    /// `--` comments (SQL, Lua, Haskell, Elm, Ada).
    DashDash,
    /// `%` comments (Erlang).
    Percent,
    /// `;` comments (Clojure).
    Semicolon,
    /// No known comment syntax: only blank lines and whitespace are ignored.
    Plain,
}

/// The syntax of a file, by extension.
pub fn syntax_of(path: &str) -> Syntax {
    let name = path.rsplit('/').next().unwrap_or(path);
    let ext = name
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "rs" | "c" | "h" | "cc" | "cpp" | "cxx" | "hh" | "hpp" | "hxx" | "m" | "mm" | "go"
        | "java" | "kt" | "kts" | "scala" | "groovy" | "swift" | "cs" | "fs" | "zig" | "sol"
        | "d" => Syntax::CLike,
        "js" | "jsx" | "mjs" | "cjs" | "ts" | "tsx" | "mts" | "cts" | "php" | "dart" | "vue"
        | "svelte" => Syntax::Script,
        "py" | "pyi" => Syntax::Python,
        "sh" | "bash" | "zsh" | "fish" | "rb" | "pl" | "pm" | "r" | "jl" | "ex" | "exs" | "cr"
        | "nim" | "ps1" => Syntax::Hash,
        "sql" | "lua" | "hs" | "elm" | "ada" | "adb" | "ads" => Syntax::DashDash,
        "erl" | "hrl" => Syntax::Percent,
        "clj" | "cljs" => Syntax::Semicolon,
        _ => Syntax::Plain,
    }
}

/// A file's code, line by line: `lines[i]` is line `i + 1` with comments removed and
/// whitespace collapsed (empty: no code on that line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeLines {
    pub lines: Vec<String>,
}

impl CodeLines {
    /// Whether line `n` (1-based) holds code.
    pub fn is_code(&self, n: u32) -> bool {
        n >= 1
            && self
                .lines
                .get(n as usize - 1)
                .is_some_and(|l| !l.is_empty())
    }

    /// The code without line structure: what changes when code changes.
    pub fn stream(&self) -> Vec<&str> {
        self.lines
            .iter()
            .filter(|l| !l.is_empty())
            .map(String::as_str)
            .collect()
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Code,
    Block,
    Str(char),
    /// A triple-quoted string; `true`: a docstring (not code).
    Triple(char, bool),
}

/// Strip comments (and docs) from `text` written in `syntax`: one state machine over the
/// characters (code itself is read by `code_char`).
pub fn code_lines(text: &str, syntax: Syntax) -> CodeLines {
    let mut out = Vec::new();
    let mut state = State::Code;
    for raw in text.split('\n') {
        let chars: Vec<char> = raw.trim_end_matches('\r').chars().collect();
        let mut line = String::new();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            let next = chars.get(i + 1).copied();
            match state {
                State::Block => {
                    if c == '*' && next == Some('/') {
                        state = State::Code;
                        i += 2;
                        line.push(' ');
                        continue;
                    }
                }
                State::Triple(q, docstring) => {
                    if c == '\\' {
                        i += 2;
                        continue;
                    }
                    if c == q && next == Some(q) && chars.get(i + 2) == Some(&q) {
                        state = State::Code;
                        i += 3;
                        if !docstring {
                            line.push_str(&q.to_string().repeat(3));
                        }
                        continue;
                    }
                    if !docstring {
                        line.push(c);
                    }
                }
                State::Str(q) => {
                    if c == '\\' {
                        line.push(c);
                        if let Some(n) = next {
                            line.push(n);
                        }
                        i += 2;
                        continue;
                    }
                    line.push(c);
                    if c == q {
                        state = State::Code;
                    }
                }
                State::Code => match code_char(&chars, i, raw, syntax, (&mut line, &mut state)) {
                    Flow::EndLine => break,
                    Flow::Next(n) => {
                        i += n;
                        continue;
                    }
                },
            }
            i += 1;
        }
        // A string does not run past its line, except a Script template or a triple quote.
        if let State::Str(q) = state {
            if !(syntax == Syntax::Script && q == '`') {
                state = State::Code;
            }
        }
        let mut code = line.split_whitespace().collect::<Vec<_>>().join(" ");
        if syntax == Syntax::CLike && is_doc_attribute(&code) {
            code.clear();
        }
        out.push(code);
    }
    // `split` yields a last empty piece after a final newline: not a line of the file.
    if text.ends_with('\n') {
        out.pop();
    }
    CodeLines { lines: out }
}

/// What the scan does after a character read in code: move on by `n`, or end the line (a
/// line comment starts).
enum Flow {
    Next(usize),
    EndLine,
}

/// One character of code at `chars[i]`: a comment or string may start here.
fn code_char(
    chars: &[char],
    i: usize,
    raw: &str,
    syntax: Syntax,
    (line, state): (&mut String, &mut State),
) -> Flow {
    let c = chars[i];
    let next = chars.get(i + 1).copied();
    let at_word = i == 0 || chars[i - 1].is_whitespace();
    let slashes = matches!(syntax, Syntax::CLike | Syntax::Script);
    if slashes && c == '/' && next == Some('/') {
        return Flow::EndLine;
    }
    if slashes && c == '/' && next == Some('*') {
        *state = State::Block;
        return Flow::Next(2);
    }
    let line_comment = match syntax {
        Syntax::Python => c == '#',
        Syntax::Hash => c == '#' && at_word && !raw.starts_with("#!"),
        Syntax::DashDash => c == '-' && next == Some('-'),
        Syntax::Percent => c == '%',
        Syntax::Semicolon => c == ';',
        _ => false,
    };
    if line_comment {
        return Flow::EndLine;
    }
    if syntax == Syntax::Python
        && (c == '"' || c == '\'')
        && next == Some(c)
        && chars.get(i + 2) == Some(&c)
    {
        // A string that starts a line is a docstring (or a bare string),
        // with its prefix (`r"""`) if any.
        let head = line.trim();
        let docstring = head.len() <= 2 && head.chars().all(|p| "rRbBuUfF".contains(p));
        if docstring {
            line.clear();
        }
        *state = State::Triple(c, docstring);
        if !docstring {
            line.push_str(&c.to_string().repeat(3));
        }
        return Flow::Next(3);
    }
    let quote = match (syntax, c) {
        (Syntax::Plain, _) => false,
        (_, '"') => true,
        (Syntax::Script | Syntax::Python | Syntax::Hash, '\'') => true,
        (Syntax::Script, '`') => true,
        (Syntax::CLike, '\'') => {
            // A character literal, not a lifetime.
            next == Some('\\') || chars.get(i + 2) == Some(&'\'')
        }
        _ => false,
    };
    line.push(c);
    if quote {
        *state = State::Str(c);
    }
    Flow::Next(1)
}

/// A Rust attribute that only feeds the documentation (`#[doc …]`,
/// `#[cfg_attr(docsrs, doc(…))]`).
fn is_doc_attribute(code: &str) -> bool {
    let compact: String = code.chars().filter(|c| !c.is_whitespace()).collect();
    ["#[doc", "#![doc", "#[cfg_attr(docsrs", "#![cfg_attr(docsrs"]
        .iter()
        .any(|p| compact.starts_with(p))
}

/// What the change from `old` to `new` (the file `path`, both sides' text) does to its
/// code, and which of its zero-context `hunks` touch code (`Hunk::code` set).
pub fn measure(path: &str, old: &str, new: &str, hunks: &mut [Hunk]) -> Content {
    if is_generated(old) {
        return Content::Generated;
    }
    let syntax = syntax_of(path);
    let (a, b) = (code_lines(old, syntax), code_lines(new, syntax));
    let mut changed: Vec<&str> = Vec::new();
    for h in hunks.iter_mut() {
        let before =
            (h.old_start..h.old_start.saturating_add(h.old_lines)).filter(|&n| a.is_code(n));
        let after =
            (h.new_start..h.new_start.saturating_add(h.new_lines)).filter(|&n| b.is_code(n));
        let lines: Vec<&str> = before
            .map(|n| a.lines[n as usize - 1].as_str())
            .chain(after.map(|n| b.lines[n as usize - 1].as_str()))
            .collect();
        h.code = !lines.is_empty();
        changed.extend(lines);
    }
    if a.stream() == b.stream() {
        return Content::CommentsOnly;
    }
    static IMPORT: OnceLock<Option<Regex>> = OnceLock::new();
    static VERSION: OnceLock<Option<Regex>> = OnceLock::new();
    let import = IMPORT.get_or_init(|| {
        Regex::new(
            r#"^(pub(\(\w+\))? )?(use |extern crate |import |from \S+ import |#include|#import|require[ (]|package )|^(const|let|var) .*= require\(|^((\w+|_|\.) )?"[^"]+"$|^import \($|^\)$|^[{}]$|^\w+::\{?[\w:, {}*]*\}?[,;]?$"#,
        )
        .ok()
    });
    let version = VERSION.get_or_init(|| {
        Regex::new(r#"(?i)\bversion\b|__version__|^\S+\s*[:=]\s*["']v?\d+\.\d+(\.\d+)?"#).ok()
    });
    // Both rules compile (`measure_tells_code_from_comments_imports_and_versions`).
    let all = |re: &Option<Regex>| {
        re.as_ref()
            .is_some_and(|re| !changed.is_empty() && changed.iter().all(|l| re.is_match(l)))
    };
    if all(import) {
        return Content::ImportsOnly;
    }
    if all(version) {
        return Content::VersionOnly;
    }
    Content::Code
}

/// A generated file says so in its first lines (`Code generated … DO NOT EDIT.`,
/// `@generated`, `autogenerated`).
pub fn is_generated(text: &str) -> bool {
    text.lines().take(10).any(|l| {
        let l = l.to_ascii_lowercase();
        l.contains("do not edit")
            || l.contains("@generated")
            || l.contains("autogenerated")
            || l.contains("auto-generated")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(text: &str, s: Syntax) -> Vec<String> {
        code_lines(text, s).lines
    }

    #[test]
    fn syntaxes_by_extension() {
        assert_eq!(syntax_of("src/a.rs"), Syntax::CLike);
        assert_eq!(syntax_of("a/b.go"), Syntax::CLike);
        assert_eq!(syntax_of("x.TSX"), Syntax::Script);
        assert_eq!(syntax_of("requests/models.py"), Syntax::Python);
        assert_eq!(syntax_of("install.sh"), Syntax::Hash);
        assert_eq!(syntax_of("q.sql"), Syntax::DashDash);
        assert_eq!(syntax_of("README"), Syntax::Plain);
    }

    #[test]
    fn c_like_comments_and_literals() {
        let text = "fn f<'a>(x: &'a str) { // a comment\n    /* block\n still */ let c = '/'; let s = \"// not a comment\";\n\n  /// doc\n}\n";
        assert_eq!(
            code(text, Syntax::CLike),
            [
                "fn f<'a>(x: &'a str) {",
                "",
                "let c = '/'; let s = \"// not a comment\";",
                "",
                "",
                "}"
            ]
        );
        assert!(code(
            "#[cfg_attr(docsrs, doc(cfg(feature = \"x\")))]\n",
            Syntax::CLike
        )[0]
        .is_empty());
        assert!(!code("#[cfg(feature = \"x\")]\n", Syntax::CLike)[0].is_empty());
    }

    #[test]
    fn python_comments_and_docstrings() {
        let text = "def f(x):\n    \"\"\"Doc\n    more.\"\"\"\n    s = '#' # c\n    t = \"\"\"kept\"\"\"\n";
        assert_eq!(
            code(text, Syntax::Python),
            ["def f(x):", "", "", "s = '#'", "t = \"\"\"kept\"\"\""]
        );
    }

    #[test]
    fn hash_comments_start_a_word() {
        assert_eq!(
            code("#!/bin/sh\necho $# ${#x} # count\n# all\n", Syntax::Hash),
            ["#!/bin/sh", "echo $# ${#x}", ""]
        );
    }

    fn hunk(old_start: u32, old_lines: u32, new_start: u32, new_lines: u32) -> Hunk {
        Hunk {
            old_start,
            old_lines,
            new_start,
            new_lines,
            code: true,
        }
    }

    #[test]
    fn measure_tells_code_from_comments_imports_and_versions() {
        let old = "use a::b;\n// old note\nfn f() -> u32 {\n    1\n}\n";
        let comment = "use a::b;\n// new note\nfn f() -> u32 {\n    1\n}\n";
        let mut hs = [hunk(2, 1, 2, 1)];
        assert_eq!(
            measure("a.rs", old, comment, &mut hs),
            Content::CommentsOnly
        );
        assert!(!hs[0].code);
        let import = "use a::c;\n// old note\nfn f() -> u32 {\n    1\n}\n";
        let mut hs = [hunk(1, 1, 1, 1)];
        assert_eq!(measure("a.rs", old, import, &mut hs), Content::ImportsOnly);
        let fix = "use a::b;\n// fixed note\nfn f() -> u32 {\n    2\n}\n";
        let mut hs = [hunk(2, 1, 2, 1), hunk(4, 1, 4, 1)];
        assert_eq!(measure("a.rs", old, fix, &mut hs), Content::Code);
        assert!(!hs[0].code && hs[1].code);
        let mut hs = [hunk(1, 1, 1, 1)];
        assert_eq!(
            measure(
                "v.py",
                "__version__ = \"1.2\"\n",
                "__version__ = \"1.3\"\n",
                &mut hs
            ),
            Content::VersionOnly
        );
        let gen = "// Code generated by stringer. DO NOT EDIT.\nconst a = 1\n";
        assert_eq!(
            measure(
                "x.go",
                gen,
                "// Code generated by stringer. DO NOT EDIT.\nconst a = 2\n",
                &mut [hunk(2, 1, 2, 1)]
            ),
            Content::Generated
        );
    }

    #[test]
    fn the_stream_ignores_comment_and_layout_changes() {
        let a = code_lines("int f() {\n  return 1; // one\n}\n", Syntax::CLike);
        let b = code_lines(
            "/* The answer. */\nint f() {\n\n  return   1; // uno\n}\n",
            Syntax::CLike,
        );
        assert_eq!(a.stream(), b.stream());
        let c = code_lines("int f() {\n  return 2;\n}\n", Syntax::CLike);
        assert_ne!(a.stream(), c.stream());
        assert!(b.is_code(2) && !b.is_code(1) && !b.is_code(3) && !b.is_code(99));
    }
}
