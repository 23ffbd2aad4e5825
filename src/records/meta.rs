//! meta.json: the run's status record, written at start and finalised on completion/abort/Ctrl-C.

use super::agent::{Role, Tier};
use super::config::RepoSource;
use super::iterate::IterateStop;
use super::round::StopReason;
use super::target::{Mode, TargetKind, TargetType};
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

/// A process, identified across pid reuse.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProcessId {
    pub pid: u32,
    /// Start time in clock ticks since boot (`/proc/<pid>/stat` field 22).
    pub start_time: u64,
}

/// The pinned target as recorded in meta.json.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MetaTarget {
    pub kind: TargetKind,
    /// The target as given on the command line.
    pub display: String,
    /// Absolute path agents Read (the file, diff.patch or manifest.txt).
    pub path: String,
    pub sha256: String,
    /// The re-pinned sha at the end (null until then).
    pub sha256_final: Option<String>,
    pub drift: bool,
    pub files: usize,
    pub skipped: usize,
}

/// meta.json.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Meta {
    pub run_id: String,
    pub status: RunStatus,
    pub stop_reason: Option<RunStopReason>,
    pub abort_reason: Option<AbortReason>,
    /// One-line human explanation of an abort.
    pub abort_detail: Option<String>,
    pub target: MetaTarget,
    pub mode: Mode,
    pub target_type: TargetType,
    pub rounds_planned: u32,
    pub rounds_completed: u32,
    pub passes: u32,
    /// Tier the run started at (`--model`).
    pub model_start: Tier,
    /// Tier of the last round dispatched.
    pub model_current: Tier,
    /// Tier of every round, in order.
    pub model_history: Vec<Tier>,
    pub arev_version: String,
    /// sha256 of the resolved configuration (canonical JSON).
    pub config_digest: String,
    /// The repository inputs this run used (`--repo-config`); absent in older runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo_inputs: Option<MetaRepoInputs>,
    pub started_at: String,
    pub finished_at: Option<String>,
    /// The arev process that runs the review (pid and start time): a run still `running`
    /// whose process is gone is shown as `abandoned`. Null where it cannot be known.
    #[serde(default)]
    pub process: Option<ProcessId>,
    /// The exit code that process ended with, recorded last (after the report and any
    /// publish): what `arev run --background --wait` and scripts read. Null while the run
    /// runs, or when its process died before it could record one.
    #[serde(default)]
    pub exit_code: Option<i32>,
    /// `arev run --iterate` only: where the fixes are (kept on abort and Ctrl-C too).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iterate: Option<MetaIterate>,
    /// A verdict-cache hit: the run whose verdict this run reuses (no agent was dispatched).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_from: Option<String>,
    /// `--baseline`: the run this one was compared with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_run_id: Option<String>,
}

/// Where the repository inputs (the repo's `arev.toml`/`.arev/config.toml` and
/// `.arev/{agents,prompts,heuristics}/*.md`) came from, and which were read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MetaRepoInputs {
    /// `worktree`, `base` (the merge-base commit of `--base`) or `ignore`.
    pub source: RepoSource,
    /// With `base`: the commit they were read from.
    pub commit: Option<String>,
    /// Repo-relative paths of the inputs read.
    pub files: Vec<String>,
    /// sha256 over the inputs read (path and text, in path order).
    pub digest: String,
}

/// The iterate run's branch and worktree, and how far it got.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MetaIterate {
    pub branch: String,
    pub worktree: String,
    pub base_commit: String,
    pub iterations_completed: u32,
    pub max_iterations: u32,
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
        }
    }
}

impl std::str::FromStr for AbortReason {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        Self::all()
            .into_iter()
            .find(|r| r.to_string() == s)
            .ok_or_else(|| format!("unknown abort reason `{s}`"))
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
