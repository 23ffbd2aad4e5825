//! `arev result [RUN]`: the report of a finished run (the newest when RUN is omitted) with
//! its verdict as exit code, like `arev report --fail-on` with the configured default; a run
//! still going prints its status and exits 4, an abandoned one exits 3 (no verdict).

use super::emit::{cwd, emit, repo_config, verdict, Emit};
use super::status::{screen, selected};
use crate::cli::ResultArgs;
use crate::errors::ExpectedError;
use crate::exit_codes;
use crate::output;
use crate::store::{load_report, read_run, RunState};

pub(crate) fn result_command(args: &ResultArgs) -> Result<i32, ExpectedError> {
    let (dir, base) = selected(&args.select)?;
    match read_run(&dir).state {
        Some(RunState::Running) => {
            output::report(&screen(&dir, base.as_deref()));
            return Ok(exit_codes::STILL_RUNNING);
        }
        Some(RunState::Abandoned) => {
            output::report(&screen(&dir, base.as_deref()));
            output::error(&format!(
                "{}: abandoned — its arev process is gone and it never finished, so there is no verdict",
                dir.display()
            ));
            return Ok(exit_codes::ABORTED);
        }
        _ => {}
    }
    let report = load_report(&dir).map_err(|e| ExpectedError::Usage(e.to_string()))?;
    emit(&report, &Emit::from(&args.output))?;
    let fail_on = match args.fail_on {
        Some(f) => f.into(),
        None => repo_config(&cwd()?)?.1.review.fail_on,
    };
    Ok(verdict(&report, fail_on))
}
