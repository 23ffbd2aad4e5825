//! Unit tests of the proof phase's pure parts: which findings are proved, keys, budget.

use super::*;
use crate::findings::{ArtefactType, FinalSeverity, Ruling, Winner};
use crate::round::{ReviewEnd, RoundFinding, StopReason};

fn judged(round: u32, id: &str, severity: FinalSeverity, winner: Winner) -> Judged {
    let f = crate::test_support::finding(id, Some("a.py"), Some(3), "logic");
    Judged {
        round,
        finding: RoundFinding {
            finding: f,
            passes: vec![1],
            merged_from: vec![],
        },
        ruling: Some(Ruling {
            finding_id: id.into(),
            file: Some("a.py".into()),
            line: Some(3),
            target_type: ArtefactType::Code,
            final_severity: severity,
            winner,
            resolution: "confirmed".into(),
            edit_instruction: None,
            cites: vec![],
            context: vec![],
        }),
    }
}

fn plan_of(min: Severity, max: u32) -> ProvePlan {
    ProvePlan {
        sandbox: crate::records::SandboxMode::Bwrap,
        min_severity: min,
        max_findings: max,
        timeout: std::time::Duration::from_secs(5),
        memory_bytes: 0,
        env: vec![],
        bind_ro: vec![],
        require_proof: false,
    }
}

#[test]
fn the_most_severe_confirmed_findings_are_proved_and_the_rest_not_attempted() {
    let mut result = ReviewResult::ended(ReviewEnd::Stopped(StopReason::MaxRounds));
    result.judged = vec![
        judged(1, "F1", FinalSeverity::Medium, Winner::Enthusiast),
        judged(1, "F2", FinalSeverity::High, Winner::Split),
        judged(1, "F3", FinalSeverity::High, Winner::Adversary),
        judged(2, "F1", FinalSeverity::Critical, Winner::Enthusiast),
        judged(2, "F2", FinalSeverity::Dismissed, Winner::Enthusiast),
        judged(2, "F/3", FinalSeverity::High, Winner::Enthusiast),
    ];
    let (chosen, skipped) = select(&plan_of(Severity::High, 2), &result);
    let keys: Vec<&str> = chosen.iter().map(|c| c.key.as_str()).collect();
    assert_eq!(
        keys,
        ["r2-F1", "r1-F2"],
        "critical first, then the review's order"
    );
    let mut why: Vec<(String, ProofStatus, String)> = skipped
        .iter()
        .map(|p| {
            (
                p.key.clone(),
                p.evidence.status,
                p.evidence.reason.clone().unwrap_or_default(),
            )
        })
        .collect();
    why.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        why,
        [
            (
                "r1-F1".into(),
                ProofStatus::NotAttempted,
                "below [prove] min_severity (high)".into()
            ),
            (
                "r2-F_3".into(),
                ProofStatus::NotAttempted,
                "over [prove] max_findings (2)".into()
            ),
        ],
        "the debunked and dismissed findings are not confirmed: no proof at all"
    );
    assert!(skipped.iter().all(|p| p.evidence.head.is_none()));
}

#[test]
fn keys_are_plain_directory_names() {
    assert_eq!(safe_key("F12"), "F12");
    assert_eq!(safe_key("../x"), "___x");
    assert_eq!(safe_key(""), "_");
    assert_eq!(safe_key(&"F".repeat(100)).len(), 32);
}
