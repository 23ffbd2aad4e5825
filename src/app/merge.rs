//! `arev merge <report.json>…`: combine the reports of `--shard i/n` runs, checking coverage.

use super::emit::{cwd, emit, trusted_fail_on, verdict, Emit};
use crate::cli::MergeArgs;
use crate::errors::ExpectedError;
use crate::report::{merge_reports, MergeInput, Report};

/// A file `arev merge` was given that does not parse as a report.
#[derive(Debug, thiserror::Error)]
#[error("not a valid arev report.json: {0}")]
struct NotAReport(#[source] serde_json::Error);

pub(crate) fn merge_command(args: &MergeArgs) -> Result<i32, ExpectedError> {
    let mut inputs = Vec::with_capacity(args.reports.len());
    for p in &args.reports {
        let text = crate::store::read_capped(p, crate::store::MAX_REPORT_BYTES, "a report")
            .map_err(|e| ExpectedError::bad_report(p, e.into_io()))?;
        let report: Report = serde_json::from_slice(&text)
            .map_err(|e| ExpectedError::bad_report(p, NotAReport(e)))?;
        inputs.push(MergeInput {
            name: p.display().to_string(),
            report,
        });
    }
    let merged = merge_reports(inputs)?;
    // `--fail-on`, else the strictest gate the shards recorded, else the trusted
    // configuration: never the working tree's repository config.
    let fail_on = match (args.fail_on, merged.fail_on) {
        (Some(f), _) => f.into(),
        (None, Some(f)) => f,
        (None, None) => trusted_fail_on(&cwd()?)?,
    };
    emit(&merged, &Emit::from(&args.output))?;
    Ok(verdict(&merged, fail_on))
}
