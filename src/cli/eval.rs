//! `arev eval` arguments: mine fix commits into cases, review and score them, compare two
//! evaluations.

use clap::{Args, Subcommand, ValueEnum};
use std::path::PathBuf;

pub(super) const EVAL_HELP: &str = "\
Example:
  arev eval mine --since v1.0 --out eval/cases        one case per small fix commit
  arev eval run eval/cases --out eval/opus            review each buggy revision, score
  arev eval run eval/cases --config cheap.toml --out eval/cheap
  arev eval compare eval/opus/eval.json eval/cheap/eval.json
  arev eval map eval/cases                           the context map's fix-site recall

A case is found when a confirmed finding lies within --tolerance lines (default 3) of a line
the fix removed or changed (same file). docs/eval.md (\"Measuring review quality\") explains
the numbers.";

#[derive(Debug, Args)]
pub struct EvalArgs {
    #[command(subcommand)]
    pub command: EvalCommand,
}

/// `arev eval` subcommands.
#[derive(Debug, Subcommand)]
pub enum EvalCommand {
    /// Write one case per fix commit of HEAD's history into DIR.
    #[command(after_help = EVAL_MINE_HELP)]
    Mine(EvalMineArgs),
    /// Review every case of CASES_DIR at its buggy revision and score the panel.
    #[command(after_help = EVAL_RUN_HELP)]
    Run(EvalRunArgs),
    /// Put two evaluations (eval.json) side by side, per case and in total.
    Compare(EvalCompareArgs),
    /// The context map's fix-site recall on CASES_DIR: the share of the other files each
    /// real fix changed that the map of the change that introduced the defect names (no
    /// model, no review).
    Map(EvalMapArgs),
    /// Review the offline code-review benchmark's pull requests (withmartian/
    /// code-review-benchmark) and write its candidates file; `--score` computes P/R/F1.
    #[command(after_help = EVAL_BENCH_HELP)]
    Bench(EvalBenchArgs),
    /// What became of arev's findings on pull requests, as the forge reports them: fixed,
    /// dismissed (by kind), not raised again, open — per panel, category and severity.
    #[command(after_help = EVAL_DISPOSITIONS_HELP)]
    Dispositions(EvalDispositionsArgs),
}

#[derive(Debug, Args)]
pub struct EvalDispositionsArgs {
    /// The forge (its token and repository from the environment, as for `arev publish`).
    #[arg(value_enum)]
    pub forge: super::ForgeArg,
    /// Count these pull requests / merge requests (at most 100) instead of listing the
    /// repository's.
    #[arg(long = "pr", value_name = "N", num_args = 1..,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub prs: Vec<u64>,
    /// Without --pr: count the newest N pull requests the forge lists (at most 200).
    #[arg(long, value_name = "N", default_value_t = 30, conflicts_with = "prs",
          value_parser = clap::value_parser!(u64).range(1..=200))]
    pub limit: u64,
    /// Without --pr: which pull requests to list.
    #[arg(
        long,
        value_enum,
        value_name = "STATE",
        default_value = "all",
        conflicts_with = "prs"
    )]
    pub state: PrStateArg,
    /// One JSON array of rows instead of a table.
    #[arg(long)]
    pub json: bool,
    /// A trusted config file (`[publish] dismiss_by`).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

/// `--state` of `arev eval dispositions`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PrStateArg {
    All,
    Open,
    /// Closed, merged included.
    Closed,
    Merged,
}

const EVAL_DISPOSITIONS_HELP: &str = "\
Example:
  arev eval dispositions github                      the newest 30 pull requests
  arev eval dispositions github --state merged --limit 100 --json
  arev eval dispositions gitlab --pr 12 --pr 14

Counts arev's own inline comments: fixed (arev marked the thread fixed), dismissed (by kind:
false-positive, wont-fix, ack, thumbs-down, resolved — by people allowed to dismiss), not
raised again, open. The panel is the configured agents that raised a finding, from the
comment's hidden marker; comments from an arev that did not write it count under `unknown`.
docs/ci-and-publishing.md explains each.";

const EVAL_MINE_HELP: &str = "\
A commit is mined when its subject (first line) matches --grep (default: the words fix, bug,
crash, leak, overflow, CVE and their forms, case-insensitive), the subject names no chore
(typo, links, docs, lint, tests, ci, version, dependency, build, revert), it has exactly one
parent, and its change to code files (test files left out) is small: at most --max-files
files and --max-lines lines added + removed. The targets are the code files whose code it
modified, as they were in its parent: a change to comments, docs or blank lines only (per
language), to imports or version strings only, to generated, vendored or shell-completion
files does not count. The expected locations are the lines it removed or changed (a pure
insertion marks the lines around the insertion point). Every rejected commit is listed with
its reason. Review the cases before relying on them: a commit that says \"fix\" may not fix
a defect.";

const EVAL_RUN_HELP: &str = "\
Each case is reviewed by `arev run <targets> --format json` in a detached checkout of its
revision (a temporary directory, removed afterwards; your tree, index and branches are never
touched), with your configuration (user file, the repository's current arev.toml, --config).
Results go to OUT/cases/<id>.json as each case finishes, OUT/eval.json and OUT/eval.md after
each; a case already scored with the same case and configuration digest is kept, not re-run.

Exit codes:
  0    every case has a result (found, missed or aborted)
  2    bad cases, configuration or arguments; nothing was reviewed
  3    at least one case could not be reviewed (failed; re-run next time)
  130  interrupted (Ctrl-C): finished cases keep their results; run again to resume";

/// `arev eval --format` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EvalFormat {
    /// A plain table.
    Text,
    /// A Markdown table.
    Markdown,
    /// JSON (schemas/eval-report.schema.json or eval-compare.schema.json).
    Json,
}

#[derive(Debug, Args)]
pub struct EvalMineArgs {
    /// Only commits not reachable from REV (REV..HEAD).
    #[arg(long, value_name = "REV")]
    pub since: Option<String>,
    /// Fix commits are those whose subject matches REGEX (case-insensitive).
    #[arg(long, visible_alias = "subject-pattern", value_name = "REGEX")]
    pub grep: Option<String>,
    /// Also reject commits whose subject matches REGEX (case-insensitive).
    #[arg(long, value_name = "REGEX")]
    pub reject_pattern: Option<String>,
    /// Keep commits whose subject names these chore kinds (all kinds when none is given).
    #[arg(long, value_name = "KIND", num_args = 0.., value_delimiter = ',')]
    pub allow_chores: Option<Vec<String>>,
    /// At most N cases, newest first.
    #[arg(long, value_name = "N", default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub max: u32,
    /// Only files matching these globs count (e.g. 'src/**').
    #[arg(long, value_name = "GLOB", num_args = 1..)]
    pub paths: Vec<String>,
    /// Skip commits changing more code files than this.
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub max_files: u32,
    /// Skip commits adding + removing more lines of code than this.
    #[arg(long, value_name = "N", default_value_t = 60, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub max_lines: u32,
    /// Directory the case files are written to (created if missing).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

#[derive(Debug, Args)]
pub struct EvalRunArgs {
    /// Directory of case files (`<id>.json`).
    #[arg(value_name = "CASES_DIR")]
    pub cases: PathBuf,
    /// Read this config file on top of the user and repo files (the panel under test).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Review up to N cases at once.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub jobs: u32,
    /// Results directory (default: <repo>/.arev/eval/<first 12 of the configuration digest>).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// A finding within N lines of an expected location finds the case.
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u32).range(0..=1000))]
    pub tolerance: u32,
    /// Format of the table on stdout.
    #[arg(long, value_enum, default_value_t = EvalFormat::Text)]
    pub format: EvalFormat,
    /// No per-case progress on stderr.
    #[arg(short, long)]
    pub quiet: bool,
    /// Let reviews reuse verdicts from the verdict cache (a cached case is counted at the
    /// cost of the review that produced its verdict). Default: every case is reviewed afresh.
    #[arg(long)]
    pub use_cache: bool,
    /// Each review proves its confirmed findings (`arev run --prove`, docs/prove.md); every
    /// reproducer that failed at the buggy revision runs again at the case's fix commit:
    /// failing before and passing after is `confirmed_by_fix` (docs/eval.md "Proofs").
    #[arg(long)]
    pub prove: bool,
    /// With --prove: where reproducers run (`bwrap` or `none`), as `arev run --prove-sandbox`.
    #[arg(long, value_enum, value_name = "MODE", requires = "prove")]
    pub prove_sandbox: Option<super::ProveSandboxArg>,
}

#[derive(Debug, Args)]
pub struct EvalMapArgs {
    /// Directory of case files (`<id>.json`), as `arev eval mine` writes them.
    #[arg(value_name = "CASES_DIR")]
    pub cases: PathBuf,
}

#[derive(Debug, Args)]
pub struct EvalCompareArgs {
    /// The first evaluation's eval.json (panel A).
    #[arg(value_name = "A")]
    pub a: PathBuf,
    /// The second evaluation's eval.json (panel B).
    #[arg(value_name = "B")]
    pub b: PathBuf,
    /// Rescore both at this tolerance (required when they were scored at different ones).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(0..=1000))]
    pub tolerance: Option<u32>,
    /// Format on stdout.
    #[arg(long, value_enum, default_value_t = EvalFormat::Text)]
    pub format: EvalFormat,
}

const EVAL_BENCH_HELP: &str = "\
Example:
  arev eval bench --golden ~/code-review-benchmark/offline/golden_comments --out bench/opus
  arev eval bench --golden G --out bench/opus --score --labels G/../results/pr_labels.json
  arev eval bench --golden G --out O --mirror https://github.com/=/srv/mirrors/

Each PR's base and head come from the GitHub API (--api-url; GITHUB_TOKEN if set), both
commits are fetched with git into OUT/repos/, and the PR is reviewed as `arev run diff --base
<base>` would at its head, with your configuration. OUT/candidates.json is the benchmark's
candidates file (tools `arev` and `arev-unresolved`); OUT/prs/ holds each PR's result,
OUT/runs/ the reviews. A PR already reviewed with the same configuration and arev version is
kept. docs/eval.md (\"The public benchmark\") explains the numbers.

Exit codes:
  0    every PR has a result
  2    bad golden files, labels, arguments or configuration; nothing was reviewed
  3    at least one PR could not be fetched or reviewed (tried again next time)";

#[derive(Debug, Args)]
pub struct EvalBenchArgs {
    /// The benchmark's golden_comments directory (or one of its files).
    #[arg(long, value_name = "DIR")]
    pub golden: PathBuf,
    /// Results directory (created if missing).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Read this config file on top of the user and repo files (the panel under test).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Review up to N pull requests at once (and, with --score, N Matcher dispatches).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub jobs: u32,
    /// Rewrite git URLs starting with FROM to start with TO (a local mirror or proxy).
    #[arg(long, value_name = "FROM=TO")]
    pub mirror: Vec<String>,
    /// The GitHub API base the PRs' base and head commits are read from.
    #[arg(long, value_name = "URL", default_value = "https://api.github.com")]
    pub api_url: String,
    /// Only the pull requests whose url contains TEXT (repeatable).
    #[arg(long, value_name = "TEXT")]
    pub only: Vec<String>,
    /// Ask the Matcher, per (golden comment, candidate) pair, whether they name the same
    /// issue, and print precision, recall and F1 as the benchmark computes them.
    #[arg(long)]
    pub score: bool,
    /// With --score: the benchmark's pr_labels.json (a breakdown by requires_context).
    #[arg(long, value_name = "FILE", requires = "score")]
    pub labels: Option<PathBuf>,
    /// No per-PR progress on stderr.
    #[arg(short, long)]
    pub quiet: bool,
    /// Let reviews reuse verdicts from the verdict cache.
    #[arg(long)]
    pub use_cache: bool,
    /// Each review proves its confirmed findings (`arev run --prove`, docs/prove.md).
    #[arg(long)]
    pub prove: bool,
    /// With --prove: where reproducers run (`bwrap` or `none`), as `arev run --prove-sandbox`.
    #[arg(long, value_enum, value_name = "MODE", requires = "prove")]
    pub prove_sandbox: Option<super::ProveSandboxArg>,
}
