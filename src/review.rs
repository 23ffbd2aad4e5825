//! One review from a pinned target to its written report, shared by `arev run` and every
//! iteration of `arev run --iterate`: begin the run's records, drive the rounds, and finish
//! (re-pin the target, record how it ended, write report.json / report.md / report.sarif and
//! the final meta.json). The records themselves are written by `store::Recorder`.

use crate::cli::Format;
use crate::findings::Role;
use crate::output;
use crate::report::{build_report, BuildInput};
use crate::resolve::RunPlan;
use crate::round::{run_review, Progress, ReviewEnd, ReviewResult};
use crate::store::{Ending, Finished, RecordError, Recorder, RunDir, Start};
use crate::target::{Mode, PinnedTarget, TargetKind, TargetType};
use sha2::{Digest, Sha256};
use std::time::Instant;
use tokio_util::sync::CancellationToken;

/// What `plan` records when a review of `target` begins.
pub fn start<'a>(plan: &'a RunPlan, target: &'a PinnedTarget, empty: bool) -> Start<'a> {
    Start {
        target,
        rounds_planned: plan.max_rounds,
        passes: plan.passes,
        tier_start: plan.tier_start,
        config_digest: &plan.config_digest,
        empty,
        repo_inputs: Some(crate::store::MetaRepoInputs {
            source: plan.repo_inputs.source,
            commit: plan.repo_inputs.commit.clone(),
            files: plan.repo_inputs.paths(),
            digest: plan.repo_inputs.digest(),
        }),
    }
}

/// Begin the records of a review of `target` in the created run dir `run`.
pub fn begin(
    plan: &RunPlan,
    target: &PinnedTarget,
    run: RunDir,
    empty: bool,
) -> Result<Recorder, RecordError> {
    Recorder::begin(run, &start(plan, target, empty))
}

/// Drive the rounds and finish the records with the report.
pub async fn review(
    plan: &RunPlan,
    target: &PinnedTarget,
    mut rec: Recorder,
    cancel: &CancellationToken,
    progress: Progress,
    started: Instant,
) -> Result<(Finished, ReviewResult), RecordError> {
    let result = run_review(plan, target, &mut rec, cancel, progress).await;
    let finished = finish(plan, target, rec, &result, started)?;
    Ok((finished, result))
}

/// How meta.json records the end of a review.
pub fn ending(end: &ReviewEnd) -> Ending {
    match end {
        ReviewEnd::Stopped(s) => Ending::Complete {
            stop_reason: (*s).into(),
        },
        ReviewEnd::Aborted(a) => Ending::Aborted {
            reason: a.reason(),
            detail: a.detail(),
        },
        ReviewEnd::Interrupted => Ending::Interrupted,
        ReviewEnd::Empty => Ending::Empty,
    }
}

/// Re-pin the target (a drift is a warning), record the end, and write the report files and
/// the final meta.json.
pub fn finish(
    plan: &RunPlan,
    target: &PinnedTarget,
    mut rec: Recorder,
    result: &ReviewResult,
    started: Instant,
) -> Result<Finished, RecordError> {
    if result.end != ReviewEnd::Empty {
        if let Err(e) = rec.repin(target) {
            output::warn(&format!("cannot re-pin the target: {e}"));
        }
        if rec.meta().target.drift {
            output::warn("the target changed during the review (sha256 drift); findings refer to the pinned version");
        }
    }
    let run_dir = rec.run().path.clone();
    let sarif = plan.outputs.sarif.is_some() || plan.outputs.format == Format::Sarif;
    rec.finish(ending(&result.end), sarif, |meta| {
        let mut report = build_report(&BuildInput {
            result,
            target,
            meta,
            run_dir: &run_dir,
            enthusiast_agent: &plan.agent_for(Role::Enthusiast).name,
            judge_agent: &plan.agent_for(Role::Judge).name,
            duration_ms: started.elapsed().as_millis() as u64,
        });
        report.shard = plan.shard.clone();
        report
    })
}

/// An allowed empty diff: a target with nothing in it, recorded as `status: empty`.
pub fn empty_target(plan: &RunPlan) -> PinnedTarget {
    PinnedTarget {
        kind: TargetKind::Diff,
        display: plan.display.clone(),
        root: plan.root.clone(),
        in_repo: plan.git_common_dir.is_some(),
        file_path: None,
        artefact: Some(crate::target::Artefact::in_memory("diff.patch", vec![])),
        sha256: Sha256::digest(b"")
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect(),
        files: vec![],
        skipped: vec![],
        hunks: Default::default(),
        base: None,
        base_tree: None,
        measured_lines: 0,
        mode: Mode::Lightweight,
        target_type: TargetType::Code,
        brief: String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gates::Abort;
    use crate::round::StopReason;

    #[test]
    fn every_review_end_has_its_meta_ending() {
        assert_eq!(
            ending(&ReviewEnd::Stopped(StopReason::MaxRounds)),
            Ending::Complete {
                stop_reason: crate::store::RunStopReason::MaxRounds
            }
        );
        let a = Abort::NoToolInvocation { role: Role::Judge };
        assert_eq!(
            ending(&ReviewEnd::Aborted(a.clone())),
            Ending::Aborted {
                reason: a.reason(),
                detail: a.detail()
            }
        );
        assert_eq!(ending(&ReviewEnd::Interrupted), Ending::Interrupted);
        assert_eq!(ending(&ReviewEnd::Empty), Ending::Empty);
    }
}
