//! The settings a record carries: the `--fail-on` threshold (an iterate report's fix
//! threshold) and where the repository inputs came from (meta.json). Part of the
//! configuration's wire type too (`config` re-exports them).

use super::agent::Severity;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Threshold for exit code 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FailOn {
    Critical,
    High,
    Medium,
    Low,
    Never,
}

impl FailOn {
    /// Whether a confirmed finding of `sev` fails the run.
    pub fn fails(self, sev: Severity) -> bool {
        let min = match self {
            Self::Never => return false,
            Self::Critical => Severity::Critical,
            Self::High => Severity::High,
            Self::Medium => Severity::Medium,
            Self::Low => Severity::Low,
        };
        sev >= min
    }

    /// The stricter of two gates (the one that fails on more findings).
    pub fn strictest(self, other: Self) -> Self {
        let rank = |f: Self| match f {
            Self::Low => 0,
            Self::Medium => 1,
            Self::High => 2,
            Self::Critical => 3,
            Self::Never => 4,
        };
        if rank(other) < rank(self) {
            other
        } else {
            self
        }
    }
}

/// Where the repository inputs (the repo's `arev.toml`/`.arev/config.toml` and
/// `.arev/{agents,prompts,heuristics}/`) come from (`--repo-config`, `AREV_REPO_CONFIG`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RepoSource {
    /// The working tree as checked out (the default without `--base`).
    Worktree,
    /// The merge-base commit of `--base REV` and HEAD (the default with `--base`): a change
    /// cannot alter its own review.
    Base,
    /// None: embedded defaults, user config, `--config`, environment and flags only.
    Ignore,
}

impl RepoSource {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Worktree => "worktree",
            Self::Base => "base",
            Self::Ignore => "ignore",
        }
    }

    /// Parse `worktree` | `base` | `ignore`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "worktree" => Some(Self::Worktree),
            "base" => Some(Self::Base),
            "ignore" => Some(Self::Ignore),
            _ => None,
        }
    }
}

/// `[review] context`: what agents may read besides the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ContextMode {
    /// The pinned tree: every tracked text file within the size cap (the default).
    #[default]
    Tree,
    /// Only the target's files (the read scope before context existed).
    Target,
}

impl ContextMode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Tree => "tree",
            Self::Target => "target",
        }
    }
}
