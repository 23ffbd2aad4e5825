//! Findings: the agents' wire schemas and the union of Enthusiast passes.
mod fingerprint;
pub mod suppress;
mod symbols;
mod union;

pub use crate::records::agent::*;
pub use fingerprint::fingerprint;
pub(crate) use fingerprint::{fingerprint_with, FileLines, Texts};
pub use suppress::LineAt;
pub use symbols::SymbolIndex;
pub use union::{
    same_defect, union_passes, PassFinding, UnionRules, UnionedFinding, SAME_DEFECT_LINES,
};
