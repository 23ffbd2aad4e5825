//! Resolve: arguments + config + pinned target → one immutable `RunPlan`.
mod plan;

pub use plan::{resolve_run, AgentRef, Outputs, RunPlan};
