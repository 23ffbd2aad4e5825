//! The eval wire types: a case (`schemas/eval-case.schema.json`), one case's result and the
//! whole evaluation (`schemas/eval-report.schema.json`), and the side-by-side comparison of
//! two evaluations (`schemas/eval-compare.schema.json`).

use crate::findings::Severity;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Version of the case format and of the eval report.
pub const EVAL_SCHEMA_VERSION: u32 = 1;

/// Default scoring tolerance: a confirmed finding within this many lines of an expected
/// location (same file) finds the case.
pub const DEFAULT_TOLERANCE: u32 = 3;

/// One known defect to look for: a revision, the files to review there, and where the
/// defect is. Written by `arev eval mine` (one per fix commit) or by hand (a seeded defect).
/// The file is `<id>.json` in the cases directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EvalCase {
    /// Always 1.
    pub schema_version: u32,
    /// The case's name: the file stem, `[A-Za-z0-9._-]`, at most 100 characters. Mined cases
    /// are `fix-<12 hex of the fix commit>`.
    pub id: String,
    /// The revision reviewed (the buggy one): for a mined case the fix's parent commit (full
    /// sha); by hand any revision git resolves to a commit (a sha, a tag, a branch).
    pub revision: String,
    /// Repository-relative paths of the files reviewed, as they are at `revision`.
    pub targets: Vec<String>,
    /// Where the defect is, in `revision`'s line numbering (at least one).
    pub expected: Vec<ExpectedLocation>,
    /// Where the case came from. Kept for the report; never shown to the agents.
    #[serde(default)]
    pub origin: CaseOrigin,
}

/// Lines `start..=end` (1-based) of `file`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExpectedLocation {
    /// One of the case's targets.
    pub file: String,
    pub start: u32,
    pub end: u32,
}

/// How a case was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum OriginKind {
    /// Mined from a fix commit by `arev eval mine`.
    Mined,
    /// Written by hand (e.g. a seeded defect).
    #[default]
    Hand,
}

/// The story behind a case, for the report only.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CaseOrigin {
    #[serde(default)]
    pub kind: OriginKind,
    /// The fixing commit (full sha), when there is one.
    #[serde(default)]
    pub commit: Option<String>,
    /// The fixing commit's message, or a description of a seeded defect.
    #[serde(default)]
    pub message: Option<String>,
}

impl CaseOrigin {
    /// The first line of the message, or "".
    pub fn subject(&self) -> &str {
        self.message
            .as_deref()
            .and_then(|m| m.lines().next())
            .unwrap_or("")
    }
}

/// How a case's review ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ReviewOutcome {
    /// The review completed (a stop reason).
    Complete,
    /// The review aborted (a gate, a failed dispatch, a budget spent before a verdict).
    Aborted,
    /// arev could not review the case at all (the checkout failed, `arev run` exited 2 or
    /// crashed). Not a property of the panel: re-run on the next `arev eval run`.
    Failed,
}

/// A case's score.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CaseStatus {
    /// A confirmed finding lies within the tolerance of an expected location.
    Found,
    /// The review completed without confirming a finding near any expected location.
    Missed,
    /// The review aborted: the defect was not reported (counts against recall).
    Aborted,
    /// arev could not review the case (not scored; re-run next time).
    Failed,
}

impl CaseStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Found => "found",
            Self::Missed => "missed",
            Self::Aborted => "aborted",
            Self::Failed => "failed",
        }
    }

    /// Counted in recall's denominator.
    pub fn scored(self) -> bool {
        !matches!(self, Self::Failed)
    }
}

/// A confirmed finding of a case's review, and which expected location it hit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ScoredFinding {
    /// Repository-relative, as in the report (null for a finding without a file).
    pub file: Option<String>,
    pub line: Option<u32>,
    pub severity: Severity,
    pub category: String,
    /// Index into the case's `expected` of the first location this finding lies within the
    /// tolerance of; null for an unmatched finding.
    pub matches: Option<usize>,
    /// `--prove`: the finding's proof at the buggy revision and its reproducer run again at
    /// the fix commit. Absent without `--prove`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proof: Option<EvalProof>,
}

/// `arev eval run --prove`: what a finding's reproducer did before and after the real fix
/// (docs/eval.md "Proofs").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EvalProof {
    /// The proof's status in the review of the buggy revision (`reproduced`: its
    /// reproducer failed there).
    pub status: crate::records::ProofStatus,
    /// The reproducer's argv and files (kept in the review's run dir, `proofs/<finding>/`).
    pub command: Vec<String>,
    pub files: Vec<String>,
    /// The run at the fix commit (null when it did not run: the reproducer did not fail at
    /// the buggy revision, or the case has no fix commit).
    pub at_fix: Option<crate::records::RunRecord>,
    /// It failed at the buggy revision and passes at the fix commit.
    pub confirmed_by_fix: bool,
    /// Why it was not run at the fix commit, or why its run there says nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// One case's result: what the review produced and how it scored. Written to
/// `<out>/cases/<id>.json` as soon as the case finishes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CaseResult {
    pub case_id: String,
    /// sha256 of the case file's canonical JSON and the resolved revision: a changed case is
    /// re-run.
    pub case_digest: String,
    /// The panel's configuration digest (as in meta.json): another panel re-runs the case.
    pub config_digest: String,
    pub arev_version: String,
    /// The commit reviewed (`revision` resolved).
    pub commit: String,
    pub targets: Vec<String>,
    pub expected: Vec<ExpectedLocation>,
    pub origin: CaseOrigin,
    pub outcome: ReviewOutcome,
    /// The stop reason (complete), the abort reason and detail (aborted), or why the case
    /// could not be reviewed (failed).
    pub detail: Option<String>,
    /// The review's run directory (absolute), when one was made.
    pub run_dir: Option<String>,
    /// Confirmed findings, each with the expected location it matched (if any).
    pub confirmed: Vec<ScoredFinding>,
    pub debunked: u32,
    pub unresolved: u32,
    pub cost_usd: f64,
    pub tokens: u64,
    /// Of `tokens`, those of a model without a known price, which `cost_usd` leaves out
    /// (docs/configuration.md "Budgets and `[prices]`").
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unpriced_tokens: u64,
    /// Wall time of the case: checkout, review and clean-up.
    pub wall_ms: u64,
    pub started_at: String,
    pub finished_at: String,
    /// The score at `tolerance`.
    pub status: CaseStatus,
    /// Confirmed findings that match no expected location (they may be real defects).
    pub unmatched: u32,
    /// The tolerance (± lines) the score was computed with.
    pub tolerance: u32,
    /// True when this result was kept from an earlier `arev eval run` (same case, same
    /// configuration digest) instead of being reviewed again.
    #[serde(default)]
    pub resumed: bool,
    /// `--use-cache`: the review reused the verdict of this earlier run (report.json's
    /// `cached_from`); `cost_usd` and `tokens` are then that run's, the cost of the review
    /// that produced the verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_from: Option<String>,
    /// A cached verdict whose original review's cost could not be found (no longer in the
    /// verdict cache): `cost_usd` and `tokens` are 0 and unknown.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cost_unknown: bool,
    /// `--prove`: the review proved its confirmed findings and their reproducers ran at the
    /// fix commit (a result without it is re-run by an evaluation with `--prove`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub proved: bool,
}

/// Whether every case of the set has a result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum EvalStatus {
    /// Every case has a result (found, missed, aborted or failed).
    Complete,
    /// Interrupted (Ctrl-C): `not_run` lists the cases without a result.
    Interrupted,
}

/// Aggregates over the cases of one evaluation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Totals {
    /// Cases in the set.
    pub cases: u32,
    /// found + missed + aborted: recall's denominator.
    pub scored: u32,
    pub found: u32,
    pub missed: u32,
    pub aborted: u32,
    /// Cases arev could not review (not scored).
    pub failed: u32,
    /// Cases without a result (interrupted before they ran).
    pub not_run: u32,
    /// found / scored; null when nothing was scored.
    pub recall: Option<f64>,
    /// The 95 % Wilson score interval of recall, `[low, high]`.
    pub recall_ci95: Option<[f64; 2]>,
    /// Confirmed findings over all completed reviews.
    pub confirmed: u32,
    /// Confirmed findings matching no expected location.
    pub unmatched: u32,
    /// unmatched / completed reviews (found + missed).
    pub unmatched_per_case: Option<f64>,
    pub debunked: u32,
    pub unresolved: u32,
    /// debunked / (confirmed + debunked), as in report.json's quality.
    pub debunk_rate: Option<f64>,
    /// Every case that ran, aborted ones included.
    pub cost_usd: f64,
    pub tokens: u64,
    /// Of `tokens`, those of a model without a known price, which `cost_usd` leaves out.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unpriced_tokens: u64,
    /// Sum of the cases' wall times (with `--jobs` > 1 the evaluation took less).
    pub wall_ms: u64,
    /// cost_usd / found; null when nothing was found or a cost is unknown (a cached case's,
    /// or tokens without a price).
    pub cost_per_found: Option<f64>,
    /// Cases whose verdict came from the verdict cache (`--use-cache`), counted at the cost
    /// of the review that produced it.
    #[serde(default)]
    pub cached: u32,
    /// Cached cases whose original cost is unknown.
    #[serde(default)]
    pub cost_unknown: u32,
    /// `--prove`: the proofs over every case (absent without `--prove`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proofs: Option<ProofTotals>,
}

/// `--prove`: the panel's reproducers against the real fixes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProofTotals {
    /// Confirmed findings per proof status at the buggy revision.
    pub counts: crate::records::ProofCounts,
    /// Reproducers that failed at the buggy revision (`reproduced` or `preexisting`): the
    /// rate's denominator.
    pub failed_before_fix: u32,
    /// Of them, those that pass at the fix commit.
    pub confirmed_by_fix: u32,
    /// confirmed_by_fix / failed_before_fix; null when no reproducer failed.
    pub confirmed_by_fix_rate: Option<f64>,
}

/// One evaluation of a panel on a case set (`<out>/eval.json`; `--format json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EvalReport {
    pub schema_version: u32,
    pub arev_version: String,
    /// The panel's configuration digest (sha256 of the resolved configuration).
    pub config_digest: String,
    pub tolerance: u32,
    pub cases_dir: String,
    pub out_dir: String,
    /// `--use-cache`: reviews could reuse verdicts from the verdict cache (otherwise every
    /// case was reviewed afresh, `arev run --no-cache`).
    #[serde(default)]
    pub use_cache: bool,
    /// `--prove`: each confirmed finding got a reproducer, run at the buggy revision and at
    /// the fix commit.
    #[serde(default)]
    pub prove: bool,
    pub status: EvalStatus,
    pub started_at: String,
    pub finished_at: String,
    /// Wall time of this invocation.
    pub duration_ms: u64,
    /// Every case with a result, in case-id order.
    pub cases: Vec<CaseResult>,
    /// Case ids without a result.
    pub not_run: Vec<String>,
    pub totals: Totals,
}

/// One side of a case in a comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CompareCell {
    pub status: CaseStatus,
    pub unmatched: u32,
    pub debunked: u32,
    pub cost_usd: f64,
    /// The case's tokens, and those without a known price (`cost_usd` leaves them out).
    #[serde(default)]
    pub tokens: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unpriced_tokens: u64,
    pub wall_ms: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// One case, side by side.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CompareRow {
    pub case_id: String,
    /// The fix's subject (from whichever side has the case).
    pub subject: String,
    /// Null when panel A has no result for the case.
    pub a: Option<CompareCell>,
    pub b: Option<CompareCell>,
    /// Both have the case but with different contents (another revision, targets or
    /// expected locations): the two rows are not about the same defect.
    pub case_differs: bool,
}

/// One panel in a comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ComparePanel {
    /// The eval.json it was read from.
    pub path: String,
    pub config_digest: String,
    pub totals: Totals,
}

/// How the two panels agree on the cases both scored (same case contents).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Agreement {
    pub common: u32,
    pub both_found: u32,
    pub only_a: u32,
    pub only_b: u32,
    pub neither: u32,
}

/// `arev eval compare A.json B.json`: two evaluations side by side.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Comparison {
    pub schema_version: u32,
    /// Both sides scored at this tolerance.
    pub tolerance: u32,
    pub a: ComparePanel,
    pub b: ComparePanel,
    pub cases: Vec<CompareRow>,
    pub agreement: Agreement,
    /// What makes the comparison less than like-for-like (cases only one side has, cases
    /// that differ, unscored cases).
    pub notes: Vec<String>,
}
