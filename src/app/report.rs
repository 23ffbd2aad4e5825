//! `arev report <RUN_DIR|RUN_ID|REPORT.json>`: re-render a finished run's report in any format.

use super::emit::{cwd, emit, named_report, verdict, Emit};
use crate::cli::ReportArgs;
use crate::errors::ExpectedError;
use crate::exit_codes;

pub(crate) fn report_command(args: &ReportArgs) -> Result<i32, ExpectedError> {
    let cwd = cwd()?;
    let report = named_report(&cwd, &args.run, args.run_dir.as_deref())?;
    emit(&report, &Emit::from(&args.output))?;
    Ok(match args.fail_on {
        Some(f) => verdict(&report, f.into()),
        None => exit_codes::OK,
    })
}
