//! Findings: the agents' wire schemas and the union of Enthusiast passes.
mod model;
mod union;

pub use model::*;
pub use union::{union_passes, PassFinding, UnionedFinding};
