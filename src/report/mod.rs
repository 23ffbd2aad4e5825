//! Reports (docs/architecture.md §12): the report.json wire type, built from the rounds,
//! and its renderings.
mod assemble;
mod baseline;
mod build;
mod carry;
mod escape;
mod github;
mod iterate;
mod markdown;
mod merge;
mod proof;
mod rendered;
mod sarif;
mod text;

pub use crate::findings::fingerprint;
pub use crate::records::finding::*;
#[cfg(test)]
pub(crate) use crate::records::fixtures;
pub use crate::records::report::*;
pub use crate::records::round::DegradedPass;
pub use crate::records::ReportSummary;
pub use assemble::head_commit;
pub use baseline::compare_with_baseline;
pub use build::{build_report, BuildInput};
pub use carry::{carried_findings, merge_carried, Carried, CarryInput};
pub use escape::{
    md_code, md_line_link, md_line_link_at, md_text, term_text, url_path, MdContext, REPORT_MARKER,
};
pub use github::{escape_data, escape_property, render_github};
pub use markdown::{render_markdown, render_markdown_at};
pub use merge::{merge_reports, MergeError, MergeInput};
pub use rendered::rendered;
pub use sarif::{render_sarif, sarif_level, SARIF_SCHEMA_URI};
pub use text::{render_text, render_text_styled};
