//! One review from a pinned target to its written report, shared by `arev run` and every
//! iteration of `arev run --iterate`: begin the run's records, drive the rounds, and finish
//! (re-pin the target, record how it ended, write report.json / report.md / report.sarif and
//! the final meta.json). The records themselves are written by `store::Recorder`. What a
//! review remembers across runs (baseline, incremental carry-over, verdict cache) is
//! `memory`.

mod memory;
mod prove;

pub use memory::{cache_key, complete, prepare, replayed, Prepared};
pub use prove::{proof_key, prove_findings, rerun_at, sandbox_spec, RerunError};

use crate::cli::Format;
use crate::findings::Role;
use crate::output;
use crate::report::{build_report, BuildInput};
use crate::resolve::RunPlan;
use crate::round::{run_review, Progress, ReviewEnd, ReviewResult};
use crate::store::{Ending, Finished, RecordError, Recorder, RunDir, RunStopReason, Start};
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
        fail_on: plan.fail_on,
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
    let result = rounds_and_proofs(plan, target, &mut rec, cancel, progress).await;
    let finished = finish(plan, target, rec, &result, started)?;
    Ok((finished, result))
}

/// The rounds, then (`--prove`, a review that stopped with a verdict) the proof phase.
pub async fn rounds_and_proofs(
    plan: &RunPlan,
    target: &PinnedTarget,
    rec: &mut Recorder,
    cancel: &CancellationToken,
    progress: Progress,
) -> ReviewResult {
    let mut result = run_review(plan, target, rec, cancel, progress).await;
    if matches!(result.end, ReviewEnd::Stopped(_)) && !cancel.is_cancelled() {
        let (run, live) = (rec.run().clone(), rec.progress().clone());
        result.proof = prove_findings(plan, target, &run, &live, &result, cancel, progress).await;
    }
    result
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
    rec: Recorder,
    result: &ReviewResult,
    started: Instant,
) -> Result<Finished, RecordError> {
    finish_with(plan, &Prepared::plain(target.clone()), rec, result, started)
}

/// [`finish`] for a prepared review: the review's own report goes into the verdict cache
/// (when complete), then becomes the full picture (`memory::complete`).
pub fn finish_with(
    plan: &RunPlan,
    prepared: &Prepared,
    mut rec: Recorder,
    result: &ReviewResult,
    started: Instant,
) -> Result<Finished, RecordError> {
    let target = prepared.target();
    if result.end != ReviewEnd::Empty {
        if let Err(e) = rec.repin(target) {
            output::warn(&format!("cannot re-pin the target: {e}"));
        }
        if rec.meta().target.drift {
            output::warn("the target changed during the review (sha256 drift); findings refer to the pinned version");
        }
        let reads = result
            .rounds
            .iter()
            .flat_map(|r| &r.dispatches)
            .flat_map(|d| &d.context_reads);
        let drift = rec.recheck_context(&target.root, reads);
        if !drift.is_empty() {
            output::warn(&format!(
                "{} context file(s) the reviewers read changed during the review ({}); their citations refer to the version read",
                drift.len(),
                drift.join(", ")
            ));
        }
    }
    if let Some(b) = &plan.memory.baseline {
        rec.note_baseline(&b.run_id);
    }
    let run_dir = rec.run().path.clone();
    let sarif = plan.outputs.sarif.is_some() || plan.outputs.format == Format::Sarif;
    let fresh = matches!(result.end, ReviewEnd::Stopped(_)) && prepared.nothing_changed().is_none();
    rec.finish(ending(&result.end), |meta| {
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
        // A verdict about a target that changed during the review is not reused.
        if fresh && !meta.target.drift {
            prepared.store(&report);
        }
        complete(plan, prepared, &mut report);
        crate::report::rendered(report, sarif)
    })
}

/// A verdict-cache hit: nothing is dispatched; the cached report is recorded as this run's
/// (`cached_from` in meta.json and report.json), completed like a fresh one.
pub fn replay(
    plan: &RunPlan,
    prepared: &Prepared,
    mut rec: Recorder,
    hit: &crate::store::cache::CachedVerdict,
    started: Instant,
) -> Result<Finished, RecordError> {
    rec.note_cached_from(&hit.run_id);
    if let Some(b) = &plan.memory.baseline {
        rec.note_baseline(&b.run_id);
    }
    let run_dir = rec.run().path.clone();
    let sarif = plan.outputs.sarif.is_some() || plan.outputs.format == Format::Sarif;
    // A hit always has one (`VerdictCache::lookup` returns complete reviews only).
    let stop_reason = hit
        .report
        .stop_reason
        .map_or(RunStopReason::ZeroFindings, Into::into);
    rec.finish(Ending::Complete { stop_reason }, |meta| {
        let mut report = memory::replayed(hit, meta, &run_dir, prepared.target());
        report.duration_ms = started.elapsed().as_millis() as u64;
        complete(plan, prepared, &mut report);
        crate::report::rendered(report, sarif)
    })
}

/// An allowed empty diff: a target with nothing in it, recorded as `status: empty`.
pub fn empty_target(plan: &RunPlan) -> PinnedTarget {
    PinnedTarget {
        keys: None,
        context: None,
        kind: TargetKind::Diff,
        display: plan.display.clone(),
        root: plan.root.clone(),
        in_repo: plan.git_common_dir.is_some(),
        file_path: None,
        artefact: Some(crate::target::Artefact::in_memory("diff.patch", vec![])),
        sha256: hex::encode(Sha256::digest(b"")),
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
