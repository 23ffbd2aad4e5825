//! round-N.json: every dispatch, gate result, count and the decision with its reasons.

use super::agent::{AdversaryOutput, Finding, JudgeOutput, Role, Ruling, Tier};
use super::finding::Suppression;
use super::outcome::{AgentOutcome, ProcessEnd};
use super::stop::{AbortReason, StopReason};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// An error code of a round record (`errors`; the report copies them). The strings are a
/// contract: scripts count them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RoundError {
    /// An Enthusiast pass answered with output its schema refuses (once per such pass).
    EnthusiastMalformedJson,
    /// The Adversary answered with output its schema refuses.
    AdversaryMalformedJson,
    /// The Judge answered with output its schema refuses (the run aborts).
    JudgeMalformedJson,
    /// A finding's line is past its file's end, or outside every hunk of a diff's file
    /// (once per finding dropped).
    AnchorInvalid,
    /// A finding named a project rules file (once per finding dropped).
    RulesFileFinding,
    /// A context citation (of a finding, an Adversary map entry or a ruling) whose file is
    /// not in the context scope, whose line does not exist or does not hold its quote, or
    /// past the fifth (once per citation dropped).
    ContextCiteInvalid,
    /// A ruling whose cites still did not hold after a re-prompt (once per ruling).
    JudgeInvalidCites,
    /// The Judge ruled on an unknown finding, or left findings without a ruling.
    JudgeRulingCountMismatch,
    /// Round 2 was skipped: round 1's findings were all self-reference or none.
    #[serde(rename = "round2_skipped")]
    Round2Skipped,
}

impl RoundError {
    /// The code as recorded.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::EnthusiastMalformedJson => "enthusiast_malformed_json",
            Self::AdversaryMalformedJson => "adversary_malformed_json",
            Self::JudgeMalformedJson => "judge_malformed_json",
            Self::AnchorInvalid => "anchor_invalid",
            Self::RulesFileFinding => "rules_file_finding",
            Self::ContextCiteInvalid => "context_cite_invalid",
            Self::JudgeInvalidCites => "judge_invalid_cites",
            Self::JudgeRulingCountMismatch => "judge_ruling_count_mismatch",
            Self::Round2Skipped => "round2_skipped",
        }
    }
}

impl std::fmt::Display for RoundError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<&str> for RoundError {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
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
    /// Why a valid answer was re-prompted (docs/architecture.md §19.6): the Judge's cites
    /// that did not hold (a valid answer is never re-prompted for its length).
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
    /// Everything arev parsed from the agent. round-N.json keeps only its summary: the whole
    /// outcome is `<dir>/outcome.json`, the raw events (the answer verbatim among them)
    /// `<dir>/events.jsonl`.
    #[serde(
        serialize_with = "summary::serialize",
        deserialize_with = "summary::deserialize"
    )]
    #[schemars(with = "OutcomeSummary")]
    pub outcome: AgentOutcome,
    pub gates: GateResults,
    /// The context files (in the context scope, not the target) this agent read, each once,
    /// hashed when its dispatch ended (re-hashed at the end of the run: drift).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub context_reads: Vec<ContextRead>,
}

/// One context file an agent read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ContextRead {
    /// Repo-relative, `/`-separated.
    pub path: String,
    /// Hex sha256 of its content as the agent's dispatch ended.
    pub sha256: String,
    /// Its size in bytes, and the tokens that makes (estimated: bytes / 4).
    pub bytes: u64,
    pub tokens: u64,
}

/// What round-N.json keeps of a dispatch's outcome: who ran, how it ended, what it cost and
/// how much it said. The rest (every tool use, the result event) is in the dispatch dir's
/// `outcome.json`, so that no payload is written twice.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct OutcomeSummary {
    /// The configured agent name that ran.
    pub agent: String,
    pub tier: Tier,
    /// The model string passed to the CLI.
    pub model: String,
    pub end: ProcessEnd,
    /// The result event's `is_error` and `subtype` (null without a result event).
    pub is_error: Option<bool>,
    pub subtype: Option<String>,
    /// Bytes of the answer text (null without one).
    pub answer_bytes: Option<u64>,
    /// Tool uses seen (listed in outcome.json).
    pub tool_uses: u32,
    pub cost_usd: f64,
    pub tokens: u64,
    pub duration_ms: u64,
    pub stdout_bytes: u64,
    pub stdout_truncated: bool,
    pub stderr_truncated: bool,
    pub malformed_lines: u64,
    /// Why it failed, when its events name a cause.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<super::outcome::Fault>,
    /// Its model has no known price: `cost_usd` 0 means unknown (`AgentOutcome::unpriced`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unpriced: bool,
}

impl OutcomeSummary {
    pub fn of(o: &AgentOutcome) -> Self {
        Self {
            agent: o.agent.clone(),
            tier: o.tier,
            model: o.model.clone(),
            end: o.end.clone(),
            is_error: o.result.as_ref().map(|r| r.is_error),
            subtype: o.result.as_ref().map(|r| r.subtype.clone()),
            answer_bytes: o.answer_bytes(),
            tool_uses: o.tool_uses.len() as u32,
            cost_usd: o.cost_usd(),
            tokens: o.tokens(),
            duration_ms: o.duration_ms,
            stdout_bytes: o.stdout_bytes,
            stdout_truncated: o.stdout_truncated,
            stderr_truncated: o.stderr_truncated,
            malformed_lines: o.malformed_lines,
            fault: o.fault.clone(),
            unpriced: o.unpriced,
        }
    }
}

/// round-N.json's `outcome`: the summary, written and read in place of the whole outcome.
mod summary {
    use super::{AgentOutcome, OutcomeSummary};
    use crate::records::outcome::{ResultEvent, Usage};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub(super) fn serialize<S: Serializer>(o: &AgentOutcome, s: S) -> Result<S::Ok, S::Error> {
        OutcomeSummary::of(o).serialize(s)
    }

    /// An outcome as far as the summary tells (no tool uses, no answer text: those are in
    /// outcome.json); its cost and tokens survive (tokens as output tokens).
    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<AgentOutcome, D::Error> {
        let s = OutcomeSummary::deserialize(d)?;
        Ok(AgentOutcome {
            label: String::new(),
            agent: s.agent,
            role: super::Role::Enthusiast,
            tier: s.tier,
            model: s.model,
            end: s.end,
            tool_uses: vec![],
            result: s.is_error.map(|is_error| ResultEvent {
                is_error,
                subtype: s.subtype.unwrap_or_default(),
                text: None,
                total_cost_usd: s.cost_usd,
                usage: Usage {
                    output_tokens: s.tokens,
                    ..Usage::default()
                },
                permission_denials: vec![],
                num_turns: None,
            }),
            malformed_lines: s.malformed_lines,
            stdout_bytes: s.stdout_bytes,
            stdout_truncated: s.stdout_truncated,
            stderr_truncated: s.stderr_truncated,
            duration_ms: s.duration_ms,
            fault: s.fault,
            // Without a result event, what the summary gives came from the events.
            streamed: (s.is_error.is_none() && (s.cost_usd > 0.0 || s.tokens > 0)).then(|| {
                crate::records::outcome::StreamedSpend {
                    usage: Usage {
                        output_tokens: s.tokens,
                        ..Usage::default()
                    },
                    cost_usd: s.cost_usd,
                }
            }),
            unpriced: s.unpriced,
            answer_forgotten: s.answer_bytes,
        })
    }
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

/// A unioned finding that repeats one the Judge dismissed in an earlier round of this run:
/// kept from the Judge, it carries the earlier ruling (docs/contracts.md §7, debunked once).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RepeatedDebunk {
    pub finding: RoundFinding,
    /// The round whose Judge dismissed it.
    pub round: u32,
    /// The finding's id in that round.
    pub finding_id: String,
    /// `same defect` (the union's sameness rule) or `fingerprint`.
    pub matched_by: String,
    /// The earlier ruling.
    pub ruling: Ruling,
}

/// A unioned finding a suppression kept from the Judge (docs/architecture.md §20).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SuppressedFinding {
    pub round: u32,
    pub finding: RoundFinding,
    /// The finding's fingerprint (what an external suppression matches).
    pub fingerprint: String,
    pub suppression: Suppression,
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
    /// Findings kept from the Judge because it dismissed them in an earlier round.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub debunked_before: u32,
    /// Context citations the citation gate dropped (every role's, this round).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub context_cite_invalid: u32,
    /// Adversary map entries dropped before the Judge: every context citation they carried
    /// was dropped.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub map_entries_dropped: u32,
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

/// An Enthusiast pass lost to faults.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DegradedPass {
    pub round: u32,
    pub pass: u32,
    /// Why it was lost: the fault and its fix, or what the dispatch gate saw.
    pub cause: String,
}

impl DegradedPass {
    /// The warning line every rendering shows.
    pub fn warning(&self) -> String {
        format!(
            "degraded: round {} went on without Enthusiast pass {} ({})",
            self.round, self.pass, self.cause
        )
    }
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
    /// Findings repeating one dismissed in an earlier round, with that ruling (not judged
    /// again, not counted again).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub debunked_before: Vec<RepeatedDebunk>,
    pub adversary: Option<AdversaryOutput>,
    pub judge: Option<JudgeOutput>,
    /// Error codes, one per event (e.g. one `anchor_invalid` per finding dropped).
    pub errors: Vec<RoundError>,
    /// Enthusiast passes lost to faults; the round went on without them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub degraded: Vec<DegradedPass>,
    pub counts: RoundCounts,
    pub decision: DecisionRecord,
    pub duration_ms: u64,
    pub cost_usd: f64,
    pub tokens: u64,
    /// Of `tokens`, those of a model without a known price, which `cost_usd` leaves out.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub unpriced_tokens: u64,
}

fn is_zero_u64(n: &u64) -> bool {
    *n == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::outcome::{FileAccess, ResultEvent, ToolUse, Usage};

    /// The codes are a contract: recorded as they always were, and read back.
    #[test]
    fn round_error_codes_keep_their_strings() {
        let all = [
            (
                RoundError::EnthusiastMalformedJson,
                "enthusiast_malformed_json",
            ),
            (
                RoundError::AdversaryMalformedJson,
                "adversary_malformed_json",
            ),
            (RoundError::JudgeMalformedJson, "judge_malformed_json"),
            (RoundError::AnchorInvalid, "anchor_invalid"),
            (RoundError::RulesFileFinding, "rules_file_finding"),
            (RoundError::ContextCiteInvalid, "context_cite_invalid"),
            (RoundError::JudgeInvalidCites, "judge_invalid_cites"),
            (
                RoundError::JudgeRulingCountMismatch,
                "judge_ruling_count_mismatch",
            ),
            (RoundError::Round2Skipped, "round2_skipped"),
        ];
        for (code, text) in all {
            assert_eq!(serde_json::to_value(code).unwrap(), text);
            assert_eq!(code.as_str(), text);
            assert_eq!(
                serde_json::from_value::<RoundError>(text.into()).unwrap(),
                code
            );
        }
        // The schema lists every code (one `const` each).
        let schema = serde_json::to_value(schemars::schema_for!(RoundError)).unwrap();
        let listed: Vec<&str> = schema["oneOf"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|v| v["const"].as_str())
            .collect();
        assert_eq!(listed, all.map(|(_, t)| t));
    }

    #[test]
    fn a_round_record_keeps_a_summary_of_each_outcome_not_its_payload() {
        let answer = format!("{{\"findings\": [{}]}}", "x".repeat(10_000));
        let outcome = AgentOutcome {
            tool_uses: vec![ToolUse {
                id: "t1".into(),
                name: "Read".into(),
                input: serde_json::json!({"file_path": "/r/a.rs"}),
                access: FileAccess::read("/r/a.rs"),
            }],
            result: Some(ResultEvent {
                is_error: false,
                subtype: "success".into(),
                text: Some(answer.clone()),
                total_cost_usd: 0.25,
                usage: Usage {
                    input_tokens: 7,
                    output_tokens: 3,
                    ..Usage::default()
                },
                permission_denials: vec![],
                num_turns: Some(2),
            }),
            duration_ms: 42,
            ..AgentOutcome::empty(
                "enthusiast-p1",
                "claude",
                Role::Enthusiast,
                Tier::Opus,
                "opus",
                ProcessEnd::Exited { code: 0 },
            )
        };
        let rec = DispatchRecord {
            role: Role::Enthusiast,
            pass: Some(1),
            label: "enthusiast-p1".into(),
            dir: "agents/r1/enthusiast-p1".into(),
            outcome,
            gates: GateResults::default(),
            context_reads: vec![],
        };
        let text = serde_json::to_string(&rec).unwrap();
        assert!(!text.contains("xxxx"), "the answer stays in events.jsonl");
        assert!(
            !text.contains("file_path"),
            "tool uses stay in outcome.json"
        );
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["outcome"]["agent"], "claude");
        assert_eq!(v["outcome"]["answer_bytes"], answer.len());
        assert_eq!(v["outcome"]["tool_uses"], 1);
        assert_eq!(v["outcome"]["tokens"], 10);
        assert_eq!(v["outcome"]["end"]["kind"], "exited");
        // Read back, what the summary carries survives.
        let back: DispatchRecord = serde_json::from_str(&text).unwrap();
        assert_eq!(back.outcome.agent, "claude");
        assert_eq!(back.outcome.cost_usd(), 0.25);
        assert_eq!(back.outcome.tokens(), 10);
        assert_eq!(back.outcome.duration_ms, 42);
        assert_eq!(back.outcome.answer_bytes(), Some(answer.len() as u64));
        // A parsed answer is dropped; the record still gives its size.
        let mut rec = rec;
        rec.outcome.forget_answer();
        assert_eq!(rec.outcome.answer(), None);
        assert_eq!(rec.outcome.answer_bytes(), Some(answer.len() as u64));
        let v: serde_json::Value = serde_json::to_value(&rec).unwrap();
        assert_eq!(v["outcome"]["answer_bytes"], answer.len());
    }
}
