//! The terminal report a person acts on: status line, each confirmed finding's defect, the
//! Judge's resolution and the fix, coverage, cost; ANSI colour only when asked (a colour
//! terminal).
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

/// The files the review left out, by name and reason (at most 20, then how many more).
fn skipped_files(s: &mut String, r: &Report) {
    const SHOWN: usize = 20;
    let skipped: Vec<_> = r
        .coverage
        .files
        .iter()
        .filter(|f| f.status == super::CoverageStatus::Skipped)
        .filter_map(|f| Some((f, f.reason?)))
        .collect();
    for (f, reason) in skipped.iter().take(SHOWN) {
        let glob = f
            .glob
            .as_deref()
            .map_or(String::new(), |g| format!(" {}", term_text(g, "")));
        let _ = writeln!(
            s,
            "  skipped: {} ({}{glob})",
            term_text(&f.path, ""),
            reason.as_str()
        );
    }
    if skipped.len() > SHOWN {
        let _ = writeln!(s, "  … and {} more skipped", skipped.len() - SHOWN);
    }
}

/// ANSI styling of the terminal report: on for stdout on a colour terminal only (the caller
/// decides: `NO_COLOR`, pipes and files get none). Only arev's own words are styled; agent
/// text is escaped by `term_text` first.
#[derive(Debug, Clone, Copy)]
struct Style {
    color: bool,
}

impl Style {
    fn paint(self, code: &str, text: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }

    /// `[HIGH]`: red for critical and high, yellow for medium, cyan for low.
    fn severity(self, sev: crate::findings::Severity) -> String {
        let tag = format!("[{}]", sev.as_str().to_uppercase());
        let code = match sev {
            crate::findings::Severity::Critical => "1;31",
            crate::findings::Severity::High => "31",
            crate::findings::Severity::Medium => "33",
            crate::findings::Severity::Low => "36",
        };
        self.paint(code, &tag)
    }

    fn bold(self, text: &str) -> String {
        self.paint("1", text)
    }

    fn dim(self, text: &str) -> String {
        self.paint("2", text)
    }
}

/// Label column of a finding's detail lines (`defect:`, `judge:`, `fix:`).
const DETAIL_INDENT: &str = "            ";

/// One confirmed finding, for a person to act on: severity, place and category, then what
/// the defect is, how the Judge resolved it, the fix, and (mixed panels) who found it.
fn confirmed_block(s: &mut String, r: &Report, f: &ReportFinding, st: Style) {
    let carried = f.carried_over_from.as_deref().map_or(String::new(), |c| {
        format!(" (carried over from {})", term_text(c, ""))
    });
    let _ = writeln!(
        s,
        "{} {} · {}{carried}",
        st.severity(f.severity),
        st.bold(&place(f)),
        term_text(&f.category, "  ")
    );
    detail(s, st, "defect", &f.description);
    if let Some(res) = &f.resolution {
        detail(s, st, "judge", res);
    }
    if let Some(e) = &f.edit_instruction {
        detail(s, st, "fix", e);
    }
    if let Some(p) = &f.proof {
        detail(s, st, "proof", &super::proof::text_line(p));
    }
    see_lines(s, st, f);
    if r.mixed_panel() {
        let _ = writeln!(s, "{DETAIL_INDENT}{}", st.dim(&f.attribution()));
    }
}

/// One `see:` line per context citation (docs/contracts.md §22.2): `path:line — quote`, the
/// path and the quote escaped like all agent text.
fn see_lines(s: &mut String, st: Style, f: &ReportFinding) {
    for c in &f.context {
        detail(s, st, "see", &format!("{}:{} — {}", c.file, c.line, c.text));
    }
}

/// `  label:   text`, continuation lines under the text.
fn detail(s: &mut String, st: Style, label: &str, text: &str) {
    let head = format!("  {label}:");
    let pad = DETAIL_INDENT.len().saturating_sub(head.len());
    let _ = writeln!(
        s,
        "{}{:pad$}{}",
        st.dim(&head),
        "",
        term_text(text, DETAIL_INDENT)
    );
}

/// `cost: $0.0500, 750 tokens in 2 round(s) (enthusiast $0.0200 · adversary … · judge …)`.
fn cost_line(r: &Report) -> String {
    let c = &r.cost;
    let mut line = format!("cost: {}, {} tokens", c.usd_text(), c.tokens);
    if !r.rounds.is_empty() {
        line.push_str(&format!(" in {} round(s)", r.rounds.len()));
    }
    let roles: Vec<String> = ["enthusiast", "adversary", "judge", "fixer", "prover"]
        .iter()
        .filter_map(|role| {
            let l = c.by_role.get(*role)?;
            (l.dispatches > 0).then(|| match l.context_files {
                0 => format!("{role} {}", l.usd_text()),
                n => format!(
                    "{role} {}, {n} context file(s) ~{} tokens",
                    l.usd_text(),
                    l.context_tokens
                ),
            })
        })
        .collect();
    if !roles.is_empty() {
        line.push_str(&format!(" ({})", roles.join(" · ")));
    }
    if r.cached_from.is_some() {
        line.push_str(" — nothing spent now: the verdict was reused");
    }
    line
}

/// The terminal report without colour (files, pipes, `NO_COLOR`).
pub fn render_text(r: &Report) -> String {
    render_text_styled(r, false)
}

/// The terminal report; `color`: ANSI styles for a colour terminal.
pub fn render_text_styled(r: &Report, color: bool) -> String {
    let st = Style { color };
    let mut s = String::new();
    let head = head_line(r);
    let _ = writeln!(s, "{}", st.bold(&head));
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
    confirmed_findings(&mut s, r, st);
    other_findings(&mut s, r, st);
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
fn confirmed_findings(s: &mut String, r: &Report, st: Style) {
    match &r.baseline {
        None => {
            for f in &r.confirmed {
                s.push('\n');
                confirmed_block(s, r, f, st);
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
                let _ = writeln!(s, "\n{}", st.bold(&format!("{title} ({}):", list.len())));
                for f in list {
                    s.push('\n');
                    confirmed_block(s, r, f, st);
                }
            }
            let _ = writeln!(s, "\n{}", st.bold(&format!("Fixed ({}):", r.absent.len())));
            for f in &r.absent {
                let _ = writeln!(
                    s,
                    "{} {} · {} — {}",
                    st.severity(f.severity),
                    place(f),
                    term_text(&f.category, "  "),
                    term_text(&f.description, "  ")
                );
            }
        }
    }
}

/// The unresolved and suppressed findings.
fn other_findings(s: &mut String, r: &Report, st: Style) {
    // The Judge could not decide: what was claimed, to look at by hand.
    for f in &r.unresolved {
        let _ = writeln!(
            s,
            "\n{} {} · {}",
            st.paint("35", "[UNRESOLVED]"),
            st.bold(&place(f)),
            term_text(&f.category, "  ")
        );
        detail(s, st, "claim", &f.description);
        if let Some(res) = &f.resolution {
            detail(s, st, "judge", res);
        }
        see_lines(s, st, f);
    }
    s.push('\n');
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
        "coverage: {} file(s) reviewed, {} skipped",
        r.coverage.reviewed, r.coverage.skipped
    );
    skipped_files(s, r);
    let _ = writeln!(s, "{}", cost_line(r));
    if let Some(note) = r.cost.unpriced_note() {
        let _ = writeln!(s, "{}", term_text(&note, ""));
    }
    if let Some(line) = super::proof::text_footer(r) {
        let _ = writeln!(s, "{line}");
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::Severity;
    use crate::report::fixtures::{finding, shard, unpriced_cost};
    use crate::test_support::cite;

    /// A priced and an unpriced agent: the total of the known part and a `price unknown`
    /// note naming the model; all unpriced: `price unknown`, never `$0`.
    #[test]
    fn a_model_without_a_price_reads_price_unknown_never_zero_dollars() {
        let mut r = shard(1, 1, &["a.py"], RunStatus::Complete);
        r.cost = unpriced_cost(true);
        let text = render_text(&r);
        assert!(
            text.contains("cost: $0.0200 + price unknown, 450 tokens in 1 round(s) (enthusiast $0.0200 · adversary price unknown)\n"),
            "{text}"
        );
        assert!(
            text.contains("price unknown for local-coder (agent local, 150 tokens): the cost counts the priced tokens only"),
            "{text}"
        );
        r.cost = unpriced_cost(false);
        let text = render_text(&r);
        assert!(
            text.contains(
                "cost: price unknown, 150 tokens in 1 round(s) (adversary price unknown)\n"
            ),
            "{text}"
        );
        assert!(!text.contains("$0.0000"), "{text}");
        // Every token priced: no note.
        r.cost = shard(1, 1, &["a.py"], RunStatus::Complete).cost;
        let text = render_text(&r);
        assert!(text.contains("cost: $0.5000, 10 tokens"), "{text}");
        assert!(!text.contains("price unknown"), "{text}");
    }

    #[test]
    fn each_citation_is_a_see_line_under_its_finding_escaped() {
        let mut r = shard(1, 1, &["a.py"], RunStatus::Complete);
        r.confirmed[0].context = vec![
            cite("app.py", 3, "if len(buf) > 0:"),
            cite("evil.py", 1, "x = 1 \u{1b}[2J"),
        ];
        let mut u = finding("b.py", Severity::Low);
        u.context = vec![cite("tests/t.py", 4, "assert b() == 1")];
        r.unresolved.push(u);
        let text = render_text(&r);
        assert!(
            text.contains("  see:      app.py:3 — if len(buf) > 0:\n"),
            "{text}"
        );
        assert!(
            text.contains("  see:      tests/t.py:4 — assert b() == 1\n"),
            "{text}"
        );
        assert!(
            !text.contains('\u{1b}'),
            "control sequences are escaped: {text}"
        );
        // The see lines follow their finding's defect line.
        let defect = text.find("defect:").unwrap();
        assert!(text.find("see:      app.py:3").unwrap() > defect);
    }
}
