//! Debunked once (docs/contracts.md §7, docs/architecture.md §11.3): what the Judge dismissed in an
//! earlier round of the run, and the pure step that keeps a repeat of it from the Judge. A
//! unioned finding that matches a dismissed one — by the union's sameness rule or by its
//! fingerprint — is dropped before the Judge and recorded with the earlier ruling
//! (round-N.json `debunked_before`), so it is judged and counted once.

use super::{RepeatedDebunk, RoundFinding, RoundRecord};
use crate::findings::{fingerprint_with, FileLines};
use crate::findings::{same_defect, Finding, Ruling, UnionRules, UnionedFinding};
use std::sync::Arc;

/// A finding the Judge dismissed (a valid ruling that does not confirm it).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Debunked {
    pub round: u32,
    /// The finding as the Judge saw it (its id is that round's `F…`).
    pub finding: Finding,
    pub fingerprint: String,
    pub ruling: Ruling,
}

/// A finding's fingerprint, from its file's lines when it has a place.
fn fingerprint_of(f: &Finding, lines: &mut impl FnMut(&str) -> Option<Arc<FileLines>>) -> String {
    let text = match (&f.file, f.line) {
        (Some(p), Some(_)) => lines(p),
        _ => None,
    };
    fingerprint_with(
        text.as_deref(),
        f.line,
        f.file.as_deref(),
        &f.category,
        &f.description,
    )
}

/// The findings of round `round` the Judge dismissed, from the findings it was sent and
/// each one's ruling (None: unresolved, which is not a dismissal).
pub(super) fn dismissed_in(
    round: u32,
    judged: &[RoundFinding],
    rulings: &[Option<Ruling>],
    mut lines: impl FnMut(&str) -> Option<Arc<FileLines>>,
) -> Vec<Debunked> {
    judged
        .iter()
        .zip(rulings)
        .filter_map(|(f, r)| {
            let r = r.as_ref().filter(|r| !r.is_confirmed())?;
            Some(Debunked {
                round,
                finding: f.finding.clone(),
                fingerprint: fingerprint_of(&f.finding, &mut lines),
                ruling: r.clone(),
            })
        })
        .collect()
}

/// Drop the unioned findings that repeat one dismissed in an earlier round (`before`):
/// each is recorded in `rec.debunked_before` with the earlier ruling and counted
/// (`counts.debunked_before`); the rest are returned in order. Nothing is computed when
/// nothing was dismissed before (round 1).
pub(super) fn drop_debunked(
    round: u32,
    unioned: Vec<UnionedFinding>,
    before: &[Debunked],
    rules: UnionRules<'_>,
    mut lines: impl FnMut(&str) -> Option<Arc<FileLines>>,
    rec: &mut RoundRecord,
) -> Vec<UnionedFinding> {
    if before.is_empty() {
        return unioned;
    }
    let mut kept = Vec::with_capacity(unioned.len());
    for u in unioned {
        let same = before
            .iter()
            .find(|d| same_defect(&u.finding, &d.finding, rules));
        let hit = match same {
            Some(d) => Some((d, "same defect")),
            None => {
                let fp = fingerprint_of(&u.finding, &mut lines);
                before
                    .iter()
                    .find(|d| d.fingerprint == fp)
                    .map(|d| (d, "fingerprint"))
            }
        };
        match hit {
            Some((d, matched_by)) => rec.debunked_before.push(RepeatedDebunk {
                finding: RoundFinding {
                    finding: u.finding,
                    passes: u.passes,
                    merged_from: u.merged_from,
                },
                round: d.round,
                finding_id: d.finding.id.clone(),
                matched_by: matched_by.to_string(),
                ruling: d.ruling.clone(),
            }),
            None => kept.push(u),
        }
    }
    let n = rec.debunked_before.len() as u32;
    rec.counts.debunked_before = n;
    if n > 0 {
        rec.decision.reasons.push(format!(
            "debunked once: {n} finding(s) repeating one the Judge dismissed in an earlier round kept from the Judge (round {round} carries the earlier ruling)"
        ));
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::{ArtefactType, FinalSeverity, SymbolIndex, Tier, Winner};
    use crate::test_support::finding;

    fn dismissal(id: &str, file: &str, line: u32) -> Ruling {
        Ruling {
            finding_id: id.into(),
            file: Some(file.into()),
            line: Some(line),
            target_type: ArtefactType::Code,
            final_severity: FinalSeverity::Dismissed,
            winner: Winner::Adversary,
            resolution: "guarded at the call site".into(),
            edit_instruction: None,
            cites: vec![],
            context: vec![],
        }
    }

    fn unioned(id: &str, file: &str, line: u32, category: &str) -> UnionedFinding {
        UnionedFinding {
            finding: finding(id, Some(file), Some(line), category),
            passes: vec![1],
            merged_from: vec![format!("p1:{id}")],
        }
    }

    fn text(lines: &[&str]) -> Arc<FileLines> {
        Arc::new(FileLines::from_text(lines.join("\n") + "\n"))
    }

    #[test]
    fn only_dismissals_are_remembered() {
        let judged: Vec<RoundFinding> = [("F1", 3), ("F2", 9), ("F3", 12)]
            .iter()
            .map(|(id, l)| RoundFinding {
                finding: finding(id, Some("a.rs"), Some(*l), "logic"),
                passes: vec![1],
                merged_from: vec![],
            })
            .collect();
        let mut confirmed = dismissal("F2", "a.rs", 9);
        (confirmed.winner, confirmed.final_severity) = (Winner::Enthusiast, FinalSeverity::High);
        let rulings = vec![Some(dismissal("F1", "a.rs", 3)), Some(confirmed), None];
        let d = dismissed_in(1, &judged, &rulings, |_| None);
        assert_eq!(d.len(), 1);
        assert_eq!((d[0].round, d[0].finding.id.as_str()), (1, "F1"));
        assert_eq!(d[0].ruling.resolution, "guarded at the call site");
    }

    #[test]
    fn a_repeat_by_sameness_or_fingerprint_is_kept_from_the_judge_with_the_earlier_ruling() {
        let src = text(&[
            "fn a() {",
            "    let x = parse(input);",
            "}",
            "",
            "",
            "",
            "",
            "",
            "",
            "",
            "",
            "",
            "fn b() {",
            "    let x = parse(input);",
            "}",
            "    let y = parse(input);",
        ]);
        let lines = |_: &str| Some(src.clone());
        let judged = [RoundFinding {
            finding: finding("F1", Some("a.rs"), Some(2), "logic"),
            passes: vec![1],
            merged_from: vec![],
        }];
        let before = dismissed_in(1, &judged, &[Some(dismissal("F1", "a.rs", 2))], lines);
        let symbols = SymbolIndex::default();
        let mut rec = RoundRecord::new(2, Tier::Opus, "FULL", 1);
        let kept = drop_debunked(
            2,
            vec![
                // ±5 lines, same category: the same defect.
                unioned("F1", "a.rs", 5, "logic"),
                // Far away, another category: new.
                unioned("F2", "a.rs", 14, "security"),
                // Far away, same category, on a line whose text differs: new.
                unioned("F3", "a.rs", 16, "logic"),
            ],
            &before,
            UnionRules::Code(&symbols),
            lines,
            &mut rec,
        );
        let ids: Vec<&str> = kept.iter().map(|u| u.finding.id.as_str()).collect();
        assert_eq!(ids, ["F2", "F3"]);
        assert_eq!(rec.counts.debunked_before, 1);
        let r = &rec.debunked_before[0];
        assert_eq!((r.round, r.finding_id.as_str()), (1, "F1"));
        assert_eq!(r.matched_by, "same defect");
        assert_eq!(r.ruling.final_severity, FinalSeverity::Dismissed);
        assert_eq!(r.finding.finding.line, Some(5));
        assert!(rec.decision.reasons[0].starts_with("debunked once: 1 finding(s)"));

        // The flagged line moved out of the ±5 window (lines added above it): the
        // fingerprint still knows it.
        let moved = text(&[
            "fn a() {",
            "",
            "",
            "",
            "",
            "",
            "",
            "",
            "",
            "",
            "",
            "",
            "    let x = parse(input);",
            "}",
        ]);
        let mut rec = RoundRecord::new(2, Tier::Opus, "FULL", 1);
        let kept = drop_debunked(
            2,
            vec![unioned("F1", "a.rs", 13, "logic")],
            &before,
            UnionRules::Code(&symbols),
            |_| Some(moved.clone()),
            &mut rec,
        );
        assert!(kept.is_empty());
        assert_eq!(rec.debunked_before[0].matched_by, "fingerprint");
        // Nothing dismissed before: nothing dropped, nothing recorded.
        let mut rec = RoundRecord::new(1, Tier::Opus, "FULL", 1);
        let kept = drop_debunked(
            1,
            vec![unioned("F1", "a.rs", 2, "logic")],
            &[],
            UnionRules::Code(&symbols),
            |_| None,
            &mut rec,
        );
        assert_eq!(kept.len(), 1);
        assert!(rec.debunked_before.is_empty() && rec.decision.reasons.is_empty());
    }
}
