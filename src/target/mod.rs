//! Target resolution and pinning (SPEC §3): diff, file or manifest → an immutable pinned target.
mod brief;
mod error;
mod model;
mod resolve;

pub use error::TargetError;
pub use model::*;
pub use resolve::{repin, resolve};
