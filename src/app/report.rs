//! `arev report <RUN_DIR|RUN_ID|REPORT.json>`: re-render a finished run's report in any format.

use super::emit::{cwd, emit, runs_base, verdict, Emit};
use crate::cli::ReportArgs;
use crate::errors::ExpectedError;
use crate::exit_codes;
use crate::store::{find_run, load_report, load_report_file};

pub(crate) fn report_command(args: &ReportArgs) -> Result<i32, ExpectedError> {
    let cwd = cwd()?;
    let direct = cwd.join(&args.run);
    let report = if direct.is_file() {
        // A report.json copied out of its run dir (e.g. `--out arev.json`, `arev merge`).
        load_report_file(&direct).map_err(|e| ExpectedError::Usage(e.to_string()))?
    } else {
        let dir = if direct.is_dir() {
            direct
        } else {
            let base = runs_base(&cwd, args.run_dir.as_deref())?;
            find_run(&args.run, &base).map_err(|e| ExpectedError::Usage(e.to_string()))?
        };
        load_report(&dir).map_err(|e| ExpectedError::Usage(e.to_string()))?
    };
    emit(
        &report,
        &Emit {
            format: args.output.format,
            out: args.output.out.as_deref(),
            sarif: args.output.sarif.as_deref(),
            markdown: args.output.markdown.as_deref(),
        },
    )?;
    Ok(match args.fail_on {
        Some(f) => verdict(&report, f.into()),
        None => exit_codes::OK,
    })
}
