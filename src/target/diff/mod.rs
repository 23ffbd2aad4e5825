//! Diff targets: HEAD (or merge-base with `--base`) vs the working tree, index and untracked
//! files included, with the staged-diff fallback; rendered byte for byte as plain git renders
//! it (docs/architecture.md §5.1: full object ids, no rename detection) and holding only the
//! reviewed files (links, submodules, run dirs, oversized and binary files are listed as
//! skipped and never loaded or followed). The patch is streamed one file at a time into a
//! sink — a spool file with its digest, line count and brief, or just a hasher — so memory
//! stays bounded by the size cap, not the patch; the spool remembers each file's bytes and
//! stat pre-key so that the end-of-run drift check re-renders only files that moved.
//! Also snapshots: the working tree written as a git tree object through a private index
//! (the Stop hook's baseline), and the diff of a snapshot tree against the working tree
//! now, rendered and streamed the same way.
//!
//! `base` finds the tree a diff starts from, `rules` which files it holds, `window` lists
//! the deltas and renders them a window at a time, `file` diffs one file, `header` writes a
//! file's header as git does, `sink` is where the bytes go, `pin` pins a diff, `repin`
//! re-checks a pinned one, `tree` writes a working-tree snapshot and `snapshot` diffs one.
mod base;
mod file;
mod header;
mod pin;
mod repin;
mod rules;
mod sink;
mod snapshot;
mod tree;
mod window;

pub(crate) use base::DiffBase;
pub(crate) use pin::{patch_sha, pin_diff};
pub(crate) use repin::repin;
pub(crate) use rules::DiffRules;
pub(crate) use snapshot::{snapshot_diff, SnapshotDiff};
pub(crate) use tree::snapshot_tree;
