//! Reports (SPEC §8): the report.json wire type, built from the rounds, and its renderings.
mod build;
mod markdown;
mod model;
mod text;

pub use build::{build_report, fingerprint, BuildInput};
pub use markdown::render_markdown;
pub use model::*;
pub use text::render_text;
