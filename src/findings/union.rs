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

/// A category as the union compares it: trimmed, lower case, `-` for spaces and
/// underscores (borrowed when it already is).
fn norm_category(c: &str) -> Cow<'_, str> {
    let t = c.trim();
    if t.bytes()
        .any(|b| b.is_ascii_uppercase() || b == b' ' || b == b'_')
    {
        Cow::Owned(t.to_ascii_lowercase().replace([' ', '_'], "-"))
    } else {
        Cow::Borrowed(t)
    }
}

/// `items` in the order of `cmp` (stable). The order is found on indices and each item
/// moved into place once, in place: findings are large, and a sort would move each of them
/// a dozen times. `cmp` is given the items and two indices, to read keys computed once per
/// item beside them.
fn sorted_by_index<T>(
    items: Vec<T>,
    cmp: impl Fn(&[T], usize, usize) -> std::cmp::Ordering,
) -> Vec<T> {
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_by(|&a, &b| cmp(&items, a, b));
    permuted(items, order)
}

/// Each key's rank among the distinct keys, in their order: two ranks compare as their keys
/// do. Findings share a handful of files and categories, so the keys are told apart by a
/// hash first and only the distinct ones are sorted; a sort comparing the strings themselves
/// compared the same file name some 40,000 times for 3 × 1,000 findings.
fn ranks<K: Ord + std::hash::Hash + Copy>(keys: &[K]) -> Vec<u32> {
    let mut rank: HashMap<K, u32, foldhash::fast::RandomState> = HashMap::default();
    for &k in keys {
        rank.entry(k).or_insert(0);
    }
    let mut distinct: Vec<K> = rank.keys().copied().collect();
    distinct.sort_unstable();
    for (r, k) in distinct.into_iter().enumerate() {
        rank.insert(k, r as u32);
    }
    keys.iter().map(|k| rank[k]).collect()
}

/// `items` with position i holding the item that was at `order[i]` (`order` a permutation),
/// each moved once, in place.
fn permuted<T>(mut items: Vec<T>, mut order: Vec<usize>) -> Vec<T> {
    // Each cycle of the permutation is walked once, and a placed position is marked by
    // order[p] = p.
    for start in 0..order.len() {
        let mut at = start;
        while order[at] != start {
            let from = order[at];
            items.swap(at, from);
            order[at] = at;
            at = from;
        }
        order[at] = at;
    }
    items
}

/// The ranks ([`ranks`]) of the findings' files and of their categories, in their order.
fn place_ranks<'a>(findings: impl Iterator<Item = &'a Finding> + Clone) -> (Vec<u32>, Vec<u32>) {
    let files: Vec<Option<&str>> = findings.clone().map(|f| f.file.as_deref()).collect();
    let categories: Vec<&str> = findings.map(|f| f.category.as_str()).collect();
    (ranks(&files), ranks(&categories))
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
    // (file, line, category, description, evidence, pass, id), the file and the category
    // compared by their ranks.
    let (files, categories) = place_ranks(findings.iter().map(|f| &f.finding));
    let all = sorted_by_index(findings, |all, i, j| {
        let (a, b) = (&all[i], &all[j]);
        (files[i], a.finding.line, categories[i])
            .cmp(&(files[j], b.finding.line, categories[j]))
            .then_with(|| {
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
    let mut groups: BTreeMap<(Cow<str>, Cow<str>), Vec<usize>> = BTreeMap::new();
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
                let mut by_symbol: HashMap<&str, usize, foldhash::fast::RandomState> =
                    HashMap::default();
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
    // `join` keeps it). The findings are put in cluster order in place (a stable counting
    // sort) and each cluster is merged from one reused buffer: nothing is cloned, and no
    // vector per cluster is allocated.
    let mut slot = vec![usize::MAX; n];
    let mut sizes: Vec<usize> = vec![];
    let cluster: Vec<usize> = (0..n)
        .map(|i| {
            let r = find(&mut parent, i);
            if slot[r] == usize::MAX {
                slot[r] = sizes.len();
                sizes.push(0);
            }
            sizes[slot[r]] += 1;
            slot[r]
        })
        .collect();
    let mut next: Vec<usize> = sizes
        .iter()
        .scan(0, |at, len| {
            let start = *at;
            *at += len;
            Some(start)
        })
        .collect();
    let mut order = vec![0; n];
    for (i, c) in cluster.into_iter().enumerate() {
        order[next[c]] = i;
        next[c] += 1;
    }
    let mut members = permuted(all, order).into_iter();
    let mut buf = Vec::new();
    let merged: Vec<UnionedFinding> = sizes
        .iter()
        .map(|&len| {
            buf.clear();
            buf.extend(members.by_ref().take(len));
            merge(&mut buf)
        })
        .collect();
    let (files, categories) = place_ranks(merged.iter().map(|u| &u.finding));
    let mut out = sorted_by_index(merged, |all, i, j| {
        let (a, b) = (&all[i], &all[j]);
        (files[i], a.finding.line, categories[i])
            .cmp(&(files[j], b.finding.line, categories[j]))
            .then_with(|| a.merged_from.cmp(&b.merged_from))
    });
    for (i, u) in out.iter_mut().enumerate() {
        u.finding.id = ["F", itoa::Buffer::new().format(i + 1)].concat();
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
fn merge(cluster: &mut Vec<PassFinding>) -> UnionedFinding {
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
        .map(|p| {
            let mut pass = itoa::Buffer::new();
            ["p", pass.format(p.pass), ":", &p.finding.id].concat()
        })
        .collect();
    merged_from.sort();
    let mut rep = cluster.swap_remove(best).finding;
    rep.evidence = evidence;
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

    proptest::proptest! {
        /// Ranks stand in for their keys: any two compare as the keys do (None first).
        #[test]
        fn ranks_compare_as_their_keys(keys in proptest::collection::vec(
            proptest::option::of("[ab]{0,3}"), 0..40)) {
            let keys: Vec<Option<&str>> = keys.iter().map(|k| k.as_deref()).collect();
            let r = ranks(&keys);
            for i in 0..keys.len() {
                for j in 0..keys.len() {
                    proptest::prop_assert_eq!(r[i].cmp(&r[j]), keys[i].cmp(&keys[j]));
                }
            }
        }
    }

    #[test]
    fn sorted_by_index_is_a_stable_sort() {
        // Keys with ties, in an order whose permutation has cycles of several lengths.
        let items: Vec<(u32, usize)> = [5, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3, 2, 3]
            .into_iter()
            .enumerate()
            .map(|(i, k)| (k, i))
            .collect();
        let mut expected = items.clone();
        expected.sort_by_key(|x| x.0);
        assert_eq!(
            sorted_by_index(items, |v, a, b| v[a].0.cmp(&v[b].0)),
            expected
        );
        assert_eq!(
            sorted_by_index(Vec::<u8>::new(), |v, a, b| v[a].cmp(&v[b])),
            Vec::<u8>::new()
        );
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
