//! Build the `RunPlan`: the only step that reads config files and pins the target.

use super::context::{resolve_context, CommitTree, NoFiles, RepoFiles, ReviewContext, Worktree};
use super::outputs::{check_destinations, Outputs};
use super::RepoInputs;
use crate::cli::RunArgs;
use crate::config::{load, ConfigSources, FailOn, RepoSource, Settings};
use crate::errors::ExpectedError;
use crate::findings::{Role, Tier};
use crate::target::{
    apply_shard, resolve_excluding, Excludes, Mode, PinnedTarget, ShardInfo, TargetError,
    TargetIdentity, TargetRequest,
};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The agent assigned to a role (its binary is resolved at dispatch time: a missing
/// binary is a dispatch failure, exit 3, not a usage error).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentRef {
    pub role: Role,
    pub name: String,
}

/// What makes a plan impossible, beyond the config's and the target's own errors (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error("--config {}: no such file", .0.display())]
    NoConfigFile(PathBuf),
    #[error(
        "a USD budget (--budget-usd, [budget] usd) needs the price of every model the review \
         may run, and agent `{agent}` ({backend} backend) runs model `{model}` (tier {tier}) \
         whose price is not known: add [prices.\"{model}\"] (input, output, cache_read, \
         cache_write in USD per million tokens) to your config, or bound the run with \
         --budget-tokens instead"
    )]
    Unpriced {
        agent: String,
        backend: &'static str,
        model: String,
        tier: Tier,
    },
    #[error("cannot open the repository: {0}")]
    Repository(git2::Error),
    #[error("bad merge-base id {id}: {source}")]
    MergeBase { id: String, source: git2::Error },
    #[error("AREV_REPO_CONFIG={0}: expected one of worktree, base, ignore")]
    RepoConfigVar(String),
    #[error(
        "--repo-config base needs --base REV (the commit whose arev.toml and .arev/ the review \
         trusts)"
    )]
    BaseNeedsRev,
}

impl From<PlanError> for ExpectedError {
    fn from(e: PlanError) -> Self {
        Self::Resolve(Box::new(e))
    }
}

/// Everything a run needs, resolved once.
#[derive(Debug, Clone)]
pub struct RunPlan {
    /// The pinned target, or `None` for an allowed empty diff.
    pub target: Option<PinnedTarget>,
    /// Root the run is about (repo workdir, or cwd).
    pub root: PathBuf,
    /// The git dir whose `info/exclude` gets `.arev/` (None outside a repo).
    pub git_common_dir: Option<PathBuf>,
    /// The configuration in force, parsed and checked at load.
    pub settings: Settings,
    /// The digest of the merged configuration (part of the verdict cache's key).
    pub config_digest: String,
    /// The repository inputs in force (`--repo-config`): the config layer above came from
    /// them, and so do the prompt overrides.
    pub repo_inputs: RepoInputs,
    pub runs_base: PathBuf,
    pub tier_start: Tier,
    pub passes: u32,
    pub max_rounds: u32,
    pub fail_on: FailOn,
    pub agents: [AgentRef; 3],
    /// The Enthusiast agents, used round-robin across passes (`agents[0]` is the first).
    pub enthusiasts: Vec<String>,
    /// Spend limits (None = unlimited).
    pub budget_usd: Option<f64>,
    pub budget_tokens: Option<u64>,
    pub outputs: Outputs,
    /// The target as typed (for an empty run's record).
    pub display: String,
    /// `--intent`: what the change is meant to do (at most 8 KiB), for every role's prompt.
    pub intent: Option<String>,
    /// `--shard i/n`: the slice reviewed and the full manifest's identity (the target above
    /// is already restricted to the slice).
    pub shard: Option<ShardInfo>,
    /// What diffs, directories and globs leave out (`[review] exclude` + `--exclude`,
    /// lockfiles, generated and vendored files).
    pub excludes: Excludes,
    /// Project rules, path instructions and focus (docs/architecture.md §19).
    pub context: ReviewContext,
    /// Baseline, suppressions, incremental review and the verdict cache.
    pub memory: super::MemoryPlan,
    /// The config file that set each agent's `binary` (absent: the embedded default), for
    /// the preflight's messages.
    pub binary_origins: BTreeMap<String, PathBuf>,
    /// `--prove`: the proof phase after the last round (None without it).
    pub prove: Option<super::ProvePlan>,
}

impl RunPlan {
    pub fn agent_for(&self, role: Role) -> &AgentRef {
        match role {
            Role::Enthusiast | Role::Fixer | Role::Prover => &self.agents[0],
            Role::Adversary => &self.agents[1],
            Role::Judge => &self.agents[2],
        }
    }

    /// The agent that plays `role` (for an Enthusiast: pass `p` runs
    /// `enthusiasts[(p-1) % len]`; no pass = the first).
    pub fn agent_name(&self, role: Role, pass: Option<u32>) -> &str {
        match (role, pass) {
            (Role::Enthusiast, Some(p)) if !self.enthusiasts.is_empty() => {
                let i = (p.max(1) - 1) as usize % self.enthusiasts.len();
                &self.enthusiasts[i]
            }
            _ => &self.agent_for(role).name,
        }
    }
}

/// Resolve `arev run` arguments relative to `cwd`.
pub fn resolve_run(args: &RunArgs, cwd: &Path) -> Result<RunPlan, ExpectedError> {
    resolve(args, cwd, None)
}

/// The plan `arev run` makes for `args` in `cwd`, without pinning its target: `target` stands
/// for what the caller identified itself (its mode decides passes and rounds like a pinned
/// target's). The plan's `target` is None. For the Stop hook, which looks its diff up in
/// the verdict cache before it starts a review: the key needs the plan the review would
/// have (docs/architecture.md §20.4).
pub fn resolve_unpinned(
    args: &RunArgs,
    cwd: &Path,
    target: &TargetIdentity,
) -> Result<RunPlan, ExpectedError> {
    resolve(args, cwd, Some(target.mode))
}

/// [`resolve_run`], or with `unpinned` (a mode) [`resolve_unpinned`].
fn resolve(args: &RunArgs, cwd: &Path, unpinned: Option<Mode>) -> Result<RunPlan, ExpectedError> {
    let (root, git_common_dir) = discover_root(cwd);
    let repo_inputs = repo_inputs(args, cwd, &root)?;
    let (config, config_digest, binary_origins) = load_config(args, &root, &repo_inputs)?;
    let intent = intent_of(args, cwd)?;
    let outputs = Outputs {
        format: args.output.format,
        out: args.output.out.as_ref().map(|p| absolutize(cwd, p)),
        markdown: args.output.markdown.as_ref().map(|p| absolutize(cwd, p)),
        sarif: args.output.sarif.as_ref().map(|p| absolutize(cwd, p)),
        quiet: args.quiet,
    };
    check_destinations(&outputs)?;
    // The run-dir base is known before the target: it is never part of a diff or a walk.
    let runs_base = match (&args.run_dir, config.run.dir.as_str()) {
        (Some(d), _) => absolutize(cwd, d),
        (None, "") => crate::store::default_runs_base(&root),
        (None, d) => absolutize(&root, Path::new(d)),
    };
    crate::store::check_real_dirs(&root, &runs_base)?;
    let mut exclude = config.review.exclude.clone();
    exclude.extend(args.exclude.iter().cloned());
    let mut excludes = Excludes::new(exclude, config.review.skip_lockfiles);
    // `.gitattributes` is a repository input: from where `--repo-config` says.
    excludes.attributes = match (repo_inputs.source, &repo_inputs.commit) {
        (RepoSource::Base, Some(c)) => crate::target::AttributeSource::Commit(c.clone()),
        (RepoSource::Ignore, _) => crate::target::AttributeSource::Ignore,
        _ => crate::target::AttributeSource::Repository,
    };
    let (target, shard) = pin_target(args, cwd, &config, &excludes, &runs_base, unpinned)?;
    let root = target.as_ref().map_or(root, |t| t.root.clone());
    let where_ = Where {
        args,
        cwd,
        root: &root,
        runs_base: &runs_base,
        repo_inputs: &repo_inputs,
    };
    let (context, memory) = context_and_memory(&where_, &config, target.as_ref())?;
    let mode = target.as_ref().map(|t| t.mode).or(unpinned);
    let passes = args
        .passes
        .or((config.review.passes > 0).then_some(config.review.passes))
        .unwrap_or_else(|| mode.map_or(1, |m| m.passes()));
    let max_rounds = args
        .max_rounds
        .or((config.review.max_rounds > 0).then_some(config.review.max_rounds))
        .unwrap_or_else(|| mode.map_or(1, |m| m.max_rounds()));
    let (agents, enthusiasts) = agents_of(args, &config);
    let prove = super::prove::resolve_prove(args, &config);
    let plan = RunPlan {
        prove,
        root,
        git_common_dir,
        tier_start: args.model.map_or(config.review.model, Tier::from),
        passes,
        max_rounds,
        fail_on: args.fail_on.map_or(config.review.fail_on, Into::into),
        agents,
        enthusiasts,
        binary_origins,
        budget_usd: args.budget_usd.or(config.budget.usd),
        budget_tokens: args.budget_tokens.or(config.budget.tokens),
        outputs,
        display: args.targets.join(" "),
        intent,
        shard,
        excludes,
        context,
        memory,
        target,
        settings: config,
        config_digest,
        repo_inputs,
        runs_base,
    };
    // Before any run dir: a USD budget needs every model's price.
    check_usd_prices(&plan)?;
    Ok(plan)
}

/// A USD budget prices every token (docs/configuration.md `[prices]`): every model the
/// plan's agents may run — each tier from the first round's up, as escalation only climbs —
/// must have a price, or the budget could never trip. The first that has none, named with
/// the way out (`--budget-tokens`). Nothing to check without a USD budget.
fn check_usd_prices(plan: &RunPlan) -> Result<(), PlanError> {
    if plan.budget_usd.is_none() {
        return Ok(());
    }
    let mut names: Vec<&str> = plan.enthusiasts.iter().map(String::as_str).collect();
    names.extend(plan.agents.iter().map(|a| a.name.as_str()));
    let tiers = [Tier::Haiku, Tier::Sonnet, Tier::Opus]
        .into_iter()
        .filter(|t| *t >= plan.tier_start);
    for name in names {
        // An unknown agent is reported where it is dispatched.
        let Ok(cfg) = plan.settings.agent(name) else {
            continue;
        };
        let Some(format) = cfg.event_format() else {
            continue;
        };
        let models = cfg.tier_models();
        for tier in tiers.clone() {
            let model = models.get(tier);
            if super::price::price_for(&plan.settings, name, format, model).is_none() {
                return Err(PlanError::Unpriced {
                    agent: name.to_string(),
                    backend: cfg.backend.as_str(),
                    model: model.to_string(),
                    tier,
                });
            }
        }
    }
    Ok(())
}

/// The configuration in force (user file, the repository's through `repo_inputs`,
/// `--config`) and its digest; `--agent` must name one of its agents.
fn load_config(
    args: &RunArgs,
    root: &Path,
    repo_inputs: &RepoInputs,
) -> Result<(Settings, String, BTreeMap<String, PathBuf>), ExpectedError> {
    let mut sources = ConfigSources::discover(root, args.config.clone());
    sources.repo_file = None;
    sources.repo_text = repo_inputs.config();
    sources.repo_from_base = repo_inputs.source == RepoSource::Base;
    if let Some(p) = &args.config {
        if !p.is_file() {
            return Err(PlanError::NoConfigFile(p.clone()).into());
        }
    }
    let (config, config_digest) = load(&sources)?;
    // `--budget-usd`, `--budget-tokens`, `--passes` and `--max-rounds` are checked by their
    // value parsers, with the bounds config validation uses (config::limits).
    if let Some(name) = &args.agent {
        config.agent(name)?;
    }
    // Which file set each agent's `binary`: the preflight names it.
    let binary_origins = crate::config::agent_key_origins(&sources, "binary");
    Ok((config, config_digest, binary_origins))
}

/// `--intent`: its text (an empty one is warned about and left out).
fn intent_of(args: &RunArgs, cwd: &Path) -> Result<Option<String>, ExpectedError> {
    let Some(arg) = &args.intent else {
        return Ok(None);
    };
    let text = super::intent::read_intent(arg, cwd)?;
    if text.is_none() {
        crate::output::warn(&format!(
            "--intent {}: empty; the review runs without an intent",
            arg.display()
        ));
    }
    Ok(text)
}

/// The pinned target (None for an allowed empty diff, or when `unpinned`), restricted to
/// its `--shard` slice with the slice's record.
fn pin_target(
    args: &RunArgs,
    cwd: &Path,
    config: &Settings,
    excludes: &Excludes,
    runs_base: &Path,
    unpinned: Option<Mode>,
) -> Result<(Option<PinnedTarget>, Option<ShardInfo>), ExpectedError> {
    let req = TargetRequest {
        args: args.targets.clone(),
        base: args.base.clone(),
        base_tree: args.base_tree.clone(),
        cwd: cwd.to_path_buf(),
        max_file_bytes: config.review.max_file_bytes,
        excludes: excludes.clone(),
    };
    let pinned = match unpinned {
        Some(_) => Ok(None),
        None => resolve_excluding(&req, &[runs_base.to_path_buf()]).map(Some),
    };
    let target = match pinned {
        Ok(t) => t,
        Err(TargetError::EmptyDiff { .. }) if args.allow_empty => None,
        // Changes, none reviewable: an allowed empty run that lists what was skipped.
        Err(TargetError::DiffNothingReviewable { target, .. }) if args.allow_empty => Some(*target),
        Err(e) => return Err(e.into()),
    };
    // Sharding applies to the pinned manifest: the slice becomes the target.
    let (target, shard) = match (target, args.shard) {
        (Some(t), Some(spec)) => {
            let (t, info) = apply_shard(t, spec)?;
            (Some(t), Some(info))
        }
        (None, Some(_)) => return Err(TargetError::ShardNeedsManifest("diff").into()),
        (t, None) => (t, None),
    };
    // The context scope is fixed once, here, for the target as reviewed.
    let target = match target {
        Some(t) => Some(with_context(t, config)?),
        None => None,
    };
    Ok((target, shard))
}

/// `target` with its context scope (`[review] context`, `context_exclude`, the per-file cap).
pub fn with_context(target: PinnedTarget, config: &Settings) -> Result<PinnedTarget, TargetError> {
    let r = &config.review;
    target.with_context(r.context, &r.context_exclude, r.max_file_bytes)
}

/// Where a run's repository inputs are read from.
struct Where<'a> {
    args: &'a RunArgs,
    cwd: &'a Path,
    root: &'a Path,
    runs_base: &'a Path,
    repo_inputs: &'a RepoInputs,
}

/// Project rules, path instructions and focus, and the memory plan (baseline,
/// suppressions with the in-source policy, incremental review, verdict cache).
fn context_and_memory(
    w: &Where<'_>,
    config: &Settings,
    target: Option<&PinnedTarget>,
) -> Result<(ReviewContext, super::MemoryPlan), ExpectedError> {
    let (args, root, repo_inputs) = (w.args, w.root, w.repo_inputs);
    // Project rules are repository inputs: read through the same source as the repository
    // config (docs/architecture.md §15.1, §19.1).
    let focus = args.focus.as_deref().or(Some(config.review.focus.as_str()));
    let base_repo = match (&repo_inputs.commit, repo_inputs.source) {
        (Some(c), RepoSource::Base) => {
            let repo = git2::Repository::discover(root).map_err(PlanError::Repository)?;
            let oid = git2::Oid::from_str(c).map_err(|source| PlanError::MergeBase {
                id: c.clone(),
                source,
            })?;
            Some((repo, oid))
        }
        _ => None,
    };
    let files: Box<dyn RepoFiles + '_> = match (&base_repo, repo_inputs.source) {
        (Some((repo, commit)), _) => Box::new(CommitTree {
            repo,
            commit: *commit,
        }),
        (None, RepoSource::Ignore) => Box::new(NoFiles),
        (None, _) => Box::new(Worktree { root }),
    };
    let context = resolve_context(&config.review.rules, focus, &config.review.paths, &*files)?;
    drop(files);
    let mut memory =
        super::memory::resolve_memory(args, config, root, w.cwd, w.runs_base, repo_inputs)?;
    memory.suppressions.in_source = super::suppressions::in_source_policy(
        repo_inputs.source,
        base_repo.as_ref().map(|(r, c)| (r, *c)),
        root,
        target
            .iter()
            .flat_map(|t| t.files.iter().map(|f| f.path.as_str())),
    );
    Ok((context, memory))
}

/// The agent of each role (`--agent` for all of them), and the Enthusiasts used
/// round-robin across passes.
fn agents_of(args: &RunArgs, config: &Settings) -> ([AgentRef; 3], Vec<String>) {
    let pick = |role: Role, configured: &str| AgentRef {
        role,
        name: args.agent.clone().unwrap_or_else(|| configured.to_string()),
    };
    let enthusiasts = match &args.agent {
        Some(name) => vec![name.clone()],
        None => config.roles.enthusiast.names(),
    };
    let agents = [
        pick(Role::Enthusiast, &enthusiasts[0]),
        pick(Role::Adversary, &config.roles.adversary),
        pick(Role::Judge, &config.roles.judge),
    ];
    (agents, enthusiasts)
}

/// `--repo-config`, else `AREV_REPO_CONFIG`, else `base` with `--base` and `worktree`
/// without.
fn repo_source(flag: Option<RepoSource>, base: Option<&str>) -> Result<RepoSource, PlanError> {
    if let Some(a) = flag {
        return Ok(a);
    }
    if let Some(v) = std::env::var_os("AREV_REPO_CONFIG") {
        let v = v.to_string_lossy();
        return RepoSource::parse(&v).ok_or_else(|| PlanError::RepoConfigVar(v.into_owned()));
    }
    Ok(if base.is_some() {
        RepoSource::Base
    } else {
        RepoSource::Worktree
    })
}

/// `arev run`'s repository inputs: from where `--repo-config` says.
fn repo_inputs(args: &RunArgs, cwd: &Path, root: &Path) -> Result<RepoInputs, ExpectedError> {
    resolve_repo_inputs(
        args.repo_config.map(Into::into),
        args.base.as_deref(),
        cwd,
        root,
    )
}

/// Read the repository inputs from where `flag` (`--repo-config`), else `AREV_REPO_CONFIG`,
/// says, by `arev run`'s rule (`base` with `--base REV`, else `worktree`); `arev doctor`
/// uses the same. With `base`, a working tree whose inputs differ gets a one-line warning
/// naming the flag.
pub fn resolve_repo_inputs(
    flag: Option<RepoSource>,
    base: Option<&str>,
    cwd: &Path,
    root: &Path,
) -> Result<RepoInputs, ExpectedError> {
    let source = repo_source(flag, base)?;
    match source {
        RepoSource::Ignore => Ok(RepoInputs::none(source, root)),
        RepoSource::Worktree => RepoInputs::from_worktree(root).map_err(ExpectedError::from),
        RepoSource::Base => {
            let Some(rev) = base else {
                return Err(PlanError::BaseNeedsRev.into());
            };
            let bad = |message: String| TargetError::BadBase {
                rev: rev.to_string(),
                message,
            };
            let repo = git2::Repository::discover(cwd)
                .map_err(|_| TargetError::NotARepo(cwd.to_path_buf()))?;
            let base = repo
                .revparse_single(rev)
                .and_then(|o| o.peel_to_commit())
                .map_err(|e| bad(e.message().to_string()))?;
            let head = repo
                .head()
                .and_then(|h| h.peel_to_commit())
                .map_err(|e| bad(format!("HEAD has no commit: {}", e.message())))?;
            let mb = repo
                .merge_base(base.id(), head.id())
                .map_err(|e| bad(format!("no merge base with HEAD: {}", e.message())))?;
            let inputs = RepoInputs::from_commit(&repo, mb, root)?;
            let differ = inputs.differing_worktree(root);
            if !differ.is_empty() {
                crate::output::warn(&format!(
                    "the working tree's {} differ(s) from the merge-base {}; this review uses \
                     the base's (--repo-config worktree to use the working tree's)",
                    differ.join(", "),
                    mb.to_string().chars().take(12).collect::<String>()
                ));
            }
            Ok(inputs)
        }
    }
}

fn absolutize(base: &Path, p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        base.join(p)
    }
}

/// The repo workdir and its common git dir, or (cwd, None) outside a repo.
pub(crate) fn discover_root(cwd: &Path) -> (PathBuf, Option<PathBuf>) {
    match git2::Repository::discover(cwd) {
        Ok(repo) => match repo.workdir() {
            Some(w) => {
                let w = w.canonicalize().unwrap_or_else(|_| w.to_path_buf());
                (w, Some(repo.commondir().to_path_buf()))
            }
            None => (cwd.to_path_buf(), None),
        },
        Err(_) => (
            cwd.canonicalize().unwrap_or_else(|_| cwd.to_path_buf()),
            None,
        ),
    }
}
