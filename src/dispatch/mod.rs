//! Dispatch: running agent CLIs as subprocesses (process groups, caps, timeouts, cancellation)
//! and parsing their event streams into an `AgentOutcome`.
mod backend;
mod claude;
mod codex;
mod events;
mod fault;
mod gemini;
mod home;
mod model;
mod process;
mod shell;
mod usage;
mod withhold;

pub use crate::records::outcome::*;
pub use backend::{interpret_exit, invocation, parse_events, tool_permitted, Invocation};
pub use claude::{claude_access, claude_args, parse_stream_json};
pub use codex::{codex_args, parse_codex_jsonl};
pub use fault::{classify, continued_answer, cut_answer, permanent_retry, truncated_recovered};
pub use gemini::{gemini_access, gemini_args, parse_gemini_stream};
pub use model::*;
pub use process::{dispatch, dispatch_metered, resolve_binary, SpendMeter};
pub use shell::shell_access;
pub use usage::{cost_usd, list_price_usd, price_of, UsageTally};
pub use withhold::withhold_after;
