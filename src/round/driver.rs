//! The round driver: dispatch PASSES Enthusiasts ∥ the Adversary, gate and union their
//! output, dispatch the Judge, decide, and repeat until a stop reason or an abort.

use super::decide::confirmed_locations;
use super::prompt::{embed_json, escape_text, first_line, render, target_guide, target_tag};
use super::{
    decide, Assets, DecideInput, DecisionRecord, DispatchRecord, GateResults, PromptVars,
    RoundCounts, RoundFacts, RoundFinding, RoundRecord, StopReason,
};
use crate::dispatch::{dispatch, DispatchRequest};
use crate::findings::{
    union_passes, AdversaryOutput, EnthusiastOutput, JudgeOutput, PassFinding, Role, Ruling, Tier,
};
use crate::gates::{
    anchor_ok, authentic, normalize_finding_file, parse_answer, Abort, AnswerSchema, FileCheck,
    ReadScope,
};
use crate::resolve::{Panel, RunPlan};
use crate::store::{write_json_atomic, Meta, RunDir};
use crate::target::{PinnedTarget, TargetType};
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Instant;
use tokio_util::sync::CancellationToken;

/// Progress lines on stderr (only on a TTY, never with `-q`).
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    enabled: bool,
}

impl Progress {
    pub fn new(quiet: bool) -> Self {
        Self {
            enabled: !quiet && std::io::stderr().is_terminal(),
        }
    }

    pub fn disabled() -> Self {
        Self { enabled: false }
    }

    fn line(&self, s: &str) {
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

enum RoleOutput<T> {
    Valid(T),
    Malformed(String),
    Abort(Abort),
    Cancelled,
}

struct RoleRun<T> {
    output: RoleOutput<T>,
    records: Vec<DispatchRecord>,
}

struct Ctx<'a> {
    plan: &'a RunPlan,
    target: &'a PinnedTarget,
    run: &'a RunDir,
    assets: Assets,
    panel: Panel,
    scope: ReadScope,
    tag: String,
    guide: String,
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
    let panel = match Panel::resolve(plan) {
        Ok(p) => p,
        Err((role, detail)) => {
            result.end = ReviewEnd::Aborted(Abort::DispatchUnavailable { role, detail });
            return result;
        }
    };
    let assets = match Assets::load(&target.root) {
        Ok(a) => a,
        Err(e) => {
            result.end = ReviewEnd::Aborted(Abort::DispatchUnavailable {
                role: Role::Enthusiast,
                detail: format!("cannot read prompt overrides under .arev/: {e}"),
            });
            return result;
        }
    };
    let tag_path = tag_path(target, run);
    let scope = ReadScope::new(&target.root, target.allowed_files(), &tag_path, &[]);
    let ctx = Ctx {
        plan,
        target,
        run,
        assets,
        panel,
        scope,
        tag: target_tag(&tag_path, target.kind.as_str(), &target.sha256),
        guide: target_guide(target, &tag_path),
    };

    let mut tier = plan.tier_start;
    let mut confirmed_before: Vec<(String, u32)> = vec![];
    let mut prior_rulings: Option<Vec<Ruling>> = None;
    let mut prior_summary: Option<String> = None;
    let mut prior_substantive: Option<u32> = None;
    let mut prior_yield: Option<u32> = None;
    let mut runs_worsening = 0;
    let mut sub_opus_streak = 0;

    for round in 1..=plan.max_rounds.max(1) {
        meta.model_current = tier;
        meta.model_history.push(tier);
        let started = Instant::now();
        let mut rec = RoundRecord {
            round,
            tier,
            mode: target.mode.as_str().to_string(),
            passes: plan.passes,
            dispatches: vec![],
            findings: vec![],
            adversary: None,
            judge: None,
            errors: vec![],
            counts: RoundCounts::default(),
            decision: DecisionRecord {
                action: "abort".into(),
                stop_reason: None,
                abort_reason: None,
                next_tier: None,
                reasons: vec![],
            },
            duration_ms: 0,
            cost_usd: 0.0,
            tokens: 0,
        };
        let round_cancel = cancel.child_token();
        progress.line(&format!(
            "Round {round} · {} Enthusiast pass(es) ∥ Adversary · {tier}",
            plan.passes
        ));

        // 3A ∥ 3B
        let enth_futs = (1..=plan.passes).map(|p| {
            let prompt =
                enthusiast_prompt(&ctx, round, p, &confirmed_before, prior_summary.as_deref());
            run_role::<EnthusiastOutput>(
                &ctx,
                Role::Enthusiast,
                Some(p),
                round,
                tier,
                prompt,
                &round_cancel,
            )
        });
        let adv_prompt = adversary_prompt(&ctx, round);
        let adv_fut = run_role::<AdversaryOutput>(
            &ctx,
            Role::Adversary,
            None,
            round,
            tier,
            adv_prompt,
            &round_cancel,
        );
        let (enth_runs, adv_run) = futures::join!(futures::future::join_all(enth_futs), adv_fut);

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
                    for f in out.findings {
                        pass_findings.push(PassFinding { pass, finding: f });
                    }
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
            return finish_round(result, rec, started, ctx.run, meta, ReviewEnd::Interrupted);
        }
        if let Some(a) = abort {
            return finish_round(result, rec, started, ctx.run, meta, ReviewEnd::Aborted(a));
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
                        return finish_round(
                            result,
                            rec,
                            started,
                            ctx.run,
                            meta,
                            ReviewEnd::Aborted(a),
                        );
                    }
                }
            }
        }
        let before_anchor = pass_findings.len();
        pass_findings.retain(|pf| anchor_ok(&pf.finding, target));
        rec.counts.anchor_invalid = (before_anchor - pass_findings.len()) as u32;
        for _ in 0..rec.counts.anchor_invalid {
            rec.errors.push("anchor_invalid".into());
        }
        let unioned = union_passes(pass_findings);
        rec.counts.unioned = unioned.len() as u32;
        // Pre-adversary dedup against earlier confirmed locations (code targets).
        let mut novel: Vec<RoundFinding> = vec![];
        for u in unioned {
            let dup = target.target_type == TargetType::Code
                && match (&u.finding.file, u.finding.line) {
                    (Some(f), Some(l)) => confirmed_before
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
        // Ids are re-numbered after the dedup so the Judge sees F1..Fn.
        for (i, f) in novel.iter_mut().enumerate() {
            f.finding.id = format!("F{}", i + 1);
        }
        rec.counts.novel = novel.len() as u32;
        let adversary_map = adversary.clone().unwrap_or_default();
        rec.adversary = adversary;
        rec.findings = novel.clone();
        progress.line(&format!(
            "Round {round} · Enthusiasts {} finding(s) after union",
            novel.len()
        ));

        // 3C Judge
        let mut rulings: Vec<Ruling> = vec![];
        let mut judge_out: Option<JudgeOutput> = None;
        if novel.is_empty() {
            rec.decision
                .reasons
                .push("no findings: the Judge is skipped".into());
        } else {
            let prompt = judge_prompt(
                &ctx,
                round,
                &novel,
                &adversary_map,
                &confirmed_before,
                prior_summary.as_deref(),
            );
            let jr = run_role::<JudgeOutput>(
                &ctx,
                Role::Judge,
                None,
                round,
                tier,
                prompt,
                &round_cancel,
            )
            .await;
            rec.dispatches.extend(jr.records);
            match jr.output {
                RoleOutput::Valid(j) => {
                    for r in &j.rulings {
                        if let Some(file) = &r.file {
                            if let FileCheck::Offtarget(bad) = normalize_finding_file(file, target)
                            {
                                let a = Abort::OfftargetHallucination {
                                    role: Role::Judge,
                                    file: bad,
                                };
                                return finish_round(
                                    result,
                                    rec,
                                    started,
                                    ctx.run,
                                    meta,
                                    ReviewEnd::Aborted(a),
                                );
                            }
                        }
                    }
                    judge_out = Some(j);
                }
                RoleOutput::Malformed(e) => {
                    rec.errors.push("judge_malformed_json".into());
                    for f in &novel {
                        result.judged.push(Judged {
                            round,
                            finding: f.clone(),
                            ruling: None,
                        });
                    }
                    rec.counts.unresolved = novel.len() as u32;
                    let a = Abort::JudgeMalformed { detail: e };
                    return finish_round(
                        result,
                        rec,
                        started,
                        ctx.run,
                        meta,
                        ReviewEnd::Aborted(a),
                    );
                }
                RoleOutput::Abort(a) => {
                    return finish_round(
                        result,
                        rec,
                        started,
                        ctx.run,
                        meta,
                        ReviewEnd::Aborted(a),
                    );
                }
                RoleOutput::Cancelled => {
                    return finish_round(
                        result,
                        rec,
                        started,
                        ctx.run,
                        meta,
                        ReviewEnd::Interrupted,
                    );
                }
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

        // 3D
        let with_prior_id = novel
            .iter()
            .filter(|f| f.finding.prior_finding_id.is_some())
            .map(|f| f.finding.id.clone())
            .collect();
        let facts = RoundFacts {
            rulings: rulings.clone(),
            with_prior_id,
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
            confirmed_before: &confirmed_before,
            prior_rulings: prior_rulings.as_deref(),
            prior_substantive,
            runs_worsening,
            prior_yield,
            sub_opus_streak,
            budget_exhausted: false,
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
            result.warnings.push(format!(
                "cost warning: three sub-opus rounds in a row (round {round})"
            ));
        }
        rec.decision.reasons.extend(d.reasons.clone());
        let all_malformed = plan.passes > 0 && malformed_passes == plan.passes;
        if let Some(stop) = d.stop {
            if all_malformed {
                let a = Abort::EnthusiastMalformed {
                    detail: format!("round {round}: all {} pass(es) invalid", plan.passes),
                };
                return finish_round(result, rec, started, ctx.run, meta, ReviewEnd::Aborted(a));
            }
            rec.decision.action = "stop".into();
            rec.decision.stop_reason = Some(stop);
            return finish_round(
                result,
                rec,
                started,
                ctx.run,
                meta,
                ReviewEnd::Stopped(stop),
            );
        }
        rec.decision.action = "continue".into();
        rec.decision.next_tier = Some(d.next_tier);
        confirmed_before.extend(confirmed_locations(&rulings));
        prior_summary = judge_out.map(|j| j.summary);
        prior_rulings = Some(rulings);
        prior_substantive = Some(d.substantive);
        prior_yield = Some(novel.len() as u32);
        runs_worsening = d.runs_worsening;
        sub_opus_streak = if tier < Tier::Opus {
            sub_opus_streak + 1
        } else {
            0
        };
        tier = d.next_tier;
        result = push_round(result, rec, started, ctx.run, meta);
    }
    // Unreachable in practice: rule 7 stops at max_rounds.
    result.end = ReviewEnd::Stopped(StopReason::MaxRounds);
    result
}

fn tag_path(target: &PinnedTarget, run: &RunDir) -> PathBuf {
    match (&target.file_path, &target.artefact) {
        (Some(p), _) => p.clone(),
        (None, Some(a)) => run.target_dir().join(a.name),
        (None, None) => run.target_dir(),
    }
}

fn push_round(
    mut result: ReviewResult,
    mut rec: RoundRecord,
    started: Instant,
    run: &RunDir,
    meta: &mut Meta,
) -> ReviewResult {
    rec.duration_ms = started.elapsed().as_millis() as u64;
    rec.cost_usd = rec.dispatches.iter().map(|d| d.outcome.cost_usd()).sum();
    rec.tokens = rec
        .dispatches
        .iter()
        .filter_map(|d| d.outcome.result.as_ref())
        .map(|r| r.usage.total())
        .sum();
    if let Err(e) = write_json_atomic(&run.round(rec.round), &rec) {
        tracing::error!("cannot write round-{}.json: {e}", rec.round);
    }
    meta.rounds_completed = rec.round;
    if let Err(e) = write_json_atomic(&run.meta(), meta) {
        tracing::error!("cannot update meta.json: {e}");
    }
    result.rounds.push(rec);
    result
}

fn finish_round(
    result: ReviewResult,
    mut rec: RoundRecord,
    started: Instant,
    run: &RunDir,
    meta: &mut Meta,
    end: ReviewEnd,
) -> ReviewResult {
    match &end {
        ReviewEnd::Aborted(a) => {
            rec.decision.action = "abort".into();
            rec.decision.abort_reason = Some(a.reason());
            rec.decision.reasons.push(a.detail());
        }
        ReviewEnd::Interrupted => {
            rec.decision.action = "interrupted".into();
            rec.decision.reasons.push("interrupted (Ctrl-C)".into());
        }
        ReviewEnd::Stopped(_) | ReviewEnd::Empty => {}
    }
    let completed = matches!(end, ReviewEnd::Stopped(_));
    let round = rec.round;
    let mut result = push_round(result, rec, started, run, meta);
    if !completed {
        // An aborted or interrupted round is recorded but not completed.
        meta.rounds_completed = round - 1;
    }
    result.end = end;
    result
}

fn prior_rounds_section(confirmed: &[(String, u32)], summary: Option<&str>) -> String {
    if confirmed.is_empty() && summary.is_none() {
        return String::new();
    }
    let list: Vec<String> = confirmed.iter().map(|(f, l)| format!("{f}:{l}")).collect();
    format!(
        "## Earlier rounds\nBLOCKLIST — already confirmed, do not re-raise (±5 lines): {}\n\
         Prior Judge summary: {}\nReport only defects NOT in the blocklist. When a finding \
         builds on an earlier one, set `prior_finding_id`.\n",
        if list.is_empty() {
            "(none)".into()
        } else {
            list.join(", ")
        },
        escape_text(summary.unwrap_or("(none)"))
    )
}

fn base_vars(ctx: &Ctx<'_>, round: u32) -> PromptVars {
    let mut v = PromptVars::default();
    v.set("round", round.to_string())
        .set("mode", ctx.target.mode.as_str())
        .set("target_tag", ctx.tag.clone())
        .set("target_guide", ctx.guide.clone())
        .set("brief", escape_text(&ctx.target.brief))
        .set("localization", "")
        .set("prior_rounds", "")
        .set("checklist", "")
        .set("findings", "[]")
        .set("adversarial_context", "{}")
        .set("pass", "1")
        .set("passes", "1");
    v
}

fn enthusiast_prompt(
    ctx: &Ctx<'_>,
    round: u32,
    pass: u32,
    confirmed: &[(String, u32)],
    summary: Option<&str>,
) -> Result<String, String> {
    let mut v = base_vars(ctx, round);
    v.set("pass", pass.to_string())
        .set("passes", ctx.plan.passes.to_string())
        .set("prior_rounds", prior_rounds_section(confirmed, summary));
    if ctx.target.target_type == TargetType::Code {
        v.set("checklist", ctx.assets.checklist.trim());
    }
    let header = first_line(
        round,
        ctx.target.mode.as_str(),
        Role::Enthusiast,
        Some((pass, ctx.plan.passes)),
    );
    render(&header, ctx.assets.template(Role::Enthusiast), &v)
}

fn adversary_prompt(ctx: &Ctx<'_>, round: u32) -> Result<String, String> {
    let v = base_vars(ctx, round);
    let header = first_line(round, ctx.target.mode.as_str(), Role::Adversary, None);
    render(&header, ctx.assets.template(Role::Adversary), &v)
}

fn judge_prompt(
    ctx: &Ctx<'_>,
    round: u32,
    findings: &[RoundFinding],
    map: &AdversaryOutput,
    confirmed: &[(String, u32)],
    summary: Option<&str>,
) -> Result<String, String> {
    let mut v = base_vars(ctx, round);
    let list: Vec<_> = findings.iter().map(|f| &f.finding).collect();
    v.set("findings", embed_json(&list))
        .set("adversarial_context", embed_json(map))
        .set("prior_rounds", prior_rounds_section(confirmed, summary));
    let header = first_line(round, ctx.target.mode.as_str(), Role::Judge, None);
    render(&header, ctx.assets.template(Role::Judge), &v)
}

const RETRY_NOTE: &str = "Your previous answer was rejected";

/// Dispatch one role with the authenticity retry, the read gates and the schema re-dispatch.
async fn run_role<T: AnswerSchema>(
    ctx: &Ctx<'_>,
    role: Role,
    pass: Option<u32>,
    round: u32,
    tier: Tier,
    prompt: Result<String, String>,
    cancel: &CancellationToken,
) -> RoleRun<T> {
    let mut records = vec![];
    let prompt = match prompt {
        Ok(p) => p,
        Err(e) => {
            return RoleRun {
                output: RoleOutput::Abort(Abort::DispatchUnavailable {
                    role,
                    detail: format!("cannot render the {role} prompt: {e}"),
                }),
                records,
            }
        }
    };
    let base = match pass {
        Some(p) => format!("{role}-p{p}"),
        None => role.as_str().to_string(),
    };
    let mut attempt = 0u32;
    let mut schema_retried = false;
    let mut auth_retried = false;
    let mut current = prompt.clone();
    loop {
        let label = match attempt {
            0 => base.clone(),
            1 => format!("{base}-retry"),
            n => format!("{base}-retry{n}"),
        };
        attempt += 1;
        let (outcome_gates, rec) =
            one_dispatch(ctx, role, pass, round, tier, &label, &current, cancel).await;
        records.push(rec);
        if cancel.is_cancelled() {
            return RoleRun {
                output: RoleOutput::Cancelled,
                records,
            };
        }
        let rec = records.last_mut().expect("just pushed");
        match outcome_gates {
            Step::NotAuthentic(detail) => {
                if auth_retried {
                    return RoleRun {
                        output: RoleOutput::Abort(Abort::DispatchUnavailable { role, detail }),
                        records,
                    };
                }
                auth_retried = true;
                tracing::warn!("{label}: not authentic ({detail}); retrying once");
                continue;
            }
            Step::Abort(a) => {
                cancel.cancel();
                return RoleRun {
                    output: RoleOutput::Abort(a),
                    records,
                };
            }
            Step::Answer(text) => match parse_answer::<T>(&text) {
                Ok(v) => {
                    rec.gates.schema = Some("ok".into());
                    return RoleRun {
                        output: RoleOutput::Valid(v),
                        records,
                    };
                }
                Err(e) => {
                    rec.gates.schema = Some(e.clone());
                    if schema_retried {
                        return RoleRun {
                            output: RoleOutput::Malformed(e),
                            records,
                        };
                    }
                    schema_retried = true;
                    current = format!(
                        "{prompt}\n\n{RETRY_NOTE}: {e}\nAnswer again, from a fresh Read of the \
                         target, with ONLY the JSON object of the schema: no prose, no code fences.\n"
                    );
                }
            },
        }
    }
}

enum Step {
    NotAuthentic(String),
    Abort(Abort),
    Answer(String),
}

#[allow(clippy::too_many_arguments)]
async fn one_dispatch(
    ctx: &Ctx<'_>,
    role: Role,
    pass: Option<u32>,
    round: u32,
    tier: Tier,
    label: &str,
    prompt: &str,
    cancel: &CancellationToken,
) -> (Step, DispatchRecord) {
    let spec = ctx.panel.agent(role, pass);
    let out_dir = ctx.run.agent_dir(round, label);
    let req = DispatchRequest {
        role,
        label: label.to_string(),
        prompt: prompt.to_string(),
        system_prompt: ctx.assets.body(role).to_string(),
        tier,
        cwd: ctx.target.root.clone(),
        out_dir: out_dir.clone(),
        timeout: spec.timeout.unwrap_or(ctx.plan.timeout),
        grace: ctx.plan.grace,
        output_cap: ctx.plan.config.review.max_output_bytes,
    };
    let dir = out_dir
        .strip_prefix(&ctx.run.path)
        .unwrap_or(&out_dir)
        .display()
        .to_string();
    let outcome = match dispatch(spec, &req, cancel).await {
        Ok(o) => o,
        Err(e) => {
            let a = Abort::DispatchUnavailable {
                role,
                detail: e.to_string(),
            };
            let rec = DispatchRecord {
                role,
                pass,
                label: label.to_string(),
                dir,
                outcome: crate::dispatch::AgentOutcome {
                    label: label.to_string(),
                    agent: spec.name.clone(),
                    role,
                    tier,
                    model: spec.models.get(tier).to_string(),
                    end: crate::dispatch::ProcessEnd::SpawnFailed {
                        message: e.to_string(),
                    },
                    tool_uses: vec![],
                    result: None,
                    malformed_lines: 0,
                    stdout_bytes: 0,
                    stdout_truncated: false,
                    stderr_truncated: false,
                    duration_ms: 0,
                },
                gates: GateResults::default(),
                raw_answer: None,
            };
            return (Step::Abort(a), rec);
        }
    };
    let mut gates = GateResults::default();
    let raw_answer = outcome.result.as_ref().and_then(|r| r.text.clone());
    let step = match authentic(&outcome) {
        Err(detail) => {
            gates.authenticity = Some(detail.clone());
            Step::NotAuthentic(detail)
        }
        Ok(()) => {
            gates.authenticity = Some("ok".into());
            let violation = ctx.scope.violation(&outcome.tool_uses);
            let read_target = ctx.scope.read_target(&outcome.tool_uses);
            gates.read_target = Some(read_target);
            gates.offtarget_read = violation.as_ref().map(|v| v.path.clone());
            if let Some(v) = violation {
                Step::Abort(Abort::OfftargetRead { role, path: v.path })
            } else if !read_target {
                Step::Abort(Abort::NoToolInvocation { role })
            } else {
                Step::Answer(outcome.answer().unwrap_or_default().to_string())
            }
        }
    };
    let rec = DispatchRecord {
        role,
        pass,
        label: label.to_string(),
        dir,
        outcome,
        gates,
        raw_answer,
    };
    (step, rec)
}
