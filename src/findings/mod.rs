//! Findings: the agents' wire schemas and the union of Enthusiast passes.
pub mod suppress;
mod symbols;
mod union;

pub use crate::records::agent::*;
pub use suppress::LineAt;
pub(crate) use symbols::lines;
pub use symbols::SymbolIndex;
pub use union::{union_passes, PassFinding, UnionRules, UnionedFinding, SAME_DEFECT_LINES};
