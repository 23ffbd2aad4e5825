//! The round driver: dispatch PASSES Enthusiasts ∥ the Adversary, gate and union their
//! output, dispatch the Judge, decide (docs/architecture.md §11.4), and repeat until a stop
//! reason, an abort or Ctrl-C. Each round is written to round-N.json with every decision
//! and its reasons.

use super::cites::{cites_note, gate_finding_cites, gate_map, gate_ruling_cites};
use super::context::{relevant_files, Ctx, RoundView};
use super::debunked::{dismissed_in, drop_debunked};
use super::finders::dispatch_finders;
pub use super::progress::Progress;
use super::role::{run_role, Checks, RoleOutput, RoleRun, Who};
use super::state::{Event, Reporter, RoundState};
use super::step::{
    attach_rulings, cite_problems, dedup, degrade, fold_adversary, fold_passes, gate_findings,
    judge_offtarget, spend, suppress, CiteRefs, State,
};
use super::{
    decide, Action, DecideInput, RoundError, RoundFacts, RoundFinding, RoundRecord, StopReason,
};
use crate::findings::Texts;
use crate::findings::{
    union_passes, AdversaryOutput, JudgeOutput, PassFinding, Role, Ruling, SymbolIndex, UnionRules,
};
use crate::gates::Abort;
use crate::resolve::RunPlan;
use crate::store::{Heartbeat, Recorder};
use crate::target::{PinnedTarget, TargetType};
use std::time::Instant;
use tokio_util::sync::CancellationToken;

/// How the review ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReviewEnd {
    Stopped(StopReason),
    Aborted(Abort),
    Interrupted,
    /// An allowed empty diff: nothing was dispatched.
    Empty,
}

/// A finding the Judge saw (or should have), with its ruling.
#[derive(Debug, Clone, PartialEq)]
pub struct Judged {
    pub round: u32,
    pub finding: RoundFinding,
    /// None = unresolved (the Judge gave no valid ruling for it).
    pub ruling: Option<Ruling>,
}

/// Everything the report needs from the rounds.
#[derive(Debug, Clone)]
pub struct ReviewResult {
    pub end: ReviewEnd,
    pub rounds: Vec<RoundRecord>,
    pub judged: Vec<Judged>,
    pub escalations: Vec<String>,
    pub warnings: Vec<String>,
    /// Findings a suppression kept from the Judge, in round order.
    pub suppressed: Vec<super::SuppressedFinding>,
    /// The flagged files' lines, read once: by the suppression checks, then the report.
    pub(crate) texts: Texts,
    /// `--prove`: the proof phase after the last round (None without it, or when the
    /// review has no verdict).
    pub proof: Option<crate::records::ProofPhase>,
}

impl ReviewResult {
    /// A review that ended as `end` before anything was dispatched.
    pub fn ended(end: ReviewEnd) -> Self {
        Self {
            end,
            rounds: vec![],
            judged: vec![],
            escalations: vec![],
            warnings: vec![],
            suppressed: vec![],
            texts: Texts::default(),
            proof: None,
        }
    }
}

/// Run rounds until a stop reason, an abort or Ctrl-C. Every round is recorded through `rec`
/// (round-N.json, and the round count and tiers in meta.json).
pub async fn run_review(
    plan: &RunPlan,
    target: &PinnedTarget,
    rec: &mut Recorder,
    cancel: &CancellationToken,
    progress: Progress,
) -> ReviewResult {
    let mut result = ReviewResult::ended(ReviewEnd::Interrupted);
    let run = rec.run().clone();
    let ctx = match Ctx::new(plan, target, &run) {
        Ok(c) => c,
        Err((role, detail)) => {
            result.end = ReviewEnd::Aborted(Abort::DispatchUnavailable { role, detail });
            return result;
        }
    };
    let mut st = State::new(plan.tier_start);
    let live = rec.progress().clone();
    // Stopped when the review returns.
    let _heartbeat = progress
        .heartbeat
        .map(|every| Heartbeat::start(live.clone(), every));
    let mut out = Reporter::new(progress);
    let mut round = 1;
    loop {
        let started = Instant::now();
        let record = RoundRecord::new(round, st.tier, target.mode.as_str(), plan.passes);
        let mut this = RoundState::new(record, &mut out, &live);
        let end = round_body(&ctx, &mut st, &mut result, &mut this, cancel).await;
        let RoundState {
            rec: mut record,
            judged,
            ..
        } = this;
        if let Some(end) = &end {
            close_record(&mut record, end);
        }
        record.duration_ms = started.elapsed().as_millis() as u64;
        (record.cost_usd, record.tokens) = spend(&record);
        record.unpriced_tokens = super::step::unpriced_tokens(&record);
        // An aborted or interrupted round is recorded but not completed.
        let completed = end
            .as_ref()
            .is_none_or(|e| matches!(e, ReviewEnd::Stopped(_)));
        rec.record_round(&record, completed);
        // The judged findings are the record's, moved once it is written (not copied).
        if let Some(rulings) = judged {
            let findings = std::mem::take(&mut record.findings);
            // round_body sets both from the same `novel`, one ruling per finding in order.
            debug_assert_eq!(findings.len(), rulings.len(), "a ruling per judged finding");
            result
                .judged
                .extend(
                    findings
                        .into_iter()
                        .zip(rulings)
                        .map(|(finding, ruling)| Judged {
                            round,
                            finding,
                            ruling,
                        }),
                );
        }
        record.forget_payloads();
        result.rounds.push(record);
        match end {
            Some(end) => {
                result.end = end;
                result.warnings = out.take_warnings();
                return result;
            }
            None => round += 1,
        }
    }
}

/// Passes lost to faults: the round goes on degraded (a warning each, on stderr and in the
/// report), unless every pass is required or none answered.
fn degraded(
    ctx: &Ctx<'_>,
    lost: Vec<(u32, String)>,
    this: &mut RoundState<'_>,
) -> Result<(), Abort> {
    let require_all = ctx.plan.settings.review.require_all_passes;
    let rec = &mut this.rec;
    for w in degrade(rec.round, ctx.plan.passes, lost, require_all, rec)? {
        this.out.emit(Event::Degraded(w));
    }
    Ok(())
}

/// The decision of the round the run ends with, when it aborted or was interrupted.
fn close_record(rec: &mut RoundRecord, end: &ReviewEnd) {
    match end {
        ReviewEnd::Aborted(a) => {
            rec.decision.action = Action::Abort;
            rec.decision.abort_reason = Some(a.reason());
            rec.decision.reasons.push(a.detail());
        }
        ReviewEnd::Interrupted => {
            rec.decision.action = Action::Interrupted;
            rec.decision.reasons.push("interrupted (Ctrl-C)".into());
        }
        ReviewEnd::Stopped(_) | ReviewEnd::Empty => {}
    }
}

/// The round itself: `Some(end)` when the run ends with it (stop, abort, Ctrl-C), `None` to
/// continue (the run state is then advanced for the next round). Only the dispatches are
/// awaited here; every step between them is a plain function of `super::step`. When the
/// Judge answered, `this.judged` gets each of `this.rec.findings`' rulings (None:
/// unresolved), in their order: the caller pairs them once the record is written.
async fn round_body(
    ctx: &Ctx<'_>,
    st: &mut State,
    result: &mut ReviewResult,
    this: &mut RoundState<'_>,
    cancel: &CancellationToken,
) -> Option<ReviewEnd> {
    let (round, tier) = (this.rec.round, st.tier);
    let round_cancel = cancel.child_token();
    // Agents in flight are stopped once their spend passes a budget (docs/contracts.md §19.3).
    ctx.meter.arm(&round_cancel);
    let view = match round_view(ctx, st, &mut this.rec) {
        Ok(v) => v,
        Err(a) => return Some(ReviewEnd::Aborted(a)),
    };
    this.line(format!(
        "Round {round} · {tier} · {} Enthusiast pass(es) ∥ Adversary",
        ctx.plan.passes
    ));

    // 3A ∥ 3B. The Adversary has a token of its own: it is cancelled when its map would be
    // thrown away (nothing new to judge, or the round ends without a Judge).
    let adv_cancel = round_cancel.child_token();
    let (enth_runs, adversary) = dispatch_finders(
        ctx,
        &view,
        st,
        round,
        (&round_cancel, &adv_cancel),
        (this.out.progress(), this.live),
    )
    .await;
    let mut folded = fold_passes(round, enth_runs, &mut this.rec);
    // Passes lost to faults after their retries degrade the round, or abort it (docs/contracts.md §19.2).
    let lost = std::mem::take(&mut folded.lost);
    if let Err(a) = degraded(ctx, lost, this) {
        folded.abort.get_or_insert(a);
    }
    let novel = match (cancel.is_cancelled(), folded.abort.take()) {
        (true, _) => Err(ReviewEnd::Interrupted),
        (false, Some(a)) => Err(ReviewEnd::Aborted(a)),
        (false, None) => {
            let findings = std::mem::take(&mut folded.findings);
            novel_findings(ctx, st, result, this, findings).map_err(ReviewEnd::Aborted)
        }
    };
    if matches!(&novel, Ok(n) if n.is_empty()) && adversary.running() && !ctx.meter.tripped() {
        adv_cancel.cancel();
        this.rec.decision.reasons.push(
            "the Adversary was cancelled: every Enthusiast pass answered with nothing new to judge"
                .into(),
        );
        this.line(format!(
            "Round {round} · Adversary cancelled (nothing new to judge)"
        ));
    } else if novel.is_err() {
        adv_cancel.cancel();
    }
    fold_adversary(round, adversary.finish().await, &mut folded, &mut this.rec);
    if cancel.is_cancelled() {
        return Some(ReviewEnd::Interrupted);
    }
    let novel = match novel {
        Ok(novel) => novel,
        Err(end) => return Some(end),
    };
    // A gate that fired (the Adversary's) is the reason, also when the budget ran out too.
    if let Some(a) = folded.abort {
        return Some(ReviewEnd::Aborted(a));
    }
    // The citation gate on the map: an entry none of whose citations held is not shown to
    // the Judge, and no ruling may rest on it (docs/contracts.md §22.2).
    let dropped_ids = match folded.adversary.as_mut() {
        Some(m) => gate_map(m, &ctx.cite_src, &mut this.rec),
        None => Default::default(),
    };
    // The budget ran out while the finders ran: those still at work were stopped and the
    // Judge is not started; the answers already received are kept, their findings
    // unresolved, and the run has no verdict. Only a round whose every pass answered with
    // nothing new to judge needs no Judge: it concludes as it would have anyway.
    if ctx.meter.tripped() && !(novel.is_empty() && folded.cancelled == 0) {
        let end = budget_stop(ctx, this, novel.len(), "while the finders ran");
        this.rec.findings = novel;
        return Some(end);
    }
    let adversary_map = folded.adversary.clone().unwrap_or_default();
    this.rec.adversary = folded.adversary;
    // The round record takes the findings once the Judge and the decision are done with them.
    let judging = Judging {
        view: &view,
        novel: &novel,
        adversary_map: &adversary_map,
        dropped_ids: &dropped_ids,
        cancel: &round_cancel,
        texts: &result.texts,
    };
    let end = match judge(ctx, st, this, judging).await {
        Err(end) => Some(end),
        Ok((rulings, judge_out)) => {
            // What 3D needs of the Judge's answer; the answer itself goes to the record.
            let judge = judge_out.as_ref().map(|j| JudgeGist {
                next_model: j.next_round_model,
                convergence: j.convergence,
                summary: j.summary.clone(),
            });
            this.rec.judge = judge_out;

            // 3D
            let ruled = Ruled {
                novel: &novel,
                rulings,
                judge,
                malformed: (folded.malformed_any, folded.malformed_passes),
            };
            conclude(ctx, st, result, this, ruled)
        }
    };
    this.rec.findings = novel;
    end
}

/// The round's view of the target: RELEVANT_FILES after round 1 for a multi-file target
/// (recorded with the file budget), the files it reviews noted in the run state.
fn round_view(ctx: &Ctx<'_>, st: &mut State, rec: &mut RoundRecord) -> Result<RoundView, Abort> {
    let (target, round) = (ctx.target, rec.round);
    // RELEVANT_FILES (round > 1, multi-file targets).
    let relevant =
        (round > 1).then(|| relevant_files(target, &st.file_finding_counts, &st.reviewed_files));
    let view: RoundView = match ctx.view(round, relevant) {
        Ok(v) => v,
        Err(e) => {
            return Err(Abort::DispatchUnavailable {
                role: Role::Enthusiast,
                detail: format!("cannot write target/relevant-{round}.txt: {e}"),
            });
        }
    };
    if let Some(files) = &view.relevant {
        rec.relevant_files = Some(files.clone());
        rec.decision.reasons.push(format!(
            "file budget: {}/{} files (RELEVANT_FILES)",
            files.len(),
            target.files.len()
        ));
    }
    st.note_reviewed(view.relevant.as_deref(), target);
    Ok(view)
}

/// The passes' findings through finding membership (all-or-nothing), anchors, the union,
/// suppressions, repeats of earlier dismissals (debunked once) and the pre-adversary dedup:
/// the round's novel findings, for the Judge. Synchronous: it runs as soon as every pass
/// has answered, while the Adversary may still be working.
fn novel_findings(
    ctx: &Ctx<'_>,
    st: &mut State,
    result: &mut ReviewResult,
    this: &mut RoundState<'_>,
    mut pass_findings: Vec<PassFinding>,
) -> Result<Vec<RoundFinding>, Abort> {
    let (plan, target, round) = (ctx.plan, ctx.target, this.rec.round);
    let rec = &mut this.rec;
    let places = ctx.places();
    gate_findings(&mut pass_findings, target, places, rec)?;
    gate_finding_cites(&mut pass_findings, &ctx.cite_src, rec);
    // Enclosing symbols (union rule a) of the files findings point at, read now: a large
    // manifest is not read whole for the few files with findings (the membership gate above
    // kept only findings in the target's files). Each file is read once, into the review's
    // texts, which the suppression checks and the report's fingerprints use too.
    let texts = result.texts.clone();
    let symbols = match target.target_type {
        TargetType::Code => SymbolIndex::of_files(
            pass_findings
                .iter()
                .filter_map(|p| p.finding.file.as_deref()),
            |f| texts.get(&target.root, f),
        ),
        TargetType::Spec => SymbolIndex::default(),
    };
    let rules = match target.target_type {
        TargetType::Code => UnionRules::Code(&symbols),
        TargetType::Spec => UnionRules::Spec,
    };
    let unioned = union_passes(pass_findings, rules);
    rec.counts.unioned = unioned.len() as u32;
    let (unioned, not_applied) = suppress(
        round,
        unioned,
        &plan.memory.suppressions,
        |f| texts.get(&target.root, f),
        rec,
    );
    let unioned = drop_debunked(
        round,
        unioned,
        &st.history.debunked,
        rules,
        |f| texts.get(&target.root, f),
        rec,
    );
    let blocklist = st.history.blocklist();
    let novel = dedup(unioned, &blocklist, target.target_type, rec);
    for s in &rec.suppressed {
        if let (Some(f), Some(l)) = (&s.finding.finding.file, s.finding.finding.line) {
            st.history.suppressed.push((f.clone(), l));
        }
    }
    result.suppressed.extend(rec.suppressed.iter().cloned());
    for w in not_applied {
        this.warn(w);
    }
    Ok(novel)
}

/// What the Judge is dispatched on: the round's view, its novel findings, the Adversary's
/// map, and the round's cancellation.
struct Judging<'a> {
    view: &'a RoundView,
    novel: &'a [RoundFinding],
    adversary_map: &'a AdversaryOutput,
    /// Ids the citation gate dropped from the map.
    dropped_ids: &'a std::collections::BTreeSet<String>,
    cancel: &'a CancellationToken,
    /// The flagged files' lines (the fingerprints of what the Judge dismisses).
    texts: &'a Texts,
}

/// 3C: the Judge's valid rulings and its answer (none when there was nothing to judge), or
/// how the run ends (a malformed or off-target answer, an abort, Ctrl-C). `judged` gets each
/// novel finding's ruling (None: unresolved).
async fn judge(
    ctx: &Ctx<'_>,
    st: &mut State,
    this: &mut RoundState<'_>,
    j: Judging<'_>,
) -> Result<(Vec<Ruling>, Option<JudgeOutput>), ReviewEnd> {
    let (target, round, tier) = (ctx.target, this.rec.round, st.tier);
    let (view, novel, adversary_map, texts) = (j.view, j.novel, j.adversary_map, j.texts);
    let places = ctx.places();
    if novel.is_empty() {
        this.rec
            .decision
            .reasons
            .push("no findings: the Judge is skipped".into());
        return Ok((vec![], None));
    }
    // Hard budgets (docs/contracts.md §19.3): the Judge gets all that is left, and is not started when
    // the finders spent it; its findings then stay unresolved.
    let (max_usd, exhausted) = st.budget_left(ctx.plan, spend(&this.rec));
    if exhausted || ctx.meter.tripped() {
        return Err(budget_stop(ctx, this, novel.len(), "before the Judge"));
    }
    this.line(format!(
        "Round {round} · Judge ({} finding(s))",
        novel.len()
    ));
    let who = Who {
        role: Role::Judge,
        pass: None,
        round,
        tier,
        max_usd,
        finding: None,
    };
    let prompt = ctx.judge_prompt(view, round, novel, adversary_map, &st.history);
    // The Judge's cites must name map entries covering each ruling: one re-prompt.
    let refs = CiteRefs {
        dropped: j.dropped_ids,
        src: &ctx.cite_src,
    };
    let check_cites = |j: &JudgeOutput| {
        cites_note(&cite_problems(
            j,
            novel,
            adversary_map,
            refs,
            target,
            places,
        ))
    };
    let checks = Checks {
        content: Some(&check_cites),
        ..Checks::none()
    };
    let jr: RoleRun<JudgeOutput> =
        run_role(ctx, view, who, prompt, j.cancel, this.live, checks).await;
    let judge_context = jr.context_note();
    this.rec.dispatches.extend(jr.records);
    let mut j = match jr.output {
        RoleOutput::Valid(j) => j,
        RoleOutput::Malformed(e) => {
            this.rec.errors.push(RoundError::JudgeMalformedJson);
            this.unresolved(novel.len());
            return Err(ReviewEnd::Aborted(Abort::JudgeMalformed { detail: e }));
        }
        RoleOutput::Abort(a) => return Err(ReviewEnd::Aborted(a)),
        // Only an Enthusiast pass is ever lost; a Judge that cannot answer aborts.
        RoleOutput::Lost(detail) => {
            let role = Role::Judge;
            return Err(ReviewEnd::Aborted(Abort::DispatchUnavailable {
                role,
                detail,
            }));
        }
        // Stopped when its spend passed the budget: its findings stay unresolved.
        RoleOutput::Cancelled if ctx.meter.tripped() => {
            return Err(budget_stop(ctx, this, novel.len(), "while the Judge ran"));
        }
        RoleOutput::Cancelled => return Err(ReviewEnd::Interrupted),
    };
    if let Some(a) = judge_offtarget(&j, target, places) {
        return Err(ReviewEnd::Aborted(a));
    }
    let bad = cite_problems(&j, novel, adversary_map, refs, target, places);
    let rec = &mut this.rec;
    gate_ruling_cites(&mut j, adversary_map, refs.dropped, refs.src, rec);
    for (id, why) in &bad {
        rec.decision.reasons.push(format!(
            "the Judge's ruling on {id} is unresolved: its cites do not hold after a re-prompt ({})",
            why.join("; ")
        ));
    }
    let (valid, each) = attach_rulings(novel, &j, target, places, &bad, rec);
    // Debunked once: a later repeat of a dismissal is kept from the Judge.
    let dismissed = dismissed_in(round, novel, &each, |f| texts.get(&target.root, f));
    st.history.debunked.extend(dismissed);
    this.judged = Some(each);
    let counts = &this.rec.counts;
    let line = format!(
        "Round {round} · Judge ({} confirmed, {} debunked){judge_context}",
        counts.confirmed, counts.debunked
    );
    this.line(line);
    Ok((valid, Some(j)))
}

/// The budget ran out `when` (while the finders ran, before or while the Judge ran): the
/// run aborts `budget_exhausted_before_verdict` (exit 3, never green), the round's `novel`
/// findings unresolved. A budget that runs out once the Judge has ruled stops the run
/// `budget-exhausted` instead ([`conclude`]): a verdict exists.
fn budget_stop(ctx: &Ctx<'_>, this: &mut RoundState<'_>, novel: usize, when: &str) -> ReviewEnd {
    // Every dispatch of the review has ended: the meter's total is what they recorded.
    let spent = ctx.meter.total();
    let detail = format!(
        "budget exhausted {when} ({}): {novel} finding(s) stay unresolved",
        budget_note(ctx.plan, spent.cost_usd, spent.tokens),
    );
    this.unresolved(novel);
    ReviewEnd::Aborted(Abort::BudgetExhaustedBeforeVerdict { detail })
}

/// The parts of the Judge's answer the decision reads.
struct JudgeGist {
    next_model: Option<crate::findings::Tier>,
    convergence: bool,
    summary: String,
}

/// What the round's finders and Judge produced, for 3D.
struct Ruled<'a> {
    novel: &'a [RoundFinding],
    /// The Judge's valid rulings (none when it was skipped).
    rulings: Vec<Ruling>,
    judge: Option<JudgeGist>,
    /// Whether any pass answered malformed, and how many did.
    malformed: (bool, u32),
}

/// 3D: decide on the round's facts, record the decision with its reasons, and either end the
/// run (`Some`) or advance the state for the next round. Synchronous: nothing is dispatched.
fn conclude(
    ctx: &Ctx<'_>,
    st: &mut State,
    result: &mut ReviewResult,
    this: &mut RoundState<'_>,
    ruled: Ruled<'_>,
) -> Option<ReviewEnd> {
    let Ruled {
        novel,
        rulings,
        judge,
        malformed: (malformed_any, malformed_passes),
    } = ruled;
    let (plan, target, round, tier) = (ctx.plan, ctx.target, this.rec.round, st.tier);
    let locations = st.history.locations();
    // The meter also counts what agents in flight spent (and prices a dispatch without a
    // result at list price): either passing the budget stops the run.
    let budget_exhausted = st.spend(&this.rec, plan) | ctx.meter.tripped();
    let facts = RoundFacts {
        rulings,
        with_prior_id: novel
            .iter()
            .filter(|f| f.finding.prior_finding_id.is_some())
            .map(|f| f.finding.id.clone())
            .collect(),
        yield_count: novel.len() as u32,
        malformed: malformed_any,
        judge_next_model: judge.as_ref().and_then(|j| j.next_model),
        judge_convergence: judge.as_ref().is_some_and(|j| j.convergence),
    };
    let input = DecideInput {
        round,
        max_rounds: plan.max_rounds,
        mode: target.mode,
        target_type: target.target_type,
        tier,
        tier_start: plan.tier_start,
        confirmed_before: &locations,
        prior_rulings: st.prior_rulings.as_deref(),
        prior_substantive: st.prior_substantive,
        runs_worsening: st.runs_worsening,
        prior_yield: st.prior_yield,
        sub_opus_streak: st.sub_opus_streak,
        budget_exhausted,
        budget_note: budget_note(plan, st.spent_usd, st.spent_tokens),
    };
    let d = decide(&input, &facts);
    this.rec.counts.substantive = d.substantive;
    this.rec.counts.self_reference = d.self_reference;
    if d.round2_skipped {
        this.rec.errors.push(RoundError::Round2Skipped);
    }
    if d.escalated {
        result
            .escalations
            .push(format!("round {round}: {tier} → {}", d.next_tier));
    }
    if d.cost_warning {
        this.warn(format!(
            "cost warning: three sub-opus rounds in a row (through round {round})"
        ));
    }
    let rec = &mut this.rec;
    rec.decision.reasons.extend(d.reasons.clone());
    if let Some(stop) = d.stop {
        if plan.passes > 0 && malformed_passes == plan.passes {
            let a = Abort::EnthusiastMalformed {
                detail: format!("round {round}: all {} pass(es) invalid", plan.passes),
            };
            return Some(ReviewEnd::Aborted(a));
        }
        rec.decision.action = Action::Stop;
        rec.decision.stop_reason = Some(stop);
        return Some(ReviewEnd::Stopped(stop));
    }
    rec.decision.action = Action::Continue;
    rec.decision.next_tier = Some(d.next_tier);
    let yield_count = novel.len() as u32;
    st.advance(
        round,
        target,
        facts.rulings,
        judge.map(|j| j.summary),
        yield_count,
        &d,
    );
    None
}

fn budget_note(plan: &RunPlan, usd: f64, tokens: u64) -> String {
    match (plan.budget_usd, plan.budget_tokens) {
        (None, None) => String::new(),
        (u, t) => format!(
            "spent ${usd:.4} of {} and {tokens} tokens of {}",
            u.map_or("no USD limit".into(), |b| format!("${b}")),
            t.map_or("no token limit".into(), |b| b.to_string())
        ),
    }
}
