//! `arev run`: resolve, create the run dir, review, emit the report, exit with its verdict
//! (recorded in meta.json last). With `--iterate` the resolved plan goes to `app::iterate`;
//! with `--background` this process starts the detached run (`app::background`), which is
//! this same code in a process of its own (`--detached`).

use super::review::{emit, exit_code, record_exit, runtime};
use crate::cli::RunArgs;
use crate::errors::ExpectedError;
use crate::output;
use crate::resolve::{resolve_run, RunPlan};
use crate::review::{begin, empty_target, finish_with, prepare, replay};
use crate::round::{Progress, ReviewEnd, ReviewResult};
use crate::store::{add_git_exclude, create_run_dir, Finished};
use std::path::Path;
use std::time::Instant;

pub(crate) fn run_command(args: &RunArgs) -> Result<i32, ExpectedError> {
    if args.detached {
        crate::process::become_detached();
    } else if args.background {
        return super::background::background_command(args);
    }
    let started = Instant::now();
    let cwd =
        std::env::current_dir().map_err(ExpectedError::os("cannot read the current directory"))?;
    let plan = resolve_run(args, &cwd)?;
    if args.iterate && plan.target.as_ref().is_some_and(|t| !t.files.is_empty()) {
        crate::preflight::check_plan(&plan)?;
        // `--prove`: the sandbox starts here (or exit 2 naming the fix), before anything.
        crate::preflight::check_prove(&plan)?;
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
    // The signal handlers first: a SIGTERM right after meta.json says `running` must still
    // end in `interrupted`, never leave the run `running`. Only when agents will run: a
    // cache hit or an incremental review with nothing changed dispatches none.
    let dispatches = !empty && prepared.hit().is_none() && prepared.nothing_changed().is_none();
    // The agent CLIs are there (docs/contracts.md §20.4): a missing one is exit 2, before any run dir.
    if dispatches {
        crate::preflight::check_plan(&plan)?;
        // `--prove`: the sandbox starts here (or exit 2 naming the fix), before anything.
        crate::preflight::check_prove(&plan)?;
    }
    let runtime = if dispatches { Some(runtime()?) } else { None };
    let run = create_run_dir(&plan.runs_base, &plan.display)
        .map_err(|e| ExpectedError::write(&plan.runs_base, e))?;
    let mut rec = begin(&plan, prepared.target(), run, empty)?;
    // A detached run: the caller may go now (meta.json is written, signals are handled).
    crate::process::announce(rec.run().id.as_str(), &rec.run().path);
    let progress = Progress::new(plan.outputs.quiet);
    let run_dir = rec.run().path.clone();

    let (finished, result) = if let Some(hit) = prepared.hit() {
        progress.line(&format!(
            "verdict reused from run {} (verdict cache; --no-cache reviews again)",
            hit.run_id
        ));
        (replay(&plan, &prepared, rec, hit, started)?, None)
    } else {
        let result = if let Some((rt, cancel)) = runtime {
            rt.block_on(crate::review::rounds_and_proofs(
                &plan,
                prepared.target(),
                &mut rec,
                &cancel,
                progress,
            ))
        } else if let Some(stop) = prepared.nothing_changed() {
            progress.line("nothing changed since the baseline: its verdict is carried over");
            ReviewResult::ended(ReviewEnd::Stopped(stop))
        } else {
            ReviewResult::ended(ReviewEnd::Empty)
        };
        let finished = finish_with(&plan, &prepared, rec, &result, started)?;
        (finished, Some(result))
    };

    let end = result.as_ref().map(|r| &r.end);
    let code = deliver(args, &plan, &finished, end, &run_dir);
    record_exit(&run_dir, finished.meta, &code);
    code
}

/// The report on stdout and into the files asked for, `--publish`, and the exit code.
/// `end`: how the review ended (None: a verdict-cache hit).
fn deliver(
    args: &RunArgs,
    plan: &RunPlan,
    finished: &Finished,
    end: Option<&ReviewEnd>,
    run_dir: &Path,
) -> Result<i32, ExpectedError> {
    let report = &finished.report;
    emit(report, plan, Some(&finished.written))?;
    if let Some(ReviewEnd::Aborted(a)) = end {
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
        args,
        report,
        run_dir,
        &plan.root,
        code,
        (plan.fail_on, plan.settings.publish.dismiss_by),
    ))
}
