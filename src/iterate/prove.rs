//! `--prove` in iterate mode (docs/prove.md "Iterate"): a finding the Fixer applied whose
//! reproducer failed in the review (`reproduced` or `preexisting`) counts as fixed only when
//! that reproducer passes on the fix commit; otherwise it is `fix_unproven` and the loop
//! stops `fix-unproven`. The reproducer runs in a scratch tree of the fix commit (the
//! worktree's content as committed) under the review's sandbox and limits, so nothing it
//! writes reaches the worktree, the branch or the next review.

use super::{FixItem, FixProof, FixProofStatus};
use crate::prove::verdict;
use crate::records::{FindingProof, ProofStatus, RunRecord};
use crate::resolve::ProvePlan;
use crate::review::rerun_at;
use crate::store::RunDir;
use std::path::Path;
use tokio_util::sync::CancellationToken;

/// Where the reproducers of one iteration are run again.
pub struct FixCheck<'a> {
    pub prove: &'a ProvePlan,
    /// The worktree: its repository holds the fix commit.
    pub worktree: &'a Path,
    /// The fix commit.
    pub commit: &'a str,
    /// The iteration's review run dir (`proofs/<finding>/` holds each reproducer) and its
    /// path relative to the iterate run dir (`iterations/<i>`).
    pub run: &'a RunDir,
    pub rel_dir: &'a str,
}

/// The fixed findings to check: applied by the Fixer, with a reproducer that failed on the
/// reviewed content.
pub fn to_check<'p>(
    items: &[FixItem],
    applied: &[String],
    proofs: &'p [FindingProof],
) -> Vec<(FixItem, &'p FindingProof)> {
    items
        .iter()
        .filter(|it| applied.contains(&it.id))
        .filter_map(|it| {
            let p = proofs
                .iter()
                .find(|p| p.round == it.round && p.finding_id == it.round_finding_id)?;
            let failed = matches!(
                p.evidence.status,
                ProofStatus::Reproduced | ProofStatus::Preexisting
            );
            (failed && !p.evidence.command.is_empty()).then(|| (it.clone(), p))
        })
        .collect()
}

/// Run each reproducer of `todo` on the fix commit, one after the other. None when `cancel`
/// fired.
pub async fn check_fixes(
    c: &FixCheck<'_>,
    todo: &[(FixItem, &FindingProof)],
    cancel: &CancellationToken,
) -> Option<Vec<FixProof>> {
    let mut out = vec![];
    for (it, p) in todo {
        let ev = &p.evidence;
        let kept = c.run.proof_dir(&p.key);
        let mut fp = FixProof {
            id: it.id.clone(),
            round: it.round,
            round_finding_id: it.round_finding_id.clone(),
            status: FixProofStatus::FixUnproven,
            proof_status: ev.status,
            command: ev.command.clone(),
            files: ev.files.clone(),
            kept_in: format!("{}/proofs/{}/", c.rel_dir, p.key),
            commit: c.commit.to_string(),
            run: None,
            sandbox: c.prove.sandbox,
            reason: None,
        };
        match rerun_at(
            c.prove,
            c.worktree,
            c.commit,
            &kept,
            &ev.files,
            &ev.command,
            cancel,
        )
        .await
        {
            Ok(Some(run)) => {
                let (status, reason) = judge(&run);
                fp.status = status;
                fp.reason = reason;
                fp.run = Some(run);
            }
            Ok(None) => return None,
            Err(e) => fp.reason = Some(e.to_string()),
        }
        out.push(fp);
    }
    Some(out)
}

/// What a run on the fix commit says: it passes (`fixed`), or it still fails or says
/// nothing (`fix_unproven`, with why).
pub fn judge(run: &RunRecord) -> (FixProofStatus, Option<String>) {
    match verdict(run) {
        Some(false) => (FixProofStatus::Fixed, None),
        Some(true) => (
            FixProofStatus::FixUnproven,
            Some(format!(
                "the reproducer still fails on the fix commit (exit {})",
                run.exit.unwrap_or(-1)
            )),
        ),
        None => (
            FixProofStatus::FixUnproven,
            Some(if run.timed_out {
                "the reproducer timed out on the fix commit".to_string()
            } else if let Some(e) = &run.sandbox_error {
                format!("the sandbox did not start: {e}")
            } else if let Some(sig) = run.signal {
                format!("the reproducer was killed by signal {sig} on the fix commit")
            } else {
                format!(
                    "the reproducer could not run on the fix commit (exit {})",
                    run.exit.unwrap_or(-1)
                )
            }),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::{Evidence, SandboxMode};

    fn proof(round: u32, id: &str, status: ProofStatus) -> FindingProof {
        FindingProof {
            round,
            finding_id: id.into(),
            key: format!("r{round}-{id}"),
            claim: None,
            evidence: Evidence {
                status,
                command: vec!["true".into()],
                files: vec!["t.py".into()],
                head: None,
                base: None,
                sandbox: SandboxMode::Bwrap,
                reason: None,
            },
        }
    }

    fn item(id: &str, round: u32, rid: &str) -> FixItem {
        FixItem {
            id: id.into(),
            fingerprint: format!("fp-{rid}"),
            round,
            round_finding_id: rid.into(),
        }
    }

    #[test]
    fn only_applied_findings_whose_reproducer_failed_are_checked() {
        let items = [
            item("F1", 1, "F1"),
            item("F2", 1, "F2"),
            item("F3", 2, "F1"),
            item("F4", 1, "F4"),
        ];
        let proofs = [
            proof(1, "F1", ProofStatus::Reproduced),
            proof(1, "F2", ProofStatus::NotReproduced),
            proof(2, "F1", ProofStatus::Preexisting),
            proof(1, "F4", ProofStatus::Reproduced),
        ];
        // F4 was not applied (the Fixer skipped it).
        let applied = ["F1".to_string(), "F2".into(), "F3".into()];
        let got: Vec<(String, String)> = to_check(&items, &applied, &proofs)
            .into_iter()
            .map(|(it, p)| (it.id, p.key.clone()))
            .collect();
        assert_eq!(
            got,
            [("F1".into(), "r1-F1".into()), ("F3".into(), "r2-F1".into())]
        );
    }

    #[test]
    fn a_fix_is_proven_only_by_a_passing_run() {
        let run = |exit: Option<i32>, timed_out: bool| RunRecord {
            exit,
            timed_out,
            ..RunRecord::default()
        };
        assert_eq!(judge(&run(Some(0), false)).0, FixProofStatus::Fixed);
        for r in [
            run(Some(1), false),
            run(None, true),
            run(Some(127), false),
            RunRecord {
                sandbox_error: Some("bwrap: no".into()),
                ..RunRecord::default()
            },
        ] {
            let (s, why) = judge(&r);
            assert_eq!(s, FixProofStatus::FixUnproven, "{r:?}");
            assert!(why.is_some());
        }
    }
}
