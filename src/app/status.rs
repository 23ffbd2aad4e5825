//! `arev status [RUN]`: one screen on where a run stands (the newest when RUN is omitted).

use super::emit::{cwd, runs_base};
use crate::cli::{RunSelector, StatusArgs};
use crate::errors::ExpectedError;
use crate::exit_codes;
use crate::output;
use crate::store::{load_report_file, read_run};
use crate::watch::{live_status, render_status, select_run};
use std::path::{Path, PathBuf};

/// The run `select` names (or the newest), and the runs base the next commands must name
/// (when it is not the one found by default).
pub(super) fn selected(select: &RunSelector) -> Result<(PathBuf, Option<PathBuf>), ExpectedError> {
    let cwd = cwd()?;
    let base = runs_base(&cwd, select.run_dir.as_deref())?;
    let dir = select_run(select.run.as_deref(), &base)?;
    let parent = dir.parent().map(Path::to_path_buf);
    let named = match parent {
        Some(p) if select.run_dir.is_some() || p != base => Some(p),
        _ => None,
    };
    Ok((dir, named))
}

/// The status screen of the run in `dir`.
pub(super) fn screen(dir: &Path, base: Option<&Path>) -> String {
    let view = read_run(dir);
    let confirmed: Option<Vec<_>> = load_report_file(&dir.join("report.json"))
        .ok()
        .map(|r| r.confirmed.iter().map(|f| f.severity).collect());
    let screen = render_status(&view, confirmed.as_deref(), chrono::Utc::now(), base);
    // Everything on it that came from the run dir, made inert for the terminal.
    output::inert(&screen).into_owned()
}

pub(crate) fn status_command(args: &StatusArgs) -> Result<i32, ExpectedError> {
    let (dir, base) = selected(&args.select)?;
    if args.json {
        let v = live_status(&read_run(&dir), chrono::Utc::now());
        output::report_json(&v).map_err(|e| ExpectedError::bad_run(&dir, e))?;
        return Ok(exit_codes::OK);
    }
    output::report(&screen(&dir, base.as_deref()));
    Ok(exit_codes::OK)
}
