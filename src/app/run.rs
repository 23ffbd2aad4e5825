//! `arev run`: resolve, create the run dir, review, emit the report, exit with its verdict.
//! With `--iterate` the resolved plan goes to `app::iterate`.

use super::review::{emit, exit_code, runtime};
use crate::cli::RunArgs;
use crate::errors::ExpectedError;
use crate::output;
use crate::resolve::resolve_run;
use crate::review::{begin, empty_target, finish_with, prepare, replay};
use crate::round::{run_review, Progress, ReviewEnd, ReviewResult};
use crate::store::{add_git_exclude, create_run_dir};
use std::path::PathBuf;
use std::time::Instant;

pub(crate) fn run_command(args: &RunArgs) -> Result<i32, ExpectedError> {
    let started = Instant::now();
    let cwd = std::env::current_dir()
        .map_err(|e| ExpectedError::Usage(format!("cannot read the current directory: {e}")))?;
    let plan = resolve_run(args, &cwd)?;
    if args.iterate && plan.target.as_ref().is_some_and(|t| !t.files.is_empty()) {
        return super::iterate::iterate_command(args, &plan, &cwd, started);
    }
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
    for w in plan
        .memory
        .suppressions
        .warnings
        .iter()
        .chain(&plan.memory.warnings)
    {
        output::warn(w);
    }
    let target = plan.target.clone().unwrap_or_else(|| empty_target(&plan));
    // --incremental: only the changed part is reviewed; then the verdict cache.
    let prepared = prepare(&plan, target, empty);

    // The run dir: created only after everything was resolved; removed again if it cannot
    // be initialised, so a failure never leaves a half-written run dir.
    if let Some(git) = &plan.git_common_dir {
        if plan.runs_base.starts_with(plan.root.join(".arev")) {
            add_git_exclude(git).map_err(|e| ExpectedError::write(git.join("info/exclude"), e))?;
        }
    }
    let run = create_run_dir(&plan.runs_base, &plan.display)
        .map_err(|e| ExpectedError::write(&plan.runs_base, e))?;
    let mut rec = begin(&plan, prepared.target(), run, empty)?;
    let progress = Progress::new(plan.outputs.quiet);

    let (finished, end) = if let Some(hit) = prepared.hit() {
        progress.line(&format!(
            "verdict reused from run {} (verdict cache; --no-cache reviews again)",
            hit.run_id
        ));
        (replay(&plan, &prepared, rec, hit, started)?, None)
    } else {
        let result = if empty {
            ReviewResult::ended(ReviewEnd::Empty)
        } else if let Some(stop) = prepared.nothing_changed() {
            progress.line("nothing changed since the baseline: its verdict is carried over");
            ReviewResult::ended(ReviewEnd::Stopped(stop))
        } else {
            let (rt, cancel) = runtime()?;
            rt.block_on(run_review(
                &plan,
                prepared.target(),
                &mut rec,
                &cancel,
                progress,
            ))
        };
        let finished = finish_with(&plan, &prepared, rec, &result, started)?;
        (finished, Some(result.end))
    };

    let run_dir = PathBuf::from(&finished.report.run_dir);
    let report = finished.report;
    emit(&report, &plan)?;
    if let Some(ReviewEnd::Aborted(a)) = &end {
        output::error(&format!(
            "review aborted ({}): {} — run dir {}",
            a.reason(),
            a.detail(),
            run_dir.display()
        ));
    }
    Ok(exit_code(&report, &plan))
}
