//! `arev merge` (docs/architecture.md §12.4): combine the reports of `--shard i/n` runs
//! into one report, after checking that they are shards of one manifest and that every
//! manifest file was assigned to exactly one of them. Pure: reports in, report (or a
//! refusal) out.
//!
//! A report without shard information counts as the single shard 1/1 of its own target, so
//! merging one ordinary report is the identity (apart from the run id). Finding ids of a
//! split review are qualified with their shard (`s2:F1`), since each shard numbers its own.
//!
//! The merged report: target = the full manifest (sha256 and file list); findings of all
//! shards (confirmed re-sorted by severity, file, line; debunked / unresolved by round, file,
//! line); coverage = the union; cost, tokens and discovery curve = sums; rounds combined by
//! round number (counts and cost summed, reasons prefixed with the shard); status = aborted if
//! any shard aborted, else interrupted if any was, else complete (empty if all were empty);
//! stop reason = the least converged one (budget-exhausted > max-rounds >
//! anti-divergence-halt > all-self-reference > zero-findings), with a warning when they differ.

use super::assemble::sort_confirmed;
use super::*;
use crate::round::StopReason;
use crate::store::RunStatus;
use crate::target::{ShardError, ShardSpec, TargetKind};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};

/// Why reports cannot be merged (exit 2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MergeError {
    #[error("nothing to merge")]
    NoReports,
    #[error("{0}: the run is not finished (status running)")]
    NotFinished(String),
    #[error("{a} and {b} review different targets: {why}")]
    TargetMismatch { a: String, b: String, why: String },
    #[error("{a} and {b} are both shard {index}/{count}")]
    DuplicateShard {
        a: String,
        b: String,
        index: u32,
        count: u32,
    },
    #[error("{path} is covered by no shard (is a shard's report missing?)")]
    Uncovered { path: String },
    #[error("{path} is covered by two shards: {a} and {b}")]
    CoveredTwice { path: String, a: String, b: String },
    #[error("{report} covers {path}, which is not in the manifest")]
    NotInManifest { report: String, path: String },
    #[error("{report}: invalid shard {index}/{count}: {why}")]
    BadShard {
        report: String,
        index: u32,
        count: u32,
        why: ShardError,
    },
}

impl From<MergeError> for crate::errors::ExpectedError {
    fn from(e: MergeError) -> Self {
        Self::Merge(Box::new(e))
    }
}

/// One report to merge, with the name it is called by in errors (its file path).
pub struct MergeInput {
    pub name: String,
    pub report: Report,
}

struct Identity<'a> {
    kind: TargetKind,
    sha256: &'a str,
    files: &'a [String],
    index: u32,
    count: u32,
    assigned: &'a [String],
}

fn identity(r: &Report) -> Identity<'_> {
    match &r.shard {
        Some(s) => Identity {
            kind: r.target.kind,
            sha256: &s.manifest_sha256,
            files: &s.manifest_files,
            index: s.index,
            count: s.count,
            assigned: &s.files,
        },
        None => Identity {
            kind: r.target.kind,
            sha256: &r.target.sha256,
            files: &r.target.allowed_files,
            index: 1,
            count: 1,
            assigned: &r.target.allowed_files,
        },
    }
}

fn short(s: &str) -> &str {
    &s[..s.len().min(12)]
}

fn stop_rank(s: StopReason) -> u8 {
    match s {
        StopReason::ZeroFindings => 0,
        StopReason::AllSelfReference => 1,
        StopReason::AntiDivergenceHalt => 2,
        StopReason::MaxRounds => 3,
        StopReason::BudgetExhausted => 4,
    }
}

/// Check and combine shard reports. Inputs may come in any order.
pub fn merge_reports(mut inputs: Vec<MergeInput>) -> Result<Report, MergeError> {
    if inputs.is_empty() {
        return Err(MergeError::NoReports);
    }
    if let Some(i) = inputs
        .iter()
        .find(|i| i.report.status == RunStatus::Running)
    {
        return Err(MergeError::NotFinished(i.name.clone()));
    }
    // Every shard is checked like `--shard i/n` is (1 ≤ i ≤ n ≤ MAX_SHARDS).
    for i in &inputs {
        let id = identity(&i.report);
        if let Err(why) = ShardSpec::new(id.index, id.count) {
            return Err(MergeError::BadShard {
                report: i.name.clone(),
                index: id.index,
                count: id.count,
                why,
            });
        }
    }
    inputs.sort_by_key(|i| identity(&i.report).index);

    // Same target: kind, manifest sha256 and file list, shard count.
    let first = identity(&inputs[0].report);
    for other in &inputs[1..] {
        let id = identity(&other.report);
        let why = if id.kind != first.kind {
            Some(format!(
                "{} vs {} target",
                first.kind.as_str(),
                id.kind.as_str()
            ))
        } else if id.sha256 != first.sha256 {
            Some(format!(
                "sha256 {}… vs {}…",
                short(first.sha256),
                short(id.sha256)
            ))
        } else if id.files != first.files {
            Some(format!(
                "file lists differ ({} vs {} files)",
                first.files.len(),
                id.files.len()
            ))
        } else if id.count != first.count {
            Some(format!("split into {} vs {} shards", first.count, id.count))
        } else {
            None
        };
        if let Some(why) = why {
            return Err(MergeError::TargetMismatch {
                a: inputs[0].name.clone(),
                b: other.name.clone(),
                why,
            });
        }
    }
    for w in inputs.windows(2) {
        let (a, b) = (identity(&w[0].report), identity(&w[1].report));
        if a.index == b.index {
            return Err(MergeError::DuplicateShard {
                a: w[0].name.clone(),
                b: w[1].name.clone(),
                index: a.index,
                count: a.count,
            });
        }
    }

    // Every manifest file assigned to exactly one shard.
    let manifest: BTreeSet<&str> = first.files.iter().map(String::as_str).collect();
    let mut owner: BTreeMap<&str, &str> = BTreeMap::new();
    for input in &inputs {
        for f in identity(&input.report).assigned {
            if !manifest.contains(f.as_str()) {
                return Err(MergeError::NotInManifest {
                    report: input.name.clone(),
                    path: f.clone(),
                });
            }
            if let Some(prev) = owner.insert(f, &input.name) {
                return Err(MergeError::CoveredTwice {
                    path: f.clone(),
                    a: prev.to_string(),
                    b: input.name.clone(),
                });
            }
        }
    }
    if let Some(missing) = first.files.iter().find(|f| !owner.contains_key(f.as_str())) {
        return Err(MergeError::Uncovered {
            path: missing.clone(),
        });
    }

    Ok(combine(&inputs))
}

/// `shard i/n` of a report, as warnings and errors name it.
fn label(r: &Report) -> String {
    let id = identity(r);
    format!("shard {}/{}", id.index, id.count)
}

fn combine(inputs: &[MergeInput]) -> Report {
    let reports: Vec<&Report> = inputs.iter().map(|i| &i.report).collect();
    let head = reports[0];
    let first = identity(head);
    let outcome = Outcome::of(&reports);
    let found = Found::of(&reports);
    let by_severity = BySeverity::of(&found.confirmed);
    let coverage = merged_coverage(&reports);
    let mut cost = Cost::default();
    for r in &reports {
        cost.absorb(&r.cost);
    }
    let rounds = merged_rounds(&reports);
    let quality = merged_quality(&reports, head.quality.healthy_band, &found);
    let drift = reports.iter().any(|r| r.target.drift);
    let all_final = reports.iter().all(|r| r.target.sha256_final.is_some());
    Report {
        schema_version: SCHEMA_VERSION,
        arev_version: env!("CARGO_PKG_VERSION").to_string(),
        run_id: merged_run_id(&reports),
        run_dir: String::new(),
        status: outcome.status,
        stop_reason: outcome.stop_reason,
        abort_reason: outcome.aborted.and_then(|r| r.abort_reason),
        abort_detail: outcome.aborted.map(abort_detail),
        // The full manifest in place of the head shard's slice.
        target: ReportTarget {
            sha256: first.sha256.to_string(),
            sha256_final: (!drift && all_final).then(|| first.sha256.to_string()),
            drift,
            allowed_files: first.files.to_vec(),
            ..head.target.clone()
        },
        rounds,
        confirmed: found.confirmed,
        debunked: found.debunked,
        unresolved: found.unresolved,
        by_severity,
        coverage,
        cost,
        quality,
        warnings: outcome.warnings,
        shard: None,
        merged_from: merged_from(&reports),
        iterate: None,
        baseline: None,
        absent: vec![],
        degraded: vec![],
        suppressed: found.suppressed,
        incremental: None,
        cached_from: None,
        // The strictest gate any shard ran with: a merge never gates more leniently than a
        // shard would have on its own.
        fail_on: reports
            .iter()
            .filter_map(|r| r.fail_on)
            .reduce(crate::records::FailOn::strictest),
        prove: None,
        started_at: reports
            .iter()
            .map(|r| r.started_at.as_str())
            .min()
            .unwrap_or_default()
            .to_string(),
        finished_at: reports
            .iter()
            .map(|r| r.finished_at.as_str())
            .max()
            .unwrap_or_default()
            .to_string(),
        duration_ms: reports.iter().map(|r| r.duration_ms).max().unwrap_or(0),
    }
}

/// How the merged review ended: its status, stop and abort reasons, and the warnings (the
/// shards' own, each prefixed with the shard, after one when they stopped differently).
struct Outcome<'a> {
    status: RunStatus,
    stop_reason: Option<StopReason>,
    /// The first shard that aborted.
    aborted: Option<&'a Report>,
    warnings: Vec<String>,
}

impl<'a> Outcome<'a> {
    fn of(reports: &[&'a Report]) -> Self {
        let aborted = reports
            .iter()
            .copied()
            .find(|r| r.status == RunStatus::Aborted);
        let status = if aborted.is_some() {
            RunStatus::Aborted
        } else if reports.iter().any(|r| r.status == RunStatus::Interrupted) {
            RunStatus::Interrupted
        } else if reports.iter().all(|r| r.status == RunStatus::Empty) {
            RunStatus::Empty
        } else {
            RunStatus::Complete
        };
        let mut warnings: Vec<String> = Vec::new();
        let stops: Vec<StopReason> = reports.iter().filter_map(|r| r.stop_reason).collect();
        let stop_reason = if status == RunStatus::Complete {
            stops.iter().copied().max_by_key(|s| stop_rank(*s))
        } else {
            None
        };
        if stops.iter().any(|s| *s != stops[0]) {
            let each: Vec<String> = reports
                .iter()
                .filter_map(|r| {
                    r.stop_reason
                        .map(|s| format!("{} {}", label(r), s.as_str()))
                })
                .collect();
            warnings.push(format!(
                "the shards stopped for different reasons: {}",
                each.join(", ")
            ));
        }
        for r in reports {
            for w in &r.warnings {
                let w = format!("{}: {w}", label(r));
                if !warnings.contains(&w) {
                    warnings.push(w);
                }
            }
        }
        Self {
            status,
            stop_reason,
            aborted,
            warnings,
        }
    }
}

/// The merged abort detail: the aborted shard, its run id and its own detail.
fn abort_detail(r: &Report) -> String {
    format!(
        "{} ({}): {}",
        label(r),
        r.run_id,
        r.abort_detail.as_deref().unwrap_or("aborted")
    )
}

/// The findings of all shards, ids qualified with the shard; confirmed re-sorted by
/// severity, file and line, debunked and unresolved by round, file and line.
struct Found {
    confirmed: Vec<ReportFinding>,
    debunked: Vec<ReportFinding>,
    unresolved: Vec<ReportFinding>,
    suppressed: Vec<ReportFinding>,
}

impl Found {
    fn of(reports: &[&Report]) -> Self {
        let mut confirmed: Vec<ReportFinding> = Vec::new();
        let mut debunked: Vec<ReportFinding> = Vec::new();
        let mut unresolved: Vec<ReportFinding> = Vec::new();
        let mut suppressed: Vec<ReportFinding> = Vec::new();
        for r in reports {
            // Finding ids (`F1`) are local to a shard's rounds: qualify them with the shard
            // (`s2:F1`), so that they stay unique and point at the shard's round files.
            let id = identity(r);
            let qualify = |f: &ReportFinding| {
                let mut f = f.clone();
                if id.count > 1 {
                    f.id = format!("s{}:{}", id.index, f.id);
                }
                f
            };
            confirmed.extend(r.confirmed.iter().map(qualify));
            debunked.extend(r.debunked.iter().map(qualify));
            unresolved.extend(r.unresolved.iter().map(qualify));
            suppressed.extend(r.suppressed.iter().map(qualify));
        }
        sort_confirmed(&mut confirmed);
        for list in [&mut debunked, &mut unresolved] {
            list.sort_by(|a, b| (a.round, &a.file, a.line).cmp(&(b.round, &b.file, b.line)));
        }
        Self {
            confirmed,
            debunked,
            unresolved,
            suppressed,
        }
    }
}

/// Coverage: the union (a file reviewed by its shard wins over a listing elsewhere).
fn merged_coverage(reports: &[&Report]) -> Coverage {
    let mut files: BTreeMap<String, CoverageFile> = BTreeMap::new();
    for r in reports {
        for f in &r.coverage.files {
            match files.get(&f.path) {
                Some(prev) if prev.status == CoverageStatus::Reviewed => {}
                _ => {
                    files.insert(f.path.clone(), f.clone());
                }
            }
        }
    }
    let files: Vec<CoverageFile> = files.into_values().collect();
    Coverage {
        reviewed: files
            .iter()
            .filter(|f| f.status == CoverageStatus::Reviewed)
            .count() as u32,
        skipped: files.iter().filter(|f| f.reason.is_some()).count() as u32,
        carried_over: files
            .iter()
            .filter(|f| f.status == CoverageStatus::CarriedOver)
            .count() as u32,
        files,
    }
}

/// Rounds, combined by number: counts and cost summed, the longest duration, errors and
/// reasons prefixed with the shard.
fn merged_rounds(reports: &[&Report]) -> Vec<ReportRound> {
    let mut rounds: BTreeMap<u32, ReportRound> = BTreeMap::new();
    for r in reports {
        for rd in &r.rounds {
            let tag = label(r);
            let e = rounds.entry(rd.round).or_insert_with(|| ReportRound {
                round: rd.round,
                tier: rd.tier,
                per_pass: vec![],
                findings: 0,
                confirmed: 0,
                debunked: 0,
                unresolved: 0,
                errors: vec![],
                duration_ms: 0,
                cost_usd: 0.0,
                tokens: 0,
                unpriced_tokens: 0,
                decision: rd.decision.clone(),
                decision_reasons: vec![],
            });
            add_round(e, rd, &tag);
        }
    }
    rounds.into_values().collect()
}

/// Add one shard's round `rd` (called `tag`) into the combined round `e`.
fn add_round(e: &mut ReportRound, rd: &ReportRound, tag: &str) {
    e.tier = e.tier.max(rd.tier);
    if e.per_pass.len() < rd.per_pass.len() {
        e.per_pass.resize(rd.per_pass.len(), 0);
    }
    for (sum, n) in e.per_pass.iter_mut().zip(&rd.per_pass) {
        *sum += n;
    }
    e.findings += rd.findings;
    e.confirmed += rd.confirmed;
    e.debunked += rd.debunked;
    e.unresolved += rd.unresolved;
    e.errors
        .extend(rd.errors.iter().map(|x| format!("{tag}: {x}")));
    e.duration_ms = e.duration_ms.max(rd.duration_ms);
    e.cost_usd += rd.cost_usd;
    e.tokens += rd.tokens;
    e.unpriced_tokens += rd.unpriced_tokens;
    if e.decision != rd.decision {
        // Any shard going on means the combined round did not end the review.
        if rd.decision == "continue" || e.decision == "continue" {
            e.decision = "continue".into();
        } else {
            e.decision = format!("{}/{}", e.decision, rd.decision);
        }
    }
    e.decision_reasons
        .extend(rd.decision_reasons.iter().map(|x| format!("{tag}: {x}")));
}

/// Quality: the debunk rate of the merged findings in the head's band, discovery curves
/// summed, escalations prefixed with the shard, agent errors summed.
fn merged_quality(reports: &[&Report], band: [f64; 2], found: &Found) -> Quality {
    let (debunk_rate, in_band) =
        Quality::debunk_rate(found.confirmed.len(), found.debunked.len(), band);
    let mut curve: Vec<u32> = Vec::new();
    let mut escalations = Vec::new();
    let mut agent_errors = 0;
    for r in reports {
        if curve.len() < r.quality.discovery_curve.len() {
            curve.resize(r.quality.discovery_curve.len(), 0);
        }
        for (sum, n) in curve.iter_mut().zip(&r.quality.discovery_curve) {
            *sum += n;
        }
        escalations.extend(
            r.quality
                .escalations
                .iter()
                .map(|e| format!("{}: {e}", label(r))),
        );
        agent_errors += r.quality.agent_errors;
    }
    Quality {
        debunk_rate,
        healthy_band: band,
        in_band,
        discovery_curve: curve,
        escalations,
        agent_errors,
    }
}

/// `merged-` and the first 6 bytes of the sha256 of the shards' sorted run ids.
fn merged_run_id(reports: &[&Report]) -> String {
    let mut ids: Vec<&str> = reports.iter().map(|r| r.run_id.as_str()).collect();
    ids.sort_unstable();
    let digest = Sha256::digest(ids.join("\n").as_bytes());
    format!("merged-{}", hex::encode(&digest[..6]))
}

/// What the merged report records of each shard.
fn merged_from(reports: &[&Report]) -> Vec<MergedShard> {
    reports
        .iter()
        .map(|r| {
            let id = identity(r);
            MergedShard {
                run_id: r.run_id.clone(),
                run_dir: r.run_dir.clone(),
                index: id.index,
                count: id.count,
                status: r.status,
                stop_reason: r.stop_reason,
                abort_reason: r.abort_reason,
                files: id.assigned.to_vec(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{shard, ALL};
    use super::*;

    fn input(r: Report) -> MergeInput {
        MergeInput {
            name: format!("s{}.json", r.shard.as_ref().map_or(0, |s| s.index)),
            report: r,
        }
    }

    #[test]
    fn combines_shards_into_the_full_manifest() {
        let m = merge_reports(vec![
            input(shard(2, 2, &["c.rs", "d.rs"], RunStatus::Complete)),
            input(shard(1, 2, &["a.rs", "b.rs"], RunStatus::Complete)),
        ])
        .unwrap();
        assert_eq!(m.status, RunStatus::Complete);
        assert_eq!(m.target.sha256, "full");
        assert_eq!(m.target.allowed_files, ALL);
        assert_eq!(m.coverage.reviewed, 4);
        assert_eq!(m.coverage.skipped, 1);
        assert_eq!(m.coverage.files.len(), 5);
        assert_eq!(m.confirmed.len(), 4);
        assert_eq!(m.by_severity.high, 4);
        assert_eq!(m.confirmed[0].id, "s1:F1");
        assert_eq!(m.confirmed[3].id, "s2:F1");
        assert_eq!(m.cost.usd, 1.0);
        assert_eq!(m.rounds.len(), 1);
        assert_eq!(m.rounds[0].per_pass, [2, 0]);
        assert_eq!(m.rounds[0].tokens, 20);
        assert_eq!(m.merged_from.len(), 2);
        assert_eq!(m.merged_from[0].index, 1);
        assert_eq!(m.started_at, "2026-01-01T00:00:01Z");
        assert_eq!(m.finished_at, "2026-01-01T00:01:02Z");
        assert!(m.shard.is_none());
        assert!(m.run_id.starts_with("merged-"));
    }

    #[test]
    fn refuses_gaps_overlaps_duplicates_and_other_targets() {
        let a = || shard(1, 2, &["a.rs", "b.rs"], RunStatus::Complete);
        let b = || shard(2, 2, &["c.rs", "d.rs"], RunStatus::Complete);
        let e = merge_reports(vec![input(a())]).unwrap_err();
        assert_eq!(
            e,
            MergeError::Uncovered {
                path: "c.rs".into()
            }
        );
        let mut overlap = b();
        overlap.shard.as_mut().unwrap().files.push("b.rs".into());
        let e = merge_reports(vec![input(a()), input(overlap)]).unwrap_err();
        assert!(
            matches!(e, MergeError::CoveredTwice { ref path, .. } if path == "b.rs"),
            "{e}"
        );
        let e = merge_reports(vec![input(a()), input(a())]).unwrap_err();
        assert!(
            matches!(e, MergeError::DuplicateShard { index: 1, .. }),
            "{e}"
        );
        let mut other = b();
        other.shard.as_mut().unwrap().manifest_sha256 = "else".into();
        let e = merge_reports(vec![input(a()), input(other)]).unwrap_err();
        assert!(e.to_string().contains("different targets"), "{e}");
        let mut three = b();
        three.shard.as_mut().unwrap().count = 3;
        let e = merge_reports(vec![input(a()), input(three)]).unwrap_err();
        assert!(e.to_string().contains("2 vs 3 shards"), "{e}");
        let mut stray = b();
        stray.shard.as_mut().unwrap().files.push("z.rs".into());
        let e = merge_reports(vec![input(a()), input(stray)]).unwrap_err();
        assert!(matches!(e, MergeError::NotInManifest { .. }), "{e}");
        let mut seven = b();
        seven.shard.as_mut().unwrap().index = 7;
        let e = merge_reports(vec![input(a()), input(seven)]).unwrap_err();
        assert!(
            matches!(
                e,
                MergeError::BadShard {
                    index: 7,
                    count: 2,
                    ..
                }
            ),
            "{e:?}"
        );
        assert!(e.to_string().contains("shard 7/2"), "{e}");
        let mut zero = a();
        zero.shard.as_mut().unwrap().index = 0;
        assert!(matches!(
            merge_reports(vec![input(zero), input(b())]).unwrap_err(),
            MergeError::BadShard { index: 0, .. }
        ));
        let running = shard(2, 2, &["c.rs", "d.rs"], RunStatus::Running);
        let e = merge_reports(vec![input(a()), input(running)]).unwrap_err();
        assert!(matches!(e, MergeError::NotFinished(_)), "{e}");
        assert_eq!(merge_reports(vec![]).unwrap_err(), MergeError::NoReports);
    }

    #[test]
    fn an_aborted_shard_makes_the_merge_aborted() {
        let m = merge_reports(vec![
            input(shard(1, 2, &["a.rs", "b.rs"], RunStatus::Complete)),
            input(shard(2, 2, &["c.rs", "d.rs"], RunStatus::Aborted)),
        ])
        .unwrap();
        assert_eq!(m.status, RunStatus::Aborted);
        assert_eq!(m.stop_reason, None);
        assert_eq!(
            m.abort_reason,
            Some(crate::store::AbortReason::AgentDispatchUnavailable)
        );
        assert!(m.abort_detail.unwrap().starts_with("shard 2/2 (run-2)"));
    }

    #[test]
    fn the_least_converged_stop_reason_wins() {
        let mut b = shard(2, 2, &["c.rs", "d.rs"], RunStatus::Complete);
        b.stop_reason = Some(StopReason::MaxRounds);
        let m = merge_reports(vec![
            input(shard(1, 2, &["a.rs", "b.rs"], RunStatus::Complete)),
            input(b),
        ])
        .unwrap();
        assert_eq!(m.stop_reason, Some(StopReason::MaxRounds));
        assert!(
            m.warnings[0].contains("different reasons"),
            "{:?}",
            m.warnings
        );
    }
}
