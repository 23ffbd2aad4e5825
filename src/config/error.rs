//! Config errors: each names the file (or variable) and the key at fault; all exit 2.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{path}: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("{path}: unknown key `{key}`")]
    UnknownKey { path: PathBuf, key: String },
    #[error("cannot read config {path}: {message}")]
    Read { path: PathBuf, message: String },
    #[error("{var}={value}: {message}")]
    Env {
        var: String,
        value: String,
        message: String,
    },
    #[error("{key}: {message}")]
    Invalid { key: String, message: String },
    /// A value a flag sets too, out of the flag's bounds.
    #[error("{key}: {source} (the same bounds as its flag)")]
    Limit { key: String, source: LimitError },
    #[error("prices.\"{model}\": {source}")]
    Price { model: String, source: LimitError },
    #[error(
        "{path}: agents.{agent}.extra_args: `{arg}` is not allowed for a {backend} agent ({why}); \
         arev decides what reviewers may use (docs/trust.md: \"Running on untrusted pull requests\")"
    )]
    Floor {
        path: PathBuf,
        agent: String,
        backend: &'static str,
        arg: String,
        why: String,
    },
    #[error(
        "{path}: `{key}` {what}: a repository's config may not set it; set it in your user \
         config (~/.config/arev/config.toml) or a --config file (docs/trust.md)"
    )]
    Untrusted {
        path: PathBuf,
        key: String,
        what: String,
    },
    /// A trusted-only key in the repository's layer.
    #[error(
        "{path}: `{key}` may be set only in trusted config (your ~/.config/arev/config.toml or \
         --config), never in the repository's config, which a pull request can change \
         (docs/trust.md: \"Who may dismiss a finding\")"
    )]
    TrustedOnly { path: PathBuf, key: String },
    /// A value arev places in an agent's argv that a CLI would read as an option.
    #[error(
        "{path}: {key} = {value:?} starts with `-`, which a CLI would read as an option: \
         a model name never does (docs/trust.md: \"Round five\")"
    )]
    OptionLike {
        path: PathBuf,
        key: String,
        value: String,
    },
    #[error("unknown agent `{name}` (configured agents: {known})")]
    UnknownAgent { name: String, known: String },
}

/// A value out of its bounds (the message a flag's value parser and config validation show).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LimitError {
    #[error("{value} is not in {min}..={max}")]
    OutOfRange { value: u32, min: u32, max: u32 },
    #[error("{0} is not a positive number")]
    NotPositive(f64),
    #[error("0 is not positive")]
    Zero,
    #[error("`{0}` is not a number")]
    NotANumber(String),
    #[error("{key} = {value} is not a price in USD per million tokens (0 to {max})")]
    Rate {
        key: &'static str,
        value: f64,
        max: f64,
    },
    #[error("input and output are both 0: such a price never counts against a budget")]
    Free,
}
