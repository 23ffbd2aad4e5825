//! Which fix commits become cases, and where their defect is (pure): the message rule,
//! code and test files, the size limits, and the hunk → expected-range rule. The git side
//! (walking history, diffing) is `mine.rs`.
//!
//! The rules, as docs/eval.md states them:
//! - **message**: the default regex matches the words fix/fixes/fixed/fixing, bug/bugs/
//!   bugfix, crash/crashes/crashed, leak/leaks/leaked, overflow/overflows/overflowed, CVE
//!   and CVE ids, case-insensitively, as whole words (`prefix` matches none of them);
//!   `--grep` replaces it (also case-insensitive; `(?-i)` turns that off).
//! - **files**: only code files count (by extension, `CODE_EXTENSIONS`; never arev's own
//!   `.arev/` directory, which the checkout replaces); test files
//!   (`tests/`, `test/`, `__tests__/`, `spec/` directories, `*_test.*`, `test_*.py`,
//!   `*.test.*`, `*.spec.*`) are the fix's regression tests, not the defect, and are left
//!   out; `--paths` globs narrow further.
//! - **small**: at most `max_files` code files changed (default 4) and at most `max_lines`
//!   lines added + removed in them (default 60); larger commits are skipped.
//! - **targets**: the code files that existed before the fix and whose content changed:
//!   files the fix adds or deletes, binary files, pure renames and files whose change is
//!   whitespace only are not targets. A commit left with no target is skipped with the
//!   reason per file.
//! - **expected locations** (the buggy revision's numbering, from a zero-context diff):
//!   removed or changed lines `a..=b` are the range `a..=b`; a pure insertion after line
//!   `k` marks the lines around the insertion point, `k..=k+1` (clamped to the file:
//!   `1..=1` at the top, `k..=k` at the end). Overlapping or adjacent ranges are merged.

use globset::GlobSet;

/// The default `--grep`.
pub const DEFAULT_FIX_REGEX: &str = r"(?i)\b(fix(e[sd]|ing)?|bug(s|fix(es)?)?|crash(e[sd])?|leak(s|ed)?|overflow(s|ed)?|cve(-\d{4}-\d+)?)\b";

/// Default `--max-files`.
pub const DEFAULT_MAX_FILES: usize = 4;
/// Default `--max-lines`.
pub const DEFAULT_MAX_LINES: usize = 60;

/// Extensions (lower-case, without the dot) of the files mining treats as code.
pub const CODE_EXTENSIONS: &[&str] = &[
    "rs", "c", "h", "cc", "cpp", "cxx", "hh", "hpp", "hxx", "m", "mm", "go", "py", "pyi", "js",
    "jsx", "mjs", "cjs", "ts", "tsx", "mts", "cts", "java", "kt", "kts", "scala", "groovy",
    "swift", "cs", "fs", "vb", "rb", "php", "pl", "pm", "lua", "r", "jl", "ex", "exs", "erl",
    "hrl", "hs", "ml", "mli", "clj", "cljs", "dart", "zig", "nim", "sh", "bash", "zsh", "ps1",
    "sql", "vue", "svelte", "sol", "elm", "cr", "d", "f90", "ada", "adb", "ads",
];

/// A code file, by extension.
pub fn is_code_file(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => {
            CODE_EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str())
        }
        _ => false,
    }
}

/// arev's own configuration (`.arev/…`), which a checkout replaces: never a target.
pub fn is_arev_config(path: &str) -> bool {
    path == "arev.toml" || path.starts_with(".arev/")
}

/// A test file: under a test directory, or named like one.
pub fn is_test_file(path: &str) -> bool {
    let mut parts: Vec<&str> = path.split('/').collect();
    let name = parts.pop().unwrap_or("").to_ascii_lowercase();
    if parts.iter().any(|d| {
        matches!(
            d.to_ascii_lowercase().as_str(),
            "test" | "tests" | "__tests__" | "spec" | "testdata"
        )
    }) {
        return true;
    }
    let stem = name.rsplit_once('.').map_or(name.as_str(), |(s, _)| s);
    stem.ends_with("_test")
        || stem.ends_with("_tests")
        || stem.ends_with(".test")
        || stem.ends_with(".spec")
        || (name.ends_with(".py") && stem.starts_with("test_"))
}

/// How a file changed in the fix commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    Added,
    Deleted,
    Modified,
    Renamed,
    /// Copies, type changes and anything else: never a target.
    Other,
}

/// One changed file of a fix commit, as `mine.rs` measured it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileFacts {
    /// The path before the fix (the path after it for an added file).
    pub old_path: String,
    /// The path after the fix (the path before it for a deleted file).
    pub new_path: String,
    pub change: Change,
    pub binary: bool,
    /// Zero-context hunks: (old_start, old_lines, new_start, new_lines).
    pub hunks: Vec<Hunk>,
    /// The diff ignoring whitespace has no hunk.
    pub whitespace_only: bool,
    /// Lines of the file before the fix.
    pub old_lines: u32,
    /// Why `mine.rs` left the file unread, if it did: a submodule, a side over the size cap
    /// (never a target, like the review would skip it).
    pub unread: Option<&'static str>,
}

/// A zero-context hunk header `@@ -old_start,old_lines +new_start,new_lines @@`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hunk {
    pub old_start: u32,
    pub old_lines: u32,
    pub new_start: u32,
    pub new_lines: u32,
}

/// Size limits of a minable commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub max_files: usize,
    pub max_lines: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_files: DEFAULT_MAX_FILES,
            max_lines: DEFAULT_MAX_LINES,
        }
    }
}

/// Why a commit whose message matched is not a case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Skip {
    Merge,
    Root,
    /// Its parent is not in the repository (a shallow clone).
    NoParent,
    NoPathMatch,
    NoCodeFile,
    OnlyTests,
    TooManyFiles {
        files: usize,
        max: usize,
    },
    TooManyLines {
        lines: usize,
        max: usize,
    },
    /// No file left to point at: each file with why.
    NothingToLocate(Vec<(String, &'static str)>),
}

impl std::fmt::Display for Skip {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Merge => write!(f, "merge commit"),
            Self::Root => write!(f, "root commit (no parent to review)"),
            Self::NoParent => write!(f, "parent commit not in the repository (shallow clone?)"),
            Self::NoPathMatch => write!(f, "no changed file matches --paths"),
            Self::NoCodeFile => write!(f, "no code file changed"),
            Self::OnlyTests => write!(f, "only test files changed"),
            Self::TooManyFiles { files, max } => {
                write!(f, "{files} code files changed (limit {max}, --max-files)")
            }
            Self::TooManyLines { lines, max } => {
                write!(
                    f,
                    "{lines} lines changed in code files (limit {max}, --max-lines)"
                )
            }
            Self::NothingToLocate(why) => {
                let parts: Vec<String> = why.iter().map(|(p, w)| format!("{p} {w}")).collect();
                write!(
                    f,
                    "no removed or changed line to point at: {}",
                    parts.join("; ")
                )
            }
        }
    }
}

/// A commit's targets and expected ranges: (path at the buggy revision, ranges).
pub type Located = Vec<(String, Vec<(u32, u32)>)>;

/// Decide whether the changed files of a fix commit make a case, and where its defect is.
pub fn locate(
    files: &[FileFacts],
    paths: Option<&GlobSet>,
    limits: Limits,
) -> Result<Located, Skip> {
    let in_paths =
        |f: &&FileFacts| paths.is_none_or(|g| g.is_match(&f.old_path) || g.is_match(&f.new_path));
    let scoped: Vec<&FileFacts> = files.iter().filter(in_paths).collect();
    if scoped.is_empty() {
        return Err(Skip::NoPathMatch);
    }
    let code: Vec<&FileFacts> = scoped
        .into_iter()
        .filter(|f| is_code_file(&f.old_path) || is_code_file(&f.new_path))
        .filter(|f| !is_arev_config(&f.old_path))
        .collect();
    if code.is_empty() {
        return Err(Skip::NoCodeFile);
    }
    let code: Vec<&FileFacts> = code
        .into_iter()
        .filter(|f| !is_test_file(&f.old_path) && !is_test_file(&f.new_path))
        .collect();
    if code.is_empty() {
        return Err(Skip::OnlyTests);
    }
    if code.len() > limits.max_files {
        return Err(Skip::TooManyFiles {
            files: code.len(),
            max: limits.max_files,
        });
    }
    let lines: usize = code
        .iter()
        .flat_map(|f| &f.hunks)
        .map(|h| h.old_lines as usize + h.new_lines as usize)
        .sum();
    if lines > limits.max_lines {
        return Err(Skip::TooManyLines {
            lines,
            max: limits.max_lines,
        });
    }
    let mut located = Vec::new();
    let mut why = Vec::new();
    for f in code {
        let reason = match f.change {
            _ if f.unread.is_some() => f.unread,
            Change::Added => Some("added by the fix"),
            Change::Deleted => Some("deleted by the fix"),
            Change::Other => Some("copied or changed type"),
            _ if f.binary => Some("binary"),
            Change::Renamed if f.hunks.is_empty() => Some("renamed without changes"),
            _ if f.hunks.is_empty() => Some("no line changed (mode only)"),
            _ if f.whitespace_only => Some("whitespace-only change"),
            _ if f.old_lines == 0 => Some("empty before the fix"),
            Change::Modified | Change::Renamed => None,
        };
        match reason {
            Some(r) => why.push((f.old_path.clone(), r)),
            None => located.push((f.old_path.clone(), expected_ranges(&f.hunks, f.old_lines))),
        }
    }
    if located.is_empty() {
        return Err(Skip::NothingToLocate(why));
    }
    located.sort();
    Ok(located)
}

/// Zero-context hunks → merged line ranges of the file before the fix (the rule in this
/// file's header). `old_len` is the file's line count before the fix (≥ 1).
pub fn expected_ranges(hunks: &[Hunk], old_len: u32) -> Vec<(u32, u32)> {
    let old_len = old_len.max(1);
    let mut ranges: Vec<(u32, u32)> = hunks
        .iter()
        .map(|h| {
            if h.old_lines > 0 {
                let end = h.old_start.saturating_add(h.old_lines - 1);
                (h.old_start.clamp(1, old_len), end.clamp(1, old_len))
            } else {
                // Inserted after line old_start (0 = before the first line).
                let k = h.old_start.min(old_len);
                (k.max(1), k.saturating_add(1).min(old_len))
            }
        })
        .collect();
    ranges.sort_unstable();
    let mut merged: Vec<(u32, u32)> = Vec::with_capacity(ranges.len());
    for (s, e) in ranges {
        match merged.last_mut() {
            Some(last) if s <= last.1.saturating_add(1) => last.1 = last.1.max(e),
            _ => merged.push((s, e)),
        }
    }
    merged
}

/// The case id of a fix commit.
pub fn case_id(fix_sha: &str) -> String {
    format!("fix-{}", &fix_sha[..fix_sha.len().min(12)])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn re() -> regex::Regex {
        regex::Regex::new(DEFAULT_FIX_REGEX).unwrap()
    }

    #[test]
    fn default_regex_matches_whole_fix_words_case_insensitively() {
        for m in [
            "Fix off-by-one in parse",
            "fixes #12",
            "FIXED: crash on empty input",
            "bugfix: leak in cache",
            "parser: overflowed buffer",
            "Patch CVE-2024-12345",
            "address cve",
            "Crashes when x is 0",
            "memory leaks",
            "bug",
        ] {
            assert!(re().is_match(m), "{m}");
        }
        for m in [
            "prefix the names",
            "suffixes",
            "debugging output",
            "add buggy test data",
            "refactor parser",
            "fixture update",
        ] {
            assert!(!re().is_match(m), "{m}");
        }
    }

    #[test]
    fn code_and_test_files() {
        for p in ["src/lib.rs", "a/b.PY", "x.tsx", "main.go", "k.c"] {
            assert!(is_code_file(p), "{p}");
        }
        for p in [
            "README.md",
            "Cargo.toml",
            "Makefile",
            ".rs",
            "data.json",
            "rs",
        ] {
            assert!(!is_code_file(p), "{p}");
        }
        for p in [
            "tests/it.rs",
            "src/test/A.java",
            "pkg/foo_test.go",
            "test_parse.py",
            "web/a.test.ts",
            "web/__tests__/a.js",
            "b.spec.js",
        ] {
            assert!(is_test_file(p), "{p}");
        }
        for p in [
            "src/lib.rs",
            "src/testing.rs",
            "attest.py",
            "contest/main.c",
        ] {
            assert!(!is_test_file(p), "{p}");
        }
    }

    fn h(old_start: u32, old_lines: u32, new_start: u32, new_lines: u32) -> Hunk {
        Hunk {
            old_start,
            old_lines,
            new_start,
            new_lines,
        }
    }

    #[test]
    fn hunks_to_expected_ranges() {
        // Changed lines 10..=12.
        assert_eq!(expected_ranges(&[h(10, 3, 10, 3)], 50), [(10, 12)]);
        // Removed line 7 only.
        assert_eq!(expected_ranges(&[h(7, 1, 6, 0)], 50), [(7, 7)]);
        // Pure insertion after line 20: the lines around the insertion point.
        assert_eq!(expected_ranges(&[h(20, 0, 21, 2)], 50), [(20, 21)]);
        // At the top (after line 0) and at the end (after the last line).
        assert_eq!(expected_ranges(&[h(0, 0, 1, 1)], 50), [(1, 1)]);
        assert_eq!(expected_ranges(&[h(50, 0, 51, 3)], 50), [(50, 50)]);
        // Adjacent and overlapping ranges merge; distant ones stay apart; order is sorted.
        assert_eq!(
            expected_ranges(
                &[
                    h(30, 1, 30, 1),
                    h(10, 2, 10, 2),
                    h(12, 0, 13, 1),
                    h(13, 1, 14, 1)
                ],
                50
            ),
            [(10, 13), (30, 30)]
        );
        // A one-line file.
        assert_eq!(expected_ranges(&[h(1, 0, 2, 1)], 1), [(1, 1)]);
    }

    fn file(path: &str, change: Change, hunks: Vec<Hunk>) -> FileFacts {
        FileFacts {
            old_path: path.into(),
            new_path: path.into(),
            change,
            binary: false,
            unread: None,
            hunks,
            whitespace_only: false,
            old_lines: 100,
        }
    }

    #[test]
    fn locate_picks_targets_and_ranges() {
        let files = [
            file("src/b.rs", Change::Modified, vec![h(5, 1, 5, 1)]),
            file("src/a.rs", Change::Modified, vec![h(40, 0, 41, 2)]),
            file("src/new.rs", Change::Added, vec![h(0, 0, 1, 9)]),
            file("tests/regress.rs", Change::Modified, vec![h(3, 0, 4, 20)]),
            file("CHANGELOG.md", Change::Modified, vec![h(1, 0, 2, 1)]),
        ];
        let got = locate(&files, None, Limits::default()).unwrap();
        assert_eq!(
            got,
            [
                ("src/a.rs".to_string(), vec![(40, 41)]),
                ("src/b.rs".to_string(), vec![(5, 5)])
            ]
        );
    }

    #[test]
    fn locate_skips_with_reasons() {
        let lim = Limits::default();
        let rename = FileFacts {
            new_path: "src/helpers.rs".into(),
            ..file("src/util.rs", Change::Renamed, vec![])
        };
        let err = locate(std::slice::from_ref(&rename), None, lim).unwrap_err();
        assert_eq!(
            err,
            Skip::NothingToLocate(vec![("src/util.rs".into(), "renamed without changes")])
        );
        assert!(err
            .to_string()
            .contains("src/util.rs renamed without changes"));
        let ws = FileFacts {
            whitespace_only: true,
            ..file("src/a.rs", Change::Modified, vec![h(3, 1, 3, 1)])
        };
        assert_eq!(
            locate(&[ws], None, lim).unwrap_err(),
            Skip::NothingToLocate(vec![("src/a.rs".into(), "whitespace-only change")])
        );
        assert_eq!(
            locate(
                &[file("README.md", Change::Modified, vec![h(1, 1, 1, 1)])],
                None,
                lim
            ),
            Err(Skip::NoCodeFile)
        );
        assert_eq!(
            locate(
                &[file(
                    ".arev/hooks/x.py",
                    Change::Modified,
                    vec![h(1, 1, 1, 1)]
                )],
                None,
                lim
            ),
            Err(Skip::NoCodeFile)
        );
        assert_eq!(
            locate(
                &[file("tests/a.rs", Change::Modified, vec![h(1, 1, 1, 1)])],
                None,
                lim
            ),
            Err(Skip::OnlyTests)
        );
        let many: Vec<FileFacts> = (0..5)
            .map(|i| {
                file(
                    &format!("src/f{i}.rs"),
                    Change::Modified,
                    vec![h(1, 1, 1, 1)],
                )
            })
            .collect();
        assert_eq!(
            locate(&many, None, lim),
            Err(Skip::TooManyFiles { files: 5, max: 4 })
        );
        assert!(locate(&many[..4], None, lim).is_ok());
        // 31 removed + 30 added = 61 > 60.
        let big = file("src/a.rs", Change::Modified, vec![h(1, 31, 1, 30)]);
        assert_eq!(
            locate(std::slice::from_ref(&big), None, lim),
            Err(Skip::TooManyLines { lines: 61, max: 60 })
        );
        let lim2 = Limits {
            max_files: 4,
            max_lines: 61,
        };
        assert!(locate(&[big], None, lim2).is_ok());
        let only_new = file("src/new.rs", Change::Added, vec![h(0, 0, 1, 3)]);
        assert_eq!(
            locate(&[only_new], None, lim),
            Err(Skip::NothingToLocate(vec![(
                "src/new.rs".into(),
                "added by the fix"
            )]))
        );
    }

    #[test]
    fn paths_globs_narrow_the_files() {
        let mut b = globset::GlobSetBuilder::new();
        b.add(globset::Glob::new("src/core/**").unwrap());
        let g = b.build().unwrap();
        let files = [
            file("src/core/a.rs", Change::Modified, vec![h(2, 1, 2, 1)]),
            file("src/ui/b.rs", Change::Modified, vec![h(2, 1, 2, 1)]),
        ];
        assert_eq!(
            locate(&files, Some(&g), Limits::default()).unwrap(),
            [("src/core/a.rs".to_string(), vec![(2, 2)])]
        );
        assert_eq!(
            locate(&files[1..], Some(&g), Limits::default()),
            Err(Skip::NoPathMatch)
        );
    }

    #[test]
    fn case_ids() {
        assert_eq!(case_id("0123456789abcdef0123"), "fix-0123456789ab");
    }
}
