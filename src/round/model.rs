//! round-N.json: every dispatch, gate result, count and the decision with its reasons.

use crate::dispatch::AgentOutcome;
use crate::findings::{AdversaryOutput, Finding, JudgeOutput, Role, Tier};
use crate::store::AbortReason;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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

/// Gate verdicts for one dispatch.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct GateResults {
    /// `ok`, or why the dispatch was not authentic.
    pub authenticity: Option<String>,
    pub read_target: Option<bool>,
    /// The first off-target path, if any.
    pub offtarget_read: Option<String>,
    /// The first tool call the role may not make, if any (absent when there was none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forbidden_tool: Option<String>,
    /// `ok`, or the parse/validation error.
    pub schema: Option<String>,
    /// Why a valid answer was re-prompted (docs/architecture.md §19.6): `sparse: <n>
    /// characters` (round 1, at most 50), or the Judge's cites that did not hold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reprompt: Option<String>,
}

/// One dispatch (one attempt) of one agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DispatchRecord {
    pub role: Role,
    pub pass: Option<u32>,
    pub label: String,
    /// `agents/r<N>/<label>/` relative to the run dir.
    pub dir: String,
    /// Everything arev parsed from the agent; `outcome.result.text` is the answer exactly as
    /// the agent gave it (the raw events are in `<dir>/events.jsonl`).
    pub outcome: AgentOutcome,
    pub gates: GateResults,
}

/// A unioned finding as sent to the Judge.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RoundFinding {
    pub finding: Finding,
    /// Passes that found it.
    pub passes: Vec<u32>,
    /// `p<pass>:<id>` of the pass findings merged into it.
    pub merged_from: Vec<String>,
}

/// A unioned finding a suppression kept from the Judge (docs/architecture.md §20).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SuppressedFinding {
    pub round: u32,
    pub finding: RoundFinding,
    /// The finding's fingerprint (what an external suppression matches).
    pub fingerprint: String,
    pub suppression: crate::report::Suppression,
}

/// Counts of one round.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RoundCounts {
    /// Valid findings per pass, in pass order.
    pub per_pass: Vec<u32>,
    pub unioned: u32,
    pub anchor_invalid: u32,
    pub dedup_dropped: u32,
    /// Findings sent to the Judge (the round's yield).
    pub novel: u32,
    pub confirmed: u32,
    pub debunked: u32,
    pub unresolved: u32,
    pub substantive: u32,
    pub self_reference: u32,
    /// Findings a suppression kept from the Judge.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub suppressed: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// What a round (or an iteration) decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Another round (or iteration) follows.
    Continue,
    /// The run stopped with a stop reason.
    Stop,
    /// The run aborted with an abort reason.
    Abort,
    /// Cancelled by a signal.
    Interrupted,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Continue => "continue",
            Self::Stop => "stop",
            Self::Abort => "abort",
            Self::Interrupted => "interrupted",
        }
    }
}

impl std::fmt::Display for Action {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Continue or stop, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DecisionRecord {
    pub action: Action,
    pub stop_reason: Option<StopReason>,
    pub abort_reason: Option<AbortReason>,
    pub next_tier: Option<Tier>,
    /// Every rule evaluated, in order, with the facts behind it.
    pub reasons: Vec<String>,
}

/// round-N.json
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RoundRecord {
    pub round: u32,
    pub tier: Tier,
    pub mode: String,
    pub passes: u32,
    /// The RELEVANT_FILES budget of this round (null = the whole target).
    pub relevant_files: Option<Vec<String>>,
    pub dispatches: Vec<DispatchRecord>,
    /// Findings after union, anchor gate, suppressions and pre-adversary dedup.
    pub findings: Vec<RoundFinding>,
    /// Findings a suppression kept from the Judge, with the suppression.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub suppressed: Vec<SuppressedFinding>,
    pub adversary: Option<AdversaryOutput>,
    pub judge: Option<JudgeOutput>,
    /// Error codes: `enthusiast_malformed_json`, `anchor_invalid`, …
    pub errors: Vec<String>,
    pub counts: RoundCounts,
    pub decision: DecisionRecord,
    pub duration_ms: u64,
    pub cost_usd: f64,
    pub tokens: u64,
}
