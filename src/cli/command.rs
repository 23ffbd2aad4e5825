//! `arev` and its subcommands (docs/architecture.md §4, a contract), the arguments of the
//! small ones (`schema`, `runs`, `init`), and `arev run ARGS…` parsed as the command line
//! would be (`RunArgs::parse_run`). Parsing only; `resolve` does the I/O.

use super::eval::{EvalArgs, EVAL_HELP};
use super::hook::{HookArgs, InstallArgs, HOOK_HELP};
use super::publish::{PublishArgs, PUBLISH_HELP};
use super::report::{MergeArgs, ReportArgs, SuppressArgs, MERGE_HELP, REPORT_HELP, SUPPRESS_HELP};
use super::run::{RunArgs, RUN_HELP};
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "arev",
    version,
    about = "Adversarial multi-agent review: Enthusiast passes hunt defects, an Adversary maps \
             what is provably safe, a Judge rules — round after round, behind hard gates.",
    after_help = crate::exit_codes::TABLE
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

// Parsed once per process: the size of `RunArgs` does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Review a file, several paths, a glob, or `diff` (the working tree against HEAD).
    #[command(after_help = RUN_HELP)]
    Run(RunArgs),
    /// Print the JSON Schemas of arev's wire types, or write them into DIR.
    Schema(SchemaArgs),
    /// Re-render a finished run's report (any format) without re-running it.
    #[command(after_help = REPORT_HELP)]
    Report(ReportArgs),
    /// List runs, newest first, with status and stop reason.
    Runs(RunsArgs),
    /// Publish a finished review to a pull request (GitHub) or merge request (GitLab).
    #[command(after_help = PUBLISH_HELP)]
    Publish(PublishArgs),
    /// Combine the report.json files of `--shard` runs into one report.
    #[command(after_help = MERGE_HELP)]
    Merge(MergeArgs),
    /// Claude Code hooks: hook JSON on stdin, hook JSON on stdout, always exit 0.
    #[command(after_help = HOOK_HELP)]
    Hook(HookArgs),
    /// Wire the slash command, subagents and hooks into Claude Code's own configuration.
    Install(InstallArgs),
    /// Write a commented arev.toml at the repository root (never overwrites one).
    Init(InitArgs),
    /// Check that a review can run here: git, the config, each agent CLI (found, version,
    /// credentials); one line per problem with its fix.
    #[command(after_help = super::setup::DOCTOR_HELP)]
    Doctor(super::DoctorArgs),
    // Runs seen from outside (docs/architecture.md §4.4): cli/watch.rs.
    /// Where a run stands (the newest when RUN is omitted): status, round, agents, counts.
    #[command(after_help = super::watch::STATUS_HELP)]
    Status(super::StatusArgs),
    /// The report of a finished run, exit code its verdict; exit 4 while it still runs.
    #[command(name = "result", after_help = super::watch::RESULT_HELP)]
    RunResult(super::ResultArgs),
    /// Stop a running run cleanly (its agents too); it is recorded `interrupted`.
    #[command(after_help = super::watch::CANCEL_HELP)]
    Cancel(super::CancelArgs),
    /// Measure review quality on your own history: mine fix commits into cases, review the
    /// buggy revisions, score recall, noise and cost; compare two panels.
    #[command(after_help = EVAL_HELP)]
    Eval(EvalArgs),
    /// Suppress a finding of a finished run: append it, with the reason, to
    /// .arev/suppressions.toml.
    #[command(after_help = SUPPRESS_HELP)]
    Suppress(SuppressArgs),
}

#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// Write one `<name>.schema.json` per wire type into DIR instead of printing.
    #[arg(long, value_name = "DIR")]
    pub write: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct RunsArgs {
    /// One JSON array (schemas/runs.schema.json) instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Runs base to list (default: <repo>/.arev/runs).
    #[arg(long, value_name = "DIR")]
    pub run_dir: Option<PathBuf>,
    /// Delete the run dirs that ended at least DURATION ago (e.g. 30d, 12h): only arev's own
    /// (a readable meta.json) and only finished or abandoned ones, never a running run.
    /// Prints each run removed.
    #[arg(long, value_name = "DURATION", value_parser = parse_age)]
    pub prune_older_than: Option<std::time::Duration>,
    /// With --prune-older-than: list what would be deleted, delete nothing.
    #[arg(long, requires = "prune_older_than")]
    pub dry_run: bool,
}

/// `--prune-older-than`: a duration such as 30d or 12h.
fn parse_age(s: &str) -> Result<std::time::Duration, super::watch::DurationArgError> {
    super::watch::parse_duration(s, "30d, 12h")
}

#[derive(Debug, Args)]
pub struct InitArgs {
    /// Primary language of the agents' prose (asked on a TTY when not given).
    #[arg(long, value_name = "LANG")]
    pub language: Option<String>,
}

impl RunArgs {
    /// The arguments of `arev run ARGS…` (`args` without the program name and `run`), parsed
    /// as the command line would be: for a process that starts `arev run` and needs the plan
    /// that run will make (the Stop hook).
    pub fn parse_run(
        args: impl IntoIterator<Item = std::ffi::OsString>,
    ) -> Result<Self, clap::Error> {
        let argv = ["arev".into(), "run".into()].into_iter().chain(args);
        match Cli::try_parse_from(argv)?.command {
            Command::Run(a) => Ok(a),
            _ => Err(clap::Error::new(clap::error::ErrorKind::InvalidSubcommand)),
        }
    }
}
