//! Union of Enthusiast passes: same-defect merging, highest severity kept, F1..Fn re-numbered.

use super::Finding;

/// A finding as produced by one pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PassFinding {
    pub pass: u32,
    pub finding: Finding,
}

/// A finding after the union, with the passes that found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnionedFinding {
    pub finding: Finding,
    pub passes: Vec<u32>,
}

pub fn union_passes(_findings: Vec<PassFinding>) -> Vec<UnionedFinding> {
    todo!()
}
