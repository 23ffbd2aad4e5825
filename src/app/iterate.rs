//! `arev run --iterate`: set up the worktree, run the review → fix loop (`crate::iterate`),
//! emit the iterate run's report, say where the fixes are, and exit with the verdict.

use super::review::{emit, exit_code, record_exit, runtime};
use crate::cli::RunArgs;
use crate::errors::ExpectedError;
use crate::exit_codes;
use crate::iterate::{
    finish, fixes_from, prepare, run_loop, shell_quote, End, IterateStop, Options, Setup,
};
use crate::output;
use crate::resolve::RunPlan;
use std::path::Path;
use std::time::Instant;

pub(super) fn iterate_command(
    args: &RunArgs,
    plan: &RunPlan,
    cwd: &Path,
    started: Instant,
) -> Result<i32, ExpectedError> {
    let opts = Options {
        targets: args.targets.clone(),
        base: args.base.clone(),
        max_iterations: args.max_iterations,
        quality_critical: args.quality_critical,
        verify: args.verify.clone(),
    };
    let (setup, mut rec) = prepare(plan, cwd, opts)?;
    let (rt, cancel) = runtime()?;
    // A detached run: the caller may go now (meta.json is written, signals are handled).
    crate::process::announce(rec.run().id.as_str(), &rec.run().path);
    let outcome = rt.block_on(run_loop(&setup, &mut rec, &cancel));
    let end = outcome.end.clone();
    let iterations = outcome.iterations.len();
    let run_dir = rec.run().path.clone();
    let finished = finish(&setup, rec, outcome, started)?;
    let code = deliver(plan, &setup, &finished.report, &end, iterations, &run_dir);
    record_exit(&run_dir, finished.meta, &code);
    code
}

/// The report on stdout and into the files asked for, where the fixes are, and the exit code.
fn deliver(
    plan: &RunPlan,
    setup: &Setup<'_>,
    report: &crate::report::Report,
    end: &End,
    iterations: usize,
    run_dir: &Path,
) -> Result<i32, ExpectedError> {
    emit(report, plan, None)?;
    match end {
        End::Stopped(s) => output::note(&format!(
            "iterate stopped: {s} after {iterations} iteration(s); nothing was merged"
        )),
        End::Aborted { reason, detail } => output::error(&format!(
            "iterate aborted ({reason}): {detail} — run dir {}; the worktree is kept",
            run_dir.display()
        )),
        End::Interrupted => output::warn("iterate interrupted; the worktree is kept"),
    }
    for line in setup.wt.instructions(&plan.root, &fixes_from(setup)) {
        output::note(&line);
    }
    if let Some(patch) = report.iterate.as_ref().and_then(|i| i.patch.as_deref()) {
        output::note(&format!("the fixes alone, as a patch: {patch}"));
        output::note(&format!(
            "apply them to your working tree: git -C {} apply {}",
            shell_quote(&plan.root.display().to_string()),
            shell_quote(patch)
        ));
    }
    Ok(match end {
        End::Aborted { .. } => exit_codes::ABORTED,
        End::Interrupted => exit_codes::INTERRUPTED,
        End::Stopped(IterateStop::VerifyFailed | IterateStop::FixUnproven) => exit_codes::FINDINGS,
        End::Stopped(_) => exit_code(report, plan),
    })
}
