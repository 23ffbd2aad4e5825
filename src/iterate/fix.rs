//! The Fixer's side of an iteration as plain functions: which confirmed findings it gets
//! (numbered F1..Fn), the rulings it sees in `<rulings>`, the files it may change, and what
//! arev makes of its answer (applied / skipped ids checked against what it was sent).

use super::{FixItem, FixReport};
use crate::config::FailOn;
use crate::findings::{FixerOutput, Severity, SkippedFix};
use crate::report::ReportFinding;
use serde::Serialize;
use std::collections::BTreeSet;

/// A confirmed ruling as the Fixer sees it inside `<rulings>`.
#[derive(Debug, Clone, Serialize)]
pub struct FixerRuling<'a> {
    pub id: String,
    pub severity: Severity,
    pub file: Option<&'a str>,
    pub line: Option<u32>,
    pub category: &'a str,
    pub description: &'a str,
    pub evidence: &'a str,
    pub resolution: Option<&'a str>,
    pub edit_instruction: Option<&'a str>,
}

/// The confirmed findings at or above the fix threshold.
pub fn fixable(confirmed: &[ReportFinding], threshold: FailOn) -> Vec<&ReportFinding> {
    confirmed
        .iter()
        .filter(|f| threshold.fails(f.severity))
        .collect()
}

/// The fixable findings numbered F1..Fn for the Fixer.
pub fn fix_items<'a>(fixable: &[&'a ReportFinding]) -> Vec<(FixItem, &'a ReportFinding)> {
    fixable
        .iter()
        .enumerate()
        .map(|(k, f)| {
            (
                FixItem {
                    id: format!("F{}", k + 1),
                    fingerprint: f.fingerprint.clone(),
                    round: f.round,
                    round_finding_id: f.id.clone(),
                },
                *f,
            )
        })
        .collect()
}

/// The rulings of `items` as the Fixer's prompt carries them.
pub fn fixer_rulings<'a>(items: &'a [(FixItem, &'a ReportFinding)]) -> Vec<FixerRuling<'a>> {
    items
        .iter()
        .map(|(it, f)| FixerRuling {
            id: it.id.clone(),
            severity: f.severity,
            file: f.file.as_deref(),
            line: f.line,
            category: &f.category,
            description: &f.description,
            evidence: &f.evidence,
            resolution: f.resolution.as_deref(),
            edit_instruction: f.edit_instruction.as_deref(),
        })
        .collect()
}

/// The files the fixable findings name, sorted, each once.
pub fn fix_files(fixable: &[&ReportFinding]) -> Vec<String> {
    fixable
        .iter()
        .filter_map(|f| f.file.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// The fix report before the Fixer's answer is looked at: its dispatch dir and cost.
pub fn new_fix_report(dir: String, cost_usd: f64, tokens: u64) -> FixReport {
    FixReport {
        applied: vec![],
        skipped: vec![],
        errors: vec![],
        changed: vec![],
        reverted: vec![],
        commit: None,
        dir,
        cost_usd,
        tokens,
        unpriced_tokens: 0,
        proofs: vec![],
    }
}

/// The Fixer's account, checked against the ids it was sent: unknown ids are errors.
pub fn record_answer(out: &FixerOutput, known: &BTreeSet<&str>, fix: &mut FixReport) {
    for id in &out.applied {
        if known.contains(id.as_str()) {
            fix.applied.push(id.clone());
        } else {
            fix.errors.push(format!("fixer_unknown_id:{id}"));
        }
    }
    for sk in &out.skipped {
        if known.contains(sk.finding_id.as_str()) {
            fix.skipped.push(SkippedFix {
                finding_id: sk.finding_id.clone(),
                reason: sk.reason.clone(),
            });
        } else {
            fix.errors
                .push(format!("fixer_unknown_id:{}", sk.finding_id));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(id: &str, file: &str, severity: Severity) -> ReportFinding {
        ReportFinding {
            fingerprint: format!("fp-{id}"),
            id: id.into(),
            round: 2,
            severity,
            enthusiast_severity: severity,
            file: Some(file.into()),
            line: Some(3),
            section: None,
            category: "logic".into(),
            description: "d".into(),
            evidence: "e".into(),
            winner: None,
            resolution: Some("r".into()),
            edit_instruction: Some("do".into()),
            cites: vec![],
            context: vec![],
            found_by_passes: vec![1],
            found_by: vec!["claude".into()],
            ruled_by: Some("claude".into()),
            baseline_state: None,
            carried_over_from: None,
            suppression: None,
            proof: None,
        }
    }

    #[test]
    fn findings_at_the_threshold_are_numbered_for_the_fixer() {
        let confirmed = [
            finding("F3", "b.rs", Severity::High),
            finding("F1", "a.rs", Severity::Low),
            finding("F2", "b.rs", Severity::Medium),
        ];
        let fixable = fixable(&confirmed, FailOn::Medium);
        let items = fix_items(&fixable);
        let ids: Vec<(&str, &str)> = items
            .iter()
            .map(|(it, _)| (it.id.as_str(), it.round_finding_id.as_str()))
            .collect();
        assert_eq!(ids, [("F1", "F3"), ("F2", "F2")]);
        assert_eq!(items[0].0.fingerprint, "fp-F3");
        assert_eq!(fix_files(&fixable), ["b.rs"]);
        let rulings = fixer_rulings(&items);
        assert_eq!(rulings[1].id, "F2");
        assert_eq!(rulings[1].edit_instruction, Some("do"));
    }

    #[test]
    fn ids_the_fixer_was_not_sent_are_errors() {
        let known: BTreeSet<&str> = ["F1", "F2"].into();
        let out = FixerOutput {
            applied: vec!["F1".into(), "F7".into()],
            skipped: vec![
                SkippedFix {
                    finding_id: "F2".into(),
                    reason: "no".into(),
                },
                SkippedFix {
                    finding_id: "F9".into(),
                    reason: "no".into(),
                },
            ],
        };
        let mut fix = new_fix_report(String::new(), 0.0, 0);
        record_answer(&out, &known, &mut fix);
        assert_eq!(fix.applied, ["F1"]);
        assert_eq!(fix.skipped.len(), 1);
        assert_eq!(fix.errors, ["fixer_unknown_id:F7", "fixer_unknown_id:F9"]);
    }
}
