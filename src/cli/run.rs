//! `arev run` arguments and the value enums of its own flags (`--model`, `--repo-config`).

use super::output::{FailOnArg, OutputArgs};
use super::publish::ForgeArg;
use crate::findings::Tier;
use clap::{Args, ValueEnum};
use std::path::PathBuf;

pub(super) const RUN_HELP: &str = "\
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
  arev run diff --base main --prove     each confirmed finding also gets a reproducer
                                        that arev runs in a sandbox (docs/prove.md)
  arev run diff --baseline prev.json --incremental
                                        new / still open / fixed since an earlier report;
                                        only what changed since then is reviewed again

Exit codes:
  0    review completed; no confirmed finding at or above --fail-on (default high)
  1    review completed; at least one confirmed finding at or above --fail-on
  2    usage, config, target or setup error (e.g. an agent CLI that is not installed);
       nothing was reviewed
  3    review aborted: a gate fired, agents could not be dispatched, or the budget ran
       out before a verdict (no verdict)
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
    /// Enthusiast passes per round (default: FULL 2, LIGHTWEIGHT 1). The mode comes from
    /// the target: a single code file or a diff of at most 150 lines is LIGHTWEIGHT; a
    /// Markdown file, a glob, several paths or a larger diff is FULL.
    #[arg(long, value_parser = crate::config::limits::parse_passes)]
    pub passes: Option<u32>,
    /// Round ceiling (default: FULL 10, LIGHTWEIGHT 3; FULL/LIGHTWEIGHT: see --passes).
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
    /// After the last round, a Prover writes a reproducer for each confirmed finding at or
    /// above `[prove] min_severity` (at most `[prove] max_findings`), and arev runs it itself
    /// in a sandbox: `reproduced`, `preexisting`, `not_reproduced`, `inconclusive` or
    /// `not_attempted` per finding (docs/prove.md). Needs bubblewrap (`bwrap`) unless
    /// `--prove-sandbox none`. With --iterate, a fix of a finding whose reproducer failed
    /// counts only when the reproducer passes on the fix commit (else fix-unproven).
    #[arg(long)]
    pub prove: bool,
    /// With --prove: confirmed findings whose proof is `preexisting` (the base fails too) or
    /// that are below `[prove] min_severity` do not count for --fail-on. A proof made by
    /// running the reviewed code never clears a finding: `not_reproduced` and
    /// `inconclusive` still gate (docs/prove.md "Statuses").
    #[arg(long, requires = "prove")]
    pub require_proof: bool,
    /// With --prove: where reproducers run — `bwrap` (default: no network, no secrets,
    /// nothing writable but their worktree) or `none` (unsandboxed, as you; every rendering
    /// says so). Wins over `[prove] sandbox`.
    #[arg(long, value_enum, value_name = "MODE", requires = "prove")]
    pub prove_sandbox: Option<ProveSandboxArg>,
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

/// `--prove-sandbox` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProveSandboxArg {
    Bwrap,
    None,
}

impl From<ProveSandboxArg> for crate::records::SandboxMode {
    fn from(a: ProveSandboxArg) -> Self {
        match a {
            ProveSandboxArg::Bwrap => Self::Bwrap,
            ProveSandboxArg::None => Self::None,
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
