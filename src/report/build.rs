//! Build report.json from the rounds: findings with rulings, severity counts, coverage, cost, quality.

use super::assemble::{sort_confirmed, HEALTHY_BAND};
use super::*;
use crate::findings::{fingerprint_with, Texts};
use crate::round::{Judged, ReviewEnd, ReviewResult};
use crate::store::Meta;
use crate::target::PinnedTarget;
use std::path::Path;

/// What the report is built from.
pub struct BuildInput<'a> {
    pub result: &'a ReviewResult,
    pub target: &'a PinnedTarget,
    pub meta: &'a Meta,
    pub run_dir: &'a Path,
    pub enthusiast_agent: &'a str,
    pub judge_agent: &'a str,
    pub duration_ms: u64,
}

/// Who found `j` and who ruled on it, from the round's dispatch records (the attempt of each
/// pass, and of the Judge, whose answer passed the schema gate); the plan's names when the
/// records are missing.
fn attribution(
    j: &Judged,
    rounds: &[crate::round::RoundRecord],
    enthusiast: &str,
    judge: &str,
) -> (Vec<String>, Option<String>) {
    use crate::findings::Role;
    let rec = rounds.iter().find(|r| r.round == j.round);
    let answered = |role: Role, pass: Option<u32>| {
        rec.and_then(|r| {
            r.dispatches
                .iter()
                .rev()
                .find(|d| {
                    d.role == role && d.pass == pass && d.gates.schema.as_deref() == Some("ok")
                })
                .map(|d| d.outcome.agent.as_str())
        })
    };
    let mut found_by: Vec<String> = vec![];
    for p in &j.finding.passes {
        let name = answered(Role::Enthusiast, Some(*p)).unwrap_or(enthusiast);
        if !found_by.iter().any(|n| n == name) {
            found_by.push(name.to_string());
        }
    }
    if found_by.is_empty() {
        found_by.push(enthusiast.to_string());
    }
    let ruled_by = j
        .ruling
        .as_ref()
        .map(|_| answered(Role::Judge, None).unwrap_or(judge).to_string());
    (found_by, ruled_by)
}

fn entry(
    j: &Judged,
    spec_doc: Option<&str>,
    root: &Path,
    texts: &Texts,
    rounds: &[crate::round::RoundRecord],
    enthusiast: &str,
    judge: &str,
) -> ReportFinding {
    let (found_by, ruled_by) = attribution(j, rounds, enthusiast, judge);
    let f = &j.finding.finding;
    let r = j.ruling.as_ref();
    let file = r.and_then(|r| r.file.clone()).or_else(|| f.file.clone());
    let line = r.and_then(|r| r.line).or(f.line);
    // Spec track: agents name sections; every output points at the document and the line
    // (a section named alone carries its heading's line from the membership gate).
    let (file, section) = match spec_doc {
        Some(doc) => {
            let section = file.filter(|s| s.trim_start().starts_with('#'));
            (Some(doc.to_string()), section)
        }
        None => (file, None),
    };
    let text = match (&file, line) {
        (Some(p), Some(_)) => texts.get(root, p),
        _ => None,
    };
    ReportFinding {
        fingerprint: fingerprint_with(
            text.as_deref(),
            line,
            file.as_deref(),
            &f.category,
            &f.description,
        ),
        id: f.id.clone(),
        round: j.round,
        severity: r
            .and_then(|r| r.final_severity.severity())
            .unwrap_or(f.severity),
        enthusiast_severity: f.severity,
        file,
        line,
        section,
        category: f.category.clone(),
        description: f.description.clone(),
        evidence: f.evidence.clone(),
        winner: r.map(|r| r.winner),
        resolution: r.map(|r| r.resolution.clone()),
        edit_instruction: r.and_then(|r| r.edit_instruction.clone()),
        cites: r.map(|r| r.cites.clone()).unwrap_or_default(),
        context: context_of(f, r),
        found_by_passes: j.finding.passes.clone(),
        found_by,
        ruled_by,
        baseline_state: None,
        carried_over_from: None,
        suppression: None,
        proof: None,
    }
}

/// The finding's context citations, then its ruling's, each once.
fn context_of(
    f: &crate::findings::Finding,
    r: Option<&crate::findings::Ruling>,
) -> Vec<crate::records::ContextCite> {
    let mut out = f.context.clone();
    for c in r.into_iter().flat_map(|r| &r.context) {
        if !out.contains(c) {
            out.push(c.clone());
        }
    }
    out
}

/// The category of a finding about a change arev could not review.
pub const UNREVIEWED_CHANGE: &str = "unreviewed-change";

/// File name endings of text a person reviews as code or configuration: a binary skip of
/// such a file is something the change chose, not a picture.
const SOURCE_ENDINGS: &[&str] = &[
    ".rs",
    ".c",
    ".h",
    ".cc",
    ".cpp",
    ".cxx",
    ".hpp",
    ".hh",
    ".go",
    ".py",
    ".pyi",
    ".rb",
    ".js",
    ".jsx",
    ".mjs",
    ".cjs",
    ".ts",
    ".tsx",
    ".java",
    ".kt",
    ".kts",
    ".scala",
    ".swift",
    ".m",
    ".mm",
    ".cs",
    ".fs",
    ".php",
    ".pl",
    ".pm",
    ".sh",
    ".bash",
    ".zsh",
    ".fish",
    ".ps1",
    ".lua",
    ".r",
    ".sql",
    ".html",
    ".htm",
    ".css",
    ".scss",
    ".vue",
    ".svelte",
    ".ex",
    ".exs",
    ".erl",
    ".hs",
    ".ml",
    ".clj",
    ".dart",
    ".zig",
    ".nim",
    ".toml",
    ".yaml",
    ".yml",
    ".json",
    ".xml",
    ".md",
    ".txt",
    ".cfg",
    ".ini",
    ".gradle",
    ".cmake",
    ".mk",
    ".tf",
    ".proto",
    "Makefile",
    "Dockerfile",
    ".gitattributes",
    ".gitignore",
];

/// Why a skipped file of a change is an unreviewed change — a reason the change itself
/// controls (its size, binary bytes in a source file, a path under `.arev/`) — or None for
/// a skip decided by trusted inputs (excludes, the base's attributes, lockfiles) or that
/// holds no reviewable content.
pub fn unreviewed_why(path: &str, reason: crate::target::SkipReason) -> Option<&'static str> {
    use crate::target::SkipReason as R;
    match reason {
        R::TooLarge => Some("it is larger than the size cap (`max_file_bytes`)"),
        R::Binary if SOURCE_ENDINGS.iter().any(|e| path.ends_with(e)) => {
            Some("it holds binary bytes, though its name says it is source")
        }
        R::ArevDir => {
            Some("it is under `.arev/`, arev's own directory, which is never reviewed as code")
        }
        _ => None,
    }
}

/// One high finding per changed file a diff review skipped for a reason the change
/// controls (docs/contracts.md §14.1): it gates like a defect, so a change cannot choose to go
/// unreviewed. A change under `.arev/` counts only when the tree under review is not the
/// trusted source of repository inputs (`--repo-config base|ignore`): with `worktree` it is
/// the user's own configuration.
fn unreviewed_findings(target: &PinnedTarget, trusted_tree: bool) -> Vec<ReportFinding> {
    if target.kind != crate::target::TargetKind::Diff {
        return vec![];
    }
    target
        .skipped
        .iter()
        .filter(|s| !(trusted_tree && s.reason == crate::target::SkipReason::ArevDir))
        .filter_map(|s| Some((s, unreviewed_why(&s.path, s.reason)?)))
        .enumerate()
        .map(|(i, (s, why))| ReportFinding {
            fingerprint: fingerprint_with(
                None,
                None,
                Some(&s.path),
                UNREVIEWED_CHANGE,
                s.reason.as_str(),
            ),
            id: format!("U{}", i + 1),
            round: 0,
            severity: crate::findings::Severity::High,
            enthusiast_severity: crate::findings::Severity::High,
            file: Some(s.path.clone()),
            line: None,
            section: None,
            category: UNREVIEWED_CHANGE.into(),
            description: format!(
                "{} changed but was not reviewed: {why} (skipped: {}). A change arev cannot review gates like a defect: review it by hand, or leave it out through trusted configuration (`--exclude`, `[review] exclude`, the base branch's `.gitattributes`).",
                s.path,
                s.reason.as_str()
            ),
            evidence: String::new(),
            winner: None,
            resolution: None,
            edit_instruction: None,
            cites: vec![],
            context: vec![],
            found_by_passes: vec![],
            found_by: vec![],
            ruled_by: None,
            baseline_state: None,
            carried_over_from: None,
            suppression: None,
            proof: None,
        })
        .collect()
}

/// Build the report. Pure apart from reading flagged lines for fingerprints.
pub fn build_report(input: &BuildInput<'_>) -> Report {
    let BuildInput {
        result,
        target,
        meta,
        ..
    } = input;
    let mut found = Found::of(input);
    let by_severity = BySeverity::of(&found.confirmed);
    let completed = matches!(result.end, ReviewEnd::Stopped(_));
    let coverage = coverage_of(target, completed);
    // `--prove`: each confirmed finding's evidence; the Provers are priced like any agent.
    let proof = result.proof.as_ref();
    if let Some(p) = proof {
        for f in &mut found.confirmed {
            f.proof = p.evidence(f.round, &f.id).cloned();
        }
    }
    let prover_dispatches = proof.into_iter().flat_map(|p| &p.dispatches);
    let cost = Cost::from_dispatches(
        result
            .rounds
            .iter()
            .flat_map(|r| &r.dispatches)
            .chain(prover_dispatches),
    );
    let quality = quality_of(result, found.confirmed.len(), found.debunked.len());
    let (stop_reason, abort_reason, abort_detail) = match &result.end {
        ReviewEnd::Stopped(s) => (Some(*s), None, None),
        ReviewEnd::Aborted(a) => (None, Some(a.reason()), Some(a.detail())),
        ReviewEnd::Interrupted | ReviewEnd::Empty => (None, None, None),
    };
    Report {
        schema_version: SCHEMA_VERSION,
        arev_version: env!("CARGO_PKG_VERSION").to_string(),
        run_id: meta.run_id.clone(),
        run_dir: input.run_dir.display().to_string(),
        status: meta.status,
        stop_reason,
        abort_reason,
        abort_detail,
        target: ReportTarget::new(target, &meta.target),
        rounds: result.rounds.iter().map(report_round).collect(),
        confirmed: found.confirmed,
        debunked: found.debunked,
        unresolved: found.unresolved,
        by_severity,
        coverage,
        cost,
        quality,
        warnings: result
            .warnings
            .iter()
            .chain(proof.into_iter().flat_map(|p| &p.warnings))
            .cloned()
            .collect(),
        shard: None,
        merged_from: vec![],
        iterate: None,
        baseline: None,
        absent: vec![],
        degraded: result
            .rounds
            .iter()
            .flat_map(|r| r.degraded.iter().cloned())
            .collect(),
        suppressed: found.suppressed,
        incremental: None,
        cached_from: None,
        fail_on: meta.fail_on,
        prove: proof.map(|p| p.summary.clone()),
        started_at: meta.started_at.clone(),
        finished_at: meta.finished_at.clone().unwrap_or_default(),
        duration_ms: input.duration_ms,
    }
}

/// The review's findings by ruling: confirmed (sorted), debunked, unresolved, and the
/// suppressed ones (never judged, each fingerprint once).
struct Found {
    confirmed: Vec<ReportFinding>,
    debunked: Vec<ReportFinding>,
    unresolved: Vec<ReportFinding>,
    suppressed: Vec<ReportFinding>,
}

impl Found {
    fn of(input: &BuildInput<'_>) -> Self {
        let BuildInput { result, target, .. } = input;
        let mut confirmed = vec![];
        let mut debunked = vec![];
        let mut unresolved = vec![];
        let spec_doc = (target.target_type == crate::target::TargetType::Spec)
            .then(|| target.files.first().map(|d| d.path.as_str()))
            .flatten();
        let entry_of = |j: &Judged| {
            entry(
                j,
                spec_doc,
                &target.root,
                &result.texts,
                &result.rounds,
                input.enthusiast_agent,
                input.judge_agent,
            )
        };
        for j in &result.judged {
            let e = entry_of(j);
            match &j.ruling {
                Some(r) if r.is_confirmed() => confirmed.push(e),
                Some(_) => debunked.push(e),
                None => unresolved.push(e),
            }
        }
        // A review with a verdict (or nothing reviewable) also reports the changes it could
        // not review.
        if matches!(result.end, ReviewEnd::Stopped(_) | ReviewEnd::Empty) {
            let trusted_tree = input
                .meta
                .repo_inputs
                .as_ref()
                .is_none_or(|r| r.source == crate::config::RepoSource::Worktree);
            confirmed.extend(unreviewed_findings(target, trusted_tree));
        }
        sort_confirmed(&mut confirmed);
        // Suppressed findings (never judged), each fingerprint once.
        let mut suppressed: Vec<ReportFinding> = vec![];
        for s in &result.suppressed {
            if suppressed.iter().any(|f| f.fingerprint == s.fingerprint) {
                continue;
            }
            let j = Judged {
                round: s.round,
                finding: s.finding.clone(),
                ruling: None,
            };
            let mut e = entry_of(&j);
            e.suppression = Some(s.suppression.clone());
            suppressed.push(e);
        }
        Self {
            confirmed,
            debunked,
            unresolved,
            suppressed,
        }
    }
}

/// Coverage: every reviewed and skipped file of the target, sorted by path (reviewed ones
/// count only when the review `completed`).
fn coverage_of(target: &PinnedTarget, completed: bool) -> Coverage {
    // Per file: its sha256 and, for a diff, the sha256 of its section of diff.patch — what a
    // later `--incremental` run compares against.
    let sections = crate::target::patch_sections(target);
    let mut files: Vec<CoverageFile> = target
        .files
        .iter()
        .map(|f| CoverageFile {
            path: f.path.clone(),
            status: CoverageStatus::Reviewed,
            reason: None,
            glob: None,
            sha256: Some(f.sha256.clone()),
            patch_sha256: sections.get(&f.path).cloned(),
        })
        .chain(target.skipped.iter().map(|s| CoverageFile {
            path: s.path.clone(),
            status: CoverageStatus::Skipped,
            reason: Some(s.reason),
            glob: s.glob.clone(),
            sha256: None,
            patch_sha256: None,
        }))
        .collect();
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Coverage {
        reviewed: if completed {
            target.files.len() as u32
        } else {
            0
        },
        skipped: target.skipped.len() as u32,
        carried_over: 0,
        files: files
            .into_iter()
            .map(|mut f| {
                if !completed && f.status == CoverageStatus::Reviewed {
                    // An aborted review covered nothing: say so instead of claiming coverage.
                    f.status = CoverageStatus::Skipped;
                }
                f
            })
            .collect(),
    }
}

/// Quality: the debunk rate in the healthy band, the discovery curve, the escalations, and
/// the agent errors (recorded errors and dispatches that failed a gate).
fn quality_of(result: &ReviewResult, confirmed: usize, debunked: usize) -> Quality {
    let mut agent_errors = 0;
    for r in &result.rounds {
        agent_errors += r.errors.len() as u32;
        for d in &r.dispatches {
            // A dispatch arev cancelled (its work would have been thrown away) is no error.
            let auth = d.gates.authenticity.as_deref();
            if !matches!(auth, Some("ok" | "cancelled"))
                || d.gates.schema.as_deref().is_some_and(|s| s != "ok")
            {
                agent_errors += 1;
            }
        }
    }
    let (debunk_rate, in_band) = Quality::debunk_rate(confirmed, debunked, HEALTHY_BAND);
    Quality {
        debunk_rate,
        healthy_band: HEALTHY_BAND,
        in_band,
        discovery_curve: result.rounds.iter().map(|r| r.counts.novel).collect(),
        escalations: result.escalations.clone(),
        agent_errors,
    }
}

/// A round of the report from its record.
fn report_round(r: &crate::round::RoundRecord) -> ReportRound {
    ReportRound {
        round: r.round,
        tier: r.tier,
        per_pass: r.counts.per_pass.clone(),
        findings: r.counts.novel,
        confirmed: r.counts.confirmed,
        debunked: r.counts.debunked,
        unresolved: r.counts.unresolved,
        errors: r.errors.iter().map(ToString::to_string).collect(),
        duration_ms: r.duration_ms,
        cost_usd: r.cost_usd,
        tokens: r.tokens,
        unpriced_tokens: r.unpriced_tokens,
        decision: r.decision.action.to_string(),
        decision_reasons: r.decision.reasons.clone(),
    }
}
