//! The end of an iterate run: re-pin the user's copy of the target, record how the loop
//! ended, and write the iterate run's own report — the last review's findings, rounds and
//! coverage, the cost of every review and fix, and the `iterate` section.

use super::driver::{End, Outcome};
use super::setup::Setup;
use super::worktree::fixes_patch;
use super::IterateReport;
use crate::output;
use crate::report::{build_report, BuildInput, Report, ReportTarget};
use crate::round::{ReviewEnd, ReviewResult};
use crate::store::{write_atomic, Ending, Finished, Meta, RecordError, Recorder};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The fixes alone, in the iterate run dir.
pub const PATCH_FILE: &str = "iterate.patch";

/// How meta.json records the end of the loop.
pub fn ending(end: &End) -> Ending {
    match end {
        End::Stopped(s) => Ending::Complete {
            stop_reason: (*s).into(),
        },
        End::Aborted { reason, detail } => Ending::Aborted {
            reason: *reason,
            detail: detail.clone(),
        },
        End::Interrupted => Ending::Interrupted,
    }
}

/// Finish the iterate run's records with its report.
pub fn finish(
    s: &Setup<'_>,
    mut rec: Recorder,
    outcome: Outcome,
    started: Instant,
) -> Result<Finished, RecordError> {
    let head =
        s.wt.open()
            .ok()
            .and_then(|r| r.head().ok()?.target())
            .map(|o| o.to_string())
            .unwrap_or_default();
    // An unreadable target counts as drift; the warning below says what it means here.
    let _ = rec.repin(&s.target);
    if rec.meta().target.drift {
        output::warn("your copy of the target changed during the run; the branch starts from the pinned version");
    }
    let run_dir = rec.run().path.clone();
    let patch = write_patch(s, &run_dir);
    let sarif =
        s.plan.outputs.sarif.is_some() || s.plan.outputs.format == crate::cli::Format::Sarif;
    rec.finish(ending(&outcome.end), |meta| {
        crate::report::rendered(
            report(s, meta, &run_dir, outcome, head, patch, started),
            sarif,
        )
    })
}

/// Where the fixes start: the snapshot commit of the user's work, else the base commit.
pub fn fixes_from(s: &Setup<'_>) -> String {
    s.snapshot
        .clone()
        .unwrap_or_else(|| s.wt.base_commit.clone())
}

/// Write the fixes alone to `<run dir>/iterate.patch`; its path, or None when the branch
/// holds no fix (or it could not be written: said on stderr, the branch still has them).
fn write_patch(s: &Setup<'_>, run_dir: &Path) -> Option<PathBuf> {
    let path = run_dir.join(PATCH_FILE);
    let written = fixes_patch(&s.wt, &fixes_from(s))
        .map_err(|e| e.0)
        .and_then(|text| {
            if text.is_empty() {
                return Ok(false);
            }
            write_atomic(&path, &text)
                .map(|()| true)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))
        });
    match written {
        Ok(true) => Some(path),
        Ok(false) => None,
        Err(e) => {
            output::warn(&format!("no {PATCH_FILE}: {e}"));
            None
        }
    }
}

fn report(
    s: &Setup<'_>,
    meta: &Meta,
    run_dir: &Path,
    outcome: Outcome,
    head: String,
    patch: Option<PathBuf>,
    started: Instant,
) -> Report {
    let mut report = match outcome.last_report {
        Some(r) => r,
        None => build_report(&BuildInput {
            result: &ReviewResult::ended(ReviewEnd::Interrupted),
            target: &s.target,
            meta,
            run_dir,
            enthusiast_agent: "",
            judge_agent: "",
            duration_ms: 0,
        }),
    };
    report.run_id = meta.run_id.clone();
    report.run_dir = run_dir.display().to_string();
    report.status = meta.status;
    report.stop_reason = None;
    report.abort_reason = meta.abort_reason;
    report.abort_detail = meta.abort_detail.clone();
    report.target = ReportTarget::new(&s.target, &meta.target);
    report.cost = outcome.cost;
    report.warnings.extend(outcome.warnings);
    report.started_at = meta.started_at.clone();
    report.finished_at = meta.finished_at.clone().unwrap_or_default();
    report.duration_ms = started.elapsed().as_millis() as u64;
    report.iterate = Some(IterateReport {
        stop_reason: match outcome.end {
            End::Stopped(s) => Some(s),
            _ => None,
        },
        branch: s.wt.branch.clone(),
        worktree: s.wt.path.display().to_string(),
        base_commit: s.wt.base_commit.clone(),
        snapshot_commit: s.snapshot.clone(),
        head_commit: head,
        max_iterations: s.max_iterations,
        fix_threshold: s.plan.fail_on,
        quality_critical: s.quality_critical,
        verify_command: s.verify.clone(),
        diff_command: format!("git diff {} {}", fixes_from(s), s.wt.branch),
        patch: patch.map(|p| p.display().to_string()),
        iterations: outcome.iterations,
    });
    report
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::iterate::IterateStop;

    #[test]
    fn every_loop_end_has_its_meta_ending() {
        assert_eq!(
            ending(&End::Stopped(IterateStop::NoProgress)),
            Ending::Complete {
                stop_reason: crate::store::RunStopReason::NoProgress
            }
        );
        assert_eq!(
            ending(&End::Aborted {
                reason: crate::store::AbortReason::IterateGitError,
                detail: "d".into()
            }),
            Ending::Aborted {
                reason: crate::store::AbortReason::IterateGitError,
                detail: "d".into()
            }
        );
        assert_eq!(ending(&End::Interrupted), Ending::Interrupted);
    }
}
