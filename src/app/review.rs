//! One review's lifecycle, shared by `arev run` and every iteration of `arev run --iterate`:
//! initialise the run dir, finalise it (re-pin, status, report.json/report.md, meta.json),
//! render and emit the report, and map it to an exit code.

use super::emit::{verdict, Emit};
use crate::cli::Format;
use crate::errors::ExpectedError;
use crate::output;
use crate::report::{build_report, render_markdown, render_sarif, BuildInput, Report};
use crate::resolve::RunPlan;
use crate::round::{ReviewEnd, ReviewResult};
use crate::store::{write_atomic, write_json_atomic, Meta, MetaTarget, RunDir, RunStatus};
use crate::target::{Mode, PinnedTarget, TargetKind, TargetType};
use sha2::{Digest, Sha256};
use std::time::Instant;
use tokio_util::sync::CancellationToken;

pub(super) fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// An allowed empty diff: a target with nothing in it, recorded as `status: empty`.
pub(super) fn empty_target(plan: &RunPlan) -> PinnedTarget {
    PinnedTarget {
        kind: TargetKind::Diff,
        display: plan.display.clone(),
        root: plan.root.clone(),
        in_repo: plan.git_common_dir.is_some(),
        file_path: None,
        artefact: Some(crate::target::Artefact {
            name: "diff.patch",
            bytes: vec![],
        }),
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

/// A multi-threaded runtime and a cancellation token that Ctrl-C fires.
pub(super) fn runtime() -> Result<(tokio::runtime::Runtime, CancellationToken), ExpectedError> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| ExpectedError::Usage(format!("cannot start the runtime: {e}")))?;
    let cancel = CancellationToken::new();
    let c = cancel.clone();
    rt.spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            output::warn("interrupted: stopping every agent (SIGTERM, then SIGKILL)");
            c.cancel();
        }
    });
    Ok((rt, cancel))
}

/// Re-pin the target, set the final status, build and write report.json, report.md and
/// meta.json. Returns the report.
pub(super) fn finalize(
    plan: &RunPlan,
    target: &PinnedTarget,
    run: &RunDir,
    meta: &mut Meta,
    result: &ReviewResult,
    started: Instant,
) -> Result<Report, ExpectedError> {
    if result.end != ReviewEnd::Empty {
        match crate::target::repin(target) {
            Ok(sha) => {
                meta.target.drift = sha != target.sha256;
                meta.target.sha256_final = Some(sha);
            }
            Err(e) => {
                meta.target.drift = true;
                output::warn(&format!("cannot re-pin the target: {e}"));
            }
        }
        if meta.target.drift {
            output::warn("the target changed during the review (sha256 drift); findings refer to the pinned version");
        }
    }
    meta.status = match &result.end {
        ReviewEnd::Stopped(_) => RunStatus::Complete,
        ReviewEnd::Aborted(_) => RunStatus::Aborted,
        ReviewEnd::Interrupted => RunStatus::Interrupted,
        ReviewEnd::Empty => RunStatus::Empty,
    };
    match &result.end {
        ReviewEnd::Stopped(s) => meta.stop_reason = Some(s.as_str().to_string()),
        ReviewEnd::Aborted(a) => {
            meta.abort_reason = Some(a.reason());
            meta.abort_detail = Some(a.detail());
        }
        ReviewEnd::Interrupted | ReviewEnd::Empty => {}
    }
    meta.finished_at = Some(now());
    let mut report = build_report(&BuildInput {
        result,
        target,
        meta,
        run_dir: &run.path,
        enthusiast_agent: &plan.agent_for(crate::findings::Role::Enthusiast).name,
        judge_agent: &plan.agent_for(crate::findings::Role::Judge).name,
        duration_ms: started.elapsed().as_millis() as u64,
    });
    report.shard = plan.shard.clone();
    write_report(run, &report)?;
    if plan.outputs.sarif.is_some() || plan.outputs.format == Format::Sarif {
        let p = run.path.join("report.sarif");
        write_atomic(&p, render_sarif(&report).as_bytes())
            .map_err(|e| ExpectedError::write(&p, e))?;
    }
    write_json_atomic(&run.meta(), &meta).map_err(|e| ExpectedError::write(run.meta(), e))?;
    Ok(report)
}

/// report.json and report.md.
pub(super) fn write_report(run: &RunDir, report: &Report) -> Result<(), ExpectedError> {
    write_json_atomic(&run.report_json(), report)
        .map_err(|e| ExpectedError::write(run.report_json(), e))?;
    write_atomic(&run.report_md(), render_markdown(report).as_bytes())
        .map_err(|e| ExpectedError::write(run.report_md(), e))
}

/// The report on stdout in `--format`, and into `--out` / `--sarif` / `--markdown` when asked.
pub(super) fn emit(report: &Report, plan: &RunPlan) -> Result<(), ExpectedError> {
    super::emit::emit(
        report,
        &Emit {
            format: plan.outputs.format,
            out: plan.outputs.out.as_deref(),
            sarif: plan.outputs.sarif.as_deref(),
            markdown: plan.outputs.markdown.as_deref(),
        },
    )
}

/// SPEC §2: aborted → 3, interrupted → 130, findings at/above --fail-on → 1, else 0.
pub(super) fn exit_code(report: &Report, plan: &RunPlan) -> i32 {
    verdict(report, plan.fail_on)
}

/// Write the target artefact and brief.md, and meta.json with status `running` (or
/// `empty`). Returns the meta to keep current.
pub(super) fn init_run_dir(
    plan: &RunPlan,
    target: &PinnedTarget,
    run: &RunDir,
    empty: bool,
) -> Result<Meta, ExpectedError> {
    let tdir = run.target_dir();
    std::fs::create_dir_all(&tdir).map_err(|e| ExpectedError::write(&tdir, e))?;
    let tag_path = match (&target.file_path, &target.artefact) {
        (Some(p), _) => p.clone(),
        (None, Some(a)) => {
            let p = tdir.join(a.name);
            write_atomic(&p, &a.bytes).map_err(|e| ExpectedError::write(&p, e))?;
            p
        }
        (None, None) => tdir,
    };
    let mut brief = format!(
        "# Context brief\n\nTarget: `{}` ({}, {} file(s), mode {}, type {:?})\n\n",
        target.display,
        target.kind.as_str(),
        target.files.len(),
        target.mode.as_str(),
        target.target_type
    );
    brief.push_str(&target.brief);
    write_atomic(&run.brief(), brief.as_bytes())
        .map_err(|e| ExpectedError::write(run.brief(), e))?;
    let meta = Meta {
        run_id: run.id.to_string(),
        status: if empty {
            RunStatus::Empty
        } else {
            RunStatus::Running
        },
        stop_reason: None,
        abort_reason: None,
        abort_detail: None,
        target: MetaTarget {
            kind: target.kind,
            display: target.display.clone(),
            path: tag_path.display().to_string(),
            sha256: target.sha256.clone(),
            sha256_final: None,
            drift: false,
            files: target.files.len(),
            skipped: target.skipped.len(),
        },
        mode: target.mode,
        target_type: target.target_type,
        rounds_planned: plan.max_rounds,
        rounds_completed: 0,
        passes: plan.passes,
        model_start: plan.tier_start,
        model_current: plan.tier_start,
        model_history: vec![],
        arev_version: env!("CARGO_PKG_VERSION").to_string(),
        config_digest: plan.config_digest.clone(),
        started_at: now(),
        finished_at: None,
        iterate: None,
    };
    write_json_atomic(&run.meta(), &meta).map_err(|e| ExpectedError::write(run.meta(), e))?;
    Ok(meta)
}
