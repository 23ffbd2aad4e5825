//! report.json (`schema_version: 1`; schema in `schemas/report.schema.json`).
//!
//! A worked example of the top level:
//! `{"schema_version":1,"run_id":"20261121-180000-a1b2c3-src-lib-rs","status":"complete",
//! "stop_reason":"zero-findings","target":{…},"rounds":[…],"confirmed":[…],"debunked":[…],
//! "unresolved":[],"by_severity":{"critical":0,"high":1,"medium":0,"low":0},"coverage":{…},
//! "cost":{…},"quality":{…}}`

use super::agent::{Severity, Tier};
use super::config::FailOn;
use super::finding::{BaselineState, ReportFinding};
use super::iterate::IterateReport;
use super::round::DegradedPass;
use super::stop::{AbortReason, RunStatus, StopReason};
use super::target::{skip_label, Mode, ShardInfo, SkipReason, TargetKind, TargetType};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub const SCHEMA_VERSION: u32 = 1;

/// The final structured report of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Report {
    pub schema_version: u32,
    pub arev_version: String,
    pub run_id: String,
    /// Absolute path of the run directory.
    pub run_dir: String,
    pub status: RunStatus,
    /// How the review stopped. Null for an iterate run: its outer loop's reason is
    /// `iterate.stop_reason`, each review's is in `iterate.iterations[]`.
    pub stop_reason: Option<StopReason>,
    pub abort_reason: Option<AbortReason>,
    pub abort_detail: Option<String>,
    pub target: ReportTarget,
    pub rounds: Vec<ReportRound>,
    pub confirmed: Vec<ReportFinding>,
    pub debunked: Vec<ReportFinding>,
    pub unresolved: Vec<ReportFinding>,
    pub by_severity: BySeverity,
    pub coverage: Coverage,
    pub cost: Cost,
    pub quality: Quality,
    pub warnings: Vec<String>,
    /// For a `--shard i/n` run: the slice, the full manifest's identity, the files covered.
    #[serde(default)]
    pub shard: Option<ShardInfo>,
    /// For a report made by `arev merge`: the shard runs it combines (empty otherwise).
    #[serde(default)]
    pub merged_from: Vec<MergedShard>,
    /// `arev run --iterate` only: the review → fix loop in an isolated worktree. The
    /// findings, rounds, coverage and quality above are those of its last review; `cost`
    /// covers every review and every fix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iterate: Option<IterateReport>,
    /// `--baseline`: the report this one was compared with (docs/architecture.md §20).
    /// Then every open finding (confirmed, unresolved) carries `baseline_state`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<BaselineInfo>,
    /// `--baseline`: the baseline's open findings no longer found (fixed), each with
    /// `baseline_state: absent`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub absent: Vec<ReportFinding>,
    /// Enthusiast passes lost to faults after their retries (docs/contracts.md §19.2): their rounds went
    /// on with the passes that answered (`[review] require_all_passes = true` aborts
    /// instead). Each also has a line in `warnings`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub degraded: Vec<DegradedPass>,
    /// Findings a suppression (an inline `arev-ignore` comment or `.arev/suppressions.toml`)
    /// kept from the Judge, each with its `suppression`. They never count for `--fail-on`,
    /// the Stop hook or annotations.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub suppressed: Vec<ReportFinding>,
    /// `--incremental`: what was re-reviewed and what was carried over from the baseline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incremental: Option<IncrementalInfo>,
    /// A verdict-cache hit: the run whose review this one reuses (nothing was dispatched).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_from: Option<String>,
    /// The gate the run was started with (`--fail-on`, else its configuration); a merged
    /// report's is the strictest of its shards'. What `arev result` and `arev merge` exit by
    /// unless `--fail-on` is given; absent in older reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fail_on: Option<FailOn>,
    /// `--prove`: the proof phase — its sandbox (`none` = unsandboxed), thresholds and the
    /// count of each status; each confirmed finding carries its `proof` (docs/prove.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prove: Option<super::proof::ProveSummary>,
    pub started_at: String,
    pub finished_at: String,
    pub duration_ms: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReportTarget {
    pub kind: TargetKind,
    pub display: String,
    pub sha256: String,
    pub sha256_final: Option<String>,
    pub drift: bool,
    pub base: Option<String>,
    pub target_type: TargetType,
    pub mode: Mode,
    pub allowed_files: Vec<String>,
    /// The commit checked out (HEAD) in the reviewed repository when the review ran; absent
    /// outside git. `arev publish` refuses a report whose commit is not the pull request's
    /// head.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// sha256 of the context scope agents could read (`target/context.txt` with each file's
    /// blob id); absent in older reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_sha: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReportRound {
    pub round: u32,
    pub tier: Tier,
    /// Valid findings per Enthusiast pass.
    pub per_pass: Vec<u32>,
    pub findings: u32,
    pub confirmed: u32,
    pub debunked: u32,
    pub unresolved: u32,
    pub errors: Vec<String>,
    pub duration_ms: u64,
    pub cost_usd: f64,
    pub tokens: u64,
    /// Of `tokens`, those of a model without a known price, which `cost_usd` leaves out.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub unpriced_tokens: u64,
    /// continue | stop | abort | interrupted; a merged report's round whose shards decided
    /// differently (and none continued) joins them with `/` (`stop/abort`).
    pub decision: String,
    pub decision_reasons: Vec<String>,
}

/// The baseline a report was compared with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BaselineInfo {
    /// The baseline's run id.
    pub run_id: String,
    /// The baseline's TARGET_SHA.
    pub target_sha256: String,
    /// `--only-new`: the exit code, annotations and the Stop hook consider only `new` and
    /// `updated` findings.
    pub only_new: bool,
    pub new: u32,
    pub unchanged: u32,
    pub updated: u32,
    pub absent: u32,
}

/// `--incremental`: the part of the target reviewed again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IncrementalInfo {
    /// The baseline run the unchanged part was carried over from.
    pub baseline_run_id: String,
    /// Files reviewed again (changed since the baseline, or not reviewed there).
    pub reviewed: Vec<String>,
    /// Files whose baseline verdict was carried over (unchanged).
    pub carried_over: u32,
    /// Baseline findings carried over (their fingerprints still exist).
    pub findings_carried_over: u32,
    /// TARGET_SHA of what the agents were given (the changed part only).
    pub reviewed_sha256: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BySeverity {
    pub critical: u32,
    pub high: u32,
    pub medium: u32,
    pub low: u32,
}

impl Report {
    /// Whether more than one agent took part (a mixed panel): then renderings name who
    /// found and who ruled on each finding.
    pub fn mixed_panel(&self) -> bool {
        self.cost.by_agent.len() > 1
    }

    /// Whether `--only-new` narrowed what gates: the exit code, annotations and the Stop hook.
    pub fn only_new(&self) -> bool {
        self.baseline.as_ref().is_some_and(|b| b.only_new)
    }

    /// Whether `--require-proof` narrowed what gates (docs/prove.md "Statuses").
    pub fn require_proof(&self) -> bool {
        self.prove.as_ref().is_some_and(|p| p.require_proof)
    }

    /// Whether `f` (a finding of this report) counts for the exit code, annotations and the
    /// Stop hook: every finding, or with `--only-new` the `new` and `updated` ones; with
    /// `--require-proof` all but those whose proof clears them (`Evidence::clears_gate`: a
    /// defect older than the change, or below `[prove] min_severity`) — a proof made by
    /// running the reviewed code never does, and the changes arev could not review
    /// (round 0) always gate.
    pub fn gates(&self, f: &ReportFinding) -> bool {
        let new = !self.only_new() || f.baseline_state.is_none_or(BaselineState::is_new);
        let cleared = self.require_proof()
            && f.round != 0
            && f.proof
                .as_ref()
                .is_some_and(super::evidence::Evidence::clears_gate);
        new && !cleared
    }

    /// The finding named `id` (confirmed, unresolved or debunked): its id (`F2`), its round
    /// and id (`2:F2`, when ids repeat across rounds) or its fingerprint.
    pub fn find_finding(&self, id: &str) -> Result<&ReportFinding, FindFindingError> {
        let all = || {
            self.confirmed
                .iter()
                .chain(&self.unresolved)
                .chain(&self.debunked)
        };
        let by_fp: Vec<&ReportFinding> = all().filter(|f| f.fingerprint == id).collect();
        if let Some(f) = by_fp.first() {
            return Ok(f);
        }
        let by_id: Vec<&ReportFinding> = all().filter(|f| f.id == id).collect();
        let with_round = id.split_once(':').and_then(|(r, i)| {
            let r: u32 = r.parse().ok()?;
            Some(
                all()
                    .filter(|f| f.round == r && f.id == i)
                    .collect::<Vec<_>>(),
            )
        });
        match (by_id.as_slice(), with_round.as_deref()) {
            ([f], _) | ([], Some([f])) => Ok(f),
            ([], _) => Err(FindFindingError::NoSuch {
                id: id.to_string(),
                run_id: self.run_id.clone(),
            }),
            (many, _) => Err(FindFindingError::Ambiguous {
                id: id.to_string(),
                run_id: self.run_id.clone(),
                candidates: many
                    .iter()
                    .map(|f| format!("{}:{}", f.round, f.id))
                    .collect(),
            }),
        }
    }

    /// The confirmed findings that count for the exit code, annotations and the Stop hook.
    /// Suppressed findings are never among them (they are not confirmed).
    pub fn gating(&self) -> impl Iterator<Item = &ReportFinding> {
        self.confirmed.iter().filter(|f| self.gates(f))
    }
}

/// A finding id that names no finding of a report, or several.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FindFindingError {
    #[error(
        "no finding `{id}` in run {run_id} (give an id such as F2, round:id such as 2:F2, or a fingerprint)"
    )]
    NoSuch { id: String, run_id: String },
    #[error(
        "`{id}` names {} findings of run {run_id} (one per round): give one of {}",
        .candidates.len(),
        .candidates.join(", ")
    )]
    Ambiguous {
        id: String,
        run_id: String,
        candidates: Vec<String>,
    },
}

impl BySeverity {
    pub fn add(&mut self, s: Severity) {
        match s {
            Severity::Critical => self.critical += 1,
            Severity::High => self.high += 1,
            Severity::Medium => self.medium += 1,
            Severity::Low => self.low += 1,
        }
    }
}

/// Coverage status of one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CoverageStatus {
    Reviewed,
    Skipped,
    /// `--incremental`: unchanged since the baseline, whose verdict was carried over.
    CarriedOver,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CoverageFile {
    pub path: String,
    pub status: CoverageStatus,
    pub reason: Option<SkipReason>,
    /// For reason `excluded`: the glob that matched (renderings show `excluded:<glob>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub glob: Option<String>,
    /// sha256 of the file's bytes (empty for a deleted file of a diff); what
    /// `--incremental` compares manifests and files by.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// Diff targets: sha256 of the file's section of diff.patch; what `--incremental`
    /// compares diffs by.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch_sha256: Option<String>,
}

impl CoverageFile {
    /// The skip reason as shown: `excluded:<glob>`, `generated`, `binary`, …; None when
    /// the file was reviewed.
    pub fn reason_label(&self) -> Option<String> {
        self.reason.map(|r| skip_label(r, self.glob.as_deref()))
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Coverage {
    pub reviewed: u32,
    pub skipped: u32,
    /// `--incremental`: files whose baseline verdict was carried over.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub carried_over: u32,
    pub files: Vec<CoverageFile>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CostLine {
    /// What the priced tokens cost.
    pub usd: f64,
    pub tokens: u64,
    /// Of `tokens`, those of a model without a known price, which `usd` leaves out
    /// (docs/configuration.md "Budgets and `[prices]`").
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub unpriced_tokens: u64,
    pub dispatches: u32,
    /// Context files (in the context scope, outside the target) read, counted per dispatch
    /// that read them, and their estimated tokens (bytes / 4).
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub context_files: u64,
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub context_tokens: u64,
}

fn is_zero_u64(n: &u64) -> bool {
    *n == 0
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Cost {
    /// What the priced tokens cost: with `unpriced` models, the known part only.
    pub usd: f64,
    pub tokens: u64,
    /// Of `tokens`, those of a model without a known price, which `usd` leaves out.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub unpriced_tokens: u64,
    /// The models run without a known price (no `[prices]` entry, a CLI that reports no
    /// cost), by agent: their spend is unknown, never $0.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unpriced: Vec<UnpricedModel>,
    pub by_role: BTreeMap<String, CostLine>,
    pub by_tier: BTreeMap<String, CostLine>,
    /// Per configured agent name.
    pub by_agent: BTreeMap<String, CostLine>,
}

/// A model an agent ran without a known price, and the tokens it spent.
#[derive(
    Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(deny_unknown_fields)]
pub struct UnpricedModel {
    /// The configured agent name.
    pub agent: String,
    /// The model string passed to the CLI.
    pub model: String,
    pub tokens: u64,
}

impl Cost {
    /// `$0.0500`, `$0.0500 + price unknown` or `price unknown` (never `$0` for spend
    /// whose price is unknown).
    pub fn usd_text(&self) -> String {
        super::usd_or_unknown(self.usd, self.tokens, self.unpriced_tokens, super::usd4)
    }

    /// `price unknown for local-coder (agent local, 300 tokens), …: the total counts the
    /// priced tokens only`; None when every token was priced.
    pub fn unpriced_note(&self) -> Option<String> {
        if self.unpriced.is_empty() {
            return None;
        }
        let models: Vec<String> = self
            .unpriced
            .iter()
            .map(|u| format!("{} (agent {}, {} tokens)", u.model, u.agent, u.tokens))
            .collect();
        Some(format!(
            "{} for {}: the cost counts the priced tokens only; set `[prices.\"<model>\"]` to price them",
            super::PRICE_UNKNOWN,
            models.join(", ")
        ))
    }
}

impl CostLine {
    /// `$0.0500`, `$0.0500 + price unknown` or `price unknown`.
    pub fn usd_text(&self) -> String {
        super::usd_or_unknown(self.usd, self.tokens, self.unpriced_tokens, super::usd4)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Quality {
    /// debunked / (confirmed + debunked); null without rulings.
    pub debunk_rate: Option<f64>,
    /// The healthy band [0.20, 0.35].
    pub healthy_band: [f64; 2],
    pub in_band: Option<bool>,
    /// Findings sent to the Judge per round.
    pub discovery_curve: Vec<u32>,
    pub escalations: Vec<String>,
    /// Dispatch errors and gate events over all rounds.
    pub agent_errors: u32,
}

/// One shard run combined into a merged report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MergedShard {
    pub run_id: String,
    pub run_dir: String,
    /// 1-based slice index and the slice count.
    pub index: u32,
    pub count: u32,
    pub status: RunStatus,
    pub stop_reason: Option<StopReason>,
    pub abort_reason: Option<AbortReason>,
    /// Files this shard reviewed.
    pub files: Vec<String>,
}
