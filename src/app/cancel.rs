//! `arev cancel [RUN]`: stop a running run cleanly (the newest when RUN is omitted); a run
//! that is not running is left as it is.

use super::status::selected;
use crate::cli::CancelArgs;
use crate::errors::ExpectedError;
use crate::exit_codes;
use crate::output;
use crate::store::RunView;
use crate::watch::{cancel, Cancelled};
use std::time::Duration;

/// How long the run's process may take to stop its agents (TERM, then KILL after the
/// grace) and record `interrupted`.
const STOP_WITHIN: Duration = Duration::from_secs(60);

fn status(v: &RunView) -> &'static str {
    v.state.map_or("unreadable", |s| s.as_str())
}

pub(crate) fn cancel_command(args: &CancelArgs) -> Result<i32, ExpectedError> {
    let (dir, _) = selected(&args.select)?;
    let id = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    match cancel(&dir, STOP_WITHIN)? {
        Cancelled::Stopped(v) => output::report(&format!(
            "arev: cancelled {id}: its agents are stopped; status {}",
            status(&v)
        )),
        Cancelled::NotRunning(v) => output::report(&format!(
            "arev: {id} is not running (status {}); nothing to cancel",
            status(&v)
        )),
    }
    Ok(exit_codes::OK)
}
