//! The renderings a run dir keeps beside report.json: report.md, and report.sarif when the
//! run asks for SARIF. Rendered here from the final report; `store::Recorder::finish`
//! writes them as handed.

use super::{render_markdown, render_sarif};
use crate::records::Report;
use crate::store::Rendered;

/// `report` with report.md's text and, with `sarif`, report.sarif's.
pub fn rendered(report: Report, sarif: bool) -> Rendered {
    Rendered {
        markdown: render_markdown(&report),
        sarif: sarif.then(|| render_sarif(&report)),
        report,
    }
}
