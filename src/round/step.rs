//! The pure steps of a round between its dispatches (docs/architecture.md, the round
//! protocol): fold the Enthusiast passes and the Adversary into the round record, gate the
//! findings (membership, anchors), drop repeats of confirmed locations (pre-adversary dedup),
//! attach the Judge's rulings, and carry the run state to the next round. No I/O, no async.

use super::cites::id_of;
use super::context::{History, Places};
use super::decide::confirmed_locations;
use super::role::{RoleOutput, RoleRun};
use super::{
    Action, Decision, DecisionRecord, RoundCounts, RoundError, RoundFinding, RoundRecord,
    SuppressedFinding,
};
use crate::findings::suppress::{reasonless_warning, SuppressionSet};
use crate::findings::{fingerprint_with, FileLines};
use crate::findings::{
    AdversaryOutput, EnthusiastOutput, JudgeOutput, PassFinding, Role, Ruling, Tier, UnionedFinding,
};
use crate::gates::{anchor_ok, bad_cites, check_cites, Abort, ContextSource, Place};
use crate::resolve::RunPlan;
use crate::target::{PinnedTarget, TargetType};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

/// Lines within which a new finding repeats a confirmed location of an earlier round and is
/// dropped before the Adversary sees it (code targets, same file).
pub(super) const DEDUP_WINDOW: u32 = 5;

/// Run state carried from round to round.
#[derive(Debug, Clone)]
pub(super) struct State {
    pub tier: Tier,
    pub history: History,
    pub prior_rulings: Option<Vec<Ruling>>,
    pub prior_substantive: Option<u32>,
    pub prior_yield: Option<u32>,
    pub runs_worsening: u32,
    pub sub_opus_streak: u32,
    pub file_finding_counts: BTreeMap<String, u32>,
    pub reviewed_files: BTreeSet<String>,
    pub spent_usd: f64,
    pub spent_tokens: u64,
}

impl State {
    pub fn new(tier: Tier) -> Self {
        Self {
            tier,
            history: History::default(),
            prior_rulings: None,
            prior_substantive: None,
            prior_yield: None,
            runs_worsening: 0,
            sub_opus_streak: 0,
            file_finding_counts: BTreeMap::new(),
            reviewed_files: BTreeSet::new(),
            spent_usd: 0.0,
            spent_tokens: 0,
        }
    }

    /// The files this round reviews: its RELEVANT_FILES budget, else the whole target.
    pub fn note_reviewed(&mut self, relevant: Option<&[String]>, target: &PinnedTarget) {
        match relevant {
            Some(files) => self.reviewed_files.extend(files.iter().cloned()),
            None => self
                .reviewed_files
                .extend(target.allowed_files().map(String::from)),
        }
    }

    /// Add this round's spend; whether a configured budget is now exhausted.
    pub fn spend(&mut self, rec: &RoundRecord, plan: &RunPlan) -> bool {
        let (usd, tokens) = spend(rec);
        self.spent_usd += usd;
        self.spent_tokens += tokens;
        plan.budget_usd.is_some_and(|b| self.spent_usd >= b)
            || plan.budget_tokens.is_some_and(|b| self.spent_tokens >= b)
    }

    /// What is left of the budgets after the run's spend and `pending` (this round's
    /// finished dispatches, not yet added): (USD left, none when no USD budget; whether a
    /// budget is exhausted). No work is started that an exhausted budget cannot pay for.
    pub fn budget_left(&self, plan: &RunPlan, pending: (f64, u64)) -> (Option<f64>, bool) {
        self.left_of((plan.budget_usd, plan.budget_tokens), pending)
    }

    fn left_of(
        &self,
        (budget_usd, budget_tokens): (Option<f64>, Option<u64>),
        pending: (f64, u64),
    ) -> (Option<f64>, bool) {
        let usd = budget_usd.map(|b| (b - self.spent_usd - pending.0).max(0.0));
        let tokens_out = budget_tokens.is_some_and(|b| self.spent_tokens + pending.1 >= b);
        (usd, tokens_out || usd.is_some_and(|u| u <= 0.0))
    }

    /// The state for the next round after round `round` (at `self.tier`) went on with
    /// decision `d`: its confirmed rulings join the history and the per-file counts.
    pub fn advance(
        &mut self,
        round: u32,
        target: &PinnedTarget,
        rulings: Vec<Ruling>,
        judge_summary: Option<String>,
        yield_count: u32,
        d: &Decision,
    ) {
        for r in rulings.iter().filter(|r| r.is_confirmed()) {
            if let (Some(f), Some(l)) = (&r.file, r.line) {
                self.history
                    .confirmed
                    .push((round, r.finding_id.clone(), f.clone(), l));
            }
            if let Some(f) = &r.file {
                if target.is_allowed(f) {
                    *self.file_finding_counts.entry(f.clone()).or_default() += 1;
                }
            }
        }
        debug_assert_eq!(
            confirmed_locations(&rulings).len(),
            rulings
                .iter()
                .filter(|r| r.is_confirmed() && r.file.is_some() && r.line.is_some())
                .count()
        );
        self.history.prior_summary = judge_summary;
        self.history
            .rulings
            .extend(rulings.iter().map(|r| (round, r.clone())));
        self.prior_rulings = Some(rulings);
        self.prior_substantive = Some(d.substantive);
        self.prior_yield = Some(yield_count);
        self.runs_worsening = d.runs_worsening;
        self.sub_opus_streak = if self.tier < Tier::Opus {
            self.sub_opus_streak + 1
        } else {
            0
        };
        self.tier = d.next_tier;
    }
}

impl RoundRecord {
    /// The record of round `round` before anything was dispatched: no findings, decision
    /// `abort` until the round decides otherwise.
    pub fn new(round: u32, tier: Tier, mode: &str, passes: u32) -> Self {
        Self {
            round,
            tier,
            mode: mode.to_string(),
            passes,
            relevant_files: None,
            dispatches: vec![],
            findings: vec![],
            suppressed: vec![],
            debunked_before: vec![],
            adversary: None,
            judge: None,
            errors: vec![],
            degraded: vec![],
            counts: RoundCounts::default(),
            decision: DecisionRecord {
                action: Action::Abort,
                stop_reason: None,
                abort_reason: None,
                next_tier: None,
                reasons: vec![],
            },
            duration_ms: 0,
            cost_usd: 0.0,
            tokens: 0,
            unpriced_tokens: 0,
        }
    }

    /// Drop what round-N.json holds and nothing reads again once it is written: the
    /// agents' answer texts (events.jsonl has them, round-N.json their sizes), the round's
    /// findings, the Adversary's map and the Judge's answer. The report is built from the
    /// review's judged findings and the records' dispatches, counts and decisions; for a
    /// round of 3 × 1,000 findings this is ~1 MiB less alive while the report is written.
    pub fn forget_payloads(&mut self) {
        for d in &mut self.dispatches {
            d.outcome.forget_answer();
        }
        self.findings = Vec::new();
        self.suppressed = Vec::new();
        self.debunked_before = Vec::new();
        self.adversary = None;
        self.judge = None;
    }
}

/// USD and tokens of a round's dispatches.
pub(super) fn spend(rec: &RoundRecord) -> (f64, u64) {
    let usd = rec.dispatches.iter().map(|d| d.outcome.cost_usd()).sum();
    let tokens = rec.dispatches.iter().map(|d| d.outcome.tokens()).sum();
    (usd, tokens)
}

/// The tokens of a round's dispatches whose model has no known price.
pub(super) fn unpriced_tokens(rec: &RoundRecord) -> u64 {
    let d = rec.dispatches.iter();
    d.map(|d| d.outcome.unpriced_tokens()).sum()
}

/// What the Enthusiast passes and the Adversary gave, folded into the round record.
#[derive(Debug, Default)]
pub(super) struct Folded {
    /// Valid findings of every pass.
    pub findings: Vec<PassFinding>,
    pub adversary: Option<AdversaryOutput>,
    /// Passes whose answer stayed malformed after the re-dispatch.
    pub malformed_passes: u32,
    /// Some role (a pass or the Adversary) answered malformed JSON.
    pub malformed_any: bool,
    /// The first abort, passes first.
    pub abort: Option<Abort>,
    /// Passes lost to faults after their retries: (pass, cause).
    pub lost: Vec<(u32, String)>,
    /// Passes stopped before they answered (Ctrl-C, a budget, a sibling's abort).
    pub cancelled: u32,
}

/// Fold the Enthusiast passes (in pass order): their dispatch records and per-pass counts
/// go into `rec`, malformed answers are counted as errors.
pub(super) fn fold_passes(
    round: u32,
    passes: Vec<RoleRun<EnthusiastOutput>>,
    rec: &mut RoundRecord,
) -> Folded {
    let mut f = Folded::default();
    // One allocation for every pass's findings (thousands of them, moved in once).
    f.findings.reserve(
        passes
            .iter()
            .map(|p| match &p.output {
                RoleOutput::Valid(out) => out.findings.len(),
                _ => 0,
            })
            .sum(),
    );
    for (i, run_p) in passes.into_iter().enumerate() {
        let pass = i as u32 + 1;
        rec.dispatches.extend(run_p.records);
        match run_p.output {
            RoleOutput::Valid(out) => {
                rec.counts.per_pass.push(out.findings.len() as u32);
                f.findings.extend(
                    out.findings
                        .into_iter()
                        .map(|finding| PassFinding { pass, finding }),
                );
            }
            RoleOutput::Malformed(e) => {
                rec.counts.per_pass.push(0);
                f.malformed_passes += 1;
                f.malformed_any = true;
                rec.errors.push(RoundError::EnthusiastMalformedJson);
                tracing::warn!("round {round} pass {pass}: enthusiast_malformed_json: {e}");
            }
            RoleOutput::Abort(a) => {
                f.abort.get_or_insert(a);
            }
            RoleOutput::Lost(cause) => {
                rec.counts.per_pass.push(0);
                tracing::warn!("round {round} pass {pass}: lost ({cause})");
                f.lost.push((pass, cause));
            }
            RoleOutput::Cancelled => f.cancelled += 1,
        }
    }
    f
}

/// Fold the Adversary (after the passes): its dispatch records go into `rec`, its map into
/// `f`; a malformed map is counted as an error, an abort kept unless a pass aborted first.
pub(super) fn fold_adversary(
    round: u32,
    adversary: RoleRun<AdversaryOutput>,
    f: &mut Folded,
    rec: &mut RoundRecord,
) {
    rec.dispatches.extend(adversary.records);
    match adversary.output {
        RoleOutput::Valid(m) => f.adversary = Some(m),
        RoleOutput::Malformed(e) => {
            f.malformed_any = true;
            rec.errors.push(RoundError::AdversaryMalformedJson);
            tracing::warn!("round {round}: adversary_malformed_json: {e}");
        }
        RoleOutput::Abort(a) => {
            f.abort.get_or_insert(a);
        }
        // Only an Enthusiast pass is ever lost; an Adversary that cannot answer aborts.
        RoleOutput::Lost(detail) => {
            f.abort.get_or_insert(Abort::DispatchUnavailable {
                role: crate::findings::Role::Adversary,
                detail,
            });
        }
        RoleOutput::Cancelled => {}
    }
}

/// What lost passes mean for the round: the run aborts when no pass answered or every
/// pass is required (`[review] require_all_passes`); otherwise the round goes on degraded,
/// each lost pass recorded in `rec.degraded` and returned as a warning line.
pub(super) fn degrade(
    round: u32,
    passes: u32,
    lost: Vec<(u32, String)>,
    require_all: bool,
    rec: &mut RoundRecord,
) -> Result<Vec<String>, Abort> {
    let Some((pass, cause)) = lost.first() else {
        return Ok(vec![]);
    };
    if require_all || lost.len() as u32 >= passes {
        let why = if require_all {
            " ([review] require_all_passes)"
        } else {
            ""
        };
        return Err(Abort::DispatchUnavailable {
            role: crate::findings::Role::Enthusiast,
            detail: format!("pass {pass}: {cause}{why}"),
        });
    }
    let mut warnings = Vec::with_capacity(lost.len());
    for (pass, cause) in lost {
        let d = crate::records::round::DegradedPass { round, pass, cause };
        warnings.push(d.warning());
        rec.decision.reasons.push(d.warning());
        rec.degraded.push(d);
    }
    Ok(warnings)
}

/// The finding gates: every cited file must be in the target and every cited section in
/// the spec document (all-or-nothing: one outside aborts the run); a finding on a project
/// rules file (context, not target) is dropped and counted (`rules_file_finding`); then
/// findings whose line is not a valid anchor are dropped and counted.
pub(super) fn gate_findings(
    findings: &mut Vec<PassFinding>,
    target: &PinnedTarget,
    places: Places<'_>,
    rec: &mut RoundRecord,
) -> Result<(), Abort> {
    // In place: a finding on a context file is dropped, one outside the target aborts.
    let mut on_context = 0usize;
    let mut offtarget = None;
    findings.retain_mut(|pf| {
        if offtarget.is_some() {
            return false;
        }
        let Some(name) = pf.finding.file.as_deref() else {
            return true;
        };
        match places.check(name, pf.finding.line, target) {
            Place::Allowed { file, line } => {
                // Most names are repo-relative already: kept as they are, not copied.
                if file != name {
                    pf.finding.file = Some(file.into_owned());
                }
                pf.finding.line = line;
                true
            }
            Place::Context(_) => {
                on_context += 1;
                false
            }
            Place::Offtarget(bad) => {
                offtarget = Some(bad);
                false
            }
        }
    });
    if let Some(file) = offtarget {
        return Err(Abort::OfftargetHallucination {
            role: Role::Enthusiast,
            file,
        });
    }
    rec.errors.extend(std::iter::repeat_n(
        RoundError::RulesFileFinding,
        on_context,
    ));
    let before = findings.len();
    findings.retain(|pf| anchor_ok(&pf.finding, target));
    rec.counts.anchor_invalid = (before - findings.len()) as u32;
    rec.errors.extend(std::iter::repeat_n(
        RoundError::AnchorInvalid,
        rec.counts.anchor_invalid as usize,
    ));
    Ok(())
}

/// Suppressions (docs/architecture.md §20): the unioned findings a suppression applies to
/// (an `arev-ignore` comment on the flagged line or the line above, or an external entry
/// matching the finding's fingerprint) are kept from the Judge and recorded in `rec` with
/// their suppression; the rest are returned, with a warning for each `arev-ignore` marker
/// that would have applied but is not (no reason given, or not honoured from an untrusted
/// tree). `lines` gives a file's lines.
pub(super) fn suppress(
    round: u32,
    unioned: Vec<UnionedFinding>,
    set: &SuppressionSet,
    mut lines: impl FnMut(&str) -> Option<Arc<FileLines>>,
    rec: &mut RoundRecord,
) -> (Vec<UnionedFinding>, Vec<String>) {
    let mut kept = vec![];
    let mut warnings = vec![];
    for u in unioned {
        let f = &u.finding;
        let text = match (&f.file, f.line) {
            (Some(p), Some(_)) => lines(p),
            _ => None,
        };
        let fingerprint = fingerprint_with(
            text.as_deref(),
            f.line,
            f.file.as_deref(),
            &f.category,
            &f.description,
        );
        let m = set.matches(
            f.file.as_deref(),
            f.line,
            &f.category,
            &fingerprint,
            text.as_deref(),
        );
        let not_applied = m
            .reasonless_at
            .as_deref()
            .map(reasonless_warning)
            .into_iter();
        let untrusted = m.untrusted_at.as_deref().map(|p| set.untrusted_warning(p));
        for w in not_applied.chain(untrusted) {
            if !warnings.contains(&w) {
                warnings.push(w);
            }
        }
        match m.suppression {
            Some(suppression) => rec.suppressed.push(SuppressedFinding {
                round,
                finding: RoundFinding {
                    finding: u.finding,
                    passes: u.passes,
                    merged_from: u.merged_from,
                },
                fingerprint,
                suppression,
            }),
            None => kept.push(u),
        }
    }
    rec.counts.suppressed = rec.suppressed.len() as u32;
    if !rec.suppressed.is_empty() {
        rec.decision.reasons.push(format!(
            "suppressions: {} finding(s) kept from the Judge",
            rec.suppressed.len()
        ));
    }
    (kept, warnings)
}

/// Pre-adversary dedup (code targets): drop unioned findings within `DEDUP_WINDOW` lines of a
/// location confirmed in an earlier round, then number the rest F1..Fn.
pub(super) fn dedup(
    unioned: Vec<UnionedFinding>,
    confirmed_before: &[(String, u32)],
    target_type: TargetType,
    rec: &mut RoundRecord,
) -> Vec<RoundFinding> {
    let mut novel: Vec<RoundFinding> = vec![];
    for u in unioned {
        let dup = target_type == TargetType::Code
            && match (&u.finding.file, u.finding.line) {
                (Some(f), Some(l)) => confirmed_before
                    .iter()
                    .any(|(cf, cl)| cf == f && cl.abs_diff(l) <= DEDUP_WINDOW),
                _ => false,
            };
        if dup {
            rec.counts.dedup_dropped += 1;
        } else {
            novel.push(RoundFinding {
                finding: u.finding,
                passes: u.passes,
                merged_from: u.merged_from,
            });
        }
    }
    if rec.counts.dedup_dropped > 0 {
        rec.decision.reasons.push(format!(
            "pre-adversary dedup: {} finding(s) within ±{DEDUP_WINDOW} lines of a confirmed location dropped",
            rec.counts.dedup_dropped
        ));
    }
    for (i, f) in novel.iter_mut().enumerate() {
        f.finding.id = format!("F{}", i + 1);
    }
    rec.counts.novel = novel.len() as u32;
    novel
}

/// The Judge named a file outside the target, or a section the spec document does not
/// have: the run aborts. (A rules file falls back to the finding's place.)
pub(super) fn judge_offtarget(
    j: &JudgeOutput,
    target: &PinnedTarget,
    places: Places<'_>,
) -> Option<Abort> {
    j.rulings
        .iter()
        .find_map(|r| match places.check(r.file.as_deref()?, r.line, target) {
            Place::Offtarget(bad) => Some(Abort::OfftargetHallucination {
                role: Role::Judge,
                file: bad,
            }),
            Place::Allowed { .. } | Place::Context(_) => None,
        })
}

/// The ruling's place: its own (normalised) when it names one in the target, else the
/// finding's; its line, else the finding's.
fn ruling_place(
    r: &Ruling,
    f: &RoundFinding,
    target: &PinnedTarget,
    places: Places<'_>,
) -> (Option<String>, Option<u32>) {
    let line = r.line.or(f.finding.line);
    let is_section = |x: &str| x.trim_start().starts_with('#');
    match r.file.as_deref().map(|x| places.check(x, line, target)) {
        // A spec ruling naming the document where its finding named a section keeps the
        // finding's section (the more precise place).
        Some(Place::Allowed { file, .. })
            if target.target_type == TargetType::Spec
                && !is_section(&file)
                && f.finding.file.as_deref().is_some_and(is_section) =>
        {
            (f.finding.file.clone(), line)
        }
        Some(Place::Allowed { file, line }) => (Some(file.into_owned()), line),
        _ => (f.finding.file.clone(), line),
    }
}

/// Per finding id, what is wrong with the cites of the Judge's ruling on it (only rulings
/// with a problem), checked at the ruling's place (docs/architecture.md §19.6).
///
/// A ruling that does not confirm its finding (a debunk) may not rest on what the citation gate
/// threw away (docs/contracts.md §22.2): citing an entry dropped from the map (`dropped`), or
/// carrying context citations none of which holds, is a problem like a cite that does not
/// cover it — re-prompted once, then unresolved. A confirming ruling's dead cites and
/// citations are only dropped ([`gate_ruling_cites`]).
pub(super) fn cite_problems(
    j: &JudgeOutput,
    novel: &[RoundFinding],
    map: &AdversaryOutput,
    refs: CiteRefs<'_>,
    target: &PinnedTarget,
    places: Places<'_>,
) -> BTreeMap<String, Vec<String>> {
    let mut out = BTreeMap::new();
    let by_id = first_by_id(novel);
    for r in &j.rulings {
        let Some(f) = by_id.get(r.finding_id.as_str()) else {
            continue;
        };
        let (file, line) = ruling_place(r, f, target, places);
        let debunk = !r.is_confirmed();
        let (dead, live): (Vec<String>, Vec<String>) = r
            .cites
            .iter()
            .cloned()
            .partition(|c| refs.dropped.contains(c.trim()));
        let mut bad = bad_cites(&live, file.as_deref(), line, map, target);
        if debunk {
            bad.extend(dead.iter().map(|id| {
                format!(
                    "`{}` was dropped from the Adversary's map (none of its context citations \
                     held): a ruling may not rest on it",
                    id_of(id)
                )
            }));
            if !r.context.is_empty() {
                let mut context = r.context.clone();
                let dropped = check_cites(&mut context, refs.src);
                if context.is_empty() {
                    let list: Vec<String> = dropped.iter().map(ToString::to_string).collect();
                    bad.push(format!(
                        "none of its context citations holds ({})",
                        list.join("; ")
                    ));
                }
            }
        }
        if !bad.is_empty() {
            out.insert(r.finding_id.clone(), bad);
        }
    }
    out
}

/// What the Judge's cites and context citations are checked against besides the map: the
/// ids the citation gate dropped from it and the context scope.
#[derive(Clone, Copy)]
pub(super) struct CiteRefs<'a> {
    pub dropped: &'a BTreeSet<String>,
    pub src: &'a dyn ContextSource,
}

/// The first of `novel` with each finding id (a ruling names its finding by id).
fn first_by_id(novel: &[RoundFinding]) -> HashMap<&str, &RoundFinding> {
    let mut by_id = HashMap::new();
    for f in novel {
        by_id.entry(f.finding.id.as_str()).or_insert(f);
    }
    by_id
}

/// Attach the Judge's rulings to the findings it was sent: each ruling's file normalised (the
/// finding's place when the Judge left it out), counted confirmed / debunked / unresolved;
/// rulings of unknown ids or findings without a ruling are a count mismatch. Returns the
/// valid rulings and each finding's ruling (None: unresolved), in `novel`'s order.
pub(super) fn attach_rulings(
    novel: &[RoundFinding],
    j: &JudgeOutput,
    target: &PinnedTarget,
    places: Places<'_>,
    bad_cites: &BTreeMap<String, Vec<String>>,
    rec: &mut RoundRecord,
) -> (Vec<Ruling>, Vec<Option<Ruling>>) {
    let by_id: BTreeMap<&str, &Ruling> = j
        .rulings
        .iter()
        .map(|r| (r.finding_id.as_str(), r))
        .collect();
    let mut rulings = Vec::with_capacity(novel.len());
    let mut judged = Vec::with_capacity(novel.len());
    let mut invalid_cites = 0u32;
    for f in novel {
        let ruling = by_id.get(f.finding.id.as_str()).and_then(|r| {
            if bad_cites.contains_key(&r.finding_id) {
                // Its cites still did not hold after the re-prompt: no valid ruling.
                invalid_cites += 1;
                return None;
            }
            let mut r = (*r).clone();
            (r.file, r.line) = ruling_place(&r, f, target, places);
            Some(r)
        });
        match &ruling {
            Some(r) if r.is_confirmed() => rec.counts.confirmed += 1,
            Some(_) => rec.counts.debunked += 1,
            None => rec.counts.unresolved += 1,
        }
        if let Some(r) = &ruling {
            rulings.push(r.clone());
        }
        judged.push(ruling);
    }
    let ids = first_by_id(novel);
    let unknown = j
        .rulings
        .iter()
        .filter(|r| !ids.contains_key(r.finding_id.as_str()))
        .count();
    rec.errors.extend(std::iter::repeat_n(
        RoundError::JudgeInvalidCites,
        invalid_cites as usize,
    ));
    if unknown > 0 || rec.counts.unresolved > invalid_cites {
        rec.errors.push(RoundError::JudgeRulingCountMismatch);
    }
    (rulings, judged)
}

#[cfg(test)]
mod tests {
    use super::super::cites::cites_note;
    use super::super::cites::{gate_finding_cites, gate_map, gate_ruling_cites};
    use super::*;
    use crate::findings::SafeZone;
    use crate::findings::{ArtefactType, FinalSeverity, Winner};
    use crate::gates::Outline;
    use crate::records::ContextCite;
    use crate::target::TargetKind;
    use crate::test_support::{cite, finding, target, MemScope};
    use std::path::Path;

    fn record() -> RoundRecord {
        RoundRecord::new(1, Tier::Opus, "full", 2)
    }

    fn unioned(id: &str, file: &str, line: u32) -> UnionedFinding {
        UnionedFinding {
            finding: finding(id, Some(file), Some(line), "logic"),
            passes: vec![1],
            merged_from: vec![format!("p1:{id}")],
        }
    }

    fn ruling(id: &str, file: Option<&str>, line: Option<u32>, winner: Winner) -> Ruling {
        Ruling {
            finding_id: id.into(),
            file: file.map(Into::into),
            line,
            target_type: ArtefactType::Code,
            final_severity: FinalSeverity::High,
            winner,
            resolution: "checked".into(),
            edit_instruction: None,
            cites: vec![],
            context: vec![],
        }
    }

    fn no_places() -> Places<'static> {
        Places {
            outline: None,
            context: &[],
        }
    }

    fn valid<T>(v: T) -> RoleRun<T> {
        RoleRun::new(RoleOutput::Valid(v), vec![])
    }

    fn fold_dispatches(
        round: u32,
        passes: Vec<RoleRun<EnthusiastOutput>>,
        adversary: RoleRun<AdversaryOutput>,
        rec: &mut RoundRecord,
    ) -> Folded {
        let mut f = fold_passes(round, passes, rec);
        fold_adversary(round, adversary, &mut f, rec);
        f
    }

    #[test]
    fn dedup_drops_repeats_of_confirmed_locations_within_the_window_and_renumbers() {
        let mut rec = record();
        let before = [("a.rs".to_string(), 10)];
        let novel = dedup(
            vec![
                unioned("X", "a.rs", 10 + DEDUP_WINDOW),
                unioned("Y", "a.rs", 10 + DEDUP_WINDOW + 1),
                unioned("Z", "b.rs", 10),
            ],
            &before,
            TargetType::Code,
            &mut rec,
        );
        let ids: Vec<(&str, Option<u32>)> = novel
            .iter()
            .map(|f| (f.finding.id.as_str(), f.finding.line))
            .collect();
        assert_eq!(ids, [("F1", Some(16)), ("F2", Some(10))]);
        assert_eq!(rec.counts.dedup_dropped, 1);
        assert_eq!(rec.counts.novel, 2);
        assert!(rec.decision.reasons[0].contains("within ±5 lines"));
        // Spec targets are never deduplicated by line.
        let mut rec = record();
        let novel = dedup(
            vec![unioned("X", "a.rs", 10)],
            &before,
            TargetType::Spec,
            &mut rec,
        );
        assert_eq!(novel.len(), 1);
        assert!(rec.decision.reasons.is_empty());
    }

    #[test]
    fn folding_counts_passes_keeps_the_first_abort_and_flags_malformed_answers() {
        let mut rec = record();
        let passes = vec![
            valid(EnthusiastOutput {
                findings: vec![finding("F1", Some("a.rs"), Some(1), "logic")],
            }),
            RoleRun::new(RoleOutput::Malformed("bad".into()), vec![]),
            RoleRun::new(
                RoleOutput::Abort(Abort::NoToolInvocation {
                    role: Role::Enthusiast,
                }),
                vec![],
            ),
        ];
        let adversary = RoleRun::new(
            RoleOutput::Abort(Abort::NoToolInvocation {
                role: Role::Adversary,
            }),
            vec![],
        );
        let f = fold_dispatches(1, passes, adversary, &mut rec);
        assert_eq!(rec.counts.per_pass, [1, 0]);
        assert_eq!(f.findings.len(), 1);
        assert_eq!(f.findings[0].pass, 1);
        assert_eq!(f.malformed_passes, 1);
        assert!(f.malformed_any);
        assert_eq!(
            f.abort,
            Some(Abort::NoToolInvocation {
                role: Role::Enthusiast
            })
        );
        assert_eq!(rec.errors, ["enthusiast_malformed_json"]);
        // A malformed Adversary map counts as malformed output, not as a pass.
        let mut rec = record();
        let f = fold_dispatches(
            1,
            vec![valid(EnthusiastOutput { findings: vec![] })],
            RoleRun::new(RoleOutput::Malformed("bad".into()), vec![]),
            &mut rec,
        );
        assert!(f.malformed_any && f.adversary.is_none() && f.abort.is_none());
        assert_eq!(f.malformed_passes, 0);
        assert_eq!(rec.errors, ["adversary_malformed_json"]);
    }

    #[test]
    fn the_finding_gates_abort_on_a_file_outside_and_drop_bad_anchors() {
        let t = target(Path::new("/r"), TargetKind::Manifest, &[("a.rs", 10)]);
        let pf = |line| PassFinding {
            pass: 1,
            finding: finding("F1", Some("a.rs"), Some(line), "logic"),
        };
        let mut rec = record();
        let mut fs = vec![pf(3), pf(99)];
        gate_findings(&mut fs, &t, no_places(), &mut rec).unwrap();
        assert_eq!(fs.len(), 1);
        assert_eq!(rec.counts.anchor_invalid, 1);
        assert_eq!(rec.errors, ["anchor_invalid"]);
        let mut fs = vec![PassFinding {
            pass: 1,
            finding: finding("F1", Some("elsewhere.rs"), Some(1), "logic"),
        }];
        let e = gate_findings(&mut fs, &t, no_places(), &mut record()).unwrap_err();
        assert!(matches!(e, Abort::OfftargetHallucination { .. }), "{e:?}");
    }

    #[test]
    fn rulings_are_attached_normalised_and_counted() {
        let t = target(Path::new("/r"), TargetKind::Manifest, &[("a.rs", 10)]);
        let novel: Vec<RoundFinding> = ["F1", "F2", "F3"]
            .iter()
            .map(|id| RoundFinding {
                finding: finding(id, Some("a.rs"), Some(4), "logic"),
                passes: vec![1],
                merged_from: vec![],
            })
            .collect();
        let j = JudgeOutput {
            rulings: vec![
                ruling("F1", None, None, Winner::Enthusiast),
                ruling("F2", Some("a.rs"), Some(5), Winner::Adversary),
                ruling("F9", Some("a.rs"), Some(5), Winner::Enthusiast),
            ],
            summary: "s".into(),
            convergence: false,
            next_round_model: None,
        };
        assert!(judge_offtarget(&j, &t, no_places()).is_none());
        let mut rec = record();
        let (rulings, judged) =
            attach_rulings(&novel, &j, &t, no_places(), &BTreeMap::new(), &mut rec);
        assert_eq!(rulings.len(), 2);
        assert_eq!(rulings[0].file.as_deref(), Some("a.rs"));
        assert_eq!(
            rulings[0].line,
            Some(4),
            "the finding's place fills the gap"
        );
        assert_eq!(judged.len(), 3);
        assert!(judged[2].is_none());
        assert_eq!(
            (
                rec.counts.confirmed,
                rec.counts.debunked,
                rec.counts.unresolved
            ),
            (1, 1, 1)
        );
        assert_eq!(rec.errors, ["judge_ruling_count_mismatch"]);
        let mut bad = j.clone();
        bad.rulings[0].file = Some("/etc/passwd".into());
        assert!(judge_offtarget(&bad, &t, no_places()).is_some());
    }

    #[test]
    fn the_budget_left_counts_the_rounds_spend_and_what_is_pending() {
        let mut st = State::new(Tier::Opus);
        assert_eq!(
            st.left_of((None, None), (5.0, 10)),
            (None, false),
            "no budget"
        );
        st.spent_usd = 0.25;
        let (left, out) = st.left_of((Some(1.0), None), (0.5, 0));
        assert!((left.unwrap() - 0.25).abs() < 1e-12 && !out);
        assert_eq!(st.left_of((Some(1.0), None), (0.75, 0)), (Some(0.0), true));
        st.spent_tokens = 900;
        assert_eq!(st.left_of((None, Some(1000)), (0.0, 99)), (None, false));
        assert_eq!(st.left_of((None, Some(1000)), (0.0, 100)), (None, true));
    }

    #[test]
    fn advancing_carries_confirmed_locations_counts_and_the_streak() {
        let t = target(Path::new("/r"), TargetKind::Manifest, &[("a.rs", 10)]);
        let mut st = State::new(Tier::Sonnet);
        st.note_reviewed(None, &t);
        assert!(st.reviewed_files.contains("a.rs"));
        let d = Decision {
            stop: None,
            next_tier: Tier::Opus,
            substantive: 1,
            self_reference: 0,
            confirmed: 1,
            runs_worsening: 1,
            reasons: vec![],
            round2_skipped: false,
            cost_warning: false,
            escalated: true,
        };
        let rulings = vec![
            ruling("F1", Some("a.rs"), Some(4), Winner::Enthusiast),
            ruling("F2", Some("a.rs"), Some(8), Winner::Adversary),
        ];
        st.advance(1, &t, rulings, Some("sum".into()), 2, &d);
        assert_eq!(st.history.locations(), [("a.rs".to_string(), 4)]);
        assert_eq!(st.file_finding_counts["a.rs"], 1);
        assert_eq!(st.history.prior_summary.as_deref(), Some("sum"));
        assert_eq!(st.prior_rulings.as_ref().map(Vec::len), Some(2));
        assert_eq!(
            (st.prior_substantive, st.prior_yield, st.runs_worsening),
            (Some(1), Some(2), 1)
        );
        assert_eq!((st.tier, st.sub_opus_streak), (Tier::Opus, 1));
        st.advance(2, &t, vec![], None, 0, &d);
        assert_eq!(st.sub_opus_streak, 0, "an opus round ends the streak");
    }

    #[test]
    fn spec_sections_must_exist_and_are_made_canonical_with_the_heading_line() {
        let mut t = target(Path::new("/r"), TargetKind::File, &[("docs/plan.md", 12)]);
        t.target_type = TargetType::Spec;
        let outline =
            Outline::parse("# Plan\n\n## Design\n\nKeep forever.\n\n## Rollout\n\nLater.\n");
        let places = Places {
            outline: Some(&outline),
            context: &[],
        };
        let spec = |file: &str, line| PassFinding {
            pass: 1,
            finding: finding("F1", Some(file), line, "ambiguity"),
        };
        let mut fs = vec![
            spec("# Plan / ## design", Some(5)),
            spec("## Rollout", None),
        ];
        gate_findings(&mut fs, &t, places, &mut record()).unwrap();
        assert_eq!(fs[0].finding.file.as_deref(), Some("## Design"));
        assert_eq!(fs[0].finding.line, Some(5));
        assert_eq!(fs[1].finding.file.as_deref(), Some("## Rollout"));
        assert_eq!(fs[1].finding.line, Some(7), "the heading's line");
        let mut fs = vec![spec("## Totally Invented Section", Some(3))];
        let e = gate_findings(&mut fs, &t, places, &mut record()).unwrap_err();
        assert_eq!(
            e,
            Abort::OfftargetHallucination {
                role: Role::Enthusiast,
                file: "## Totally Invented Section".into()
            }
        );
        // The Judge inventing a section aborts too.
        let j = JudgeOutput {
            rulings: vec![ruling(
                "F1",
                Some("## Nowhere"),
                Some(3),
                Winner::Enthusiast,
            )],
            summary: "s".into(),
            convergence: false,
            next_round_model: None,
        };
        assert!(judge_offtarget(&j, &t, places).is_some());
        // A ruling naming the document keeps its finding's section.
        let novel = [RoundFinding {
            finding: finding("F1", Some("## Design"), Some(5), "ambiguity"),
            passes: vec![1],
            merged_from: vec![],
        }];
        let j = JudgeOutput {
            rulings: vec![ruling("F1", Some("docs/plan.md"), None, Winner::Split)],
            ..j
        };
        let (rulings, _) = attach_rulings(&novel, &j, &t, places, &BTreeMap::new(), &mut record());
        assert_eq!(rulings[0].file.as_deref(), Some("## Design"));
        assert_eq!(rulings[0].line, Some(5));
    }

    #[test]
    fn findings_on_rules_files_are_dropped_and_counted_not_aborted() {
        let t = target(Path::new("/r"), TargetKind::Manifest, &[("a.rs", 10)]);
        let context = ["REVIEW.md".to_string()];
        let places = Places {
            outline: None,
            context: &context,
        };
        let mut fs = vec![
            PassFinding {
                pass: 1,
                finding: finding("F1", Some("./REVIEW.md"), Some(1), "project-rule"),
            },
            PassFinding {
                pass: 1,
                finding: finding("F2", Some("a.rs"), Some(2), "logic"),
            },
        ];
        let mut rec = record();
        gate_findings(&mut fs, &t, places, &mut rec).unwrap();
        assert_eq!(fs.len(), 1);
        assert_eq!(rec.errors, ["rules_file_finding"]);
        // Without the rules as context the same finding is off-target.
        let mut fs = vec![PassFinding {
            pass: 1,
            finding: finding("F1", Some("REVIEW.md"), Some(1), "x"),
        }];
        assert!(gate_findings(&mut fs, &t, no_places(), &mut record()).is_err());
    }

    #[test]
    fn rulings_whose_cites_do_not_hold_become_unresolved() {
        use crate::findings::{AdversaryOutput, SafeZone};
        let t = target(Path::new("/r"), TargetKind::Manifest, &[("a.rs", 40)]);
        let novel: Vec<RoundFinding> = [("F1", 4), ("F2", 30)]
            .iter()
            .map(|(id, line)| RoundFinding {
                finding: finding(id, Some("a.rs"), Some(*line), "logic"),
                passes: vec![1],
                merged_from: vec![],
            })
            .collect();
        let map = AdversaryOutput {
            heuristics: vec![],
            safe_zones: vec![SafeZone {
                id: "Z1".into(),
                file: "a.rs".into(),
                line_start: 1,
                line_end: 10,
                reason: "r".into(),
                evidence: "e".into(),
                context: vec![],
            }],
        };
        let mut good = ruling("F1", None, None, Winner::Adversary);
        good.cites = vec!["Z1".into()];
        let mut bad = ruling("F2", Some("a.rs"), None, Winner::Adversary);
        bad.cites = vec!["Z1".into(), "H4".into()];
        let j = JudgeOutput {
            rulings: vec![good, bad],
            summary: "s".into(),
            convergence: false,
            next_round_model: None,
        };
        let none = BTreeSet::new();
        let scope = MemScope::new(&[]);
        let refs = CiteRefs {
            dropped: &none,
            src: &scope,
        };
        let problems = cite_problems(&j, &novel, &map, refs, &t, no_places());
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(
            problems["F2"],
            [
                "`Z1` does not cover a.rs:30",
                "`H4` is not an id of the Adversary's map"
            ]
        );
        let note = cites_note(&problems).unwrap();
        assert!(note.contains("F2: `Z1` does not cover a.rs:30"), "{note}");
        assert!(cites_note(&BTreeMap::new()).is_none());
        let mut rec = record();
        let (rulings, judged) = attach_rulings(&novel, &j, &t, no_places(), &problems, &mut rec);
        assert_eq!(rulings.len(), 1);
        assert!(judged[1].is_none());
        assert_eq!((rec.counts.debunked, rec.counts.unresolved), (1, 1));
        assert_eq!(rec.errors, ["judge_invalid_cites"]);
    }

    fn zone(id: &str, context: Vec<ContextCite>) -> SafeZone {
        SafeZone {
            id: id.into(),
            file: "a.rs".into(),
            line_start: 1,
            line_end: 10,
            reason: "the caller checks".into(),
            evidence: "e".into(),
            context,
        }
    }

    /// The caller `app.py` and its test, as the context scope holds them.
    fn scope() -> MemScope {
        MemScope::new(&[
            ("a.rs", "fn f() {}\n"),
            (
                "app.py",
                "import ringbuf\n\nif len(buf) > 0:\n    buf.pop()\n",
            ),
        ])
    }

    #[test]
    fn finding_citations_that_do_not_hold_are_dropped_and_counted_not_the_finding() {
        let mut rec = record();
        let mut f = finding("F1", Some("a.rs"), Some(1), "logic");
        f.context = vec![
            cite("app.py", 3, "if len(buf) > 0:"),
            cite("app.py", 3, "if len(buf) >= 0:"),
            cite(".env", 1, "SECRET=x"),
        ];
        let mut findings = vec![PassFinding {
            pass: 2,
            finding: f,
        }];
        gate_finding_cites(&mut findings, &scope(), &mut rec);
        assert_eq!(findings.len(), 1);
        assert_eq!(
            findings[0].finding.context,
            [cite("app.py", 3, "if len(buf) > 0:")]
        );
        assert_eq!(rec.counts.context_cite_invalid, 2);
        assert_eq!(rec.errors, ["context_cite_invalid", "context_cite_invalid"]);
        assert_eq!(
            rec.decision.reasons,
            [
                "context citations of pass 2 finding F1 dropped: app.py:3 (the quoted text is not \
              on that line); .env:1 (not in the context scope)"
            ]
        );
    }

    #[test]
    fn a_map_entry_whose_every_citation_failed_is_dropped_before_the_judge() {
        let mut rec = record();
        let mut map = AdversaryOutput {
            heuristics: vec![crate::findings::Heuristic {
                id: "H1".into(),
                claim: "c".into(),
                evidence: "e".into(),
                applies_to: vec![],
                context: vec![cite("app.py", 9, "if len(buf) > 0:")],
            }],
            safe_zones: vec![
                // A real guard: kept.
                zone("Z1", vec![cite("app.py", 3, "if len(buf) > 0:")]),
                // A fabricated guard: dropped with its zone.
                zone("Z2", vec![cite("app.py", 3, "if buf is not None:")]),
                // Some citations hold: kept with those.
                zone(
                    "Z3",
                    vec![
                        cite("../x", 1, "import ringbuf"),
                        cite("app.py", 1, "import ringbuf"),
                    ],
                ),
                // No citation at all (an in-target guard, or an old answer): kept.
                zone("Z4", vec![]),
            ],
        };
        let dropped = gate_map(&mut map, &scope(), &mut rec);
        assert_eq!(dropped, BTreeSet::from(["H1".into(), "Z2".into()]));
        assert!(map.heuristics.is_empty());
        let ids: Vec<&str> = map.safe_zones.iter().map(|z| z.id.as_str()).collect();
        assert_eq!(ids, ["Z1", "Z3", "Z4"]);
        assert_eq!(
            map.safe_zones[1].context,
            [cite("app.py", 1, "import ringbuf")]
        );
        assert_eq!(rec.counts.context_cite_invalid, 3);
        assert_eq!(rec.counts.map_entries_dropped, 2);
        assert!(rec.decision.reasons.iter().any(|r| r
            == "Adversary safe zone Z2 dropped from the map before the Judge: none of its context citations held"));
        // An id another entry still carries is not dead.
        let mut rec = record();
        let mut map = AdversaryOutput {
            heuristics: vec![],
            safe_zones: vec![
                zone("Z1", vec![cite("app.py", 3, "nope nope nope")]),
                zone("Z1", vec![]),
            ],
        };
        assert!(gate_map(&mut map, &scope(), &mut rec).is_empty());
        assert_eq!(map.safe_zones.len(), 1);
    }

    #[test]
    fn a_debunk_resting_on_a_dropped_guard_is_not_upheld() {
        let t = target(Path::new("/r"), TargetKind::File, &[("a.rs", 40)]);
        let novel = vec![
            RoundFinding {
                finding: finding("F1", Some("a.rs"), Some(5), "logic"),
                passes: vec![1],
                merged_from: vec![],
            },
            RoundFinding {
                finding: finding("F2", Some("a.rs"), Some(6), "logic"),
                passes: vec![1],
                merged_from: vec![],
            },
            RoundFinding {
                finding: finding("F3", Some("a.rs"), Some(7), "logic"),
                passes: vec![1],
                merged_from: vec![],
            },
            RoundFinding {
                finding: finding("F4", Some("a.rs"), Some(8), "logic"),
                passes: vec![1],
                merged_from: vec![],
            },
        ];
        // Z2 was dropped from the map; Z1 survived with its citation.
        let map = AdversaryOutput {
            heuristics: vec![],
            safe_zones: vec![zone("Z1", vec![cite("app.py", 3, "if len(buf) > 0:")])],
        };
        let dropped = BTreeSet::from(["Z2".to_string()]);
        let src = scope();
        let refs = CiteRefs {
            dropped: &dropped,
            src: &src,
        };
        // F1: a debunk on the dropped guard. F2: a debunk on the surviving one. F3: a
        // confirmation that cites the dropped guard (its cite is only removed). F4: a debunk
        // whose own citation is fabricated.
        let mut f1 = ruling("F1", None, None, Winner::Adversary);
        f1.cites = vec!["Z2".into()];
        let mut f2 = ruling("F2", None, None, Winner::Adversary);
        f2.cites = vec!["Z1".into()];
        let mut f3 = ruling("F3", None, None, Winner::Enthusiast);
        f3.cites = vec!["Z2".into()];
        let mut f4 = ruling("F4", None, None, Winner::Adversary);
        f4.context = vec![cite("app.py", 3, "if buf is not None and len(buf):")];
        let mut j = JudgeOutput {
            rulings: vec![f1, f2, f3, f4],
            summary: "s".into(),
            convergence: false,
            next_round_model: None,
        };
        let problems = cite_problems(&j, &novel, &map, refs, &t, no_places());
        assert_eq!(
            problems.keys().map(String::as_str).collect::<Vec<_>>(),
            ["F1", "F4"]
        );
        assert!(problems["F1"][0].starts_with("`Z2` was dropped from the Adversary's map"));
        assert!(problems["F4"][0].starts_with("none of its context citations holds (app.py:3"));
        let mut rec = record();
        gate_ruling_cites(&mut j, &map, &dropped, &src, &mut rec);
        let (rulings, judged) = attach_rulings(&novel, &j, &t, no_places(), &problems, &mut rec);
        assert!(judged[0].is_none() && judged[3].is_none(), "not upheld");
        let f2 = judged[1].as_ref().unwrap();
        assert_eq!(f2.winner, Winner::Adversary);
        // The surviving guard's citation travels with the ruling (the report shows it).
        assert_eq!(f2.context, [cite("app.py", 3, "if len(buf) > 0:")]);
        let f3 = judged[2].as_ref().unwrap();
        assert!(f3.is_confirmed() && f3.cites.is_empty());
        assert_eq!(rulings.len(), 2);
        assert_eq!(
            (
                rec.counts.confirmed,
                rec.counts.debunked,
                rec.counts.unresolved
            ),
            (1, 1, 2)
        );
        assert_eq!(rec.counts.context_cite_invalid, 1);
        assert_eq!(
            rec.errors,
            [
                "context_cite_invalid",
                "judge_invalid_cites",
                "judge_invalid_cites"
            ]
        );
    }
}
