//! Dispatch: running agent CLIs as subprocesses (process groups, caps, timeouts, cancellation)
//! and parsing their event streams into an `AgentOutcome`.
mod claude;
mod model;
mod process;

pub use claude::{claude_args, parse_stream_json};
pub use model::*;
pub use process::{dispatch, resolve_binary};
