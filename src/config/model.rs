//! The resolved configuration types (public wire type: `schemas/config.schema.json`).

use crate::dispatch::{BackendKind, TierModels};
use crate::findings::Tier;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

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
    pub fn fails(self, sev: crate::findings::Severity) -> bool {
        use crate::findings::Severity;
        let min = match self {
            Self::Never => return false,
            Self::Critical => Severity::Critical,
            Self::High => Severity::High,
            Self::Medium => Severity::Medium,
            Self::Low => Severity::Low,
        };
        sev >= min
    }
}

/// `[review]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReviewConfig {
    pub model: Tier,
    pub passes: u32,
    pub max_rounds: u32,
    pub fail_on: FailOn,
    pub max_file_bytes: u64,
    pub max_output_bytes: u64,
}

/// `[timeouts]`, humantime strings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TimeoutsConfig {
    pub agent: String,
    pub grace: String,
}

/// `[budget]`: 0 means no limit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BudgetConfig {
    pub usd: f64,
    pub tokens: u64,
}

/// `[localization]`: empty `primary` = no instruction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LocalizationConfig {
    pub primary: String,
    pub allowed: Vec<String>,
}

/// `[run]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    pub dir: String,
}

/// `[hook] mode`: when the Stop hook reviews.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum HookMode {
    /// Only sessions opted in with a prompt starting with `prefix`.
    Prefix,
    /// Every session.
    Always,
    /// Never.
    Off,
}

/// `[hook]`: the Claude Code Stop/UserPromptSubmit hooks (SPEC §10).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HookConfig {
    pub mode: HookMode,
    pub prefix: String,
    pub max_nudges: u32,
    pub max_blocks: u32,
    /// humantime, e.g. "50m".
    pub timeout: String,
}

/// `[agents.<name>]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentConfig {
    pub backend: BackendKind,
    pub binary: String,
    #[serde(default = "default_max_turns")]
    pub max_turns: u32,
    #[serde(default)]
    pub extra_args: Vec<String>,
    #[serde(default)]
    pub models: TierModels,
}

fn default_max_turns() -> u32 {
    40
}

/// `[roles]`: agent name per role.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RolesConfig {
    pub enthusiast: String,
    pub adversary: String,
    pub judge: String,
}

/// The whole resolved configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub review: ReviewConfig,
    pub budget: BudgetConfig,
    pub localization: LocalizationConfig,
    pub timeouts: TimeoutsConfig,
    pub hook: HookConfig,
    pub run: RunConfig,
    pub agents: BTreeMap<String, AgentConfig>,
    pub roles: RolesConfig,
}
