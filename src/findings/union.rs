//! Union of Enthusiast passes: same-defect merging, highest severity kept, evidence merged,
//! F1..Fn re-numbered, and the passes that found each finding recorded.
//!
//! Two findings are the same defect only when they have the same category and
//! (docs/architecture.md §11.3): (a) code: the same enclosing symbol; (b) spec: the same
//! section (the `file` of a spec finding is its section path); (c) otherwise the same file
//! and lines within ±5, clustered deterministically (sorted by line; a new cluster when the
//! gap exceeds 5). Relations are merged with a union-find, so the result does not depend on
//! the order of the passes.

use super::{Finding, SymbolIndex};
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

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

/// What the union knows about the target.
#[derive(Debug, Clone, Copy)]
pub enum UnionRules<'a> {
    /// Code: enclosing symbols (rule a) and ±5 lines (rule c).
    Code(&'a SymbolIndex),
    /// Spec: the same section (rule b).
    Spec,
}

/// A category as the union compares it: trimmed, lower case (ASCII), `-` for spaces and
/// underscores.
fn norm_category(c: &str) -> String {
    c.trim().to_ascii_lowercase().replace([' ', '_'], "-")
}

/// The order findings are put in before the union and after it: by file, line and category.
fn place(f: &Finding) -> (Option<&str>, Option<u32>, &str) {
    (f.file.as_deref(), f.line, f.category.as_str())
}

fn norm_section(s: &str) -> String {
    s.split('/')
        .map(|p| p.trim().trim_start_matches('#').trim().to_lowercase())
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join(" / ")
}

/// Preference order for a cluster's representative: highest severity, then the longest
/// evidence, then the smallest description (total and order-independent).
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

fn find(parent: &mut [usize], mut i: usize) -> usize {
    while parent[i] != i {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    i
}

fn join(parent: &mut [usize], a: usize, b: usize) {
    let (ra, rb) = (find(parent, a), find(parent, b));
    if ra != rb {
        let (lo, hi) = if ra < rb { (ra, rb) } else { (rb, ra) };
        parent[hi] = lo;
    }
}

/// Merge the passes' findings into one list with ids F1..Fn.
pub fn union_passes(findings: Vec<PassFinding>, rules: UnionRules<'_>) -> Vec<UnionedFinding> {
    // Canonical order first: everything below depends only on content, not on pass order.
    let mut all = findings;
    all.sort_by(|a, b| {
        place(&a.finding).cmp(&place(&b.finding)).then_with(|| {
            (
                &a.finding.description,
                &a.finding.evidence,
                a.pass,
                &a.finding.id,
            )
                .cmp(&(
                    &b.finding.description,
                    &b.finding.evidence,
                    b.pass,
                    &b.finding.id,
                ))
        })
    });
    let n = all.len();
    let mut parent: Vec<usize> = (0..n).collect();
    // Group by (file key, category).
    let mut groups: BTreeMap<(Cow<str>, String), Vec<usize>> = BTreeMap::new();
    for (i, pf) in all.iter().enumerate() {
        let file = pf.finding.file.as_deref().unwrap_or("");
        let key = match rules {
            UnionRules::Spec => Cow::Owned(norm_section(file)),
            UnionRules::Code(_) => Cow::Borrowed(file),
        };
        groups
            .entry((key, norm_category(&pf.finding.category)))
            .or_default()
            .push(i);
    }
    for ((file, _), members) in &groups {
        match rules {
            // (b) the same section and category: one defect.
            UnionRules::Spec => {
                for w in members.windows(2) {
                    join(&mut parent, w[0], w[1]);
                }
            }
            UnionRules::Code(symbols) => {
                // (c) ±5 lines, chained in line order; findings without a line together.
                let mut with_line: Vec<(u32, usize)> = vec![];
                let mut without: Vec<usize> = vec![];
                for &i in members {
                    match all[i].finding.line {
                        Some(l) => with_line.push((l, i)),
                        None => without.push(i),
                    }
                }
                with_line.sort_unstable();
                for w in with_line.windows(2) {
                    if w[1].0 - w[0].0 <= SAME_DEFECT_LINES {
                        join(&mut parent, w[0].1, w[1].1);
                    }
                }
                for w in without.windows(2) {
                    join(&mut parent, w[0], w[1]);
                }
                // (a) the same enclosing symbol.
                let mut by_symbol: HashMap<&str, usize> = HashMap::new();
                for &(l, i) in &with_line {
                    if let Some(sym) = symbols.enclosing(file, l) {
                        match by_symbol.get(sym) {
                            Some(&first) => join(&mut parent, first, i),
                            None => {
                                by_symbol.insert(sym, i);
                            }
                        }
                    }
                }
            }
        }
    }
    // Clusters in the order of their first members (a cluster's root is its smallest index:
    // `join` keeps it).
    let mut cluster_of: HashMap<usize, usize> = HashMap::new();
    let mut clusters: Vec<Vec<PassFinding>> = vec![];
    for (i, pf) in all.into_iter().enumerate() {
        let root = find(&mut parent, i);
        let c = *cluster_of.entry(root).or_insert_with(|| {
            clusters.push(vec![]);
            clusters.len() - 1
        });
        clusters[c].push(pf);
    }
    let mut out: Vec<UnionedFinding> = clusters.into_iter().map(merge).collect();
    out.sort_by(|a, b| {
        place(&a.finding)
            .cmp(&place(&b.finding))
            .then_with(|| a.merged_from.cmp(&b.merged_from))
    });
    for (i, u) in out.iter_mut().enumerate() {
        u.finding.id = format!("F{}", i + 1);
    }
    out
}

/// Whether `a` and `b` are the same defect by the union's rule, pairwise (not chained):
/// the same category and (spec) the same section, or (code) the same file with both lines
/// within ±5, or in the same enclosing symbol, or both without a line. Used to match a
/// finding against one judged in an earlier round.
pub fn same_defect(a: &Finding, b: &Finding, rules: UnionRules<'_>) -> bool {
    if norm_category(&a.category) != norm_category(&b.category) {
        return false;
    }
    let (fa, fb) = (
        a.file.as_deref().unwrap_or(""),
        b.file.as_deref().unwrap_or(""),
    );
    match rules {
        UnionRules::Spec => norm_section(fa) == norm_section(fb),
        UnionRules::Code(symbols) => {
            fa == fb
                && match (a.line, b.line) {
                    (Some(x), Some(y)) => {
                        x.abs_diff(y) <= SAME_DEFECT_LINES
                            || symbols
                                .enclosing(fa, x)
                                .is_some_and(|s| symbols.enclosing(fa, y) == Some(s))
                    }
                    (None, None) => true,
                    _ => false,
                }
        }
    }
}

/// One cluster (never empty) as one finding; the representative is taken out of `cluster`.
fn merge(mut cluster: Vec<PassFinding>) -> UnionedFinding {
    let mut best = 0;
    for (k, pf) in cluster.iter().enumerate().skip(1) {
        if better(&pf.finding, &cluster[best].finding) {
            best = k;
        }
    }
    let evidence = {
        let mut evidence: Vec<&str> = vec![];
        for pf in cluster.iter() {
            let e = pf.finding.evidence.trim();
            if !e.is_empty() && !evidence.contains(&e) {
                evidence.push(e);
            }
        }
        evidence.sort_unstable();
        let rep_evidence = cluster[best].finding.evidence.trim();
        if let Some(pos) = evidence.iter().position(|e| *e == rep_evidence) {
            let first = evidence.remove(pos);
            evidence.insert(0, first);
        }
        evidence.join("\n---\n")
    };
    let mut passes: Vec<u32> = cluster.iter().map(|p| p.pass).collect();
    passes.sort_unstable();
    passes.dedup();
    let mut merged_from: Vec<String> = cluster
        .iter()
        .map(|p| format!("p{}:{}", p.pass, p.finding.id))
        .collect();
    merged_from.sort();
    let mut rep = cluster.swap_remove(best).finding;
    rep.evidence = evidence;
    // Context citations (already gated): the representative's, then the others' in pass
    // order, each once, at most five.
    for pf in &cluster {
        for c in &pf.finding.context {
            if rep.context.len() < super::MAX_CONTEXT_CITES && !rep.context.contains(c) {
                rep.context.push(c.clone());
            }
        }
    }
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

    fn code(findings: Vec<PassFinding>) -> Vec<UnionedFinding> {
        union_passes(findings, UnionRules::Code(&SymbolIndex::default()))
    }

    #[test]
    fn merges_within_five_lines_same_category_keeping_highest_severity() {
        let u = code(vec![
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
        assert_eq!(logic.merged_from, vec!["p1:F1", "p2:F1"]);
        let ids: Vec<_> = u.iter().map(|x| x.finding.id.as_str()).collect();
        assert_eq!(ids, ["F1", "F2"]);
    }

    #[test]
    fn same_line_different_category_stays_apart_and_far_lines_split() {
        let u = code(vec![
            pf(1, "F1", 10, "logic", Severity::Low),
            pf(1, "F2", 10, "security", Severity::Low),
            pf(2, "F1", 16, "logic", Severity::Low),
        ]);
        assert_eq!(u.len(), 3);
    }

    #[test]
    fn five_apart_merges_six_apart_does_not_and_chains() {
        assert_eq!(
            code(vec![
                pf(1, "F1", 10, "x", Severity::Low),
                pf(2, "F1", 15, "x", Severity::Low)
            ])
            .len(),
            1
        );
        assert_eq!(
            code(vec![
                pf(1, "F1", 10, "x", Severity::Low),
                pf(2, "F1", 16, "x", Severity::Low)
            ])
            .len(),
            2
        );
        // 10–15–20 chain into one cluster (deterministic clustering by gaps).
        assert_eq!(
            code(vec![
                pf(1, "F1", 10, "x", Severity::Low),
                pf(2, "F1", 15, "x", Severity::Low),
                pf(3, "F1", 20, "x", Severity::Low)
            ])
            .len(),
            1
        );
    }

    #[test]
    fn same_enclosing_symbol_merges_far_apart_lines() {
        let mut idx = SymbolIndex::default();
        let body: String = (0..40).map(|i| format!("    let v{i} = {i};\n")).collect();
        idx.add_file(
            "a.rs",
            &format!("fn big() {{\n{body}}}\nfn other() {{\n    x();\n}}\n"),
        );
        let u = union_passes(
            vec![
                pf(1, "F1", 3, "logic", Severity::Low),
                pf(2, "F1", 30, "logic", Severity::Medium),
                pf(2, "F2", 44, "logic", Severity::Low),
            ],
            UnionRules::Code(&idx),
        );
        assert_eq!(u.len(), 2, "{u:?}");
        assert_eq!(u[0].passes, vec![1, 2]);
    }

    #[test]
    fn same_defect_is_the_unions_rule_pairwise() {
        let f = |line: Option<u32>, cat: &str| finding("F1", Some("a.rs"), line, cat);
        let none = SymbolIndex::default();
        let code = UnionRules::Code(&none);
        assert!(same_defect(
            &f(Some(10), "logic"),
            &f(Some(15), "Logic"),
            code
        ));
        assert!(!same_defect(
            &f(Some(10), "logic"),
            &f(Some(16), "logic"),
            code
        ));
        assert!(!same_defect(
            &f(Some(10), "logic"),
            &f(Some(10), "security"),
            code
        ));
        assert!(same_defect(&f(None, "logic"), &f(None, "logic"), code));
        assert!(!same_defect(&f(None, "logic"), &f(Some(1), "logic"), code));
        let mut other = f(Some(10), "logic");
        other.file = Some("b.rs".into());
        assert!(!same_defect(&f(Some(10), "logic"), &other, code));
        let mut symbols = SymbolIndex::default();
        let body: String = (0..20).map(|i| format!("    x{i}();\n")).collect();
        symbols.add_file("a.rs", &format!("fn big() {{\n{body}}}\n"));
        assert!(same_defect(
            &f(Some(2), "logic"),
            &f(Some(20), "logic"),
            UnionRules::Code(&symbols)
        ));
        let (mut s1, mut s2) = (f(Some(3), "ambiguity"), f(Some(40), "ambiguity"));
        s1.file = Some("## Design".into());
        s2.file = Some("# design".into());
        assert!(same_defect(&s1, &s2, UnionRules::Spec));
    }

    #[test]
    fn spec_same_section_and_category_merge() {
        let mut a = finding("F1", Some("## Design / ### Cache"), Some(10), "ambiguity");
        a.target_type = crate::findings::ArtefactType::Spec;
        let mut b = a.clone();
        b.file = Some("## design / ### cache ".into());
        b.line = Some(60);
        let mut c = a.clone();
        c.category = "contradiction".into();
        let u = union_passes(
            vec![
                PassFinding {
                    pass: 1,
                    finding: a,
                },
                PassFinding {
                    pass: 2,
                    finding: b,
                },
                PassFinding {
                    pass: 2,
                    finding: c,
                },
            ],
            UnionRules::Spec,
        );
        assert_eq!(u.len(), 2);
    }

    proptest::proptest! {
        /// Any order of the same findings unions to the same list (ids, order, clusters).
        #[test]
        fn any_input_order_gives_the_same_union(
            spec in proptest::collection::vec((1u32..4, 0usize..3, 1u32..30, 0usize..3), 0..30),
            rotate in 0usize..30,
        ) {
            let cats = ["logic", "Logic", "leak"];
            let sevs = [Severity::Low, Severity::Medium, Severity::High];
            let a: Vec<PassFinding> = spec
                .iter()
                .enumerate()
                .map(|(k, &(pass, c, line, s))| pf(pass, &format!("F{k}"), line, cats[c], sevs[s]))
                .collect();
            let mut b = a.clone();
            b.reverse();
            let mut c = a.clone();
            c.rotate_left(rotate.min(a.len()));
            let base = code(a);
            proptest::prop_assert_eq!(&base, &code(b));
            proptest::prop_assert_eq!(&base, &code(c));
        }
    }

    #[test]
    fn independent_of_pass_order() {
        let a = vec![
            pf(1, "F1", 10, "logic", Severity::Low),
            pf(2, "F1", 12, "logic", Severity::Medium),
            pf(3, "F1", 40, "leak", Severity::High),
            pf(3, "F2", 44, "leak", Severity::High),
            pf(1, "F2", 44, "leak", Severity::High),
        ];
        let mut b = a.clone();
        b.reverse();
        let mut c = a.clone();
        c.rotate_left(2);
        assert_eq!(code(a.clone()), code(b));
        assert_eq!(code(a), code(c));
    }
}
