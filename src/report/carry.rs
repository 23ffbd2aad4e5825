//! `--incremental` (docs/architecture.md §20): the baseline findings carried over into a
//! review that re-reviewed only the changed part of its target, and the merge that makes
//! its report the full picture again.
//!
//! A baseline finding is carried over when its file was not reviewed again and its
//! fingerprint still exists in the file as it is now: the flagged line is searched by
//! fingerprint, so a finding whose line moved is carried with its new line. A finding whose
//! fingerprint is gone (its line edited or deleted, its file renamed or deleted) is not
//! carried, and the baseline comparison lists it as `absent`. A target-wide finding (no
//! file) cannot be located and is carried as it is.

use super::assemble::sort_confirmed;
use super::{
    BySeverity, CoverageFile, CoverageStatus, IncrementalInfo, Report, ReportFinding, ReportTarget,
};
use crate::findings::{fingerprint_with, FileLines, Texts};
use std::collections::{BTreeSet, HashSet};
use std::path::Path;

/// Baseline findings carried over, by the list they were in.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Carried {
    pub confirmed: Vec<ReportFinding>,
    pub unresolved: Vec<ReportFinding>,
    pub debunked: Vec<ReportFinding>,
    /// Suppressed in the baseline (the caller checks that a suppression still applies).
    pub suppressed: Vec<ReportFinding>,
}

impl Carried {
    /// Every carried finding, mutably.
    pub fn all_mut(&mut self) -> impl Iterator<Item = &mut ReportFinding> {
        self.confirmed
            .iter_mut()
            .chain(self.unresolved.iter_mut())
            .chain(self.debunked.iter_mut())
            .chain(self.suppressed.iter_mut())
    }

    pub fn len(&self) -> usize {
        self.confirmed.len() + self.unresolved.len() + self.debunked.len() + self.suppressed.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The line `f`'s fingerprint is at in `lines` now: `Some(line)` (the same line first, then
/// the first line that has it), `Some(None)` when it is description-based and unchanged,
/// None when it is gone.
fn locate(f: &ReportFinding, file: &str, lines: Option<&FileLines>) -> Option<Option<u32>> {
    let at = |l: Option<u32>| fingerprint_with(lines, l, Some(file), &f.category, &f.description);
    if f.line.is_some() && at(f.line) == f.fingerprint {
        return Some(f.line);
    }
    if let Some(t) = lines {
        for l in 1..=t.len() as u32 {
            if at(Some(l)) == f.fingerprint {
                return Some(Some(l));
            }
        }
    }
    (at(None) == f.fingerprint).then_some(f.line)
}

/// The baseline's findings in the `carried` files (and the target-wide ones) whose
/// fingerprints still exist under `root`, relocated, each with `carried_over_from` (the run
/// that reviewed it: kept when the baseline had carried it over itself). Reads the files.
pub fn carried_findings(baseline: &Report, carried: &BTreeSet<String>, root: &Path) -> Carried {
    let texts = Texts::default();
    let mut carry = |f: &ReportFinding| -> Option<ReportFinding> {
        let line = match f.file.as_deref() {
            None => f.line,
            Some(file) if carried.contains(file) => {
                let lines = texts.get(root, file);
                locate(f, file, lines.as_deref())?
            }
            Some(_) => return None,
        };
        Some(ReportFinding {
            line,
            carried_over_from: Some(
                f.carried_over_from
                    .clone()
                    .unwrap_or_else(|| baseline.run_id.clone()),
            ),
            baseline_state: None,
            ..f.clone()
        })
    };
    Carried {
        confirmed: baseline.confirmed.iter().filter_map(&mut carry).collect(),
        unresolved: baseline.unresolved.iter().filter_map(&mut carry).collect(),
        debunked: baseline.debunked.iter().filter_map(&mut carry).collect(),
        suppressed: baseline.suppressed.iter().filter_map(&mut carry).collect(),
    }
}

/// What an incremental review's report is completed with.
#[derive(Debug, Clone)]
pub struct CarryInput {
    pub baseline_run_id: String,
    /// The whole target (the review's own target is the changed part only).
    pub target: ReportTarget,
    /// Coverage entries of the carried-over files (status `carried_over`).
    pub files: Vec<CoverageFile>,
    pub findings: Carried,
    /// The files reviewed again.
    pub reviewed: Vec<String>,
    /// TARGET_SHA of the changed part the agents were given.
    pub reviewed_sha256: String,
}

/// Complete `report` (of the changed part) with what is carried over: the whole target, the
/// carried files in the coverage, the carried findings in their lists (a finding the review
/// found again wins over its carried copy), and the `incremental` section. Pure.
pub fn merge_carried(report: &mut Report, input: CarryInput) {
    let mut seen: HashSet<String> = report
        .confirmed
        .iter()
        .chain(&report.unresolved)
        .chain(&report.debunked)
        .chain(&report.suppressed)
        .map(|f| f.fingerprint.clone())
        .collect();
    let findings_carried = input.findings.len() as u32;
    let Carried {
        confirmed,
        unresolved,
        debunked,
        suppressed,
    } = input.findings;
    for (list, carried) in [
        (&mut report.confirmed, confirmed),
        (&mut report.unresolved, unresolved),
        (&mut report.debunked, debunked),
        (&mut report.suppressed, suppressed),
    ] {
        for f in carried {
            if seen.insert(f.fingerprint.clone()) {
                list.push(f);
            }
        }
    }
    sort_confirmed(&mut report.confirmed);
    report.by_severity = BySeverity::of(&report.confirmed);
    let carried_files = input.files.len() as u32;
    let carried_paths: HashSet<String> = input.files.iter().map(|f| f.path.clone()).collect();
    let mut files: Vec<CoverageFile> = report
        .coverage
        .files
        .drain(..)
        .filter(|f| !carried_paths.contains(&f.path))
        .chain(input.files.into_iter().map(|f| CoverageFile {
            status: CoverageStatus::CarriedOver,
            reason: None,
            ..f
        }))
        .collect();
    files.sort_by(|a, b| a.path.cmp(&b.path));
    report.coverage.files = files;
    report.coverage.carried_over = carried_files;
    report.target = input.target;
    report.incremental = Some(IncrementalInfo {
        baseline_run_id: input.baseline_run_id,
        reviewed: input.reviewed,
        carried_over: carried_files,
        findings_carried_over: findings_carried,
        reviewed_sha256: input.reviewed_sha256,
    });
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{finding, shard};
    use super::*;
    use crate::findings::Severity;
    use crate::report::fingerprint;
    use crate::store::RunStatus;

    const SRC: &str = "fn a() {\n    x.unwrap();\n}\n\nfn b() {\n    y.unwrap();\n}\n";

    fn at(root: &Path, file: &str, line: u32) -> ReportFinding {
        ReportFinding {
            fingerprint: fingerprint(root, Some(file), Some(line), "logic", "d"),
            line: Some(line),
            ..finding(file, Severity::High)
        }
    }

    #[test]
    fn findings_follow_their_line_and_vanish_with_it() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for f in ["kept.rs", "moved.rs", "edited.rs", "again.rs", "gone.rs"] {
            std::fs::write(root.join(f), SRC).unwrap();
        }
        let mut base = shard(1, 1, &[], RunStatus::Complete);
        base.run_id = "base".into();
        base.confirmed = ["kept.rs", "moved.rs", "edited.rs", "again.rs", "gone.rs"]
            .iter()
            .map(|f| at(root, f, 6))
            .collect();
        let mut wide = finding("x", Severity::Low);
        wide.file = None;
        wide.line = None;
        wide.carried_over_from = Some("older".into());
        base.unresolved = vec![wide];
        std::fs::write(root.join("moved.rs"), format!("// new\n// lines\n{SRC}")).unwrap();
        std::fs::write(root.join("edited.rs"), SRC.replace("y.unwrap()", "y?")).unwrap();
        std::fs::remove_file(root.join("gone.rs")).unwrap();
        let carried: BTreeSet<String> = ["kept.rs", "moved.rs", "edited.rs", "gone.rs"]
            .map(String::from)
            .into();
        let c = carried_findings(&base, &carried, root);
        let got: Vec<(&str, Option<u32>)> = c
            .confirmed
            .iter()
            .map(|f| (f.file.as_deref().unwrap(), f.line))
            .collect();
        assert_eq!(got, [("kept.rs", Some(6)), ("moved.rs", Some(8))]);
        assert!(c
            .confirmed
            .iter()
            .all(|f| f.carried_over_from.as_deref() == Some("base")));
        assert_eq!(c.unresolved.len(), 1, "target-wide: carried as it is");
        assert_eq!(c.unresolved[0].carried_over_from.as_deref(), Some("older"));
    }

    #[test]
    fn the_merge_completes_coverage_and_findings() {
        let mut report = shard(1, 1, &["a.rs"], RunStatus::Complete);
        report.shard = None;
        let full = ReportTarget {
            sha256: "full".into(),
            allowed_files: vec!["a.rs".into(), "b.rs".into()],
            ..report.target.clone()
        };
        let again = report.confirmed[0].clone();
        let mut other = finding("b.rs", Severity::Critical);
        other.carried_over_from = Some("base".into());
        let input = CarryInput {
            baseline_run_id: "base".into(),
            target: full,
            files: vec![CoverageFile {
                path: "b.rs".into(),
                status: CoverageStatus::Reviewed,
                reason: None,
                glob: None,
                sha256: Some("s".into()),
                patch_sha256: None,
            }],
            findings: Carried {
                confirmed: vec![again, other],
                ..Carried::default()
            },
            reviewed: vec!["a.rs".into()],
            reviewed_sha256: "part".into(),
        };
        merge_carried(&mut report, input);
        assert_eq!(report.confirmed.len(), 2, "the review's own copy wins");
        assert_eq!(
            report.confirmed[0].file.as_deref(),
            Some("b.rs"),
            "sorted by severity"
        );
        assert_eq!(report.by_severity.critical, 1);
        assert_eq!(report.target.sha256, "full");
        assert_eq!(report.coverage.carried_over, 1);
        let b = report
            .coverage
            .files
            .iter()
            .find(|f| f.path == "b.rs")
            .unwrap();
        assert_eq!(b.status, CoverageStatus::CarriedOver);
        let inc = report.incremental.unwrap();
        assert_eq!((inc.carried_over, inc.findings_carried_over), (1, 2));
    }
}
