//! Gates (docs/architecture.md §10): pure checks that throw away hallucinated or
//! unauthentic reviews.
mod anchor;
mod cites;
mod context;
mod membership;
mod reads;
mod schema;
mod sections;
mod tools;

pub use anchor::anchor_ok;
pub use cites::bad_cites;
pub use context::{
    check_cites, cite_path, CiteDrop, ContextSource, DroppedCite, ScopeLines, MAX_CITES,
};
pub use membership::{check_place, normalize_finding_file, repo_relative, FileCheck, Place};
pub use reads::{ReadScope, ReadViolation};
pub use schema::{parse_answer, AnswerError, AnswerSchema, SchemaError};
pub use sections::{Heading, Outline, Section};
pub use tools::forbidden_tool;

use crate::dispatch::{AgentOutcome, ProcessEnd};
use crate::findings::Role;
use crate::store::AbortReason;

/// Why a run aborts (recorded as meta.json `abort_reason`; exit 3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Abort {
    /// The agent did not run, crashed without a result, or reported `is_error` (after one retry).
    DispatchUnavailable { role: Role, detail: String },
    /// No Read of the target in the agent's events.
    NoToolInvocation { role: Role },
    /// A Read/Grep/Glob outside ALLOWED_FILES ∪ target files.
    OfftargetRead { role: Role, path: String },
    /// A finding or ruling names a file outside ALLOWED_FILES.
    OfftargetHallucination { role: Role, file: String },
    /// The Judge's output was invalid after the re-dispatch: no verdict exists.
    JudgeMalformed { detail: String },
    /// Every Enthusiast pass of the deciding round was invalid: nothing was reviewed.
    EnthusiastMalformed { detail: String },
    /// The Fixer (iterate mode) edited or wrote a path outside its worktree.
    OfftargetWrite { role: Role, path: String },
    /// The Fixer (iterate mode) left a symbolic link in its worktree that leads outside it —
    /// the next write through it would land there — or a worktree arev could not check for
    /// one; `detail` says which. Recorded as the write gate's abort.
    LinkOutside { role: Role, detail: String },
    /// A tool call the role may not make (for a reviewer: anything but the backend's
    /// read-only tools); `tool` names it.
    ForbiddenTool { role: Role, tool: String },
    /// A budget ran out before the Judge ruled on the round's findings: `detail` says when
    /// and what was spent. The answers already received are kept (their findings
    /// unresolved); no verdict exists.
    BudgetExhaustedBeforeVerdict { detail: String },
}

impl Abort {
    /// The enumerated abort reason.
    pub fn reason(&self) -> AbortReason {
        match self {
            Self::DispatchUnavailable { .. } => AbortReason::AgentDispatchUnavailable,
            Self::NoToolInvocation { role } => AbortReason::NoToolInvocation(*role),
            Self::OfftargetRead { role, .. } => AbortReason::OfftargetRead(*role),
            Self::OfftargetHallucination { .. } => AbortReason::OfftargetHallucination,
            Self::JudgeMalformed { .. } => AbortReason::JudgeMalformedJson,
            Self::EnthusiastMalformed { .. } => AbortReason::EnthusiastMalformedJson,
            Self::OfftargetWrite { role, .. } | Self::LinkOutside { role, .. } => {
                AbortReason::OfftargetWrite(*role)
            }
            Self::ForbiddenTool { role, .. } => AbortReason::ForbiddenTool(*role),
            Self::BudgetExhaustedBeforeVerdict { .. } => AbortReason::BudgetExhaustedBeforeVerdict,
        }
    }

    /// One line for humans.
    pub fn detail(&self) -> String {
        match self {
            Self::DispatchUnavailable { role, detail } => {
                format!("the {role} agent could not be dispatched: {detail}")
            }
            Self::NoToolInvocation { role } => {
                format!("the {role} never Read the target: its review is not based on the code")
            }
            Self::OfftargetRead { role, path } => {
                format!("the {role} read {path}, which is outside the target")
            }
            Self::OfftargetHallucination { role, file } => {
                format!("the {role} named {file}, which is not part of the target")
            }
            Self::JudgeMalformed { detail } => {
                format!("the Judge's answer was invalid twice ({detail}); findings are unresolved")
            }
            Self::EnthusiastMalformed { detail } => {
                format!("every Enthusiast pass answered invalid JSON twice ({detail})")
            }
            Self::OfftargetWrite { role, path } => {
                format!("the {role} wrote {path}, which is outside its worktree")
            }
            Self::LinkOutside { role, detail } => format!("after the {role}'s dispatch, {detail}"),
            Self::ForbiddenTool { role, tool } => {
                format!("the {role} called {tool}, a tool it may not use")
            }
            Self::BudgetExhaustedBeforeVerdict { detail } => {
                format!("the budget ran out before a verdict: {detail}")
            }
        }
    }
}

/// Why a dispatch is not authentic (recorded as its `gates.authenticity`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unauthentic {
    #[error(
        "its output ({bytes} bytes) exceeded the {cap} output cap (`review.max_output_bytes`); \
         the rest, where its result event would have been, was discarded"
    )]
    OutputCap { bytes: u64, cap: String },
    #[error("could not start: {0}")]
    NotStarted(String),
    #[error("timed out after {0} ms")]
    TimedOut(u64),
    #[error("cancelled")]
    Cancelled,
    #[error("killed by signal {0} without a result")]
    Killed(i32),
    #[error("exited with code {0} without a result event")]
    Exited(i32),
    #[error("reported is_error ({subtype}): {first_line}")]
    IsError { subtype: String, first_line: String },
    #[error("result event without a result text")]
    NoResultText,
    #[error("no result event")]
    NoResult,
}

/// Dispatch authenticity: Ok when the agent ran to a non-error `result` event.
/// `output_cap` is the byte cap its stdout was read with (`review.max_output_bytes`): a
/// result lost beyond it is reported as the cap, not as a missing result.
pub fn authentic(outcome: &AgentOutcome, output_cap: u64) -> Result<(), Unauthentic> {
    if outcome.result.is_none()
        && outcome.stdout_truncated
        && matches!(
            outcome.end,
            ProcessEnd::Exited { .. } | ProcessEnd::Signaled { .. }
        )
    {
        return Err(Unauthentic::OutputCap {
            bytes: outcome.stdout_bytes,
            cap: size(output_cap),
        });
    }
    match &outcome.end {
        ProcessEnd::SpawnFailed { message } => {
            return Err(Unauthentic::NotStarted(message.clone()))
        }
        ProcessEnd::TimedOut { .. } => return Err(Unauthentic::TimedOut(outcome.duration_ms)),
        // Stopped after its result event had arrived (a budget its own result passed
        // cancels the round while the CLI is still exiting): the answer it gave is kept.
        ProcessEnd::Cancelled { .. } if outcome.result.is_none() => {
            return Err(Unauthentic::Cancelled)
        }
        ProcessEnd::Cancelled { .. } => {}
        ProcessEnd::Signaled { signal } => {
            if outcome.result.is_none() {
                return Err(Unauthentic::Killed(*signal));
            }
        }
        ProcessEnd::Exited { code } => {
            if outcome.result.is_none() {
                return Err(Unauthentic::Exited(*code));
            }
        }
    }
    match &outcome.result {
        Some(r) if r.is_error => Err(Unauthentic::IsError {
            subtype: r.subtype.clone(),
            first_line: r
                .text
                .as_deref()
                .unwrap_or("no message")
                .lines()
                .next()
                .unwrap_or("")
                .to_string(),
        }),
        Some(r) if r.text.is_none() => Err(Unauthentic::NoResultText),
        Some(_) => Ok(()),
        None => Err(Unauthentic::NoResult),
    }
}

/// `16 MiB`, `64 KiB`, `1000 bytes`.
fn size(bytes: u64) -> String {
    const KIB: u64 = 1024;
    const MIB: u64 = 1024 * KIB;
    match bytes {
        b if b >= MIB && b % MIB == 0 => format!("{} MiB", b / MIB),
        b if b >= KIB && b % KIB == 0 => format!("{} KiB", b / KIB),
        b => format!("{b} bytes"),
    }
}

#[cfg(test)]
mod tests;
