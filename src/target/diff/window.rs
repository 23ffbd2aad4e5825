//! Rendering a diff: its deltas listed in order after the checks that need no I/O, then
//! read and diffed a window of files at a time on every core, their patches handed to the
//! sink in order.

use super::base::git_err;
use super::file::{Done, Entry, Job, Step, Work};
use super::rules::{DiffRules, RUN_DIR};
use super::sink::{spool_err, PatchSink};
use crate::target::exclude::Excluder;
use crate::target::scan::{escape_path, has_control_chars, is_run_dir};
use crate::target::{SkipReason, SkippedFile, TargetError};
use git2::{Delta, Diff, FileMode, Repository};
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// The files of a rendered patch (the bytes went to the sink).
#[derive(Debug, Default)]
pub(super) struct Rendered {
    pub(super) entries: Vec<Entry>,
    pub(super) skipped: Vec<SkippedFile>,
    /// Whether the diff had any change at all (reviewable or not) outside `.arev/`.
    pub(super) changed: bool,
}

/// `(path, deleted)` of a delta: the new path, or the old one for a deletion.
fn delta_path<'a>(delta: &git2::DiffDelta<'a>) -> (&'a [u8], bool) {
    let deleted = delta.status() == Delta::Deleted;
    let file = if deleted {
        delta.old_file()
    } else {
        delta.new_file()
    };
    (file.path_bytes().unwrap_or_default(), deleted)
}

/// arev's own home inside the repository, never part of a diff and not listed.
fn is_arev_home(path: &[u8]) -> bool {
    path.strip_prefix(RUN_DIR.as_bytes())
        .is_some_and(|rest| rest.is_empty() || rest.starts_with(b"/"))
}

/// The run directory `path` lies in, if any: a configured run-dir base, or a directory
/// that is an arev run dir (named like a run id, holding `meta.json`). Cached per directory.
fn run_dir_of(
    root: &Path,
    path: &str,
    bases: &[String],
    cache: &mut HashMap<String, bool>,
) -> Option<String> {
    let mut end = 0;
    while let Some(i) = path[end..].find('/') {
        end += i;
        let dir = &path[..end];
        let hit = bases.iter().any(|b| b == dir)
            || *cache
                .entry(dir.to_owned())
                .or_insert_with(|| is_run_dir(&root.join(dir)));
        if hit {
            return Some(dir.to_owned());
        }
        end += 1;
    }
    None
}

/// Whether a side of a delta is a symlink or a submodule (a gitlink, or an untracked
/// nested repository, which git lists as a directory).
fn special_kind(delta: &git2::DiffDelta<'_>) -> Option<SkipReason> {
    let modes = [delta.old_file().mode(), delta.new_file().mode()];
    if modes.contains(&FileMode::Link) {
        Some(SkipReason::Symlink)
    } else if modes.contains(&FileMode::Commit)
        || modes.contains(&FileMode::Tree)
        || delta_path(delta).0.ends_with(b"/")
    {
        Some(SkipReason::Submodule)
    } else {
        None
    }
}

/// Render `diff` as git prints it, one file at a time into `sink`, with only the files that
/// are reviewed: symlinks, submodules, run dirs, names with control characters, files over
/// the cap (never loaded), excluded files (docs/architecture.md §19.3) and binary files are
/// left out of the patch and listed as skipped; a changed path under `.arev/` is listed as
/// `arev_dir` (a change there is never reviewed as code). `workdir`: the new side is the working tree (else the
/// index). libgit2 lists the changed paths; each file's two sides are read here (the
/// working tree's without following links) and diffed as buffers, so no attribute or
/// filter lookup happens per file; the header is written as git writes it.
pub(super) fn render(
    repo: &Repository,
    root: &Path,
    diff: &Diff<'_>,
    rules: &DiffRules<'_>,
    excluder: Option<&Excluder<'_>>,
    workdir: bool,
    sink: &mut dyn PatchSink,
) -> Result<Rendered, TargetError> {
    let mut out = Rendered::default();
    let mut listed: HashSet<String> = HashSet::new();
    let mut skip = |out: &mut Rendered, path: String, reason: SkipReason, glob: Option<String>| {
        out.changed = true;
        if listed.insert(path.clone()) {
            out.skipped.push(SkippedFile { path, reason, glob });
        }
    };
    // First the checks that need no I/O, in delta order; then the files are read and
    // diffed a window at a time on every core, and their patches go to the sink in order.
    let steps = plan(root, diff, rules, excluder);
    let odb = repo.odb().map_err(|e| git_err(&e))?;
    let work = Work {
        odb: &odb,
        root,
        cap: rules.cap,
        workdir,
    };
    let mut rest = &steps[..];
    while !rest.is_empty() {
        let window = &rest[..rest.len().min(diff_window(rules.cap))];
        rest = &rest[window.len()..];
        // A small diff (the usual Stop-hook review) is rendered here, not handed to the pool.
        let done: Vec<Result<Done, TargetError>> = if window.len() < PARALLEL_FROM {
            window.iter().map(|step| work.diff(step)).collect()
        } else {
            use rayon::prelude::*;
            window.par_iter().map(|step| work.diff(step)).collect()
        };
        for (step, done) in window.iter().zip(done) {
            let path = match step {
                Step::Skip(path, reason, glob) => {
                    skip(&mut out, path.clone(), *reason, glob.clone());
                    continue;
                }
                Step::Diff(job) => job.path,
            };
            match done? {
                Done::Nothing => {}
                Done::Skip(reason) => skip(&mut out, path.to_owned(), reason, None),
                Done::File(chunk, entry) => {
                    out.changed = true;
                    sink.file(path, &chunk).map_err(spool_err)?;
                    out.entries.push(*entry);
                }
            }
        }
    }
    Ok(out)
}

/// The paths that are a link or a submodule on any side of `diff` (a type change is split
/// into a deletion and an addition): skipped in all their deltas.
fn special_paths(diff: &Diff<'_>) -> HashMap<String, SkipReason> {
    let mut special: HashMap<String, SkipReason> = HashMap::new();
    for delta in diff.deltas() {
        if let Some(why) = special_kind(&delta) {
            let (path, _) = delta_path(&delta);
            special
                .entry(String::from_utf8_lossy(path).into_owned())
                .or_insert(why);
        }
    }
    special
}

/// Every delta of `diff` in order, after the checks that need no I/O: listed as skipped, or
/// a file to read and diff. Paths outside `rules.only` are left out; a path under `.arev/`
/// is listed as skipped (`arev_dir`).
fn plan<'d>(
    root: &Path,
    diff: &'d Diff<'_>,
    rules: &DiffRules<'_>,
    excluder: Option<&Excluder<'_>>,
) -> Vec<Step<'d>> {
    let n = diff.deltas().len();
    let special = special_paths(diff);
    let mut run_dirs: HashMap<String, bool> = HashMap::new();
    let mut steps: Vec<Step<'_>> = Vec::with_capacity(n);
    for idx in 0..n {
        let Some(delta) = diff.get_delta(idx) else {
            continue;
        };
        let (raw, deleted) = delta_path(&delta);
        if is_arev_home(raw) {
            // A committed change there is listed, never silently dropped (an unreviewed
            // change); arev's own untracked output (run dirs, sessions) is not a change.
            if rules.only.is_none() && delta.status() != git2::Delta::Untracked {
                let path = escape_path(&String::from_utf8_lossy(raw));
                steps.push(Step::Skip(path, SkipReason::ArevDir, None));
            }
            continue;
        }
        let Ok(path) = std::str::from_utf8(raw) else {
            let path = escape_path(&String::from_utf8_lossy(raw));
            steps.push(Step::Skip(path, SkipReason::NotUtf8, None));
            continue;
        };
        if rules.only.is_some_and(|only| !only.contains(path)) {
            continue;
        }
        if has_control_chars(path) {
            steps.push(Step::Skip(
                escape_path(path),
                SkipReason::ControlChars,
                None,
            ));
            continue;
        }
        if let Some(dir) = run_dir_of(root, path, rules.run_dirs, &mut run_dirs) {
            steps.push(Step::Skip(dir, SkipReason::RunDir, None));
            continue;
        }
        if let Some(why) = special.get(path) {
            let path = path.trim_end_matches('/').to_owned();
            steps.push(Step::Skip(path, *why, None));
            continue;
        }
        if let Some((why, glob)) = excluder.and_then(|e| e.why(path)) {
            steps.push(Step::Skip(path.to_owned(), why, glob));
            continue;
        }
        let (old_file, new_file) = (delta.old_file(), delta.new_file());
        steps.push(Step::Diff(Job {
            path,
            deleted,
            old: (!old_file.id().is_zero() && old_file.mode() != FileMode::Unreadable)
                .then(|| (old_file.id(), old_file.mode())),
            new: (new_file.id(), new_file.mode()),
        }));
    }
    steps
}

/// How many files are read and diffed together (on every core) before their patches go to
/// the sink in order: each holds at most two sides within the size cap and a patch about as
/// large as both, so the window is sized for `DIFF_WINDOW_BYTES` of them at the cap (16
/// files at the default 1 MiB cap), between 2 and 32.
fn diff_window(cap: u64) -> usize {
    let per_file = cap.saturating_mul(4).max(1);
    usize::try_from(DIFF_WINDOW_BYTES / per_file)
        .unwrap_or(32)
        .clamp(2, 32)
}

/// The memory a window of files may hold at most, beyond what the rest of the pin holds.
const DIFF_WINDOW_BYTES: u64 = 64 << 20;

/// Fewer deltas than this in a window are diffed on the calling thread.
const PARALLEL_FROM: usize = 4;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_of_files_at_the_cap_stays_within_its_budget() {
        assert_eq!(diff_window(1 << 20), 16);
        assert_eq!(diff_window(64 << 10), 32);
        assert_eq!(diff_window(0), 32);
        assert_eq!(diff_window(100 << 20), 2);
        assert_eq!(diff_window(u64::MAX), 2);
        for cap in [4 << 10, 1 << 20, 3 << 20, 8 << 20] {
            let w = diff_window(cap) as u64;
            assert!(w * 4 * cap <= DIFF_WINDOW_BYTES, "{cap}");
        }
    }
}
