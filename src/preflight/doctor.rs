//! `arev doctor`: git, the config, and each agent CLI a role uses (found, its `--version`
//! against the tested one, credentials in the environment or the CLI's login file). One
//! [`Check`] per line; a `Fail` carries its fix.

use super::agents::{binary_of, install_command, tested_version};
use crate::config::{agent_key_origins, load, AgentConfig, ConfigSources, RepoSource, Settings};
use crate::dispatch::BackendKind;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long a CLI's `--version` may take (a Node CLI's first start can be slow).
const VERSION_TIMEOUT: Duration = Duration::from_secs(20);

/// The weight of one line of the doctor's report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Ready.
    Ok,
    /// Works, but not as tested (e.g. another CLI version), or cannot be verified.
    Warn,
    /// A review would fail: the line says how to fix it.
    Fail,
    /// Context (e.g. an agent no role uses).
    Info,
}

impl Level {
    pub fn tag(self) -> &'static str {
        match self {
            Self::Ok => "ok  ",
            Self::Warn => "warn",
            Self::Fail => "FAIL",
            Self::Info => "-   ",
        }
    }
}

/// One line of the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    pub level: Level,
    pub line: String,
}

impl Check {
    fn new(level: Level, line: impl Into<String>) -> Self {
        Self {
            level,
            line: line.into(),
        }
    }
}

/// Where the checked configuration comes from: `--config FILE`, and the repository's
/// config as `arev run` would take it (`--repo-config`, `AREV_REPO_CONFIG`, `--base`).
#[derive(Debug, Clone, Default)]
pub struct DoctorConfig {
    pub explicit: Option<PathBuf>,
    pub repo_config: Option<RepoSource>,
    pub base: Option<String>,
}

/// Every check for a review started in `cwd`, under the configuration `arev run` would use
/// there with the same `--config`, `--repo-config` and `--base`: a repository config that
/// a review would not read is neither loaded nor are its binaries run.
pub fn doctor(cwd: &Path, cfg: DoctorConfig) -> Vec<Check> {
    let explicit_config = cfg.explicit.clone();
    let mut checks = vec![git_check()];
    let root = match git2::Repository::discover(cwd)
        .ok()
        .and_then(|r| r.workdir().map(|w| w.components().collect::<PathBuf>()))
    {
        Some(root) => {
            checks.push(Check::new(
                Level::Info,
                format!("repository {}", root.display()),
            ));
            root
        }
        None => {
            checks.push(Check::new(
                Level::Warn,
                format!(
                    "{} is not inside a git repository: files and globs can be reviewed, \
                     `diff` and --iterate need one",
                    cwd.display()
                ),
            ));
            cwd.to_path_buf()
        }
    };
    if let Some(p) = explicit_config.as_ref().filter(|p| !p.is_file()) {
        checks.push(Check::new(
            Level::Fail,
            format!(
                "config: --config {}: no such file — name an existing file",
                p.display()
            ),
        ));
        return checks;
    }
    let inputs =
        match crate::resolve::resolve_repo_inputs(cfg.repo_config, cfg.base.as_deref(), cwd, &root)
        {
            Ok(i) => i,
            Err(e) => {
                checks.push(Check::new(Level::Fail, format!("repository config: {e}")));
                return checks;
            }
        };
    checks.push(Check::new(Level::Info, repo_line(&inputs)));
    let mut sources = ConfigSources::discover(&root, explicit_config);
    sources.repo_file = None;
    sources.repo_text = inputs.config();
    sources.repo_from_base = inputs.source == RepoSource::Base;
    let config = match load(&sources) {
        Ok((c, _)) => c,
        Err(e) => {
            checks.push(Check::new(
                Level::Fail,
                format!("config: {e} — fix that file (`arev init` writes a commented one)"),
            ));
            return checks;
        }
    };
    let files: Vec<String> = sources
        .user_file
        .iter()
        .chain(sources.repo_text.as_ref().map(|(p, _)| p))
        .chain(&sources.explicit_file)
        .map(|p| p.display().to_string())
        .collect();
    checks.push(Check::new(
        Level::Ok,
        if files.is_empty() {
            "config: the embedded defaults (no arev.toml; `arev init` writes one)".to_string()
        } else {
            format!("config: the embedded defaults + {}", files.join(" + "))
        },
    ));
    let origins = agent_key_origins(&sources, "binary");
    for (name, agent) in &config.agents {
        let roles = roles_of(&config, name);
        if roles.is_empty() {
            checks.push(Check::new(
                Level::Info,
                format!("agent `{name}`: no role uses it (not checked)"),
            ));
            continue;
        }
        checks.extend(agent_checks(
            name,
            agent,
            &roles,
            origins.get(name).map(PathBuf::as_path),
        ));
    }
    checks
}

/// Which repository config the checks use (`--repo-config`).
fn repo_line(inputs: &crate::resolve::RepoInputs) -> String {
    match (inputs.source, &inputs.commit) {
        (RepoSource::Base, Some(c)) => format!(
            "repository config: from the merge-base {} (--repo-config base)",
            &c[..c.len().min(12)]
        ),
        (RepoSource::Ignore, _) => "repository config: ignored (--repo-config ignore)".to_string(),
        _ => "repository config: the working tree's (--repo-config worktree)".to_string(),
    }
}

fn git_check() -> Check {
    match Command::new("git")
        .arg("--version")
        .stdin(Stdio::null())
        .output()
    {
        Ok(o) if o.status.success() => Check::new(
            Level::Ok,
            String::from_utf8_lossy(&o.stdout).trim().to_string(),
        ),
        Ok(o) => Check::new(
            Level::Fail,
            format!(
                "`git --version` failed ({}) — reinstall git",
                o.status
                    .code()
                    .map_or("killed".into(), |c| format!("exit {c}"))
            ),
        ),
        Err(e) => Check::new(
            Level::Fail,
            format!("git cannot be run ({e}) — install git (https://git-scm.com/downloads)"),
        ),
    }
}

/// The roles that dispatch agent `name`.
fn roles_of(config: &Settings, name: &str) -> Vec<&'static str> {
    let mut roles = vec![];
    let enthusiasts = config.roles.enthusiast.names();
    if enthusiasts.iter().any(|n| n == name) {
        roles.push("enthusiast");
    }
    if config.roles.adversary == name {
        roles.push("adversary");
    }
    if config.roles.judge == name {
        roles.push("judge");
    }
    if enthusiasts.first().is_some_and(|n| n == name) {
        roles.push("fixer");
    }
    roles
}

/// Found, version, credentials of one agent a role uses.
fn agent_checks(
    name: &str,
    agent: &AgentConfig,
    roles: &[&str],
    origin: Option<&Path>,
) -> Vec<Check> {
    let who = format!(
        "agent `{name}` ({}; {})",
        agent.backend.as_str(),
        roles.join(", ")
    );
    let path = match binary_of(name, agent, origin) {
        Ok(p) => p,
        Err(problem) => return vec![Check::new(Level::Fail, problem.to_string())],
    };
    let mut checks = vec![version_check(&who, agent.backend, &path)];
    if let Err(e) = super::agents::wrap_of(agent.backend, &mut vec![]) {
        checks.push(Check::new(Level::Fail, format!("{who}: {e}")));
    }
    // A self-hosted endpoint: it answers (with its key), instead of the vendor's credentials.
    if let Some((level, line)) = super::endpoint::endpoint_check(&who, agent) {
        let level = match level {
            super::endpoint::Level::Ok => Level::Ok,
            super::endpoint::Level::Warn => Level::Warn,
            super::endpoint::Level::Fail => Level::Fail,
        };
        checks.push(Check::new(level, line));
    } else if let Some(c) = credentials_check(&who, agent) {
        checks.push(c);
    }
    checks
}

/// `<cli> --version` against the tested version.
fn version_check(who: &str, backend: BackendKind, path: &Path) -> Check {
    let Some(tested) = tested_version(backend) else {
        return Check::new(Level::Ok, format!("{who}: {}", path.display()));
    };
    let reinstall = install_command(backend).unwrap_or_default();
    let version = match run_version(path) {
        Ok(v) => v,
        Err(why) => {
            return Check::new(
                Level::Fail,
                format!(
                    "{who}: {} is broken: `--version` {why} — reinstall it with `{reinstall}`",
                    path.display()
                ),
            )
        }
    };
    match parse_version(&version) {
        Some(v) if v == tested.version => Check::new(
            Level::Ok,
            format!("{who}: {} {v} (the tested version)", path.display()),
        ),
        Some(v) => Check::new(
            Level::Warn,
            format!(
                "{who}: {} {v}, arev is tested with {} — `{reinstall}` installs that one",
                path.display(),
                tested.version
            ),
        ),
        None => Check::new(
            Level::Warn,
            format!(
                "{who}: {} printed no version ({:?}); arev is tested with {} — `{reinstall}`",
                path.display(),
                version.trim(),
                tested.version
            ),
        ),
    }
}

/// Why `<cli> --version` did not work.
#[derive(Debug, thiserror::Error)]
enum VersionError {
    #[error("cannot start: {0}")]
    Start(#[source] std::io::Error),
    #[error("did not answer within {0} s")]
    Timeout(u64),
    #[error("cannot be waited for: {0}")]
    Wait(#[source] std::io::Error),
    #[error("cannot be read: {0}")]
    Read(#[source] std::io::Error),
    /// It exited unsuccessfully: how, and the first line of its stderr (`: …` or empty).
    #[error("failed ({status}{first_line})")]
    Failed { status: String, first_line: String },
}

/// What `<path> --version` printed, or why it did not work (within [`VERSION_TIMEOUT`]).
fn run_version(path: &Path) -> Result<String, VersionError> {
    let mut child = Command::new(path)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(VersionError::Start)?;
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if started.elapsed() > VERSION_TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(VersionError::Timeout(VERSION_TIMEOUT.as_secs()));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(VersionError::Wait(e)),
        }
    }
    let out = child.wait_with_output().map_err(VersionError::Read)?;
    if out.status.success() {
        return Ok(String::from_utf8_lossy(&out.stdout).into_owned());
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let first = stderr.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    Err(VersionError::Failed {
        status: out
            .status
            .code()
            .map_or("killed by a signal".into(), |c| format!("exit {c}")),
        first_line: if first.is_empty() {
            String::new()
        } else {
            format!(": {}", first.trim())
        },
    })
}

/// The first `N.N.N` token of a `--version` line (`2.1.330 (Claude Code)`,
/// `codex-cli 0.169.0`, `0.61.0`).
fn parse_version(text: &str) -> Option<&str> {
    text.split(|c: char| c.is_whitespace() || c == '(' || c == ')')
        .map(|t| t.trim_start_matches('v'))
        .find(|t| {
            let parts: Vec<&str> = t.split('.').collect();
            let digits = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
            parts.len() >= 3
                && digits(parts[0])
                && digits(parts[1])
                && parts[2].starts_with(|c: char| c.is_ascii_digit())
        })
}

fn env_set(name: &str) -> bool {
    std::env::var_os(name).is_some_and(|v| !v.is_empty() && v != "0")
}

/// Credentials of a built-in backend: environment variables the CLI reads, or its login
/// file. `None` for a `command` agent (arev cannot know what it needs).
fn credentials_check(who: &str, agent: &AgentConfig) -> Option<Check> {
    let creds = agent.backend.profile().credentials?;
    let (vars, fix) = (creds.vars, creds.fix);
    let file = creds.login_file(|k| std::env::var_os(k));
    // A custom provider's key is named in the agent's `pass_env`.
    let named = agent.pass_env.iter().map(String::as_str);
    if let Some(v) = vars.iter().copied().chain(named).find(|v| env_set(v)) {
        return Some(Check::new(
            Level::Ok,
            format!("{who}: credentials from {v}"),
        ));
    }
    if let Some(f) = file.filter(|f| f.is_file()) {
        return Some(Check::new(
            Level::Ok,
            format!("{who}: credentials from the CLI's login ({})", f.display()),
        ));
    }
    // Claude Code keeps a login on macOS in the keychain, which arev does not read.
    if creds.keychain_on_macos && cfg!(target_os = "macos") {
        return Some(Check::new(
            Level::Warn,
            format!(
                "{who}: no API key in the environment; a login in the macOS keychain cannot be \
                 checked — if `claude -p hi` answers, you are set, else {fix}"
            ),
        ));
    }
    Some(Check::new(
        Level::Fail,
        format!("{who}: no credentials — {fix}"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_read_from_each_clis_line() {
        assert_eq!(parse_version("2.1.330 (Claude Code)\n"), Some("2.1.330"));
        assert_eq!(parse_version("codex-cli 0.169.0"), Some("0.169.0"));
        assert_eq!(parse_version("0.61.0\n"), Some("0.61.0"));
        assert_eq!(parse_version("tool v1.2.3-beta"), Some("1.2.3-beta"));
        assert_eq!(parse_version("no version here 1.2"), None);
    }
}
