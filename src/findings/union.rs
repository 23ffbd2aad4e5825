//! Union of Enthusiast passes: same-defect merging, highest severity kept, F1..Fn re-numbered.
//!
//! Two findings are the same defect when they have the same category and the same file and
//! their lines are within ±5 (clustered deterministically: sorted by line, a new cluster
//! starts when the gap to the previous line exceeds 5), or both have no line. The result
//! does not depend on the order of the passes.

use super::Finding;
use std::collections::BTreeMap;

/// Line distance under which two findings of one category in one file are the same defect.
pub const SAME_DEFECT_LINES: u32 = 5;

/// A finding as produced by one pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PassFinding {
    pub pass: u32,
    pub finding: Finding,
}

/// A finding after the union, with the passes that found it and the ids it had there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnionedFinding {
    pub finding: Finding,
    pub passes: Vec<u32>,
    /// `p<pass>:<id>` of every merged finding.
    pub merged_from: Vec<String>,
}

fn norm_category(c: &str) -> String {
    c.trim().to_ascii_lowercase().replace([' ', '_'], "-")
}

/// Preference order for the representative of a cluster: highest severity, then the
/// longest evidence, then the smallest description (total and order-independent).
fn better(a: &Finding, b: &Finding) -> bool {
    (
        a.severity,
        a.evidence.len(),
        std::cmp::Reverse(&a.description),
    ) > (
        b.severity,
        b.evidence.len(),
        std::cmp::Reverse(&b.description),
    )
}

/// Merge the passes' findings into one list with ids F1..Fn.
pub fn union_passes(findings: Vec<PassFinding>) -> Vec<UnionedFinding> {
    // Group by (file, category); within a group cluster by line.
    let mut groups: BTreeMap<(Option<String>, String), Vec<PassFinding>> = BTreeMap::new();
    for pf in findings {
        let key = (pf.finding.file.clone(), norm_category(&pf.finding.category));
        groups.entry(key).or_default().push(pf);
    }
    let mut out: Vec<UnionedFinding> = Vec::new();
    for (_, mut members) in groups {
        members.sort_by(|a, b| {
            (
                a.finding.line,
                &a.finding.description,
                &a.finding.evidence,
                a.pass,
                &a.finding.id,
            )
                .cmp(&(
                    b.finding.line,
                    &b.finding.description,
                    &b.finding.evidence,
                    b.pass,
                    &b.finding.id,
                ))
        });
        let mut cluster: Vec<PassFinding> = Vec::new();
        let mut prev_line: Option<Option<u32>> = None;
        for pf in members {
            let line = pf.finding.line;
            let same = match (prev_line, line) {
                (None, _) => true,
                (Some(None), None) => true,
                (Some(Some(p)), Some(l)) => l - p <= SAME_DEFECT_LINES,
                _ => false,
            };
            if !same {
                out.push(merge(std::mem::take(&mut cluster)));
            }
            prev_line = Some(line);
            cluster.push(pf);
        }
        if !cluster.is_empty() {
            out.push(merge(cluster));
        }
    }
    out.sort_by(|a, b| {
        (&a.finding.file, a.finding.line, &a.finding.category).cmp(&(
            &b.finding.file,
            b.finding.line,
            &b.finding.category,
        ))
    });
    for (i, u) in out.iter_mut().enumerate() {
        u.finding.id = format!("F{}", i + 1);
    }
    out
}

fn merge(cluster: Vec<PassFinding>) -> UnionedFinding {
    let mut rep = cluster[0].finding.clone();
    for pf in &cluster[1..] {
        if better(&pf.finding, &rep) {
            rep = pf.finding.clone();
        }
    }
    let mut evidence: Vec<&str> = Vec::new();
    for pf in &cluster {
        let e = pf.finding.evidence.trim();
        if !e.is_empty() && !evidence.contains(&e) {
            evidence.push(e);
        }
    }
    evidence.sort_unstable();
    if let Some(pos) = evidence.iter().position(|e| *e == rep.evidence.trim()) {
        let first = evidence.remove(pos);
        evidence.insert(0, first);
    }
    rep.evidence = evidence.join("\n---\n");
    let mut passes: Vec<u32> = cluster.iter().map(|p| p.pass).collect();
    passes.sort_unstable();
    passes.dedup();
    let mut merged_from: Vec<String> = cluster
        .iter()
        .map(|p| format!("p{}:{}", p.pass, p.finding.id))
        .collect();
    merged_from.sort();
    UnionedFinding {
        finding: rep,
        passes,
        merged_from,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::Severity;
    use crate::test_support::finding;

    fn pf(pass: u32, id: &str, line: u32, cat: &str, sev: Severity) -> PassFinding {
        let mut f = finding(id, Some("a.rs"), Some(line), cat);
        f.severity = sev;
        f.evidence = format!("ev-{pass}-{line}");
        PassFinding { pass, finding: f }
    }

    #[test]
    fn merges_within_five_lines_same_category_keeping_highest_severity() {
        let u = union_passes(vec![
            pf(1, "F1", 10, "logic", Severity::Low),
            pf(2, "F1", 14, "logic", Severity::High),
            pf(2, "F2", 10, "security", Severity::Medium),
        ]);
        assert_eq!(u.len(), 2);
        let logic = u.iter().find(|x| x.finding.category == "logic").unwrap();
        assert_eq!(logic.finding.severity, Severity::High);
        assert_eq!(logic.passes, vec![1, 2]);
        assert!(
            logic.finding.evidence.contains("ev-1-10")
                && logic.finding.evidence.contains("ev-2-14")
        );
        let ids: Vec<_> = u.iter().map(|x| x.finding.id.as_str()).collect();
        assert_eq!(ids, ["F1", "F2"]);
    }

    #[test]
    fn same_line_different_category_stays_apart_and_far_lines_split() {
        let u = union_passes(vec![
            pf(1, "F1", 10, "logic", Severity::Low),
            pf(1, "F2", 10, "security", Severity::Low),
            pf(2, "F1", 16, "logic", Severity::Low),
        ]);
        assert_eq!(u.len(), 3);
    }

    #[test]
    fn independent_of_pass_order() {
        let a = vec![
            pf(1, "F1", 10, "logic", Severity::Low),
            pf(2, "F1", 12, "logic", Severity::Medium),
            pf(3, "F1", 40, "leak", Severity::High),
            pf(3, "F2", 44, "leak", Severity::High),
        ];
        let mut b = a.clone();
        b.reverse();
        assert_eq!(union_passes(a), union_passes(b));
    }
}
