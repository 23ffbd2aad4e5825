//! The outer loop's stop decision (docs/architecture.md §13): pure functions of one
//! iteration's facts, checked after the review and again after the fix, in a fixed order.

use super::IterateStop;
use crate::round::StopReason;
use std::collections::BTreeSet;

/// What the review of iteration `iteration` established.
#[derive(Debug, Clone)]
pub struct ReviewFacts<'a> {
    pub iteration: u32,
    pub max_iterations: u32,
    /// How the inner review stopped.
    pub review_stop: StopReason,
    /// Fingerprints of the confirmed findings at or above the fix threshold.
    pub confirmed: &'a BTreeSet<String>,
    /// The same set of the previous iteration (None in iteration 1).
    pub previous: Option<&'a BTreeSet<String>>,
    /// Consecutive iterations whose confirmed count grew, before this one.
    pub worsening: u32,
    /// Whether any budget is left for a fix.
    pub budget_left: bool,
}

/// A decision with the facts that led to it (written to the report).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub stop: Option<IterateStop>,
    /// The updated worsening streak.
    pub worsening: u32,
    pub reasons: Vec<String>,
}

/// After the review: in order — budget spent inside the review, clean, the same confirmed
/// set twice, anti-divergence (the count grew two iterations in a row), the iteration
/// ceiling, no budget left for a fix; otherwise continue with a fix.
pub fn after_review(f: &ReviewFacts<'_>) -> Verdict {
    let n = f.confirmed.len();
    let grew = f.previous.is_some_and(|p| n > p.len());
    let worsening = if grew { f.worsening + 1 } else { 0 };
    let mut reasons = vec![format!(
        "iteration {}: {n} confirmed finding(s) at or above the fix threshold{}",
        f.iteration,
        match f.previous {
            Some(p) => format!(" (previous iteration: {})", p.len()),
            None => String::new(),
        }
    )];
    let stop = |s: IterateStop, why: String, mut reasons: Vec<String>| {
        reasons.push(why);
        Verdict {
            stop: Some(s),
            worsening,
            reasons,
        }
    };
    if f.review_stop == StopReason::BudgetExhausted {
        return stop(
            IterateStop::BudgetExhausted,
            "the review stopped with budget-exhausted: its verdict is incomplete".into(),
            reasons,
        );
    }
    if n == 0 {
        return stop(
            IterateStop::Clean,
            "clean: nothing confirmed at or above the fix threshold".into(),
            reasons,
        );
    }
    if f.previous.is_some_and(|p| p == f.confirmed) {
        return stop(
            IterateStop::NoProgress,
            "no-progress: the same findings (by fingerprint) were confirmed as in the previous iteration".into(),
            reasons,
        );
    }
    if grew {
        reasons.push(format!(
            "the confirmed count grew: worsening streak {worsening}"
        ));
    }
    if worsening >= 2 {
        return stop(
            IterateStop::AntiDivergenceHalt,
            "anti-divergence-halt: the fixes made things worse two iterations in a row".into(),
            reasons,
        );
    }
    if f.iteration >= f.max_iterations {
        return stop(
            IterateStop::MaxIterations,
            format!(
                "max-iterations: {} review(s) done, the findings stay unfixed",
                f.max_iterations
            ),
            reasons,
        );
    }
    if !f.budget_left {
        return stop(
            IterateStop::BudgetExhausted,
            "budget-exhausted: nothing left for a fix".into(),
            reasons,
        );
    }
    reasons.push("continue: dispatch the Fixer".into());
    Verdict {
        stop: None,
        worsening,
        reasons,
    }
}

/// What the fix of one iteration did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FixFacts {
    /// Paths changed inside ALLOWED_FILES after reverts (what was committed).
    pub changed: usize,
    /// The verify command's verdict (None without `--verify`).
    pub verify_ok: Option<bool>,
    /// `--prove`: applied findings whose reproducer does not pass on the fix commit.
    pub unproven: usize,
    /// Whether any budget is left for the next review.
    pub budget_left: bool,
}

/// After the fix: no change → no-progress; verify failed → verify-failed; a fixed finding's
/// reproducer still fails → fix-unproven; no budget left for the next review →
/// budget-exhausted; otherwise review again.
pub fn after_fix(f: FixFacts) -> (Option<IterateStop>, String) {
    if f.changed == 0 {
        return (
            Some(IterateStop::NoProgress),
            "no-progress: the Fixer changed nothing inside the target".into(),
        );
    }
    if f.verify_ok == Some(false) {
        return (
            Some(IterateStop::VerifyFailed),
            "verify-failed: the verify command exited non-zero".into(),
        );
    }
    if f.unproven > 0 {
        return (
            Some(IterateStop::FixUnproven),
            format!(
                "fix-unproven: the reproducer of {} finding(s) the Fixer applied does not pass on the fix commit",
                f.unproven
            ),
        );
    }
    if !f.budget_left {
        return (
            Some(IterateStop::BudgetExhausted),
            "budget-exhausted: nothing left to review the fix".into(),
        );
    }
    (
        None,
        format!(
            "continue: {} file(s) committed{}, review again",
            f.changed,
            if f.verify_ok == Some(true) {
                ", verify passed"
            } else {
                ""
            }
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(xs: &[&str]) -> BTreeSet<String> {
        xs.iter().map(|s| s.to_string()).collect()
    }

    /// (iteration, max, review stop, confirmed, previous, worsening before, budget left)
    ///   → (stop, worsening after)
    type Row = (
        u32,
        u32,
        StopReason,
        Vec<&'static str>,
        Option<Vec<&'static str>>,
        u32,
        bool,
        Option<IterateStop>,
        u32,
    );

    fn after_review_rows() -> Vec<Row> {
        use IterateStop::*;
        let zs = StopReason::ZeroFindings;
        vec![
            // clean on the first review
            (1, 5, zs, vec![], None, 0, true, Some(Clean), 0),
            // clean wins over everything else after the review (but a budget cut does not)
            (5, 5, zs, vec![], Some(vec!["a"]), 1, false, Some(Clean), 0),
            (
                2,
                5,
                StopReason::BudgetExhausted,
                vec![],
                Some(vec!["a"]),
                0,
                true,
                Some(BudgetExhausted),
                0,
            ),
            // findings, first iteration: fix
            (1, 5, zs, vec!["a"], None, 0, true, None, 0),
            // same set twice
            (
                2,
                5,
                zs,
                vec!["a", "b"],
                Some(vec!["a", "b"]),
                0,
                true,
                Some(NoProgress),
                0,
            ),
            // a different set of the same size: continue, streak reset
            (2, 5, zs, vec!["c"], Some(vec!["a"]), 1, true, None, 0),
            // grew once: continue with streak 1
            (2, 5, zs, vec!["b", "c"], Some(vec!["a"]), 0, true, None, 1),
            // grew twice in a row: halt
            (
                3,
                5,
                zs,
                vec!["d", "e", "f"],
                Some(vec!["b", "c"]),
                1,
                true,
                Some(AntiDivergenceHalt),
                2,
            ),
            // shrank: streak reset
            (3, 5, zs, vec!["d"], Some(vec!["b", "c"]), 1, true, None, 0),
            // the ceiling: the last review is not fixed
            (
                3,
                3,
                zs,
                vec!["d"],
                Some(vec!["b", "c"]),
                0,
                true,
                Some(MaxIterations),
                0,
            ),
            (1, 1, zs, vec!["a"], None, 0, true, Some(MaxIterations), 0),
            // anti-divergence is checked before the ceiling
            (
                3,
                3,
                zs,
                vec!["d", "e", "f"],
                Some(vec!["b", "c"]),
                1,
                true,
                Some(AntiDivergenceHalt),
                2,
            ),
            // no money left for a fix
            (
                1,
                5,
                zs,
                vec!["a"],
                None,
                0,
                false,
                Some(BudgetExhausted),
                0,
            ),
        ]
    }

    #[test]
    fn after_review_table() {
        let table = after_review_rows();
        for (i, (it, max, rs, c, p, w, b, want, want_w)) in table.into_iter().enumerate() {
            let c = set(&c);
            let p = p.map(|p| set(&p));
            let v = after_review(&ReviewFacts {
                iteration: it,
                max_iterations: max,
                review_stop: rs,
                confirmed: &c,
                previous: p.as_ref(),
                worsening: w,
                budget_left: b,
            });
            assert_eq!(v.stop, want, "row {i}: {:?}", v.reasons);
            assert_eq!(v.worsening, want_w, "row {i} worsening");
            assert!(!v.reasons.is_empty());
        }
    }

    #[test]
    fn after_fix_table() {
        use IterateStop::*;
        let table = [
            (0, None, 0, true, Some(NoProgress)),
            (0, Some(false), 1, true, Some(NoProgress)),
            (2, Some(false), 0, true, Some(VerifyFailed)),
            (2, Some(false), 1, false, Some(VerifyFailed)),
            (1, Some(true), 0, false, Some(BudgetExhausted)),
            (1, None, 0, true, None),
            (1, Some(true), 0, true, None),
            // `--prove`: a fix whose reproducer still fails stops before the budget check.
            (1, None, 1, true, Some(FixUnproven)),
            (1, Some(true), 2, false, Some(FixUnproven)),
        ];
        for (i, (changed, verify_ok, unproven, budget_left, want)) in table.into_iter().enumerate()
        {
            let (stop, why) = after_fix(FixFacts {
                changed,
                verify_ok,
                unproven,
                budget_left,
            });
            assert_eq!(stop, want, "row {i}: {why}");
        }
    }
}
