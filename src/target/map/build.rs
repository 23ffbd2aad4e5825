//! The context map of one target (docs/architecture.md §5.3): its symbols (a diff's changed
//! and enclosing definitions, a file target's definitions), one search of the context scope
//! for them, the capped block. [`build`] takes any reader (a commit's blobs in `arev eval`);
//! [`for_target`] reads a pinned target and the working tree.

use super::render::{render, ContextMap};
use super::search::{search, Query, Source};
use super::symbols::{file_symbols, patch_symbols, Symbol};
use crate::target::{ArtefactContent, PinnedTarget, TargetKind};
use std::collections::BTreeSet;
use std::io::Read;

/// Symbols searched for at most (the most relevant; the block could not show more).
pub const SEARCHED: usize = 32;
/// Bytes of a diff's patch read for its symbols.
const PATCH_BYTES: u64 = 16 << 20;
/// Files of a file or manifest target read for their definitions.
const TARGET_FILES: usize = 200;

/// What the map is computed for.
pub enum Subject<'a> {
    /// A unified patch (new-side line numbers).
    Patch(&'a str),
    /// Whole files: (path, text).
    Files(&'a [(String, String)]),
}

/// The map of `subject` over the scope `files` (sorted, repo-relative), read by `read`.
pub fn build(
    subject: Subject<'_>,
    files: &[&str],
    read: &(dyn Fn(&str) -> Option<Vec<u8>> + Sync),
) -> ContextMap {
    let text = |p: &str| read(p).and_then(|b| String::from_utf8(b).ok());
    match subject {
        Subject::Patch(patch) => {
            let facts = patch_symbols(patch, &text);
            let own = |p: &str, l: u32| facts.own(p, l);
            map_of(&facts.symbols, files, read, &own)
        }
        Subject::Files(target) => {
            let symbols = file_symbols(target.iter().map(|(p, t)| (p.as_str(), t.as_str())));
            let mine: BTreeSet<&str> = target.iter().map(|(p, _)| p.as_str()).collect();
            let own = |p: &str, _: u32| mine.contains(p);
            map_of(&symbols, files, read, &own)
        }
    }
}

fn map_of(
    symbols: &[Symbol],
    files: &[&str],
    read: &(dyn Fn(&str) -> Option<Vec<u8>> + Sync),
    own: &(dyn Fn(&str, u32) -> bool + Sync),
) -> ContextMap {
    let chosen: Vec<Symbol> = symbols
        .iter()
        .filter(|s| {
            s.name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_')
        })
        .take(SEARCHED)
        .cloned()
        .collect();
    let names: Vec<&str> = chosen.iter().map(|s| s.name.as_str()).collect();
    let homes: Vec<&str> = chosen.iter().map(|s| s.file.as_str()).collect();
    let found = search(
        &Query {
            names: &names,
            homes: &homes,
        },
        files,
        &Source { read, own },
    );
    render(&chosen, &found)
}

/// The map of a pinned target over the scope `files`, each read from the working tree like
/// a target file (never through a symlink, at most `cap` bytes).
pub fn for_target(target: &PinnedTarget, files: &[&str], cap: u64) -> ContextMap {
    let root = super::super::scan::RootDir::open(&target.root);
    let read = move |p: &str| root.read(p, cap).ok();
    match target.kind {
        TargetKind::Diff => {
            let patch = target.artefact.as_ref().map(patch_text).unwrap_or_default();
            build(Subject::Patch(&patch), files, &read)
        }
        TargetKind::File | TargetKind::Manifest => {
            let texts: Vec<(String, String)> = target
                .files
                .iter()
                .take(TARGET_FILES)
                .filter_map(|f| {
                    let bytes = read(&f.path)?;
                    Some((f.path.clone(), String::from_utf8(bytes).ok()?))
                })
                .collect();
            build(Subject::Files(&texts), files, &read)
        }
    }
}

/// The first [`PATCH_BYTES`] of a diff artefact, cut at a line end.
fn patch_text(a: &crate::target::Artefact) -> String {
    let bytes = match &a.content {
        ArtefactContent::Bytes(b) => b.clone(),
        ArtefactContent::Patch(p) => {
            let mut out = Vec::new();
            if let Ok(f) = std::fs::File::open(p.path()) {
                let _ = f.take(PATCH_BYTES).read_to_end(&mut out);
            }
            out
        }
    };
    let end = if bytes.len() as u64 >= PATCH_BYTES {
        bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1)
    } else {
        bytes.len()
    };
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::super::{MAP_BYTES, MAP_REFERENCES};
    use super::*;
    use std::collections::BTreeMap;

    /// A repository of `n` callers of five changed functions, each caller also a test half
    /// the time, and the diff that changes the five signatures.
    fn corpus(n: usize) -> (BTreeMap<String, Vec<u8>>, String) {
        let mut files = BTreeMap::new();
        let lib: String = (0..5)
            .map(|k| format!("pub fn changed_fn_{k}(a: u32, b: u32) -> u32 {{\n    a + b\n}}\n"))
            .collect();
        files.insert("src/lib.rs".to_string(), lib.into_bytes());
        for i in 0..n {
            let dir = if i % 2 == 0 { "src/callers" } else { "tests" };
            let body: String = (0..5)
                .map(|k| format!("    let _ = changed_fn_{k}(1, 2);\n"))
                .collect();
            files.insert(
                format!("{dir}/caller_{i:04}.rs"),
                format!("fn caller_{i}() {{\n{body}}}\n").into_bytes(),
            );
        }
        let mut patch = String::from(
            "diff --git a/src/lib.rs b/src/lib.rs\n--- a/src/lib.rs\n+++ b/src/lib.rs\n",
        );
        for k in 0..5 {
            let at = k * 3 + 1;
            patch.push_str(&format!(
                "@@ -{at},1 +{at},1 @@\n-pub fn changed_fn_{k}(a: u32) -> u32 {{\n+pub fn changed_fn_{k}(a: u32, b: u32) -> u32 {{\n"
            ));
        }
        (files, patch)
    }

    #[test]
    fn hundreds_of_references_fit_the_caps_and_every_symbol_shows() {
        let (files, patch) = corpus(400);
        let paths: Vec<&str> = files.keys().map(String::as_str).collect();
        let read = |p: &str| files.get(p).cloned();
        let map = build(Subject::Patch(&patch), &paths, &read);
        assert!(map.text.len() <= MAP_BYTES, "{}", map.text.len());
        assert!(map.references <= MAP_REFERENCES);
        assert!(map.references >= 20, "{}", map.text);
        for k in 0..5 {
            assert!(
                map.text.contains(&format!("changed_fn_{k} — src/callers/")),
                "{}",
                map.text
            );
        }
        assert!(
            map.text.contains("more references not listed"),
            "{}",
            map.text
        );
        assert!(
            !map.text.contains("src/lib.rs:"),
            "own lines are not listed: {}",
            map.text
        );
        // Deterministic: the same input, the same bytes.
        assert_eq!(build(Subject::Patch(&patch), &paths, &read), map);
    }

    #[test]
    fn a_file_target_lists_uses_outside_its_files() {
        let (files, _) = corpus(3);
        let paths: Vec<&str> = files.keys().map(String::as_str).collect();
        let read = |p: &str| files.get(p).cloned();
        let lib = String::from_utf8(files["src/lib.rs"].clone()).unwrap();
        let target = [("src/lib.rs".to_string(), lib)];
        let map = build(Subject::Files(&target), &paths, &read);
        assert!(
            map.text
                .contains("changed_fn_0 — src/callers/caller_0000.rs:2 (use)"),
            "{}",
            map.text
        );
        assert!(
            map.text
                .contains("changed_fn_0 — tests/caller_0001.rs:2 (test)"),
            "{}",
            map.text
        );
        assert!(!map.text.contains("src/lib.rs:"), "{}", map.text);
        assert_eq!(map.paths.len(), 3);
    }
}
