//! Resolve: arguments + config + pinned target → one immutable `RunPlan`.
mod plan;

pub(crate) use plan::discover_root;
pub use plan::{resolve_run, AgentRef, Outputs, RunPlan};
