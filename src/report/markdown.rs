//! report.md: summary line, confirmed table, debunked (collapsed), coverage and cost.

use super::{Report, ReportFinding};
use std::fmt::Write;

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

fn place(f: &ReportFinding) -> String {
    match (&f.file, f.line) {
        (Some(p), Some(l)) => format!("`{p}:{l}`"),
        (Some(p), None) => format!("`{p}`"),
        _ => "—".into(),
    }
}

pub fn render_markdown(r: &Report) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "## arev review — `{}`\n", r.target.display);
    let status = match (&r.stop_reason, &r.abort_reason) {
        (Some(sr), _) => format!("complete, stop reason `{}`", sr.as_str()),
        (None, Some(a)) => format!("**aborted** (`{a}`): no verdict"),
        _ => r.status.as_str().to_string(),
    };
    let b = &r.by_severity;
    let _ = writeln!(
        s,
        "**{} confirmed** (critical {}, high {}, medium {}, low {}) · {} debunked · {} unresolved · {} round(s) · {status}\n",
        r.confirmed.len(), b.critical, b.high, b.medium, b.low, r.debunked.len(), r.unresolved.len(), r.rounds.len()
    );
    if let Some(d) = &r.abort_detail {
        let _ = writeln!(s, "> {}\n", cell(d));
    }
    if let Some(it) = &r.iterate {
        s.push_str(&crate::iterate::markdown_section(it));
    }
    if !r.confirmed.is_empty() {
        let _ = writeln!(
            s,
            "| Severity | Where | Category | Finding | Fix |\n|---|---|---|---|---|"
        );
        for f in &r.confirmed {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} |",
                f.severity,
                place(f),
                cell(&f.category),
                cell(f.resolution.as_deref().unwrap_or(&f.description)),
                cell(f.edit_instruction.as_deref().unwrap_or("—"))
            );
        }
        s.push('\n');
    }
    if !r.unresolved.is_empty() {
        let _ = writeln!(s, "### Unresolved\n");
        for f in &r.unresolved {
            let _ = writeln!(
                s,
                "- {} {} — {}",
                place(f),
                cell(&f.category),
                cell(&f.description)
            );
        }
        s.push('\n');
    }
    if !r.debunked.is_empty() {
        let _ = writeln!(
            s,
            "<details><summary>{} debunked</summary>\n",
            r.debunked.len()
        );
        for f in &r.debunked {
            let cites = if f.cites.is_empty() {
                String::new()
            } else {
                format!(" (cites {})", f.cites.join(", "))
            };
            let _ = writeln!(
                s,
                "- ~~{} {}~~ — {}{cites}",
                place(f),
                cell(&f.description),
                cell(f.resolution.as_deref().unwrap_or(""))
            );
        }
        let _ = writeln!(s, "\n</details>\n");
    }
    let _ =
        writeln!(
        s,
        "Coverage: {} file(s) reviewed, {} skipped. Cost: ${:.4}, {} tokens. Target sha256 `{}`{}.",
        r.coverage.reviewed,
        r.coverage.skipped,
        r.cost.usd,
        r.cost.tokens,
        &r.target.sha256[..r.target.sha256.len().min(12)],
        if r.target.drift { " (**changed during the review**)" } else { "" }
    );
    let skipped: Vec<String> = r
        .coverage
        .files
        .iter()
        .filter_map(|f| {
            f.reason
                .map(|why| format!("`{}` ({})", f.path, why.as_str()))
        })
        .collect();
    if !skipped.is_empty() {
        let _ = writeln!(s, "\nSkipped: {}.", skipped.join(", "));
    }
    s
}
