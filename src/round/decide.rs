//! The stop predicate and escalation of SPEC §7 3D, as one pure function over round facts.

use super::StopReason;
use crate::findings::{Ruling, Severity, Tier};
use crate::target::Mode;
use std::collections::BTreeSet;

/// Lines within which a confirmed ruling is a propagation of an earlier location.
const NEAR: u32 = 5;

/// What the round produced, as the decision needs it.
#[derive(Debug, Clone, Default)]
pub struct RoundFacts {
    /// All rulings of this round (empty when the Judge was skipped).
    pub rulings: Vec<Ruling>,
    /// Finding ids (of this round) that carried `prior_finding_id`.
    pub with_prior_id: Vec<String>,
    /// Findings sent to the Judge.
    pub yield_count: u32,
    /// Some role answered malformed JSON this round (after the re-dispatch).
    pub malformed: bool,
    pub judge_next_model: Option<Tier>,
    pub judge_convergence: bool,
}

/// Run state the decision reads.
#[derive(Debug, Clone)]
pub struct DecideInput<'a> {
    pub round: u32,
    pub max_rounds: u32,
    pub mode: Mode,
    pub tier: Tier,
    /// `--model`: the floor.
    pub tier_start: Tier,
    /// (file, line) confirmed in earlier rounds.
    pub confirmed_before: &'a [(String, u32)],
    /// Rulings of the previous round (for the identity check).
    pub prior_rulings: Option<&'a [Ruling]>,
    pub prior_substantive: Option<u32>,
    pub runs_worsening: u32,
    pub prior_yield: Option<u32>,
    /// Sub-opus rounds in a row before this one.
    pub sub_opus_streak: u32,
    pub budget_exhausted: bool,
    /// The spend behind `budget_exhausted`, for the record ("" without a budget).
    pub budget_note: String,
}

/// The outcome of 3D for one round.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub stop: Option<StopReason>,
    pub next_tier: Tier,
    pub substantive: u32,
    pub self_reference: u32,
    pub confirmed: u32,
    pub runs_worsening: u32,
    /// Each rule's verdict with its numbers, in evaluation order.
    pub reasons: Vec<String>,
    pub round2_skipped: bool,
    pub cost_warning: bool,
    pub escalated: bool,
}

/// The (file, clustered line, winner, severity) set of a round's rulings. Lines of one
/// file are sorted and a new cluster starts when the gap to the previous line exceeds 5;
/// each line is represented by its cluster's first line.
pub fn cluster_set(rulings: &[Ruling]) -> BTreeSet<(String, Option<u32>, String, String)> {
    let mut by_file: std::collections::BTreeMap<String, Vec<u32>> = Default::default();
    for r in rulings {
        if let Some(l) = r.line {
            by_file
                .entry(r.file.clone().unwrap_or_default())
                .or_default()
                .push(l);
        }
    }
    let mut rep: std::collections::BTreeMap<(String, u32), u32> = Default::default();
    for (file, mut lines) in by_file {
        lines.sort_unstable();
        let mut start = lines[0];
        let mut prev = lines[0];
        for l in lines {
            if l - prev > NEAR {
                start = l;
            }
            rep.insert((file.clone(), l), start);
            prev = l;
        }
    }
    rulings
        .iter()
        .map(|r| {
            let file = r.file.clone().unwrap_or_default();
            let line = r.line.map(|l| rep[&(file.clone(), l)]);
            (
                file,
                line,
                format!("{:?}", r.winner),
                r.final_severity.as_str().to_string(),
            )
        })
        .collect()
}

fn is_self_reference(r: &Ruling, with_prior: &[String], before: &[(String, u32)]) -> bool {
    if with_prior.contains(&r.finding_id) {
        return true;
    }
    match (&r.file, r.line) {
        (Some(f), Some(l)) => before
            .iter()
            .any(|(bf, bl)| bf == f && bl.abs_diff(l) <= NEAR),
        _ => false,
    }
}

/// Evaluate SPEC §7 3D rules 1–7 in order.
pub fn decide(input: &DecideInput<'_>, facts: &RoundFacts) -> Decision {
    let confirmed: Vec<&Ruling> = facts.rulings.iter().filter(|r| r.is_confirmed()).collect();
    let n_confirmed = confirmed.len() as u32;
    let self_ref = confirmed
        .iter()
        .filter(|r| is_self_reference(r, &facts.with_prior_id, input.confirmed_before))
        .count() as u32;
    let substantive = n_confirmed - self_ref;
    let mut d = Decision {
        stop: None,
        next_tier: input.tier,
        substantive,
        self_reference: self_ref,
        confirmed: n_confirmed,
        runs_worsening: input.runs_worsening,
        reasons: vec![format!(
            "round {}: {} confirmed ({} substantive, {} self-reference), yield {}, tier {}",
            input.round, n_confirmed, substantive, self_ref, facts.yield_count, input.tier
        )],
        round2_skipped: false,
        cost_warning: false,
        escalated: false,
    };
    let at_ceiling = input.tier == Tier::Opus;
    let mut jumped = false;

    // 1. Zero findings after round 1.
    if n_confirmed == 0 && input.round > 1 {
        if at_ceiling {
            d.reasons
                .push("rule 1: zero confirmed at opus → stop zero-findings".into());
            d.stop = Some(StopReason::ZeroFindings);
            return d;
        }
        d.reasons.push(format!(
            "rule 1: zero confirmed at {} → confirmation round at opus",
            input.tier
        ));
        d.next_tier = Tier::Opus;
        jumped = true;
    }
    // 2. Only self-reference.
    if !jumped && substantive == 0 && n_confirmed > 0 {
        if at_ceiling {
            d.reasons
                .push("rule 2: all confirmed findings are self-reference at opus → stop".into());
            d.stop = Some(StopReason::AllSelfReference);
            return d;
        }
        d.reasons.push(format!(
            "rule 2: all confirmed findings are self-reference at {} → confirmation round at opus",
            input.tier
        ));
        d.next_tier = Tier::Opus;
        jumped = true;
    }
    // 3. Anti-divergence.
    match input.prior_substantive {
        Some(prev) if substantive > prev => {
            d.runs_worsening = input.runs_worsening + 1;
            d.reasons.push(format!(
                "rule 3: substantive grew {prev} → {substantive}; worsening rounds = {}",
                d.runs_worsening
            ));
        }
        _ => d.runs_worsening = 0,
    }
    if d.runs_worsening >= 2 {
        d.reasons
            .push("rule 3: two worsening rounds → stop anti-divergence-halt".into());
        d.stop = Some(StopReason::AntiDivergenceHalt);
        return d;
    }
    // 4. Identity check.
    if input.round == 1 {
        if facts.judge_convergence {
            d.reasons
                .push("rule 4: the Judge claimed convergence in round 1; round 1 never converges (overridden)".into());
        }
    } else if let Some(prior) = input.prior_rulings {
        let same = !facts.rulings.is_empty() && cluster_set(prior) == cluster_set(&facts.rulings);
        if same && at_ceiling {
            d.reasons.push(
                "rule 4: rulings identical to the prior round at opus → stop all-self-reference"
                    .into(),
            );
            d.stop = Some(StopReason::AllSelfReference);
            return d;
        }
        if facts.judge_convergence != same {
            d.reasons.push(format!(
                "rule 4: the Judge said convergence={}, the deterministic check says {} (advisory overridden)",
                facts.judge_convergence, same
            ));
        }
    }
    // 5. Escalation (FULL only, upwards only, never below --model).
    if input.mode == Mode::Full && !jumped {
        let floor = input.tier.max(input.tier_start);
        let mut next = floor;
        if facts.malformed && input.tier < Tier::Opus {
            next = input.tier.up();
            d.reasons
                .push(format!("rule 5: malformed output → escalate to {next}"));
        } else if let Some(j) = facts.judge_next_model.filter(|j| *j > input.tier) {
            next = j;
            d.reasons
                .push(format!("rule 5: the Judge asked for {j} → escalate"));
        } else if let Some(prev) = input.prior_yield {
            let y = facts.yield_count;
            if y <= 2 && f64::from(y) < 0.4 * f64::from(prev) && input.tier < Tier::Opus {
                next = input.tier.up();
                d.reasons.push(format!(
                    "rule 5: near-convergence (yield {y} < 0.4 × {prev}) → escalate to {next}"
                ));
            }
        }
        d.escalated = next > input.tier;
        d.next_tier = next.max(input.tier_start);
        if d.next_tier < Tier::Opus && input.sub_opus_streak + 1 >= 3 {
            d.cost_warning = true;
            d.reasons
                .push("rule 5: three sub-opus rounds in a row (cost warning)".into());
        }
    }
    // 6. Round-2 gate.
    if input.round == 1 {
        let medium_plus = confirmed
            .iter()
            .any(|r| r.final_severity.severity() >= Some(Severity::Medium));
        if n_confirmed < 3 && !medium_plus {
            d.round2_skipped = true;
            let reason = if n_confirmed == 0 {
                StopReason::ZeroFindings
            } else {
                StopReason::AllSelfReference
            };
            d.reasons.push(format!(
                "rule 6: round2_skipped: {n_confirmed} confirmed (< 3) and none medium+ → stop {}",
                reason.as_str()
            ));
            d.stop = Some(reason);
            return d;
        }
    }
    // 7. Ceilings.
    if input.round + 1 > input.max_rounds {
        d.reasons.push(format!(
            "rule 7: round {} reached max rounds {} → stop max-rounds",
            input.round, input.max_rounds
        ));
        d.stop = Some(StopReason::MaxRounds);
        return d;
    }
    if input.budget_exhausted {
        d.reasons.push(format!(
            "rule 7: budget exhausted ({}) → stop budget-exhausted",
            input.budget_note
        ));
        d.stop = Some(StopReason::BudgetExhausted);
        return d;
    }
    d.reasons.push(format!(
        "continue to round {} at {}",
        input.round + 1,
        d.next_tier
    ));
    d
}

/// Confirmed rulings with a winner that counts (used by the driver to update state).
pub fn confirmed_locations(rulings: &[Ruling]) -> Vec<(String, u32)> {
    rulings
        .iter()
        .filter(|r| r.is_confirmed())
        .filter_map(|r| Some((r.file.clone()?, r.line?)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::{ArtefactType, FinalSeverity, Winner};

    fn ruling(id: &str, file: &str, line: u32, sev: FinalSeverity, winner: Winner) -> Ruling {
        Ruling {
            finding_id: id.into(),
            file: Some(file.into()),
            line: Some(line),
            target_type: ArtefactType::Code,
            final_severity: sev,
            winner,
            resolution: "r".into(),
            edit_instruction: None,
            cites: vec![],
        }
    }

    fn input(round: u32) -> DecideInput<'static> {
        DecideInput {
            round,
            max_rounds: 3,
            mode: Mode::Lightweight,
            tier: Tier::Opus,
            tier_start: Tier::Opus,
            confirmed_before: &[],
            prior_rulings: None,
            prior_substantive: None,
            runs_worsening: 0,
            prior_yield: None,
            sub_opus_streak: 0,
            budget_exhausted: false,
            budget_note: String::new(),
        }
    }

    #[test]
    fn round_one_without_findings_stops_zero_findings_via_round2_gate() {
        let d = decide(&input(1), &RoundFacts::default());
        assert_eq!(d.stop, Some(StopReason::ZeroFindings));
        assert!(d.round2_skipped);
    }

    #[test]
    fn round_one_low_findings_stop_all_self_reference() {
        let facts = RoundFacts {
            rulings: vec![ruling(
                "F1",
                "a.rs",
                3,
                FinalSeverity::Low,
                Winner::Enthusiast,
            )],
            yield_count: 1,
            ..Default::default()
        };
        let d = decide(&input(1), &facts);
        assert_eq!(d.stop, Some(StopReason::AllSelfReference));
    }

    #[test]
    fn medium_finding_continues_then_max_rounds() {
        let facts = RoundFacts {
            rulings: vec![ruling("F1", "a.rs", 3, FinalSeverity::High, Winner::Split)],
            yield_count: 1,
            ..Default::default()
        };
        let d = decide(&input(1), &facts);
        assert_eq!(d.stop, None);
        let mut i = input(3);
        i.prior_substantive = Some(1);
        let facts3 = RoundFacts {
            rulings: vec![ruling("F1", "b.rs", 30, FinalSeverity::High, Winner::Split)],
            yield_count: 1,
            ..Default::default()
        };
        assert_eq!(decide(&i, &facts3).stop, Some(StopReason::MaxRounds));
    }

    #[test]
    fn clusters_are_deterministic() {
        let a = vec![
            ruling("F1", "a.rs", 10, FinalSeverity::High, Winner::Split),
            ruling("F2", "a.rs", 14, FinalSeverity::High, Winner::Split),
        ];
        let b = vec![
            ruling("F1", "a.rs", 12, FinalSeverity::High, Winner::Split),
            ruling("F2", "a.rs", 16, FinalSeverity::High, Winner::Split),
        ];
        assert_eq!(cluster_set(&a).len(), 1);
        assert_eq!(cluster_set(&b).len(), 1);
        assert_ne!(cluster_set(&a), cluster_set(&b));
    }
}
