//! Which files of a diff are reviewed, and the libgit2 options that list them.

use crate::target::Excludes;
use git2::DiffOptions;
use std::collections::BTreeSet;

/// The run directory's home inside a repository; never part of a diff.
pub(super) const RUN_DIR: &str = ".arev";

/// At most this many paths are handed to libgit2 as a pathspec (its matching is linear in
/// the pathspec per path); a longer list is filtered after the diff instead.
const PATHSPEC_MAX: usize = 64;

/// Which files of a diff are reviewed (everything else is left out of the patch).
#[derive(Debug, Clone, Default)]
pub(crate) struct DiffRules<'a> {
    /// `max_file_bytes`: a side over it is `too_large` and never loaded.
    pub cap: u64,
    /// Root-relative run-dir bases (besides `.arev/` and detected run dirs).
    pub run_dirs: &'a [String],
    /// Only these paths (re-pinning a target's own files); None = every changed path.
    pub only: Option<&'a BTreeSet<String>>,
    /// Excluded globs, generated/vendored files and lockfiles (listed as skipped).
    pub excludes: Option<&'a Excludes>,
}

impl<'a> DiffRules<'a> {
    /// Every changed path under the size cap `cap` and `excludes`, no extra run dirs: the
    /// rules `arev run diff` pins under with a configuration (the hook's and `diff_sha`'s).
    pub fn whole_tree(cap: u64, excludes: &'a Excludes) -> Self {
        Self {
            cap,
            run_dirs: &[],
            only: None,
            excludes: Some(excludes),
        }
    }
}

/// The diff options: full object ids and git's default indent heuristic (what plain git
/// prints), libgit2's binary sniff beyond the cap, and the paths of `rules.only` as a
/// literal pathspec when there are few.
pub(super) fn options(rules: &DiffRules<'_>, untracked: bool) -> DiffOptions {
    let max_size = i64::try_from(rules.cap).unwrap_or(i64::MAX).max(1);
    let mut opts = DiffOptions::new();
    opts.max_size(max_size).id_abbrev(40).indent_heuristic(true);
    if untracked {
        opts.include_untracked(true)
            .recurse_untracked_dirs(true)
            .show_untracked_content(true);
    }
    if let Some(only) = rules.only.filter(|o| o.len() <= PATHSPEC_MAX) {
        for p in only {
            opts.pathspec(p);
        }
        opts.disable_pathspec_match(true);
    }
    opts
}
