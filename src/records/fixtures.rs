//! Test fixtures: hand-built reports for the pure report functions (merge, renderers).

use super::*;

/// The manifest of the fixture shards.
pub(crate) const ALL: [&str; 4] = ["a.rs", "b.rs", "c.rs", "d.rs"];

/// A confirmed finding at `file:2`, category `logic`.
pub(crate) fn finding(file: &str, sev: Severity) -> ReportFinding {
    ReportFinding {
        fingerprint: format!("fp-{file}"),
        id: "F1".into(),
        round: 1,
        severity: sev,
        enthusiast_severity: sev,
        file: Some(file.into()),
        line: Some(2),
        section: None,
        category: "logic".into(),
        description: "d".into(),
        evidence: "e".into(),
        winner: None,
        resolution: None,
        edit_instruction: None,
        cites: vec![],
        context: vec![],
        found_by_passes: vec![1],
        found_by: vec!["claude".into()],
        ruled_by: None,
        baseline_state: None,
        carried_over_from: None,
        suppression: None,
        proof: None,
    }
}

/// Shard `index/count` of `ALL` covering `files`, one high finding per file.
#[allow(clippy::too_many_lines)] // one literal report, field by field
pub(crate) fn shard(index: u32, count: u32, files: &[&str], status: RunStatus) -> Report {
    let strings = |x: &[&str]| x.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    Report {
        schema_version: SCHEMA_VERSION,
        arev_version: "0".into(),
        run_id: format!("run-{index}"),
        run_dir: format!("/runs/run-{index}"),
        status,
        stop_reason: (status == RunStatus::Complete).then_some(StopReason::ZeroFindings),
        abort_reason: (status == RunStatus::Aborted)
            .then_some(AbortReason::AgentDispatchUnavailable),
        abort_detail: (status == RunStatus::Aborted).then(|| "no Read".into()),
        target: ReportTarget {
            kind: TargetKind::Manifest,
            display: "*.rs".into(),
            sha256: format!("slice-{index}"),
            sha256_final: Some(format!("slice-{index}")),
            drift: false,
            base: None,
            target_type: TargetType::Code,
            mode: Mode::Full,
            allowed_files: strings(files),
            commit: None,
            context_sha: None,
        },
        rounds: vec![ReportRound {
            round: 1,
            tier: Tier::Opus,
            per_pass: vec![1, 0],
            findings: 1,
            confirmed: 1,
            debunked: 0,
            unresolved: 0,
            errors: vec![],
            duration_ms: 5,
            cost_usd: 0.5,
            tokens: 10,
            unpriced_tokens: 0,
            decision: "stop".into(),
            decision_reasons: vec!["r".into()],
        }],
        confirmed: files.iter().map(|f| finding(f, Severity::High)).collect(),
        debunked: vec![],
        unresolved: vec![],
        by_severity: BySeverity::default(),
        coverage: Coverage {
            reviewed: files.len() as u32,
            skipped: 1,
            carried_over: 0,
            files: files
                .iter()
                .map(|f| CoverageFile {
                    path: f.to_string(),
                    status: CoverageStatus::Reviewed,
                    reason: None,
                    glob: None,
                    sha256: None,
                    patch_sha256: None,
                })
                .chain(std::iter::once(CoverageFile {
                    path: "blob.bin".into(),
                    status: CoverageStatus::Skipped,
                    reason: Some(SkipReason::Binary),
                    glob: None,
                    sha256: None,
                    patch_sha256: None,
                }))
                .collect(),
        },
        cost: Cost {
            usd: 0.5,
            tokens: 10,
            ..Cost::default()
        },
        quality: Quality {
            debunk_rate: Some(0.0),
            healthy_band: [0.2, 0.35],
            in_band: Some(false),
            discovery_curve: vec![1],
            escalations: vec![],
            agent_errors: 0,
        },
        warnings: vec![],
        shard: Some(ShardInfo {
            index,
            count,
            manifest_sha256: "full".into(),
            manifest_files: strings(&ALL),
            files: strings(files),
        }),
        merged_from: vec![],
        iterate: None,
        baseline: None,
        absent: vec![],
        degraded: vec![],
        suppressed: vec![],
        incremental: None,
        cached_from: None,
        fail_on: None,
        prove: None,
        started_at: format!("2026-01-01T00:00:0{index}Z"),
        finished_at: format!("2026-01-01T00:01:0{index}Z"),
        duration_ms: 100 * u64::from(index),
    }
}

/// A run's cost with an agent on a model without a price: `mixed`, a priced Enthusiast
/// (`claude`, $0.02 for 300 tokens) beside the unpriced Adversary (`local` on
/// `local-coder`, 150 tokens); else the unpriced Adversary alone.
pub(crate) fn unpriced_cost(mixed: bool) -> Cost {
    let line = |usd: f64, tokens: u64, unpriced_tokens: u64| CostLine {
        usd,
        tokens,
        unpriced_tokens,
        dispatches: 1,
        ..CostLine::default()
    };
    let adversary = line(0.0, 150, 150);
    let mut cost = Cost {
        usd: 0.0,
        tokens: 150,
        unpriced_tokens: 150,
        unpriced: vec![UnpricedModel {
            agent: "local".into(),
            model: "local-coder".into(),
            tokens: 150,
        }],
        ..Cost::default()
    };
    cost.by_role.insert("adversary".into(), adversary.clone());
    cost.by_agent.insert("local".into(), adversary);
    if mixed {
        let enthusiast = line(0.02, 300, 0);
        cost.usd += 0.02;
        cost.tokens += 300;
        cost.by_role.insert("enthusiast".into(), enthusiast.clone());
        cost.by_agent.insert("claude".into(), enthusiast);
    }
    cost
}
