//! `arev run`: resolve, create the run dir, drive the rounds, finalise meta and the report.

use super::emit::{emit, verdict, Emit};
use crate::cli::{Format, RunArgs};
use crate::errors::ExpectedError;
use crate::output;
use crate::report::{build_report, render_markdown, render_sarif, BuildInput, Report};
use crate::resolve::{resolve_run, RunPlan};
use crate::round::{run_review, Progress, ReviewEnd, ReviewResult};
use crate::store::{
    add_git_exclude, create_run_dir, write_atomic, write_json_atomic, Meta, MetaTarget, RunDir,
    RunStatus,
};
use crate::target::{Mode, PinnedTarget, TargetKind, TargetType};
use sha2::{Digest, Sha256};

use std::time::Instant;
use tokio_util::sync::CancellationToken;

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// An allowed empty diff: a target with nothing in it, recorded as `status: empty`.
fn empty_target(plan: &RunPlan) -> PinnedTarget {
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
        measured_lines: 0,
        mode: Mode::Lightweight,
        target_type: TargetType::Code,
        brief: String::new(),
    }
}

pub(crate) fn run_command(args: &RunArgs) -> Result<i32, ExpectedError> {
    let started = Instant::now();
    let cwd = std::env::current_dir()
        .map_err(|e| ExpectedError::Usage(format!("cannot read the current directory: {e}")))?;
    let plan = resolve_run(args, &cwd)?;
    // An allowed empty diff, or a shard whose slice of the manifest has no files.
    let empty = plan.target.as_ref().is_none_or(|t| t.files.is_empty());
    if let (true, Some(sh)) = (empty, &plan.shard) {
        output::warn(&format!(
            "shard {}/{} has none of the manifest's {} file(s): nothing to review",
            sh.index,
            sh.count,
            sh.manifest_files.len()
        ));
    }
    let target = plan.target.clone().unwrap_or_else(|| empty_target(&plan));

    // The run dir: created only after everything was resolved; removed again if it cannot
    // be initialised, so a failure never leaves a half-written run dir.
    if let Some(git) = &plan.git_common_dir {
        if plan.runs_base.starts_with(plan.root.join(".arev")) {
            add_git_exclude(git).map_err(|e| ExpectedError::write(git.join("info/exclude"), e))?;
        }
    }
    let run = create_run_dir(&plan.runs_base, &plan.display)
        .map_err(|e| ExpectedError::write(&plan.runs_base, e))?;
    let mut meta = match init_run_dir(&plan, &target, &run, empty) {
        Ok(m) => m,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&run.path);
            return Err(e);
        }
    };

    let result = if empty {
        ReviewResult {
            end: ReviewEnd::Empty,
            rounds: vec![],
            judged: vec![],
            escalations: vec![],
            warnings: vec![],
        }
    } else {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| ExpectedError::Usage(format!("cannot start the runtime: {e}")))?;
        let cancel = CancellationToken::new();
        let progress = Progress::new(plan.outputs.quiet);
        rt.block_on(async {
            let c = cancel.clone();
            tokio::spawn(async move {
                if tokio::signal::ctrl_c().await.is_ok() {
                    crate::output::warn(
                        "interrupted: stopping every agent (SIGTERM, then SIGKILL)",
                    );
                    c.cancel();
                }
            });
            run_review(&plan, &target, &run, &mut meta, &cancel, progress).await
        })
    };

    // Finalise: re-pin, status, report, meta.
    if !empty {
        match crate::target::repin(&target) {
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
        result: &result,
        target: &target,
        meta: &meta,
        run_dir: &run.path,
        enthusiast_agent: &plan.agent_for(crate::findings::Role::Enthusiast).name,
        judge_agent: &plan.agent_for(crate::findings::Role::Judge).name,
        duration_ms: started.elapsed().as_millis() as u64,
    });
    report.shard = plan.shard.clone();
    let markdown = render_markdown(&report);
    write_json_atomic(&run.report_json(), &report)
        .map_err(|e| ExpectedError::write(run.report_json(), e))?;
    write_atomic(&run.report_md(), markdown.as_bytes())
        .map_err(|e| ExpectedError::write(run.report_md(), e))?;
    write_json_atomic(&run.meta(), &meta).map_err(|e| ExpectedError::write(run.meta(), e))?;

    let sarif_requested = plan.outputs.sarif.is_some() || plan.outputs.format == Format::Sarif;
    if sarif_requested {
        let p = run.path.join("report.sarif");
        write_atomic(&p, render_sarif(&report).as_bytes())
            .map_err(|e| ExpectedError::write(&p, e))?;
    }
    emit(
        &report,
        &Emit {
            format: plan.outputs.format,
            out: plan.outputs.out.as_deref(),
            sarif: plan.outputs.sarif.as_deref(),
            markdown: plan.outputs.markdown.as_deref(),
        },
    )?;
    if let ReviewEnd::Aborted(a) = &result.end {
        output::error(&format!(
            "review aborted ({}): {} — run dir {}",
            a.reason(),
            a.detail(),
            run.path.display()
        ));
    }
    Ok(exit_code(&report, &plan))
}

/// SPEC §2: aborted → 3, interrupted → 130, findings at/above --fail-on → 1, else 0.
fn exit_code(report: &Report, plan: &RunPlan) -> i32 {
    verdict(report, plan.fail_on)
}

fn init_run_dir(
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
    };
    write_json_atomic(&run.meta(), &meta).map_err(|e| ExpectedError::write(run.meta(), e))?;
    Ok(meta)
}
