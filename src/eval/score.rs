//! Scoring (pure): a case is found when a confirmed finding lies within the tolerance of an
//! expected location in the same file; the aggregates (recall with its 95 % Wilson
//! interval, unmatched per case, debunk rate, cost per found defect).

use super::model::{
    CaseResult, CaseStatus, ExpectedLocation, ReviewOutcome, ScoredFinding, Totals,
};

/// The two-sided 95 % normal quantile.
const Z95: f64 = 1.959_963_984_540_054;

/// Index of the first expected location `file:line` lies within `tol` lines of.
pub fn match_location(
    expected: &[ExpectedLocation],
    file: Option<&str>,
    line: Option<u32>,
    tol: u32,
) -> Option<usize> {
    let (file, line) = (normalize(file?), line?);
    expected.iter().position(|e| {
        normalize(&e.file) == file
            && u64::from(line) + u64::from(tol) >= u64::from(e.start)
            && u64::from(line) <= u64::from(e.end) + u64::from(tol)
    })
}

/// `./a/b` and `a/b` are the same file.
fn normalize(p: &str) -> &str {
    let mut p = p;
    while let Some(rest) = p.strip_prefix("./") {
        p = rest;
    }
    p
}

/// Score one result at `tol`: every confirmed finding's match, the status, the unmatched
/// count.
pub fn score(result: &mut CaseResult, tol: u32) {
    for f in &mut result.confirmed {
        f.matches = match_location(&result.expected, f.file.as_deref(), f.line, tol);
    }
    let found = result.confirmed.iter().any(|f| f.matches.is_some());
    result.status = status_of(result.outcome, found);
    result.unmatched = unmatched(&result.confirmed);
    result.tolerance = tol;
}

fn unmatched(findings: &[ScoredFinding]) -> u32 {
    count(findings.iter().filter(|f| f.matches.is_none()).count())
}

/// A completed review is found or missed; an abort or a failure is itself.
pub fn status_of(outcome: ReviewOutcome, found: bool) -> CaseStatus {
    match (outcome, found) {
        (ReviewOutcome::Complete, true) => CaseStatus::Found,
        (ReviewOutcome::Complete, false) => CaseStatus::Missed,
        (ReviewOutcome::Aborted, _) => CaseStatus::Aborted,
        (ReviewOutcome::Failed, _) => CaseStatus::Failed,
    }
}

/// The 95 % Wilson score interval of `k` successes in `n` trials; None for n = 0.
pub fn wilson(k: u32, n: u32) -> Option<[f64; 2]> {
    if n == 0 || k > n {
        return None;
    }
    let n = f64::from(n);
    let p = f64::from(k) / n;
    let z2 = Z95 * Z95;
    let denom = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denom;
    let half = Z95 / denom * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    Some([(centre - half).max(0.0), (centre + half).min(1.0)])
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

fn ratio(num: f64, den: u32) -> Option<f64> {
    (den > 0).then(|| num / f64::from(den))
}

/// Aggregates over `results` (already scored) of a set of `cases` cases, `not_run` of
/// which have no result.
pub fn totals(results: &[CaseResult], cases: u32, not_run: u32) -> Totals {
    let with = |s: CaseStatus| count(results.iter().filter(|r| r.status == s).count());
    let (found, missed, aborted, failed) = (
        with(CaseStatus::Found),
        with(CaseStatus::Missed),
        with(CaseStatus::Aborted),
        with(CaseStatus::Failed),
    );
    let scored = found + missed + aborted;
    let completed: Vec<&CaseResult> = results
        .iter()
        .filter(|r| r.outcome == ReviewOutcome::Complete)
        .collect();
    let confirmed = count(completed.iter().map(|r| r.confirmed.len()).sum());
    let unmatched: u32 = completed.iter().map(|r| r.unmatched).sum();
    let debunked: u32 = completed.iter().map(|r| r.debunked).sum();
    let unresolved: u32 = completed.iter().map(|r| r.unresolved).sum();
    let cost_usd: f64 = results.iter().map(|r| r.cost_usd).sum();
    let cost_unknown = count(results.iter().filter(|r| r.cost_unknown).count());
    let unpriced_tokens = results.iter().map(|r| r.unpriced_tokens).sum();
    Totals {
        cases,
        scored,
        found,
        missed,
        aborted,
        failed,
        not_run,
        recall: ratio(f64::from(found), scored),
        recall_ci95: wilson(found, scored),
        confirmed,
        unmatched,
        unmatched_per_case: ratio(f64::from(unmatched), found + missed),
        debunked,
        unresolved,
        debunk_rate: ratio(f64::from(debunked), confirmed + debunked),
        cost_usd,
        tokens: results.iter().map(|r| r.tokens).sum(),
        unpriced_tokens,
        wall_ms: results.iter().map(|r| r.wall_ms).sum(),
        // A part of the cost unknown: no figure per found defect either.
        cost_per_found: if cost_unknown > 0 || unpriced_tokens > 0 {
            None
        } else {
            ratio(cost_usd, found)
        },
        cached: count(results.iter().filter(|r| r.cached_from.is_some()).count()),
        cost_unknown,
        proofs: super::prove::totals(results),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::eval::model::CaseOrigin;
    use crate::findings::Severity;

    pub(crate) fn loc(file: &str, start: u32, end: u32) -> ExpectedLocation {
        ExpectedLocation {
            file: file.into(),
            start,
            end,
        }
    }

    pub(crate) fn finding(file: &str, line: u32) -> ScoredFinding {
        ScoredFinding {
            file: Some(file.into()),
            line: Some(line),
            severity: Severity::High,
            category: "logic".into(),
            matches: None,
            proof: None,
        }
    }

    pub(crate) fn result(
        id: &str,
        outcome: ReviewOutcome,
        expected: Vec<ExpectedLocation>,
        confirmed: Vec<ScoredFinding>,
    ) -> CaseResult {
        CaseResult {
            case_id: id.into(),
            case_digest: format!("digest-{id}"),
            config_digest: "cfg".into(),
            arev_version: "0.1.0".into(),
            commit: "0".repeat(40),
            targets: expected.iter().map(|e| e.file.clone()).collect(),
            expected,
            origin: CaseOrigin::default(),
            outcome,
            detail: None,
            run_dir: None,
            confirmed,
            debunked: 0,
            unresolved: 0,
            cost_usd: 0.0,
            tokens: 0,
            unpriced_tokens: 0,
            wall_ms: 0,
            started_at: String::new(),
            finished_at: String::new(),
            status: CaseStatus::Failed,
            unmatched: 0,
            tolerance: 0,
            resumed: false,
            cached_from: None,
            cost_unknown: false,
            proved: false,
        }
    }

    #[test]
    fn tolerance_edges() {
        let e = [loc("src/a.rs", 10, 12)];
        let m = |line, tol| match_location(&e, Some("src/a.rs"), Some(line), tol);
        // ±3 around 10..=12 is 7..=15.
        assert_eq!(m(7, 3), Some(0));
        assert_eq!(m(6, 3), None);
        assert_eq!(m(15, 3), Some(0));
        assert_eq!(m(16, 3), None);
        // ±4 reaches one further on each side.
        assert_eq!(m(6, 4), Some(0));
        assert_eq!(m(16, 4), Some(0));
        assert_eq!(m(5, 4), None);
        // Inside, and exactly at tolerance 0.
        assert_eq!(m(11, 0), Some(0));
        assert_eq!(m(13, 0), None);
        // Line 1 with a wide tolerance does not underflow.
        assert_eq!(
            match_location(&[loc("a", 1, 1)], Some("a"), Some(1), u32::MAX),
            Some(0)
        );
    }

    #[test]
    fn same_file_only_and_paths_normalised() {
        let e = [loc("src/a.rs", 10, 10), loc("src/b.rs", 3, 3)];
        assert_eq!(match_location(&e, Some("src/b.rs"), Some(10), 3), None);
        assert_eq!(match_location(&e, Some("./src/b.rs"), Some(4), 3), Some(1));
        assert_eq!(match_location(&e, None, Some(10), 3), None);
        assert_eq!(match_location(&e, Some("src/a.rs"), None, 3), None);
    }

    #[test]
    fn scoring_a_case_found_unmatched_and_statuses() {
        let mut r = result(
            "c",
            ReviewOutcome::Complete,
            vec![loc("a.rs", 10, 10)],
            vec![
                finding("a.rs", 13),
                finding("a.rs", 40),
                finding("b.rs", 10),
            ],
        );
        score(&mut r, 3);
        assert_eq!(r.status, CaseStatus::Found);
        assert_eq!(r.unmatched, 2);
        assert_eq!(
            r.confirmed.iter().map(|f| f.matches).collect::<Vec<_>>(),
            [Some(0), None, None]
        );
        // One line further out is a miss at ±3 and a find at ±4.
        r.confirmed[0].line = Some(14);
        score(&mut r, 3);
        assert_eq!(
            (r.status, r.unmatched, r.tolerance),
            (CaseStatus::Missed, 3, 3)
        );
        score(&mut r, 4);
        assert_eq!((r.status, r.unmatched), (CaseStatus::Found, 2));
        // An aborted review is aborted whatever it confirmed before stopping.
        r.outcome = ReviewOutcome::Aborted;
        score(&mut r, 4);
        assert_eq!(r.status, CaseStatus::Aborted);
        r.outcome = ReviewOutcome::Failed;
        score(&mut r, 4);
        assert_eq!(r.status, CaseStatus::Failed);
        assert!(!CaseStatus::Failed.scored() && CaseStatus::Aborted.scored());
    }

    #[test]
    fn wilson_interval_matches_the_formula() {
        assert_eq!(wilson(0, 0), None);
        assert_eq!(wilson(3, 2), None);
        // Reference values (95 %): 0/10 → [0, 0.2775]; 10/10 → [0.7225, 1];
        // 5/10 → [0.2366, 0.7634]; 1/2 → [0.0945, 0.9055]; 8/10 → [0.4902, 0.9433].
        let close = |k, n, lo: f64, hi: f64| {
            let [l, h] = wilson(k, n).unwrap();
            assert!(
                (l - lo).abs() < 5e-4 && (h - hi).abs() < 5e-4,
                "{k}/{n}: {l} {h}"
            );
        };
        close(0, 10, 0.0, 0.2775);
        close(10, 10, 0.7225, 1.0);
        close(5, 10, 0.2366, 0.7634);
        close(1, 2, 0.0945, 0.9055);
        close(8, 10, 0.4902, 0.9433);
        close(1, 1, 0.2065, 1.0);
    }

    #[test]
    fn totals_aggregate_exactly() {
        let mut found = result(
            "a",
            ReviewOutcome::Complete,
            vec![loc("a.rs", 5, 5)],
            vec![finding("a.rs", 5), finding("a.rs", 50)],
        );
        found.debunked = 2;
        found.cost_usd = 0.25;
        found.tokens = 1000;
        found.wall_ms = 100;
        let mut missed = result(
            "b",
            ReviewOutcome::Complete,
            vec![loc("b.rs", 5, 5)],
            vec![finding("b.rs", 30)],
        );
        missed.unresolved = 1;
        missed.cost_usd = 0.5;
        missed.wall_ms = 200;
        let mut aborted = result("c", ReviewOutcome::Aborted, vec![loc("c.rs", 1, 1)], vec![]);
        aborted.cost_usd = 0.25;
        let failed = result("d", ReviewOutcome::Failed, vec![loc("d.rs", 1, 1)], vec![]);
        let mut rs = vec![found, missed, aborted, failed];
        for r in &mut rs {
            score(r, 3);
        }
        let t = totals(&rs, 5, 1);
        assert_eq!(
            (t.cases, t.scored, t.found, t.missed, t.aborted, t.failed, t.not_run),
            (5, 3, 1, 1, 1, 1, 1)
        );
        assert_eq!(t.recall, Some(1.0 / 3.0));
        assert_eq!(t.recall_ci95, wilson(1, 3));
        assert_eq!((t.confirmed, t.unmatched), (3, 2));
        assert_eq!(t.unmatched_per_case, Some(1.0));
        assert_eq!((t.debunked, t.unresolved), (2, 1));
        assert_eq!(t.debunk_rate, Some(0.4));
        assert_eq!(t.cost_usd, 1.0);
        assert_eq!(t.cost_per_found, Some(1.0));
        assert_eq!((t.tokens, t.wall_ms), (1000, 300));
        let empty = totals(&[], 0, 0);
        assert_eq!(
            (empty.recall, empty.recall_ci95, empty.cost_per_found),
            (None, None, None)
        );
    }
}
