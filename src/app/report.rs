//! `arev report <RUN_DIR|RUN_ID>`: re-render a finished run's report.json in any format.

use super::emit::{cwd, emit, runs_base, verdict, Emit};
use crate::cli::ReportArgs;
use crate::errors::ExpectedError;
use crate::exit_codes;
use crate::store::{find_run, load_report};

pub(crate) fn report_command(args: &ReportArgs) -> Result<i32, ExpectedError> {
    let cwd = cwd()?;
    let direct = cwd.join(&args.run);
    let dir = if direct.is_dir() {
        direct
    } else {
        let base = runs_base(&cwd, args.run_dir.as_deref())?;
        find_run(&args.run, &base).map_err(|e| ExpectedError::Usage(e.to_string()))?
    };
    let report = load_report(&dir).map_err(|e| ExpectedError::Usage(e.to_string()))?;
    emit(
        &report,
        &Emit {
            format: args.format,
            out: args.out.as_deref(),
            sarif: args.sarif.as_deref(),
            markdown: args.markdown.as_deref(),
        },
    )?;
    Ok(match args.fail_on {
        Some(f) => verdict(&report, f.into()),
        None => exit_codes::OK,
    })
}
