//! The terminal summary: status line, confirmed findings with edit instructions, coverage, cost.
//! Agent text goes through `escape::term_text` (no control sequences, no workflow commands).

use super::escape::term_text;
use super::{Report, ReportFinding};
use crate::store::RunStatus;
use std::fmt::Write;

/// `file:line`, `file` or `(target-wide)`, then a spec finding's `(section)`, escaped.
fn place(f: &ReportFinding) -> String {
    let mut place = match (&f.file, f.line) {
        (Some(p), Some(l)) => term_text(&format!("{p}:{l}"), ""),
        (Some(p), None) => term_text(p, ""),
        _ => "(target-wide)".into(),
    };
    if let Some(sec) = &f.section {
        place.push_str(&format!(" ({})", term_text(sec, "")));
    }
    place
}

/// One confirmed finding: severity, place, category, resolution, its fix and attribution.
fn confirmed_line(s: &mut String, r: &Report, f: &ReportFinding) {
    let carried = f.carried_over_from.as_deref().map_or(String::new(), |c| {
        format!(" (carried over from {})", term_text(c, ""))
    });
    let _ = writeln!(
        s,
        "  [{}] {} {} — {}{carried}",
        f.severity.as_str().to_uppercase(),
        place(f),
        term_text(&f.category, "    "),
        term_text(f.resolution.as_deref().unwrap_or(&f.description), "    ")
    );
    if let Some(e) = &f.edit_instruction {
        let _ = writeln!(s, "      fix: {}", term_text(e, "           "));
    }
    if r.mixed_panel() {
        let _ = writeln!(s, "      {}", f.attribution());
    }
}

pub fn render_text(r: &Report) -> String {
    let mut s = String::new();
    let head = head_line(r);
    let _ = writeln!(s, "{head}");
    if let Some(d) = &r.abort_detail {
        let _ = writeln!(s, "  {}", term_text(d, "  "));
    }
    let b = &r.by_severity;
    let suppressed = if r.suppressed.is_empty() {
        String::new()
    } else {
        format!(", {} suppressed", r.suppressed.len())
    };
    let _ = writeln!(
        s,
        "{} confirmed (critical {}, high {}, medium {}, low {}), {} debunked, {} unresolved{suppressed}",
        r.confirmed.len(),
        b.critical,
        b.high,
        b.medium,
        b.low,
        r.debunked.len(),
        r.unresolved.len()
    );
    confirmed_findings(&mut s, r);
    other_findings(&mut s, r);
    footer(&mut s, r);
    let _ = writeln!(s, "run: {}", r.run_dir);
    s
}

/// The first line: how the review ended, on what.
fn head_line(r: &Report) -> String {
    match r.status {
        RunStatus::Complete => format!(
            "arev: review complete — {} ({} round(s), stop: {})",
            r.target.display,
            r.rounds.len(),
            r.stop_reason
                .map(|x| x.as_str())
                .or_else(|| r.iterate.as_ref()?.stop_reason.map(|x| x.as_str()))
                .unwrap_or("-")
        ),
        RunStatus::Aborted => format!(
            "arev: review ABORTED — {} ({}): no verdict",
            r.target.display,
            r.abort_reason
                .map_or_else(|| "unknown".into(), |a| a.to_string())
        ),
        RunStatus::Interrupted => format!("arev: review interrupted — {}", r.target.display),
        RunStatus::Empty if r.coverage.skipped > 0 => format!(
            "arev: nothing to review — every file of {} was skipped",
            r.target.display
        ),
        RunStatus::Empty => format!("arev: nothing to review — {} is empty", r.target.display),
        RunStatus::Running => format!("arev: review still running — {}", r.target.display),
    }
}

/// The confirmed findings, grouped against the baseline when there is one.
fn confirmed_findings(s: &mut String, r: &Report) {
    match &r.baseline {
        None => {
            for f in &r.confirmed {
                confirmed_line(s, r, f);
            }
        }
        Some(b) => {
            // Grouped against the baseline: New (and updated) / Still open / Fixed.
            let _ = writeln!(
                s,
                "compared with run {}{}:",
                term_text(&b.run_id, ""),
                if b.only_new {
                    " (only new findings count)"
                } else {
                    ""
                }
            );
            let (new, open): (Vec<_>, Vec<_>) = r
                .confirmed
                .iter()
                .partition(|f| f.baseline_state.is_some_and(|x| x.is_new()));
            for (title, list) in [("New", new), ("Still open", open)] {
                let _ = writeln!(s, "{title} ({}):", list.len());
                for f in list {
                    confirmed_line(s, r, f);
                }
            }
            let _ = writeln!(s, "Fixed ({}):", r.absent.len());
            for f in &r.absent {
                let _ = writeln!(
                    s,
                    "  [{}] {} {} — {}",
                    f.severity.as_str().to_uppercase(),
                    place(f),
                    term_text(&f.category, "    "),
                    term_text(&f.description, "    ")
                );
            }
        }
    }
}

/// The unresolved and suppressed findings.
fn other_findings(s: &mut String, r: &Report) {
    for f in &r.unresolved {
        let _ = writeln!(
            s,
            "  [UNRESOLVED] {}:{} {} — {}",
            term_text(f.file.as_deref().unwrap_or("-"), ""),
            f.line.map_or("-".into(), |l| l.to_string()),
            term_text(&f.category, "    "),
            term_text(&f.description, "    ")
        );
    }
    if !r.suppressed.is_empty() {
        let _ = writeln!(s, "suppressed ({}):", r.suppressed.len());
        for f in &r.suppressed {
            let why = f.suppression.as_ref().map_or(String::new(), |x| {
                format!(
                    " — {} ({})",
                    term_text(&x.justification, "    "),
                    term_text(&x.source, "")
                )
            });
            let _ = writeln!(s, "  {} {}{why}", place(f), term_text(&f.category, "    "));
        }
    }
}

/// Coverage and cost, the incremental and cached-verdict notes, warnings, the iterate
/// section.
fn footer(s: &mut String, r: &Report) {
    let _ = writeln!(
        s,
        "coverage: {} file(s) reviewed, {} skipped; cost ${:.4}, {} tokens",
        r.coverage.reviewed, r.coverage.skipped, r.cost.usd, r.cost.tokens
    );
    if let Some(i) = &r.incremental {
        let _ = writeln!(
            s,
            "incremental: {} file(s) reviewed again, {} carried over from run {} ({} finding(s))",
            i.reviewed.len(),
            i.carried_over,
            term_text(&i.baseline_run_id, ""),
            i.findings_carried_over
        );
    }
    if let Some(c) = &r.cached_from {
        let _ = writeln!(
            s,
            "verdict reused from run {} (verdict cache; nothing was dispatched)",
            term_text(c, "")
        );
    }
    if r.target.drift {
        let _ = writeln!(
            s,
            "warning: the target changed during the review (sha256 drift)"
        );
    }
    for w in &r.warnings {
        let _ = writeln!(s, "warning: {}", term_text(w, "  "));
    }
    if let Some(it) = &r.iterate {
        s.push_str(&super::iterate::text_section(it));
    }
}
