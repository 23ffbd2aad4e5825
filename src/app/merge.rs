//! `arev merge <report.json>…`: combine the reports of `--shard i/n` runs, checking coverage.

use super::emit::{cwd, emit, repo_config, verdict, Emit};
use crate::cli::MergeArgs;
use crate::errors::ExpectedError;
use crate::report::{merge_reports, MergeInput, Report};

pub(crate) fn merge_command(args: &MergeArgs) -> Result<i32, ExpectedError> {
    let mut inputs = Vec::with_capacity(args.reports.len());
    for p in &args.reports {
        let bad = |message: String| ExpectedError::BadReport {
            path: p.clone(),
            message,
        };
        let text = std::fs::read_to_string(p).map_err(|e| bad(e.to_string()))?;
        let report: Report = serde_json::from_str(&text)
            .map_err(|e| bad(format!("not a valid arev report.json: {e}")))?;
        inputs.push(MergeInput {
            name: p.display().to_string(),
            report,
        });
    }
    let merged = merge_reports(inputs).map_err(|e| ExpectedError::Usage(format!("merge: {e}")))?;
    let fail_on = match args.fail_on {
        Some(f) => f.into(),
        None => repo_config(&cwd()?)?.1.review.fail_on,
    };
    emit(&merged, &Emit::from(&args.output))?;
    Ok(verdict(&merged, fail_on))
}
