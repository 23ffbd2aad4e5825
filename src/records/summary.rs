//! summary.json: the few facts `arev runs` shows about a finished run (status, reasons,
//! target, shard, counts), written next to report.json so that listing runs never parses
//! full reports (docs/architecture.md §7.2).

use super::report::{BySeverity, Report};
use super::stop::{AbortReason, RunStatus, StopReason};
use super::target::TargetKind;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// summary.json (`schemas/summary.schema.json`): a digest of report.json.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ReportSummary {
    /// The report's `schema_version`.
    pub schema_version: u32,
    pub run_id: String,
    pub status: RunStatus,
    pub stop_reason: Option<StopReason>,
    pub abort_reason: Option<AbortReason>,
    /// The target as given on the command line.
    pub target: String,
    pub target_kind: TargetKind,
    /// `i/n` for a `--shard` run.
    pub shard: Option<String>,
    pub confirmed: u32,
    pub debunked: u32,
    pub unresolved: u32,
    /// Confirmed findings by severity.
    pub by_severity: BySeverity,
    pub rounds: u32,
    /// Files reviewed and skipped (the report's coverage counts).
    pub reviewed: u32,
    pub skipped: u32,
    /// What the priced tokens cost.
    pub cost_usd: f64,
    /// Tokens of models without a known price, which `cost_usd` leaves out.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unpriced_tokens: u64,
    /// The report's tokens.
    #[serde(default)]
    pub tokens: u64,
    pub started_at: String,
    pub finished_at: String,
    pub duration_ms: u64,
}

impl ReportSummary {
    pub fn of(r: &Report) -> Self {
        Self {
            schema_version: r.schema_version,
            run_id: r.run_id.clone(),
            status: r.status,
            stop_reason: r.stop_reason,
            abort_reason: r.abort_reason,
            target: r.target.display.clone(),
            target_kind: r.target.kind,
            shard: r.shard.as_ref().map(|s| format!("{}/{}", s.index, s.count)),
            confirmed: r.confirmed.len() as u32,
            debunked: r.debunked.len() as u32,
            unresolved: r.unresolved.len() as u32,
            by_severity: r.by_severity.clone(),
            rounds: r.rounds.len() as u32,
            reviewed: r.coverage.reviewed,
            skipped: r.coverage.skipped,
            cost_usd: r.cost.usd,
            unpriced_tokens: r.cost.unpriced_tokens,
            tokens: r.cost.tokens,
            started_at: r.started_at.clone(),
            finished_at: r.finished_at.clone(),
            duration_ms: r.duration_ms,
        }
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_summary_carries_the_listed_facts() {
        let r = crate::records::fixtures::shard(2, 4, &["a.rs", "b.rs"], RunStatus::Complete);
        let s = ReportSummary::of(&r);
        assert_eq!(s.confirmed, r.confirmed.len() as u32);
        assert_eq!(s.shard.as_deref(), Some("2/4"));
        assert_eq!(s.target, r.target.display);
        assert_eq!(s.reviewed, r.coverage.reviewed);
        let back: ReportSummary =
            serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
        assert_eq!(back, s);
    }
}
