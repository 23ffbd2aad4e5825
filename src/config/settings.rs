//! `Settings`: the configuration parsed and checked once, at load — durations as `Duration`,
//! sizes in bytes, paths expanded — what a run, a hook and a command read, never re-parsed.
//! (`Config` is the file's shape: the layers merge into it, its digest keys the verdict
//! cache, `schemas/config.schema.json` describes it.)

use super::limits::parse_duration;
use super::model::{
    AgentConfig, CacheConfig, Config, HookConfig, HookMode, LocalizationConfig, ModelPrice,
    ProveConfig, PublishConfig, ReviewConfig, RolesConfig, RunConfig, SandboxMode, TimeoutsConfig,
};
use super::ConfigError;
use crate::records::{Role, Severity};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// The resolved configuration, every value checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub review: ReviewConfig,
    pub budget: Budget,
    pub localization: LocalizationConfig,
    pub timeouts: Timeouts,
    pub hook: HookSettings,
    pub run: RunConfig,
    pub cache: CacheConfig,
    pub prove: ProveSettings,
    pub publish: PublishConfig,
    pub agents: BTreeMap<String, AgentConfig>,
    /// `[agents.<name>] timeout`, for the agents that set one.
    agent_timeouts: BTreeMap<String, Duration>,
    pub roles: RolesConfig,
    pub prices: BTreeMap<String, ModelPrice>,
}

/// `[budget]`: `None` = no limit (the file's 0).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Budget {
    pub usd: Option<f64>,
    pub tokens: Option<u64>,
}

/// `[timeouts]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// Wall-clock limit per agent dispatch.
    pub agent: Duration,
    /// SIGTERM → SIGKILL delay.
    pub grace: Duration,
    /// `--verify CMD` (iterate mode).
    pub verify: Duration,
    /// How long transient API faults are retried.
    pub retry: Duration,
    /// One run of a Prover's reproducer.
    pub prove: Duration,
    pub enthusiast: RoleLimits,
    pub adversary: RoleLimits,
    pub judge: RoleLimits,
    pub fixer: RoleLimits,
    /// The Prover's dispatch (its reproducer's runs are `prove` above).
    pub prover: RoleLimits,
}

/// `[timeouts.<role>]`: `None` = not overridden.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RoleLimits {
    pub agent: Option<Duration>,
    pub grace: Option<Duration>,
}

impl Timeouts {
    /// The overrides of `role`.
    pub fn of(&self, role: Role) -> RoleLimits {
        match role {
            Role::Enthusiast => self.enthusiast,
            Role::Adversary => self.adversary,
            Role::Judge => self.judge,
            Role::Fixer => self.fixer,
            Role::Prover => self.prover,
        }
    }
}

/// `[hook]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookSettings {
    pub mode: HookMode,
    pub prefix: String,
    pub max_nudges: u32,
    pub max_blocks: u32,
    /// Wall-clock limit of one Stop-hook review.
    pub timeout: Duration,
}

/// `[prove]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProveSettings {
    pub sandbox: SandboxMode,
    pub env: Vec<String>,
    /// Absolute, normal paths (`~/` expanded against `$HOME` at load).
    pub bind_ro: Vec<PathBuf>,
    /// The address-space limit of a reproducer, in bytes.
    pub memory: u64,
    pub min_severity: Severity,
    pub max_findings: u32,
}

impl Settings {
    /// Parse and check `config` (every layer merged): the first bad value is the error,
    /// naming its key.
    pub fn new(config: Config) -> Result<Settings, ConfigError> {
        super::limits::check(&config)?;
        check_agents(&config)?;
        let timeouts = timeouts(&config.timeouts)?;
        let hook = hook(&config.hook, timeouts.grace)?;
        let prove = prove(&config.prove)?;
        if config.review.max_output_bytes == 0 {
            return Err(ConfigError::Invalid {
                key: "review.max_output_bytes".into(),
                message: "must be greater than 0".into(),
            });
        }
        for g in &config.review.context_exclude {
            if let Err(e) = globset::Glob::new(g) {
                return Err(ConfigError::Invalid {
                    key: "review.context_exclude".into(),
                    message: format!("{g:?}: {}", e.kind()),
                });
            }
        }
        let mut agent_timeouts = BTreeMap::new();
        for (name, a) in &config.agents {
            if let Some(t) = &a.timeout {
                agent_timeouts.insert(
                    name.clone(),
                    parse_duration(&format!("agents.{name}.timeout"), t)?,
                );
            }
        }
        let b = config.budget;
        Ok(Settings {
            review: config.review,
            budget: Budget {
                usd: (b.usd != 0.0).then_some(b.usd),
                tokens: (b.tokens != 0).then_some(b.tokens),
            },
            localization: config.localization,
            timeouts,
            hook,
            run: config.run,
            cache: config.cache,
            prove,
            publish: config.publish,
            agents: config.agents,
            agent_timeouts,
            roles: config.roles,
            prices: config.prices,
        })
    }

    /// The agent named `name`, or an error listing the configured ones.
    pub fn agent(&self, name: &str) -> Result<&AgentConfig, ConfigError> {
        agent(&self.agents, name)
    }

    /// The per-dispatch timeout of agent `name`, when it sets its own.
    pub fn agent_timeout(&self, name: &str) -> Option<Duration> {
        self.agent_timeouts.get(name).copied()
    }
}

fn agent<'a>(
    agents: &'a BTreeMap<String, AgentConfig>,
    name: &str,
) -> Result<&'a AgentConfig, ConfigError> {
    agents.get(name).ok_or_else(|| ConfigError::UnknownAgent {
        name: name.to_string(),
        known: agents.keys().cloned().collect::<Vec<_>>().join(", "),
    })
}

/// Each agent's backend/format pair and binary; every role names a configured agent.
fn check_agents(config: &Config) -> Result<(), ConfigError> {
    for (name, a) in &config.agents {
        match (a.backend.native_format(), a.format) {
            (None, None) => {
                return Err(ConfigError::Invalid {
                    key: format!("agents.{name}.format"),
                    message: "a `command` agent must declare the event format it prints: \
                              \"claude\", \"codex\" or \"gemini\""
                        .into(),
                })
            }
            (None, Some(_)) | (_, None) => {}
            (Some(_), Some(_)) => {
                return Err(ConfigError::Invalid {
                    key: format!("agents.{name}.format"),
                    message: format!(
                        "only for backend = \"command\" (backend `{}` prints its own format)",
                        a.backend.as_str()
                    ),
                })
            }
        }
        config.check_endpoint(name, a)?;
        if a.binary.trim().is_empty() {
            return Err(ConfigError::Invalid {
                key: format!("agents.{name}.binary"),
                message: "must name an executable (on PATH or a path)".into(),
            });
        }
    }
    let enthusiasts = config.roles.enthusiast.names();
    if enthusiasts.is_empty() {
        return Err(ConfigError::Invalid {
            key: "roles.enthusiast".into(),
            message: "must name at least one agent".into(),
        });
    }
    for role in enthusiasts
        .iter()
        .chain([&config.roles.adversary, &config.roles.judge])
    {
        agent(&config.agents, role)?;
    }
    Ok(())
}

fn timeouts(t: &TimeoutsConfig) -> Result<Timeouts, ConfigError> {
    let role = |role: Role| -> Result<RoleLimits, ConfigError> {
        let r = t.of(role);
        let parse = |key: &str, v: &str| -> Result<Option<Duration>, ConfigError> {
            if v.trim().is_empty() {
                Ok(None)
            } else {
                parse_duration(&format!("timeouts.{}.{key}", role.as_str()), v).map(Some)
            }
        };
        Ok(RoleLimits {
            agent: parse("agent", &r.agent)?,
            grace: parse("grace", &r.grace)?,
        })
    };
    let agent = parse_duration("timeouts.agent", &t.agent)?;
    let grace = parse_duration("timeouts.grace", &t.grace)?;
    Ok(Timeouts {
        agent,
        grace,
        verify: parse_duration("timeouts.verify", &t.verify)?,
        retry: parse_duration("timeouts.retry", &t.retry)?,
        prove: parse_duration("timeouts.prove", &t.prove)?,
        enthusiast: role(Role::Enthusiast)?,
        adversary: role(Role::Adversary)?,
        judge: role(Role::Judge)?,
        fixer: role(Role::Fixer)?,
        prover: role(Role::Prover)?,
    })
}

/// `[hook]`. Its `timeout` must end the review (and its `grace`) before Claude Code's own
/// Stop-hook timeout ends the hook, with a margin: a review out of time is then recorded
/// `interrupted` and reported, never cut off silently.
fn hook(h: &HookConfig, grace: Duration) -> Result<HookSettings, ConfigError> {
    let timeout = parse_duration("hook.timeout", &h.timeout)?;
    let room = Duration::from_secs(super::STOP_HOOK_TIMEOUT_SECS - super::STOP_HOOK_MARGIN_SECS);
    if timeout.saturating_add(grace) > room {
        let max = room.saturating_sub(grace);
        return Err(ConfigError::Invalid {
            key: "hook.timeout".into(),
            message: format!(
                "\"{}\" plus timeouts.grace ({}) must stay within {} of the Stop hook's \
                 {} s timeout in hooks/hooks.json (a {} s margin to record and report an \
                 unfinished review); at most \"{}\"",
                h.timeout,
                humantime::format_duration(grace),
                humantime::format_duration(room),
                super::STOP_HOOK_TIMEOUT_SECS,
                super::STOP_HOOK_MARGIN_SECS,
                humantime::format_duration(max),
            ),
        });
    }
    for (key, v) in [
        ("hook.max_nudges", h.max_nudges),
        ("hook.max_blocks", h.max_blocks),
    ] {
        if v == 0 {
            return Err(ConfigError::Invalid {
                key: key.into(),
                message: "must be at least 1".into(),
            });
        }
    }
    if h.prefix.trim().is_empty() || h.prefix.contains(char::is_whitespace) {
        return Err(ConfigError::Invalid {
            key: "hook.prefix".into(),
            message: "must be one word, e.g. \"#arev\"".into(),
        });
    }
    Ok(HookSettings {
        mode: h.mode,
        prefix: h.prefix.clone(),
        max_nudges: h.max_nudges,
        max_blocks: h.max_blocks,
        timeout,
    })
}

fn prove(p: &ProveConfig) -> Result<ProveSettings, ConfigError> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let checked = super::prove::check(p, home.as_deref())?;
    Ok(ProveSettings {
        sandbox: p.sandbox,
        env: p.env.clone(),
        bind_ro: checked.bind_ro,
        memory: checked.memory,
        min_severity: p.min_severity,
        max_findings: p.max_findings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{load, ConfigSources};

    fn load_text(text: &str) -> Result<Settings, ConfigError> {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("arev.toml");
        std::fs::write(&f, text).unwrap();
        load(&ConfigSources {
            repo_file: Some(f),
            ..Default::default()
        })
        .map(|(s, _)| s)
    }

    #[test]
    fn the_defaults_are_typed() {
        let (s, _) = load(&ConfigSources::default()).unwrap();
        let t = s.timeouts;
        assert_eq!(t.agent, Duration::from_secs(600));
        assert_eq!(t.grace, Duration::from_secs(10));
        assert_eq!(t.verify, Duration::from_secs(1800));
        assert_eq!(t.retry, Duration::from_secs(120));
        assert_eq!(t.prove, Duration::from_secs(300));
        for role in [
            Role::Enthusiast,
            Role::Adversary,
            Role::Judge,
            Role::Fixer,
            Role::Prover,
        ] {
            assert_eq!(t.of(role), RoleLimits::default());
        }
        assert_eq!(s.hook.timeout, Duration::from_secs(3000));
        assert_eq!(s.budget, Budget::default());
        assert_eq!(s.agent_timeout("claude"), None);
    }

    #[test]
    fn set_values_are_parsed_once() {
        let s = load_text(
            "[timeouts]\nverify = \"90s\"\nretry = \"1m 30s\"\n[timeouts.fixer]\ngrace = \"3s\"\n\
             [budget]\nusd = 2.5\ntokens = 1000\n[agents.claude]\ntimeout = \"7m\"\n",
        )
        .unwrap();
        assert_eq!(s.timeouts.verify, Duration::from_secs(90));
        assert_eq!(s.timeouts.retry, Duration::from_secs(90));
        assert_eq!(
            s.timeouts.of(Role::Fixer),
            RoleLimits {
                agent: None,
                grace: Some(Duration::from_secs(3))
            }
        );
        assert_eq!(s.budget.usd, Some(2.5));
        assert_eq!(s.budget.tokens, Some(1000));
        assert_eq!(s.agent_timeout("claude"), Some(Duration::from_secs(420)));
    }

    /// What used to fall back to a default where it was used (the retry window, the verify
    /// limit, a role's timeouts) is refused at load, naming the key.
    #[test]
    fn every_duration_is_checked_at_load() {
        for key in ["verify", "retry", "agent", "grace", "prove"] {
            let err = load_text(&format!("[timeouts]\n{key} = \"whenever\"\n"))
                .unwrap_err()
                .to_string();
            assert!(
                err.starts_with(&format!("timeouts.{key}: `whenever` is not a duration")),
                "{err}"
            );
            let err = load_text(&format!("[timeouts]\n{key} = \"0s\"\n"))
                .unwrap_err()
                .to_string();
            assert_eq!(err, format!("timeouts.{key}: must be greater than zero"));
        }
        for role in ["enthusiast", "adversary", "judge", "fixer", "prover"] {
            for key in ["agent", "grace"] {
                let err = load_text(&format!("[timeouts.{role}]\n{key} = \"x\"\n"))
                    .unwrap_err()
                    .to_string();
                assert!(
                    err.starts_with(&format!("timeouts.{role}.{key}: `x` is not a duration")),
                    "{err}"
                );
            }
        }
        let err = load_text("[agents.claude]\ntimeout = \"x\"\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("agents.claude.timeout: `x` is not a duration"),
            "{err}"
        );
    }
}
