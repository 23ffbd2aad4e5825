//! Arguments of the commands on finished runs: `arev report`, `arev merge` and `arev
//! suppress`.

use super::output::{FailOnArg, OutputArgs};
use clap::Args;
use std::path::PathBuf;

pub(super) const REPORT_HELP: &str = "\
Examples:
  arev report 20261121-180000-a1b2c3-src-lib-rs --format sarif --out arev.sarif
  arev report .arev/runs/20261121-180000-a1b2c3-src-lib-rs --format markdown
  arev report arev.json --format sarif --out arev.sarif   a REPORT.json (--out, arev merge)

RUN_ID is looked up under the runs base (<repo>/.arev/runs, or --run-dir); a unique prefix
of an id is enough. Exit code: 0 once rendered; with --fail-on, the run's verdict instead
(0 / 1 findings at or above it / 3 aborted / 130 interrupted). A run that is not finished,
or an unreadable report.json, exits 2.";

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A run directory, a run id (or unique prefix) under the runs base, or a report.json
    /// file (e.g. from `--out` or `arev merge`).
    #[arg(value_name = "RUN_DIR|RUN_ID|REPORT.json")]
    pub run: String,
    #[command(flatten)]
    pub output: OutputArgs,
    /// Exit with the run's verdict: 1 when a confirmed finding is at or above this severity.
    #[arg(long, value_enum)]
    pub fail_on: Option<FailOnArg>,
    /// Runs base to look RUN_ID up in (default: <repo>/.arev/runs).
    #[arg(long, value_name = "DIR")]
    pub run_dir: Option<PathBuf>,
}

pub(super) const MERGE_HELP: &str = "\
Example (a CI matrix of 4 jobs, each `arev run 'src/**/*.rs' --shard i/4 --out shard-i.json`):
  arev merge shard-*.json --sarif arev.sarif --out arev.json --fail-on high

Refuses (exit 2) when the reports are not shards of the same manifest (sha256 and file
list), or when a manifest file is covered by no shard or by two. Otherwise exits like
`arev run`: 3 if a shard aborted, 1 if a confirmed finding is at or above --fail-on.";

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The shards' report.json files.
    #[arg(required = true, value_name = "REPORT")]
    pub reports: Vec<PathBuf>,
    #[command(flatten)]
    pub output: OutputArgs,
    /// Exit 1 when a confirmed finding is at or above this severity (default: the strictest
    /// gate the shards recorded; without one, your config or AREV_FAIL_ON, high).
    #[arg(long, value_enum)]
    pub fail_on: Option<FailOnArg>,
}

pub(super) const SUPPRESS_HELP: &str = "\
Example:
  arev suppress 20261121-180000-a1b2c3-src-lib-rs F2 --reason \"validated by parse() above\"
  arev suppress --from-pr 42      the PR's dismissals (GITHUB_TOKEN, GITHUB_REPOSITORY), to commit

FINDING is a finding id of the report (`F2`; `2:F2` for round 2 when ids repeat across
rounds) or its fingerprint. The entry matches the finding by fingerprint, so it survives
unrelated edits that move the line; later reviews list the finding under `suppressed` and
never count it. In source, a comment `arev-ignore[<category>]: <reason>` on the flagged
line or the line above does the same. arev keeps .arev/ out of `git status`: commit the
file with `git add -f .arev/suppressions.toml`.";

#[derive(Debug, Args)]
pub struct SuppressArgs {
    /// A run directory, a run id (or unique prefix), or a report.json file.
    #[arg(value_name = "RUN|REPORT.json", required_unless_present = "from_pr")]
    pub run: Option<String>,
    /// The finding: its id (`F2`, or `2:F2` with the round) or its fingerprint.
    #[arg(value_name = "FINDING_ID", required_unless_present = "from_pr")]
    pub finding: Option<String>,
    /// Why the finding does not need a fix (mandatory, except with --from-pr: the
    /// dismissal's own reason).
    #[arg(long, value_name = "TEXT", required_unless_present = "from_pr")]
    pub reason: Option<String>,
    /// The last day the suppression applies (YYYY-MM-DD); after it the finding counts again.
    #[arg(long, value_name = "YYYY-MM-DD")]
    pub expires: Option<String>,
    /// Runs base to look RUN up in (default: <repo>/.arev/runs).
    #[arg(long, value_name = "DIR")]
    pub run_dir: Option<PathBuf>,
    /// Export the dismissals on pull request / merge request N (maintainers' `arev:`
    /// replies, 👎, resolved threads, read from the forge) as suppressions, with who and why.
    #[arg(long, value_name = "N", conflicts_with_all = ["run", "finding"],
          value_parser = clap::value_parser!(u64).range(1..))]
    pub from_pr: Option<u64>,
    /// With --from-pr: the forge (default: gitlab when CI_PROJECT_ID is set and
    /// GITHUB_REPOSITORY is not, else github).
    #[arg(long, value_enum, requires = "from_pr")]
    pub forge: Option<super::ForgeArg>,
    /// With --from-pr: a trusted config file (`[publish] dismiss_by`).
    #[arg(long, value_name = "FILE", requires = "from_pr")]
    pub config: Option<PathBuf>,
}
