//! `arev run --background [--wait D]`: start the run detached (`process::spawn_detached`;
//! bad input still fails here, exit 2, before anything runs), then either say at once where
//! it is (exit 0), or wait up to D for it: its report in `--format` and its exit code, else
//! where it is and exit 4 (`exit_codes::STILL_RUNNING`).

use super::emit::render_stdout;
use crate::cli::RunArgs;
use crate::errors::ExpectedError;
use crate::exit_codes;
use crate::output;
use crate::process::{spawn_detached, wait_for, Spawned, Started, LOG_FILE};
use crate::store::load_report;
use crate::watch::render_started;
use std::process::ExitStatus;

pub(super) fn background_command(args: &RunArgs) -> Result<i32, ExpectedError> {
    // The detached run's stdin is not the caller's: it could only read an empty intent.
    if args.intent.as_deref() == Some(std::path::Path::new("-")) {
        return Err(ExpectedError::Usage(
            "--intent - cannot be read by a --background run (its stdin is not yours); \
             write the intent to a file and pass --intent FILE"
                .into(),
        ));
    }
    let spawned = spawn_detached().map_err(ExpectedError::os("cannot start the background run"))?;
    let mut run = match spawned {
        Spawned::Failed(code) => return Ok(code),
        Spawned::Started(s) => s,
    };
    // `--run-dir` must be named again to find the run (a configured base is found anyway).
    let base = args
        .run_dir
        .as_ref()
        .and_then(|_| run.run_dir.parent().map(std::path::Path::to_path_buf));
    let Some(wait) = args.wait else {
        output::report(&render_started(
            &run.run_id,
            &run.run_dir,
            None,
            base.as_deref(),
        ));
        return Ok(exit_codes::OK);
    };
    let ended = wait_for(&mut run.child, wait).map_err(ExpectedError::os(format!(
        "cannot wait for run {}",
        run.run_id
    )))?;
    match ended {
        Some(status) => Ok(finished(&run, status, args)),
        None => {
            output::report(&render_started(
                &run.run_id,
                &run.run_dir,
                Some(wait),
                base.as_deref(),
            ));
            Ok(exit_codes::STILL_RUNNING)
        }
    }
}

/// The run ended within the wait: what it logged (to stderr, as a run in the foreground
/// would have), its report on stdout, and its exit code.
fn finished(run: &Started, status: ExitStatus, args: &RunArgs) -> i32 {
    match crate::store::read_capped(
        &run.run_dir.join(LOG_FILE),
        crate::store::MAX_LOG_BYTES,
        "a run's log",
    ) {
        Ok(log) => {
            for line in String::from_utf8_lossy(&log).lines() {
                output::progress(line);
            }
        }
        Err(e) if e.is_not_found() => {}
        Err(e) => output::warn(&e.to_string()),
    }
    match load_report(&run.run_dir) {
        Ok(report) => {
            output::report(&render_stdout(&report, args.output.format));
            // No code: killed by a signal after its report, so no verdict to stand on.
            status.code().unwrap_or(exit_codes::ABORTED)
        }
        // No report (killed before it, so abandoned): no verdict.
        Err(e) => {
            output::error(&e.to_string());
            match status.code() {
                Some(c) if c != exit_codes::OK => c,
                _ => exit_codes::ABORTED,
            }
        }
    }
}
