//! report.md: summary line, confirmed table, debunked (collapsed), coverage and cost.
//! Everything an agent wrote (and every repository path) goes through `escape` first.

use super::escape::{md_code, md_line_link_at, md_text, MdContext, REPORT_MARKER};
use super::{Report, ReportFinding};
use std::fmt::Write;

/// Agent text in a table cell: inert, one line, pipes escaped.
fn cell(s: &str) -> String {
    md_text(s, MdContext::Table)
}

/// Agent text in a list item or running text: inert, one line.
fn inline(s: &str) -> String {
    md_text(s, MdContext::Inline)
}

/// The defect as the Enthusiast described it, then the Judge's resolution (and, for a
/// mixed panel, who found and who ruled); `links` as [`see`] takes it.
fn finding_cell(f: &ReportFinding, mixed: bool, links: Option<&str>) -> String {
    let mut c = match f
        .resolution
        .as_deref()
        .map(str::trim)
        .filter(|r| !r.is_empty())
    {
        Some(r) => format!("{}<br>*Judge:* {}", cell(&f.description), cell(r)),
        None => cell(&f.description),
    };
    c.push_str(&see(f, MdContext::Table, "<br>", links));
    if mixed {
        c.push_str(&format!("<br><sub>{}</sub>", cell(&f.attribution())));
    }
    c
}

/// The finding's context citations (docs/contracts.md §22.2), each `sep` then `see` a link to
/// the line (relative, or below `links`: [`md_line_link_at`]) and the quote as a code span
/// ("" without citations).
fn see(f: &ReportFinding, ctx: MdContext, sep: &str, links: Option<&str>) -> String {
    f.context
        .iter()
        .map(|c| {
            format!(
                "{sep}see {} {}",
                md_line_link_at(&c.file, c.line, ctx, links),
                md_code(&c.text, ctx)
            )
        })
        .collect()
}

fn place(f: &ReportFinding, ctx: MdContext) -> String {
    let at = match (&f.file, f.line) {
        (Some(p), Some(l)) => md_code(&format!("{p}:{l}"), ctx),
        (Some(p), None) => md_code(p, ctx),
        _ => "—".into(),
    };
    match &f.section {
        Some(sec) => format!("{at} ({})", md_code(sec, ctx)),
        None => at,
    }
}

/// The confirmed-findings table (nothing for an empty list).
fn table(s: &mut String, r: &Report, list: &[&ReportFinding], links: Option<&str>) {
    if list.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "| Severity | Where | Category | Finding | Fix |\n|---|---|---|---|---|"
    );
    for f in list {
        let mut what = finding_cell(f, r.mixed_panel(), links);
        if let Some(p) = &f.proof {
            what = format!("{}<br>{what}", super::proof::badge(p.status));
        }
        if let Some(c) = &f.carried_over_from {
            what.push_str(&format!("<br><sub>carried over from {}</sub>", cell(c)));
        }
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} |",
            f.severity,
            place(f, MdContext::Table),
            cell(&f.category),
            what,
            cell(f.edit_instruction.as_deref().unwrap_or("—"))
        );
    }
    s.push('\n');
}

pub fn render_markdown(r: &Report) -> String {
    render_markdown_at(r, None)
}

/// report.md whose line links point below `links` (a forge's file view at the reviewed
/// commit, for a PR comment: [`md_line_link_at`]); relative without.
pub fn render_markdown_at(r: &Report, links: Option<&str>) -> String {
    let mut s = String::new();
    heading(&mut s, r);
    confirmed_sections(&mut s, r, links);
    super::proof::markdown_section(&mut s, r);
    unresolved_list(&mut s, r, links);
    suppressed_details(&mut s, r);
    debunked_details(&mut s, r, links);
    footer(&mut s, r);
    provenance(&mut s, r);
    s
}

/// The marker, the title, the counts line, the abort detail and the iterate section.
fn heading(s: &mut String, r: &Report) {
    // A marker a CI job can search for to update its previous PR comment in place.
    let _ = writeln!(s, "{REPORT_MARKER}");
    let _ = writeln!(
        s,
        "## arev review — {}\n",
        md_code(&r.target.display, MdContext::Inline)
    );
    let status = match (&r.stop_reason, &r.abort_reason) {
        (Some(sr), _) => format!("complete, stop reason `{}`", sr.as_str()),
        (None, Some(a)) => format!("**aborted** (`{a}`): no verdict"),
        _ => r.status.as_str().to_string(),
    };
    let b = &r.by_severity;
    let suppressed = if r.suppressed.is_empty() {
        String::new()
    } else {
        format!(" · {} suppressed", r.suppressed.len())
    };
    let _ = writeln!(
        s,
        "**{} confirmed** (critical {}, high {}, medium {}, low {}) · {} debunked · {} unresolved{suppressed} · {} round(s) · {status}\n",
        r.confirmed.len(), b.critical, b.high, b.medium, b.low, r.debunked.len(), r.unresolved.len(), r.rounds.len()
    );
    if let Some(d) = &r.abort_detail {
        let _ = writeln!(s, "> {}\n", inline(d));
    }
    for d in &r.degraded {
        let _ = writeln!(s, "> **Warning:** {}\n", inline(&d.warning()));
    }
    if let Some(it) = &r.iterate {
        s.push_str(&super::iterate::markdown_section(it));
    }
}

/// The confirmed findings: one table, or with a baseline new / still open / fixed.
fn confirmed_sections(s: &mut String, r: &Report, links: Option<&str>) {
    match &r.baseline {
        None => table(s, r, &r.confirmed.iter().collect::<Vec<_>>(), links),
        Some(b) => {
            let _ = writeln!(
                s,
                "Compared with run {}{}.\n",
                md_code(&b.run_id, MdContext::Inline),
                if b.only_new {
                    " — only new findings count"
                } else {
                    ""
                }
            );
            let (new, open): (Vec<&ReportFinding>, Vec<&ReportFinding>) = r
                .confirmed
                .iter()
                .partition(|f| f.baseline_state.is_some_and(|x| x.is_new()));
            for (title, list) in [("New", new), ("Still open", open)] {
                let _ = writeln!(s, "### {title} ({})\n", list.len());
                table(s, r, &list, links);
            }
            let _ = writeln!(s, "### Fixed ({})\n", r.absent.len());
            for f in &r.absent {
                let _ = writeln!(
                    s,
                    "- ~~{} {} {}~~ — {}",
                    f.severity,
                    place(f, MdContext::Inline),
                    inline(&f.category),
                    inline(&f.description)
                );
            }
            if !r.absent.is_empty() {
                s.push('\n');
            }
        }
    }
}

/// The unresolved findings, one line each.
fn unresolved_list(s: &mut String, r: &Report, links: Option<&str>) {
    if !r.unresolved.is_empty() {
        let _ = writeln!(s, "### Unresolved\n");
        for f in &r.unresolved {
            let _ = writeln!(
                s,
                "- {} {} — {}{}",
                place(f, MdContext::Inline),
                inline(&f.category),
                inline(&f.description),
                see(f, MdContext::Inline, " · ", links)
            );
        }
        s.push('\n');
    }
}

/// The suppressed findings, folded, each with its justification and source.
fn suppressed_details(s: &mut String, r: &Report) {
    if !r.suppressed.is_empty() {
        let _ = writeln!(
            s,
            "<details><summary>{} suppressed</summary>\n",
            r.suppressed.len()
        );
        for f in &r.suppressed {
            let why = f.suppression.as_ref().map_or(String::new(), |x| {
                format!(
                    " — {} ({})",
                    inline(&x.justification),
                    md_code(&x.source, MdContext::Inline)
                )
            });
            let _ = writeln!(
                s,
                "- {} {} {}{why}",
                place(f, MdContext::Inline),
                inline(&f.category),
                inline(&f.description)
            );
        }
        let _ = writeln!(s, "\n</details>\n");
    }
}

/// The debunked findings, folded, each with its resolution and what it cites.
fn debunked_details(s: &mut String, r: &Report, links: Option<&str>) {
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
                format!(" (cites {})", inline(&f.cites.join(", ")))
            };
            let _ = writeln!(
                s,
                "- ~~{} {}~~ — {}{cites}{}",
                place(f, MdContext::Inline),
                inline(&f.description),
                inline(f.resolution.as_deref().unwrap_or("")),
                see(f, MdContext::Inline, " · ", links)
            );
        }
        let _ = writeln!(s, "\n</details>\n");
    }
}

/// `Price unknown for `local-coder` (agent `local`, 300 tokens): …`: the models whose spend
/// the cost leaves out (docs/configuration.md "Budgets and `[prices]`"); None when every
/// token was priced.
fn unpriced_note(r: &Report) -> Option<String> {
    if r.cost.unpriced.is_empty() {
        return None;
    }
    let models: Vec<String> = r
        .cost
        .unpriced
        .iter()
        .map(|u| {
            format!(
                "{} (agent {}, {} tokens)",
                md_code(&u.model, MdContext::Inline),
                md_code(&u.agent, MdContext::Inline),
                u.tokens
            )
        })
        .collect();
    Some(format!(
        "**Price unknown** for {}: the cost counts the priced tokens only; set `[prices.\"<model>\"]` to price them.",
        models.join(", ")
    ))
}

/// Coverage, cost and target digest; incremental, cached verdict and debunk rate notes.
fn footer(s: &mut String, r: &Report) {
    let _ = writeln!(
        s,
        "Coverage: {} file(s) reviewed, {} skipped. Cost: {}, {} tokens. Target sha256 `{}`{}.",
        r.coverage.reviewed,
        r.coverage.skipped,
        r.cost.usd_text(),
        r.cost.tokens,
        &r.target.sha256[..r.target.sha256.len().min(12)],
        if r.target.drift {
            " (**changed during the review**)"
        } else {
            ""
        }
    );
    if let Some(note) = unpriced_note(r) {
        let _ = writeln!(s, "\n{note}");
    }
    if let Some(i) = &r.incremental {
        let _ = writeln!(
            s,
            "\nIncremental: {} file(s) reviewed again, {} carried over from run {} ({} finding(s)).",
            i.reviewed.len(),
            i.carried_over,
            md_code(&i.baseline_run_id, MdContext::Inline),
            i.findings_carried_over
        );
    }
    if let Some(c) = &r.cached_from {
        let _ = writeln!(
            s,
            "\nVerdict reused from run {} (verdict cache; nothing was dispatched).",
            md_code(c, MdContext::Inline)
        );
    }
    if let Some(rate) = r.quality.debunk_rate {
        let [lo, hi] = r.quality.healthy_band;
        let _ = writeln!(
            s,
            "\nDebunk rate {:.0} % (healthy band {:.0}–{:.0} %).",
            rate * 100.0,
            lo * 100.0,
            hi * 100.0
        );
    }
}

/// Where the report comes from: its shard, the shards it merges, and the skipped files.
fn provenance(s: &mut String, r: &Report) {
    if let Some(sh) = &r.shard {
        let _ = writeln!(
            s,
            "\nShard {}/{} of a {}-file manifest (sha256 `{}`): {} file(s) in this shard.",
            sh.index,
            sh.count,
            sh.manifest_files.len(),
            &sh.manifest_sha256[..sh.manifest_sha256.len().min(12)],
            sh.files.len()
        );
    }
    if !r.merged_from.is_empty() {
        let parts: Vec<String> = r
            .merged_from
            .iter()
            .map(|m| {
                let why = m
                    .stop_reason
                    .map(|x| x.as_str().to_string())
                    .or_else(|| m.abort_reason.map(|a| a.to_string()))
                    .unwrap_or_else(|| m.status.as_str().to_string());
                format!("{}/{} {} ({why})", m.index, m.count, m.status.as_str())
            })
            .collect();
        let _ = writeln!(
            s,
            "\nMerged from {} shard(s): {}.",
            r.merged_from.len(),
            parts.join(", ")
        );
    }
    let skipped: Vec<String> = r
        .coverage
        .files
        .iter()
        .filter_map(|f| {
            f.reason_label()
                .map(|why| format!("{} ({})", md_code(&f.path, MdContext::Inline), inline(&why)))
        })
        .collect();
    if !skipped.is_empty() {
        let _ = writeln!(s, "\nSkipped: {}.", skipped.join(", "));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::Severity;
    use crate::report::fixtures::{finding, shard, unpriced_cost};
    use crate::store::RunStatus;
    use crate::test_support::cite;

    /// A priced and an unpriced agent: the known part and a note naming the model; all
    /// unpriced: `price unknown`, never `$0`. The PR summary is this rendering.
    #[test]
    fn a_model_without_a_price_reads_price_unknown_never_zero_dollars() {
        let mut r = shard(1, 1, &["a.py"], RunStatus::Complete);
        r.cost = unpriced_cost(true);
        let md = render_markdown(&r);
        assert!(
            md.contains("Cost: $0.0200 + price unknown, 450 tokens."),
            "{md}"
        );
        assert!(
            md.contains("**Price unknown** for `local-coder` (agent `local`, 150 tokens): the cost counts the priced tokens only"),
            "{md}"
        );
        r.cost = unpriced_cost(false);
        let md = render_markdown(&r);
        assert!(md.contains("Cost: price unknown, 150 tokens."), "{md}");
        assert!(!md.contains("$0.0000"), "{md}");
        r.cost = shard(1, 1, &["a.py"], RunStatus::Complete).cost;
        assert!(!render_markdown(&r).contains("rice unknown"));
    }

    #[test]
    fn each_citation_is_a_line_link_with_its_quote_escaped() {
        let mut r = shard(1, 1, &["a.py"], RunStatus::Complete);
        r.confirmed[0].context = vec![
            cite("app.py", 3, "if len(buf) > 0:"),
            cite("x.py", 1, "a | b <img src=x> @team"),
        ];
        let mut d = finding("c.py", Severity::Low);
        d.context = vec![cite("lib/guard.py", 7, "if n is None: return")];
        r.debunked.push(d);
        let md = render_markdown(&r);
        assert!(
            md.contains("<br>see [`app.py:3`](app.py#L3) `if len(buf) > 0:`"),
            "{md}"
        );
        // In the table the quote's pipe is escaped; no HTML gets through.
        assert!(
            md.contains("see [`x.py:1`](x.py#L1) `a \\| b <img src=x> @team`"),
            "{md}"
        );
        assert!(!md.contains("<img src=x> @team`|"), "{md}");
        assert!(
            md.contains(" · see [`lib/guard.py:7`](lib/guard.py#L7) `if n is None: return`"),
            "{md}"
        );
    }
}
