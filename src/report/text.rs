//! The terminal summary: status line, confirmed findings with edit instructions, coverage, cost.
//! Agent text goes through `escape::term_text` (no control sequences, no workflow commands).

use super::escape::term_text;
use super::Report;
use crate::store::RunStatus;
use std::fmt::Write;

pub fn render_text(r: &Report) -> String {
    let mut s = String::new();
    let head = match r.status {
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
    };
    let _ = writeln!(s, "{head}");
    if let Some(d) = &r.abort_detail {
        let _ = writeln!(s, "  {}", term_text(d, "  "));
    }
    let b = &r.by_severity;
    let _ = writeln!(
        s,
        "{} confirmed (critical {}, high {}, medium {}, low {}), {} debunked, {} unresolved",
        r.confirmed.len(),
        b.critical,
        b.high,
        b.medium,
        b.low,
        r.debunked.len(),
        r.unresolved.len()
    );
    for f in &r.confirmed {
        let mut place = match (&f.file, f.line) {
            (Some(p), Some(l)) => term_text(&format!("{p}:{l}"), ""),
            (Some(p), None) => term_text(p, ""),
            _ => "(target-wide)".into(),
        };
        if let Some(sec) = &f.section {
            place.push_str(&format!(" ({})", term_text(sec, "")));
        }
        let _ = writeln!(
            s,
            "  [{}] {place} {} — {}",
            f.severity.as_str().to_uppercase(),
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
    let _ = writeln!(
        s,
        "coverage: {} file(s) reviewed, {} skipped; cost ${:.4}, {} tokens",
        r.coverage.reviewed, r.coverage.skipped, r.cost.usd, r.cost.tokens
    );
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
        s.push_str(&crate::iterate::text_section(it));
    }
    let _ = writeln!(s, "run: {}", r.run_dir);
    s
}
