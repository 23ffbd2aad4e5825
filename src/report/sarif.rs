//! SARIF 2.1.0 (GitHub code scanning): one rule per category, one result per confirmed,
//! unresolved, suppressed or (with a baseline) fixed finding (debunked ones are omitted),
//! stable `partialFingerprints`.
//!
//! - `ruleId` = the finding's category; `level` from the severity: critical/high → `error`,
//!   medium → `warning`, low → `note`. Unresolved findings (no ruling) are `kind: "review"`
//!   with `level: "none"`, as SARIF requires for a non-`fail` kind.
//! - Locations are repo-relative URIs (percent-encoded) with `uriBaseId: "%SRCROOT%"`;
//!   `region.startLine` when the finding has a line.
//! - `partialFingerprints`: `arev/v2` and `primaryLocationLineHash` both carry the finding's
//!   fingerprint (see `fingerprint.rs`), so GitHub matches alerts across runs even when lines
//!   move, and `upload-sarif` does not substitute its own line-based hash.
//! - With `--baseline`, results carry `baselineState` (new / unchanged / updated) and the
//!   baseline's findings no longer found are results of kind `pass`, level `none`, with
//!   `baselineState: absent`. Suppressed findings are results with `suppressions` (`kind`
//!   `inSource` or `external`, `status: accepted`, the reason as `justification`).
//! - `automationDetails.id` = `arev/<run id>` (category `arev/`); the invocation says whether
//!   the review produced a verdict: an aborted run is `executionSuccessful: false` with the
//!   abort reason as an error notification, never a clean-looking empty result list.

use super::{Report, ReportFinding};
use crate::findings::Severity;
use crate::store::RunStatus;
use serde_json::{json, Map, Value};

/// The SARIF schema URI written into `$schema`.
pub const SARIF_SCHEMA_URI: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// SARIF `level` of a confirmed finding's severity.
pub fn sarif_level(s: Severity) -> &'static str {
    match s {
        Severity::Critical | Severity::High => "error",
        Severity::Medium => "warning",
        Severity::Low => "note",
    }
}

/// Percent-encode a repo-relative path as a URI reference (`/` kept).
fn uri(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        let keep = b.is_ascii_alphanumeric() || b"-._~/!$&'()*+,;=:@".contains(&b);
        if keep {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn message(f: &ReportFinding) -> String {
    let mut m = f.description.trim().to_string();
    if let Some(r) = f.resolution.as_deref().filter(|r| !r.trim().is_empty()) {
        m.push_str("\n\nJudge: ");
        m.push_str(r.trim());
    }
    if let Some(e) = f
        .edit_instruction
        .as_deref()
        .filter(|e| !e.trim().is_empty())
    {
        m.push_str("\n\nFix: ");
        m.push_str(e.trim());
    }
    m
}

/// Which list of the report a result comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Listed {
    Confirmed,
    Unresolved,
    /// Kept from the Judge by a suppression: a result with `suppressions`.
    Suppressed,
    /// A baseline finding no longer found (`baselineState: absent`).
    Absent,
}

impl Listed {
    fn status(self) -> &'static str {
        match self {
            Self::Confirmed => "confirmed",
            Self::Unresolved => "unresolved",
            Self::Suppressed => "suppressed",
            Self::Absent => "absent",
        }
    }
}

fn result(f: &ReportFinding, rule_index: usize, listed: Listed) -> Value {
    let mut r = Map::new();
    r.insert("ruleId".into(), json!(f.category));
    r.insert("ruleIndex".into(), json!(rule_index));
    match listed {
        Listed::Confirmed | Listed::Suppressed => {
            r.insert("kind".into(), json!("fail"));
            r.insert("level".into(), json!(sarif_level(f.severity)));
        }
        Listed::Unresolved => {
            r.insert("kind".into(), json!("review"));
            r.insert("level".into(), json!("none"));
        }
        // Fixed: the rule was evaluated and the problem is gone.
        Listed::Absent => {
            r.insert("kind".into(), json!("pass"));
            r.insert("level".into(), json!("none"));
        }
    }
    if let Some(state) = f.baseline_state {
        r.insert("baselineState".into(), json!(state.as_str()));
    }
    if let Some(s) = &f.suppression {
        r.insert(
            "suppressions".into(),
            json!([{
                "kind": s.kind.sarif(),
                "status": "accepted",
                "justification": s.justification,
                "properties": { "arev.source": s.source, "arev.expires": s.expires },
            }]),
        );
    }
    r.insert("message".into(), json!({ "text": message(f) }));
    if let Some(file) = &f.file {
        let mut loc = json!({
            "physicalLocation": {
                "artifactLocation": { "uri": uri(file), "uriBaseId": "%SRCROOT%" }
            }
        });
        if let Some(line) = f.line.filter(|l| *l >= 1) {
            loc["physicalLocation"]["region"] = json!({ "startLine": line });
        }
        r.insert("locations".into(), json!([loc]));
    }
    if !f.context.is_empty() {
        r.insert("relatedLocations".into(), related(f));
    }
    r.insert(
        "partialFingerprints".into(),
        json!({ "arev/v2": f.fingerprint, "primaryLocationLineHash": f.fingerprint }),
    );
    let mut props = json!({
        "arev.status": listed.status(),
        "arev.severity": f.severity.as_str(),
        "arev.enthusiastSeverity": f.enthusiast_severity.as_str(),
        "arev.findingId": f.id,
        "arev.round": f.round,
        "arev.foundByPasses": f.found_by_passes,
    });
    if let Some(w) = f.winner {
        props["arev.winner"] = serde_json::to_value(w).unwrap_or(Value::Null);
    }
    if !f.cites.is_empty() {
        props["arev.cites"] = json!(f.cites);
    }
    if let Some(sec) = &f.section {
        props["arev.section"] = json!(sec);
    }
    if let Some(c) = &f.carried_over_from {
        props["arev.carriedOverFrom"] = json!(c);
    }
    // `--prove`: what arev saw when it ran the reproducer (docs/prove.md).
    if let Some(e) = super::proof::sarif_evidence(f) {
        props["evidence"] = e;
    }
    r.insert("properties".into(), props);
    Value::Object(r)
}

/// The finding's context citations (docs/contracts.md §22.2) as `relatedLocations`: each
/// the cited line of a repository file, the quote as the region's snippet.
fn related(f: &ReportFinding) -> Value {
    let locs: Vec<Value> = f
        .context
        .iter()
        .enumerate()
        .map(|(i, c)| {
            json!({
                "id": i,
                "physicalLocation": {
                    "artifactLocation": { "uri": uri(&c.file), "uriBaseId": "%SRCROOT%" },
                    "region": { "startLine": c.line.max(1), "snippet": { "text": c.text } }
                },
                "message": { "text": "context" }
            })
        })
        .collect();
    Value::Array(locs)
}

/// Render the report as a SARIF 2.1.0 log (pretty JSON, trailing newline).
pub fn render_sarif(r: &Report) -> String {
    let included: Vec<(&ReportFinding, Listed)> = r
        .confirmed
        .iter()
        .map(|f| (f, Listed::Confirmed))
        .chain(r.unresolved.iter().map(|f| (f, Listed::Unresolved)))
        .chain(r.suppressed.iter().map(|f| (f, Listed::Suppressed)))
        .chain(r.absent.iter().map(|f| (f, Listed::Absent)))
        .collect();
    let (rules, results) = rules_and_results(&included);
    let mut driver = json!({
        "name": "arev",
        "version": r.arev_version,
        "semanticVersion": r.arev_version,
        "rules": rules,
    });
    let repo = env!("CARGO_PKG_REPOSITORY");
    if !repo.is_empty() {
        driver["informationUri"] = json!(repo);
    }

    let invocation = invocation(r);
    let props = run_properties(r);
    let log = json!({
        "$schema": SARIF_SCHEMA_URI,
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": driver },
            "automationDetails": { "id": format!("arev/{}", r.run_id) },
            "originalUriBaseIds": {
                "%SRCROOT%": { "description": { "text": "The root of the repository that was reviewed." } }
            },
            "invocations": [invocation],
            "results": results,
            "columnKind": "unicodeCodePoints",
            "properties": props,
        }]
    });
    let mut s = crate::output::json_string(&log, true).unwrap_or_default();
    s.push('\n');
    s
}

/// The rules (one per category, in first-seen order: confirmed are severity-sorted) and a
/// result per included finding, pointing at its rule.
fn rules_and_results(included: &[(&ReportFinding, Listed)]) -> (Vec<Value>, Vec<Value>) {
    let mut categories: Vec<&str> = Vec::new();
    for (f, _) in included {
        if !categories.contains(&f.category.as_str()) {
            categories.push(&f.category);
        }
    }
    let rules: Vec<Value> = categories
        .iter()
        .map(|c| {
            json!({
                "id": c,
                "name": c,
                "shortDescription": { "text": format!("arev: {c}") },
                "fullDescription": { "text": format!(
                    "Findings of category `{c}` raised by arev's Enthusiast reviewers and upheld by its Judge \
                     (or not yet ruled on, for results of kind `review`)."
                ) },
                "help": { "text": "Each result carries the Judge's resolution and, for confirmed findings, an edit instruction." },
                "properties": { "tags": ["arev", c] }
            })
        })
        .collect();
    let results: Vec<Value> = included
        .iter()
        .map(|(f, listed)| {
            let idx = categories
                .iter()
                .position(|c| *c == f.category)
                .unwrap_or(0);
            result(f, idx, *listed)
        })
        .collect();
    (rules, results)
}

/// The invocation: whether the review reached a verdict, its times, and why not.
fn invocation(r: &Report) -> Value {
    let verdict = matches!(r.status, RunStatus::Complete | RunStatus::Empty);
    let mut invocation = json!({ "executionSuccessful": verdict });
    if !r.started_at.is_empty() {
        invocation["startTimeUtc"] = json!(r.started_at);
    }
    if !r.finished_at.is_empty() {
        invocation["endTimeUtc"] = json!(r.finished_at);
    }
    if !verdict {
        let why = match (&r.abort_reason, &r.abort_detail) {
            (Some(a), Some(d)) => format!("review aborted ({a}): {d} — no verdict"),
            (Some(a), None) => format!("review aborted ({a}) — no verdict"),
            _ => format!("review {}: no verdict", r.status.as_str()),
        };
        invocation["toolExecutionNotifications"] =
            json!([{ "level": "error", "message": { "text": why } }]);
    } else if !r.degraded.is_empty() {
        let notes: Vec<serde_json::Value> = r
            .degraded
            .iter()
            .map(|d| json!({ "level": "warning", "message": { "text": d.warning() } }))
            .collect();
        invocation["toolExecutionNotifications"] = json!(notes);
    }
    invocation
}

/// The run's `arev.*` properties.
fn run_properties(r: &Report) -> Value {
    let mut props = json!({
        "arev.runId": r.run_id,
        "arev.status": r.status.as_str(),
        "arev.target": {
            "kind": r.target.kind.as_str(),
            "display": r.target.display,
            "sha256": r.target.sha256,
            "drift": r.target.drift,
        },
        "arev.coverage": { "reviewed": r.coverage.reviewed, "skipped": r.coverage.skipped },
        "arev.debunked": r.debunked.len(),
        "arev.costUsd": r.cost.usd,
    });
    // Spend without a known price is named, never folded into `costUsd` as $0.
    if !r.cost.unpriced.is_empty() {
        props["arev.costUnpricedTokens"] = json!(r.cost.unpriced_tokens);
        props["arev.costUnpriced"] = json!(r.cost.unpriced);
    }
    if let Some(s) = r.stop_reason {
        props["arev.stopReason"] = json!(s.as_str());
    }
    if let Some(b) = &r.baseline {
        props["arev.baseline"] = json!({
            "runId": b.run_id,
            "onlyNew": b.only_new,
            "new": b.new,
            "unchanged": b.unchanged,
            "updated": b.updated,
            "absent": b.absent,
        });
    }
    if let Some(c) = &r.cached_from {
        props["arev.cachedFrom"] = json!(c);
    }
    if let Some(i) = &r.incremental {
        props["arev.incremental"] = json!({
            "baselineRunId": i.baseline_run_id,
            "reviewed": i.reviewed.len(),
            "carriedOver": i.carried_over,
        });
    }
    if let Some(s) = &r.shard {
        props["arev.shard"] = json!(format!("{}/{}", s.index, s.count));
    }
    if !r.merged_from.is_empty() {
        props["arev.mergedFrom"] = json!(r
            .merged_from
            .iter()
            .map(|m| m.run_id.as_str())
            .collect::<Vec<_>>());
    }
    props
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Spend of a model without a price is named beside `arev.costUsd` (the known part).
    #[test]
    fn unpriced_spend_is_named_in_the_run_properties() {
        use crate::report::fixtures::{shard, unpriced_cost};
        let mut r = shard(1, 1, &["a.py"], crate::store::RunStatus::Complete);
        let props = run_properties(&r);
        assert!(props.get("arev.costUnpriced").is_none(), "{props}");
        r.cost = unpriced_cost(true);
        let props = run_properties(&r);
        assert_eq!(props["arev.costUsd"], json!(0.02));
        assert_eq!(props["arev.costUnpricedTokens"], json!(150));
        assert_eq!(
            props["arev.costUnpriced"],
            json!([{"agent": "local", "model": "local-coder", "tokens": 150}])
        );
    }

    #[test]
    fn levels_and_uris() {
        assert_eq!(sarif_level(Severity::Critical), "error");
        assert_eq!(sarif_level(Severity::High), "error");
        assert_eq!(sarif_level(Severity::Medium), "warning");
        assert_eq!(sarif_level(Severity::Low), "note");
        assert_eq!(uri("src/a b/c%d.rs"), "src/a%20b/c%25d.rs");
        assert_eq!(uri("src/lib.rs"), "src/lib.rs");
        assert_eq!(uri("d/é.rs"), "d/%C3%A9.rs");
    }

    /// Context citations are `relatedLocations` (the cited line, the quote as its snippet),
    /// valid against the official schema; agent text stays data.
    #[test]
    fn citations_are_related_locations() {
        use crate::report::fixtures::{finding, shard};
        use crate::test_support::{cite, sarif_schema};
        let mut r = shard(1, 1, &["a.py"], RunStatus::Complete);
        r.confirmed[0].context = vec![
            cite("app.py", 3, "if len(buf) > 0:"),
            cite("lib dir/x.py", 9, "</script>\u{1b}[31m"),
        ];
        let mut u = finding("b.py", Severity::Medium);
        u.context = vec![cite("tests/test_b.py", 2, "assert b() == 1")];
        r.unresolved.push(u);
        let sarif = sarif_schema::assert_valid(&render_sarif(&r), "unit-citations");
        let results = sarif["runs"][0]["results"].as_array().unwrap();
        let rel = results[0]["relatedLocations"].as_array().unwrap();
        assert_eq!(rel.len(), 2);
        let p = &rel[0]["physicalLocation"];
        assert_eq!(p["artifactLocation"]["uri"], "app.py");
        assert_eq!(p["artifactLocation"]["uriBaseId"], "%SRCROOT%");
        assert_eq!(p["region"]["startLine"], 3);
        assert_eq!(p["region"]["snippet"]["text"], "if len(buf) > 0:");
        assert_eq!(rel[1]["id"], 1);
        assert_eq!(
            rel[1]["physicalLocation"]["artifactLocation"]["uri"],
            "lib%20dir/x.py"
        );
        assert_eq!(
            results[1]["relatedLocations"][0]["physicalLocation"]["region"]["startLine"],
            2
        );
        // None without citations.
        let plain = shard(1, 1, &["a.py"], RunStatus::Complete);
        let sarif = sarif_schema::assert_valid(&render_sarif(&plain), "unit-no-citations");
        assert!(sarif["runs"][0]["results"][0]
            .get("relatedLocations")
            .is_none());
    }

    /// Edge cases the integration tests do not reach, checked against the official schema:
    /// a target-wide finding (no location), a file-level one (no region), odd paths, a
    /// merged report, an aborted run.
    #[test]
    fn edge_cases_validate_against_the_schema() {
        use crate::report::fixtures::{finding, shard};
        use crate::test_support::sarif_schema;
        let mut r = shard(1, 2, &["a b%.rs"], RunStatus::Complete);
        let mut wide = finding("x", Severity::Critical);
        wide.file = None;
        wide.line = None;
        let mut file_level = finding("y.rs", Severity::Low);
        file_level.line = None;
        r.confirmed.extend([wide, file_level]);
        r.unresolved.push(finding("z.rs", Severity::Medium));
        let sarif = sarif_schema::assert_valid(&render_sarif(&r), "unit-edge-cases");
        let results = sarif["runs"][0]["results"].as_array().unwrap();
        assert_eq!(
            results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            "a%20b%25.rs"
        );
        assert!(results[1].get("locations").is_none(), "target-wide");
        assert!(results[2]["locations"][0]["physicalLocation"]
            .get("region")
            .is_none());
        assert_eq!(sarif["runs"][0]["properties"]["arev.shard"], "1/2");

        // Memory: baselineState on results, a fixed one as `pass`, suppressions (a
        // target-wide suppressed finding included).
        use crate::report::{BaselineState, Suppression, SuppressionKind};
        let mut m = shard(1, 1, &["a.rs"], RunStatus::Complete);
        m.confirmed[0].baseline_state = Some(BaselineState::Updated);
        let mut fixed = finding("gone.rs", Severity::High);
        fixed.baseline_state = Some(BaselineState::Absent);
        m.absent.push(fixed);
        let mut quiet = finding("q.rs", Severity::Critical);
        quiet.file = None;
        quiet.line = None;
        quiet.category = "noise".into();
        quiet.suppression = Some(Suppression {
            kind: SuppressionKind::External,
            justification: "accepted".into(),
            source: ".arev/suppressions.toml (entry 1)".into(),
            expires: Some("2030-01-01".into()),
        });
        m.suppressed.push(quiet);
        let sarif = sarif_schema::assert_valid(&render_sarif(&m), "unit-memory");
        let results = sarif["runs"][0]["results"].as_array().unwrap();
        assert_eq!(results[0]["baselineState"], "updated");
        assert_eq!(results[1]["suppressions"][0]["kind"], "external");
        assert_eq!(results[1]["suppressions"][0]["justification"], "accepted");
        assert_eq!(results[1]["properties"]["arev.status"], "suppressed");
        assert_eq!(results[2]["kind"], "pass");
        assert_eq!(results[2]["baselineState"], "absent");
        assert_eq!(
            sarif["runs"][0]["tool"]["driver"]["rules"]
                .as_array()
                .unwrap()
                .len(),
            2
        );

        let aborted = shard(1, 1, &[], RunStatus::Aborted);
        let sarif = sarif_schema::assert_valid(&render_sarif(&aborted), "unit-aborted");
        assert_eq!(
            sarif["runs"][0]["invocations"][0]["executionSuccessful"],
            false
        );
    }
}
