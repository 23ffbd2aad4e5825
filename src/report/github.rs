//! GitHub Actions workflow commands: one annotation per confirmed finding, ranked by severity.
//!
//! `::error file=src/lib.rs,line=2,title=arev high · error-handling::message`; critical/high →
//! `error`, medium → `warning`, low → `notice`; unresolved findings → `notice`. An aborted or
//! interrupted review is one file-less `::error` (no verdict). GitHub keeps at most 10
//! annotations of each level per step, so each level is capped at 10 and a plain log line
//! says how many were left out (they are all in the JSON/SARIF/Markdown reports).
//!
//! Escaping (workflow-command rules): in the message `%`→`%25`, `\r`→`%0D`, `\n`→`%0A`; in
//! property values additionally `:`→`%3A` and `,`→`%2C`.

use super::{Report, ReportFinding};
use crate::findings::Severity;
use crate::store::RunStatus;
use std::fmt::Write;

/// Annotations GitHub shows per level and step.
pub const PER_LEVEL_LIMIT: usize = 10;

/// Escape workflow-command data (the message).
pub fn escape_data(s: &str) -> String {
    let encoded = s
        .replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A");
    // Every other control character (ESC, BEL, OSC/CSI in C1) shown inert, never raw in a
    // CI log.
    crate::output::inert(&encoded).into_owned()
}

/// Escape a workflow-command property value (`file=`, `title=`).
pub fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

fn level(s: Severity) -> &'static str {
    match s {
        Severity::Critical | Severity::High => "error",
        Severity::Medium => "warning",
        Severity::Low => "notice",
    }
}

fn command(kind: &str, f: &ReportFinding, title: &str) -> String {
    let mut props = Vec::new();
    if let Some(file) = &f.file {
        props.push(format!("file={}", escape_property(file)));
        if let Some(l) = f.line.filter(|l| *l >= 1) {
            props.push(format!("line={l}"));
        }
    }
    props.push(format!("title={}", escape_property(title)));
    let mut msg = f.description.trim().to_string();
    if let Some(r) = f.resolution.as_deref().filter(|r| !r.trim().is_empty()) {
        msg.push_str("\nJudge: ");
        msg.push_str(r.trim());
    }
    if let Some(e) = f
        .edit_instruction
        .as_deref()
        .filter(|e| !e.trim().is_empty())
    {
        msg.push_str("\nFix: ");
        msg.push_str(e.trim());
    }
    format!("::{kind} {}::{}", props.join(","), escape_data(&msg))
}

/// Render the report as workflow commands (one per line) plus a plain summary line.
pub fn render_github(r: &Report) -> String {
    let mut s = String::new();
    if !matches!(r.status, RunStatus::Complete | RunStatus::Empty) {
        let why = match (&r.abort_reason, &r.abort_detail) {
            (Some(a), Some(d)) => format!("review aborted ({a}): {d}. No verdict."),
            (Some(a), None) => format!("review aborted ({a}). No verdict."),
            _ => format!("review {}. No verdict.", r.status.as_str()),
        };
        let _ = writeln!(
            s,
            "::error title={}::{}",
            escape_property("arev: no verdict"),
            escape_data(&why)
        );
    }
    for d in &r.degraded {
        let _ = writeln!(
            s,
            "::warning title={}::{}",
            escape_property("arev: degraded"),
            escape_data(&d.warning())
        );
    }
    let mut shown = [0usize; 3];
    let mut dropped = 0usize;
    let mut emit = |s: &mut String, kind: &'static str, line: String| {
        let slot = match kind {
            "error" => 0,
            "warning" => 1,
            _ => 2,
        };
        if shown[slot] < PER_LEVEL_LIMIT {
            shown[slot] += 1;
            let _ = writeln!(s, "{line}");
        } else {
            dropped += 1;
        }
    };
    // `confirmed` is sorted by severity, highest first. With `--only-new`, only new and
    // updated findings are annotated; suppressed ones never are.
    for f in r.gating() {
        let kind = level(f.severity);
        let title = format!(
            "arev {} · {}{}",
            f.severity,
            f.category,
            super::proof::annotation_note(f)
        );
        emit(&mut s, kind, command(kind, f, &title));
    }
    for f in r.unresolved.iter().filter(|f| r.gates(f)) {
        let title = format!("arev unresolved · {}", f.category);
        emit(&mut s, "notice", command("notice", f, &title));
    }
    let b = &r.by_severity;
    let _ = writeln!(
        s,
        "arev: {} confirmed (critical {}, high {}, medium {}, low {}), {} debunked, {} unresolved; {} file(s) reviewed, {} skipped; status {}",
        r.confirmed.len(),
        b.critical,
        b.high,
        b.medium,
        b.low,
        r.debunked.len(),
        r.unresolved.len(),
        r.coverage.reviewed,
        r.coverage.skipped,
        r.status.as_str()
    );
    if let Some(b) = &r.baseline {
        let _ = writeln!(
            s,
            "arev: against run {}: {} new, {} updated, {} still open, {} fixed{}",
            b.run_id,
            b.new,
            b.updated,
            b.unchanged,
            b.absent,
            if b.only_new {
                " (only new and updated findings are annotated and counted)"
            } else {
                ""
            }
        );
    }
    if let Some(line) = super::proof::phase_line(r) {
        let _ = writeln!(s, "arev: {}", escape_data(&line));
    }
    if !r.suppressed.is_empty() {
        let _ = writeln!(
            s,
            "arev: {} finding(s) suppressed (not annotated); see the report's `suppressed`",
            r.suppressed.len()
        );
    }
    if dropped > 0 {
        let _ = writeln!(
            s,
            "arev: {dropped} more finding(s) not annotated (GitHub shows {PER_LEVEL_LIMIT} annotations per level per step); see the JSON, SARIF or Markdown report"
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_data_and_properties() {
        assert_eq!(escape_data("50% a\r\nb: c, d"), "50%25 a%0D%0Ab: c, d");
        assert_eq!(
            escape_property("a:b,c%\nd"),
            "a%3Ab%2Cc%25%0Ad",
            "properties also escape : and ,"
        );
        // `%` is escaped first, so an input that looks escaped is not decoded by GitHub.
        assert_eq!(escape_data("%0A"), "%250A");
    }

    #[test]
    fn agent_text_cannot_start_a_workflow_command() {
        use crate::report::fixtures::{finding, shard};
        let mut r = shard(1, 1, &[], RunStatus::Complete);
        let mut f = finding("a.rs", Severity::High);
        f.category = "x::y,z".into();
        f.description = "d\n::add-mask::secret\r\n::stop-commands::t".into();
        f.edit_instruction = Some("%0A::error::forged".into());
        r.confirmed = vec![f];
        let out = render_github(&r);
        let commands: Vec<&str> = out.lines().filter(|l| l.starts_with("::")).collect();
        assert_eq!(commands.len(), 1, "{out}");
        assert!(
            commands[0].starts_with("::error file=a.rs,line=2,title=arev high · x%3A%3Ay%2Cz::")
        );
        assert!(commands[0].contains("d%0A::add-mask::secret%0D%0A::stop-commands::t"));
        assert!(commands[0].contains("%250A::error::forged"));
    }

    #[test]
    fn at_most_ten_annotations_per_level_ranked_by_severity() {
        use crate::report::fixtures::{finding, shard};
        let mut r = shard(1, 1, &[], RunStatus::Complete);
        r.confirmed = (0..12)
            .map(|i| finding(&format!("h{i:02}.rs"), Severity::High))
            .chain((0..3).map(|i| finding(&format!("m{i}.rs"), Severity::Medium)))
            .collect();
        let out = render_github(&r);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines.iter().filter(|l| l.starts_with("::error ")).count(),
            10
        );
        assert_eq!(
            lines.iter().filter(|l| l.starts_with("::warning ")).count(),
            3
        );
        assert!(lines[0].starts_with("::error file=h00.rs,line=2,title=arev high · logic::d"));
        assert!(
            lines
                .last()
                .unwrap()
                .starts_with("arev: 2 more finding(s) not annotated"),
            "{out}"
        );
    }
}
