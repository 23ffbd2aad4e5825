//! The size guard (docs/architecture.md §3.2): no file of `src/` holds more than 700
//! production lines, that is lines outside its `#[cfg(test)]` modules. A file that is itself
//! a test module (declared `#[cfg(test)] mod tests;`, like `src/target/tests.rs`) has none.
//! Functions are held to 100 lines by clippy (`too_many_lines`, Cargo.toml and clippy.toml).

use regex::Regex;
use std::path::{Path, PathBuf};

/// Production lines a file of `src/` may hold.
const MAX_PRODUCTION_LINES: usize = 700;

use super::layers::{rust_files, src};

/// The file that declares the module `file` (`a/b.rs` and `a/b/mod.rs` are declared in
/// `a/mod.rs` or `a.rs`; a top-level module in `lib.rs`), with the module's name; None for
/// the crate roots.
fn parent_of(file: &Path) -> Option<(PathBuf, String)> {
    let stem = file.file_stem()?.to_str()?;
    let (dir, name) = match stem {
        "lib" | "main" if file.parent() == Some(src().as_path()) => return None,
        "mod" => {
            let dir = file.parent()?;
            (dir.parent()?, dir.file_name()?.to_str()?)
        }
        _ => (file.parent()?, stem),
    };
    let parent = if dir == src() {
        src().join("lib.rs")
    } else if dir.join("mod.rs").is_file() {
        dir.join("mod.rs")
    } else {
        dir.with_extension("rs")
    };
    Some((parent, name.to_string()))
}

/// Whether `file` is a test-only module: declared under `#[cfg(test)]`, or inside one.
fn is_test_module(file: &Path) -> bool {
    let Some((parent, name)) = parent_of(file) else {
        return false;
    };
    let text = std::fs::read_to_string(&parent).unwrap_or_default();
    let declared = Regex::new(&format!(
        r"#\[cfg\(test\)\]\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+{name}\s*;"
    ))
    .unwrap();
    declared.is_match(&text) || is_test_module(&parent)
}

/// Lines of `text` outside its inline `#[cfg(test)] mod … { … }` modules (rustfmt puts a
/// top-level module's closing brace, and nothing else of it, at the start of a line).
fn production_lines(text: &str) -> usize {
    let lines: Vec<&str> = text.lines().collect();
    let opens = Regex::new(r"^(?:pub(?:\([^)]*\))?\s+)?mod\s+\w+\s*\{").unwrap();
    let mut test_lines = 0;
    let mut i = 0;
    while i < lines.len() {
        let starts_test_mod = lines[i].trim() == "#[cfg(test)]"
            && lines[i + 1..]
                .iter()
                .find(|l| !l.trim_start().starts_with("#["))
                .is_some_and(|l| opens.is_match(l));
        if !starts_test_mod {
            i += 1;
            continue;
        }
        let end = (i + 1..lines.len())
            .find(|&j| lines[j] == "}")
            .unwrap_or(lines.len() - 1);
        test_lines += end - i + 1;
        i = end + 1;
    }
    lines.len() - test_lines
}

#[test]
fn no_file_holds_more_than_700_production_lines() {
    let mut over = Vec::new();
    for file in rust_files(&src()) {
        if is_test_module(&file) {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        let n = production_lines(&text);
        if n > MAX_PRODUCTION_LINES {
            let rel = file.strip_prefix(src()).unwrap().display().to_string();
            over.push(format!("src/{rel}: {n} production lines"));
        }
    }
    assert!(
        over.is_empty(),
        "files over {MAX_PRODUCTION_LINES} production lines (split them):\n{}",
        over.join("\n")
    );
}

#[test]
fn the_size_guard_counts_what_it_should() {
    // Inline test modules are left out; what comes after one counts again.
    let text = "fn a() {}\n\n#[cfg(test)]\nmod tests {\n    fn t() {}\n}\n\nfn b() {}\n";
    assert_eq!(production_lines(text), 4);
    let text = "#[cfg(test)]\n#[allow(dead_code)]\npub(crate) mod fixtures {\n}\nfn c() {}\n";
    assert_eq!(production_lines(text), 1);
    // An out-of-line test module is declared, not counted; an item under cfg(test) counts.
    let text = "fn a() {}\n#[cfg(test)]\nmod tests;\n#[cfg(test)]\nfn helper() {}\n";
    assert_eq!(production_lines(text), 5);
    // Test-only files are found through their declaration, and so are their children.
    assert!(is_test_module(&src().join("target/tests.rs")));
    assert!(is_test_module(&src().join("test_support.rs")));
    assert!(is_test_module(&src().join("records/fixtures.rs")));
    assert!(!is_test_module(&src().join("target/resolve.rs")));
    assert!(!is_test_module(&src().join("target/mod.rs")));
    assert!(!is_test_module(&src().join("lib.rs")));
}
