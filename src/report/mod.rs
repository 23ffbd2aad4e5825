//! Reports (docs/architecture.md §12): the report.json wire type, built from the rounds,
//! and its renderings.
mod assemble;
mod baseline;
mod build;
mod carry;
mod escape;
mod fingerprint;
#[cfg(test)]
pub(crate) mod fixtures;
mod github;
mod markdown;
mod merge;
mod model;
mod sarif;
mod summary;
mod text;

pub use baseline::compare_with_baseline;
pub use build::{build_report, BuildInput};
pub use carry::{carried_findings, merge_carried, Carried, CarryInput};
pub use escape::{md_code, md_text, term_text, MdContext, REPORT_MARKER};
pub use fingerprint::fingerprint;
pub(crate) use fingerprint::{fingerprint_with, FileLines, Texts};
pub use github::{escape_data, escape_property, render_github};
pub use markdown::render_markdown;
pub use merge::{merge_reports, MergeError, MergeInput};
pub use model::*;
pub use sarif::{render_sarif, sarif_level, SARIF_SCHEMA_URI};
pub use summary::ReportSummary;
pub use text::{render_text, render_text_styled};
