//! One role's dispatch: the retries of a failed dispatch (transient API faults with
//! backoff, a permanent one aborting at once, anything else once), the read gates, and the
//! schema re-dispatch with the parse error (docs/architecture.md §10, SPEC §19.2). Returns a
//! typed output or the reason there is none.

use super::context::{Ctx, RoundView};
use super::retry;
use super::{DispatchRecord, GateResults};
use crate::dispatch::{
    dispatch, tool_permitted, withhold_after, AgentOutcome, FaultClass, ProcessEnd,
};
use crate::findings::{Role, Tier};
use crate::gates::{authentic, forbidden_tool, parse_answer, Abort, AnswerSchema};
use crate::store::ProgressLog;
use tokio_util::sync::CancellationToken;

/// The line a re-dispatch after a schema error starts its note with.
pub(crate) const RETRY_NOTE: &str = "Your previous answer was rejected";

/// What one role produced.
pub(super) enum RoleOutput<T> {
    Valid(T),
    /// Invalid twice: the role's fallback applies.
    Malformed(String),
    Abort(Abort),
    /// An Enthusiast pass that could not answer (faults outlasting the retries): the round
    /// goes on without it, degraded. The cause, for the report.
    Lost(String),
    Cancelled,
}

pub(super) struct RoleRun<T> {
    pub output: RoleOutput<T>,
    pub records: Vec<DispatchRecord>,
    /// The answer stayed at most `Checks::sparse_at_most` characters after its re-prompt.
    pub sparse: bool,
}

impl<T> RoleRun<T> {
    pub(super) fn new(output: RoleOutput<T>, records: Vec<DispatchRecord>) -> Self {
        Self {
            output,
            records,
            sparse: false,
        }
    }
}

/// A problem a content check found: the note of the re-prompt.
pub(super) type ContentCheck<'a, T> = &'a (dyn Fn(&T) -> Option<String> + Sync);

/// Re-prompts beyond the schema's (each at most once per dispatch, docs/architecture.md
/// §19.6): a too-short answer (round 1 Enthusiast: at most 50 characters), and a content
/// check on the parsed answer (the Judge's `cites`).
pub(super) struct Checks<'a, T> {
    pub sparse_at_most: Option<usize>,
    pub content: Option<ContentCheck<'a, T>>,
}

impl<T> Checks<'_, T> {
    pub fn none() -> Self {
        Self {
            sparse_at_most: None,
            content: None,
        }
    }
}

/// Who dispatches: role, pass, round and tier.
#[derive(Debug, Clone, Copy)]
pub(super) struct Who {
    pub role: Role,
    pub pass: Option<u32>,
    pub round: u32,
    pub tier: Tier,
}

enum Step {
    NotAuthentic(String),
    Abort(Abort),
    /// An answer to parse: the dispatch record's (no copy of it is made).
    Answer,
}

/// Dispatch one role with the authenticity retry, the read gates and the schema re-dispatch.
/// Every dispatch's start and end goes to `progress`.
pub(super) async fn run_role<T: AnswerSchema>(
    ctx: &Ctx<'_>,
    view: &RoundView,
    who: Who,
    prompt: Result<String, String>,
    cancel: &CancellationToken,
    progress: &ProgressLog,
    checks: Checks<'_, T>,
) -> RoleRun<T> {
    let mut records = vec![];
    let role = who.role;
    let prompt = match prompt {
        Ok(p) => p,
        Err(e) => {
            let a = Abort::DispatchUnavailable {
                role,
                detail: format!("cannot render the {role} prompt: {e}"),
            };
            return RoleRun::new(RoleOutput::Abort(a), records);
        }
    };
    let base = match who.pass {
        Some(p) => format!("{role}-p{p}"),
        None => role.as_str().to_string(),
    };
    let mut attempt = 0u32;
    let mut schema_retried = false;
    let mut auth_retried = false;
    let mut sparse_retried = false;
    let mut content_retried = false;
    let mut sparse = false;
    // Transient faults: retries so far, and when the first one struck.
    let mut transient = 0u32;
    let mut first_fault: Option<std::time::Instant> = None;
    let window = ctx
        .plan
        .config
        .retry_window()
        .unwrap_or(std::time::Duration::from_secs(120));
    // A re-prompt's text (the first dispatch gets `prompt` itself, not a copy).
    let mut retry: Option<String> = None;
    loop {
        let label = retry_label(&base, attempt);
        attempt += 1;
        let current = retry.as_deref().unwrap_or(&prompt);
        let (step, rec) = one_dispatch(ctx, view, who, &label, current, cancel, progress).await;
        records.push(rec);
        if cancel.is_cancelled() {
            return RoleRun::new(RoleOutput::Cancelled, records);
        }
        match step {
            Step::NotAuthentic(detail) => {
                let last = records.last();
                let fault = last.and_then(|r| r.outcome.fault.clone());
                let dir = last.map(|r| ctx.run.path.join(&r.dir));
                match fault {
                    Some(f) if f.class == FaultClass::Permanent => {
                        // No retry can succeed: stop the other agents now, their work would be
                        // thrown away.
                        tracing::warn!("{label}: {}", f.message);
                        cancel.cancel();
                        let a = Abort::DispatchUnavailable {
                            role,
                            detail: f.message,
                        };
                        return RoleRun::new(RoleOutput::Abort(a), records);
                    }
                    Some(f) if f.class == FaultClass::Transient => {
                        let since = *first_fault.get_or_insert_with(std::time::Instant::now);
                        let delay = retry::backoff(transient, f.retry_after_ms);
                        if since.elapsed() + delay > window {
                            let detail = format!(
                                "{}; still failing after {transient} retries in {} s",
                                f.message,
                                since.elapsed().as_secs()
                            );
                            return lost_or_abort(role, detail, records, cancel);
                        }
                        transient += 1;
                        let next = retry_label(&base, attempt);
                        if let Some(dir) = &dir {
                            retry::record(dir, &f, transient, delay, &next);
                        }
                        tracing::warn!(
                            "{label}: {}; retrying in {:.1} s as {next}",
                            f.message,
                            delay.as_secs_f64()
                        );
                        tokio::select! {
                            () = tokio::time::sleep(delay) => {}
                            () = cancel.cancelled() => {
                                return RoleRun::new(RoleOutput::Cancelled, records);
                            }
                        }
                    }
                    _ if auth_retried => return lost_or_abort(role, detail, records, cancel),
                    _ => {
                        auth_retried = true;
                        tracing::warn!("{label}: not authentic ({detail}); retrying once");
                    }
                }
            }
            Step::Abort(a) => {
                // No verdict can come from this round: stop the other agents now.
                cancel.cancel();
                return RoleRun::new(RoleOutput::Abort(a), records);
            }
            Step::Answer => {
                let answer = records.last().and_then(|r| r.outcome.answer());
                let answer = answer.unwrap_or_default();
                let parsed = parse_answer::<T>(answer);
                // The sparse check's measure, of a valid answer only.
                let chars = match (&parsed, checks.sparse_at_most) {
                    (Ok(_), Some(_)) => answer.trim().chars().count(),
                    _ => 0,
                };
                if let Some(rec) = records.last_mut() {
                    rec.gates.schema = Some(match &parsed {
                        Ok(_) => "ok".into(),
                        Err(e) => e.clone(),
                    });
                    rec.outcome.forget_answer();
                }
                match parsed {
                    Ok(v) => {
                        // A valid but very short answer looks truncated: one re-prompt.
                        if let Some(min) = checks.sparse_at_most.filter(|m| chars <= *m) {
                            if !sparse_retried {
                                sparse_retried = true;
                                if let Some(rec) = records.last_mut() {
                                    rec.gates.reprompt =
                                        Some(format!("sparse: {chars} characters"));
                                }
                                tracing::warn!(
                                    "{label}: answer of {chars} characters (≤ {min}); re-prompting once"
                                );
                                retry = Some(format!(
                                    "{prompt}\n\n{RETRY_NOTE}: it was only {chars} characters \
                                     long, which looks truncated. Read the target again and \
                                     answer with the complete JSON object of the schema (if you \
                                     really found no defect, {{\"findings\":[]}} is the complete \
                                     answer).\n"
                                ));
                                continue;
                            }
                            sparse = true;
                        }
                        let problem = checks.content.and_then(|check| check(&v));
                        if let (Some(note), false) = (problem, content_retried) {
                            content_retried = true;
                            if let Some(rec) = records.last_mut() {
                                rec.gates.reprompt = Some(format!("cites: {note}"));
                            }
                            tracing::warn!("{label}: {note}; re-prompting once");
                            retry = Some(format!(
                                "{prompt}\n\n{RETRY_NOTE}: {note}\nAnswer again, from the target \
                                 and the map above, with ONLY the complete JSON object of the \
                                 schema.\n"
                            ));
                            continue;
                        }
                        return RoleRun {
                            output: RoleOutput::Valid(v),
                            records,
                            sparse,
                        };
                    }
                    Err(e) if schema_retried => {
                        return RoleRun {
                            output: RoleOutput::Malformed(e),
                            records,
                            sparse,
                        }
                    }
                    Err(e) => {
                        schema_retried = true;
                        // Cut at the output token limit (and not continued by the CLI): not
                        // invalid JSON, an answer too long for the cap.
                        let cut = records.last_mut().filter(|r| {
                            r.outcome
                                .fault
                                .as_ref()
                                .is_some_and(|f| f.class == FaultClass::Truncated)
                        });
                        let e = match cut {
                            Some(rec) => {
                                let note = "output_truncated: the answer was cut at the output \
                                            token limit; answer with a shorter, complete JSON \
                                            object (shorter descriptions and evidence)"
                                    .to_string();
                                rec.gates.schema = Some(note.clone());
                                note
                            }
                            None => e,
                        };
                        retry = Some(format!(
                            "{prompt}\n\n{RETRY_NOTE}: {e}\nAnswer again, from a fresh Read of \
                             the target, with ONLY the JSON object of the schema: no prose, no \
                             code fences.\n"
                        ));
                    }
                }
            }
        }
    }
}

/// The dispatch directory of attempt `attempt` (0 = the first dispatch).
fn retry_label(base: &str, attempt: u32) -> String {
    match attempt {
        0 => base.to_string(),
        1 => format!("{base}-retry"),
        n => format!("{base}-retry{n}"),
    }
}

/// A role that could not answer: an Enthusiast pass is lost (the round may go on without
/// it); any other role aborts the run, and its siblings are stopped at once.
fn lost_or_abort<T>(
    role: Role,
    detail: String,
    records: Vec<DispatchRecord>,
    cancel: &CancellationToken,
) -> RoleRun<T> {
    if role == Role::Enthusiast {
        return RoleRun::new(RoleOutput::Lost(detail), records);
    }
    cancel.cancel();
    RoleRun::new(
        RoleOutput::Abort(Abort::DispatchUnavailable { role, detail }),
        records,
    )
}

async fn one_dispatch(
    ctx: &Ctx<'_>,
    view: &RoundView,
    who: Who,
    label: &str,
    prompt: &str,
    cancel: &CancellationToken,
    progress: &ProgressLog,
) -> (Step, DispatchRecord) {
    let role = who.role;
    let spec = ctx.agent(role, who.pass);
    let out_dir = match role {
        Role::Fixer => ctx.run.fixer_dir(label),
        _ => ctx.run.agent_dir(who.round, label),
    };
    // `[timeouts.<role>]` > the agent's own timeout > `[timeouts] agent` (validated at load).
    let (role_timeout, role_grace) = ctx.plan.config.role_timeouts(role).unwrap_or_default();
    let req = crate::dispatch::DispatchRequest {
        role,
        label: label.to_string(),
        prompt: prompt.into(),
        system_prompt: ctx.system_prompt(role),
        tier: who.tier,
        cwd: ctx.target.root.clone(),
        // The repository and the run's target artefacts, as the CLI resolves them.
        read_dirs: [ctx.target.root.clone(), ctx.run.target_dir()]
            .into_iter()
            .map(|d| d.canonicalize().unwrap_or(d))
            .collect(),
        out_dir: out_dir.clone(),
        timeout: role_timeout.or(spec.timeout).unwrap_or(ctx.plan.timeout),
        grace: role_grace.unwrap_or(ctx.plan.grace),
        output_cap: ctx.plan.config.review.max_output_bytes,
        search: ctx.target.kind != crate::target::TargetKind::File || view.relevant.is_some(),
    };
    let dir = out_dir
        .strip_prefix(&ctx.run.path)
        .unwrap_or(&out_dir)
        .display()
        .to_string();
    let mut rec = DispatchRecord {
        role,
        pass: who.pass,
        label: label.to_string(),
        dir,
        outcome: AgentOutcome::empty(
            label,
            &spec.name,
            role,
            who.tier,
            spec.models.get(who.tier),
            ProcessEnd::SpawnFailed {
                message: String::new(),
            },
        ),
        gates: GateResults::default(),
    };
    // The Fixer's `round` is its iteration: only review rounds move the progress' round.
    let round = (role != Role::Fixer).then_some((who.round, who.tier));
    progress.dispatch_started(role, who.pass, label, round);
    let dispatched = dispatch(spec, &req, cancel).await;
    progress.dispatch_finished(role, who.pass, label);
    let mut outcome = match dispatched {
        Ok(o) => o,
        Err(e) => {
            rec.outcome.end = ProcessEnd::SpawnFailed {
                message: e.to_string(),
            };
            let a = Abort::DispatchUnavailable {
                role,
                detail: e.to_string(),
            };
            return (Step::Abort(a), rec);
        }
    };
    let auth = authentic(&outcome, req.output_cap);
    // The first call the role may not make (a forbidden tool, or an access outside the read
    // scope) decides the abort; the run dir keeps nothing the agent saw or said after it.
    let first_bad = outcome.tool_uses.iter().enumerate().find_map(|(i, t)| {
        if !tool_permitted(spec.format, role, t) {
            Some((i, "forbidden_tool"))
        } else if view.scope.violation(std::slice::from_ref(t)).is_some() {
            Some((i, "offtarget_read"))
        } else {
            None
        }
    });
    if let Some((i, why)) = first_bad {
        let bad = outcome.tool_uses[i].id.clone();
        if let Err(e) = withhold_after(&out_dir, &bad, why, &mut outcome) {
            tracing::warn!("{label}: cannot rewrite its events: {e}");
        }
    }
    rec.gates.authenticity = Some(match &auth {
        Ok(()) => "ok".into(),
        Err(detail) => detail.clone(),
    });
    // Fail closed: a forbidden tool or an off-target access aborts whether or not the run
    // was otherwise authentic (a crash after reading a secret is no reason to retry).
    let upto = first_bad.map_or(&outcome.tool_uses[..], |(i, _)| &outcome.tool_uses[..=i]);
    let forbidden = match first_bad {
        Some((_, "forbidden_tool")) => forbidden_tool(spec.format, role, upto),
        _ => None,
    };
    let violation = view.scope.violation(upto);
    rec.gates.offtarget_read = violation.as_ref().map(|v| v.path.clone());
    let step = match (forbidden, violation, auth) {
        (Some(tool), _, _) => {
            rec.gates.forbidden_tool = Some(tool.clone());
            Step::Abort(Abort::ForbiddenTool { role, tool })
        }
        (None, Some(v), _) => {
            rec.gates.read_target = Some(view.scope.read_target(&outcome.tool_uses));
            Step::Abort(Abort::OfftargetRead { role, path: v.path })
        }
        (None, None, Err(detail)) => Step::NotAuthentic(detail),
        (None, None, Ok(())) => {
            let read_target = view.scope.read_target(&outcome.tool_uses);
            rec.gates.read_target = Some(read_target);
            if read_target {
                Step::Answer
            } else {
                Step::Abort(Abort::NoToolInvocation { role })
            }
        }
    };
    rec.outcome = outcome;
    (step, rec)
}
