//! The stop predicate and escalation of docs/architecture.md §11.4, as one pure function
//! over round facts.

use super::StopReason;
use crate::findings::{Ruling, Severity, Tier};
use crate::target::{Mode, TargetType};
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
    /// Spec targets compare places by section, not by ±5 lines.
    pub target_type: TargetType,
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

/// Where a clustered ruling is: its cluster's first line (a ruling with a file), or — for
/// a ruling without a file — the first 60 characters of its resolution, which is all that
/// tells two file-less rulings apart.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Anchor {
    Line(Option<u32>),
    Resolution(String),
}

/// Characters of a file-less ruling's resolution that identify it.
const RESOLUTION_KEY_CHARS: usize = 60;

/// (file, anchor, winner, severity) tuples of `rulings`, with lines replaced by the first
/// line of their cluster in `clusters` (or kept when no cluster is known).
type ClusterKey = (String, Anchor, String, String);

/// Cluster lines per file deterministically: sort, start a new cluster when the gap to the
/// previous line exceeds 5; every line maps to its cluster's first line.
fn clusters<'a>(
    rulings: impl Iterator<Item = &'a Ruling>,
) -> std::collections::BTreeMap<(String, u32), u32> {
    let mut by_file: std::collections::BTreeMap<String, Vec<u32>> = Default::default();
    for r in rulings {
        if let (Some(f), Some(l)) = (&r.file, r.line) {
            by_file.entry(f.clone()).or_default().push(l);
        }
    }
    let mut rep = std::collections::BTreeMap::new();
    for (file, mut lines) in by_file {
        lines.sort_unstable();
        let (mut start, mut prev) = (lines[0], lines[0]);
        for l in lines {
            if l - prev > NEAR {
                start = l;
            }
            rep.insert((file.clone(), l), start);
            prev = l;
        }
    }
    rep
}

fn keyed(
    rulings: &[Ruling],
    rep: &std::collections::BTreeMap<(String, u32), u32>,
) -> BTreeSet<ClusterKey> {
    rulings
        .iter()
        .map(|r| {
            let file = r.file.clone().unwrap_or_default();
            let anchor = match &r.file {
                None => Anchor::Resolution(
                    r.resolution
                        .trim()
                        .chars()
                        .take(RESOLUTION_KEY_CHARS)
                        .collect(),
                ),
                Some(_) => Anchor::Line(
                    r.line
                        .map(|l| rep.get(&(file.clone(), l)).copied().unwrap_or(l)),
                ),
            };
            (
                file,
                anchor,
                format!("{:?}", r.winner),
                r.final_severity.as_str().to_string(),
            )
        })
        .collect()
}

/// The clustered (file, line, winner, final_severity) set of one round's rulings.
pub fn cluster_set(rulings: &[Ruling]) -> BTreeSet<ClusterKey> {
    keyed(rulings, &clusters(rulings.iter()))
}

/// Identity check (rule 4): the two rounds' sets are equal when lines are clustered over
/// both rounds together, so a ruling that moved by ≤ 5 lines is the same ruling.
pub fn same_rulings(prior: &[Ruling], current: &[Ruling]) -> bool {
    let rep = clusters(prior.iter().chain(current.iter()));
    keyed(prior, &rep) == keyed(current, &rep)
}

/// A confirmed ruling builds on an earlier round: it carries `prior_finding_id`, or lies
/// within ±5 lines of an earlier confirmed location in the same file (code) — for a spec, in
/// the same section as one (its `file` is the canonical section path).
fn is_self_reference(
    r: &Ruling,
    with_prior: &[String],
    before: &[(String, u32)],
    target_type: TargetType,
) -> bool {
    if with_prior.contains(&r.finding_id) {
        return true;
    }
    match (target_type, &r.file, r.line) {
        (TargetType::Spec, Some(f), _) => before.iter().any(|(bf, _)| bf == f),
        (TargetType::Code, Some(f), Some(l)) => before
            .iter()
            .any(|(bf, bl)| bf == f && bl.abs_diff(l) <= NEAR),
        _ => false,
    }
}

/// Evaluate rules 1–7 of docs/architecture.md §11.4 in order.
pub fn decide(input: &DecideInput<'_>, facts: &RoundFacts) -> Decision {
    let confirmed: Vec<&Ruling> = facts.rulings.iter().filter(|r| r.is_confirmed()).collect();
    let n_confirmed = confirmed.len() as u32;
    let self_ref = confirmed
        .iter()
        .filter(|r| {
            is_self_reference(
                r,
                &facts.with_prior_id,
                input.confirmed_before,
                input.target_type,
            )
        })
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
    if let Err(stop) = apply_rules(input, facts, &confirmed, &mut d) {
        d.stop = Some(stop);
    }
    d
}

/// Rules 1–7 in order onto `d`; the first rule that stops the run ends the evaluation with
/// its reason.
fn apply_rules(
    input: &DecideInput<'_>,
    facts: &RoundFacts,
    confirmed: &[&Ruling],
    d: &mut Decision,
) -> Result<(), StopReason> {
    let jumped = confirmation_round(input, d)?;
    anti_divergence(input, d)?;
    identity_check(input, facts, d)?;
    // 5. Escalation (FULL only, upwards only, never below --model).
    if input.mode == Mode::Full && !jumped {
        escalation(input, facts, d)?;
    }
    round2_gate(input, confirmed, d)?;
    ceilings(input, d)?;
    d.reasons.push(format!(
        "continue to round {} at {}",
        input.round + 1,
        d.next_tier
    ));
    Ok(())
}

/// Rules 1 and 2: zero confirmed after round 1, or only self-reference, stop at opus and
/// otherwise jump to a confirmation round at opus (true).
fn confirmation_round(input: &DecideInput<'_>, d: &mut Decision) -> Result<bool, StopReason> {
    let at_ceiling = input.tier == Tier::Opus;
    // 1. Zero findings after round 1.
    if d.confirmed == 0 && input.round > 1 {
        if at_ceiling {
            d.reasons
                .push("rule 1: zero confirmed at opus → stop zero-findings".into());
            return Err(StopReason::ZeroFindings);
        }
        d.reasons.push(format!(
            "rule 1: zero confirmed at {} → confirmation round at opus",
            input.tier
        ));
        d.next_tier = Tier::Opus;
        return Ok(true);
    }
    // 2. Only self-reference.
    if d.substantive == 0 && d.confirmed > 0 {
        if at_ceiling {
            d.reasons
                .push("rule 2: all confirmed findings are self-reference at opus → stop".into());
            return Err(StopReason::AllSelfReference);
        }
        d.reasons.push(format!(
            "rule 2: all confirmed findings are self-reference at {} → confirmation round at opus",
            input.tier
        ));
        d.next_tier = Tier::Opus;
        return Ok(true);
    }
    Ok(false)
}

/// Rule 3: two rounds in a row with more substantive findings stop the run.
fn anti_divergence(input: &DecideInput<'_>, d: &mut Decision) -> Result<(), StopReason> {
    // 3. Anti-divergence.
    match input.prior_substantive {
        Some(prev) if d.substantive > prev => {
            d.runs_worsening = input.runs_worsening + 1;
            d.reasons.push(format!(
                "rule 3: substantive grew {prev} → {}; worsening rounds = {}",
                d.substantive, d.runs_worsening
            ));
        }
        _ => d.runs_worsening = 0,
    }
    if d.runs_worsening >= 2 {
        d.reasons
            .push("rule 3: two worsening rounds → stop anti-divergence-halt".into());
        return Err(StopReason::AntiDivergenceHalt);
    }
    Ok(())
}

/// Rule 4: rulings identical to the prior round's at opus stop the run; the Judge's
/// convergence claim is advisory.
fn identity_check(
    input: &DecideInput<'_>,
    facts: &RoundFacts,
    d: &mut Decision,
) -> Result<(), StopReason> {
    let at_ceiling = input.tier == Tier::Opus;
    // 4. Identity check.
    if input.round == 1 {
        if facts.judge_convergence {
            d.reasons
                .push("rule 4: the Judge claimed convergence in round 1; round 1 never converges (overridden)".into());
        }
    } else if let Some(prior) = input.prior_rulings {
        let same = !facts.rulings.is_empty() && same_rulings(prior, &facts.rulings);
        if same && at_ceiling {
            d.reasons.push(
                "rule 4: rulings identical to the prior round at opus → stop all-self-reference"
                    .into(),
            );
            return Err(StopReason::AllSelfReference);
        }
        if facts.judge_convergence != same {
            d.reasons.push(format!(
                "rule 4: the Judge said convergence={}, the deterministic check says {} (advisory overridden)",
                facts.judge_convergence, same
            ));
        }
    }
    Ok(())
}

/// Rule 5: escalate on malformed output, the Judge's ask, a 0 % debunk rate or
/// near-convergence (which stops the run at opus); a cost warning after three sub-opus
/// rounds.
fn escalation(
    input: &DecideInput<'_>,
    facts: &RoundFacts,
    d: &mut Decision,
) -> Result<(), StopReason> {
    let floor = input.tier.max(input.tier_start);
    let mut next = floor;
    let debunked = facts.rulings.iter().filter(|r| !r.is_confirmed()).count();
    let near = input.prior_yield.filter(|prev| {
        let y = facts.yield_count;
        y <= 2 && f64::from(y) < 0.4 * f64::from(*prev)
    });
    if facts.malformed && input.tier < Tier::Opus {
        next = input.tier.up();
        d.reasons
            .push(format!("rule 5: malformed output → escalate to {next}"));
    } else if let Some(j) = facts.judge_next_model.filter(|j| *j > input.tier) {
        next = j;
        d.reasons
            .push(format!("rule 5: the Judge asked for {j} → escalate"));
    } else if !facts.rulings.is_empty() && debunked == 0 && input.tier < Tier::Opus {
        // Nothing debunked: the Adversary may be too weak to challenge anything.
        next = input.tier.up();
        d.reasons.push(format!(
            "rule 5: 0 % debunk rate ({} ruling(s), none debunked) → escalate to {next}",
            facts.rulings.len()
        ));
    } else if let Some(prev) = near {
        let y = facts.yield_count;
        if input.tier < Tier::Opus {
            next = input.tier.up();
            d.reasons.push(format!(
                "rule 5: near-convergence (yield {y} < 0.4 × {prev}) → escalate to {next}"
            ));
        } else if !facts.malformed {
            // At the ceiling a near-converged round is the end of the run.
            d.reasons.push(format!(
                "rule 5: near-convergence at opus (yield {y} ≤ 2 and < 0.4 × {prev}) → stop all-self-reference"
            ));
            return Err(StopReason::AllSelfReference);
        }
    }
    d.escalated = next > input.tier;
    d.next_tier = next.max(input.tier_start);
    if d.next_tier < Tier::Opus && input.sub_opus_streak + 1 >= 3 {
        d.cost_warning = true;
        d.reasons
            .push("rule 5: three sub-opus rounds in a row (cost warning)".into());
    }
    Ok(())
}

/// Rule 6: round 1 with fewer than 3 confirmed findings and none medium+ stops the run.
fn round2_gate(
    input: &DecideInput<'_>,
    confirmed: &[&Ruling],
    d: &mut Decision,
) -> Result<(), StopReason> {
    // 6. Round-2 gate.
    if input.round == 1 {
        let medium_plus = confirmed
            .iter()
            .any(|r| r.final_severity.severity() >= Some(Severity::Medium));
        if d.confirmed < 3 && !medium_plus {
            d.round2_skipped = true;
            let reason = if d.confirmed == 0 {
                StopReason::ZeroFindings
            } else {
                StopReason::AllSelfReference
            };
            d.reasons.push(format!(
                "rule 6: round2_skipped: {} confirmed (< 3) and none medium+ → stop {}",
                d.confirmed,
                reason.as_str()
            ));
            return Err(reason);
        }
    }
    Ok(())
}

/// Rule 7: the round ceiling and the budget.
fn ceilings(input: &DecideInput<'_>, d: &mut Decision) -> Result<(), StopReason> {
    // 7. Ceilings.
    if input.round + 1 > input.max_rounds {
        d.reasons.push(format!(
            "rule 7: round {} reached max rounds {} → stop max-rounds",
            input.round, input.max_rounds
        ));
        return Err(StopReason::MaxRounds);
    }
    if input.budget_exhausted {
        d.reasons.push(format!(
            "rule 7: budget exhausted ({}) → stop budget-exhausted",
            input.budget_note
        ));
        return Err(StopReason::BudgetExhausted);
    }
    Ok(())
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
    use FinalSeverity::{High, Low, Medium};
    use StopReason::*;
    use Tier::{Haiku, Opus, Sonnet};

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
            context: vec![],
        }
    }

    fn conf(id: &str, line: u32, sev: FinalSeverity) -> Ruling {
        ruling(id, "a.rs", line, sev, Winner::Enthusiast)
    }

    /// A debunked ruling far from the others (so the debunk rate is not 0 %).
    fn dis(id: &str, line: u32) -> Ruling {
        ruling(
            id,
            "a.rs",
            line,
            FinalSeverity::Dismissed,
            Winner::Adversary,
        )
    }

    fn input(round: u32) -> DecideInput<'static> {
        DecideInput {
            round,
            max_rounds: 10,
            mode: Mode::Full,
            target_type: TargetType::Code,
            tier: Opus,
            tier_start: Opus,
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

    fn facts(rulings: Vec<Ruling>, yield_count: u32) -> RoundFacts {
        RoundFacts {
            rulings,
            yield_count,
            ..Default::default()
        }
    }

    /// One row: a name, the input, the facts, the expected stop and next tier.
    struct Case {
        name: &'static str,
        input: DecideInput<'static>,
        facts: RoundFacts,
        stop: Option<StopReason>,
        next: Tier,
    }

    fn before() -> &'static [(String, u32)] {
        // A confirmed location at a.rs:100 from an earlier round.
        Box::leak(Box::new([("a.rs".to_string(), 100u32)]))
    }
    fn prior(rulings: Vec<Ruling>) -> Option<&'static [Ruling]> {
        Some(Box::leak(rulings.into_boxed_slice()))
    }

    /// Every rule's cases, in rule order.
    fn cases() -> Vec<Case> {
        [
            rules_1_2(),
            rules_3_4_5(),
            rule_5(),
            rules_5_6(),
            rules_6_7(),
        ]
        .into_iter()
        .flatten()
        .collect()
    }

    fn rules_1_2() -> Vec<Case> {
        vec![
            // Rule 1.
            Case {
                name: "r1 zero at opus stops",
                input: input(2),
                facts: facts(vec![], 0),
                stop: Some(ZeroFindings),
                next: Opus,
            },
            Case {
                name: "r1 zero below opus jumps to opus",
                input: DecideInput {
                    tier: Haiku,
                    tier_start: Haiku,
                    ..input(2)
                },
                facts: facts(vec![], 0),
                stop: None,
                next: Opus,
            },
            Case {
                name: "r1 zero below opus at the ceiling round stops max-rounds",
                input: DecideInput {
                    tier: Sonnet,
                    tier_start: Sonnet,
                    max_rounds: 2,
                    ..input(2)
                },
                facts: facts(vec![], 0),
                stop: Some(MaxRounds),
                next: Opus,
            },
            // Rule 2.
            Case {
                name: "r2 self-reference (±5 of earlier) at opus stops",
                input: DecideInput {
                    confirmed_before: before(),
                    ..input(2)
                },
                facts: facts(vec![conf("F1", 103, High)], 1),
                stop: Some(AllSelfReference),
                next: Opus,
            },
            Case {
                name: "r2 self-reference by prior_finding_id at opus stops",
                input: input(2),
                facts: RoundFacts {
                    with_prior_id: vec!["F1".into()],
                    ..facts(vec![conf("F1", 40, High)], 1)
                },
                stop: Some(AllSelfReference),
                next: Opus,
            },
            Case {
                name: "r2 self-reference below opus jumps",
                input: DecideInput {
                    confirmed_before: before(),
                    tier: Sonnet,
                    tier_start: Sonnet,
                    ..input(2)
                },
                facts: facts(vec![conf("F1", 104, High)], 1),
                stop: None,
                next: Opus,
            },
            Case {
                name: "r2 six lines away is substantive",
                input: DecideInput {
                    confirmed_before: before(),
                    prior_substantive: Some(1),
                    ..input(2)
                },
                facts: facts(vec![conf("F1", 106, High)], 1),
                stop: None,
                next: Opus,
            },
        ]
    }

    fn rules_3_4_5() -> Vec<Case> {
        vec![
            // Rule 3.
            Case {
                name: "r3 first worsening round continues",
                input: DecideInput {
                    prior_substantive: Some(1),
                    ..input(2)
                },
                facts: facts(vec![conf("F1", 10, High), conf("F2", 40, High)], 2),
                stop: None,
                next: Opus,
            },
            Case {
                name: "r3 second worsening round halts",
                input: DecideInput {
                    prior_substantive: Some(1),
                    runs_worsening: 1,
                    ..input(3)
                },
                facts: facts(vec![conf("F1", 10, High), conf("F2", 40, High)], 2),
                stop: Some(AntiDivergenceHalt),
                next: Opus,
            },
            Case {
                name: "r3 no growth resets",
                input: DecideInput {
                    prior_substantive: Some(2),
                    runs_worsening: 1,
                    ..input(3)
                },
                facts: facts(vec![conf("F1", 10, High), conf("F2", 40, High)], 2),
                stop: None,
                next: Opus,
            },
            // Rule 4.
            Case {
                name: "r4 identical clustered rulings at opus stop",
                input: DecideInput {
                    prior_rulings: prior(vec![conf("F1", 10, High), conf("F2", 40, Medium)]),
                    prior_substantive: Some(2),
                    ..input(2)
                },
                facts: facts(vec![conf("F1", 12, High), conf("F2", 41, Medium)], 2),
                stop: Some(AllSelfReference),
                next: Opus,
            },
            Case {
                name: "r4 identical below opus continues",
                input: DecideInput {
                    tier: Sonnet,
                    tier_start: Sonnet,
                    prior_rulings: prior(vec![conf("F1", 10, High), dis("F2", 50)]),
                    prior_substantive: Some(1),
                    prior_yield: Some(2),
                    ..input(2)
                },
                facts: facts(vec![conf("F1", 11, High), dis("F2", 50)], 2),
                stop: None,
                next: Sonnet,
            },
            Case {
                name: "r4 severity differs continues",
                input: DecideInput {
                    prior_rulings: prior(vec![conf("F1", 10, High)]),
                    prior_substantive: Some(1),
                    ..input(2)
                },
                facts: facts(vec![conf("F1", 10, Medium)], 1),
                stop: None,
                next: Opus,
            },
            // Rule 5.
            Case {
                name: "r5 malformed escalates one tier",
                input: DecideInput {
                    tier: Haiku,
                    tier_start: Haiku,
                    ..input(1)
                },
                facts: RoundFacts {
                    malformed: true,
                    ..facts(vec![conf("F1", 10, High)], 1)
                },
                stop: None,
                next: Sonnet,
            },
        ]
    }

    fn rule_5() -> Vec<Case> {
        vec![
            Case {
                name: "r5 judge asks higher",
                input: DecideInput {
                    tier: Haiku,
                    tier_start: Haiku,
                    ..input(1)
                },
                facts: RoundFacts {
                    judge_next_model: Some(Opus),
                    ..facts(vec![conf("F1", 10, High)], 1)
                },
                stop: None,
                next: Opus,
            },
            Case {
                name: "r5 judge asks lower is ignored",
                input: DecideInput {
                    tier: Sonnet,
                    tier_start: Sonnet,
                    ..input(1)
                },
                facts: RoundFacts {
                    judge_next_model: Some(Haiku),
                    ..facts(vec![conf("F1", 10, High), dis("F2", 50)], 2)
                },
                stop: None,
                next: Sonnet,
            },
            Case {
                name: "r5 near-convergence escalates",
                input: DecideInput {
                    tier: Haiku,
                    tier_start: Haiku,
                    prior_yield: Some(10),
                    prior_substantive: Some(5),
                    ..input(2)
                },
                facts: facts(vec![conf("F1", 10, High)], 2),
                stop: None,
                next: Sonnet,
            },
            Case {
                name: "r5 not near (3 findings) stays",
                input: DecideInput {
                    tier: Haiku,
                    tier_start: Haiku,
                    prior_yield: Some(10),
                    prior_substantive: Some(5),
                    ..input(2)
                },
                facts: facts(vec![conf("F1", 10, High), dis("F2", 50)], 3),
                stop: None,
                next: Haiku,
            },
            Case {
                name: "r5 0 % debunk rate escalates one tier",
                input: DecideInput {
                    tier: Haiku,
                    tier_start: Haiku,
                    ..input(1)
                },
                facts: facts(vec![conf("F1", 10, High), conf("F2", 40, Medium)], 2),
                stop: None,
                next: Sonnet,
            },
            Case {
                name: "r5 near-convergence at opus stops all-self-reference",
                input: DecideInput {
                    prior_yield: Some(10),
                    prior_substantive: Some(5),
                    ..input(2)
                },
                facts: facts(vec![conf("F1", 10, High), dis("F2", 50)], 2),
                stop: Some(AllSelfReference),
                next: Opus,
            },
        ]
    }

    fn rules_5_6() -> Vec<Case> {
        vec![
            Case {
                name: "r5 near-convergence at opus after malformed output continues",
                input: DecideInput {
                    prior_yield: Some(10),
                    prior_substantive: Some(5),
                    ..input(2)
                },
                facts: RoundFacts {
                    malformed: true,
                    ..facts(vec![conf("F1", 10, High), dis("F2", 50)], 2)
                },
                stop: None,
                next: Opus,
            },
            Case {
                name: "r5 near-convergence at opus in LIGHTWEIGHT continues",
                input: DecideInput {
                    mode: Mode::Lightweight,
                    max_rounds: 3,
                    prior_yield: Some(10),
                    prior_substantive: Some(5),
                    ..input(2)
                },
                facts: facts(vec![conf("F1", 10, High)], 2),
                stop: None,
                next: Opus,
            },
            Case {
                name: "r5 LIGHTWEIGHT never escalates",
                input: DecideInput {
                    mode: Mode::Lightweight,
                    tier: Haiku,
                    tier_start: Haiku,
                    ..input(1)
                },
                facts: RoundFacts {
                    malformed: true,
                    ..facts(vec![conf("F1", 10, High)], 1)
                },
                stop: None,
                next: Haiku,
            },
            // Rule 6.
            Case {
                name: "r6 round-2 gate: nothing confirmed",
                input: input(1),
                facts: facts(vec![], 0),
                stop: Some(ZeroFindings),
                next: Opus,
            },
            Case {
                name: "r6 round-2 gate: two lows",
                input: input(1),
                facts: facts(vec![conf("F1", 10, Low), conf("F2", 50, Low)], 2),
                stop: Some(AllSelfReference),
                next: Opus,
            },
            Case {
                name: "r6 three lows get round 2",
                input: input(1),
                facts: facts(
                    vec![
                        conf("F1", 10, Low),
                        conf("F2", 50, Low),
                        conf("F3", 90, Low),
                    ],
                    3,
                ),
                stop: None,
                next: Opus,
            },
            Case {
                name: "r6 one medium gets round 2",
                input: input(1),
                facts: facts(vec![conf("F1", 10, Medium)], 1),
                stop: None,
                next: Opus,
            },
        ]
    }

    fn rules_6_7() -> Vec<Case> {
        vec![
            Case {
                name: "r6 debunked findings do not count",
                input: input(1),
                facts: facts(
                    vec![ruling(
                        "F1",
                        "a.rs",
                        10,
                        FinalSeverity::Dismissed,
                        Winner::Adversary,
                    )],
                    1,
                ),
                stop: Some(ZeroFindings),
                next: Opus,
            },
            // Rule 7.
            Case {
                name: "r7 max rounds",
                input: DecideInput {
                    max_rounds: 1,
                    ..input(1)
                },
                facts: facts(vec![conf("F1", 10, High)], 1),
                stop: Some(MaxRounds),
                next: Opus,
            },
            Case {
                name: "r7 budget exhausted",
                input: DecideInput {
                    budget_exhausted: true,
                    ..input(1)
                },
                facts: facts(vec![conf("F1", 10, High)], 1),
                stop: Some(BudgetExhausted),
                next: Opus,
            },
        ]
    }

    #[test]
    fn every_rule_branch() {
        for c in cases() {
            let d = decide(&c.input, &c.facts);
            assert_eq!(d.stop, c.stop, "{}: {:?}", c.name, d.reasons);
            assert_eq!(d.next_tier, c.next, "{}: {:?}", c.name, d.reasons);
            assert!(
                d.reasons.len() >= 2,
                "{}: every decision states its reasons",
                c.name
            );
            assert!(
                d.next_tier >= c.input.tier_start,
                "{}: never below --model",
                c.name
            );
        }
    }

    #[test]
    fn judge_convergence_is_advisory_and_logged() {
        let d = decide(
            &input(1),
            &RoundFacts {
                judge_convergence: true,
                ..facts(vec![conf("F1", 10, High)], 1)
            },
        );
        assert_eq!(d.stop, None);
        assert!(d
            .reasons
            .iter()
            .any(|r| r.contains("round 1 never converges")));
        let i = DecideInput {
            prior_rulings: prior(vec![conf("F1", 10, High)]),
            prior_substantive: Some(1),
            ..input(2)
        };
        let d = decide(
            &i,
            &RoundFacts {
                judge_convergence: true,
                ..facts(vec![conf("F1", 30, High)], 1)
            },
        );
        assert_eq!(d.stop, None);
        assert!(
            d.reasons.iter().any(|r| r.contains("advisory overridden")),
            "{:?}",
            d.reasons
        );
    }

    #[test]
    fn cost_warning_after_three_sub_opus_rounds() {
        let i = DecideInput {
            tier: Sonnet,
            tier_start: Sonnet,
            sub_opus_streak: 2,
            prior_substantive: Some(1),
            ..input(3)
        };
        let f = || facts(vec![conf("F1", 10, High), dis("F2", 50)], 2);
        let d = decide(&i, &f());
        assert!(d.cost_warning);
        let i = DecideInput {
            sub_opus_streak: 1,
            ..i
        };
        assert!(!decide(&i, &f()).cost_warning);
    }

    #[test]
    fn clusters_are_deterministic() {
        let a = vec![conf("F1", 10, High), conf("F2", 14, High)];
        let b = vec![conf("F1", 12, High), conf("F2", 16, High)];
        assert_eq!(cluster_set(&a).len(), 1);
        assert_eq!(cluster_set(&b).len(), 1);
        assert_ne!(cluster_set(&a), cluster_set(&b));
        assert!(same_rulings(&a, &b), "±5 across rounds is the same ruling");
        assert!(!same_rulings(&a, &[conf("F1", 12, Medium)]));
        assert!(!same_rulings(
            &a,
            &[conf("F1", 12, High), conf("F2", 30, High)]
        ));
        let mut rev = a.clone();
        rev.reverse();
        assert_eq!(cluster_set(&a), cluster_set(&rev));
    }

    #[test]
    fn file_less_rulings_are_identified_by_their_resolution() {
        let fl = |res: &str, sev| Ruling {
            file: None,
            line: None,
            resolution: res.into(),
            ..conf("F1", 1, sev)
        };
        let long = "x".repeat(60);
        assert!(same_rulings(
            &[fl(&format!("{long} first"), High)],
            &[fl(&format!("{long} second"), High)]
        ));
        assert!(!same_rulings(
            &[fl("The cache has no eviction policy.", High)],
            &[fl("The retry loop has no upper bound.", High)]
        ));
        assert!(!same_rulings(
            &[fl("The cache has no eviction policy.", High)],
            &[fl("The cache has no eviction policy.", Medium)]
        ));
        // Before: every file-less ruling looked alike.
        let i = DecideInput {
            prior_rulings: prior(vec![fl("The cache has no eviction policy.", High)]),
            prior_substantive: Some(1),
            ..input(2)
        };
        let d = decide(
            &i,
            &facts(vec![fl("The retry loop has no bound.", High)], 1),
        );
        assert_eq!(d.stop, None, "{:?}", d.reasons);
    }

    #[test]
    fn spec_self_reference_is_by_section_not_by_lines() {
        let sec = |line| ruling("F1", "## Design", line, High, Winner::Enthusiast);
        let before: &[(String, u32)] = &[("## Design".to_string(), 5)];
        let spec = DecideInput {
            target_type: TargetType::Spec,
            confirmed_before: before,
            prior_substantive: Some(1),
            ..input(2)
        };
        let d = decide(&spec, &facts(vec![sec(40)], 1));
        assert_eq!((d.self_reference, d.substantive), (1, 0));
        assert_eq!(d.stop, Some(AllSelfReference));
        // Another section, two lines away, is substantive.
        let other = ruling("F1", "## Rollout", 7, High, Winner::Enthusiast);
        let d = decide(&spec, &facts(vec![other], 1));
        assert_eq!((d.self_reference, d.substantive), (0, 1));
        // The same place in code is 35 lines away: substantive.
        let code = DecideInput {
            target_type: TargetType::Code,
            ..spec
        };
        let d = decide(&code, &facts(vec![sec(40)], 1));
        assert_eq!(d.substantive, 1);
    }
}
