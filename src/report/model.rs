//! report.json (`schema_version: 1`; schema in `schemas/report.schema.json`).
//!
//! A worked example of the top level:
//! `{"schema_version":1,"run_id":"20261121-180000-a1b2c3-src-lib-rs","status":"complete",
//! "stop_reason":"zero-findings","target":{…},"rounds":[…],"confirmed":[…],"debunked":[…],
//! "unresolved":[],"by_severity":{"critical":0,"high":1,"medium":0,"low":0},"coverage":{…},
//! "cost":{…},"quality":{…}}`

use crate::findings::{Severity, Tier, Winner};
use crate::round::StopReason;
use crate::store::{AbortReason, RunStatus};
use crate::target::{Mode, ShardInfo, SkipReason, TargetKind, TargetType};
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
    pub iterate: Option<crate::iterate::IterateReport>,
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
    /// continue | stop | abort | interrupted; a merged report's round whose shards decided
    /// differently (and none continued) joins them with `/` (`stop/abort`).
    pub decision: String,
    pub decision_reasons: Vec<String>,
}

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
    /// Enthusiast passes that found it.
    pub found_by_passes: Vec<u32>,
    /// The configured agents whose passes found it (in pass order, each once): with
    /// `roles.enthusiast` a list, passes run on different agents.
    pub found_by: Vec<String>,
    /// The configured agent that ruled on it (null when unresolved).
    pub ruled_by: Option<String>,
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
}

impl CoverageFile {
    /// The skip reason as shown: `excluded:<glob>`, `generated`, `binary`, …; None when
    /// the file was reviewed.
    pub fn reason_label(&self) -> Option<String> {
        self.reason
            .map(|r| crate::target::skip_label(r, self.glob.as_deref()))
    }
}

/// Which files were reviewed, compactly: `files` lists the exceptions (every skipped file
/// with its reason, and any file of the target that was not reviewed), `others` is the
/// status of every other file of `target.allowed_files`. A report without `others` (written
/// by an earlier arev) lists every file in `files`. `Coverage::expand` gives the full list
/// either way.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Coverage {
    pub reviewed: u32,
    pub skipped: u32,
    /// The exceptions, sorted by path (every file when `others` is null).
    pub files: Vec<CoverageFile>,
    /// The status of every file of `target.allowed_files` not in `files` (`reviewed`, or
    /// `skipped` when the review did not complete); null: `files` lists every file.
    #[serde(default)]
    pub others: Option<CoverageStatus>,
}

impl Coverage {
    /// Coverage of a target whose `allowed` files all have the status `others`, except the
    /// `exceptions` (skipped files with their reasons, files not reviewed).
    pub fn with_exceptions(
        reviewed: u32,
        mut exceptions: Vec<CoverageFile>,
        others: CoverageStatus,
    ) -> Self {
        exceptions.sort_by(|a, b| a.path.cmp(&b.path));
        Self {
            reviewed,
            skipped: exceptions.iter().filter(|f| f.reason.is_some()).count() as u32,
            files: exceptions,
            others: Some(others),
        }
    }

    /// Every file with its status, sorted by path: the listed files and, with `others`, the
    /// `allowed` files (the report's `target.allowed_files`) not listed.
    pub fn expand(&self, allowed: &[String]) -> Vec<CoverageFile> {
        let Some(others) = self.others else {
            return self.files.clone();
        };
        let listed: std::collections::HashSet<&str> =
            self.files.iter().map(|f| f.path.as_str()).collect();
        let mut all: Vec<CoverageFile> = self
            .files
            .iter()
            .cloned()
            .chain(
                allowed
                    .iter()
                    .filter(|p| !listed.contains(p.as_str()))
                    .map(|p| CoverageFile {
                        path: p.clone(),
                        status: others,
                        reason: None,
                        glob: None,
                    }),
            )
            .collect();
        all.sort_by(|a, b| a.path.cmp(&b.path));
        all
    }

    /// The reviewed files (of `allowed`, the report's `target.allowed_files`), sorted.
    pub fn reviewed_files(&self, allowed: &[String]) -> Vec<String> {
        self.expand(allowed)
            .into_iter()
            .filter(|f| f.status == CoverageStatus::Reviewed)
            .map(|f| f.path)
            .collect()
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CostLine {
    pub usd: f64,
    pub tokens: u64,
    pub dispatches: u32,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Cost {
    pub usd: f64,
    pub tokens: u64,
    pub by_role: BTreeMap<String, CostLine>,
    pub by_tier: BTreeMap<String, CostLine>,
    /// Per configured agent name.
    pub by_agent: BTreeMap<String, CostLine>,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, status: CoverageStatus, reason: Option<SkipReason>) -> CoverageFile {
        CoverageFile {
            path: path.into(),
            status,
            reason,
            glob: None,
        }
    }

    #[test]
    fn coverage_exceptions_expand_to_every_file() {
        let allowed = vec!["a.rs".to_owned(), "c.rs".to_owned()];
        let blob = file("b.bin", CoverageStatus::Skipped, Some(SkipReason::Binary));
        let c = Coverage::with_exceptions(2, vec![blob.clone()], CoverageStatus::Reviewed);
        assert_eq!(c.skipped, 1);
        assert_eq!(
            c.expand(&allowed),
            [
                file("a.rs", CoverageStatus::Reviewed, None),
                blob.clone(),
                file("c.rs", CoverageStatus::Reviewed, None)
            ]
        );
        assert_eq!(c.reviewed_files(&allowed), allowed);
        // An unfinished review: nothing reviewed.
        let c = Coverage::with_exceptions(0, vec![blob], CoverageStatus::Skipped);
        assert!(c.reviewed_files(&allowed).is_empty());
        // A report written before `others` lists every file, read as it is.
        let old: Coverage = serde_json::from_str(
            r#"{"reviewed":1,"skipped":1,"files":[{"path":"a.rs","status":"reviewed","reason":null},{"path":"b.bin","status":"skipped","reason":"binary"}]}"#,
        )
        .unwrap();
        assert_eq!(old.others, None);
        assert_eq!(old.reviewed_files(&allowed), ["a.rs"]);
        assert_eq!(old.expand(&allowed).len(), 2);
    }
}
