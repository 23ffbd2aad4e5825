//! A finding as report.json lists it (confirmed, debunked, unresolved, suppressed, absent;
//! the iterate report's iterations too), with the Judge's ruling, how it compares with a
//! baseline, and the suppression that kept it from the Judge (which round-N.json records).

use super::agent::{Severity, Winner};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A finding with the Judge's ruling.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReportFinding {
    /// Stable across runs for the same defect, even when lines shift.
    pub fingerprint: String,
    /// The finding's id in its round (`F3`).
    pub id: String,
    pub round: u32,
    /// The Judge's severity (for confirmed), else the Enthusiast's.
    pub severity: Severity,
    pub enthusiast_severity: Severity,
    /// Repository-relative file; for a spec-track finding the document's path.
    pub file: Option<String>,
    /// The line; for a spec-track finding named by section only, its heading's line.
    pub line: Option<u32>,
    /// Spec track: the section (canonical heading path, `## Metrics / ### tokens_saved`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub section: Option<String>,
    pub category: String,
    pub description: String,
    pub evidence: String,
    pub winner: Option<Winner>,
    pub resolution: Option<String>,
    pub edit_instruction: Option<String>,
    /// Adversary heuristics / safe zones the ruling cites.
    pub cites: Vec<String>,
    /// Context lines that support the finding or decided its ruling: the finding's
    /// citations, then the ruling's (with those of the map entries it cites), each once —
    /// every one checked by the citation gate (docs/contracts.md §22.2).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub context: Vec<super::agent::ContextCite>,
    /// Enthusiast passes that found it.
    pub found_by_passes: Vec<u32>,
    /// The configured agents whose passes found it (in pass order, each once): with
    /// `roles.enthusiast` a list, passes run on different agents.
    pub found_by: Vec<String>,
    /// The configured agent that ruled on it (null when unresolved).
    pub ruled_by: Option<String>,
    /// With `--baseline`: how this finding compares with the baseline's (by fingerprint).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_state: Option<BaselineState>,
    /// `--incremental`: the run whose review produced this finding, when it was carried over
    /// unchanged instead of being reviewed again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub carried_over_from: Option<String>,
    /// For a finding in `suppressed`: which suppression applied and why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suppression: Option<Suppression>,
    /// `--prove`: what arev saw when it ran the Prover's reproducer (docs/prove.md). Named
    /// `proof` because `evidence` above is the Enthusiast's quote of the code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proof: Option<super::evidence::Evidence>,
}

/// How a finding compares with the baseline (SARIF `baselineState`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BaselineState {
    /// No baseline finding has its fingerprint.
    New,
    /// A baseline finding has its fingerprint and severity.
    Unchanged,
    /// A baseline finding has its fingerprint with another severity.
    Updated,
    /// A baseline finding no longer found (fixed).
    Absent,
}

impl BaselineState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::New => "new",
            Self::Unchanged => "unchanged",
            Self::Updated => "updated",
            Self::Absent => "absent",
        }
    }

    /// New or updated: what `--only-new` gates on.
    pub fn is_new(self) -> bool {
        matches!(self, Self::New | Self::Updated)
    }
}

/// Where a suppression comes from (SARIF `suppressions[].kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SuppressionKind {
    /// An `arev-ignore` comment on the flagged line or the line above.
    InSource,
    /// An entry of `.arev/suppressions.toml`.
    External,
}

impl SuppressionKind {
    /// The SARIF spelling.
    pub fn sarif(self) -> &'static str {
        match self {
            Self::InSource => "inSource",
            Self::External => "external",
        }
    }
}

/// The suppression that kept a finding from the Judge.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Suppression {
    pub kind: SuppressionKind,
    /// The reason the suppression gives (mandatory).
    pub justification: String,
    /// Where it is written: `src/a.rs:12` for a comment, `.arev/suppressions.toml` (entry n)
    /// for an external one.
    pub source: String,
    /// External only: the last day it applies (`YYYY-MM-DD`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires: Option<String>,
}

impl ReportFinding {
    /// `found by claude, codex · ruled by gemini`.
    pub fn attribution(&self) -> String {
        match &self.ruled_by {
            Some(j) => format!("found by {} · ruled by {j}", self.found_by.join(", ")),
            None => format!("found by {}", self.found_by.join(", ")),
        }
    }
}
