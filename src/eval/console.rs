//! What `arev eval` prints (pure): the `mine` listing, `run`'s progress lines on stderr, how
//! a run ends (its closing warning and exit code), and a report or comparison in the chosen
//! `--format`.

use super::mine::Mined;
use super::model::{CaseResult, CaseStatus, Comparison, EvalReport};
use super::render::{render_compare_markdown, render_compare_text, render_markdown, render_text};
use super::run::{Evaluation, Event};
use crate::cli::EvalFormat;
use crate::exit_codes;
use std::path::Path;

/// `arev eval mine`'s stdout: a line per commit whose subject matched (the case and its
/// expected locations, or why it was skipped), then the count.
pub fn mined_listing(mined: &Mined, out: &Path) -> String {
    let mut text = String::new();
    for c in &mined.considered {
        let short = &c.commit[..c.commit.len().min(12)];
        match &c.result {
            Ok(case) => {
                let locs: Vec<String> = case
                    .expected
                    .iter()
                    .map(|e| format!("{}:{}-{}", e.file, e.start, e.end))
                    .collect();
                text.push_str(&format!(
                    "case {}  {}  — {}\n",
                    case.id,
                    crate::output::inert_line(&locs.join(", ")),
                    crate::output::inert_line(&c.subject)
                ));
            }
            Err(skip) => {
                text.push_str(&format!(
                    "skip {short}  {}  — {}\n",
                    crate::output::inert_line(&skip.to_string()),
                    crate::output::inert_line(&c.subject)
                ));
            }
        }
    }
    let n = mined.cases().count();
    text.push_str(&format!(
        "mined {n} case(s) from {} commit(s) whose subject matched, of {} walked → {}\n",
        mined.considered.len(),
        mined.walked,
        out.display()
    ));
    text
}

/// `arev eval run`'s first progress line.
pub fn start_line(total: usize, jobs: usize, out_dir: &Path) -> String {
    format!(
        "eval: {total} case(s), up to {jobs} at once → {}",
        out_dir.display()
    )
}

/// The progress line of one case event (None: nothing to say).
pub fn progress_line(event: Event, id: &str, r: Option<&CaseResult>) -> Option<String> {
    match (event, r) {
        (Event::Started, _) => Some(format!("eval: {id}: reviewing")),
        (Event::Resumed, Some(r)) => Some(format!(
            "eval: {id}: {} (kept from an earlier run)",
            r.status.as_str()
        )),
        (Event::Finished, Some(r)) => Some(format!(
            "eval: {id}: {} — {} unmatched, {}, {:.1}s{}",
            r.status.as_str(),
            r.unmatched,
            crate::records::usd_or_unknown(
                r.cost_usd,
                r.tokens,
                r.unpriced_tokens,
                crate::records::usd4
            ),
            r.wall_ms as f64 / 1000.0,
            r.detail
                .as_deref()
                .filter(|_| !r.status.scored() || r.status == CaseStatus::Aborted)
                .map(|d| format!(" ({d})"))
                .unwrap_or_default()
        )),
        _ => None,
    }
}

/// How an evaluation ends: its exit code, and the warning to print (None when it ran every
/// case and reviewed them all).
pub fn ending(ev: &Evaluation, out_dir: &Path) -> (i32, Option<String>) {
    if ev.interrupted {
        return (
            exit_codes::INTERRUPTED,
            Some(format!(
                "interrupted: {} case(s) not run; the finished ones are kept in {} — run again to resume",
                ev.report.not_run.len(),
                out_dir.display()
            )),
        );
    }
    if ev.report.totals.failed > 0 {
        return (
            exit_codes::ABORTED,
            Some(format!(
                "{} case(s) could not be reviewed (see {}/logs/)",
                ev.report.totals.failed,
                out_dir.display()
            )),
        );
    }
    (exit_codes::OK, None)
}

fn json(value: &impl serde::Serialize) -> String {
    crate::output::json_string(value, true).unwrap_or_default()
}

/// The evaluation report in `format`.
pub fn report_in(r: &EvalReport, format: EvalFormat) -> String {
    match format {
        EvalFormat::Text => render_text(r),
        EvalFormat::Markdown => render_markdown(r),
        EvalFormat::Json => json(r),
    }
}

/// The comparison in `format`.
pub fn comparison_in(c: &Comparison, format: EvalFormat) -> String {
    match format {
        EvalFormat::Text => render_compare_text(c),
        EvalFormat::Markdown => render_compare_markdown(c),
        EvalFormat::Json => json(c),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::eval::compare::{compare, tests::report};
    use crate::eval::mine::Considered;
    use crate::eval::model::{EvalCase, ExpectedLocation, ReviewOutcome};
    use crate::eval::score::tests::{loc, result};
    use crate::eval::select::Skip;

    pub(crate) fn mined() -> Mined {
        let case = EvalCase {
            schema_version: 1,
            id: "fix-0123456789ab".into(),
            revision: "f".repeat(40),
            targets: vec!["a.rs".into()],
            expected: vec![
                ExpectedLocation {
                    file: "a.rs".into(),
                    start: 3,
                    end: 4,
                },
                ExpectedLocation {
                    file: "b.rs".into(),
                    start: 9,
                    end: 9,
                },
            ],
            origin: Default::default(),
        };
        Mined {
            walked: 10,
            considered: vec![
                Considered {
                    commit: "0123456789abcdef".into(),
                    subject: "fix the parser".into(),
                    result: Ok(case),
                },
                Considered {
                    commit: "fedcba9876543210".into(),
                    subject: "Merge fix".into(),
                    result: Err(Skip::Merge),
                },
            ],
        }
    }

    #[test]
    fn the_mine_listing_has_a_line_per_commit_and_the_count() {
        assert_eq!(
            mined_listing(&mined(), Path::new("/out")),
            "case fix-0123456789ab  a.rs:3-4, b.rs:9-9  — fix the parser\n\
             skip fedcba987654  merge commit  — Merge fix\n\
             mined 1 case(s) from 2 commit(s) whose subject matched, of 10 walked → /out\n"
        );
    }

    #[test]
    fn progress_lines_say_what_each_case_did() {
        let r = CaseResult {
            status: CaseStatus::Aborted,
            unmatched: 2,
            cost_usd: 0.5,
            wall_ms: 1500,
            detail: Some("judge_malformed_json".into()),
            ..result(
                "c1",
                ReviewOutcome::Aborted,
                vec![loc("a.rs", 1, 1)],
                vec![],
            )
        };
        assert_eq!(
            progress_line(Event::Started, "c1", None).as_deref(),
            Some("eval: c1: reviewing")
        );
        assert_eq!(
            progress_line(Event::Finished, "c1", Some(&r)).as_deref(),
            Some("eval: c1: aborted — 2 unmatched, $0.5000, 1.5s (judge_malformed_json)")
        );
        assert_eq!(
            progress_line(Event::Resumed, "c1", Some(&r)).as_deref(),
            Some("eval: c1: aborted (kept from an earlier run)")
        );
        assert_eq!(progress_line(Event::Finished, "c1", None), None);
        assert_eq!(
            start_line(3, 2, Path::new("/o")),
            "eval: 3 case(s), up to 2 at once → /o"
        );
    }

    #[test]
    fn an_evaluation_ends_interrupted_failed_or_ok() {
        let mut ev = Evaluation {
            report: report("cfg", 3, vec![]),
            interrupted: false,
        };
        assert_eq!(ending(&ev, Path::new("/o")), (exit_codes::OK, None));
        ev.report.totals.failed = 2;
        let (code, w) = ending(&ev, Path::new("/o"));
        assert_eq!(code, exit_codes::ABORTED);
        assert_eq!(
            w.as_deref(),
            Some("2 case(s) could not be reviewed (see /o/logs/)")
        );
        ev.interrupted = true;
        ev.report.not_run = vec!["c2".into()];
        let (code, w) = ending(&ev, Path::new("/o"));
        assert_eq!(code, exit_codes::INTERRUPTED);
        assert!(w.unwrap().starts_with("interrupted: 1 case(s) not run; "));
    }

    #[test]
    fn formats_pick_the_renderer() {
        let r = report("cfg", 3, vec![]);
        assert_eq!(report_in(&r, EvalFormat::Text), render_text(&r));
        assert_eq!(report_in(&r, EvalFormat::Markdown), render_markdown(&r));
        let back: EvalReport = serde_json::from_str(&report_in(&r, EvalFormat::Json)).unwrap();
        assert_eq!(back.config_digest, "cfg");
        let c = compare(&r, "a", &r, "b", None).unwrap();
        assert_eq!(comparison_in(&c, EvalFormat::Text), render_compare_text(&c));
        assert_eq!(
            comparison_in(&c, EvalFormat::Markdown),
            render_compare_markdown(&c)
        );
        assert!(comparison_in(&c, EvalFormat::Json).starts_with('{'));
    }
}
