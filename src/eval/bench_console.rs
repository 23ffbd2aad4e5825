//! What `arev eval bench` prints: a progress line per PR on stderr, the table of PRs with
//! their cost and the total on stdout, and (`--score`) the benchmark's figures.

use super::bench::BenchEvent;
use super::bench_model::{BenchOutcome, BenchPrResult, BenchReport, BenchScore, Figures};
use super::golden::BenchPr;
use crate::records::{usd4, usd_or_unknown};

fn secs(ms: u64) -> String {
    format!("{:.1}s", ms as f64 / 1000.0)
}

fn what(r: &BenchPrResult) -> String {
    match r.outcome {
        BenchOutcome::Complete => format!(
            "{} confirmed, {} unresolved",
            r.confirmed.len(),
            r.unresolved.len()
        ),
        BenchOutcome::Aborted | BenchOutcome::Failed => r
            .detail
            .as_deref()
            .unwrap_or("no detail")
            .chars()
            .take(200)
            .collect(),
    }
}

fn outcome(r: &BenchPrResult) -> &'static str {
    match r.outcome {
        BenchOutcome::Complete => "complete",
        BenchOutcome::Aborted => "aborted",
        BenchOutcome::Failed => "FAILED",
    }
}

/// One PR's progress line (None for a start: the end line says it all).
pub fn bench_progress(
    event: BenchEvent,
    pr: &BenchPr,
    r: Option<&BenchPrResult>,
) -> Option<String> {
    match (event, r) {
        (BenchEvent::Started, _) => Some(format!("bench {}: fetching and reviewing", pr.url)),
        (BenchEvent::Kept, Some(r)) => Some(format!("bench {}: kept ({})", pr.url, what(r))),
        (BenchEvent::Finished, Some(r)) => Some(format!(
            "bench {}: {} ({}) {} {}",
            pr.url,
            outcome(r),
            what(r),
            pr_usd(r),
            secs(r.wall_ms)
        )),
        _ => None,
    }
}

/// A PR's cost: `price unknown` for tokens without a price, never `$0`.
fn pr_usd(r: &BenchPrResult) -> String {
    usd_or_unknown(r.cost_usd, r.tokens, r.unpriced_tokens, usd4)
}

/// The table: one row per PR, then the total cost.
pub fn bench_table(report: &BenchReport) -> String {
    let mut s = format!(
        "{:<60} {:<9} {:>9} {:>10} {:>10} {:>8}\n",
        "pull request", "result", "confirmed", "unresolved", "cost", "time"
    );
    for r in &report.prs {
        s.push_str(&format!(
            "{:<60} {:<9} {:>9} {:>10} {:>10} {:>8}\n",
            r.url,
            outcome(r),
            r.confirmed.len(),
            r.unresolved.len(),
            pr_usd(r),
            secs(r.wall_ms)
        ));
        if r.outcome != BenchOutcome::Complete {
            s.push_str(&format!("  {}\n", what(r)));
        }
    }
    let n = report.prs.len().max(1) as f64;
    s.push_str(&format!(
        "\n{} pull request(s), {} failed, {} not run; cost {} ({} tokens), {} per PR\n",
        report.prs.len(),
        report
            .prs
            .iter()
            .filter(|r| r.outcome == BenchOutcome::Failed)
            .count(),
        report.not_run.len(),
        usd_or_unknown(report.cost_usd, report.tokens, report.unpriced_tokens, usd4),
        report.tokens,
        usd_or_unknown(
            report.cost_usd / n,
            report.tokens,
            report.unpriced_tokens,
            usd4
        )
    ));
    s
}

fn row(name: &str, f: &Figures) -> String {
    format!(
        "{:<24} {:>5} {:>5} {:>5} {:>5} {:>10.1} {:>8.1} {:>6.3} {:>7}\n",
        name,
        f.prs,
        f.tp,
        f.fp,
        f.fn_,
        f.precision * 100.0,
        f.recall * 100.0,
        f.f1,
        f.errors
    )
}

/// `--score`: overall, per repository, per `requires_context`.
pub fn score_table(score: &BenchScore) -> String {
    let head = format!(
        "{:<24} {:>5} {:>5} {:>5} {:>5} {:>10} {:>8} {:>6} {:>7}\n",
        "arev", "PRs", "TP", "FP", "FN", "precision%", "recall%", "F1", "errors"
    );
    let mut s = head;
    s.push_str(&row("overall", &score.overall));
    for (repo, f) in &score.by_repo {
        s.push_str(&row(repo, f));
    }
    if !score.by_context.is_empty() {
        s.push_str("\nrequires_context\n");
        for (c, f) in &score.by_context {
            s.push_str(&row(c, f));
        }
    }
    // The score keeps no token total: a priced part is one that cost something.
    let matcher = match (score.unpriced_tokens, score.cost_usd > 0.0) {
        (0, _) => usd4(score.cost_usd),
        (n, true) => format!("{} + price unknown ({n} tokens)", usd4(score.cost_usd)),
        (n, false) => format!("price unknown ({n} tokens)"),
    };
    s.push_str(&format!("\nMatcher cost {matcher}\n"));
    let errors: Vec<String> = score
        .prs
        .iter()
        .flat_map(|p| {
            p.pairs.iter().filter_map(move |v| {
                v.error.as_ref().map(|e| {
                    format!(
                        "  {} golden {} × candidate {}: {}",
                        p.url,
                        v.golden,
                        v.candidate,
                        e.chars().take(200).collect::<String>()
                    )
                })
            })
        })
        .collect();
    if !errors.is_empty() {
        s.push_str(&format!(
            "{} Matcher answer(s) unusable, counted as no match:\n{}\n",
            errors.len(),
            errors.join("\n")
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pr(url: &str, cost_usd: f64, tokens: u64, unpriced_tokens: u64) -> BenchPrResult {
        BenchPrResult {
            schema_version: 1,
            url: url.into(),
            repo: "o/r".into(),
            source: "s".into(),
            key: "k".into(),
            config_digest: "c".into(),
            arev_version: "0".into(),
            prove: false,
            base: None,
            head: None,
            outcome: BenchOutcome::Complete,
            detail: None,
            run_dir: None,
            cost_usd,
            tokens,
            unpriced_tokens,
            wall_ms: 1000,
            confirmed: vec![],
            unresolved: vec![],
        }
    }

    fn report(prs: Vec<BenchPrResult>) -> BenchReport {
        BenchReport {
            schema_version: 1,
            arev_version: "0".into(),
            config_digest: "c".into(),
            golden: "g".into(),
            out_dir: "o".into(),
            cost_usd: prs.iter().map(|p| p.cost_usd).sum(),
            tokens: prs.iter().map(|p| p.tokens).sum(),
            unpriced_tokens: prs.iter().map(|p| p.unpriced_tokens).sum(),
            prs,
            not_run: vec![],
            score: None,
        }
    }

    /// A priced PR and an unpriced one: the total is the known part with `price unknown`;
    /// all unpriced: `price unknown`, never `$0`.
    #[test]
    fn unpriced_prs_read_price_unknown_never_zero_dollars() {
        let t = bench_table(&report(vec![
            pr("https://x/o/r/pull/1", 0.5, 1000, 0),
            pr("https://x/o/r/pull/2", 0.0, 300, 300),
        ]));
        assert!(
            t.contains(
                "cost $0.5000 + price unknown (1300 tokens), $0.2500 + price unknown per PR"
            ),
            "{t}"
        );
        let row = t.lines().find(|l| l.contains("pull/2")).unwrap();
        assert!(row.contains("price unknown") && !row.contains('$'), "{row}");
        let t = bench_table(&report(vec![pr("https://x/o/r/pull/2", 0.0, 300, 300)]));
        assert!(
            t.contains("cost price unknown (300 tokens), price unknown per PR"),
            "{t}"
        );
        assert!(!t.contains('$'), "{t}");
    }
}
