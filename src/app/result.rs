//! `arev result [RUN]`: the report of a finished run (the newest when RUN is omitted) with
//! its verdict as exit code, by `--fail-on`, else the gate the run recorded; a run
//! still going prints its status and exits 4, an abandoned one exits 3 (no verdict).

use super::emit::{cwd, emit, trusted_fail_on, verdict, Emit};
use super::status::{screen, selected};
use crate::cli::ResultArgs;
use crate::errors::ExpectedError;
use crate::exit_codes;
use crate::output;
use crate::store::{load_report, read_run, RunState};

pub(crate) fn result_command(args: &ResultArgs) -> Result<i32, ExpectedError> {
    let (dir, base) = selected(&args.select)?;
    let view = read_run(&dir);
    match view.state {
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
    let report = load_report(&dir)?;
    emit(&report, &Emit::from(&args.output))?;
    // `--fail-on`, else the gate the run recorded, else the trusted configuration: never
    // the working tree's repository config, which the reviewed change controls.
    let recorded = view.meta.ok().and_then(|m| m.fail_on).or(report.fail_on);
    let fail_on = match (args.fail_on, recorded) {
        (Some(f), _) => f.into(),
        (None, Some(f)) => f,
        (None, None) => trusted_fail_on(&cwd()?)?,
    };
    Ok(verdict(&report, fail_on))
}
