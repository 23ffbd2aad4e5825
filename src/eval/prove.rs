//! `arev eval run --prove` (docs/eval.md "Proofs"): each case's review proves its confirmed
//! findings at the buggy revision (`arev run --prove` in the case's checkout); then every
//! reproducer that failed there runs again, in the same sandbox, at the case's fix commit —
//! the real fix of a mined case. A reproducer that fails before the fix and passes after it
//! is `confirmed_by_fix`; the totals give that rate for the panel.

use super::model::{CaseResult, EvalProof, ProofTotals, ReviewOutcome};
use crate::prove::verdict;
use crate::records::{Evidence, ProofCounts, ProofStatus};
use crate::resolve::ProvePlan;
use std::path::Path;
use tokio_util::sync::CancellationToken;

/// A confirmed finding's proof as the review's report.json carries it, with where its files
/// are kept (`<run dir>/proofs/<key>/`).
pub struct Kept<'a> {
    pub evidence: Evidence,
    pub dir: &'a Path,
    pub key: String,
}

/// The proof of one finding: run its reproducer at `fix` (the case's fix commit, in the
/// user's repository at `root`) when it failed at the buggy revision.
pub fn at_fix(
    prove: &ProvePlan,
    root: &Path,
    fix: Option<&str>,
    kept: Kept<'_>,
    cancel: &CancellationToken,
) -> EvalProof {
    let ev = kept.evidence;
    let mut p = EvalProof {
        status: ev.status,
        command: ev.command.clone(),
        files: ev.files.clone(),
        at_fix: None,
        confirmed_by_fix: false,
        reason: None,
    };
    if !matches!(
        ev.status,
        ProofStatus::Reproduced | ProofStatus::Preexisting
    ) {
        p.reason = Some(format!(
            "{} at the buggy revision: nothing to check at the fix",
            ev.status.as_str()
        ));
        return p;
    }
    let Some(fix) = fix else {
        p.reason = Some("the case has no fix commit (origin.commit)".into());
        return p;
    };
    let dir = kept.dir.join("proofs").join(&kept.key);
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            p.reason = Some(format!("cannot start a runtime: {e}"));
            return p;
        }
    };
    let run = rt.block_on(crate::review::rerun_at(
        prove,
        root,
        fix,
        &dir,
        &ev.files,
        &ev.command,
        cancel,
    ));
    match run {
        Ok(Some(r)) => {
            p.confirmed_by_fix = verdict(&r) == Some(false);
            if !p.confirmed_by_fix {
                p.reason = Some(match verdict(&r) {
                    Some(true) => "it still fails at the fix commit".into(),
                    _ => "its run at the fix commit says nothing (timed out, killed, a sandbox \
                          or command error)"
                        .into(),
                });
            }
            p.at_fix = Some(r);
        }
        Ok(None) => p.reason = Some("interrupted".into()),
        Err(e) => p.reason = Some(e.to_string()),
    }
    p
}

/// The proofs over every completed case; None when no case was proved.
pub fn totals(results: &[CaseResult]) -> Option<ProofTotals> {
    let proved: Vec<&CaseResult> = results
        .iter()
        .filter(|r| r.proved && r.outcome == ReviewOutcome::Complete)
        .collect();
    if proved.is_empty() {
        return None;
    }
    let mut counts = ProofCounts::default();
    let (mut failed, mut confirmed) = (0u32, 0u32);
    for p in proved
        .iter()
        .flat_map(|r| &r.confirmed)
        .filter_map(|f| f.proof.as_ref())
    {
        counts.add(p.status);
        if matches!(p.status, ProofStatus::Reproduced | ProofStatus::Preexisting) {
            failed += 1;
            confirmed += u32::from(p.confirmed_by_fix);
        }
    }
    Some(ProofTotals {
        counts,
        failed_before_fix: failed,
        confirmed_by_fix: confirmed,
        confirmed_by_fix_rate: (failed > 0).then(|| f64::from(confirmed) / f64::from(failed)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::model::ScoredFinding;
    use crate::findings::Severity;

    fn proof(status: ProofStatus, confirmed_by_fix: bool) -> ScoredFinding {
        ScoredFinding {
            file: Some("a.py".into()),
            line: Some(1),
            severity: Severity::High,
            category: "logic".into(),
            matches: None,
            proof: Some(EvalProof {
                status,
                command: vec![],
                files: vec![],
                at_fix: None,
                confirmed_by_fix,
                reason: None,
            }),
        }
    }

    #[test]
    fn the_rate_counts_reproducers_that_failed_before_the_fix() {
        let mut r = crate::eval::score::tests::result("c", ReviewOutcome::Complete, vec![], vec![]);
        assert_eq!(totals(std::slice::from_ref(&r)), None, "not proved");
        r.proved = true;
        r.confirmed = vec![
            proof(ProofStatus::Reproduced, true),
            proof(ProofStatus::Reproduced, false),
            proof(ProofStatus::Preexisting, true),
            proof(ProofStatus::NotReproduced, false),
            proof(ProofStatus::Inconclusive, false),
        ];
        let t = totals(&[r]).unwrap();
        assert_eq!(t.failed_before_fix, 3);
        assert_eq!(t.confirmed_by_fix, 2);
        assert_eq!(t.confirmed_by_fix_rate, Some(2.0 / 3.0));
        assert_eq!(t.counts.reproduced, 2);
        assert_eq!(t.counts.not_reproduced, 1);
    }

    #[test]
    fn a_proof_that_did_not_fail_or_has_no_fix_is_not_run() {
        let prove = ProvePlan {
            sandbox: crate::records::SandboxMode::None,
            min_severity: Severity::High,
            max_findings: 5,
            timeout: std::time::Duration::from_secs(5),
            memory_bytes: 0,
            env: vec![],
            bind_ro: vec![],
            require_proof: false,
        };
        let ev = |status| Evidence {
            status,
            command: vec!["true".into()],
            files: vec![],
            head: None,
            base: None,
            sandbox: crate::records::SandboxMode::None,
            reason: None,
        };
        let d = tempfile::tempdir().unwrap();
        let none = CancellationToken::new();
        let kept = |status| Kept {
            evidence: ev(status),
            dir: d.path(),
            key: "r1-F1".into(),
        };
        let p = at_fix(
            &prove,
            d.path(),
            Some("HEAD"),
            kept(ProofStatus::NotReproduced),
            &none,
        );
        assert!(p.at_fix.is_none() && !p.confirmed_by_fix);
        let p = at_fix(&prove, d.path(), None, kept(ProofStatus::Reproduced), &none);
        assert_eq!(
            p.reason.as_deref(),
            Some("the case has no fix commit (origin.commit)")
        );
    }
}
