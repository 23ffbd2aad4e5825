//! Resolve: arguments + config + pinned target → one immutable `RunPlan`; its agents → a `Panel`.
mod baseline;
mod memory;
mod outputs;
mod panel;
mod plan;
pub mod suppressions;

pub use memory::{cache_dir, MemoryPlan};
pub use panel::{agent_spec, Panel};
pub(crate) use plan::discover_root;
pub use plan::{resolve_run, AgentRef, Outputs, RunPlan};
