//! The Judge's `cites` (docs/architecture.md §19.6): every id a ruling cites must name an
//! entry of the Adversary's map — a heuristic `H…` or a safe zone `Z…` — whose range covers
//! the ruling's place (same file, the line inside `line_start..=line_end`). A spec document
//! is one file, so there only the lines count. A ruling with no line needs a range in its
//! file; a ruling with no file needs only an existing id.

use super::membership::repo_relative;
use crate::findings::{AdversaryOutput, LineRange};
use crate::target::{PinnedTarget, TargetType};

/// What is wrong with the cites of one ruling placed at `file:line` (empty when they hold),
/// one sentence each.
pub fn bad_cites(
    cites: &[String],
    file: Option<&str>,
    line: Option<u32>,
    map: &AdversaryOutput,
    target: &PinnedTarget,
) -> Vec<String> {
    let spec = target.target_type == TargetType::Spec;
    let same_file = |f: &str| spec || file.is_none_or(|rf| repo_relative(f, target) == rf);
    let covers = |r: &LineRange| {
        same_file(&r.file) && line.is_none_or(|l| r.line_start <= l && l <= r.line_end)
    };
    // Named only in a complaint (most rulings have none).
    let place = || match (file, line) {
        (Some(f), Some(l)) => format!("{f}:{l}"),
        (Some(f), None) => f.to_string(),
        (None, Some(l)) => format!("line {l}"),
        (None, None) => "its finding".to_string(),
    };
    let mut bad = vec![];
    for id in cites {
        let id_t = id.trim();
        let heuristic = map.heuristics.iter().find(|h| h.id.trim() == id_t);
        let zone = map.safe_zones.iter().find(|z| z.id.trim() == id_t);
        let ok = match (heuristic, zone) {
            (Some(h), _) => file.is_none() || h.applies_to.iter().any(covers),
            (None, Some(z)) => {
                file.is_none()
                    || covers(&LineRange {
                        file: z.file.clone(),
                        line_start: z.line_start,
                        line_end: z.line_end,
                    })
            }
            (None, None) => {
                bad.push(format!("`{id_t}` is not an id of the Adversary's map"));
                continue;
            }
        };
        if !ok {
            bad.push(format!("`{id_t}` does not cover {}", place()));
        }
    }
    bad
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::{Heuristic, SafeZone};
    use crate::target::TargetKind;
    use crate::test_support::target;
    use std::path::Path;

    fn map() -> AdversaryOutput {
        AdversaryOutput {
            heuristics: vec![Heuristic {
                id: "H1".into(),
                claim: "c".into(),
                evidence: "e".into(),
                applies_to: vec![LineRange {
                    file: "./a.rs".into(),
                    line_start: 10,
                    line_end: 20,
                }],
                context: vec![],
            }],
            safe_zones: vec![SafeZone {
                id: "Z1".into(),
                file: "b.rs".into(),
                line_start: 1,
                line_end: 5,
                reason: "r".into(),
                evidence: "e".into(),
                context: vec![],
            }],
        }
    }

    fn cites(ids: &[&str]) -> Vec<String> {
        ids.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn cites_must_exist_and_cover_the_ruling() {
        let t = target(
            Path::new("/r"),
            TargetKind::Manifest,
            &[("a.rs", 30), ("b.rs", 9)],
        );
        let m = map();
        assert!(bad_cites(&cites(&["H1"]), Some("a.rs"), Some(15), &m, &t).is_empty());
        assert!(bad_cites(&cites(&["Z1"]), Some("b.rs"), Some(5), &m, &t).is_empty());
        assert!(bad_cites(&[], Some("a.rs"), Some(99), &m, &t).is_empty());
        assert_eq!(
            bad_cites(&cites(&["H1"]), Some("a.rs"), Some(21), &m, &t),
            ["`H1` does not cover a.rs:21"]
        );
        assert_eq!(
            bad_cites(&cites(&["Z1"]), Some("a.rs"), Some(3), &m, &t),
            ["`Z1` does not cover a.rs:3"]
        );
        assert_eq!(
            bad_cites(&cites(&["H7", "H1"]), Some("a.rs"), Some(12), &m, &t),
            ["`H7` is not an id of the Adversary's map"]
        );
        // No line: a range in the file; no file: the id alone.
        assert!(bad_cites(&cites(&["Z1"]), Some("b.rs"), None, &m, &t).is_empty());
        assert_eq!(
            bad_cites(&cites(&["Z1"]), Some("a.rs"), None, &m, &t).len(),
            1
        );
        assert!(bad_cites(&cites(&["Z1"]), None, None, &m, &t).is_empty());
        assert_eq!(bad_cites(&cites(&["Z9"]), None, None, &m, &t).len(), 1);
    }

    #[test]
    fn a_spec_document_compares_lines_only() {
        let mut t = target(Path::new("/r"), TargetKind::File, &[("docs/plan.md", 40)]);
        t.target_type = TargetType::Spec;
        let m = map();
        assert!(bad_cites(&cites(&["H1"]), Some("## Design"), Some(12), &m, &t).is_empty());
        assert_eq!(
            bad_cites(&cites(&["H1"]), Some("## Design"), Some(30), &m, &t),
            ["`H1` does not cover ## Design:30"]
        );
    }
}
