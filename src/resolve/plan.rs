//! Build the `RunPlan`: the only step that reads config files and pins the target.

use super::outputs::check_destinations;
use crate::cli::{Format, RunArgs};
use crate::config::{load, Config, ConfigSources, FailOn};
use crate::errors::ExpectedError;
use crate::findings::{Role, Tier};
use crate::target::{
    apply_shard, resolve_excluding, PinnedTarget, ShardInfo, TargetError, TargetRequest,
};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The agent assigned to a role (its binary is resolved at dispatch time: a missing
/// binary is a dispatch failure, exit 3, not a usage error).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentRef {
    pub role: Role,
    pub name: String,
}

/// Where reports go besides stdout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outputs {
    pub format: Format,
    pub out: Option<PathBuf>,
    pub markdown: Option<PathBuf>,
    pub sarif: Option<PathBuf>,
    pub quiet: bool,
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
    pub config: Config,
    pub config_digest: String,
    pub runs_base: PathBuf,
    pub tier_start: Tier,
    pub passes: u32,
    pub max_rounds: u32,
    pub fail_on: FailOn,
    pub agents: [AgentRef; 3],
    /// The Enthusiast agents, used round-robin across passes (`agents[0]` is the first).
    pub enthusiasts: Vec<String>,
    pub timeout: Duration,
    pub grace: Duration,
    /// Spend limits (None = unlimited).
    pub budget_usd: Option<f64>,
    pub budget_tokens: Option<u64>,
    pub outputs: Outputs,
    /// The target as typed (for an empty run's record).
    pub display: String,
    /// `--shard i/n`: the slice reviewed and the full manifest's identity (the target above
    /// is already restricted to the slice).
    pub shard: Option<ShardInfo>,
    /// Baseline, suppressions, incremental review and the verdict cache.
    pub memory: super::MemoryPlan,
}

impl RunPlan {
    pub fn agent_for(&self, role: Role) -> &AgentRef {
        match role {
            Role::Enthusiast | Role::Fixer => &self.agents[0],
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
    let (root, git_common_dir) = discover_root(cwd);
    let sources = ConfigSources::discover(&root, args.config.clone());
    if let Some(p) = &args.config {
        if !p.is_file() {
            return Err(ExpectedError::Usage(format!(
                "--config {}: no such file",
                p.display()
            )));
        }
    }
    let (config, config_digest) = load(&sources)?;
    // `--budget-usd`, `--budget-tokens`, `--passes` and `--max-rounds` are checked by their
    // value parsers, with the bounds config validation uses (config::limits).
    if let Some(name) = &args.agent {
        config.agent(name)?;
    }
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
    let req = TargetRequest {
        args: args.targets.clone(),
        base: args.base.clone(),
        cwd: cwd.to_path_buf(),
        max_file_bytes: config.review.max_file_bytes,
    };
    let target = match resolve_excluding(&req, std::slice::from_ref(&runs_base)) {
        Ok(t) => Some(t),
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
    let root = target.as_ref().map_or(root, |t| t.root.clone());
    let memory = super::memory::resolve_memory(args, &config, &root, cwd, &runs_base)?;
    let mode = target.as_ref().map(|t| t.mode);
    let passes = args
        .passes
        .or((config.review.passes > 0).then_some(config.review.passes))
        .unwrap_or_else(|| mode.map_or(1, |m| m.passes()));
    let max_rounds = args
        .max_rounds
        .or((config.review.max_rounds > 0).then_some(config.review.max_rounds))
        .unwrap_or_else(|| mode.map_or(1, |m| m.max_rounds()));
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
    Ok(RunPlan {
        root,
        git_common_dir,
        tier_start: args.model.map_or(config.review.model, Tier::from),
        passes,
        max_rounds,
        fail_on: args.fail_on.map_or(config.review.fail_on, Into::into),
        agents,
        enthusiasts,
        timeout: config.agent_timeout()?,
        grace: config.grace()?,
        budget_usd: args
            .budget_usd
            .or((config.budget.usd > 0.0).then_some(config.budget.usd)),
        budget_tokens: args
            .budget_tokens
            .or((config.budget.tokens > 0).then_some(config.budget.tokens)),
        outputs,
        display: args.targets.join(" "),
        shard,
        memory,
        target,
        config,
        config_digest,
        runs_base,
    })
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
