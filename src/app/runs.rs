//! `arev runs [--json] [--prune-older-than D [--dry-run]]`: the runs under the runs base,
//! newest first, with status, age, reason (cache hits marked), confirmed count and cost; or
//! pruning the finished ones older than D.

use super::emit::{cwd, runs_base};
use crate::cli::RunsArgs;
use crate::errors::ExpectedError;
use crate::output;
use crate::store::{age, list_runs, prune_runs, RunSummary};
use chrono::{DateTime, Utc};
use std::fmt::Write;
use std::time::Duration;

fn reason(r: &RunSummary) -> String {
    let why = r
        .stop_reason
        .map(|s| s.to_string())
        .or_else(|| r.abort_reason.map(|a| a.to_string()))
        .or_else(|| r.error.clone())
        .unwrap_or_else(|| "-".into());
    match &r.cached_from {
        Some(from) => format!("{why} (cache hit of {from})"),
        None => why,
    }
}

/// A duration in its largest whole unit: `45s`, `12m`, `3h`, `5d`.
fn short_age(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..=59 => format!("{s}s"),
        60..=3_599 => format!("{}m", s / 60),
        3_600..=86_399 => format!("{}h", s / 3_600),
        _ => format!("{}d", s / 86_400),
    }
}

/// A cost the way the report's cost line writes it (4 decimals below a dollar).
fn cost(usd: f64) -> String {
    if usd >= 1.0 {
        format!("${usd:.2}")
    } else {
        format!("${usd:.4}")
    }
}

/// A run's cost: `-` without one; tokens of a model without a known price read `$0.0500 +
/// price unknown`, or `price unknown` when none was priced — never `$0`.
fn run_cost(r: &RunSummary) -> String {
    let Some(usd) = r.cost_usd else {
        return "-".into();
    };
    let tokens = r.tokens.unwrap_or(r.unpriced_tokens);
    crate::records::usd_or_unknown(usd, tokens, r.unpriced_tokens, cost)
}

/// The table printed by `arev runs`, ages counted at `now`.
fn table(runs: &[RunSummary], now: DateTime<Utc>) -> String {
    let rows: Vec<[String; 7]> = runs
        .iter()
        .map(|r| {
            let mut target = r.target.clone().unwrap_or_else(|| "-".into());
            if let Some(s) = &r.shard {
                let _ = write!(target, " [shard {s}]");
            }
            [
                r.run_id.clone(),
                r.status.map_or("unreadable", |s| s.as_str()).to_string(),
                r.started_at
                    .as_deref()
                    .and_then(|t| age(t, now))
                    .map_or("-".into(), short_age),
                reason(r),
                r.confirmed.map_or("-".into(), |c| c.to_string()),
                run_cost(r),
                target,
            ]
        })
        .collect();
    let head = [
        "RUN ID",
        "STATUS",
        "AGE",
        "REASON",
        "CONFIRMED",
        "COST",
        "TARGET",
    ];
    let last = head.len() - 1;
    let mut width = head.map(str::len);
    for row in &rows {
        for (w, cell) in width.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut s = String::new();
    for row in std::iter::once(head.map(String::from)).chain(rows) {
        let line: Vec<String> = row
            .iter()
            .zip(width)
            .enumerate()
            .map(|(i, (c, w))| {
                if i == last {
                    c.clone()
                } else {
                    format!("{c:<w$}")
                }
            })
            .collect();
        let _ = writeln!(s, "{}", line.join("  ").trim_end());
    }
    // Run ids, targets and errors come from run dirs: no raw control character out.
    output::inert(&s).into_owned()
}

/// Removing old runs failed.
#[derive(Debug, thiserror::Error)]
#[error("pruning: {0}")]
struct Pruning(#[source] std::io::Error);

/// `--prune-older-than`: the runs removed (or, with `--dry-run`, that would be) on stdout,
/// one line each, and a count on stderr.
fn prune(
    base: &std::path::Path,
    older_than: Duration,
    args: &RunsArgs,
) -> Result<(), ExpectedError> {
    let now = Utc::now();
    let pruned = prune_runs(base, older_than, now, args.dry_run)
        .map_err(|e| ExpectedError::bad_run(base, Pruning(e)))?;
    if args.json {
        output::report(&output::json_string(&pruned, true).unwrap_or_default());
    } else if !pruned.is_empty() {
        let verb = if args.dry_run {
            "would remove"
        } else {
            "removed"
        };
        let mut s = String::new();
        for r in &pruned {
            let _ = writeln!(
                s,
                "{verb} {}  ({}, {})",
                r.run_dir,
                r.status.map_or("-", |s| s.as_str()),
                r.started_at
                    .as_deref()
                    .and_then(|t| age(t, now))
                    .map_or("-".into(), short_age),
            );
        }
        output::report(s.trim_end());
    }
    let what = if args.dry_run {
        "would remove"
    } else {
        "removed"
    };
    output::progress(&format!(
        "arev: {what} {} run dir(s) under {} that ended at least {} ago (running runs and dirs without a readable meta.json are never removed)",
        pruned.len(),
        base.display(),
        humantime::format_duration(older_than),
    ));
    Ok(())
}

pub(crate) fn runs_command(args: &RunsArgs) -> Result<(), ExpectedError> {
    let cwd = cwd()?;
    let base = runs_base(&cwd, args.run_dir.as_deref())?;
    if let Some(older_than) = args.prune_older_than {
        return prune(&base, older_than, args);
    }
    let runs = list_runs(&base).map_err(|e| ExpectedError::bad_run(&base, e))?;
    if args.json {
        output::report(&output::json_string(&runs, true).unwrap_or_default());
    } else if runs.is_empty() {
        output::progress(&format!("arev: no runs under {}", base.display()));
    } else {
        output::report(&table(&runs, Utc::now()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_and_costs_read_short() {
        assert_eq!(short_age(Duration::from_secs(45)), "45s");
        assert_eq!(short_age(Duration::from_secs(12 * 60 + 5)), "12m");
        assert_eq!(short_age(Duration::from_secs(3 * 3_600)), "3h");
        assert_eq!(short_age(Duration::from_secs(5 * 86_400 + 7)), "5d");
        assert_eq!(cost(0.05), "$0.0500");
        assert_eq!(cost(12.345), "$12.35");
    }

    fn finished(usd: f64, tokens: u64, unpriced_tokens: u64) -> RunSummary {
        RunSummary {
            run_id: "r".into(),
            run_dir: "/x/r".into(),
            status: None,
            stop_reason: None,
            abort_reason: None,
            target: None,
            started_at: None,
            finished_at: None,
            confirmed: Some(0),
            shard: None,
            cost_usd: Some(usd),
            unpriced_tokens,
            tokens: Some(tokens),
            error: None,
            cached_from: None,
        }
    }

    #[test]
    fn a_run_with_unpriced_tokens_never_costs_zero_dollars() {
        assert_eq!(run_cost(&finished(0.02, 300, 0)), "$0.0200");
        assert_eq!(
            run_cost(&finished(0.02, 600, 300)),
            "$0.0200 + price unknown",
            "mixed: the known part"
        );
        assert_eq!(run_cost(&finished(0.0, 300, 300)), "price unknown");
        let running = RunSummary {
            cost_usd: None,
            ..finished(0.0, 0, 0)
        };
        assert_eq!(run_cost(&running), "-");
        let t = table(&[finished(0.0, 300, 300)], Utc::now());
        assert!(t.contains("price unknown") && !t.contains("$0"), "{t}");
    }
}
