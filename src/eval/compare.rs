//! `arev eval compare A.json B.json` (pure): both evaluations rescored at one tolerance,
//! case by case and in total, with what makes them less than like-for-like.

use super::error::EvalError;
use super::model::{
    Agreement, CaseResult, CaseStatus, CompareCell, ComparePanel, CompareRow, Comparison,
    EvalReport, EVAL_SCHEMA_VERSION,
};
use super::score::{score, totals};
use std::collections::BTreeMap;

fn rescored(r: &EvalReport, tol: u32) -> (Vec<CaseResult>, super::model::Totals) {
    let mut cases = r.cases.clone();
    for c in &mut cases {
        score(c, tol);
    }
    let t = totals(
        &cases,
        r.totals.cases,
        u32::try_from(r.not_run.len()).unwrap_or(u32::MAX),
    );
    (cases, t)
}

fn cell(c: &CaseResult) -> CompareCell {
    CompareCell {
        status: c.status,
        unmatched: c.unmatched,
        debunked: c.debunked,
        cost_usd: c.cost_usd,
        tokens: c.tokens,
        unpriced_tokens: c.unpriced_tokens,
        wall_ms: c.wall_ms,
    }
}

/// Compare `a` (read from `a_path`) with `b`. `tolerance` rescores both; without it the two
/// must have been scored at the same tolerance.
pub fn compare(
    a: &EvalReport,
    a_path: &str,
    b: &EvalReport,
    b_path: &str,
    tolerance: Option<u32>,
) -> Result<Comparison, EvalError> {
    let tol = match tolerance {
        Some(t) => t,
        None if a.tolerance == b.tolerance => a.tolerance,
        None => {
            return Err(EvalError::Tolerances {
                a: a.tolerance,
                b: b.tolerance,
            })
        }
    };
    let (ca, ta) = rescored(a, tol);
    let (cb, tb) = rescored(b, tol);
    let (rows, agreement, unmatched) = rows_of(&ca, &cb);
    let notes = notes_of(a, b, (&ta, &tb), unmatched);
    Ok(Comparison {
        schema_version: EVAL_SCHEMA_VERSION,
        tolerance: tol,
        a: ComparePanel {
            path: a_path.to_string(),
            config_digest: a.config_digest.clone(),
            totals: ta,
        },
        b: ComparePanel {
            path: b_path.to_string(),
            config_digest: b.config_digest.clone(),
            totals: tb,
        },
        cases: rows,
        agreement,
        notes,
    })
}

/// Cases not compared: with a result in A only, in B only, and that differ between them.
#[derive(Clone, Copy)]
struct Unmatched {
    only_a: u32,
    only_b: u32,
    differ: u32,
}

/// One row per case of either side (by id), and the agreement on the cases both scored.
fn rows_of(ca: &[CaseResult], cb: &[CaseResult]) -> (Vec<CompareRow>, Agreement, Unmatched) {
    let mut by_id: BTreeMap<&str, (Option<&CaseResult>, Option<&CaseResult>)> = BTreeMap::new();
    for c in ca {
        by_id.entry(&c.case_id).or_default().0 = Some(c);
    }
    for c in cb {
        by_id.entry(&c.case_id).or_default().1 = Some(c);
    }
    let mut agreement = Agreement::default();
    let (mut only_a, mut only_b, mut differ) = (0, 0, 0);
    let rows: Vec<CompareRow> = by_id
        .into_iter()
        .map(|(id, (x, y))| {
            let case_differs =
                matches!((x, y), (Some(x), Some(y)) if x.case_digest != y.case_digest);
            match (x, y) {
                (Some(_), None) => only_a += 1,
                (None, Some(_)) => only_b += 1,
                _ if case_differs => differ += 1,
                (Some(x), Some(y)) if x.status.scored() && y.status.scored() => {
                    agreement.common += 1;
                    match (x.status == CaseStatus::Found, y.status == CaseStatus::Found) {
                        (true, true) => agreement.both_found += 1,
                        (true, false) => agreement.only_a += 1,
                        (false, true) => agreement.only_b += 1,
                        (false, false) => agreement.neither += 1,
                    }
                }
                _ => {}
            }
            CompareRow {
                case_id: id.to_string(),
                subject: x
                    .or(y)
                    .map(|c| c.origin.subject().to_string())
                    .unwrap_or_default(),
                a: x.map(cell),
                b: y.map(cell),
                case_differs,
            }
        })
        .collect();
    (
        rows,
        agreement,
        Unmatched {
            only_a,
            only_b,
            differ,
        },
    )
}

/// What makes the comparison less than like-for-like.
fn notes_of(
    a: &EvalReport,
    b: &EvalReport,
    (ta, tb): (&super::model::Totals, &super::model::Totals),
    u: Unmatched,
) -> Vec<String> {
    let Unmatched {
        only_a,
        only_b,
        differ,
    } = u;
    let mut notes = Vec::new();
    if only_a > 0 {
        notes.push(format!("{only_a} case(s) have a result in A only"));
    }
    if only_b > 0 {
        notes.push(format!("{only_b} case(s) have a result in B only"));
    }
    if differ > 0 {
        notes.push(format!(
            "{differ} case(s) differ between A and B (revision, targets or expected lines): not compared"
        ));
    }
    for (name, t) in [("A", ta), ("B", tb)] {
        if t.not_run > 0 {
            notes.push(format!(
                "{name} was interrupted: {} case(s) not run",
                t.not_run
            ));
        }
        if t.failed > 0 {
            notes.push(format!(
                "{name}: {} case(s) could not be reviewed (failed)",
                t.failed
            ));
        }
    }
    if a.config_digest == b.config_digest {
        notes.push("A and B have the same configuration digest: the same panel".into());
    }
    notes
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::eval::model::{EvalStatus, ReviewOutcome};
    use crate::eval::score::tests::{finding, loc, result};

    pub(crate) fn report(digest: &str, tol: u32, cases: Vec<CaseResult>) -> EvalReport {
        let mut cases = cases;
        for c in &mut cases {
            score(c, tol);
        }
        let t = totals(&cases, u32::try_from(cases.len()).unwrap(), 0);
        EvalReport {
            schema_version: 1,
            arev_version: "0.1.0".into(),
            config_digest: digest.into(),
            tolerance: tol,
            cases_dir: "cases".into(),
            out_dir: "out".into(),
            use_cache: false,
            prove: false,
            status: EvalStatus::Complete,
            started_at: String::new(),
            finished_at: String::new(),
            duration_ms: 0,
            cases,
            not_run: vec![],
            totals: t,
        }
    }

    fn complete(id: &str, line: u32) -> CaseResult {
        result(
            id,
            ReviewOutcome::Complete,
            vec![loc("a.rs", 10, 10)],
            vec![finding("a.rs", line)],
        )
    }

    #[test]
    fn side_by_side_with_agreement_and_notes() {
        let a = report(
            "A",
            3,
            vec![
                complete("c1", 10),
                complete("c2", 30),
                complete("c3", 12),
                complete("c4", 40),
            ],
        );
        let mut differing = complete("c3", 10);
        differing.case_digest = "other".into();
        let b = report(
            "B",
            3,
            vec![
                complete("c1", 11),
                complete("c2", 9),
                differing,
                complete("c5", 10),
            ],
        );
        let c = compare(&a, "a.json", &b, "b.json", None).unwrap();
        assert_eq!(c.tolerance, 3);
        let ids: Vec<&str> = c.cases.iter().map(|r| r.case_id.as_str()).collect();
        assert_eq!(ids, ["c1", "c2", "c3", "c4", "c5"]);
        assert_eq!(c.cases[1].a.as_ref().unwrap().status, CaseStatus::Missed);
        assert_eq!(c.cases[1].b.as_ref().unwrap().status, CaseStatus::Found);
        assert!(c.cases[2].case_differs);
        assert!(c.cases[3].b.is_none() && c.cases[4].a.is_none());
        assert_eq!(
            c.agreement,
            Agreement {
                common: 2,
                both_found: 1,
                only_a: 0,
                only_b: 1,
                neither: 0
            }
        );
        assert_eq!(c.a.totals.found, 2);
        assert_eq!(c.b.totals.found, 4);
        assert_eq!(
            c.notes,
            [
                "1 case(s) have a result in A only",
                "1 case(s) have a result in B only",
                "1 case(s) differ between A and B (revision, targets or expected lines): not compared"
            ]
        );
    }

    #[test]
    fn tolerances_must_agree_or_be_given() {
        let a = report("A", 3, vec![complete("c1", 14)]);
        let b = report("B", 4, vec![complete("c1", 14)]);
        let err = compare(&a, "a", &b, "b", None).unwrap_err().to_string();
        assert!(err.contains("±3 and ±4"), "{err}");
        // Rescored at ±4, A's miss at line 14 becomes a find; at ±3 B's find is a miss.
        let c4 = compare(&a, "a", &b, "b", Some(4)).unwrap();
        assert_eq!((c4.a.totals.found, c4.b.totals.found), (1, 1));
        let c3 = compare(&a, "a", &b, "b", Some(3)).unwrap();
        assert_eq!((c3.a.totals.found, c3.b.totals.found), (0, 0));
        assert_eq!(c3.agreement.neither, 1);
        let same = compare(&a, "a", &a, "a", Some(3)).unwrap();
        assert!(same
            .notes
            .iter()
            .any(|n| n.contains("same configuration digest")));
    }
}
