//! Renderings (pure) of an evaluation and of a comparison: a plain-text table for the
//! terminal and a Markdown table (also `<out>/eval.md`).

use super::model::{CaseResult, CompareCell, Comparison, EvalReport, EvalStatus, Totals};
use std::fmt::Write as _;

fn pct(x: f64) -> String {
    format!("{:.1} %", x * 100.0)
}

fn usd(x: f64) -> String {
    format!("${x:.4}")
}

/// A cost of which `unpriced` of `tokens` had no known price: `$0.0500 + price unknown`, or
/// `price unknown` when none was priced — never `$0`.
fn usd_of(x: f64, tokens: u64, unpriced: u64) -> String {
    crate::records::usd_or_unknown(x, tokens, unpriced, usd)
}

fn secs(ms: u64) -> String {
    format!("{:.1}s", ms as f64 / 1000.0)
}

fn opt(x: Option<f64>, f: fn(f64) -> String) -> String {
    x.map_or_else(|| "n/a".to_string(), f)
}

/// `3/5 = 60.0 % (95 % CI 23.1–88.2 %)`.
pub fn recall_line(t: &Totals) -> String {
    match (t.recall, t.recall_ci95) {
        (Some(r), Some([lo, hi])) => format!(
            "{}/{} = {} (95 % CI {:.1}–{:.1} %)",
            t.found,
            t.scored,
            pct(r),
            lo * 100.0,
            hi * 100.0
        ),
        _ => "n/a (no case scored)".to_string(),
    }
}

/// Cost per found defect, saying what the cost covers: fresh reviews only (the verdict
/// cache bypassed, or no hit), or cached verdicts at the cost of the reviews that produced
/// them; n/a when such a cost is unknown.
pub fn cost_per_found_line(t: &Totals, use_cache: bool) -> String {
    if t.cost_unknown > 0 {
        return format!(
            "n/a ({} case(s) served from the verdict cache, their original review's cost no longer known)",
            t.cost_unknown
        );
    }
    if t.unpriced_tokens > 0 {
        return format!(
            "n/a ({} tokens of a model without a price; set its `[prices]` entry)",
            t.unpriced_tokens
        );
    }
    let value = opt(t.cost_per_found, usd);
    if !use_cache {
        format!("{value} (every case reviewed afresh; the verdict cache was bypassed)")
    } else if t.cached == 0 {
        format!("{value} (every case reviewed afresh; no verdict came from the cache)")
    } else {
        format!(
            "{value} ({} case(s) served from the verdict cache, counted at the cost of the review that produced the verdict)",
            t.cached
        )
    }
}

/// `--prove`: `1/2 = 50.0 % of the reproducers that failed at the buggy revision pass at the
/// fix commit (proofs: 2 reproduced, 1 not_reproduced)`.
pub fn confirmed_by_fix_line(p: &super::model::ProofTotals) -> String {
    let rate = match p.confirmed_by_fix_rate {
        Some(r) => format!(
            "{}/{} = {}",
            p.confirmed_by_fix,
            p.failed_before_fix,
            pct(r)
        ),
        None => "n/a".into(),
    };
    format!(
        "{rate} of the reproducers that failed at the buggy revision pass at the fix commit (proofs: {})",
        p.counts.line()
    )
}

/// The aggregate measures as (name, value) rows.
fn measures(t: &Totals, use_cache: bool) -> Vec<(&'static str, String)> {
    let mut v = vec![
        ("recall", recall_line(t)),
        (
            "cases",
            format!(
                "{} — found {}, missed {}, aborted {}, failed {}, not run {}",
                t.cases, t.found, t.missed, t.aborted, t.failed, t.not_run
            ),
        ),
        (
            "unmatched per case",
            match t.unmatched_per_case {
                Some(u) => format!(
                    "{u:.2} ({} unmatched of {} confirmed, over {} completed reviews)",
                    t.unmatched,
                    t.confirmed,
                    t.found + t.missed
                ),
                None => "n/a".into(),
            },
        ),
        (
            "debunk rate",
            match t.debunk_rate {
                Some(r) => format!(
                    "{} ({} of {} judged)",
                    pct(r),
                    t.debunked,
                    t.debunked + t.confirmed
                ),
                None => "n/a".into(),
            },
        ),
        ("unresolved", t.unresolved.to_string()),
        (
            "cost",
            format!(
                "{}, {} tokens, {} of review time",
                usd_of(t.cost_usd, t.tokens, t.unpriced_tokens),
                t.tokens,
                secs(t.wall_ms)
            ),
        ),
        ("cost per found defect", cost_per_found_line(t, use_cache)),
    ];
    if let Some(p) = &t.proofs {
        v.push(("confirmed by fix", confirmed_by_fix_line(p)));
    }
    if t.scored < t.cases {
        v.push((
            "note",
            format!(
                "recall covers {} of {} cases (failed and not-run cases are not scored)",
                t.scored, t.cases
            ),
        ));
    }
    v
}

/// A commit subject or detail in a cell: its first line whole, up to a bound that only
/// stops a runaway line (a subject is rarely over 100 characters); cut with `…`.
fn first_line(s: &str) -> String {
    const MAX: usize = 200;
    let line = s.lines().next().unwrap_or("");
    if line.chars().count() <= MAX {
        return line.to_string();
    }
    let mut cut: String = line.chars().take(MAX - 1).collect();
    cut.push('…');
    cut
}

/// Agent-free, but commit messages are user text: keep a table cell one line and inert.
fn md_cell(s: &str) -> String {
    let one = first_line(s);
    one.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('`', "\\`")
        .replace('@', "@\u{200b}")
}

/// The fix column is the last of the text table: the subject is printed whole.
fn text_cell(s: &str) -> String {
    crate::output::inert_line(&first_line(s)).into_owned()
}

/// After the subject: kept from an earlier evaluation, served from the verdict cache.
fn marks(c: &CaseResult) -> String {
    let mut m = String::new();
    if c.resumed {
        m.push_str(" (kept)");
    }
    if let Some(from) = &c.cached_from {
        m.push_str(&format!(" (cached from {from})"));
    }
    m
}

fn case_detail(c: &CaseResult) -> Option<String> {
    match c.status {
        super::model::CaseStatus::Aborted | super::model::CaseStatus::Failed => c.detail.clone(),
        _ => None,
    }
}

/// The text table.
pub fn render_text(r: &EvalReport) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "arev eval — {} case(s), tolerance ±{} lines, config {}{}",
        r.totals.cases,
        r.tolerance,
        short(&r.config_digest),
        if r.status == EvalStatus::Interrupted {
            " — INTERRUPTED"
        } else {
            ""
        }
    );
    let _ = writeln!(
        s,
        "{:<24} {:<8} {:>9} {:>8} {:>10} {:>9} {:>8} {:>7}  fix",
        "case", "result", "unmatched", "debunked", "unresolved", "cost", "tokens", "time"
    );
    for c in &r.cases {
        let _ = writeln!(
            s,
            "{:<24} {:<8} {:>9} {:>8} {:>10} {:>9} {:>8} {:>7}  {}{}",
            c.case_id,
            c.status.as_str(),
            c.unmatched,
            c.debunked,
            c.unresolved,
            usd_of(c.cost_usd, c.tokens, c.unpriced_tokens),
            c.tokens,
            secs(c.wall_ms),
            text_cell(c.origin.subject()),
            marks(c)
        );
    }
    for id in &r.not_run {
        let _ = writeln!(s, "{id:<24} not run");
    }
    let _ = writeln!(s);
    for (k, v) in measures(&r.totals, r.use_cache) {
        let _ = writeln!(s, "{k:<22} {v}");
    }
    for c in &r.cases {
        if let Some(d) = case_detail(c) {
            let _ = writeln!(s, "{} {}: {}", c.case_id, c.status.as_str(), d);
        }
    }
    s
}

fn short(d: &str) -> &str {
    &d[..d.len().min(12)]
}

/// The Markdown report (`eval.md`, `--format markdown`).
pub fn render_markdown(r: &EvalReport) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "## arev eval: recall {}\n", recall_line(&r.totals));
    if r.status == EvalStatus::Interrupted {
        let _ = writeln!(
            s,
            "**Interrupted**: {} case(s) not run yet; `arev eval run` again resumes.\n",
            r.not_run.len()
        );
    }
    let _ = writeln!(
        s,
        "Tolerance ±{} lines · configuration `{}` · arev {}\n",
        r.tolerance,
        short(&r.config_digest),
        r.arev_version
    );
    let _ = writeln!(
        s,
        "| case | fix | result | unmatched | debunked | unresolved | cost | tokens | time |"
    );
    let _ = writeln!(s, "|---|---|---|---:|---:|---:|---:|---:|---:|");
    for c in &r.cases {
        let _ = writeln!(
            s,
            "| `{}` | {} | {}{} | {} | {} | {} | {} | {} | {} |",
            c.case_id,
            md_cell(c.origin.subject()),
            c.status.as_str(),
            md_cell(&marks(c)),
            c.unmatched,
            c.debunked,
            c.unresolved,
            usd_of(c.cost_usd, c.tokens, c.unpriced_tokens),
            c.tokens,
            secs(c.wall_ms)
        );
    }
    for id in &r.not_run {
        let _ = writeln!(s, "| `{id}` |  | not run |  |  |  |  |  |  |");
    }
    let _ = writeln!(s, "\n| measure | value |\n|---|---|");
    for (k, v) in measures(&r.totals, r.use_cache) {
        let _ = writeln!(s, "| {k} | {} |", md_cell(&v));
    }
    let details: Vec<String> = r
        .cases
        .iter()
        .filter_map(|c| {
            case_detail(c)
                .map(|d| format!("- `{}` {}: {}", c.case_id, c.status.as_str(), md_cell(&d)))
        })
        .collect();
    if !details.is_empty() {
        let _ = writeln!(s, "\n{}", details.join("\n"));
    }
    s
}

fn cell_status(c: &Option<CompareCell>) -> String {
    c.as_ref()
        .map_or_else(|| "—".to_string(), |c| c.status.as_str().to_string())
}

fn cell_num(c: &Option<CompareCell>, f: fn(&CompareCell) -> String) -> String {
    c.as_ref().map_or_else(|| "—".to_string(), f)
}

fn total_rows(c: &Comparison) -> Vec<(&'static str, String, String)> {
    let (a, b) = (&c.a.totals, &c.b.totals);
    let both = |f: fn(&Totals) -> String| (f(a), f(b));
    let rows: Vec<(&'static str, (String, String))> = vec![
        ("recall", both(recall_line)),
        (
            "found / scored",
            both(|t| format!("{} / {}", t.found, t.scored)),
        ),
        ("aborted", both(|t| t.aborted.to_string())),
        (
            "failed / not run",
            both(|t| format!("{} / {}", t.failed, t.not_run)),
        ),
        (
            "unmatched per case",
            both(|t| {
                t.unmatched_per_case
                    .map_or("n/a".into(), |u| format!("{u:.2}"))
            }),
        ),
        ("debunk rate", both(|t| opt(t.debunk_rate, pct))),
        (
            "confirmed by fix",
            both(|t| {
                match t
                    .proofs
                    .as_ref()
                    .and_then(|p| Some((p, p.confirmed_by_fix_rate?)))
                {
                    Some((p, r)) => {
                        format!(
                            "{}/{} = {}",
                            p.confirmed_by_fix,
                            p.failed_before_fix,
                            pct(r)
                        )
                    }
                    None => "n/a".into(),
                }
            }),
        ),
        (
            "cost",
            both(|t| usd_of(t.cost_usd, t.tokens, t.unpriced_tokens)),
        ),
        ("tokens", both(|t| t.tokens.to_string())),
        ("review time", both(|t| secs(t.wall_ms))),
        (
            "cost per found defect",
            both(|t| {
                let v = opt(t.cost_per_found, usd);
                if t.cached > 0 {
                    format!("{v} ({} cached at original cost)", t.cached)
                } else {
                    v
                }
            }),
        ),
    ];
    rows.into_iter().map(|(k, (x, y))| (k, x, y)).collect()
}

fn agreement_line(c: &Comparison) -> String {
    let g = &c.agreement;
    format!(
        "on {} common case(s): both found {}, only A {}, only B {}, neither {}",
        g.common, g.both_found, g.only_a, g.only_b, g.neither
    )
}

/// Two evaluations side by side, as text.
pub fn render_compare_text(c: &Comparison) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "arev eval compare — tolerance ±{} lines", c.tolerance);
    let _ = writeln!(s, "A: {} (config {})", c.a.path, short(&c.a.config_digest));
    let _ = writeln!(s, "B: {} (config {})", c.b.path, short(&c.b.config_digest));
    let _ = writeln!(
        s,
        "{:<24} {:<8} {:<8} {:>6} {:>6} {:>9} {:>9}  fix",
        "case", "A", "B", "A unm", "B unm", "A cost", "B cost"
    );
    for r in &c.cases {
        let _ = writeln!(
            s,
            "{:<24} {:<8} {:<8} {:>6} {:>6} {:>9} {:>9}  {}{}",
            r.case_id,
            cell_status(&r.a),
            cell_status(&r.b),
            cell_num(&r.a, |x| x.unmatched.to_string()),
            cell_num(&r.b, |x| x.unmatched.to_string()),
            cell_num(&r.a, |x| usd_of(x.cost_usd, x.tokens, x.unpriced_tokens)),
            cell_num(&r.b, |x| usd_of(x.cost_usd, x.tokens, x.unpriced_tokens)),
            text_cell(&r.subject),
            if r.case_differs {
                " (case differs)"
            } else {
                ""
            }
        );
    }
    let _ = writeln!(s, "\n{:<22} {:<40} B", "", "A");
    for (k, x, y) in total_rows(c) {
        let _ = writeln!(s, "{k:<22} {x:<40} {y}");
    }
    let _ = writeln!(s, "\n{}", agreement_line(c));
    for n in &c.notes {
        let _ = writeln!(s, "note: {n}");
    }
    s
}

/// Two evaluations side by side, as Markdown.
pub fn render_compare_markdown(c: &Comparison) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "## arev eval compare: recall A {} · B {}\n",
        recall_line(&c.a.totals),
        recall_line(&c.b.totals)
    );
    let _ = writeln!(
        s,
        "Tolerance ±{} lines · A `{}` (config `{}`) · B `{}` (config `{}`)\n",
        c.tolerance,
        md_cell(&c.a.path),
        short(&c.a.config_digest),
        md_cell(&c.b.path),
        short(&c.b.config_digest)
    );
    let _ = writeln!(
        s,
        "| case | fix | A | B | A unmatched | B unmatched | A cost | B cost |"
    );
    let _ = writeln!(s, "|---|---|---|---|---:|---:|---:|---:|");
    for r in &c.cases {
        let _ = writeln!(
            s,
            "| `{}`{} | {} | {} | {} | {} | {} | {} | {} |",
            r.case_id,
            if r.case_differs { " (differs)" } else { "" },
            md_cell(&r.subject),
            cell_status(&r.a),
            cell_status(&r.b),
            cell_num(&r.a, |x| x.unmatched.to_string()),
            cell_num(&r.b, |x| x.unmatched.to_string()),
            cell_num(&r.a, |x| usd_of(x.cost_usd, x.tokens, x.unpriced_tokens)),
            cell_num(&r.b, |x| usd_of(x.cost_usd, x.tokens, x.unpriced_tokens)),
        );
    }
    let _ = writeln!(s, "\n| measure | A | B |\n|---|---|---|");
    for (k, x, y) in total_rows(c) {
        let _ = writeln!(s, "| {k} | {} | {} |", md_cell(&x), md_cell(&y));
    }
    let _ = writeln!(s, "\n{}", agreement_line(c));
    for n in &c.notes {
        let _ = writeln!(s, "\n- {}", md_cell(n));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::compare::{compare, tests::report};
    use crate::eval::model::{CaseOrigin, ReviewOutcome};
    use crate::eval::score::tests::{finding, loc, result};

    fn sample() -> EvalReport {
        let mut found = result(
            "fix-aaaaaaaaaaaa",
            ReviewOutcome::Complete,
            vec![loc("a.rs", 10, 10)],
            vec![finding("a.rs", 11), finding("a.rs", 90)],
        );
        found.origin = CaseOrigin {
            message: Some("Fix | pipe <b>bold</b> @team\n\nbody".into()),
            ..CaseOrigin::default()
        };
        found.cost_usd = 0.5;
        found.wall_ms = 1500;
        let mut aborted = result(
            "fix-bbbbbbbbbbbb",
            ReviewOutcome::Aborted,
            vec![loc("b.rs", 1, 1)],
            vec![],
        );
        aborted.detail = Some("judge_malformed_json: bad".into());
        report("0123456789abcdef", 3, vec![found, aborted])
    }

    #[test]
    fn text_table_has_rows_totals_and_details() {
        let t = render_text(&sample());
        assert!(t.contains("tolerance ±3 lines, config 0123456789ab"), "{t}");
        assert!(
            t.contains("fix-aaaaaaaaaaaa         found            1"),
            "{t}"
        );
        assert!(
            t.contains("recall                 1/2 = 50.0 % (95 % CI 9.5–90.5 %)"),
            "{t}"
        );
        assert!(t.contains("cost per found defect  $0.5000"), "{t}");
        assert!(
            t.contains("fix-bbbbbbbbbbbb aborted: judge_malformed_json: bad"),
            "{t}"
        );
    }

    /// One case on a priced model, one on a model without a price: the total is the known
    /// part with `price unknown`, the unpriced case reads `price unknown`, and no cost per
    /// found defect is claimed; with every case unpriced the total is `price unknown`.
    #[test]
    fn unpriced_cases_read_price_unknown_never_zero_dollars() {
        let mut r = sample();
        r.cases[0].tokens = 1000;
        r.cases[1].tokens = 300;
        r.cases[1].unpriced_tokens = 300;
        let r = report("0123456789abcdef", 3, r.cases);
        let t = render_text(&r);
        assert!(
            t.contains("cost                   $0.5000 + price unknown, 1300 tokens"),
            "{t}"
        );
        assert!(
            t.contains("cost per found defect  n/a (300 tokens of a model without a price"),
            "{t}"
        );
        let row = t
            .lines()
            .find(|l| l.starts_with("fix-bbbbbbbbbbbb"))
            .unwrap();
        assert!(row.contains("price unknown") && !row.contains('$'), "{row}");
        let m = render_markdown(&r);
        assert!(
            m.contains("| aborted | 0 | 0 | 0 | price unknown | 300 |"),
            "{m}"
        );
        // A comparison shows the same per cell.
        let c = compare(&r, "a.json", &r, "b.json", None).unwrap();
        let ct = render_compare_text(&c);
        assert!(ct.contains("price unknown"), "{ct}");
        // Every case unpriced.
        let mut cases = r.cases;
        cases[0].cost_usd = 0.0;
        cases[0].unpriced_tokens = 1000;
        let all = report("0123456789abcdef", 3, cases);
        let t = render_text(&all);
        assert!(
            t.contains("cost                   price unknown, 1300 tokens"),
            "{t}"
        );
        assert!(!t.contains("$0.0000"), "{t}");
    }

    #[test]
    fn markdown_escapes_commit_messages() {
        let m = render_markdown(&sample());
        assert!(m.starts_with("## arev eval: recall 1/2 = 50.0 %"), "{m}");
        assert!(
            m.contains("| `fix-aaaaaaaaaaaa` | Fix \\| pipe &lt;b&gt;bold&lt;/b&gt; @\u{200b}team | found | 1 | 0 | 0 | $0.5000 | 0 | 1.5s |"),
            "{m}"
        );
        assert!(!m.contains("body"));
    }

    #[test]
    fn comparison_renders_both_sides() {
        let a = sample();
        let mut b = sample();
        b.config_digest = "fedcba9876543210".into();
        b.cases[0].confirmed[0].line = Some(50);
        let c = compare(&a, "a.json", &b, "b.json", None).unwrap();
        let t = render_compare_text(&c);
        assert!(
            t.contains("fix-aaaaaaaaaaaa         found    missed"),
            "{t}"
        );
        assert!(
            t.contains("on 2 common case(s): both found 0, only A 1, only B 0, neither 1"),
            "{t}"
        );
        let m = render_compare_markdown(&c);
        assert!(m.contains("| found / scored | 1 / 2 | 0 / 2 |"), "{m}");
    }
}
