//! The agent CLIs a review will dispatch: found on PATH or at `[agents.<name>] binary`, and
//! executable. A problem is one line naming the agent, the CLI, its install command and the
//! config key (with the file that set it), so that `arev run` can stop before any run dir.

use crate::config::AgentConfig;
use crate::dispatch::{resolve_binary, BackendKind, DispatchError};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The npm package of a built-in backend's CLI and the version arev is tested with (the
/// versions `.ci/run` installs): its profile's.
pub use crate::backends::Npm as Tested;

/// The tested CLI of `backend` (None for `command`, which is whatever the user points at).
pub fn tested_version(backend: BackendKind) -> Option<Tested> {
    backend.profile().npm
}

/// `npm install -g <package>@<tested version>` for a built-in backend.
pub fn install_command(backend: BackendKind) -> Option<String> {
    tested_version(backend).map(|t| format!("npm install -g {}@{}", t.package, t.version))
}

/// The agents a review would dispatch cannot run: one line per agent.
#[derive(Debug, thiserror::Error)]
pub enum PreflightError {
    #[error("{}", .0.join("\n"))]
    Agents(Vec<String>),
    /// `--prove` outside a git repository with a commit (the path named).
    #[error(
        "--prove runs each reproducer in a checkout of the reviewed repository, and {} is \
         not a git repository with a commit: review inside one, or drop --prove",
        .0.display()
    )]
    ProveNeedsCommit(PathBuf),
    /// The `--prove` sandbox cannot start here.
    #[error(transparent)]
    Sandbox(#[from] crate::prove::ProveError),
}

impl From<PreflightError> for crate::errors::ExpectedError {
    fn from(e: PreflightError) -> Self {
        Self::Preflight(Box::new(e))
    }
}

/// Check the agents `plan` dispatches: the Enthusiasts (every pass's), the Adversary and the
/// Judge (the Fixer is the first Enthusiast's agent).
pub fn check_plan(plan: &crate::resolve::RunPlan) -> Result<(), PreflightError> {
    let names = plan
        .enthusiasts
        .iter()
        .chain(plan.agents.iter().map(|a| &a.name))
        .map(String::as_str);
    check_agents(&plan.settings.agents, names.clone(), &plan.binary_origins)?;
    let unnamed = plan
        .target
        .as_ref()
        .and_then(|t| t.context.as_ref())
        .and_then(|c| c.unnamed().next().map(|(p, _)| p.to_vec()));
    match unnamed {
        Some(path) => check_unnamed(&plan.settings.agents, names, &path),
        None => Ok(()),
    }
}

/// The paths outside the context scope hold `path`, a name no permission rule can hold:
/// each agent of `names` must be able to run in its view (docs/contracts.md §22.1), or the
/// run stops here, naming the path (escaped) and the fix.
fn check_unnamed<'a>(
    agents: &BTreeMap<String, AgentConfig>,
    names: impl IntoIterator<Item = &'a str>,
    path: &[u8],
) -> Result<(), PreflightError> {
    let mut seen: Vec<BackendKind> = vec![];
    let mut problems = vec![];
    for name in names {
        let Some(agent) = agents.get(name) else {
            continue;
        };
        if seen.contains(&agent.backend) {
            continue;
        }
        seen.push(agent.backend);
        if let Err(e) = agent.backend.backend().check_unnamed_view() {
            problems.push(format!(
                "agent `{name}` ({} backend): the repository holds `{}` outside the context \
                 scope, a name no permission rule can hold: {e}",
                agent.backend.as_str(),
                path.escape_ascii()
            ));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(PreflightError::Agents(problems))
    }
}

/// Check that every agent named in `names` (each once) has its CLI: exit 2 material when one
/// is missing or not executable. `origins`: the config file that set each agent's `binary`
/// (absent: the embedded default).
pub fn check_agents<'a>(
    agents: &BTreeMap<String, AgentConfig>,
    names: impl IntoIterator<Item = &'a str>,
    origins: &BTreeMap<String, PathBuf>,
) -> Result<(), PreflightError> {
    let mut seen: Vec<&str> = vec![];
    let mut problems = vec![];
    let mut wraps = vec![];
    for name in names {
        if seen.contains(&name) {
            continue;
        }
        seen.push(name);
        // An unknown agent name is a config error, reported by `resolve` already.
        let Some(agent) = agents.get(name) else {
            continue;
        };
        if let Err(p) = binary_of(name, agent, origins.get(name).map(PathBuf::as_path)) {
            problems.push(p.to_string());
        } else if let Err(e) = wrap_of(agent.backend, &mut wraps) {
            problems.push(format!(
                "agent `{name}` ({} backend): {e}",
                agent.backend.as_str()
            ));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(PreflightError::Agents(problems))
    }
}

/// Whether `backend`'s CLI can be started under its wrap here (OpenCode: bubblewrap's
/// filesystem view, docs/trust.md "Round five"); each backend checked once, its answer kept
/// in `checked`.
pub(super) fn wrap_of(
    backend: BackendKind,
    checked: &mut Vec<(BackendKind, Result<(), String>)>,
) -> Result<(), String> {
    if let Some((_, r)) = checked.iter().find(|(b, _)| *b == backend) {
        return r.clone();
    }
    let r = backend.backend().check_wrap().map_err(|e| e.to_string());
    checked.push((backend, r.clone()));
    r
}

/// An agent whose CLI cannot run: the problem line, saying what is wrong and how to fix it.
#[derive(Debug, thiserror::Error)]
#[error("agent `{name}` ({backend} backend): {why} — {fix}")]
pub struct MissingCli {
    pub name: String,
    pub backend: &'static str,
    /// Not executable, does not exist, not on PATH.
    pub why: String,
    /// The install command, or the config key to fix (with the file that set it).
    pub fix: String,
}

/// The CLI's path, or what is wrong with it.
pub(super) fn binary_of(
    name: &str,
    agent: &AgentConfig,
    origin: Option<&Path>,
) -> Result<PathBuf, MissingCli> {
    let why = match resolve_binary(&agent.binary) {
        Ok(p) => return Ok(p),
        Err(DispatchError::NotExecutable(p)) => format!("{} is not executable", p.display()),
        Err(_) if agent.binary.contains('/') => format!("{} does not exist", agent.binary),
        Err(_) => format!("`{}` is not on PATH", agent.binary),
    };
    let key = format!("[agents.{name}] binary");
    let set_in = match origin {
        Some(f) => format!("{key} = {:?} (set in {})", agent.binary, f.display()),
        None => format!("{key} (arev.toml)"),
    };
    let fix = match (install_command(agent.backend), origin) {
        (Some(install), Some(_)) => format!("install it with `{install}`, or fix {set_in}"),
        (Some(install), None) => {
            format!("install it with `{install}`, or point {set_in} at it")
        }
        (None, _) => format!("point {set_in} at an executable"),
    };
    Err(MissingCli {
        name: name.to_string(),
        backend: agent.backend.as_str(),
        why,
        fix,
    })
}
