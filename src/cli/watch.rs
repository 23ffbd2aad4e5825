//! Arguments of the commands that look at a run from outside while it runs or after it ended
//! (`arev status`, `arev result`, `arev cancel`; docs/architecture.md §4.4). Parsing only.

use super::output::{FailOnArg, OutputArgs};
use clap::Args;
use std::path::PathBuf;
use std::time::Duration;

/// A duration flag's value that is not a humantime duration; `example` shows good ones.
#[derive(Debug, thiserror::Error)]
#[error("{source} (e.g. {example})")]
pub struct DurationArgError {
    #[source]
    pub source: humantime::DurationError,
    pub example: &'static str,
}

/// A humantime duration, or the error that shows `example`.
pub(super) fn parse_duration(s: &str, example: &'static str) -> Result<Duration, DurationArgError> {
    humantime::parse_duration(s).map_err(|source| DurationArgError { source, example })
}

/// `--wait` values: a humantime duration (`100s`, `5m`, `1h 30m`).
pub fn parse_wait(s: &str) -> Result<Duration, DurationArgError> {
    parse_duration(s, "100s, 5m")
}

pub(super) const STATUS_HELP: &str = "\
Prints one screen: the status (running, complete, aborted, interrupted, empty, or abandoned
when the run's arev process is gone without finishing), the target, where a live run stands
(round, tier, the agents running now), counts, elapsed time, and the command to run next.
RUN is a run directory or a run id (a unique prefix is enough); the newest run by default.
Exit code: 0; 2 when there is no such run.";

pub(super) const RESULT_HELP: &str = "\
The report of a finished run, in any format, with the run's verdict as exit code:
  0/1  the review completed; 1 when a confirmed finding is at or above --fail-on
       (default: the gate the run recorded; never the working tree's arev.toml)
  3    the review aborted, or the run was abandoned (its arev process is gone): no verdict
  4    the run is still going: its status is printed instead of the report
  130  the run was interrupted (Ctrl-C, SIGTERM, `arev cancel`)
  2    no such run, or an unreadable report
RUN is a run directory or a run id (a unique prefix is enough); the newest run by default.";

pub(super) const CANCEL_HELP: &str = "\
Sends SIGTERM to the run's arev process (after checking by pid and start time that it is
that process), which stops every agent (SIGTERM, then SIGKILL after the grace) and records
status interrupted; waits until the process is gone. A run that is not running is left as
it is. RUN is a run directory or a run id (a unique prefix is enough); the newest run by
default. Exit code: 0 when the run is not running any more (cancelled now, or already
finished); 2 when there is no such run or it could not be stopped.";

/// Which run: an explicit one, or the newest under the runs base.
#[derive(Debug, Clone, Args)]
pub struct RunSelector {
    /// A run directory or a run id (or unique prefix); default: the newest run.
    #[arg(value_name = "RUN")]
    pub run: Option<String>,
    /// Runs base to look RUN up in (default: <repo>/.arev/runs).
    #[arg(long, value_name = "DIR")]
    pub run_dir: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    #[command(flatten)]
    pub select: RunSelector,
    /// One JSON object (schemas/status.schema.json) instead of the screen.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ResultArgs {
    #[command(flatten)]
    pub select: RunSelector,
    #[command(flatten)]
    pub output: OutputArgs,
    /// Exit 1 when a confirmed finding is at or above this severity (default: the gate the
    /// run recorded; for a run that recorded none, your config or AREV_FAIL_ON, high).
    #[arg(long, value_enum)]
    pub fail_on: Option<FailOnArg>,
}

#[derive(Debug, Args)]
pub struct CancelArgs {
    #[command(flatten)]
    pub select: RunSelector,
}

#[cfg(test)]
mod tests {
    use crate::cli::{Cli, Command};
    use clap::Parser;

    #[test]
    fn watch_commands_parse() {
        let c = Cli::try_parse_from(["arev", "status"]).unwrap();
        let Command::Status(s) = c.command else {
            panic!()
        };
        assert_eq!(s.select.run, None);
        let c = Cli::try_parse_from([
            "arev",
            "result",
            "2026",
            "--format",
            "json",
            "--fail-on",
            "low",
        ])
        .unwrap();
        let Command::RunResult(r) = c.command else {
            panic!()
        };
        assert_eq!(r.select.run.as_deref(), Some("2026"));
        assert!(r.fail_on.is_some());
        let c = Cli::try_parse_from(["arev", "cancel", "x", "--run-dir", "d"]).unwrap();
        let Command::Cancel(k) = c.command else {
            panic!()
        };
        assert_eq!(k.select.run_dir.as_deref(), Some(std::path::Path::new("d")));
    }

    #[test]
    fn wait_needs_background_and_a_duration() {
        let c =
            Cli::try_parse_from(["arev", "run", "diff", "--background", "--wait", "100s"]).unwrap();
        let Command::Run(r) = c.command else { panic!() };
        assert!(r.background);
        assert_eq!(r.wait, Some(std::time::Duration::from_secs(100)));
        assert!(Cli::try_parse_from(["arev", "run", "diff", "--wait", "10s"]).is_err());
        // A slash command's own flags first, the user's after: the user's count.
        let c = Cli::try_parse_from([
            "arev",
            "run",
            "--background",
            "--wait",
            "100s",
            "--format",
            "markdown",
            "diff",
            "--wait",
            "25m",
            "--format",
            "json",
            "--background",
        ])
        .unwrap();
        let Command::Run(r) = c.command else { panic!() };
        assert_eq!(r.wait, Some(std::time::Duration::from_secs(1500)));
        assert_eq!(r.output.format, crate::cli::Format::Json);
        assert!(
            Cli::try_parse_from(["arev", "run", "diff", "--background", "--wait", "soon"]).is_err()
        );
    }
}
