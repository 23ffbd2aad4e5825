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
        .filter(|s| s.name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
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
    let root = target.root.clone();
    let read = move |p: &str| super::super::scan::read_regular(&root, p, cap).ok();
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
