//! Which symbols a target defines or changes (docs/architecture.md §5.3): definition
//! patterns for common languages, the names defined on a diff's changed lines and the
//! enclosing definition of each hunk (git's hunk function context, else the nearest
//! definition above the hunk), or a file's definitions. Pure; no model.

use regex::Regex;
use std::collections::BTreeMap;
use std::sync::LazyLock;

/// Candidate symbols kept while reading a target (bounds the work on a huge diff).
const CANDIDATES: usize = 4096;
/// Changed files whose new side is read to find a hunk's enclosing definition.
const ENCLOSING_FILES: usize = 200;
/// Names too short or too common to point anywhere.
const MIN_NAME: usize = 3;
const COMMON: &[&str] = &[
    "new",
    "get",
    "set",
    "main",
    "init",
    "__init__",
    "run",
    "test",
    "from",
    "into",
    "default",
    "fmt",
    "drop",
    "clone",
    "len",
    "is_empty",
    "eq",
    "hash",
    "to_string",
    "toString",
    "equals",
    "hashCode",
    "String",
    "self",
    "this",
    "call",
    "apply",
    "next",
    "iter",
    "value",
    "data",
    "Error",
    "Result",
    "Ok",
    "Err",
    "None",
    "Some",
    "true",
    "false",
    "null",
    "args",
    "setup",
    "teardown",
    "setUp",
    "tearDown",
    "constructor",
    "render",
    "update",
    "create",
    "delete",
    "close",
    "open",
    "read",
    "write",
    "start",
    "stop",
    "name",
    "type",
    "index",
    "item",
];

/// How a symbol came to be in the target, most relevant first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Origin {
    /// Defined on a changed (added or removed) line of a diff: a changed signature.
    Changed,
    /// The definition that encloses a hunk.
    Enclosing,
    /// Defined in a file target.
    Defined,
}

/// One symbol of the target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symbol {
    pub name: String,
    pub origin: Origin,
    /// Marked public (`pub`, `export`, `public`, a Go capital, an unindented Python name…).
    pub public: bool,
    /// Where the target defines it (repo-relative path, 1-based line; the line is 0 for a
    /// definition a diff removed).
    pub file: String,
    pub line: u32,
}

/// A definition found on one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Def {
    pub name: String,
    pub public: bool,
}

const IDENT: &str = r"([A-Za-z_$][A-Za-z0-9_$]*)";

/// One definition pattern per line shape; the name is capture group 1.
static DEF_PATTERNS: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    let mods = r"(?:(?:pub(?:\([^)]*\))?|export|default|public|private|protected|internal|open|static|final|abstract|sealed|override|virtual|async|unsafe|const|extern(?:\s+\x22[^\x22]*\x22)?|inline|data|suspend|partial|readonly)\s+)*";
    let shapes = [
        // Rust, Swift, Kotlin, Go, JS/TS/PHP, Python, Ruby, shell functions.
        format!(
            r"^\s*{mods}(?:fn|func|fun|function\*?|def|sub)\s+(?:\([^)]*\)\s*)?(?:self\.)?{IDENT}"
        ),
        // Types and modules.
        format!(
            r"^\s*{mods}(?:struct|enum|trait|union|class|interface|record|object|protocol|module|mod|namespace|type|typealias|macro_rules!)\s+{IDENT}"
        ),
        // Constants and bound functions: `const NAME = (…) =>`, `static NAME: T = …`.
        format!(
            r"^\s*{mods}(?:const|static|let|var|val)\s+{IDENT}\s*(?::[^=]*)?=\s*(?:async\s+)?(?:function\b|\([^)]*\)\s*=>|[A-Za-z_$][\w$]*\s*=>)"
        ),
        r"^\s*{mods}(?:const|static)\s+([A-Z][A-Z0-9_]+)\s*[:=]".replace("{mods}", mods),
        // C preprocessor macros.
        format!(r"^\s*#\s*define\s+{IDENT}"),
        // C, C++, Java, C#: `type name(args) {` at the start of a line (not a call: no `;`).
        format!(r"^{mods}(?:[A-Za-z_][\w:<>,\*&\[\]]*\s+[\*&]*)+{IDENT}\s*\([^;]*$"),
        // Shell: `name() {`.
        format!(r"^\s*{IDENT}\s*\(\)\s*\{{"),
    ];
    shapes.iter().filter_map(|s| Regex::new(s).ok()).collect()
});

/// Words that look like a definition's name in the C-like pattern but are statements.
const NOT_NAMES: &[&str] = &[
    "if", "for", "while", "switch", "return", "catch", "else", "sizeof", "do", "case", "elif",
    "await", "yield", "new", "delete", "throw", "match", "with", "when", "unless",
];

/// The definition on `line`, if it holds one.
pub fn definition(line: &str) -> Option<Def> {
    if line.len() > 400 {
        return None;
    }
    let name = DEF_PATTERNS.iter().find_map(|re| {
        re.captures(line)
            .and_then(|c| c.get(1))
            .map(|m| m.as_str().to_string())
            .filter(|n| !NOT_NAMES.contains(&n.as_str()))
    })?;
    let public = is_public(line, &name);
    Some(Def { name, public })
}

/// Whether a definition line marks its name public.
fn is_public(line: &str, name: &str) -> bool {
    let t = line.trim_start();
    let first = t.split_whitespace().next().unwrap_or("");
    if first.starts_with("pub") && !first.starts_with("pub(") {
        return true;
    }
    if matches!(first, "export" | "public" | "open") {
        return true;
    }
    if matches!(
        first,
        "private"
            | "protected"
            | "internal"
            | "fileprivate"
            | "static"
            | "pub(crate)"
            | "pub(super)"
    ) || first.starts_with("pub(")
        || name.starts_with('_')
    {
        return false;
    }
    let unindented = t.len() == line.len();
    // Go: a capital; Python, Ruby, JS, shell: an unindented definition is module-level API.
    (first == "func" || first == "type") && name.starts_with(|c: char| c.is_ascii_uppercase())
        || unindented && matches!(first, "def" | "class" | "function" | "module" | "async")
}

/// Whether `name` is worth searching for.
pub fn searchable(name: &str) -> bool {
    name.len() >= MIN_NAME && name.len() <= 100 && !COMMON.contains(&name)
}

/// Whether a repo-relative path is a test: under a test directory or named like a test.
pub fn is_test_path(path: &str) -> bool {
    let mut parts = path.rsplit('/');
    let file = parts.next().unwrap_or("");
    let dir_test = parts.any(|d| {
        matches!(
            d,
            "test" | "tests" | "testing" | "spec" | "specs" | "__tests__" | "testdata" | "t"
        )
    });
    if dir_test {
        return true;
    }
    let stem = file.split('.').next().unwrap_or(file);
    stem.starts_with("test_")
        || stem.ends_with("_test")
        || stem.ends_with("_tests")
        || stem.ends_with("_spec")
        || stem.ends_with("Test")
        || stem.ends_with("Tests")
        || stem == "test"
        || stem == "tests"
        || file.contains(".test.")
        || file.contains(".spec.")
}

/// The symbols being collected, one per name (the most relevant mention wins).
#[derive(Debug, Default)]
struct Collected {
    by_name: BTreeMap<String, Symbol>,
}

impl Collected {
    fn add(&mut self, def: Def, origin: Origin, file: &str, line: u32) {
        if !searchable(&def.name) {
            return;
        }
        let new = Symbol {
            name: def.name.clone(),
            origin,
            public: def.public,
            file: file.to_string(),
            line,
        };
        let room = self.by_name.len() < CANDIDATES;
        match self.by_name.get_mut(&def.name) {
            Some(old) if (new.origin, !new.public) < (old.origin, !old.public) => *old = new,
            Some(_) => {}
            None if room => {
                self.by_name.insert(def.name, new);
            }
            None => {}
        }
    }

    /// The symbols, most relevant first: changed signatures, then enclosing definitions,
    /// then definitions; public names first within each; then where they are.
    fn ranked(self) -> Vec<Symbol> {
        let mut v: Vec<Symbol> = self.by_name.into_values().collect();
        v.sort_by(|a, b| {
            (a.origin, !a.public, &a.file, a.line, &a.name)
                .cmp(&(b.origin, !b.public, &b.file, b.line, &b.name))
        });
        v
    }
}

/// One hunk of a changed file: where its new side starts and its function context.
#[derive(Debug, Clone)]
struct HunkAt {
    /// The first changed line of the new side (or the hunk's start when it only removes).
    first_changed: u32,
    context: Option<String>,
}

/// What a patch tells the map: its symbols, most relevant first, and each changed file's
/// hunks (new-side line ranges, inclusive): the target's own lines, not "elsewhere".
#[derive(Debug, Clone, Default)]
pub struct PatchFacts {
    pub symbols: Vec<Symbol>,
    pub hunks: BTreeMap<String, Vec<(u32, u32)>>,
}

impl PatchFacts {
    /// Whether (path, line) is inside one of the patch's hunks.
    pub fn own(&self, path: &str, line: u32) -> bool {
        self.hunks
            .get(path)
            .is_some_and(|h| h.iter().any(|&(a, b)| a <= line && line <= b))
    }
}

/// The symbols a unified patch defines or changes. `read` gives a changed file's new side
/// (None when unavailable), to find the definition enclosing each hunk.
pub fn patch_symbols(patch: &str, read: &dyn Fn(&str) -> Option<String>) -> PatchFacts {
    let mut found = Collected::default();
    let mut ranges: BTreeMap<String, Vec<(u32, u32)>> = BTreeMap::new();
    let mut files: Vec<(String, Vec<HunkAt>)> = Vec::new();
    let mut new_line = 0u32;
    let mut in_hunk = false;
    for line in patch.lines() {
        if line.starts_with("diff --git ") {
            files.push((String::new(), Vec::new()));
            in_hunk = false;
            continue;
        }
        let Some((path, hunks)) = files.last_mut() else {
            continue;
        };
        if let Some(rest) = line.strip_prefix("@@ ") {
            in_hunk = true;
            let (start, count, context) = hunk_header(rest);
            new_line = start;
            if count > 0 && !path.is_empty() {
                ranges
                    .entry(path.clone())
                    .or_default()
                    .push((start, start + count - 1));
            }
            hunks.push(HunkAt {
                first_changed: 0,
                context,
            });
            continue;
        }
        if !in_hunk {
            if let Some(p) = line.strip_prefix("+++ b/") {
                *path = unquote(p);
            } else if let Some(p) = line.strip_prefix("--- a/") {
                *path = unquote(p);
            }
            continue;
        }
        let mark = |hunks: &mut Vec<HunkAt>, at: u32| {
            if let Some(h) = hunks.last_mut().filter(|h| h.first_changed == 0) {
                h.first_changed = at.max(1);
            }
        };
        match line.as_bytes().first() {
            Some(b'+') => {
                if let Some(d) = definition(&line[1..]) {
                    found.add(d, Origin::Changed, path, new_line);
                }
                mark(hunks, new_line);
                new_line += 1;
            }
            Some(b'-') => {
                if let Some(d) = definition(&line[1..]) {
                    found.add(d, Origin::Changed, path, 0);
                }
                mark(hunks, new_line);
            }
            Some(b' ') => new_line += 1,
            _ => {}
        }
    }
    for (i, (path, hunks)) in files.iter().enumerate() {
        let text = (i < ENCLOSING_FILES).then(|| read(path)).flatten();
        let lines: Vec<&str> = text.as_deref().map_or(Vec::new(), |t| t.lines().collect());
        for h in hunks {
            let enclosing = enclosing_def(&lines, h.first_changed)
                .or_else(|| h.context.as_deref().and_then(definition).map(|d| (d, 0)));
            if let Some((d, at)) = enclosing {
                found.add(d, Origin::Enclosing, path, at);
            }
        }
    }
    PatchFacts {
        symbols: found.ranked(),
        hunks: ranges,
    }
}

/// The nearest definition at or above 1-based `line` in `lines`, with its line.
fn enclosing_def(lines: &[&str], line: u32) -> Option<(Def, u32)> {
    let from = (line as usize).min(lines.len());
    (0..from)
        .rev()
        .find_map(|i| definition(lines[i]).map(|d| (d, i as u32 + 1)))
}

/// `-a,b +c,d @@ context` → (c, d, context).
fn hunk_header(rest: &str) -> (u32, u32, Option<String>) {
    let mut parts = rest.splitn(3, ' ');
    let _old = parts.next();
    let mut new = parts
        .next()
        .unwrap_or("+0")
        .trim_start_matches('+')
        .split(',');
    let start = new.next().and_then(|n| n.parse().ok()).unwrap_or(0);
    let count = new.next().map_or(Some(1), |n| n.parse().ok()).unwrap_or(0);
    let context = parts
        .next()
        .and_then(|r| r.strip_prefix("@@"))
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map(str::to_string);
    (start, count, context)
}

fn unquote(s: &str) -> String {
    s.strip_suffix('\t')
        .unwrap_or(s)
        .trim_matches('"')
        .to_owned()
}

/// The definitions of whole files (a file or manifest target): `(path, text)` pairs.
pub fn file_symbols<'a>(files: impl IntoIterator<Item = (&'a str, &'a str)>) -> Vec<Symbol> {
    let mut found = Collected::default();
    for (path, text) in files {
        for (i, line) in text.lines().enumerate() {
            if let Some(d) = definition(line) {
                found.add(d, Origin::Defined, path, i as u32 + 1);
            }
        }
    }
    found.ranked()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(line: &str) -> Option<String> {
        definition(line).map(|d| d.name)
    }

    #[test]
    fn definitions_across_languages() {
        let cases = [
            ("pub fn parse_config(x: &str) -> u8 {", "parse_config"),
            ("    pub(crate) async fn load_all() {", "load_all"),
            ("fn helper<T>(t: T) {", "helper"),
            ("pub struct Ring {", "Ring"),
            ("impl Ring {", ""),
            ("def push(self, item):", "push"),
            ("async def fetch_rows(db):", "fetch_rows"),
            ("class RingBuffer(object):", "RingBuffer"),
            ("export function renderPage(props) {", "renderPage"),
            ("export const makeStore = (init) => {", "makeStore"),
            (
                "func (s *Server) ServeHTTP(w http.ResponseWriter) {",
                "ServeHTTP",
            ),
            ("type Handler interface {", "Handler"),
            ("public static int countWords(String s) {", "countWords"),
            (
                "static int parse_header(const char *buf, size_t n)",
                "parse_header",
            ),
            ("#define MAX_LEN 10", "MAX_LEN"),
            ("deploy_all() {", "deploy_all"),
            ("const MAX_ITEMS: usize = 5;", "MAX_ITEMS"),
            ("    if (x > 0) {", ""),
            ("    return compute(x);", ""),
            ("    let y = compute(x);", ""),
        ];
        for (line, want) in cases {
            let got = name(line).unwrap_or_default();
            assert_eq!(got, want, "{line}");
        }
    }

    #[test]
    fn publicness() {
        assert!(definition("pub fn a_b() {}").unwrap().public);
        assert!(!definition("pub(crate) fn a_b() {}").unwrap().public);
        assert!(!definition("fn a_b() {}").unwrap().public);
        assert!(definition("def top_level():").unwrap().public);
        assert!(!definition("    def method(self):").unwrap().public);
        assert!(!definition("def _private():").unwrap().public);
        assert!(definition("func Exported() {").unwrap().public);
        assert!(!definition("func unexported() {").unwrap().public);
        assert!(definition("export class Store {").unwrap().public);
    }

    #[test]
    fn test_paths() {
        for p in [
            "tests/integration/main.rs",
            "src/foo/tests/a.rs",
            "pkg/x_test.go",
            "test_ring.py",
            "web/app.test.ts",
            "spec/models/user_spec.rb",
            "src/FooTest.java",
        ] {
            assert!(is_test_path(p), "{p}");
        }
        for p in [
            "src/attest.rs",
            "src/latest/a.rs",
            "contest.py",
            "src/testing_utils.rs",
        ] {
            assert!(!is_test_path(p), "{p}");
        }
    }

    #[test]
    fn patch_names_changed_definitions_and_enclosing_functions_first() {
        let patch = "diff --git a/src/ring.py b/src/ring.py\n--- a/src/ring.py\n+++ b/src/ring.py\n@@ -1,6 +1,6 @@ class Ring:\n class Ring:\n-    def push(self, item):\n+    def push_item(self, item, at):\n         self.items.append(item)\n@@ -10,3 +10,4 @@ def drain(self):\n     x = 1\n+    y = 2\n     return x\n";
        let file = "class Ring:\n    def push_item(self, item, at):\n        self.items.append(item)\n\n\n\n\n\ndef drain_all(self):\n    x = 1\n    y = 2\n    return x\n";
        let facts = patch_symbols(patch, &|p| (p == "src/ring.py").then(|| file.to_string()));
        assert!(facts.own("src/ring.py", 13) && !facts.own("src/ring.py", 14));
        assert!(!facts.own("src/ring.py", 8) && facts.own("src/ring.py", 6));
        let syms = facts.symbols;
        let names: Vec<(&str, Origin)> = syms.iter().map(|s| (s.name.as_str(), s.origin)).collect();
        assert_eq!(
            names,
            vec![
                ("push", Origin::Changed),
                ("push_item", Origin::Changed),
                ("drain_all", Origin::Enclosing),
            ]
        );
        assert_eq!((syms[1].file.as_str(), syms[1].line), ("src/ring.py", 2));
        assert_eq!(syms[2].line, 9);
        // Without the file, git's hunk function context names the enclosing definition.
        let syms = patch_symbols(patch, &|_| None).symbols;
        assert!(syms
            .iter()
            .any(|s| s.name == "drain" && s.origin == Origin::Enclosing));
    }

    #[test]
    fn common_and_short_names_are_not_symbols() {
        let syms = file_symbols([("a.rs", "fn new() {}\nfn go() {}\nfn real_work() {}\n")]);
        let names: Vec<&str> = syms.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, vec!["real_work"]);
    }
}
