//! `arev publish` arguments, and the forges `--publish` and `arev publish` name (converted
//! to `crate::publish::Forge` by the app layer).

use clap::{Args, ValueEnum};
use std::path::PathBuf;

pub(super) const PUBLISH_HELP: &str = "\
Examples:
  arev publish github .arev/runs/20261121-180000-a1b2c3-diff         in a pull_request workflow
  arev publish github arev-run --pr 42                                the fork case (workflow_run)
  arev publish gitlab 20261121-180000-a1b2c3 --dry-run                print the requests only

One sticky summary comment (the Markdown report, edited in place on every push), one review
with an inline comment per confirmed finding on a line of the PR diff (a committable
suggestion for an exact one-line replacement), never the same finding twice, and earlier
comments whose finding is gone edited to say it was fixed.

GitHub: GITHUB_TOKEN, GITHUB_REPOSITORY, GITHUB_API_URL (default https://api.github.com), the
PR from --pr or the pull_request event (GITHUB_EVENT_PATH). GitLab: GITLAB_TOKEN,
CI_PROJECT_ID, CI_API_V4_URL (default https://gitlab.com/api/v4), the MR from --pr or
CI_MERGE_REQUEST_IID.

A run dir keeps what it sends in publish/<forge>.json (retried as is by a later `arev
publish`) and the outcome in publish/<forge>.result.json. --dry-run makes the reads, prints
every request as a JSON line {method, path, body} on stdout and writes nothing.
Replies on arev's threads are read on every publish: a reply starting with `arev:
false-positive <reason>`, `arev: wont-fix <reason>` or `arev: ack`, a 👎 on arev's comment,
or resolving its thread, by someone with write access ([publish] dismiss_by), dismisses the
finding: it is not posted again and does not gate while its code is unchanged. A fixed
finding's thread gets one reply (\"Fixed in <sha>\") and is resolved.

Exit code: 0 published (with --fail-on: 1 when a finding at or above it remains, dismissed
ones excepted); 2 a missing setting or a failed publish (the payload is kept).";

#[derive(Debug, Args)]
pub struct PublishArgs {
    /// Where to publish.
    #[arg(value_enum)]
    pub forge: ForgeArg,
    /// A run directory, a run id (or unique prefix) under the runs base, or a report.json
    /// file.
    #[arg(value_name = "RUN_DIR|RUN_ID|REPORT.json")]
    pub run: String,
    /// The pull request number (GitHub) / merge request iid (GitLab), instead of the CI
    /// event's or the kept payload's.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub pr: Option<u64>,
    /// Make the reads, print every request as a JSON line {method, path, body}; write
    /// nothing (neither to the forge nor to the run dir).
    #[arg(long)]
    pub dry_run: bool,
    /// Runs base to look RUN_ID up in (default: <repo>/.arev/runs).
    #[arg(long, value_name = "DIR")]
    pub run_dir: Option<PathBuf>,
    /// Exit 1 when a confirmed finding at or above this severity remains once published
    /// (findings dismissed on the pull request do not count). Default: exit 0 once published.
    #[arg(long, value_enum)]
    pub fail_on: Option<super::FailOnArg>,
    /// A trusted config file (e.g. `[publish] dismiss_by`), layered over your own.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

/// `--publish` / `arev publish` forges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ForgeArg {
    /// GitHub (or GitHub Enterprise Server, with GITHUB_API_URL).
    Github,
    /// GitLab (gitlab.com or self-managed, with CI_API_V4_URL).
    Gitlab,
}
