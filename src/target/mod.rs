//! Target resolution and pinning (SPEC §3): diff, file or manifest → an immutable pinned target.
mod brief;
mod diff;
mod error;
mod manifest;
mod model;
mod resolve;
mod scan;

pub use error::TargetError;
pub use model::*;
pub use resolve::{diff_sha, repin, resolve, LIGHTWEIGHT_DIFF_LINES};

#[cfg(test)]
mod tests;
