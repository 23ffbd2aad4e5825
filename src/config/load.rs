//! Layering: embedded defaults ← user file ← repo file ← --config ← AREV_* ← flags; unknown keys rejected.

use super::limits::parse_duration;
use super::{Config, ConfigError, Settings};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use toml::{Table, Value};

const DEFAULTS: &str = include_str!("default.toml");

/// Every key an `[agents.<name>]` table may have (values are only placeholders).
const AGENT_SHAPE: &str = r#"
backend = ""
binary = ""
format = ""
max_turns = 0
extra_args = []
timeout = ""
pass_env = []
fallback_model = ""
base_url = ""
api_key_env = ""
[models]
haiku = ""
sonnet = ""
opus = ""
"#;

/// Every key a `[prices."<model>"]` table may have (values are only placeholders).
const PRICE_SHAPE: &str = r#"
input = 0.0
output = 0.0
cache_read = 0.0
cache_write = 0.0
"#;

/// The embedded, commented defaults (what `arev init` starts from).
pub fn default_toml() -> &'static str {
    DEFAULTS
}

/// The `AREV_*` variables that set config keys: (variable, table, key).
pub const ENV_KEYS: &[(&str, &str, &str)] = &[
    ("AREV_AGENT_TIMEOUT", "timeouts", "agent"),
    ("AREV_AGENT_GRACE", "timeouts", "grace"),
    ("AREV_RETRY_WINDOW", "timeouts", "retry"),
    ("AREV_MODEL", "review", "model"),
    ("AREV_FAIL_ON", "review", "fail_on"),
    ("AREV_RUN_DIR", "run", "dir"),
];

/// Where configuration may come from. Built by `resolve` (the only place that does I/O).
#[derive(Debug, Clone, Default)]
pub struct ConfigSources {
    /// `~/.config/arev/config.toml`, if it exists.
    pub user_file: Option<PathBuf>,
    /// `<repo>/arev.toml` or `<repo>/.arev/config.toml`, if it exists.
    pub repo_file: Option<PathBuf>,
    /// The repository's config layer as already read (where it came from, e.g.
    /// `<base commit>:arev.toml`, and its text); replaces `repo_file` when set
    /// (`--repo-config`, see `resolve::RepoInputs`).
    pub repo_text: Option<(PathBuf, String)>,
    /// `--config FILE` (must exist).
    pub explicit_file: Option<PathBuf>,
    /// The repository's layer comes from the merge-base (`--repo-config base`): it may not
    /// name where reviewers send the code (`config/endpoint.rs`).
    pub repo_from_base: bool,
    /// `AREV_*` variables (name, value).
    pub env: Vec<(String, String)>,
}

impl ConfigSources {
    /// Discover the user and repo files for `root`, and read `AREV_*` from the environment.
    pub fn discover(root: &Path, explicit: Option<PathBuf>) -> Self {
        let user_file = crate::xdg::config_home()
            .map(|d| d.join("arev").join("config.toml"))
            .filter(|p| p.is_file());
        let repo_file = [
            root.join("arev.toml"),
            root.join(".arev").join("config.toml"),
        ]
        .into_iter()
        .find(|p| p.is_file());
        Self {
            user_file,
            repo_file,
            repo_text: None,
            explicit_file: explicit,
            repo_from_base: false,
            env: arev_env(),
        }
    }
}

/// The `AREV_*` variables (a non-UTF-8 value is kept lossily, so that its check names it).
pub fn arev_env() -> Vec<(String, String)> {
    std::env::vars_os()
        .filter_map(|(k, v)| {
            let k = k.into_string().ok()?;
            k.starts_with("AREV_")
                .then(|| (k, v.to_string_lossy().into_owned()))
        })
        .collect()
}

/// The config file that last set `key` of each `[agents.<name>]` table (agents whose key
/// only the embedded defaults set are absent): for messages that name the file to fix.
/// Layers that cannot be read or parsed are skipped (`load` reports them).
pub fn agent_key_origins(sources: &ConfigSources, key: &str) -> BTreeMap<String, PathBuf> {
    let mut layers: Vec<(PathBuf, Option<String>)> = vec![];
    if let Some(p) = &sources.user_file {
        layers.push((p.clone(), std::fs::read_to_string(p).ok()));
    }
    match (&sources.repo_text, &sources.repo_file) {
        (Some((p, t)), _) => layers.push((p.clone(), Some(t.clone()))),
        (None, Some(p)) => layers.push((p.clone(), std::fs::read_to_string(p).ok())),
        (None, None) => {}
    }
    if let Some(p) = &sources.explicit_file {
        layers.push((p.clone(), std::fs::read_to_string(p).ok()));
    }
    let mut origins = BTreeMap::new();
    for (path, text) in layers {
        let Some(Ok(layer)) = text.map(|t| t.parse::<Table>()) else {
            continue;
        };
        if let Some(Value::Table(agents)) = layer.get("agents") {
            for (name, a) in agents {
                if a.get(key).is_some() {
                    origins.insert(name.clone(), path.clone());
                }
            }
        }
    }
    origins
}

/// Load and merge every layer into one `Config`, parsed and checked into `Settings`, with
/// the digest of the merged `Config`.
pub fn load(sources: &ConfigSources) -> Result<(Settings, String), ConfigError> {
    let defaults: Table = DEFAULTS
        .parse()
        .map_err(|e: toml::de::Error| ConfigError::Parse {
            path: PathBuf::from("<embedded defaults>"),
            message: one_line(&e.to_string()),
        })?;
    let mut merged = defaults.clone();
    let read = |path: &PathBuf| -> Result<(PathBuf, String), ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError::Read {
            path: path.clone(),
            message: e.to_string(),
        })?;
        Ok((path.clone(), text))
    };
    let mut layers = vec![];
    if let Some(p) = &sources.user_file {
        layers.push(read(p)?);
    }
    // The repository's layer (the index in `layers`), which may not set trusted keys.
    let repo_layer = match (&sources.repo_text, &sources.repo_file) {
        (None, None) => None,
        _ => Some(layers.len()),
    };
    match (&sources.repo_text, &sources.repo_file) {
        (Some(t), _) => layers.push(t.clone()),
        (None, Some(p)) => {
            // A repository input is never a way to read a file outside the repository.
            if std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink()) {
                return Err(ConfigError::Read {
                    path: p.clone(),
                    message: "a symbolic link; a repository config must be a regular file".into(),
                });
            }
            layers.push(read(p)?)
        }
        (None, None) => {}
    }
    if let Some(p) = &sources.explicit_file {
        layers.push(read(p)?);
    }
    // Which layer last set each agent's `extra_args` (arrays replace, so that file owns them).
    let mut args_origin: std::collections::BTreeMap<String, PathBuf> = Default::default();
    // The repository layer's context keys, applied last: they may only narrow.
    let mut repo_context: Option<(PathBuf, Table)> = None;
    for (i, (path, text)) in layers.iter().enumerate() {
        let path = path.clone();
        let mut layer: Table = text
            .parse()
            .map_err(|e: toml::de::Error| ConfigError::Parse {
                path: path.clone(),
                message: one_line(&e.to_string()),
            })?;
        check_keys(&layer, &defaults, "", &path)?;
        check_argv_values(&layer, &path)?;
        if repo_layer == Some(i) {
            super::prove::check_repository_layer(&layer, &path)?;
            check_trusted_only(&layer, &path)?;
            if sources.repo_from_base {
                super::endpoint::check_repository_layer(&layer, &path)?;
            }
            repo_context = Some((path.clone(), take_context_keys(&mut layer)));
        }
        if let Some(Value::Table(agents)) = layer.get("agents") {
            for (name, a) in agents {
                if a.get("extra_args").is_some() {
                    args_origin.insert(name.clone(), path.clone());
                }
            }
        }
        merge(&mut merged, layer);
        // Type errors are attributed to the layer that introduced them.
        Config::deserialize_table(&merged, &path)?;
    }
    if let Some((path, keys)) = repo_context {
        narrow_context(&mut merged, keys, &path)?;
    }
    apply_env(&mut merged, &sources.env)?;
    let config = Config::deserialize_table(&merged, Path::new("<environment>"))?;
    for (name, a) in &config.agents {
        if let Err(v) = crate::backends::check_floor(a.backend, &a.extra_args) {
            return Err(ConfigError::Floor {
                path: args_origin
                    .get(name)
                    .cloned()
                    .unwrap_or_else(|| PathBuf::from("<embedded defaults>")),
                agent: name.clone(),
                backend: a.backend.as_str(),
                arg: v.arg,
                why: v.why,
            });
        }
    }
    let digest = config.digest();
    Ok((Settings::new(config)?, digest))
}

/// The values of a layer arev places in an agent's argv as they are — the tier models
/// (`[agents.<a>.models]`, and the `{model}` of a `command` agent's `extra_args`) and
/// `fallback_model` —, refused when they start with `-`: no CLI may read one as an option
/// (a model `--attach=<host>` would send an OpenCode session elsewhere). Checked in every
/// layer, so the error names the file that set it.
fn check_argv_values(layer: &Table, path: &Path) -> Result<(), ConfigError> {
    let Some(Value::Table(agents)) = layer.get("agents") else {
        return Ok(());
    };
    for (name, agent) in agents {
        let Value::Table(agent) = agent else {
            continue;
        };
        let mut values: Vec<(String, &Value)> = vec![];
        if let Some(Value::Table(models)) = agent.get("models") {
            values.extend(
                models
                    .iter()
                    .map(|(tier, v)| (format!("[agents.{name}.models] {tier}"), v)),
            );
        }
        if let Some(v) = agent.get("fallback_model") {
            values.push((format!("[agents.{name}] fallback_model"), v));
        }
        for (key, v) in values {
            if let Value::String(s) = v {
                if s.starts_with('-') {
                    return Err(ConfigError::OptionLike {
                        path: path.to_path_buf(),
                        key,
                        value: s.clone(),
                    });
                }
            }
        }
    }
    Ok(())
}

/// `[review] context` and `context_exclude` taken out of a repository layer (see
/// [`narrow_context`]).
fn take_context_keys(layer: &mut Table) -> Table {
    let mut out = Table::new();
    if let Some(Value::Table(review)) = layer.get_mut("review") {
        for key in ["context", "context_exclude"] {
            if let Some(v) = review.remove(key) {
                out.insert(key.to_owned(), v);
            }
        }
    }
    out
}

/// Apply a repository layer's context keys to the merged trusted configuration so that they
/// can only narrow what reviewers may read (docs/configuration.md `[review] context`):
/// `context = "target"` wins over `tree`, never the reverse, and `context_exclude` globs add
/// to the trusted ones instead of replacing them (arrays replace in every other merge).
fn narrow_context(merged: &mut Table, keys: Table, path: &Path) -> Result<(), ConfigError> {
    let bad = |message: String| ConfigError::Parse {
        path: path.to_path_buf(),
        message,
    };
    let review = match merged
        .entry("review")
        .or_insert_with(|| Value::Table(Table::new()))
    {
        Value::Table(t) => t,
        _ => return Err(bad("`review` is not a table".into())),
    };
    if let Some(v) = keys.get("context") {
        let mode: super::ContextMode = v.clone().try_into().map_err(|e: toml::de::Error| {
            bad(format!("review.context: {}", one_line(&e.to_string())))
        })?;
        if mode == super::ContextMode::Target {
            review.insert("context".into(), Value::String(mode.as_str().into()));
        }
    }
    if let Some(v) = keys.get("context_exclude") {
        let globs: Vec<String> = v.clone().try_into().map_err(|e: toml::de::Error| {
            bad(format!(
                "review.context_exclude: {}",
                one_line(&e.to_string())
            ))
        })?;
        let entry = review
            .entry("context_exclude")
            .or_insert_with(|| Value::Array(vec![]));
        if let Value::Array(a) = entry {
            for g in globs {
                let g = Value::String(g);
                if !a.contains(&g) {
                    a.push(g);
                }
            }
        }
    }
    Ok(())
}

/// Keys only trusted config (the user's file, `--config`) may set: who may dismiss findings
/// on a pull request is never up to the repository the pull request changes.
const TRUSTED_ONLY: &[(&str, &str)] = &[("publish", "dismiss_by")];

fn check_trusted_only(layer: &Table, path: &Path) -> Result<(), ConfigError> {
    for (table, key) in TRUSTED_ONLY {
        if layer.get(*table).and_then(|t| t.get(*key)).is_some() {
            return Err(ConfigError::TrustedOnly {
                path: path.to_path_buf(),
                key: format!("{table}.{key}"),
            });
        }
    }
    Ok(())
}

impl Config {
    /// The merged table as a `Config`; a type error is toml's, on one line, attributed to
    /// `layer` (the one that introduced it).
    fn deserialize_table(t: &Table, layer: &Path) -> Result<Config, ConfigError> {
        Value::Table(t.clone())
            .try_into()
            .map_err(|e: toml::de::Error| ConfigError::Parse {
                path: layer.to_path_buf(),
                message: one_line(&e.to_string()),
            })
    }

    /// sha256 of the canonical JSON of the resolved config.
    pub fn digest(&self) -> String {
        let json = serde_json::to_vec(self).unwrap_or_default();
        hex::encode(Sha256::digest(&json))
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Reject keys that the defaults do not have. `agents.<name>` and `prices.<model>` are open
/// (any name): every agent table is checked against `AGENT_SHAPE`, every price against
/// `PRICE_SHAPE`.
fn check_keys(layer: &Table, known: &Table, prefix: &str, path: &Path) -> Result<(), ConfigError> {
    let agent_shape: Value = Value::Table(AGENT_SHAPE.parse().unwrap_or_default());
    let price_shape: Value = Value::Table(PRICE_SHAPE.parse().unwrap_or_default());
    for (k, v) in layer {
        let key = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        let shape = match prefix {
            "agents" => Some(&agent_shape),
            "prices" => Some(&price_shape),
            _ => known.get(k),
        };
        let Some(shape) = shape else {
            return Err(ConfigError::UnknownKey {
                path: path.to_path_buf(),
                key,
            });
        };
        if let (Value::Table(sub), Value::Table(sub_known)) = (v, shape) {
            check_keys(sub, sub_known, &key, path)?;
        }
    }
    Ok(())
}

/// Deep-merge `over` into `base` (tables merge, everything else replaces).
fn merge(base: &mut Table, over: Table) {
    for (k, v) in over {
        match (base.get_mut(&k), v) {
            (Some(Value::Table(b)), Value::Table(o)) => merge(b, o),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

fn apply_env(merged: &mut Table, env: &[(String, String)]) -> Result<(), ConfigError> {
    for (var, value) in env {
        let Some((_, table, key)) = ENV_KEYS.iter().find(|(v, _, _)| v == var) else {
            continue;
        };
        let env_err = |message: String| ConfigError::Env {
            var: var.clone(),
            value: value.clone(),
            message,
        };
        match *table {
            "timeouts" => {
                parse_duration(key, value).map_err(|e| env_err(e.to_string()))?;
            }
            "review" => {
                let ok = match *key {
                    "model" => Value::String(value.clone())
                        .try_into::<crate::records::Tier>()
                        .is_ok(),
                    _ => Value::String(value.clone())
                        .try_into::<super::FailOn>()
                        .is_ok(),
                };
                if !ok {
                    let allowed = if *key == "model" {
                        "haiku, sonnet, opus"
                    } else {
                        "critical, high, medium, low, never"
                    };
                    return Err(env_err(format!("expected one of {allowed}")));
                }
            }
            _ => {}
        }
        if let Some(Value::Table(t)) = merged.get_mut(*table) {
            t.insert((*key).into(), Value::String(value.clone()));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn defaults_load() {
        let (c, digest) = load(&ConfigSources::default()).unwrap();
        assert_eq!(c.review.fail_on, super::super::FailOn::High);
        assert_eq!(c.timeouts.agent, Duration::from_secs(600));
        assert_eq!(digest.len(), 64);
    }

    #[test]
    fn layers_override_in_order() {
        let d = tempfile::tempdir().unwrap();
        let user = write(
            d.path(),
            "u.toml",
            "[review]\nfail_on = \"low\"\npasses = 3\n",
        );
        let repo = write(d.path(), "r.toml", "[review]\npasses = 4\n");
        let src = ConfigSources {
            user_file: Some(user),
            repo_file: Some(repo),
            repo_text: None,
            explicit_file: None,
            repo_from_base: false,
            env: vec![("AREV_AGENT_TIMEOUT".into(), "2s".into())],
        };
        let (c, _) = load(&src).unwrap();
        assert_eq!(c.review.passes, 4);
        assert_eq!(c.review.fail_on, super::super::FailOn::Low);
        assert_eq!(c.timeouts.agent, Duration::from_secs(2));
    }

    #[test]
    fn hook_timeout_must_leave_a_margin_below_the_stop_hooks_timeout() {
        let d = tempfile::tempdir().unwrap();
        let load_with = |text: &str| {
            let f = write(d.path(), "h.toml", text);
            load(&ConfigSources {
                repo_file: Some(f),
                ..Default::default()
            })
        };
        // The default and the largest allowed value load.
        let (c, _) = load(&ConfigSources::default()).unwrap();
        assert!(
            c.hook.timeout + c.timeouts.grace
                <= Duration::from_secs(super::super::STOP_HOOK_TIMEOUT_SECS - 120)
        );
        load_with("[hook]\ntimeout = \"57m 50s\"\n").unwrap();
        let err = load_with("[hook]\ntimeout = \"59m\"\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("hook.timeout: \"59m\" plus timeouts.grace (10s)")
                && err.contains("3600 s timeout in hooks/hooks.json")
                && err.ends_with("at most \"57m 50s\""),
            "{err}"
        );
        // A longer grace takes its share.
        assert!(load_with("[hook]\ntimeout = \"57m 50s\"\n[timeouts]\ngrace = \"1m\"\n").is_err());
    }

    #[test]
    fn unknown_key_names_key_and_file() {
        let d = tempfile::tempdir().unwrap();
        let f = write(d.path(), "arev.toml", "[review]\nfial_on = \"low\"\n");
        let err = load(&ConfigSources {
            repo_file: Some(f.clone()),
            ..Default::default()
        })
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("{}: unknown key `review.fial_on`", f.display())
        );
        let g = write(
            d.path(),
            "b.toml",
            "[agents.x]\nbinary = \"x\"\nbackend = \"claude\"\nflavour = 1\n",
        );
        let err = load(&ConfigSources {
            repo_file: Some(g),
            ..Default::default()
        })
        .unwrap_err();
        assert!(
            err.to_string().ends_with("unknown key `agents.x.flavour`"),
            "{err}"
        );
    }

    #[test]
    fn bad_values_are_errors() {
        let d = tempfile::tempdir().unwrap();
        let f = write(d.path(), "a.toml", "[timeouts]\nagent = \"soon\"\n");
        let err = load(&ConfigSources {
            repo_file: Some(f),
            ..Default::default()
        })
        .unwrap_err();
        assert!(err.to_string().contains("timeouts.agent"), "{err}");
        let f = write(d.path(), "b.toml", "[review]\nmodel = \"gpt\"\n");
        assert!(load(&ConfigSources {
            repo_file: Some(f),
            ..Default::default()
        })
        .is_err());
        let f = write(d.path(), "c.toml", "[roles]\njudge = \"nobody\"\n");
        let err = load(&ConfigSources {
            repo_file: Some(f),
            ..Default::default()
        })
        .unwrap_err();
        assert!(err.to_string().contains("unknown agent `nobody`"), "{err}");
        let err = load(&ConfigSources {
            env: vec![("AREV_AGENT_GRACE".into(), "x".into())],
            ..Default::default()
        })
        .unwrap_err();
        assert!(err.to_string().starts_with("AREV_AGENT_GRACE=x"), "{err}");
    }
}

#[cfg(test)]
mod context_tests {
    use super::*;
    use crate::config::ContextMode;

    fn with_repo(user: Option<&str>, repo: &str) -> Settings {
        let d = tempfile::tempdir().unwrap();
        let user_file = user.map(|u| {
            let p = d.path().join("user.toml");
            std::fs::write(&p, u).unwrap();
            p
        });
        load(&ConfigSources {
            user_file,
            repo_text: Some((PathBuf::from("abc:arev.toml"), repo.to_string())),
            repo_from_base: true,
            ..Default::default()
        })
        .unwrap()
        .0
    }

    /// A repository layer narrows the context scope, never widens it: `target` wins over
    /// `tree` whichever layer says it, and its `context_exclude` adds to the trusted globs.
    #[test]
    fn a_repository_layer_only_narrows_the_context() {
        let s = with_repo(None, "[review]\ncontext = \"target\"\n");
        assert_eq!(s.review.context, ContextMode::Target);
        let user = "[review]\ncontext = \"target\"\ncontext_exclude = [\"secret/**\"]\n";
        let s = with_repo(
            Some(user),
            "[review]\ncontext = \"tree\"\ncontext_exclude = []\n",
        );
        assert_eq!(s.review.context, ContextMode::Target);
        assert_eq!(s.review.context_exclude, ["secret/**"]);
        let s = with_repo(
            Some("[review]\ncontext_exclude = [\"a/**\"]\n"),
            "[review]\ncontext_exclude = [\"b/**\", \"a/**\"]\n",
        );
        assert_eq!(s.review.context, ContextMode::Tree);
        assert_eq!(s.review.context_exclude, ["a/**", "b/**"]);
        let d = tempfile::tempdir().unwrap();
        let err = load(&ConfigSources {
            repo_text: Some((
                d.path().join("arev.toml"),
                "[review]\ncontext = \"all\"\n".into(),
            )),
            ..Default::default()
        })
        .unwrap_err();
        assert!(err.to_string().contains("review.context"), "{err}");
    }
}

#[cfg(test)]
mod floor_tests {
    use super::*;

    #[test]
    fn a_symlinked_repo_file_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let target = d.path().join("elsewhere.toml");
        std::fs::write(&target, "[review]\npasses = 2\n").unwrap();
        let link = d.path().join("arev.toml");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let err = load(&ConfigSources {
            repo_file: Some(link),
            ..Default::default()
        })
        .unwrap_err();
        assert!(err.to_string().contains("a symbolic link"), "{err}");
        // Your own files may be links (e.g. into a dotfiles repository).
        assert!(load(&ConfigSources {
            user_file: Some(d.path().join("arev.toml")),
            ..Default::default()
        })
        .is_ok());
    }

    #[test]
    fn a_refused_flag_names_the_flag_and_the_file_that_set_it() {
        let d = tempfile::tempdir().unwrap();
        let user = d.path().join("user.toml");
        std::fs::write(
            &user,
            "[agents.claude]\nbackend = \"claude\"\nbinary = \"claude\"\nextra_args = [\"--effort\", \"high\"]\n",
        )
        .unwrap();
        let ok = load(&ConfigSources {
            user_file: Some(user.clone()),
            ..Default::default()
        });
        assert!(ok.is_ok(), "{ok:?}");
        let repo = (
            PathBuf::from("abc123:arev.toml"),
            "[agents.claude]\nextra_args = [\"--permission-mode\", \"bypassPermissions\"]\n"
                .to_string(),
        );
        let err = load(&ConfigSources {
            user_file: Some(user.clone()),
            repo_text: Some(repo),
            ..Default::default()
        })
        .unwrap_err();
        assert!(
            err.to_string().starts_with(
                "abc123:arev.toml: agents.claude.extra_args: `--permission-mode` is not allowed \
                 for a claude agent (grants permissions)"
            ),
            "{err}"
        );
        // The backend is the merged one: a later layer that turns the agent into codex
        // makes `-s` a sandbox flag.
        let explicit = d.path().join("x.toml");
        std::fs::write(
            &explicit,
            "[agents.claude]\nbackend = \"codex\"\nextra_args = [\"-s\", \"danger-full-access\"]\n",
        )
        .unwrap();
        let err = load(&ConfigSources {
            user_file: Some(user),
            explicit_file: Some(explicit.clone()),
            ..Default::default()
        })
        .unwrap_err();
        assert!(
            err.to_string().starts_with(&format!(
                "{}: agents.claude.extra_args: `-s`",
                explicit.display()
            )),
            "{err}"
        );
    }

    #[test]
    fn a_model_that_reads_as_an_option_is_refused_naming_the_key_and_the_file() {
        for (backend, table, line, key) in [
            (
                "opencode",
                "[agents.x.models]",
                "haiku = \"--attach=http://evil:4096\"",
                "[agents.x.models] haiku",
            ),
            (
                "claude",
                "",
                "fallback_model = \"--settings={}\"",
                "[agents.x] fallback_model",
            ),
            (
                "codex",
                "[agents.x.models]",
                "opus = \"-c\"",
                "[agents.x.models] opus",
            ),
            (
                "gemini",
                "[agents.x.models]",
                "sonnet = \"--yolo\"",
                "[agents.x.models] sonnet",
            ),
            (
                "command",
                "[agents.x.models]",
                "haiku = \"-x\"",
                "[agents.x.models] haiku",
            ),
        ] {
            let base = (
                PathBuf::from("abc123:arev.toml"),
                format!("[agents.x]\nbackend = \"{backend}\"\nbinary = \"b\"\n{table}\n{line}\n"),
            );
            let err = load(&ConfigSources {
                repo_text: Some(base),
                repo_from_base: true,
                ..Default::default()
            })
            .unwrap_err();
            assert!(
                matches!(err, ConfigError::OptionLike { .. }),
                "{backend}: {err}"
            );
            assert!(
                err.to_string()
                    .starts_with(&format!("abc123:arev.toml: {key} = \"-")),
                "{err}"
            );
        }
        // A name with a dash inside, as models have, loads.
        let ok = (
            PathBuf::from("arev.toml"),
            "[agents.x]\nbackend = \"opencode\"\nbinary = \"b\"\nfallback_model = \"m-1\"\n[agents.x.models]\nhaiku = \"a/claude-haiku-4-5\"\nsonnet = \"s\"\nopus = \"o\"\n".to_string(),
        );
        let loaded = load(&ConfigSources {
            repo_text: Some(ok),
            ..Default::default()
        });
        assert!(loaded.is_ok(), "{loaded:?}");
    }
}

#[cfg(test)]
mod example_tests {
    use super::*;

    /// The documented example config must load (docs match behaviour).
    #[test]
    fn example_config_loads() {
        let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/arev.toml");
        let (c, _) = load(&ConfigSources {
            explicit_file: Some(p),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(c.roles.judge, "claude-pinned");
        assert_eq!(c.review.fail_on, super::super::FailOn::Medium);
    }
}

#[cfg(test)]
mod role_timeout_tests {
    use super::*;
    use crate::records::Role;
    use std::time::Duration;

    #[test]
    fn role_tables_override_and_are_validated() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("a.toml");
        std::fs::write(&f, "[timeouts.judge]\nagent = \"2m\"\ngrace = \"1s\"\n").unwrap();
        let (c, _) = load(&ConfigSources {
            repo_file: Some(f.clone()),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(
            c.timeouts.of(Role::Judge),
            crate::config::RoleLimits {
                agent: Some(Duration::from_secs(120)),
                grace: Some(Duration::from_secs(1))
            }
        );
        assert_eq!(c.timeouts.of(Role::Enthusiast), Default::default());
        // The Prover's dispatch has its own table, apart from `[timeouts] prove` (its
        // reproducer's runs).
        assert_eq!(c.timeouts.of(Role::Prover), Default::default());
        std::fs::write(
            &f,
            "[timeouts]\nprove = \"7s\"\n[timeouts.prover]\nagent = \"3m\"\n",
        )
        .unwrap();
        let (c, _) = load(&ConfigSources {
            repo_file: Some(f.clone()),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(
            c.timeouts.of(Role::Prover),
            crate::config::RoleLimits {
                agent: Some(Duration::from_secs(180)),
                grace: None
            }
        );
        assert_eq!(c.timeouts.prove, Duration::from_secs(7));
        std::fs::write(&f, "[timeouts.prover]\ngrace = \"never\"\n").unwrap();
        let err = load(&ConfigSources {
            repo_file: Some(f.clone()),
            ..Default::default()
        })
        .unwrap_err();
        assert!(err.to_string().contains("timeouts.prover.grace"), "{err}");
        std::fs::write(&f, "[timeouts.judge]\nagent = \"later\"\n").unwrap();
        let err = load(&ConfigSources {
            repo_file: Some(f.clone()),
            ..Default::default()
        })
        .unwrap_err();
        assert!(err.to_string().contains("timeouts.judge.agent"), "{err}");
        std::fs::write(&f, "[timeouts.auditor]\nagent = \"1m\"\n").unwrap();
        let err = load(&ConfigSources {
            repo_file: Some(f),
            ..Default::default()
        })
        .unwrap_err();
        assert!(
            err.to_string().ends_with("unknown key `timeouts.auditor`"),
            "{err}"
        );
    }
}

#[cfg(test)]
mod price_tests {
    use super::*;
    use crate::backends::{cost_usd, price_of, EventFormat, ModelPrice};
    use crate::records::Usage;
    use std::collections::BTreeMap;

    #[test]
    fn a_prices_table_prices_any_model_and_wins_over_the_family() {
        let (config, _) = load(&ConfigSources::default()).unwrap();
        let prices = &config.prices;
        let u = Usage {
            input_tokens: 1_000_000,
            output_tokens: 1_000_000,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 1_000_000,
        };
        // The default tier maps' Codex and Gemini models have a default price.
        for backend in [
            crate::backends::BackendKind::Codex,
            crate::backends::BackendKind::Gemini,
        ] {
            let models = crate::backends::default_models(backend);
            let format = backend.native_format().unwrap();
            for tier in [
                crate::records::Tier::Haiku,
                crate::records::Tier::Sonnet,
                crate::records::Tier::Opus,
            ] {
                let m = models.get(tier);
                let p = price_of(format, m, prices).unwrap_or_else(|| panic!("{m}: no price"));
                assert!(cost_usd(Some(&p), &u) > 0.0, "{m}");
            }
        }
        let gpt = price_of(EventFormat::Codex, "GPT-5.5", prices).unwrap();
        assert!((cost_usd(Some(&gpt), &u) - (5.0 + 30.0 + 0.5)).abs() < 1e-9);
        assert_eq!(
            price_of(EventFormat::Gemini, "gemini-9-ultra", prices),
            None
        );
        assert_eq!(cost_usd(None, &u), 0.0);
        // An entry wins, for a Claude model too; its cache prices default to input.
        let mut mine = BTreeMap::new();
        let cheap = ModelPrice {
            input: 1.0,
            output: 2.0,
            cache_read: None,
            cache_write: None,
        };
        mine.insert("opus".to_string(), cheap);
        mine.insert("local-coder".to_string(), cheap);
        let opus = price_of(EventFormat::Claude, "opus", &mine).unwrap();
        assert!((cost_usd(Some(&opus), &u) - (1.0 + 2.0 + 1.0)).abs() < 1e-9);
        assert!(price_of(EventFormat::Codex, "local-coder", &mine).is_some());
        assert!(
            price_of(EventFormat::Claude, "sonnet", &mine).is_some(),
            "by family"
        );
    }
}
