//! `--incremental` (docs/architecture.md §20): which files of a pinned target changed since
//! a baseline review, and the target restricted to them — what the agents are given.
//!
//! The unit is the file. A manifest (or a single file) compares each file's sha256 with the
//! one the baseline's coverage recorded; a diff compares each file's *section of the patch*
//! (from its `diff --git` line to the next), so a file is re-reviewed when its change since
//! the base differs from the baseline's: that per-file interdiff is what the agents see. A
//! file the baseline did not review (new, renamed, skipped there, or a baseline without
//! digests) is reviewed. Everything else is carried over.

use super::brief;
use super::scan::{count_lines, sha256_hex};
use super::shard::restrict_manifest;
use super::{Artefact, PinnedTarget, TargetKind};
use std::collections::{BTreeMap, BTreeSet};

/// What the baseline recorded about one file it reviewed (or carried over).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BaselineFile {
    /// sha256 of the file's bytes.
    pub sha256: Option<String>,
    /// sha256 of the file's section of diff.patch (diff targets).
    pub patch_sha256: Option<String>,
}

/// The split of a target into the files reviewed again and the files carried over.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IncrementalSplit {
    /// Files changed since the baseline, or not reviewed there (sorted).
    pub reviewed: Vec<String>,
    /// Files unchanged since the baseline (sorted).
    pub carried: Vec<String>,
}

/// Split `target`'s files by what the baseline recorded (`baseline`: path → digests of the
/// files it reviewed or carried over). Pure.
pub fn split_incremental(
    target: &PinnedTarget,
    baseline: &BTreeMap<String, BaselineFile>,
) -> IncrementalSplit {
    let sections = patch_sections(target);
    let mut split = IncrementalSplit::default();
    for f in &target.files {
        let unchanged = baseline.get(&f.path).is_some_and(|b| match target.kind {
            TargetKind::Diff => {
                b.patch_sha256.is_some() && b.patch_sha256.as_ref() == sections.get(&f.path)
            }
            TargetKind::File | TargetKind::Manifest => {
                !f.sha256.is_empty() && b.sha256.as_deref() == Some(f.sha256.as_str())
            }
        });
        if unchanged {
            split.carried.push(f.path.clone());
        } else {
            split.reviewed.push(f.path.clone());
        }
    }
    split
}

/// `target` restricted to the files in `keep`: a manifest gets its own manifest.txt, a diff
/// the sections of diff.patch of those files (with their hunks), a single file itself or
/// nothing. TARGET_SHA is that of the restricted artefact; mode and type stay the full
/// target's. Skipped files stay listed.
pub fn restrict(target: &PinnedTarget, keep: &BTreeSet<String>) -> PinnedTarget {
    let files: Vec<_> = target
        .files
        .iter()
        .filter(|f| keep.contains(&f.path))
        .cloned()
        .collect();
    match target.kind {
        TargetKind::Manifest => restrict_manifest(target.clone(), files),
        TargetKind::File => PinnedTarget {
            files,
            ..target.clone()
        },
        TargetKind::Diff => {
            // The spooled patch is read back: a restriction is a fraction of it.
            let patch = target
                .artefact
                .as_ref()
                .and_then(|a| a.read().ok())
                .unwrap_or_default();
            let mut bytes = Vec::new();
            for (path, range) in section_ranges(&patch) {
                if keep.contains(&path) {
                    bytes.extend_from_slice(&patch[range]);
                }
            }
            let hunks = target
                .hunks
                .iter()
                .filter(|(p, _)| keep.contains(*p))
                .map(|(p, h)| (p.clone(), h.clone()))
                .collect();
            PinnedTarget {
                sha256: sha256_hex(&bytes),
                brief: brief::diff_brief(&String::from_utf8_lossy(&bytes)),
                measured_lines: u64::from(count_lines(&bytes)),
                artefact: Some(Artefact::in_memory("diff.patch", bytes)),
                files,
                hunks,
                ..target.clone()
            }
        }
    }
}

/// Diff targets: path → sha256 of the file's section of diff.patch (empty for other
/// kinds). A section whose path cannot be told is left out (that file is then re-reviewed).
pub fn patch_sections(target: &PinnedTarget) -> BTreeMap<String, String> {
    match (&target.kind, &target.artefact) {
        (TargetKind::Diff, Some(a)) => {
            let patch = a.read().unwrap_or_default();
            section_ranges(&patch)
                .into_iter()
                .map(|(path, range)| (path, sha256_hex(&patch[range])))
                .collect()
        }
        _ => BTreeMap::new(),
    }
}

/// Each file's section of a patch: from a line starting with `diff --git ` to the next (a
/// line inside a hunk starts with ` `, `+`, `-` or `\`, so it can never be mistaken for
/// one), with its path as git2 reads the patch (the new path, the old one for a deletion).
/// When the patch cannot be read, or its files do not line up with its sections, nothing.
fn section_ranges(patch: &[u8]) -> Vec<(String, std::ops::Range<usize>)> {
    const HEADER: &[u8] = b"diff --git ";
    let mut starts = vec![];
    let mut at = 0;
    while at < patch.len() {
        if patch[at..].starts_with(HEADER) {
            starts.push(at);
        }
        at = match patch[at..].iter().position(|b| *b == b'\n') {
            Some(i) => at + i + 1,
            None => patch.len(),
        };
    }
    if starts.is_empty() {
        return vec![];
    }
    let Ok(diff) = git2::Diff::from_buffer(patch) else {
        return vec![];
    };
    let paths: Vec<Option<String>> = diff
        .deltas()
        .map(|d| {
            let file = if d.status() == git2::Delta::Deleted {
                d.old_file()
            } else {
                d.new_file()
            };
            file.path_bytes()
                .and_then(|p| std::str::from_utf8(p).ok())
                .map(String::from)
        })
        .collect();
    if paths.len() != starts.len() {
        return vec![];
    }
    let ends = starts.iter().skip(1).copied().chain([patch.len()]);
    paths
        .into_iter()
        .zip(starts.iter().copied().zip(ends))
        .filter_map(|(p, (s, e))| Some((p?, s..e)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::Hunk;
    use crate::test_support::target;
    use std::path::Path;

    const PATCH: &str = "diff --git a/a.rs b/a.rs\nindex 1111111..2222222 100644\n--- a/a.rs\n+++ b/a.rs\n@@ -1 +1 @@\n-old\n+new\n\
diff --git a/gone.rs b/gone.rs\ndeleted file mode 100644\nindex 3333333..0000000\n--- a/gone.rs\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n\
diff --git a/new.rs b/new.rs\nnew file mode 100644\nindex 0000000..4444444\n--- /dev/null\n+++ b/new.rs\n@@ -0,0 +1,2 @@\n+fn x() {}\n+diff --git looks like a header\n";

    fn diff_target() -> PinnedTarget {
        let mut t = target(
            Path::new("/r"),
            TargetKind::Diff,
            &[("a.rs", 1), ("gone.rs", 1), ("new.rs", 2)],
        );
        t.artefact = Some(Artefact::in_memory("diff.patch", PATCH.as_bytes().to_vec()));
        for (p, end) in [("a.rs", 1), ("gone.rs", 1), ("new.rs", 2)] {
            t.hunks.insert(p.into(), vec![Hunk { start: 1, end }]);
        }
        t
    }

    #[test]
    fn a_patch_is_cut_into_one_section_per_file() {
        let t = diff_target();
        let ranges = section_ranges(PATCH.as_bytes());
        let names: Vec<&str> = ranges.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(names, ["a.rs", "gone.rs", "new.rs"]);
        let text = |i: usize| &PATCH[ranges[i].1.clone()];
        assert!(text(1).starts_with("diff --git a/gone.rs") && text(1).ends_with("-bye\n"));
        assert!(text(2).ends_with("looks like a header\n"), "{:?}", text(2));
        assert_eq!(patch_sections(&t).len(), 3);
        assert!(section_ranges(b"not a patch").is_empty());
    }

    #[test]
    fn only_files_whose_digest_changed_are_reviewed() {
        let t = diff_target();
        let sections = patch_sections(&t);
        let base = |p: &str, same: bool| {
            (
                p.to_string(),
                BaselineFile {
                    sha256: None,
                    patch_sha256: Some(if same {
                        sections[p].clone()
                    } else {
                        "other".into()
                    }),
                },
            )
        };
        let baseline: BTreeMap<_, _> = [base("a.rs", true), base("gone.rs", false)].into();
        let split = split_incremental(&t, &baseline);
        assert_eq!(split.carried, ["a.rs"]);
        assert_eq!(
            split.reviewed,
            ["gone.rs", "new.rs"],
            "changed, and unknown"
        );

        let mut m = target(
            Path::new("/r"),
            TargetKind::Manifest,
            &[("x.rs", 3), ("y.rs", 3)],
        );
        m.files[0].sha256 = "aa".into();
        m.files[1].sha256 = "bb".into();
        let baseline: BTreeMap<_, _> = [
            (
                "x.rs".to_string(),
                BaselineFile {
                    sha256: Some("aa".into()),
                    patch_sha256: None,
                },
            ),
            (
                "y.rs".to_string(),
                BaselineFile {
                    sha256: Some("b0".into()),
                    patch_sha256: None,
                },
            ),
        ]
        .into();
        let split = split_incremental(&m, &baseline);
        assert_eq!(
            (split.carried, split.reviewed),
            (vec!["x.rs".to_string()], vec!["y.rs".to_string()])
        );
    }

    #[test]
    fn a_restricted_diff_holds_only_the_kept_sections() {
        let t = diff_target();
        let keep: BTreeSet<String> = ["new.rs".to_string()].into();
        let r = restrict(&t, &keep);
        let bytes = &r.artefact.as_ref().unwrap().read().unwrap();
        let text = std::str::from_utf8(bytes).unwrap();
        assert!(text.starts_with("diff --git a/new.rs") && !text.contains("a/a.rs"));
        assert_eq!(r.sha256, sha256_hex(bytes));
        assert_eq!(r.files.len(), 1);
        assert_eq!(r.hunks.keys().collect::<Vec<_>>(), ["new.rs"]);
        assert_eq!(r.mode, t.mode);
        let none = restrict(&t, &BTreeSet::new());
        assert!(none.files.is_empty() && none.artefact.unwrap().is_empty());
    }
}
