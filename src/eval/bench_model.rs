//! What `arev eval bench` writes: each PR's result (`<out>/prs/<hash>.json`), the candidates
//! file in the benchmark's own layout (`<out>/candidates.json`:
//! `{"<pr url>": {"arev": [{text, path, line, source}], "arev-unresolved": […]}}`), the
//! run's summary (`<out>/bench.json`) and, with `--score`, the Matcher's scores.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub const BENCH_SCHEMA_VERSION: u32 = 1;
/// The tool names arev's candidates are filed under.
pub const TOOL: &str = "arev";
pub const TOOL_UNRESOLVED: &str = "arev-unresolved";

/// One candidate, as the benchmark's judge step reads it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Candidate {
    /// What a maintainer reads: the finding's description and the Judge's resolution.
    pub text: String,
    /// Repository-relative file (null when the finding names none).
    pub path: Option<String>,
    pub line: Option<u32>,
    /// `arev` (confirmed by the Judge) or `arev-unresolved` (left unresolved).
    pub source: String,
}

/// How a PR's review ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BenchOutcome {
    /// The review completed (or the diff was empty).
    Complete,
    /// A gate aborted the review: no verdict, no candidates.
    Aborted,
    /// The PR could not be fetched or reviewed: reported, tried again next time.
    Failed,
}

/// One PR's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BenchPrResult {
    pub schema_version: u32,
    pub url: String,
    /// `owner/repo`.
    pub repo: String,
    /// The golden file's stem (the benchmark's source repository).
    pub source: String,
    /// What decides resumption: sha256 of url, configuration digest, arev version, --prove.
    pub key: String,
    pub config_digest: String,
    pub arev_version: String,
    pub prove: bool,
    pub base: Option<String>,
    pub head: Option<String>,
    pub outcome: BenchOutcome,
    pub detail: Option<String>,
    /// The review's run dir (under `<out>/runs/`).
    pub run_dir: Option<String>,
    pub cost_usd: f64,
    pub tokens: u64,
    /// Of `tokens`, those of a model without a known price, which `cost_usd` leaves out.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unpriced_tokens: u64,
    pub wall_ms: u64,
    pub confirmed: Vec<Candidate>,
    pub unresolved: Vec<Candidate>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The candidates file: PR url → tool name → candidates.
pub type CandidatesFile = BTreeMap<String, BTreeMap<String, Vec<Candidate>>>;

/// The run's summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BenchReport {
    pub schema_version: u32,
    pub arev_version: String,
    pub config_digest: String,
    pub golden: String,
    pub out_dir: String,
    pub prs: Vec<BenchPrResult>,
    /// PRs without a result (interrupted before they ran).
    pub not_run: Vec<String>,
    pub cost_usd: f64,
    pub tokens: u64,
    /// Of `tokens`, those of a model without a known price, which `cost_usd` leaves out.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unpriced_tokens: u64,
    /// With `--score`: the Matcher's figures.
    pub score: Option<BenchScore>,
}

/// Precision, recall and F1 over a set of PRs, as the benchmark computes them: `tp` golden
/// comments matched, `fp` candidates that matched none, `fn_` golden comments unmatched;
/// precision = tp / (tp + fp), recall = tp / (tp + fn), F1 their harmonic mean.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Figures {
    pub prs: u32,
    pub tp: u32,
    pub fp: u32,
    #[serde(rename = "fn")]
    pub fn_: u32,
    pub precision: f64,
    pub recall: f64,
    pub f1: f64,
    /// Matcher answers that were malformed or rejected (counted as no match).
    pub errors: u32,
}

/// One Matcher verdict on a (golden comment, candidate) pair.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PairVerdict {
    pub golden: usize,
    pub candidate: usize,
    #[serde(rename = "match")]
    pub matched: bool,
    pub confidence: f64,
    pub reasoning: String,
    /// Set when the Matcher gave no valid answer (malformed twice, or a gate fired): the
    /// pair counts as no match.
    pub error: Option<String>,
    pub cost_usd: f64,
    /// The Matcher's tokens of a model without a known price, which `cost_usd` leaves out.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unpriced_tokens: u64,
}

/// One PR's score.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PrScore {
    pub url: String,
    /// What decides reuse: the golden comments, the candidates and the configuration.
    pub key: String,
    pub tp: u32,
    pub fp: u32,
    #[serde(rename = "fn")]
    pub fn_: u32,
    pub errors: u32,
    pub cost_usd: f64,
    /// Of the Matcher's tokens, those without a known price.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unpriced_tokens: u64,
    pub pairs: Vec<PairVerdict>,
}

/// `--score`: overall, per source repository and per `requires_context` label.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BenchScore {
    pub overall: Figures,
    pub by_repo: BTreeMap<String, Figures>,
    pub by_context: BTreeMap<String, Figures>,
    pub cost_usd: f64,
    /// Of the Matcher's tokens, those without a known price (`cost_usd` leaves them out).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unpriced_tokens: u64,
    pub prs: Vec<PrScore>,
}
