//! Why a dispatch failed, read from its event stream (docs/contracts.md §19.2): a transient fault
//! (overloaded, rate limited, a server error, a dropped connection) is retried with backoff,
//! a permanent one (authentication, permission, billing, an invalid request, an unknown
//! model, a refusal) aborts at once naming its cause and fix, and an answer cut at the
//! output cap is recovered or re-dispatched. Also the live watch that stops an agent the
//! moment its CLI starts retrying a permanent error (Claude Code retries even a 401 for
//! minutes, Codex five times over ~7 s).
//!
//! This file holds what the backends share: an API error as the CLIs show it, and the fault
//! of each cause. What each CLI shows is read by its own decoder (docs/architecture.md
//! "Faults"): Claude Code `api_retry` and `result` events with the HTTP status and error
//! type (`backends::claude`); Codex `error` / `turn.failed` events whose `message` is the
//! only record (`backends::codex`); Gemini CLI a `result` event whose `error.message` wraps
//! the API's JSON error, `error` events for a blocked answer, and its exit code
//! (`backends::gemini`).

use crate::records::{Fault, FaultClass};
use serde_json::Value;

/// What the API said, as a CLI's stream shows it.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(super) struct ApiError {
    pub(super) status: Option<u16>,
    /// The error type (Claude's `api_error_type`, normalised for the other CLIs to the same
    /// names: `authentication_error`, `permission_error`, `not_found_error`, `billing`,
    /// `invalid_request_error`, `rate_limit_error`, `overloaded_error`, `refusal`).
    pub(super) kind: String,
    pub(super) text: String,
    pub(super) retry_delay_ms: Option<u64>,
}

/// The fault recorded for an answer recovered from its continuation.
pub fn truncated_recovered() -> Fault {
    Fault {
        class: FaultClass::Truncated,
        cause: "output_truncated".into(),
        status: None,
        retry_after_ms: None,
        message: "the answer was cut at the output token limit; the CLI continued it and \
                  arev joined the pieces"
            .into(),
    }
}

/// The fault of an answer that is a JSON object cut short (its text ends inside the
/// object): what an answer cut at the output token limit looks like when the CLI does not
/// say so (Gemini CLI 0.61.0 reports `MAX_TOKENS` as a success). `None` for any other text.
pub fn cut_answer(answer: &str) -> Option<Fault> {
    let start = answer.find('{')?;
    match serde_json::from_str::<Value>(&answer[start..]) {
        Err(e) if e.is_eof() => Some(Fault {
            message: "the answer was cut at the output token limit (it ends inside its JSON \
                      object)"
                .into(),
            ..truncated()
        }),
        _ => None,
    }
}

pub(super) fn permanent(cause: &str, status: Option<u16>, message: String) -> Fault {
    Fault {
        class: FaultClass::Permanent,
        cause: cause.into(),
        status,
        retry_after_ms: None,
        message,
    }
}

pub(super) fn transient(cause: &str, e: &ApiError, what: &str) -> Fault {
    Fault {
        class: FaultClass::Transient,
        cause: cause.into(),
        status: e.status,
        retry_after_ms: e.retry_delay_ms,
        message: match e.status {
            Some(s) => format!("{what} (HTTP {s})"),
            None => what.to_string(),
        },
    }
}

/// The fault of a refusal (a stop reason, a safety block) with the model's or CLI's `text`.
pub(super) fn refusal(text: &str) -> Fault {
    permanent(
        "refusal",
        None,
        format!(
            "the model refused to answer ({}): set the agent's `fallback_model` to another \
             model, or check the target for content the model will not review",
            if text.is_empty() { "no text" } else { text }
        ),
    )
}

/// The fault of a dispatch its CLI stopped at its share of the run's budget.
pub(super) fn budget_share() -> Fault {
    Fault {
        class: FaultClass::Budget,
        cause: "budget_share".into(),
        status: None,
        retry_after_ms: None,
        message: "the CLI stopped at this dispatch's share of the run's budget \
                  (--budget-usd); raise the budget to review this target"
            .into(),
    }
}

pub(super) fn truncated() -> Fault {
    Fault {
        class: FaultClass::Truncated,
        cause: "output_truncated".into(),
        status: None,
        retry_after_ms: None,
        message: "the answer was cut at the output token limit".into(),
    }
}

/// The fault of one API error (the error type when it settles the cause, then the HTTP
/// status, then the type alone); `key` is the credentials variable to check (none: the
/// agent's credentials).
pub(super) fn from_api(e: &ApiError, model: &str, key: &str) -> Fault {
    let kind = e.kind.as_str();
    let text = e.text.to_ascii_lowercase();
    let billing = kind.contains("billing")
        || text.contains("credit balance")
        || text.contains("spend limit")
        || text.contains("usage limit")
        || text.contains("billing details");
    let auth = matches!(kind, "authentication_failed" | "authentication_error");
    let model = if model.is_empty() { "the model" } else { model };
    match (e.status, kind) {
        _ if billing || e.status == Some(402) => permanent(
            "billing",
            e.status,
            "billing: the API account has no credit or reached its spend limit: check its \
             billing settings"
                .into(),
        ),
        _ if auth || e.status == Some(401) => permanent(
            "authentication",
            e.status.or(Some(401)),
            if key.is_empty() {
                "authentication failed: check the agent's credentials".into()
            } else {
                format!("authentication failed: check {key} (or the agent's credentials)")
            },
        ),
        (_, "refusal") => refusal(e.text.trim()),
        (Some(403), _) | (None, "permission_error") => permanent(
            "permission",
            e.status,
            format!(
                "permission denied: the API key may not use {model}: check its permissions or \
                 the agent's `models`"
            ),
        ),
        (Some(404), _) | (_, "not_found_error") => permanent(
            "unknown_model",
            e.status,
            format!("unknown model `{model}`: check the agent's `models` in arev.toml"),
        ),
        (Some(400 | 413 | 422), _) | (None, "invalid_request_error" | "invalid_request") => {
            let detail = e.text.trim();
            permanent(
                "invalid_request",
                e.status,
                format!(
                    "invalid request rejected by the API{}: check the agent's `extra_args` and \
                     `models`",
                    if detail.is_empty() {
                        String::new()
                    } else {
                        format!(" ({detail})")
                    }
                ),
            )
        }
        (Some(429), _) | (None, "rate_limit_error" | "rate_limit") => {
            transient("rate_limited", e, "rate limited by the API")
        }
        (Some(529), _) | (None, "overloaded_error" | "overloaded") => {
            transient("overloaded", e, "the API is overloaded")
        }
        (Some(s), _) if s >= 500 => transient("server_error", e, "the API failed"),
        (Some(408), _) => transient("connection", e, "the API request timed out"),
        _ => transient("connection", e, "the API connection failed"),
    }
}

#[cfg(test)]
mod tests;
