//! Dispatch: running agent CLIs as subprocesses (process groups, caps, timeouts,
//! cancellation), their event streams folded as they arrive (`backends::Fold`) into an
//! `AgentOutcome`, and what one dispatch leaves in its run dir. What each CLI is — its argv,
//! environment and event format — is its module of `backends`.
mod error;
mod process;
mod withhold;

pub use crate::backends::{
    claude_access, cost_usd, cut_answer, gemini_access, list_price_usd, price_of, shell_access,
    tool_permitted, truncated_recovered, AgentSpec, BackendKind, DispatchRequest, EventFormat,
    Invocation, TierModels,
};
pub use crate::records::outcome::*;
pub use error::DispatchError;
pub use process::{dispatch, dispatch_metered, resolve_binary, SpendMeter};
pub use withhold::withhold_after;
