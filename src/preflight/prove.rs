//! Whether `--prove` can run its reproducers here (docs/prove.md "Sandbox"): checked by
//! `arev run` before it creates a run dir or dispatches anything. Exit 2, naming the fix.

use super::PreflightError;
use crate::resolve::RunPlan;

/// The sandbox `plan`'s proofs use starts here, and the target is in a git repository with
/// a commit (a proof runs in a checkout of it). Nothing to check without `--prove`.
pub fn check_prove(plan: &RunPlan) -> Result<(), PreflightError> {
    let Some(prove) = &plan.prove else {
        return Ok(());
    };
    let in_repo = plan.target.as_ref().is_none_or(|t| t.in_repo);
    let head = git2::Repository::open(&plan.root)
        .ok()
        .is_some_and(|r| r.head().and_then(|h| h.peel_to_commit()).is_ok());
    if !in_repo || !head {
        return Err(PreflightError::ProveNeedsCommit(plan.root.clone()));
    }
    Ok(crate::prove::preflight(prove.sandbox)?)
}
