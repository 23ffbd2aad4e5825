//! One role's dispatch: the authenticity retry, the read gates, and the schema re-dispatch
//! with the parse error (docs/architecture.md §10). Returns a typed output or the reason
//! there is none.

use super::context::{Ctx, RoundView};
use super::{DispatchRecord, GateResults};
use crate::dispatch::{dispatch, tool_permitted, withhold_after, AgentOutcome, ProcessEnd};
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
}

/// A problem a content check found: the note of the re-prompt.
pub(super) type ContentCheck<'a, T> = &'a (dyn Fn(&T) -> Option<String> + Sync);

/// The one re-prompt beyond the schema's (at most once per dispatch, docs/architecture.md
/// §19.6): a content check on the parsed answer (the Judge's `cites`). A valid answer is
/// never re-prompted for being short: `{"findings":[]}` is the right answer for clean code.
pub(super) struct Checks<'a, T> {
    pub content: Option<ContentCheck<'a, T>>,
}

impl<T> Checks<'_, T> {
    pub fn none() -> Self {
        Self { content: None }
    }
}

/// Who dispatches: role, pass, round and tier.
#[derive(Debug, Clone, Copy)]
pub(super) struct Who {
    pub role: Role,
    pub pass: Option<u32>,
    pub round: u32,
    pub tier: Tier,
    /// Its share of what is left of `--budget-usd` (None without one): Claude's
    /// `--max-budget-usd` for each of its dispatches.
    pub max_usd: Option<f64>,
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
    let mut tried = Tried::default();
    // A re-prompt's text (the first dispatch gets `prompt` itself, not a copy).
    let mut retry: Option<String> = None;
    loop {
        let label = match attempt {
            0 => base.clone(),
            1 => format!("{base}-retry"),
            n => format!("{base}-retry{n}"),
        };
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
        match step {
            Step::NotAuthentic(detail) => {
                if tried.auth {
                    return RoleRun::new(
                        RoleOutput::Abort(Abort::DispatchUnavailable { role, detail }),
                        records,
                    );
                }
                tried.auth = true;
                tracing::warn!("{label}: not authentic ({detail}); retrying once");
            }
            Step::Abort(a) => {
                // No verdict can come from this round: stop the other agents now.
                cancel.cancel();
                return RoleRun::new(RoleOutput::Abort(a), records);
            }
            Step::Answer => match on_answer(&mut records, &label, &prompt, &checks, &mut tried) {
                Next::Retry(text) => retry = Some(text),
                Next::Done(output) => return RoleRun::new(output, records),
            },
        }
    }
}

/// The re-prompts a role has spent (each at most once).
#[derive(Default)]
struct Tried {
    schema: bool,
    auth: bool,
    content: bool,
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
    let parsed = parse_answer::<T>(answer);
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
    who: Who,
    (label, retries): (&str, u32),
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
        system_prompt: ctx.body(role).to_string(),
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
        max_budget_usd: who.max_usd,
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
    progress.dispatch_started(role, who.pass, label, round, retries);
    let dispatched = dispatch(spec, &req, cancel).await;
    let spent = match &dispatched {
        Ok(o) => Spend {
            cost_usd: o.cost_usd(),
            tokens: o.tokens(),
        },
        Err(_) => Spend::default(),
    };
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
    let auth = authentic(outcome, output_cap);
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
