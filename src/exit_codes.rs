//! Exit codes (docs/architecture.md §4.2, a contract): the one table every entry point
//! maps to.

/// Review completed; no confirmed finding at or above `--fail-on`.
pub const OK: i32 = 0;
/// Review completed; at least one confirmed finding at or above `--fail-on`.
pub const FINDINGS: i32 = 1;
/// Usage, config or target error; nothing was reviewed.
pub const USAGE: i32 = 2;
/// Review aborted: a gate fired, agents could not be dispatched, or the budget ran out
/// before a verdict (no verdict).
pub const ABORTED: i32 = 3;
/// `arev result` (and `arev run --background --wait`): the run is still going, no verdict yet.
pub const STILL_RUNNING: i32 = 4;
/// Interrupted by SIGINT (Ctrl-C); the run dir records `status: interrupted`.
pub const INTERRUPTED: i32 = 130;
/// Interrupted by SIGTERM (128 + 15); recorded like SIGINT.
pub const TERMINATED: i32 = 143;
/// Interrupted by SIGHUP (128 + 1); recorded like SIGINT.
pub const HANGUP: i32 = 129;

/// The table as printed in `--help` and docs/usage.md.
pub const TABLE: &str = "\
Exit codes:
  0    review completed; no confirmed finding at or above --fail-on (default high)
  1    review completed; at least one confirmed finding at or above --fail-on
  2    usage, config, target or setup error (e.g. an agent CLI that is not installed);
       nothing was reviewed
  3    review aborted: a gate fired, agents could not be dispatched, or the budget ran
       out before a verdict (no verdict)
  4    arev result (run --background --wait): the run is still going; no verdict yet
  130  interrupted (Ctrl-C/SIGINT); the run dir records status: interrupted
  143  interrupted by SIGTERM (129: by SIGHUP); recorded like Ctrl-C";
