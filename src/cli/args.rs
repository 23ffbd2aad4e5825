//! `arev` argument structs (SPEC §2, a contract). Parsing only; `resolve` does the I/O.

use crate::config::FailOn;
use crate::findings::Tier;
use clap::{Args, Parser, Subcommand, ValueEnum};
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

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Review a file, several paths, a glob, or `diff` (the working tree against HEAD).
    #[command(after_help = RUN_HELP)]
    Run(RunArgs),
    /// Print the JSON Schemas of arev's wire types, or write them into DIR.
    Schema(SchemaArgs),
    /// Write a commented arev.toml at the repository root (never overwrites one).
    Init(InitArgs),
}

const RUN_HELP: &str = "\
Examples:
  arev run diff                         review uncommitted work (untracked files included)
  arev run diff --base origin/main      review everything since the merge-base with main
  arev run src/lib.rs --format json     one file, JSON report on stdout
  arev run 'src/**/*.rs' --out r.json   a glob; report also written to r.json

Exit codes:
  0    review completed; no confirmed finding at or above --fail-on (default high)
  1    review completed; at least one confirmed finding at or above --fail-on
  2    usage, config or target error; nothing was reviewed
  3    review aborted: a gate fired or agents could not be dispatched (no verdict)
  130  interrupted (Ctrl-C); the run dir records status: interrupted";

/// Output formats of the report on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Human summary.
    Text,
    /// report.json (schemas/report.schema.json).
    Json,
    /// Markdown, as for a PR comment.
    Markdown,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// `diff`, one file, several paths, or a glob such as 'src/**/*.rs'.
    #[arg(required = true, value_name = "TARGET")]
    pub targets: Vec<String>,
    /// With `diff`: review merge-base(REV, HEAD)..working tree.
    #[arg(long, value_name = "REV")]
    pub base: Option<String>,
    /// Model tier of the first round; escalation never goes below it.
    #[arg(long, value_enum)]
    pub model: Option<TierArg>,
    /// Enthusiast passes per round (default: FULL 2, LIGHTWEIGHT 1).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=16))]
    pub passes: Option<u32>,
    /// Round ceiling (default: FULL 10, LIGHTWEIGHT 3).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=50))]
    pub max_rounds: Option<u32>,
    /// Stop with `budget-exhausted` once the run has cost this many USD.
    #[arg(long, value_name = "USD")]
    pub budget_usd: Option<f64>,
    /// Stop with `budget-exhausted` once the run has used this many tokens.
    #[arg(long, value_name = "N")]
    pub budget_tokens: Option<u64>,
    /// Use this configured agent for every role.
    #[arg(long, value_name = "NAME")]
    pub agent: Option<String>,
    /// Report format on stdout.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Also write the report (in --format) to FILE.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Also write the Markdown report to FILE.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// Exit 1 when a confirmed finding is at or above this severity.
    #[arg(long, value_enum)]
    pub fail_on: Option<FailOnArg>,
    /// Base directory for the run dir (default: <repo>/.arev/runs).
    #[arg(long, value_name = "DIR")]
    pub run_dir: Option<PathBuf>,
    /// Read this config file on top of the user and repo files.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// An empty diff exits 0 with status `empty` instead of exit 2.
    #[arg(long)]
    pub allow_empty: bool,
    /// No progress on stderr.
    #[arg(short, long, conflicts_with = "verbose")]
    pub quiet: bool,
    /// More logs on stderr (-vv for debug).
    #[arg(short, long, action = clap::ArgAction::Count)]
    pub verbose: u8,
}

#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// Write one `<name>.schema.json` per wire type into DIR instead of printing.
    #[arg(long, value_name = "DIR")]
    pub write: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct InitArgs {
    /// Primary language of the agents' prose (asked on a TTY when not given).
    #[arg(long, value_name = "LANG")]
    pub language: Option<String>,
}

/// `--model` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TierArg {
    Haiku,
    Sonnet,
    Opus,
}

impl From<TierArg> for Tier {
    fn from(t: TierArg) -> Tier {
        match t {
            TierArg::Haiku => Tier::Haiku,
            TierArg::Sonnet => Tier::Sonnet,
            TierArg::Opus => Tier::Opus,
        }
    }
}

/// `--fail-on` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FailOnArg {
    Critical,
    High,
    Medium,
    Low,
    Never,
}

impl From<FailOnArg> for FailOn {
    fn from(f: FailOnArg) -> FailOn {
        match f {
            FailOnArg::Critical => FailOn::Critical,
            FailOnArg::High => FailOn::High,
            FailOnArg::Medium => FailOn::Medium,
            FailOnArg::Low => FailOn::Low,
            FailOnArg::Never => FailOn::Never,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn parses_run() {
        let c = Cli::try_parse_from([
            "arev",
            "run",
            "src/**/*.rs",
            "a.rs",
            "--model",
            "sonnet",
            "--passes",
            "3",
            "--fail-on",
            "never",
            "--format",
            "json",
        ])
        .unwrap();
        let Command::Run(r) = c.command else { panic!() };
        assert_eq!(r.targets, ["src/**/*.rs", "a.rs"]);
        assert_eq!(r.model, Some(TierArg::Sonnet));
        assert_eq!(r.format, Format::Json);
        assert!(Cli::try_parse_from(["arev", "run"]).is_err());
        assert!(Cli::try_parse_from(["arev", "run", "x", "--passes", "0"]).is_err());
    }
}
