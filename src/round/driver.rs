//! The round driver: dispatch PASSES Enthusiasts ∥ the Adversary, gate and union their
//! output, dispatch the Judge, decide (SPEC §7 3D), and repeat until a stop reason, an abort
//! or Ctrl-C. Each round is written to round-N.json with every decision and its reasons.

use super::context::{relevant_files, Ctx, History, RoundView};
use super::decide::confirmed_locations;
use super::role::{run_role, RoleOutput, RoleRun, Who};
use super::{
    decide, Action, DecideInput, DecisionRecord, RoundCounts, RoundFacts, RoundFinding,
    RoundRecord, StopReason,
};
use crate::findings::{
    union_passes, AdversaryOutput, EnthusiastOutput, JudgeOutput, PassFinding, Role, Ruling, Tier,
    UnionRules,
};
use crate::gates::{anchor_ok, normalize_finding_file, Abort, FileCheck};
use crate::resolve::RunPlan;
use crate::store::{write_json_atomic, Meta, RunDir};
use crate::target::{PinnedTarget, TargetType};
use std::collections::{BTreeMap, BTreeSet};
use std::io::IsTerminal;
use std::time::Instant;
use tokio_util::sync::CancellationToken;

/// Progress lines on stderr (only on a TTY, never with `-q`).
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    enabled: bool,
}

impl Progress {
    pub fn new(quiet: bool) -> Self {
        let forced = std::env::var_os("AREV_PROGRESS").is_some_and(|v| v == "1");
        Self {
            enabled: !quiet && (forced || std::io::stderr().is_terminal()),
        }
    }

    pub fn disabled() -> Self {
        Self { enabled: false }
    }

    pub fn line(&self, s: &str) {
        if self.enabled {
            crate::output::progress(s);
        }
    }
}

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
}

/// Run state carried from round to round (SPEC §7).
struct State {
    tier: Tier,
    history: History,
    prior_rulings: Option<Vec<Ruling>>,
    prior_substantive: Option<u32>,
    prior_yield: Option<u32>,
    runs_worsening: u32,
    sub_opus_streak: u32,
    file_finding_counts: BTreeMap<String, u32>,
    reviewed_files: BTreeSet<String>,
    spent_usd: f64,
    spent_tokens: u64,
}

/// Run rounds until a stop reason, an abort or Ctrl-C. Writes round-N.json and keeps
/// `meta` (rounds_completed, tiers) current on disk.
pub async fn run_review(
    plan: &RunPlan,
    target: &PinnedTarget,
    run: &RunDir,
    meta: &mut Meta,
    cancel: &CancellationToken,
    progress: Progress,
) -> ReviewResult {
    let mut result = ReviewResult {
        end: ReviewEnd::Interrupted,
        rounds: vec![],
        judged: vec![],
        escalations: vec![],
        warnings: vec![],
    };
    let ctx = match Ctx::new(plan, target, run) {
        Ok(c) => c,
        Err((role, detail)) => {
            result.end = ReviewEnd::Aborted(Abort::DispatchUnavailable { role, detail });
            return result;
        }
    };
    let mut st = State {
        tier: plan.tier_start,
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
    };
    let mut round = 1;
    loop {
        match run_round(&ctx, &mut st, &mut result, meta, round, cancel, progress).await {
            Some(end) => {
                result.end = end;
                return result;
            }
            None => round += 1,
        }
    }
}

fn new_record(round: u32, tier: Tier, ctx: &Ctx<'_>) -> RoundRecord {
    RoundRecord {
        round,
        tier,
        mode: ctx.target.mode.as_str().to_string(),
        passes: ctx.plan.passes,
        relevant_files: None,
        dispatches: vec![],
        findings: vec![],
        adversary: None,
        judge: None,
        errors: vec![],
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
    }
}

/// One round; `Some(end)` when the run ends with it.
async fn run_round(
    ctx: &Ctx<'_>,
    st: &mut State,
    result: &mut ReviewResult,
    meta: &mut Meta,
    round: u32,
    cancel: &CancellationToken,
    progress: Progress,
) -> Option<ReviewEnd> {
    meta.model_current = st.tier;
    meta.model_history.push(st.tier);
    let started = Instant::now();
    let mut rec = new_record(round, st.tier, ctx);
    let end = round_body(ctx, st, result, &mut rec, round, cancel, progress).await;
    match end {
        Some(end) => Some(finish(ctx, result, rec, started, meta, end)),
        None => {
            push_round(ctx, result, rec, started, meta);
            None
        }
    }
}

/// The round itself: `Some(end)` when the run ends with it (stop, abort, Ctrl-C), `None` to
/// continue (the run state is then updated for the next round).
async fn round_body(
    ctx: &Ctx<'_>,
    st: &mut State,
    result: &mut ReviewResult,
    rec: &mut RoundRecord,
    round: u32,
    cancel: &CancellationToken,
    progress: Progress,
) -> Option<ReviewEnd> {
    let plan = ctx.plan;
    let target = ctx.target;
    let tier = st.tier;
    let round_cancel = cancel.child_token();

    // RELEVANT_FILES (round > 1, multi-file targets).
    let relevant =
        (round > 1).then(|| relevant_files(target, &st.file_finding_counts, &st.reviewed_files));
    let view: RoundView = match ctx.view(round, relevant) {
        Ok(v) => v,
        Err(e) => {
            let a = Abort::DispatchUnavailable {
                role: Role::Enthusiast,
                detail: format!("cannot write target/relevant-{round}.txt: {e}"),
            };
            return Some(ReviewEnd::Aborted(a));
        }
    };
    match &view.relevant {
        Some(files) => {
            rec.relevant_files = Some(files.clone());
            rec.decision.reasons.push(format!(
                "file budget: {}/{} files (RELEVANT_FILES)",
                files.len(),
                target.files.len()
            ));
            st.reviewed_files.extend(files.iter().cloned());
        }
        None => st
            .reviewed_files
            .extend(target.allowed_files().map(String::from)),
    }
    progress.line(&format!(
        "Round {round} · {tier} · {} Enthusiast pass(es) ∥ Adversary",
        plan.passes
    ));

    // 3A ∥ 3B
    let enth = (1..=plan.passes).map(|p| {
        let prompt = ctx.enthusiast_prompt(&view, round, p, &st.history);
        let who = Who {
            role: Role::Enthusiast,
            pass: Some(p),
            round,
            tier,
        };
        let view = &view;
        let round_cancel = &round_cancel;
        async move {
            let r: RoleRun<EnthusiastOutput> = run_role(ctx, view, who, prompt, round_cancel).await;
            progress.line(&match &r.output {
                RoleOutput::Valid(o) => format!(
                    "Round {round} · Enthusiast pass {p}/{} ({} finding(s))",
                    plan.passes,
                    o.findings.len()
                ),
                RoleOutput::Malformed(_) => {
                    format!("Round {round} · Enthusiast pass {p}: malformed answer")
                }
                RoleOutput::Abort(a) => {
                    format!("Round {round} · Enthusiast pass {p}: {}", a.reason())
                }
                RoleOutput::Cancelled => format!("Round {round} · Enthusiast pass {p}: cancelled"),
            });
            r
        }
    });
    let adv = async {
        let who = Who {
            role: Role::Adversary,
            pass: None,
            round,
            tier,
        };
        let r: RoleRun<AdversaryOutput> = run_role(
            ctx,
            &view,
            who,
            ctx.adversary_prompt(&view, round),
            &round_cancel,
        )
        .await;
        if let RoleOutput::Valid(m) = &r.output {
            progress.line(&format!(
                "Round {round} · Adversary ({} heuristic(s), {} safe zone(s))",
                m.heuristics.len(),
                m.safe_zones.len()
            ));
        }
        r
    };
    let (enth_runs, adv_run) = futures::join!(futures::future::join_all(enth), adv);

    let mut abort: Option<Abort> = None;
    let mut interrupted = cancel.is_cancelled();
    let mut pass_findings = vec![];
    let mut malformed_passes = 0u32;
    let mut malformed_any = false;
    for (i, run_p) in enth_runs.into_iter().enumerate() {
        let pass = i as u32 + 1;
        rec.dispatches.extend(run_p.records);
        match run_p.output {
            RoleOutput::Valid(out) => {
                rec.counts.per_pass.push(out.findings.len() as u32);
                pass_findings.extend(
                    out.findings
                        .into_iter()
                        .map(|finding| PassFinding { pass, finding }),
                );
            }
            RoleOutput::Malformed(e) => {
                rec.counts.per_pass.push(0);
                malformed_passes += 1;
                malformed_any = true;
                rec.errors.push("enthusiast_malformed_json".into());
                tracing::warn!("round {round} pass {pass}: enthusiast_malformed_json: {e}");
            }
            RoleOutput::Abort(a) => {
                abort.get_or_insert(a);
            }
            RoleOutput::Cancelled => interrupted |= cancel.is_cancelled(),
        }
    }
    rec.dispatches.extend(adv_run.records);
    let adversary = match adv_run.output {
        RoleOutput::Valid(m) => Some(m),
        RoleOutput::Malformed(e) => {
            malformed_any = true;
            rec.errors.push("adversary_malformed_json".into());
            tracing::warn!("round {round}: adversary_malformed_json: {e}");
            None
        }
        RoleOutput::Abort(a) => {
            abort.get_or_insert(a);
            None
        }
        RoleOutput::Cancelled => {
            interrupted |= cancel.is_cancelled();
            None
        }
    };
    if interrupted {
        return Some(ReviewEnd::Interrupted);
    }
    if let Some(a) = abort {
        return Some(ReviewEnd::Aborted(a));
    }

    // Finding membership (all-or-nothing), then anchors.
    for pf in &mut pass_findings {
        if let Some(file) = pf.finding.file.clone() {
            match normalize_finding_file(&file, target) {
                FileCheck::Allowed(rel) => pf.finding.file = Some(rel),
                FileCheck::Offtarget(bad) => {
                    let a = Abort::OfftargetHallucination {
                        role: Role::Enthusiast,
                        file: bad,
                    };
                    return Some(ReviewEnd::Aborted(a));
                }
            }
        }
    }
    let before_anchor = pass_findings.len();
    pass_findings.retain(|pf| anchor_ok(&pf.finding, target));
    rec.counts.anchor_invalid = (before_anchor - pass_findings.len()) as u32;
    rec.errors.extend(std::iter::repeat_n(
        "anchor_invalid".to_string(),
        rec.counts.anchor_invalid as usize,
    ));
    let rules = match target.target_type {
        TargetType::Code => UnionRules::Code(&ctx.symbols),
        TargetType::Spec => UnionRules::Spec,
    };
    let unioned = union_passes(pass_findings, rules);
    rec.counts.unioned = unioned.len() as u32;
    // Pre-adversary dedup against earlier confirmed locations (code targets).
    let locations = st.history.locations();
    let mut novel: Vec<RoundFinding> = vec![];
    for u in unioned {
        let dup = target.target_type == TargetType::Code
            && match (&u.finding.file, u.finding.line) {
                (Some(f), Some(l)) => locations
                    .iter()
                    .any(|(cf, cl)| cf == f && cl.abs_diff(l) <= 5),
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
            "pre-adversary dedup: {} finding(s) within ±5 lines of a confirmed location dropped",
            rec.counts.dedup_dropped
        ));
    }
    for (i, f) in novel.iter_mut().enumerate() {
        f.finding.id = format!("F{}", i + 1);
    }
    rec.counts.novel = novel.len() as u32;
    let adversary_map = adversary.clone().unwrap_or_default();
    rec.adversary = adversary;
    rec.findings = novel.clone();

    // 3C Judge
    let mut rulings: Vec<Ruling> = vec![];
    let mut judge_out: Option<JudgeOutput> = None;
    if novel.is_empty() {
        rec.decision
            .reasons
            .push("no findings: the Judge is skipped".into());
    } else {
        progress.line(&format!(
            "Round {round} · Judge ({} finding(s))",
            novel.len()
        ));
        let who = Who {
            role: Role::Judge,
            pass: None,
            round,
            tier,
        };
        let prompt = ctx.judge_prompt(&view, round, &novel, &adversary_map, &st.history);
        let jr: RoleRun<JudgeOutput> = run_role(ctx, &view, who, prompt, &round_cancel).await;
        rec.dispatches.extend(jr.records);
        match jr.output {
            RoleOutput::Valid(j) => {
                for r in &j.rulings {
                    if let Some(file) = &r.file {
                        if let FileCheck::Offtarget(bad) = normalize_finding_file(file, target) {
                            let a = Abort::OfftargetHallucination {
                                role: Role::Judge,
                                file: bad,
                            };
                            return Some(ReviewEnd::Aborted(a));
                        }
                    }
                }
                judge_out = Some(j);
            }
            RoleOutput::Malformed(e) => {
                rec.errors.push("judge_malformed_json".into());
                result.judged.extend(novel.iter().map(|f| Judged {
                    round,
                    finding: f.clone(),
                    ruling: None,
                }));
                rec.counts.unresolved = novel.len() as u32;
                let a = Abort::JudgeMalformed { detail: e };
                return Some(ReviewEnd::Aborted(a));
            }
            RoleOutput::Abort(a) => return Some(ReviewEnd::Aborted(a)),
            RoleOutput::Cancelled => return Some(ReviewEnd::Interrupted),
        }
    }
    if let Some(j) = &judge_out {
        let by_id: BTreeMap<&str, &Ruling> = j
            .rulings
            .iter()
            .map(|r| (r.finding_id.as_str(), r))
            .collect();
        for f in &novel {
            let ruling = by_id.get(f.finding.id.as_str()).map(|r| {
                let mut r = (*r).clone();
                // Normalise the named file; keep the finding's place when the Judge left it out.
                r.file = match r.file.as_deref().map(|x| normalize_finding_file(x, target)) {
                    Some(FileCheck::Allowed(rel)) => Some(rel),
                    _ => f.finding.file.clone(),
                };
                if r.line.is_none() {
                    r.line = f.finding.line;
                }
                r
            });
            match &ruling {
                Some(r) if r.is_confirmed() => rec.counts.confirmed += 1,
                Some(_) => rec.counts.debunked += 1,
                None => rec.counts.unresolved += 1,
            }
            if let Some(r) = &ruling {
                rulings.push(r.clone());
            }
            result.judged.push(Judged {
                round,
                finding: f.clone(),
                ruling,
            });
        }
        let unknown = j
            .rulings
            .iter()
            .filter(|r| !novel.iter().any(|f| f.finding.id == r.finding_id))
            .count();
        if unknown > 0 || rec.counts.unresolved > 0 {
            rec.errors.push("judge_ruling_count_mismatch".into());
        }
        progress.line(&format!(
            "Round {round} · Judge ({} confirmed, {} debunked)",
            rec.counts.confirmed, rec.counts.debunked
        ));
    }
    rec.judge = judge_out.clone();

    // Spend so far (this round included).
    let (usd, tokens) = spend(rec);
    st.spent_usd += usd;
    st.spent_tokens += tokens;
    let budget_exhausted = plan.budget_usd.is_some_and(|b| st.spent_usd >= b)
        || plan.budget_tokens.is_some_and(|b| st.spent_tokens >= b);

    // 3D
    let facts = RoundFacts {
        rulings: rulings.clone(),
        with_prior_id: novel
            .iter()
            .filter(|f| f.finding.prior_finding_id.is_some())
            .map(|f| f.finding.id.clone())
            .collect(),
        yield_count: novel.len() as u32,
        malformed: malformed_any,
        judge_next_model: judge_out.as_ref().and_then(|j| j.next_round_model),
        judge_convergence: judge_out.as_ref().is_some_and(|j| j.convergence),
    };
    let input = DecideInput {
        round,
        max_rounds: plan.max_rounds,
        mode: target.mode,
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
    rec.counts.substantive = d.substantive;
    rec.counts.self_reference = d.self_reference;
    if d.round2_skipped {
        rec.errors.push("round2_skipped".into());
    }
    if d.escalated {
        result
            .escalations
            .push(format!("round {round}: {tier} → {}", d.next_tier));
    }
    if d.cost_warning {
        let w = format!("cost warning: three sub-opus rounds in a row (through round {round})");
        crate::output::warn(&w);
        result.warnings.push(w);
    }
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
    for r in rulings.iter().filter(|r| r.is_confirmed()) {
        if let (Some(f), Some(l)) = (&r.file, r.line) {
            st.history
                .confirmed
                .push((round, r.finding_id.clone(), f.clone(), l));
        }
        if let Some(f) = &r.file {
            if target.is_allowed(f) {
                *st.file_finding_counts.entry(f.clone()).or_default() += 1;
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
    st.history.prior_summary = judge_out.map(|j| j.summary);
    st.prior_rulings = Some(rulings);
    st.prior_substantive = Some(d.substantive);
    st.prior_yield = Some(novel.len() as u32);
    st.runs_worsening = d.runs_worsening;
    st.sub_opus_streak = if tier < Tier::Opus {
        st.sub_opus_streak + 1
    } else {
        0
    };
    st.tier = d.next_tier;
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

fn spend(rec: &RoundRecord) -> (f64, u64) {
    let usd = rec.dispatches.iter().map(|d| d.outcome.cost_usd()).sum();
    let tokens = rec
        .dispatches
        .iter()
        .filter_map(|d| d.outcome.result.as_ref())
        .map(|r| r.usage.total())
        .sum();
    (usd, tokens)
}

fn push_round(
    ctx: &Ctx<'_>,
    result: &mut ReviewResult,
    mut rec: RoundRecord,
    started: Instant,
    meta: &mut Meta,
) {
    rec.duration_ms = started.elapsed().as_millis() as u64;
    (rec.cost_usd, rec.tokens) = spend(&rec);
    if let Err(e) = write_json_atomic(&ctx.run.round(rec.round), &rec) {
        tracing::error!("cannot write round-{}.json: {e}", rec.round);
    }
    meta.rounds_completed = rec.round;
    if let Err(e) = write_json_atomic(&ctx.run.meta(), meta) {
        tracing::error!("cannot update meta.json: {e}");
    }
    result.rounds.push(rec);
}

/// Record the final round (stopped, aborted or interrupted) and return how the run ends.
fn finish(
    ctx: &Ctx<'_>,
    result: &mut ReviewResult,
    mut rec: RoundRecord,
    started: Instant,
    meta: &mut Meta,
    end: ReviewEnd,
) -> ReviewEnd {
    match &end {
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
    let completed = matches!(end, ReviewEnd::Stopped(_));
    let round = rec.round;
    push_round(ctx, result, rec, started, meta);
    if !completed {
        // An aborted or interrupted round is recorded but not completed.
        meta.rounds_completed = round - 1;
    }
    end
}
