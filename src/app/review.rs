//! What `arev run` and `arev run --iterate` share at the edge: the runtime whose token a
//! shutdown signal fires, the report on stdout and into the requested files, and the exit
//! code. The review itself is `crate::review`; its records are `store::Recorder`'s.

use super::emit::{verdict, Emit};
use crate::errors::ExpectedError;
use crate::output;
use crate::report::Report;
use crate::resolve::RunPlan;
use crate::store::{record_exit_code, Meta, Written};
use std::path::Path;
use tokio_util::sync::CancellationToken;

/// A runtime on this thread and a cancellation token that SIGINT, SIGTERM or SIGHUP fires
/// (the exit code follows the signal: `process::exit_code_after`). arev becomes a child
/// subreaper, so what agents leave behind comes back to it and is killed.
///
/// One thread is enough: arev waits on its agents, which run as processes of their own, and
/// its own work between their answers takes milliseconds. Worker threads cost more than they
/// gave (their start, and a cross-thread wake-up for every pipe read: a 3 × 1,000-finding
/// round took 0.96× the CPU on one thread, 30 alternated runs), and every agent is now
/// spawned from the main thread, which outlives it (the parent-death signal follows the
/// spawning thread).
pub(super) fn runtime() -> Result<(tokio::runtime::Runtime, CancellationToken), ExpectedError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(ExpectedError::os("cannot start the runtime"))?;
    let cancel = CancellationToken::new();
    let c = cancel.clone();
    if let Err(e) = crate::process::become_subreaper() {
        output::warn(&format!("cannot become a child subreaper: {e}"));
    }
    let signal = {
        let _runtime = rt.enter();
        crate::process::shutdown_signal()
    }
    .map_err(ExpectedError::os("cannot listen for signals"))?;
    rt.spawn(async move {
        if let Some(s) = signal.await {
            // First: a warning to a closed stderr must not keep the agents running.
            c.cancel();
            output::warn(&format!(
                "interrupted ({}): stopping every agent (SIGTERM, then SIGKILL)",
                s.name()
            ));
        }
    });
    Ok((rt, cancel))
}

/// The report on stdout in `--format`, and into `--out` / `--sarif` / `--markdown` when asked.
pub(super) fn emit(
    report: &Report,
    plan: &RunPlan,
    written: Option<&Written>,
) -> Result<(), ExpectedError> {
    super::emit::emit(
        report,
        &Emit {
            format: plan.outputs.format,
            out: plan.outputs.out.as_deref(),
            sarif: plan.outputs.sarif.as_deref(),
            markdown: plan.outputs.markdown.as_deref(),
            written,
        },
    )
}

/// docs/architecture.md §4.2: aborted → 3, interrupted → 130, findings at/above
/// --fail-on → 1, else 0.
pub(super) fn exit_code(report: &Report, plan: &RunPlan) -> i32 {
    verdict(report, plan.fail_on)
}

/// Record the exit code this process is about to end with (`r`, the signal's code after a
/// shutdown signal) in the run's final meta.json; a failed write is a warning.
pub(super) fn record_exit(run_dir: &Path, mut meta: Meta, r: &Result<i32, ExpectedError>) {
    let code = match r {
        Ok(c) => crate::process::exit_code_after(*c),
        Err(e) => e.exit_code(),
    };
    if let Err(e) = record_exit_code(run_dir, &mut meta, code) {
        output::warn(&format!("cannot record the exit code: {e}"));
    }
}
