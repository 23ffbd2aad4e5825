//! The proof phase of a review (`--prove`, docs/prove.md) as report.json records it: each
//! confirmed finding's `proof` (its `Evidence`), and the phase's summary — the sandbox, the
//! thresholds, how many findings got each status — in report.json `prove`.

use super::agent::Severity;
use super::evidence::{Evidence, ProofStatus, SandboxMode};
use super::round::DispatchRecord;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// report.json `prove`: how the proofs were made and what they showed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProveSummary {
    /// Where the reproducers ran; `none` means unsandboxed, as the user running arev.
    pub sandbox: SandboxMode,
    /// `--require-proof`: only `preexisting` findings and those below `min_severity` were
    /// let through `--fail-on` (docs/prove.md "Statuses").
    pub require_proof: bool,
    /// `[prove] min_severity`: confirmed findings below it were `not_attempted`.
    pub min_severity: Severity,
    /// `[prove] max_findings`.
    pub max_findings: u32,
    /// How many confirmed findings got each status.
    pub counts: ProofCounts,
    /// Wall-clock time of the proof phase.
    pub duration_ms: u64,
}

/// Confirmed findings per proof status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProofCounts {
    pub reproduced: u32,
    pub preexisting: u32,
    pub not_reproduced: u32,
    pub inconclusive: u32,
    pub not_attempted: u32,
}

impl ProofCounts {
    pub fn add(&mut self, s: ProofStatus) {
        *self.get_mut(s) += 1;
    }

    fn get_mut(&mut self, s: ProofStatus) -> &mut u32 {
        match s {
            ProofStatus::Reproduced => &mut self.reproduced,
            ProofStatus::Preexisting => &mut self.preexisting,
            ProofStatus::NotReproduced => &mut self.not_reproduced,
            ProofStatus::Inconclusive => &mut self.inconclusive,
            ProofStatus::NotAttempted => &mut self.not_attempted,
        }
    }

    pub fn get(&self, s: ProofStatus) -> u32 {
        let mut c = *self;
        *c.get_mut(s)
    }

    /// `2 reproduced, 1 not_reproduced` (statuses with a count only; `none` without any).
    pub fn line(&self) -> String {
        let parts: Vec<String> = ProofStatus::ALL
            .iter()
            .filter(|s| self.get(**s) > 0)
            .map(|s| format!("{} {}", self.get(*s), s.as_str()))
            .collect();
        if parts.is_empty() {
            "none".into()
        } else {
            parts.join(", ")
        }
    }
}

/// The proof of one confirmed finding: which it is (round and id) and its evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FindingProof {
    pub round: u32,
    pub finding_id: String,
    /// Its directory name in the run dir: `proofs/<key>/`, `agents/p/<key>/`.
    pub key: String,
    /// The Prover's claim (what its run shows while the defect is there), when it made one.
    #[serde(default)]
    pub claim: Option<String>,
    pub evidence: Evidence,
}

/// What the proof phase hands the report: each proof, the Prover dispatches (priced like
/// any other) and the summary.
#[derive(Debug, Clone, PartialEq)]
pub struct ProofPhase {
    pub summary: ProveSummary,
    pub proofs: Vec<FindingProof>,
    pub dispatches: Vec<DispatchRecord>,
    /// What the phase could not clean up (a scratch tree left behind): report warnings.
    pub warnings: Vec<String>,
}

impl ProofPhase {
    /// The evidence of the finding `id` of round `round`.
    pub fn evidence(&self, round: u32, id: &str) -> Option<&Evidence> {
        self.proofs
            .iter()
            .find(|p| p.round == round && p.finding_id == id)
            .map(|p| &p.evidence)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_name_each_status_once() {
        let mut c = ProofCounts::default();
        assert_eq!(c.line(), "none");
        c.add(ProofStatus::Reproduced);
        c.add(ProofStatus::Reproduced);
        c.add(ProofStatus::NotAttempted);
        assert_eq!(c.line(), "2 reproduced, 1 not_attempted");
        assert_eq!(c.get(ProofStatus::Reproduced), 2);
    }
}
