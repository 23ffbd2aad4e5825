//! `--baseline <REPORT.json|RUN_DIR|RUN_ID>` (docs/architecture.md §20): the earlier report a
//! run is compared with, found like `arev report` finds a run, and checked to hold a verdict.

use crate::errors::ExpectedError;
use crate::records::Report;
use crate::store::{find_run, load_report, load_report_file, RunStatus};
use std::path::Path;

/// The baseline report named by `arg`: a report.json file, a run directory, or a run id (or
/// unique prefix) under `runs_base`. A run without a verdict (aborted, interrupted) cannot
/// be a baseline.
pub fn load_baseline(arg: &str, cwd: &Path, runs_base: &Path) -> Result<Report, ExpectedError> {
    let bad = |why: String| ExpectedError::Usage(format!("--baseline {arg}: {why}"));
    let direct = cwd.join(arg);
    let report = if direct.is_file() {
        load_report_file(&direct).map_err(|e| bad(e.to_string()))?
    } else if direct.is_dir() {
        load_report(&direct).map_err(|e| bad(e.to_string()))?
    } else {
        let dir = find_run(arg, runs_base).map_err(|e| bad(e.to_string()))?;
        load_report(&dir).map_err(|e| bad(e.to_string()))?
    };
    match report.status {
        RunStatus::Complete | RunStatus::Empty => Ok(report),
        s => Err(bad(format!(
            "run {} is {}: it has no verdict to compare with",
            report.run_id,
            s.as_str()
        ))),
    }
}
