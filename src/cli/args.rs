//! `arev` argument structs (docs/architecture.md §4, a contract). Parsing only; `resolve`
//! does the I/O.

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

const EVAL_HELP: &str = "\
Example:
  arev eval mine --since v1.0 --out eval/cases        one case per small fix commit
  arev eval run eval/cases --out eval/opus            review each buggy revision, score
  arev eval run eval/cases --config cheap.toml --out eval/cheap
  arev eval compare eval/opus/eval.json eval/cheap/eval.json

A case is found when a confirmed finding lies within --tolerance lines (default 3) of a line
the fix removed or changed (same file). The README (\"Measuring review quality\") explains
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
}

const EVAL_MINE_HELP: &str = "\
A commit is mined when its message matches --grep (default: the words fix, bug, crash, leak,
overflow, CVE and their forms, case-insensitive), it has exactly one parent, and its change
to code files (test files left out) is small: at most --max-files files and --max-lines lines
added + removed. The targets are the code files it modified, as they were in its parent; the
expected locations are the lines it removed or changed (a pure insertion marks the lines
around the insertion point). Pure renames and whitespace-only changes are skipped, with the
reason printed. Review the cases before relying on them: a commit that says \"fix\" may not
fix a defect.";

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
    /// Fix commits are those whose message matches REGEX (case-insensitive).
    #[arg(long, value_name = "REGEX")]
    pub grep: Option<String>,
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

const SUPPRESS_HELP: &str = "\
Example:
  arev suppress 20261121-180000-a1b2c3-src-lib-rs F2 --reason \"validated by parse() above\"

FINDING is a finding id of the report (`F2`; `2:F2` for round 2 when ids repeat across
rounds) or its fingerprint. The entry matches the finding by fingerprint, so it survives
unrelated edits that move the line; later reviews list the finding under `suppressed` and
never count it. In source, a comment `arev-ignore[<category>]: <reason>` on the flagged
line or the line above does the same. arev keeps .arev/ out of `git status`: commit the
file with `git add -f .arev/suppressions.toml`.";

#[derive(Debug, Args)]
pub struct SuppressArgs {
    /// A run directory, a run id (or unique prefix), or a report.json file.
    #[arg(value_name = "RUN|REPORT.json")]
    pub run: String,
    /// The finding: its id (`F2`, or `2:F2` with the round) or its fingerprint.
    #[arg(value_name = "FINDING_ID")]
    pub finding: String,
    /// Why the finding does not need a fix (mandatory).
    #[arg(long, value_name = "TEXT")]
    pub reason: String,
    /// The last day the suppression applies (YYYY-MM-DD); after it the finding counts again.
    #[arg(long, value_name = "YYYY-MM-DD")]
    pub expires: Option<String>,
    /// Runs base to look RUN up in (default: <repo>/.arev/runs).
    #[arg(long, value_name = "DIR")]
    pub run_dir: Option<PathBuf>,
}

const HOOK_HELP: &str = "\
Events:
  prompt  UserPromptSubmit: a prompt starting with #arev turns review on for the session and
          records the baseline (a snapshot of the working tree, untracked files included);
          `#arev off` turns it off. The user's prompts are recorded as the review's intent;
          prompts Claude Code writes itself (<task-notification>, …) are ignored.
  stop    Stop: reviews the session's changes since the baseline (once per diff sha) and
          blocks on confirmed medium/high findings, ends the turn on critical ones or when
          the agent stops again without a change; an approval moves the baseline. Any
          internal error, or a review out of [hook] timeout, lets the agent stop, with a
          message saying why.
AREV_DISABLE=1 turns every hook off. Config: the [hook] section (mode prefix|always|off,
prefix, max_nudges, max_blocks, timeout).";

#[derive(Debug, Args)]
pub struct HookArgs {
    /// Which hook event this invocation answers.
    #[arg(value_enum)]
    pub event: HookEvent,
}

/// `arev hook` events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HookEvent {
    /// The Stop hook.
    Stop,
    /// The UserPromptSubmit hook.
    Prompt,
}

impl HookEvent {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Stop => "stop",
            Self::Prompt => "prompt",
        }
    }
}

#[derive(Debug, Args)]
pub struct InstallArgs {
    /// The agent to wire arev into.
    #[arg(value_enum)]
    pub agent: InstallAgent,
    /// `project`: <repo>/.claude; `user`: ~/.claude.
    #[arg(long, value_enum, default_value_t = Scope::Project)]
    pub scope: Scope,
    /// Remove exactly what a previous install added.
    #[arg(long)]
    pub uninstall: bool,
}

/// `arev install` targets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum InstallAgent {
    /// Claude Code.
    Claude,
}

/// `arev install --scope` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Scope {
    Project,
    User,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Project => "project",
            Self::User => "user",
        }
    }
}

const REPORT_HELP: &str = "\
Examples:
  arev report 20261121-180000-a1b2c3-src-lib-rs --format sarif --out arev.sarif
  arev report .arev/runs/20261121-180000-a1b2c3-src-lib-rs --format markdown

RUN_ID is looked up under the runs base (<repo>/.arev/runs, or --run-dir); a unique prefix
of an id is enough. Exit code: 0 once rendered; with --fail-on, the run's verdict instead
(0 / 1 findings at or above it / 3 aborted / 130 interrupted). A run that is not finished,
or an unreadable report.json, exits 2.";

const PUBLISH_HELP: &str = "\
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
Exit code: 0 published; 2 a missing setting or a failed publish (the payload is kept).";

const MERGE_HELP: &str = "\
Example (a CI matrix of 4 jobs, each `arev run 'src/**/*.rs' --shard i/4 --out shard-i.json`):
  arev merge shard-*.json --sarif arev.sarif --out arev.json --fail-on high

Refuses (exit 2) when the reports are not shards of the same manifest (sha256 and file
list), or when a manifest file is covered by no shard or by two. Otherwise exits like
`arev run`: 3 if a shard aborted, 1 if a confirmed finding is at or above --fail-on.";

const RUN_HELP: &str = "\
Examples:
  arev run diff                         review uncommitted work (untracked files included)
  arev run diff --base origin/main      review everything since the merge-base with main
  arev run src/lib.rs --format json     one file, JSON report on stdout
  arev run 'src/**/*.rs' --out r.json   a glob; report also written to r.json
  arev run diff --iterate --verify 'cargo test'
                                        review, fix in a worktree, re-review until clean
  arev run diff --background --wait 100s
                                        detach; the report if it comes within 100 s,
                                        else the run id (then: arev status / arev result)
  arev run diff --baseline prev.json --incremental
                                        new / still open / fixed since an earlier report;
                                        only what changed since then is reviewed again

Exit codes:
  0    review completed; no confirmed finding at or above --fail-on (default high)
  1    review completed; at least one confirmed finding at or above --fail-on
  2    usage, config, target or setup error (e.g. an agent CLI that is not installed);
       nothing was reviewed
  3    review aborted: a gate fired or agents could not be dispatched (no verdict)
  130  interrupted (Ctrl-C/SIGINT); the run dir records status: interrupted
  143  interrupted by SIGTERM (129: by SIGHUP); recorded like Ctrl-C

With --background: 0 once the detached run has started (bad input still exits 2 before
anything runs). With --background --wait D: the codes above when the verdict came within D;
4 when the run is still going (the run id is printed; `arev result RUN` gets the report).

With --publish: the same codes whether or not publishing worked (a failure is printed and
recorded in the run dir's publish/); --publish-strict turns 0 or 1 into 2 when it failed.

With --iterate: 0 when the final review is clean, 1 when findings remain or --verify
failed, 3 on abort, 130/143/129 on SIGINT/SIGTERM/SIGHUP (the worktree and its branch are
kept either way).";

/// Output formats of the report on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Human summary.
    Text,
    /// report.json (schemas/report.schema.json).
    Json,
    /// Markdown, as for a PR comment.
    Markdown,
    /// SARIF 2.1.0, for GitHub code scanning and other SARIF consumers.
    Sarif,
    /// GitHub Actions workflow commands (`::error file=…,line=…::…` annotations).
    Github,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// `diff`, one file, several paths, or a glob such as 'src/**/*.rs'.
    #[arg(required = true, value_name = "TARGET")]
    pub targets: Vec<String>,
    /// With `diff`: review merge-base(REV, HEAD)..working tree.
    #[arg(long, value_name = "REV")]
    pub base: Option<String>,
    /// With `diff`: review the working tree against this tree object (a snapshot the Stop
    /// hook took when review was enabled). Internal; used by `arev hook stop`.
    #[arg(long, value_name = "OID", hide = true, conflicts_with_all = ["base", "iterate"])]
    pub base_tree: Option<String>,
    /// What the change is meant to do (a PR description, a ticket), from FILE or `-` (stdin),
    /// at most 8 KiB: every role gets it, and a change that does not do what it says (or does
    /// what it does not say) is reported as category `intent`.
    #[arg(long, value_name = "FILE|-")]
    pub intent: Option<PathBuf>,
    /// Model tier of the first round; escalation never goes below it.
    #[arg(long, value_enum)]
    pub model: Option<TierArg>,
    /// Enthusiast passes per round (default: FULL 2, LIGHTWEIGHT 1).
    #[arg(long, value_parser = crate::config::limits::parse_passes)]
    pub passes: Option<u32>,
    /// Round ceiling (default: FULL 10, LIGHTWEIGHT 3).
    #[arg(long, value_parser = crate::config::limits::parse_max_rounds)]
    pub max_rounds: Option<u32>,
    /// Stop with `budget-exhausted` once the run has cost this many USD.
    #[arg(long, value_name = "USD", value_parser = crate::config::limits::parse_budget_usd)]
    pub budget_usd: Option<f64>,
    /// Stop with `budget-exhausted` once the run has used this many tokens.
    #[arg(long, value_name = "N", value_parser = crate::config::limits::parse_budget_tokens)]
    pub budget_tokens: Option<u64>,
    /// Use this configured agent for every role.
    #[arg(long, value_name = "NAME")]
    pub agent: Option<String>,
    #[command(flatten)]
    pub output: OutputArgs,
    /// Exit 1 when a confirmed finding is at or above this severity.
    #[arg(long, value_enum)]
    pub fail_on: Option<FailOnArg>,
    /// Review only slice i of n of a manifest (glob / several paths), by path hash; combine
    /// the shards' reports with `arev merge`.
    #[arg(long, value_name = "i/n")]
    pub shard: Option<crate::target::ShardSpec>,
    /// Base directory for the run dir (default: <repo>/.arev/runs).
    #[arg(long, value_name = "DIR")]
    pub run_dir: Option<PathBuf>,
    /// Read this config file on top of the user and repo files.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Where the repository's own `arev.toml`/`.arev/config.toml` and `.arev/{agents,prompts,
    /// heuristics}/` come from: the working tree, the merge-base commit of --base (so a
    /// change cannot alter its own review), or nowhere [env: AREV_REPO_CONFIG] [default: base
    /// with --base, else worktree].
    #[arg(long, value_enum, value_name = "FROM")]
    pub repo_config: Option<RepoConfigArg>,
    /// Leave files matching GLOB (repository-relative) out of a diff, directory or glob
    /// target, listed as skipped `excluded` (repeatable; adds to `[review] exclude`).
    #[arg(long, value_name = "GLOB")]
    pub exclude: Vec<String>,
    /// What to look at first (e.g. "authorization checks"): sent to the Enthusiasts and the
    /// Judge; it ranks, it does not fence. Wins over `[review] focus`.
    #[arg(long, value_name = "TEXT")]
    pub focus: Option<String>,
    /// An empty diff exits 0 with status `empty` instead of exit 2.
    #[arg(long)]
    pub allow_empty: bool,
    /// Compare with an earlier review (a report.json, a run dir or a run id): every finding
    /// is new, unchanged or updated, and the baseline's findings no longer found are listed
    /// as fixed (`absent`).
    #[arg(
        long,
        value_name = "REPORT.json|RUN_DIR|RUN_ID",
        conflicts_with = "iterate"
    )]
    pub baseline: Option<String>,
    /// With --baseline: the exit code, annotations and the Stop hook consider only new and
    /// updated findings (the report still lists all).
    #[arg(long, requires = "baseline")]
    pub only_new: bool,
    /// With --baseline: review only what changed since the baseline (files whose content, or
    /// for a diff whose change, differs); carry the baseline's verdict over for the rest.
    #[arg(long, requires = "baseline", conflicts_with = "shard")]
    pub incremental: bool,
    /// Neither reuse nor record a verdict in the verdict cache.
    #[arg(long)]
    pub no_cache: bool,
    /// Review, fix in an isolated git worktree (`.arev/worktrees/<run-id>`, branch
    /// `arev/iterate/<run-id>`), re-review, until the review is clean. Never merges.
    #[arg(long)]
    pub iterate: bool,
    /// With --iterate: at most this many reviews (default 5); the last one is never fixed.
    #[arg(long, value_name = "N", requires = "iterate", value_parser = clap::value_parser!(u32).range(1..=50))]
    pub max_iterations: Option<u32>,
    /// With --iterate: every round of every review runs at opus.
    #[arg(long, requires = "iterate")]
    pub quality_critical: bool,
    /// With --iterate: run `sh -c CMD` in the worktree after each fix commit; non-zero stops
    /// the loop (verify-failed).
    #[arg(long, value_name = "CMD", requires = "iterate")]
    pub verify: Option<String>,
    /// After the review (whatever its verdict), publish it to the pull request / merge
    /// request, as `arev publish` does. A failed publish keeps the review's exit code.
    #[arg(long, value_enum, value_name = "FORGE", conflicts_with = "iterate")]
    pub publish: Option<ForgeArg>,
    /// With --publish: a failed publish exits 2 instead of the review's 0 or 1.
    #[arg(long, requires = "publish")]
    pub publish_strict: bool,
    /// No progress on stderr.
    #[arg(short, long, conflicts_with = "verbose")]
    pub quiet: bool,
    /// More logs on stderr (-vv for debug).
    #[arg(short, long, action = clap::ArgAction::Count)]
    pub verbose: u8,
    // Background runs (docs/architecture.md §4.4).
    /// Detach: the review runs on in a session of its own (surviving this shell and Claude
    /// Code); prints the run id and run dir at once and exits 0. Logs go to <run dir>/arev.log.
    #[arg(long, overrides_with = "background")]
    pub background: bool,
    /// With --background: wait up to DURATION (e.g. 100s, 5m) and print the report with the
    /// verdict's exit code if it came; else the run id and how to get the report, exit 4.
    /// Given twice (a slash command's own, then the user's), the last one counts.
    #[arg(long, value_name = "DURATION", requires = "background", overrides_with = "wait",
          value_parser = super::watch::parse_wait)]
    pub wait: Option<std::time::Duration>,
    /// Internal: this process is the detached run a `--background` parent started.
    #[arg(long, hide = true)]
    pub detached: bool,
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

/// Where the report goes: stdout in `--format`, plus the files asked for (shared by `run`,
/// `report` and `merge`).
#[derive(Debug, Clone, Args)]
pub struct OutputArgs {
    /// Report format on stdout (given twice, the last one counts).
    #[arg(long, value_enum, default_value_t = Format::Text, overrides_with = "format")]
    pub format: Format,
    /// Also write the report to FILE: JSON for `.json`, SARIF for `.sarif`, Markdown for `.md`,
    /// else in --format.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Also write the SARIF 2.1.0 report to FILE (for `run`: also `report.sarif` in the run dir).
    #[arg(long, value_name = "FILE")]
    pub sarif: Option<PathBuf>,
    /// Also write the Markdown report to FILE.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// Write one `<name>.schema.json` per wire type into DIR instead of printing.
    #[arg(long, value_name = "DIR")]
    pub write: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A run directory, a run id (or unique prefix) under the runs base, or a report.json
    /// file (e.g. from `--out` or `arev merge`).
    #[arg(value_name = "RUN_DIR|RUN_ID")]
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
}

/// `--publish` / `arev publish` forges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ForgeArg {
    /// GitHub (or GitHub Enterprise Server, with GITHUB_API_URL).
    Github,
    /// GitLab (gitlab.com or self-managed, with CI_API_V4_URL).
    Gitlab,
}

impl From<ForgeArg> for crate::publish::Forge {
    fn from(f: ForgeArg) -> Self {
        match f {
            ForgeArg::Github => Self::Github,
            ForgeArg::Gitlab => Self::Gitlab,
        }
    }
}

#[derive(Debug, Args)]
pub struct RunsArgs {
    /// One JSON array (schemas/runs.schema.json) instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Runs base to list (default: <repo>/.arev/runs).
    #[arg(long, value_name = "DIR")]
    pub run_dir: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The shards' report.json files.
    #[arg(required = true, value_name = "REPORT")]
    pub reports: Vec<PathBuf>,
    #[command(flatten)]
    pub output: OutputArgs,
    /// Exit 1 when a confirmed finding is at or above this severity (default: config, high).
    #[arg(long, value_enum)]
    pub fail_on: Option<FailOnArg>,
}

#[derive(Debug, Args)]
pub struct InitArgs {
    /// Primary language of the agents' prose (asked on a TTY when not given).
    #[arg(long, value_name = "LANG")]
    pub language: Option<String>,
}

/// `--repo-config` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RepoConfigArg {
    Worktree,
    Base,
    Ignore,
}

impl From<RepoConfigArg> for crate::config::RepoSource {
    fn from(a: RepoConfigArg) -> Self {
        match a {
            RepoConfigArg::Worktree => Self::Worktree,
            RepoConfigArg::Base => Self::Base,
            RepoConfigArg::Ignore => Self::Ignore,
        }
    }
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
        assert_eq!(r.output.format, Format::Json);
        assert!(Cli::try_parse_from(["arev", "run"]).is_err());
        assert!(Cli::try_parse_from(["arev", "run", "x", "--passes", "0"]).is_err());
    }

    #[test]
    fn publish_parses_and_run_publish_flags_combine() {
        let c = Cli::try_parse_from([
            "arev",
            "publish",
            "github",
            "run-1",
            "--pr",
            "7",
            "--dry-run",
        ])
        .unwrap();
        let Command::Publish(p) = c.command else {
            panic!()
        };
        assert_eq!(
            (p.forge, p.run.as_str(), p.pr, p.dry_run),
            (ForgeArg::Github, "run-1", Some(7), true)
        );
        assert!(Cli::try_parse_from(["arev", "publish", "bitbucket", "r"]).is_err());
        assert!(Cli::try_parse_from(["arev", "publish", "gitlab", "r", "--pr", "0"]).is_err());
        let c = Cli::try_parse_from([
            "arev",
            "run",
            "diff",
            "--publish",
            "gitlab",
            "--publish-strict",
        ])
        .unwrap();
        let Command::Run(r) = c.command else { panic!() };
        assert_eq!(
            (r.publish, r.publish_strict),
            (Some(ForgeArg::Gitlab), true)
        );
        assert!(Cli::try_parse_from(["arev", "run", "diff", "--publish-strict"]).is_err());
        assert!(
            Cli::try_parse_from(["arev", "run", "diff", "--publish", "github", "--iterate"])
                .is_err()
        );
    }

    #[test]
    fn iterate_flags_require_iterate() {
        for extra in [
            &["--max-iterations", "3"][..],
            &["--quality-critical"][..],
            &["--verify", "true"][..],
        ] {
            let mut argv = vec!["arev", "run", "diff"];
            argv.extend_from_slice(extra);
            assert!(
                Cli::try_parse_from(&argv).is_err(),
                "{extra:?} without --iterate"
            );
            argv.push("--iterate");
            assert!(
                Cli::try_parse_from(&argv).is_ok(),
                "{extra:?} with --iterate"
            );
        }
        let c = Cli::try_parse_from(["arev", "run", "diff", "--iterate"]).unwrap();
        let Command::Run(r) = c.command else { panic!() };
        assert!(r.iterate);
        assert_eq!(r.max_iterations, None);
        assert!(
            Cli::try_parse_from(["arev", "run", "d", "--iterate", "--max-iterations", "0"])
                .is_err()
        );
    }
}
