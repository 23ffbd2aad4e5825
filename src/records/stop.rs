//! How a run ends, as meta.json, report.json and round-N.json record it: the run's status,
//! why a review stopped (`StopReason`) or an iterate run stopped (`IterateStop`), the two
//! as meta.json's `RunStopReason`, and why a run aborted (`AbortReason`).

use super::agent::Role;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Lifecycle of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Running,
    Complete,
    Aborted,
    Interrupted,
    Empty,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Complete => "complete",
            Self::Aborted => "aborted",
            Self::Interrupted => "interrupted",
            Self::Empty => "empty",
        }
    }
}

/// Why a completed run stopped (exactly one per completed run).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum StopReason {
    ZeroFindings,
    AllSelfReference,
    AntiDivergenceHalt,
    MaxRounds,
    BudgetExhausted,
}

impl StopReason {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ZeroFindings => "zero-findings",
            Self::AllSelfReference => "all-self-reference",
            Self::AntiDivergenceHalt => "anti-divergence-halt",
            Self::MaxRounds => "max-rounds",
            Self::BudgetExhausted => "budget-exhausted",
        }
    }
}

/// Why an iterate run stopped (exactly one per completed iterate run).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum IterateStop {
    /// The last review confirmed nothing at or above the fix threshold (`--fail-on`).
    Clean,
    /// The Fixer changed nothing (after reverts), or two reviews confirmed the same set.
    NoProgress,
    /// The number of confirmed findings grew two iterations in a row.
    AntiDivergenceHalt,
    /// `--max-iterations` reviews ran (default 5); the last one is not fixed.
    MaxIterations,
    /// `--verify CMD` exited non-zero after a fix commit.
    VerifyFailed,
    /// `--budget-usd` / `--budget-tokens` spent (reviews and fixes together).
    BudgetExhausted,
    /// `--prove`: a finding the Fixer said it fixed still fails its reproducer (which failed
    /// before the fix) on the fix commit, or the run says nothing (`fix_unproven`).
    FixUnproven,
}

impl IterateStop {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Clean => "clean",
            Self::NoProgress => "no-progress",
            Self::AntiDivergenceHalt => "anti-divergence-halt",
            Self::MaxIterations => "max-iterations",
            Self::VerifyFailed => "verify-failed",
            Self::BudgetExhausted => "budget-exhausted",
            Self::FixUnproven => "fix-unproven",
        }
    }
}

impl std::fmt::Display for IterateStop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a completed run stopped, as meta.json records it: a review's `StopReason` or an
/// iterate run's `IterateStop` (the two share `anti-divergence-halt` and `budget-exhausted`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RunStopReason {
    ZeroFindings,
    AllSelfReference,
    AntiDivergenceHalt,
    MaxRounds,
    BudgetExhausted,
    Clean,
    NoProgress,
    MaxIterations,
    VerifyFailed,
    FixUnproven,
}

impl RunStopReason {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ZeroFindings => "zero-findings",
            Self::AllSelfReference => "all-self-reference",
            Self::AntiDivergenceHalt => "anti-divergence-halt",
            Self::MaxRounds => "max-rounds",
            Self::BudgetExhausted => "budget-exhausted",
            Self::Clean => "clean",
            Self::NoProgress => "no-progress",
            Self::MaxIterations => "max-iterations",
            Self::VerifyFailed => "verify-failed",
            Self::FixUnproven => "fix-unproven",
        }
    }
}

impl fmt::Display for RunStopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<StopReason> for RunStopReason {
    fn from(s: StopReason) -> Self {
        match s {
            StopReason::ZeroFindings => Self::ZeroFindings,
            StopReason::AllSelfReference => Self::AllSelfReference,
            StopReason::AntiDivergenceHalt => Self::AntiDivergenceHalt,
            StopReason::MaxRounds => Self::MaxRounds,
            StopReason::BudgetExhausted => Self::BudgetExhausted,
        }
    }
}

impl From<IterateStop> for RunStopReason {
    fn from(s: IterateStop) -> Self {
        match s {
            IterateStop::Clean => Self::Clean,
            IterateStop::NoProgress => Self::NoProgress,
            IterateStop::AntiDivergenceHalt => Self::AntiDivergenceHalt,
            IterateStop::MaxIterations => Self::MaxIterations,
            IterateStop::VerifyFailed => Self::VerifyFailed,
            IterateStop::BudgetExhausted => Self::BudgetExhausted,
            IterateStop::FixUnproven => Self::FixUnproven,
        }
    }
}

/// Why a run aborted (meta.json and report.json `abort_reason`; exit 3). Serialised as one
/// string: the per-role reasons are `<role>_<kind>` (`judge_no_tool_invocation`,
/// `adversary_forbidden_tool`, …); the schema lists every value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AbortReason {
    /// `agent_dispatch_unavailable`: an agent did not run, crashed without a result event,
    /// or reported `is_error` (after one retry).
    AgentDispatchUnavailable,
    /// `<role>_no_tool_invocation`: no Read of the target in the agent's events.
    NoToolInvocation(Role),
    /// `<role>_offtarget_read`: a read or search outside the target.
    OfftargetRead(Role),
    /// `fixer_offtarget_write`: the Fixer wrote outside its worktree.
    OfftargetWrite(Role),
    /// `<role>_forbidden_tool`: a tool call the role may not make (for a reviewer: anything
    /// but the backend's read-only tools).
    ForbiddenTool(Role),
    /// `offtarget_hallucination`: a finding or ruling named a file outside the target.
    OfftargetHallucination,
    /// `judge_malformed_json`: the Judge answered invalid JSON twice.
    JudgeMalformedJson,
    /// `enthusiast_malformed_json`: every Enthusiast pass answered invalid JSON twice.
    EnthusiastMalformedJson,
    /// `iterate_io_error`: an iterate run could not write its records.
    IterateIoError,
    /// `iterate_target_error`: an iterate run could not pin the target in its worktree.
    IterateTargetError,
    /// `iterate_git_error`: a git operation in the iterate worktree failed.
    IterateGitError,
    /// `verify_unavailable`: the `--verify` command could not be started.
    VerifyUnavailable,
    /// `budget_exhausted_before_verdict`: `--budget-usd` / `--budget-tokens` ran out before
    /// the Judge ruled on the round's findings (while the finders ran, before the Judge
    /// started or while it ran): no verdict exists, whatever was found stays unresolved.
    BudgetExhaustedBeforeVerdict,
}

const ROLES: [Role; 4] = [Role::Enthusiast, Role::Adversary, Role::Judge, Role::Fixer];

impl AbortReason {
    /// Every value, in the order the schema lists them.
    pub fn all() -> Vec<Self> {
        let mut v = vec![Self::AgentDispatchUnavailable];
        for kind in [
            Self::NoToolInvocation,
            Self::OfftargetRead,
            Self::ForbiddenTool,
        ] {
            v.extend(ROLES.into_iter().map(kind));
        }
        // Only the Fixer writes.
        v.extend([
            Self::OfftargetWrite(Role::Fixer),
            Self::OfftargetHallucination,
            Self::JudgeMalformedJson,
            Self::EnthusiastMalformedJson,
            Self::IterateIoError,
            Self::IterateTargetError,
            Self::IterateGitError,
            Self::VerifyUnavailable,
            Self::BudgetExhaustedBeforeVerdict,
        ]);
        v
    }
}

impl fmt::Display for AbortReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::AgentDispatchUnavailable => f.write_str("agent_dispatch_unavailable"),
            Self::NoToolInvocation(role) => write!(f, "{role}_no_tool_invocation"),
            Self::OfftargetRead(role) => write!(f, "{role}_offtarget_read"),
            Self::OfftargetWrite(role) => write!(f, "{role}_offtarget_write"),
            Self::ForbiddenTool(role) => write!(f, "{role}_forbidden_tool"),
            Self::OfftargetHallucination => f.write_str("offtarget_hallucination"),
            Self::JudgeMalformedJson => f.write_str("judge_malformed_json"),
            Self::EnthusiastMalformedJson => f.write_str("enthusiast_malformed_json"),
            Self::IterateIoError => f.write_str("iterate_io_error"),
            Self::IterateTargetError => f.write_str("iterate_target_error"),
            Self::IterateGitError => f.write_str("iterate_git_error"),
            Self::VerifyUnavailable => f.write_str("verify_unavailable"),
            Self::BudgetExhaustedBeforeVerdict => f.write_str("budget_exhausted_before_verdict"),
        }
    }
}

/// A string that names no [`AbortReason`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown abort reason `{0}`")]
pub struct UnknownAbortReason(pub String);

impl std::str::FromStr for AbortReason {
    type Err = UnknownAbortReason;

    fn from_str(s: &str) -> Result<Self, UnknownAbortReason> {
        Self::all()
            .into_iter()
            .find(|r| r.to_string() == s)
            .ok_or_else(|| UnknownAbortReason(s.to_string()))
    }
}

impl Serialize for AbortReason {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for AbortReason {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

impl JsonSchema for AbortReason {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "AbortReason".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let values: Vec<serde_json::Value> = Self::all()
            .iter()
            .map(|r| serde_json::Value::String(r.to_string()))
            .collect();
        let mut m = serde_json::Map::new();
        m.insert(
            "description".into(),
            "Why a run aborted (exit 3). The per-role reasons are `<role>_<kind>`.".into(),
        );
        m.insert("type".into(), "string".into());
        m.insert("enum".into(), values.into());
        m.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abort_reasons_round_trip_as_the_strings_written_today() {
        for (r, s) in [
            (
                AbortReason::AgentDispatchUnavailable,
                "agent_dispatch_unavailable",
            ),
            (
                AbortReason::NoToolInvocation(Role::Enthusiast),
                "enthusiast_no_tool_invocation",
            ),
            (
                AbortReason::OfftargetRead(Role::Adversary),
                "adversary_offtarget_read",
            ),
            (
                AbortReason::OfftargetWrite(Role::Fixer),
                "fixer_offtarget_write",
            ),
            (
                AbortReason::ForbiddenTool(Role::Judge),
                "judge_forbidden_tool",
            ),
            (
                AbortReason::OfftargetHallucination,
                "offtarget_hallucination",
            ),
            (AbortReason::JudgeMalformedJson, "judge_malformed_json"),
            (
                AbortReason::EnthusiastMalformedJson,
                "enthusiast_malformed_json",
            ),
            (AbortReason::IterateIoError, "iterate_io_error"),
            (AbortReason::IterateTargetError, "iterate_target_error"),
            (AbortReason::IterateGitError, "iterate_git_error"),
            (AbortReason::VerifyUnavailable, "verify_unavailable"),
            (
                AbortReason::BudgetExhaustedBeforeVerdict,
                "budget_exhausted_before_verdict",
            ),
        ] {
            let json = serde_json::to_value(r).unwrap();
            assert_eq!(json, s);
            assert_eq!(serde_json::from_value::<AbortReason>(json).unwrap(), r);
        }
        let all = AbortReason::all();
        let names: std::collections::HashSet<String> = all.iter().map(|r| r.to_string()).collect();
        assert_eq!(names.len(), all.len(), "every value is distinct");
        for r in all {
            assert_eq!(r.to_string().parse::<AbortReason>().unwrap(), r);
        }
        assert!(serde_json::from_str::<AbortReason>("\"authenticity\"").is_err());
        assert!(serde_json::from_str::<AbortReason>("\"ghost_no_tool_invocation\"").is_err());
    }

    #[test]
    fn the_schema_lists_every_abort_reason() {
        let schema = serde_json::to_value(schemars::schema_for!(AbortReason)).unwrap();
        let listed = schema["enum"].as_array().unwrap();
        assert_eq!(listed.len(), AbortReason::all().len());
        assert!(listed.contains(&"fixer_forbidden_tool".into()));
    }

    #[test]
    fn stop_reasons_keep_their_strings() {
        for s in [
            StopReason::ZeroFindings,
            StopReason::AllSelfReference,
            StopReason::AntiDivergenceHalt,
            StopReason::MaxRounds,
            StopReason::BudgetExhausted,
        ] {
            let r = RunStopReason::from(s);
            assert_eq!(r.as_str(), s.as_str());
            assert_eq!(
                serde_json::to_value(r).unwrap(),
                serde_json::to_value(s).unwrap()
            );
        }
        for s in [
            IterateStop::Clean,
            IterateStop::NoProgress,
            IterateStop::AntiDivergenceHalt,
            IterateStop::MaxIterations,
            IterateStop::VerifyFailed,
            IterateStop::BudgetExhausted,
        ] {
            let r = RunStopReason::from(s);
            assert_eq!(r.as_str(), s.as_str());
            assert_eq!(
                serde_json::to_value(r).unwrap(),
                serde_json::to_value(s).unwrap()
            );
        }
    }
}
