//! `arev runs [--json]`: the runs under the runs base, newest first, with status and reason.

use super::emit::{cwd, runs_base};
use crate::cli::RunsArgs;
use crate::errors::ExpectedError;
use crate::output;
use crate::store::{list_runs, RunSummary};
use std::fmt::Write;

fn reason(r: &RunSummary) -> String {
    r.stop_reason
        .map(|s| s.to_string())
        .or_else(|| r.abort_reason.map(|a| a.to_string()))
        .or_else(|| r.error.clone())
        .unwrap_or_else(|| "-".into())
}

/// The table printed by `arev runs`.
fn table(runs: &[RunSummary]) -> String {
    let rows: Vec<[String; 5]> = runs
        .iter()
        .map(|r| {
            let mut target = r.target.clone().unwrap_or_else(|| "-".into());
            if let Some(s) = &r.shard {
                let _ = write!(target, " [shard {s}]");
            }
            [
                r.run_id.clone(),
                r.status.map_or("unreadable", |s| s.as_str()).to_string(),
                reason(r),
                r.confirmed.map_or("-".into(), |c| c.to_string()),
                target,
            ]
        })
        .collect();
    let head = ["RUN ID", "STATUS", "REASON", "CONFIRMED", "TARGET"];
    let mut width = head.map(str::len);
    for row in &rows {
        for (w, cell) in width.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut s = String::new();
    for row in std::iter::once(head.map(String::from)).chain(rows) {
        let line: Vec<String> = row
            .iter()
            .zip(width)
            .enumerate()
            .map(|(i, (c, w))| {
                if i == 4 {
                    c.clone()
                } else {
                    format!("{c:<w$}")
                }
            })
            .collect();
        let _ = writeln!(s, "{}", line.join("  ").trim_end());
    }
    // Run ids, targets and errors come from run dirs: no raw control character out.
    output::inert(&s).into_owned()
}

pub(crate) fn runs_command(args: &RunsArgs) -> Result<(), ExpectedError> {
    let cwd = cwd()?;
    let base = runs_base(&cwd, args.run_dir.as_deref())?;
    let runs = list_runs(&base).map_err(|e| ExpectedError::BadRun {
        path: base.clone(),
        message: e.to_string(),
    })?;
    if args.json {
        output::report(&serde_json::to_string_pretty(&runs).unwrap_or_default());
    } else if runs.is_empty() {
        output::progress(&format!("arev: no runs under {}", base.display()));
    } else {
        output::report(&table(&runs));
    }
    Ok(())
}
