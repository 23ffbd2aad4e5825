//! `arev run`: resolve, create the run dir, review, emit the report, exit with its verdict
//! (recorded in meta.json last). With `--iterate` the resolved plan goes to `app::iterate`;
//! with `--background` this process starts the detached run (`app::background`), which is
//! this same code in a process of its own (`--detached`).

use super::review::{emit, exit_code, record_exit, runtime};
use crate::cli::RunArgs;
use crate::errors::ExpectedError;
use crate::output;
use crate::report::Report;
use crate::resolve::{resolve_run, RunPlan};
use crate::review::{begin, empty_target, finish};
use crate::round::{run_review, Progress, ReviewEnd, ReviewResult};
use crate::store::{add_git_exclude, create_run_dir};
use std::path::Path;
use std::time::Instant;

pub(crate) fn run_command(args: &RunArgs) -> Result<i32, ExpectedError> {
    if args.detached {
        crate::process::become_detached();
    } else if args.background {
        return super::background::background_command(args);
    }
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
    let target = plan.target.clone().unwrap_or_else(|| empty_target(&plan));

    // The run dir: created only after everything was resolved; removed again if it cannot
    // be initialised, so a failure never leaves a half-written run dir.
    if let Some(git) = &plan.git_common_dir {
        if plan.runs_base.starts_with(plan.root.join(".arev")) {
            add_git_exclude(git).map_err(|e| ExpectedError::write(git.join("info/exclude"), e))?;
        }
    }
    // The signal handlers first: a SIGTERM right after meta.json says `running` must still
    // end in `interrupted`, never leave the run `running`.
    let runtime = if empty { None } else { Some(runtime()?) };
    let run = create_run_dir(&plan.runs_base, &plan.display)
        .map_err(|e| ExpectedError::write(&plan.runs_base, e))?;
    let mut rec = begin(&plan, &target, run, empty)?;
    // A detached run: the caller may go now (meta.json is written, signals are handled).
    crate::process::announce(rec.run().id.as_str(), &rec.run().path);

    let result = if let Some((rt, cancel)) = runtime {
        let progress = Progress::new(plan.outputs.quiet);
        rt.block_on(run_review(&plan, &target, &mut rec, &cancel, progress))
    } else {
        ReviewResult::ended(ReviewEnd::Empty)
    };

    let run_dir = rec.run().path.clone();
    let finished = finish(&plan, &target, rec, &result, started)?;
    let code = deliver(args, &plan, &finished.report, &result, &run_dir);
    record_exit(&run_dir, finished.meta, &code);
    code
}

/// The report on stdout and into the files asked for, `--publish`, and the exit code.
fn deliver(
    args: &RunArgs,
    plan: &RunPlan,
    report: &Report,
    result: &ReviewResult,
    run_dir: &Path,
) -> Result<i32, ExpectedError> {
    emit(report, plan)?;
    if let ReviewEnd::Aborted(a) = &result.end {
        output::error(&format!(
            "review aborted ({}): {} — run dir {}",
            a.reason(),
            a.detail(),
            run_dir.display()
        ));
    }
    // `--publish`: after the report is written, whatever the verdict (app/publish.rs).
    let code = exit_code(report, plan);
    Ok(super::publish::after_run(
        args, report, run_dir, &plan.root, code,
    ))
}
