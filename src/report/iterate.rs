//! The iterate section of the text and Markdown reports: the outer stop reason, the branch,
//! and one line per iteration (confirmed, fixed, reverted, commit, verify).

use crate::records::{IterateReport, IterationReport};
use std::fmt::Write;

fn short(sha: &str) -> &str {
    &sha[..sha.len().min(10)]
}

fn iteration_line(it: &IterationReport) -> String {
    let mut s = format!(
        "iteration {}: {} confirmed ({} to fix), review {}",
        it.iteration,
        it.confirmed.len(),
        it.to_fix.len(),
        it.review_stop_reason.map_or_else(
            || it.review_status.as_str().to_string(),
            |r| r.as_str().to_string()
        )
    );
    if let Some(f) = &it.fix {
        let _ = write!(
            s,
            "; fixed [{}], skipped {}",
            f.applied.join(", "),
            f.skipped.len()
        );
        let outside = |far: bool| -> Vec<&str> {
            f.reverted
                .iter()
                .filter(|r| (r.action == crate::records::RevertAction::OutsideRulings) == far)
                .map(|r| r.path.as_str())
                .collect()
        };
        let (target, rulings) = (outside(false), outside(true));
        if !target.is_empty() {
            let _ = write!(s, ", reverted outside the target: {}", target.join(", "));
        }
        if !rulings.is_empty() {
            let _ = write!(
                s,
                ", reverted outside the rulings' lines: {}",
                rulings.join(", ")
            );
        }
        if !f.errors.is_empty() {
            let _ = write!(s, ", errors: {}", f.errors.join(", "));
        }
        match &f.commit {
            Some(c) => {
                let _ = write!(s, "; commit {}", short(c));
            }
            None => s.push_str("; no change"),
        }
    }
    if let Some(v) = &it.verify {
        let _ = write!(
            s,
            "; verify {} (exit {})",
            if v.ok { "passed" } else { "FAILED" },
            v.exit_code.map_or("-".into(), |c| c.to_string())
        );
    }
    let _ = write!(s, " → {}", it.decision);
    s
}

/// Lines for the terminal report.
pub fn text_section(r: &IterateReport) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "iterate: {} after {} iteration(s) (max {}), branch {} — never merged",
        r.stop_reason.map_or("no verdict", |x| x.as_str()),
        r.iterations.len(),
        r.max_iterations,
        r.branch
    );
    for it in &r.iterations {
        let _ = writeln!(s, "  {}", iteration_line(it));
    }
    let _ = writeln!(s, "  fixes: {}", r.diff_command);
    if let Some(p) = &r.patch {
        let _ = writeln!(s, "  patch: {p} (git apply {p})");
    }
    s
}

/// A Markdown section.
pub fn markdown_section(r: &IterateReport) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "### Iterate: `{}` after {} iteration(s)\n\nBranch `{}` (never merged) · `{}`\n",
        r.stop_reason.map_or("no verdict", |x| x.as_str()),
        r.iterations.len(),
        r.branch,
        r.diff_command
    );
    for it in &r.iterations {
        // The line holds agent text (the Fixer's ids and errors): made inert like the rest.
        let _ = writeln!(
            s,
            "- {}",
            super::md_text(&iteration_line(it), super::MdContext::Inline)
        );
    }
    s.push('\n');
    s
}
