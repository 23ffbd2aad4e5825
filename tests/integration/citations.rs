//! The citation guard (docs/contracts.md): every section citation in the repository's
//! sources and docs names a document the repository holds and a numbered heading that
//! document has, so that a maintainer who clones it alone can follow each one.
//!
//! A citation is the section sign followed by a number (`2`, `19.3`). What it cites is the
//! word just before it: a path ending in `.md` (`docs/architecture.md`, `README.md`, relative
//! to the repository root, the citing file's folder or `docs/`), or a page of `docs/` named
//! without its extension (`contracts`). A bare number continues a list (`… §N, §M`) or,
//! in a Markdown page, cites that page itself; in a source file it cites the document last
//! named in the same comment block, and is an error when there is none. A citation of the
//! spec the repository does not contain (the word `SPEC`) is always an error: those cite
//! `docs/contracts.md`, which numbers its sections like that spec did.

use regex::Regex;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// What is wrong with one citation.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Problem {
    /// `SPEC` and a section: the spec is not in the repository.
    Spec,
    /// A section of a document the repository does not hold.
    NoSuchDocument(String),
    /// A section the document does not have.
    NoSuchSection(String),
    /// A section of no document (in a source file, with none named before it).
    NoDocument,
}

/// One citation: where it is (1-based line), what it cites, and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Finding {
    line: usize,
    cited: String,
    problem: Problem,
}

/// The numbered headings of a Markdown text (`## 4.`, `### 5.1 …`), outside code fences.
fn sections(markdown: &str) -> BTreeSet<String> {
    let heading = Regex::new(r"^#{1,6}\s+(\d+(?:\.\d+)*)\.?(?:\s|$)").unwrap();
    let mut fenced = false;
    let mut out = BTreeSet::new();
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            if let Some(c) = heading.captures(line) {
                out.insert(c[1].to_string());
            }
        }
    }
    out
}

/// The documents a citation may name: repository-relative path → its numbered sections.
type Docs = BTreeMap<String, BTreeSet<String>>;

/// A source file's text cut into blocks a bare citation may refer back within: each run of
/// comment lines (`//`, `///`, `//!`, `*` in Rust; `#` elsewhere) joined without its markers, each other line
/// alone. Markdown is one block. The pair is (the block's text, the 1-based line each of
/// its characters came from).
fn blocks(text: &str, path: &str) -> Vec<(String, Vec<usize>)> {
    let markdown = path.ends_with(".md");
    let comment = if path.ends_with(".rs") {
        Regex::new(r"^\s*(?://[/!]?|/?\*+/?)\s?").unwrap()
    } else {
        Regex::new(r"^\s*#+\s?").unwrap()
    };
    let mut out: Vec<(String, Vec<usize>)> = vec![];
    let mut in_comment = false;
    for (i, line) in text.lines().enumerate() {
        let (body, is_comment) = match comment.find(line) {
            Some(m) if !markdown => (&line[m.end()..], true),
            _ => (line, false),
        };
        let joins = markdown || (is_comment && in_comment);
        if !joins || out.is_empty() {
            out.push((String::new(), vec![]));
        }
        let (t, lines) = out.last_mut().unwrap();
        if !t.is_empty() {
            t.push('\n');
            lines.push(i + 1);
        }
        t.push_str(body);
        lines.extend(std::iter::repeat_n(i + 1, body.len()));
        in_comment = is_comment;
    }
    out
}

/// The document a word names, if it names one: `Some(Ok(path))` for a document the
/// repository holds, `Some(Err(word))` for a `.md` it does not, None for another word.
fn document(word: &str, from: &str, docs: &Docs) -> Option<Result<String, String>> {
    let dir = Path::new(from).parent().unwrap_or(Path::new(""));
    let candidates = if word.ends_with(".md") {
        vec![
            word.to_string(),
            dir.join(word).to_string_lossy().into_owned(),
            format!("docs/{word}"),
        ]
    } else {
        vec![format!("docs/{}.md", word.to_ascii_lowercase())]
    };
    let normal = |p: &str| p.trim_start_matches("./").to_string();
    match candidates
        .iter()
        .map(|c| normal(c))
        .find(|c| docs.contains_key(c))
    {
        Some(found) => Some(Ok(found)),
        None if word.ends_with(".md") => Some(Err(word.to_string())),
        None => None,
    }
}

/// What a citation cites.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Target {
    Spec,
    Nothing,
    Document(String),
    Missing(String),
}

/// Every citation in `text` (the file `path`, repository-relative) that is wrong.
fn check(path: &str, text: &str, docs: &Docs) -> Vec<Finding> {
    let markdown = path.ends_with(".md");
    let cite = Regex::new(r"\x{a7}(\d+(?:\.\d+)*)").unwrap();
    let word = Regex::new(r"([A-Za-z0-9_./-]+)[`'*_\s]*$").unwrap();
    let list = Regex::new(r"^[\s,;`)]*(?:and|or|to|–|-)?[\s`]*$").unwrap();
    let mut out = vec![];
    for (block, lines) in blocks(text, path) {
        // The last citation's target and where it ended; the last document cited.
        let mut last: Option<(Target, usize)> = None;
        let mut last_document: Option<String> = None;
        for c in cite.captures_iter(&block) {
            let whole = c.get(0).unwrap();
            let section = c[1].to_string();
            let named = word
                .captures(&block[..whole.start()])
                .map(|w| w[1].to_string());
            let explicit = match named.as_deref() {
                Some("SPEC") => Some(Target::Spec),
                Some(w) => document(w, path, docs).map(|d| match d {
                    Ok(doc) => Target::Document(doc),
                    Err(doc) => Target::Missing(doc),
                }),
                None => None,
            };
            let continued = last.as_ref().and_then(|(t, end)| {
                (*end <= whole.start() && list.is_match(&block[*end..whole.start()]))
                    .then(|| t.clone())
            });
            let target = explicit.or(continued).unwrap_or_else(|| {
                if markdown {
                    Target::Document(path.to_string())
                } else {
                    last_document
                        .clone()
                        .map_or(Target::Nothing, Target::Document)
                }
            });
            let problem = match &target {
                Target::Spec => Some(Problem::Spec),
                Target::Nothing => Some(Problem::NoDocument),
                Target::Missing(doc) => Some(Problem::NoSuchDocument(doc.clone())),
                Target::Document(doc) if !docs[doc].contains(&section) => {
                    Some(Problem::NoSuchSection(doc.clone()))
                }
                Target::Document(_) => None,
            };
            if let Some(problem) = problem {
                out.push(Finding {
                    line: lines.get(whole.start()).copied().unwrap_or(0),
                    cited: format!(
                        "{}\u{a7}{section}",
                        named.map(|w| w + " ").unwrap_or_default()
                    ),
                    problem,
                });
            }
            if let Target::Document(d) = &target {
                last_document = Some(d.clone());
            }
            last = Some((target, whole.end()));
        }
    }
    out
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The files of the repository a citation may sit in: every file git does not ignore, hidden
/// ones (`.github/`, `.claude-plugin/`) and scripts without an extension (`bin/arev`) too.
fn files() -> Vec<PathBuf> {
    let mut out = vec![];
    let walk = ignore::WalkBuilder::new(root())
        .hidden(false)
        .filter_entry(|e| e.file_name() != ".git")
        .build();
    for e in walk {
        let p = e.unwrap().into_path();
        if p.is_file() {
            out.push(p);
        }
    }
    out.sort();
    out
}

fn rel(p: &Path) -> String {
    p.strip_prefix(root())
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

/// Every Markdown page of the repository with its numbered sections.
fn repo_docs(files: &[PathBuf]) -> Docs {
    files
        .iter()
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .map(|p| (rel(p), sections(&std::fs::read_to_string(p).unwrap())))
        .collect()
}

#[test]
fn every_section_citation_names_a_section_the_repository_has() {
    let files = files();
    let docs = repo_docs(&files);
    assert!(
        docs.get("docs/contracts.md")
            .is_some_and(|s| s.contains("21")),
        "docs/contracts.md with its sections 1–21"
    );
    let mut bad = vec![];
    let mut seen = 0;
    for f in &files {
        // Text only: a file that is not UTF-8 (an image, an archive) cites nothing.
        let Ok(text) = std::fs::read_to_string(f) else {
            continue;
        };
        seen += text.matches('\u{a7}').count();
        for finding in check(&rel(f), &text, &docs) {
            bad.push(format!(
                "{}:{}: {} — {:?}",
                rel(f),
                finding.line,
                finding.cited,
                finding.problem
            ));
        }
    }
    assert!(seen > 100, "the guard found only {seen} section signs");
    assert!(
        bad.is_empty(),
        "section citations the repository cannot follow (cite docs/contracts.md §N or another \
         page's numbered heading):\n{}",
        bad.join("\n")
    );
}

// The guard itself, on texts made to fail. In these texts `@` stands for the section sign,
// so that this file holds no citation of its own.

fn docs() -> Docs {
    let mut d = Docs::new();
    d.insert(
        "docs/contracts.md".into(),
        sections("# C\n## 1. One\n### 1.2 Sub\n```\n## 9. fenced\n```\n## 19. X\n### 19.3 Y\n"),
    );
    d.insert(
        "docs/architecture.md".into(),
        sections("## 3. M\n### 3.1 L\n"),
    );
    d.insert("README.md".into(), sections("# arev\n## Set up\n"));
    d
}

fn problems(path: &str, text: &str) -> Vec<(usize, Problem)> {
    let text = text.replace('@', "\u{a7}");
    check(path, &text, &docs())
        .into_iter()
        .map(|f| (f.line, f.problem))
        .collect()
}

#[test]
fn headings_are_numbered_sections_outside_code_fences() {
    let s = &docs()["docs/contracts.md"];
    let want: BTreeSet<String> = ["1", "1.2", "19", "19.3"].map(String::from).into();
    assert_eq!(*s, want);
}

#[test]
fn citations_of_existing_sections_pass() {
    let ok = "// docs/contracts.md @19.3 and `docs/architecture.md` @3.1, contracts @1.2\n\
              // (docs/contracts.md @19, @19.3; the table in @1.2)\n";
    assert_eq!(problems("src/a.rs", ok), vec![]);
    // Wrapped over two comment lines, and continued in the same block.
    let wrapped = "//! the meter (docs/contracts.md\n//! @19.3): and in @1\nfn f() {}\n";
    assert_eq!(problems("src/a.rs", wrapped), vec![]);
    // In a page, a bare number is the page's own section.
    assert_eq!(
        problems(
            "docs/architecture.md",
            "as in @3.1; see docs/contracts.md @1"
        ),
        vec![]
    );
}

#[test]
fn a_citation_of_the_spec_fails_also_wrapped_or_listed() {
    assert_eq!(
        problems("src/a.rs", "// (SPEC @19.3)\n"),
        vec![(1, Problem::Spec)]
    );
    assert_eq!(
        problems("src/a.rs", "// the meter (SPEC\n// @19.1, @19.3)\n"),
        vec![(2, Problem::Spec), (2, Problem::Spec)]
    );
    assert_eq!(
        problems("README.md", "x (SPEC @7)"),
        vec![(1, Problem::Spec)]
    );
}

#[test]
fn a_missing_section_or_document_fails() {
    assert_eq!(
        problems("src/a.rs", "// docs/contracts.md @22\n"),
        vec![(1, Problem::NoSuchSection("docs/contracts.md".into()))]
    );
    assert_eq!(
        problems("tests/x.rs", "x\n/// see contracts @19.4\n"),
        vec![(2, Problem::NoSuchSection("docs/contracts.md".into()))]
    );
    assert_eq!(
        problems("docs/architecture.md", "## 3. M\nsee @4 and README.md @1"),
        vec![
            (2, Problem::NoSuchSection("docs/architecture.md".into())),
            (2, Problem::NoSuchSection("README.md".into()))
        ]
    );
    assert_eq!(
        problems("src/a.rs", "// reference/agent-clis.md @1.1\n"),
        vec![(1, Problem::NoSuchDocument("reference/agent-clis.md".into()))]
    );
}

#[test]
fn a_bare_citation_in_a_source_file_needs_a_document_in_its_block() {
    assert_eq!(
        problems("src/a.rs", "    // lost passes (@19.2).\n"),
        vec![(1, Problem::NoDocument)]
    );
    // A document named in an earlier, separate comment does not carry over.
    assert_eq!(
        problems(
            "src/a.rs",
            "// docs/contracts.md @1\nfn f() {}\n// and @19\n"
        ),
        vec![(3, Problem::NoDocument)]
    );
}
