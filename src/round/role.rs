//! One role's dispatch: the retries of a failed dispatch (transient API faults with
//! backoff, a permanent one aborting at once, anything else once), the read gates, and the
//! schema re-dispatch with the parse error (docs/architecture.md §10, docs/contracts.md §19.2). Returns a
//! typed output or the reason there is none.

use super::context::{Ctx, RoundView};
use super::retry;
use super::{ContextRead, DispatchRecord, GateResults};
use crate::dispatch::{
    cut_answer, dispatch_metered, tool_permitted, withhold_after, AgentOutcome, FaultClass,
    ProcessEnd, ToolUse,
};
use crate::findings::{Role, Tier};
use crate::gates::{authentic, forbidden_tool, parse_answer, Abort, AnswerSchema};
use crate::records::Spend;
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
}

impl<T> RoleRun<T> {
    pub(super) fn new(output: RoleOutput<T>, records: Vec<DispatchRecord>) -> Self {
        Self { output, records }
    }

    /// For the progress line: ` · read N context file(s), ~T tokens` ("" when none was read).
    pub(super) fn context_note(&self) -> String {
        let reads = self.records.iter().flat_map(|r| &r.context_reads);
        let (n, tokens) = reads.fold((0, 0), |(n, t), r| (n + 1, t + r.tokens));
        match n {
            0 => String::new(),
            n => format!(" · read {n} context file(s), ~{tokens} tokens"),
        }
    }
}

/// The context files (in the context scope, outside the target) that `uses` read or
/// searched, each once, with the sha256 and size of their content now.
fn context_reads(scope: &crate::gates::ReadScope, uses: &[ToolUse]) -> Vec<ContextRead> {
    let paths: std::collections::BTreeSet<String> = uses
        .iter()
        .flat_map(|t| t.access.read.iter().chain(&t.access.search))
        .filter_map(|p| scope.context_file(p))
        .collect();
    paths
        .into_iter()
        .map(|path| {
            let bytes = crate::target::read_regular(&scope.root().join(&path)).unwrap_or_default();
            ContextRead {
                sha256: hex::encode(<sha2::Sha256 as sha2::Digest>::digest(&bytes)),
                bytes: bytes.len() as u64,
                tokens: (bytes.len() as u64).div_ceil(4),
                path,
            }
        })
        .collect()
}

/// A problem a content check found: the note of the re-prompt.
pub(super) type ContentCheck<'a, T> = &'a (dyn Fn(&T) -> Option<String> + Sync);

/// The one re-prompt beyond the schema's (at most once per dispatch, docs/architecture.md
/// §19.6): a content check on the parsed answer (the Judge's `cites`). A valid answer is
/// never re-prompted for being short: `{"findings":[]}` is the right answer for clean code.
pub(super) struct Checks<'a, T> {
    pub content: Option<ContentCheck<'a, T>>,
    /// A check of what the previous dispatch left behind, run before every re-dispatch of
    /// the role (the Fixer's link gate): an abort ends the role there.
    pub before_redispatch: Option<&'a (dyn Fn() -> Option<Abort> + Sync)>,
}

impl<T> Checks<'_, T> {
    pub fn none() -> Self {
        Self {
            content: None,
            before_redispatch: None,
        }
    }
}

/// Who dispatches: role, pass, round and tier.
#[derive(Debug, Clone, Copy)]
pub(super) struct Who<'a> {
    pub role: Role,
    pub pass: Option<u32>,
    pub round: u32,
    pub tier: Tier,
    /// Its share of what is left of `--budget-usd` (None without one): Claude's
    /// `--max-budget-usd` for each of its dispatches.
    pub max_usd: Option<f64>,
    /// The Prover's finding (`r1-F3`): its dispatches go to `agents/p/<finding>/`; the
    /// Matcher's pair (`g1-c2`): its label is `matcher-<pair>`.
    pub finding: Option<&'a str>,
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
    who: Who<'_>,
    prompt: Result<String, super::prompt::PromptError>,
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
    let base = match (who.pass, who.finding) {
        (Some(p), _) => format!("{role}-p{p}"),
        // Provers run side by side: each label (the meter's and progress' key) is its own.
        (None, Some(f)) => format!("{role}-{f}"),
        (None, None) => role.as_str().to_string(),
    };
    let mut attempt = 0u32;
    let mut tried = Tried::default();
    // A re-prompt's text (the first dispatch gets `prompt` itself, not a copy).
    let mut retry: Option<String> = None;
    loop {
        if let Some(abort) = checks
            .before_redispatch
            .filter(|_| attempt > 0)
            .and_then(|check| check())
        {
            return RoleRun::new(RoleOutput::Abort(abort), records);
        }
        let label = retry_label(&base, attempt);
        attempt += 1;
        let current = retry.as_deref().unwrap_or(&prompt);
        let retries = attempt - 1;
        let (step, rec) =
            one_dispatch(ctx, view, who, (&label, retries), current, cancel, progress).await;
        records.push(rec);
        // An agent that answered before the cancellation came is taken at its word (its
        // answer is paid for); one cut short is cancelled.
        if cancel.is_cancelled() && !matches!(step, Step::Answer) {
            // Fail closed: a forbidden tool or an off-target access made before the
            // cancellation still aborts (an Adversary cancelled for having nothing to judge
            // does not get away with a read outside the target).
            if let Step::Abort(a @ (Abort::ForbiddenTool { .. } | Abort::OfftargetRead { .. })) =
                step
            {
                return RoleRun::new(RoleOutput::Abort(a), records);
            }
            return RoleRun::new(RoleOutput::Cancelled, records);
        }
        // An answer cut at the output token limit that the CLI reports as a failure (Codex's
        // `turn.failed`): re-dispatched with the truncation note like any cut answer.
        let step = match step {
            Step::NotAuthentic(_) if truncated(&records) && !tried.schema => Step::Answer,
            s => s,
        };
        match step {
            Step::NotAuthentic(detail) => {
                let failed = Failed {
                    role,
                    label: &label,
                    next: retry_label(&base, attempt),
                    window: ctx.plan.settings.timeouts.retry,
                };
                let wait = match on_failure(ctx, &records, failed, detail, &mut tried) {
                    Ok(wait) => wait,
                    Err((output, siblings)) => {
                        if siblings {
                            // Nothing of this round can be used: stop the other agents now.
                            cancel.cancel();
                        }
                        return RoleRun::new(output, records);
                    }
                };
                tokio::select! {
                    () = tokio::time::sleep(wait) => {}
                    () = cancel.cancelled() => return RoleRun::new(RoleOutput::Cancelled, records),
                }
            }
            Step::Abort(a) => {
                // No verdict can come from this round: stop the other agents now.
                cancel.cancel();
                return RoleRun::new(RoleOutput::Abort(a), records);
            }
            Step::Answer => match on_answer(&mut records, &label, &prompt, &checks, &mut tried) {
                // No re-prompt is started once the round is cancelled.
                Next::Retry(_) if cancel.is_cancelled() => {
                    return RoleRun::new(RoleOutput::Cancelled, records)
                }
                Next::Retry(text) => retry = Some(text),
                Next::Done(output) => return RoleRun::new(output, records),
            },
        }
    }
}

/// The re-prompts a role has spent (each at most once); the transient faults retried so
/// far and when the first struck.
#[derive(Default)]
struct Tried {
    schema: bool,
    auth: bool,
    content: bool,
    transient: u32,
    first_fault: Option<std::time::Instant>,
}

/// A dispatch that failed: whose, its label, the label a re-dispatch gets, and how long
/// transient faults may be retried.
struct Failed<'a> {
    role: Role,
    label: &'a str,
    next: String,
    window: std::time::Duration,
}

/// After a failed dispatch (docs/contracts.md §19.2): `Ok(wait)` to re-dispatch after `wait`, else the
/// role's output and whether the round's other agents must be stopped. A permanent fault
/// aborts at once; a transient one is retried with backoff while the window lasts; a
/// failure without a classified cause is retried once. Then an Enthusiast pass is lost and
/// any other role aborts.
fn on_failure<T>(
    ctx: &Ctx<'_>,
    records: &[DispatchRecord],
    failed: Failed<'_>,
    detail: String,
    tried: &mut Tried,
) -> Result<std::time::Duration, (RoleOutput<T>, bool)> {
    let Failed {
        role,
        label,
        next,
        window,
    } = failed;
    let last = records.last();
    let fault = last.and_then(|r| r.outcome.fault.clone());
    match fault {
        Some(f) if f.class == FaultClass::Permanent => {
            tracing::warn!("{label}: {}", f.message);
            let a = Abort::DispatchUnavailable {
                role,
                detail: f.message,
            };
            Err((RoleOutput::Abort(a), true))
        }
        // The CLI stopped it at its share of the budget (docs/contracts.md §19.3): what is
        // left is the other agents' shares, so nothing can pay for a re-dispatch — the
        // budget is spent, and the round's agents are stopped as when the meter trips.
        Some(f) if f.class == FaultClass::Budget => {
            tracing::warn!("{label}: {}", f.message);
            ctx.meter.exhaust();
            Err((RoleOutput::Cancelled, false))
        }
        Some(f) if f.class == FaultClass::Transient => {
            let since = *tried
                .first_fault
                .get_or_insert_with(std::time::Instant::now);
            let delay = retry::backoff(tried.transient, f.retry_after_ms);
            if since.elapsed() + delay > window {
                let detail = format!(
                    "{}; still failing after {} retries in {} s",
                    f.message,
                    tried.transient,
                    since.elapsed().as_secs()
                );
                return Err(lost_or_abort(role, detail));
            }
            tried.transient += 1;
            if let Some(r) = last {
                retry::record(
                    &ctx.run.path.join(&r.dir),
                    &f,
                    tried.transient,
                    delay,
                    &next,
                );
            }
            tracing::warn!(
                "{label}: {}; retrying in {:.1} s as {next}",
                f.message,
                delay.as_secs_f64()
            );
            Ok(delay)
        }
        _ if tried.auth => Err(lost_or_abort(role, detail)),
        _ => {
            tried.auth = true;
            tracing::warn!("{label}: not authentic ({detail}); retrying once");
            Ok(std::time::Duration::ZERO)
        }
    }
}

/// A role that could not answer: an Enthusiast pass is lost (the round may go on without
/// it); any other role aborts the run, and its siblings are stopped.
fn lost_or_abort<T>(role: Role, detail: String) -> (RoleOutput<T>, bool) {
    if role == Role::Enthusiast {
        return (RoleOutput::Lost(detail), false);
    }
    let a = Abort::DispatchUnavailable { role, detail };
    (RoleOutput::Abort(a), true)
}

/// The dispatch directory of attempt `attempt` (0 = the first dispatch).
fn retry_label(base: &str, attempt: u32) -> String {
    match attempt {
        0 => base.to_string(),
        1 => format!("{base}-retry"),
        n => format!("{base}-retry{n}"),
    }
}

/// The gate note and re-prompt of an answer cut at the output token limit.
const TRUNCATED_NOTE: &str = "output_truncated: the answer was cut at the output token limit; \
                              answer with a shorter, complete JSON object (shorter \
                              descriptions and evidence)";

/// Whether the last dispatch's answer was cut at the output token limit.
fn truncated(records: &[DispatchRecord]) -> bool {
    records
        .last()
        .and_then(|r| r.outcome.fault.as_ref())
        .is_some_and(|f| f.class == FaultClass::Truncated)
}

/// After an answer: re-prompt with this text, or the role's output.
enum Next<T> {
    Retry(String),
    Done(RoleOutput<T>),
}

/// The schema gate on the last dispatch's answer (recorded in its gates; the answer is
/// then dropped from the record), then the content check: a re-prompt the first time one
/// fails, else the role's output. A valid answer is never re-prompted for its length.
fn on_answer<T: AnswerSchema>(
    records: &mut [DispatchRecord],
    label: &str,
    prompt: &str,
    checks: &Checks<'_, T>,
    tried: &mut Tried,
) -> Next<T> {
    let answer = records.last().and_then(|r| r.outcome.answer());
    let answer = answer.unwrap_or_default();
    // An answer cut at the output token limit (and not continued by the CLI) is not
    // invalid JSON: it was too long for the cap.
    // A CLI that does not say the answer was cut (Gemini): an answer ending inside its JSON
    // object was, and is recorded so.
    let cut = cut_answer(answer);
    let parsed = parse_answer::<T>(answer).map_err(|e| {
        if truncated(records) {
            return TRUNCATED_NOTE.to_string();
        }
        if let (Some(f), Some(rec)) = (cut, records.last_mut()) {
            rec.outcome.fault = Some(f);
            return TRUNCATED_NOTE.to_string();
        }
        e.to_string()
    });
    if let Some(rec) = records.last_mut() {
        rec.gates.schema = Some(match &parsed {
            Ok(_) => "ok".into(),
            Err(e) => e.clone(),
        });
        rec.outcome.forget_answer();
    }
    let v = match parsed {
        Ok(v) => v,
        Err(e) if tried.schema => return Next::Done(RoleOutput::Malformed(e)),
        Err(e) => {
            tried.schema = true;
            tracing::warn!("{label}: invalid answer ({e}); re-dispatching once");
            return Next::Retry(format!(
                "{prompt}\n\n{RETRY_NOTE}: {e}\nAnswer again, from a fresh Read of \
                 the target, with ONLY the JSON object of the schema: no prose, no \
                 code fences.\n"
            ));
        }
    };
    let problem = checks.content.and_then(|check| check(&v));
    if let (Some(note), false) = (problem, tried.content) {
        tried.content = true;
        if let Some(rec) = records.last_mut() {
            rec.gates.reprompt = Some(format!("cites: {note}"));
        }
        tracing::warn!("{label}: {note}; re-prompting once");
        return Next::Retry(format!(
            "{prompt}\n\n{RETRY_NOTE}: {note}\nAnswer again, from the target \
             and the map above, with ONLY the complete JSON object of the \
             schema.\n"
        ));
    }
    Next::Done(RoleOutput::Valid(v))
}

async fn one_dispatch(
    ctx: &Ctx<'_>,
    view: &RoundView,
    who: Who<'_>,
    (label, retries): (&str, u32),
    prompt: &str,
    cancel: &CancellationToken,
    progress: &ProgressLog,
) -> (Step, DispatchRecord) {
    let role = who.role;
    let spec = ctx.agent(role, who.pass);
    let out_dir = match (role, who.finding) {
        (Role::Fixer, _) => ctx.run.fixer_dir(label),
        (Role::Prover, Some(f)) => ctx.run.prover_dir(f, label),
        _ => ctx.run.agent_dir(who.round, label),
    };
    // `[timeouts.<role>]` > the agent's own timeout > `[timeouts] agent`.
    let timeouts = &ctx.plan.settings.timeouts;
    let limits = timeouts.of(role);
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
        // Inside them, what is outside the context scope (the run's artefacts kept).
        hidden: ctx.hidden(),
        out_dir: out_dir.clone(),
        timeout: limits.agent.or(spec.timeout).unwrap_or(timeouts.agent),
        grace: limits.grace.unwrap_or(timeouts.grace),
        output_cap: ctx.plan.settings.review.max_output_bytes,
        max_budget_usd: who.max_usd,
        price: crate::resolve::price_for(
            &ctx.plan.settings,
            &spec.name,
            spec.format,
            spec.models.get(who.tier),
        ),
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
        context_reads: vec![],
    };
    // The Fixer's `round` is its iteration, the Prover's its finding's: only review rounds
    // move the progress' round.
    let reviewer = !matches!(role, Role::Fixer | Role::Prover | Role::Matcher);
    let round = reviewer.then_some((who.round, who.tier));
    progress.dispatch_started(role, who.pass, label, round, retries);
    // Its running spend, as its events stream, counts against the budgets (docs/contracts.md §19.3).
    let meter = ctx.meter.agent((role, who.pass, label), progress);
    let dispatched = dispatch_metered(spec, &req, cancel, Some(meter)).await;
    let spent = match &dispatched {
        Ok(o) => Spend::of_outcome(o),
        Err(_) => Spend::default(),
    };
    ctx.meter.finished(label, &spent);
    progress.dispatch_finished(role, who.pass, label, spent);
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
    let step = gate(
        &mut outcome,
        &mut rec,
        view,
        (spec.format, role),
        (&out_dir, req.output_cap),
    );
    rec.outcome = outcome;
    (step, rec)
}

/// The gates on a finished dispatch, recorded in `rec`: authenticity, forbidden tools and
/// reads outside the scope (the events after the first such call withheld), and whether
/// the target was read. What comes next: an answer to parse, a retry or an abort.
fn gate(
    outcome: &mut AgentOutcome,
    rec: &mut DispatchRecord,
    view: &RoundView,
    (format, role): (crate::dispatch::EventFormat, Role),
    (out_dir, output_cap): (&std::path::Path, u64),
) -> Step {
    let label = rec.label.as_str();
    let auth = authentic(outcome, output_cap).map_err(|e| e.to_string());
    // The first call the role may not make (a forbidden tool, or an access outside the read
    // scope) decides the abort; the run dir keeps nothing the agent saw or said after it.
    let first_bad = outcome.tool_uses.iter().enumerate().find_map(|(i, t)| {
        if !tool_permitted(format, role, t) {
            Some((i, "forbidden_tool"))
        } else if view.scope.violation(std::slice::from_ref(t)).is_some() {
            Some((i, "offtarget_read"))
        } else {
            None
        }
    });
    if let Some((i, why)) = first_bad {
        let bad = outcome.tool_uses[i].id.clone();
        if let Err(e) = withhold_after(out_dir, &bad, why, outcome) {
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
        Some((_, "forbidden_tool")) => forbidden_tool(format, role, upto),
        _ => None,
    };
    let violation = view.scope.violation(upto);
    rec.gates.offtarget_read = violation.as_ref().map(|v| v.path.clone());
    rec.context_reads = context_reads(&view.scope, upto);
    match (forbidden, violation, auth) {
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
    }
}
