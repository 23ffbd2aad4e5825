//! `arev run --iterate` (SPEC §9): review the target inside an isolated worktree, have the
//! Fixer apply the confirmed rulings, revert changes outside ALLOWED_FILES, commit, verify,
//! re-pin and review again, until the outer loop stops for one reason. Never merges.
//!
//! Layout: `<run>/meta.json` + `<run>/report.json` describe the iterate run; every review
//! is a full run dir at `<run>/iterations/<i>/` (meta.json, round-N.json, agents/,
//! report.json), with the Fixer's dispatch under `agents/fix/`, its records in `fix.json`
//! and the verify output in `verify.log`.

use super::review::{emit, exit_code, finalize, init_run_dir, now, runtime, write_report};
use crate::cli::RunArgs;
use crate::errors::ExpectedError;
use crate::exit_codes;
use crate::findings::{FixerOutput, Severity, SkippedFix, Tier};
use crate::iterate::{
    after_fix, after_review, changed_paths, commit_all, commit_message, create_worktree,
    discard_all, remove_worktree, revert_outside, run_verify, seed_worktree, FixFacts, FixItem,
    FixReport, IterateReport, IterateStop, IterationReport, ReviewFacts, VerifyReport, Worktree,
};
use crate::output;
use crate::report::{build_report, BuildInput, Cost, Report, ReportFinding, ReportTarget};
use crate::resolve::RunPlan;
use crate::round::{run_fixer, run_review, FixerEnd, Progress, ReviewEnd, ReviewResult};
use crate::store::{
    add_git_exclude, create_run_dir, write_json_atomic, Meta, MetaIterate, RunDir, RunStatus,
};
use crate::target::{resolve, TargetKind, TargetRequest};
use serde::Serialize;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Instant;
use tokio_util::sync::CancellationToken;

/// `--max-iterations` when not given.
pub const DEFAULT_MAX_ITERATIONS: u32 = 5;

/// How the iterate run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
enum End {
    Stopped(IterateStop),
    Aborted { reason: String, detail: String },
    Interrupted,
}

impl End {
    fn aborted(reason: &str, detail: impl Into<String>) -> Self {
        Self::Aborted {
            reason: reason.to_string(),
            detail: detail.into(),
        }
    }
}

/// A confirmed ruling as the Fixer sees it inside `<rulings>`.
#[derive(Debug, Clone, Serialize)]
struct FixerRuling<'a> {
    id: String,
    severity: Severity,
    file: Option<&'a str>,
    line: Option<u32>,
    category: &'a str,
    description: &'a str,
    evidence: &'a str,
    resolution: Option<&'a str>,
    edit_instruction: Option<&'a str>,
}

/// Everything fixed for the loop.
struct Setup<'a> {
    plan: &'a RunPlan,
    run: &'a RunDir,
    wt: &'a Worktree,
    /// The user's cwd mapped into the worktree (targets and `--verify` run from there).
    wt_cwd: PathBuf,
    /// The TARGET arguments, absolute paths mapped into the worktree.
    args: Vec<String>,
    /// For diff targets: `--base`, else the branch's start commit.
    base: Option<String>,
    max_iterations: u32,
    quality_critical: bool,
    verify: Option<String>,
    progress: Progress,
    pinned_sha: String,
}

/// What the loop produced.
struct Outcome {
    end: End,
    iterations: Vec<IterationReport>,
    last_report: Option<Report>,
    last_meta: Option<Meta>,
    cost: Cost,
    warnings: Vec<String>,
}

pub(super) fn iterate_command(
    args: &RunArgs,
    plan: &RunPlan,
    cwd: &Path,
    started: Instant,
) -> Result<i32, ExpectedError> {
    let Some(target) = plan.target.clone() else {
        return Err(ExpectedError::Usage(
            "--iterate: there is nothing to review".into(),
        ));
    };
    let Some(git) = plan.git_common_dir.as_deref().filter(|_| target.in_repo) else {
        return Err(ExpectedError::Usage(
            "--iterate needs a git repository: the fixes go to a worktree on a new branch".into(),
        ));
    };
    // The worktree lives under `.arev/`, which must stay out of the user's `git status`.
    add_git_exclude(git).map_err(|e| ExpectedError::write(git.join("info/exclude"), e))?;
    let run = create_run_dir(&plan.runs_base, &plan.display)
        .map_err(|e| ExpectedError::write(&plan.runs_base, e))?;
    let mut meta = match init_run_dir(plan, &target, &run, false) {
        Ok(m) => m,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&run.path);
            return Err(e);
        }
    };
    let wt = match create_worktree(&plan.root, run.id.as_str()) {
        Ok(w) => w,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&run.path);
            return Err(ExpectedError::Usage(e.to_string()));
        }
    };
    let snapshot = match seed_worktree(&plan.root, &wt) {
        Ok(s) => s,
        Err(e) => {
            remove_worktree(&plan.root, &wt);
            let _ = std::fs::remove_dir_all(&run.path);
            return Err(ExpectedError::Usage(e.to_string()));
        }
    };
    let max_iterations = args.max_iterations.unwrap_or(DEFAULT_MAX_ITERATIONS);
    meta.iterate = Some(MetaIterate {
        branch: wt.branch.clone(),
        worktree: wt.path.display().to_string(),
        base_commit: wt.base_commit.clone(),
        iterations_completed: 0,
        max_iterations,
    });
    write_json_atomic(&run.meta(), &meta).map_err(|e| ExpectedError::write(run.meta(), e))?;
    for line in wt.instructions(&plan.root).iter().take(1) {
        output::note(&format!("iterate: {line}"));
    }

    let cwd = cwd.canonicalize().unwrap_or_else(|_| cwd.to_path_buf());
    let rel = cwd.strip_prefix(&plan.root).unwrap_or(Path::new(""));
    let setup = Setup {
        plan,
        run: &run,
        wt: &wt,
        wt_cwd: wt.path.join(rel),
        args: args
            .targets
            .iter()
            .map(|a| map_into(a, &plan.root, &wt.path))
            .collect(),
        base: (target.kind == TargetKind::Diff)
            .then(|| args.base.clone().unwrap_or_else(|| wt.base_commit.clone())),
        max_iterations,
        quality_critical: args.quality_critical,
        verify: args.verify.clone(),
        progress: Progress::new(plan.outputs.quiet),
        pinned_sha: target.sha256.clone(),
    };
    let (rt, cancel) = runtime()?;
    let outcome = rt.block_on(outer_loop(&setup, &cancel));

    // The iterate run's own meta.json and report.json.
    let head = wt
        .open()
        .ok()
        .and_then(|r| r.head().ok()?.target())
        .map(|o| o.to_string())
        .unwrap_or_default();
    match crate::target::repin(&target) {
        Ok(sha) => {
            meta.target.drift = sha != target.sha256;
            meta.target.sha256_final = Some(sha);
        }
        Err(_) => meta.target.drift = true,
    }
    if meta.target.drift {
        output::warn("your copy of the target changed during the run; the branch starts from the pinned version");
    }
    meta.status = match &outcome.end {
        End::Stopped(_) => RunStatus::Complete,
        End::Aborted { .. } => RunStatus::Aborted,
        End::Interrupted => RunStatus::Interrupted,
    };
    match &outcome.end {
        End::Stopped(s) => meta.stop_reason = Some(s.as_str().to_string()),
        End::Aborted { reason, detail } => {
            meta.abort_reason = Some(reason.clone());
            meta.abort_detail = Some(detail.clone());
        }
        End::Interrupted => {}
    }
    if let Some(m) = &outcome.last_meta {
        meta.rounds_completed = m.rounds_completed;
        meta.model_current = m.model_current;
        meta.model_history = m.model_history.clone();
    }
    if let Some(it) = meta.iterate.as_mut() {
        it.iterations_completed = outcome.iterations.len() as u32;
    }
    meta.finished_at = Some(now());

    let mut report = match &outcome.last_report {
        Some(r) => r.clone(),
        None => build_report(&BuildInput {
            result: &ReviewResult {
                end: ReviewEnd::Interrupted,
                rounds: vec![],
                judged: vec![],
                escalations: vec![],
                warnings: vec![],
            },
            target: &target,
            meta: &meta,
            run_dir: &run.path,
            enthusiast_agent: "",
            judge_agent: "",
            duration_ms: 0,
        }),
    };
    report.run_id = meta.run_id.clone();
    report.run_dir = run.path.display().to_string();
    report.status = meta.status;
    report.stop_reason = None;
    report.abort_reason = meta.abort_reason.clone();
    report.abort_detail = meta.abort_detail.clone();
    report.target = ReportTarget {
        kind: target.kind,
        display: target.display.clone(),
        sha256: target.sha256.clone(),
        sha256_final: meta.target.sha256_final.clone(),
        drift: meta.target.drift,
        base: target.base.clone(),
        target_type: target.target_type,
        mode: target.mode,
        allowed_files: target.allowed_files().map(String::from).collect(),
    };
    report.cost = outcome.cost.clone();
    report.warnings.extend(outcome.warnings.iter().cloned());
    report.started_at = meta.started_at.clone();
    report.finished_at = meta.finished_at.clone().unwrap_or_default();
    report.duration_ms = started.elapsed().as_millis() as u64;
    report.iterate = Some(IterateReport {
        stop_reason: match outcome.end {
            End::Stopped(s) => Some(s),
            _ => None,
        },
        branch: wt.branch.clone(),
        worktree: wt.path.display().to_string(),
        base_commit: wt.base_commit.clone(),
        snapshot_commit: snapshot,
        head_commit: head,
        max_iterations,
        fix_threshold: plan.fail_on,
        quality_critical: args.quality_critical,
        verify_command: args.verify.clone(),
        diff_command: format!("git diff HEAD...{}", wt.branch),
        iterations: outcome.iterations,
    });
    write_report(&run, &report)?;
    write_json_atomic(&run.meta(), &meta).map_err(|e| ExpectedError::write(run.meta(), e))?;
    emit(&report, plan)?;

    match &outcome.end {
        End::Stopped(s) => output::note(&format!(
            "iterate stopped: {s} after {} iteration(s); nothing was merged",
            report.iterate.as_ref().map_or(0, |i| i.iterations.len())
        )),
        End::Aborted { reason, detail } => output::error(&format!(
            "iterate aborted ({reason}): {detail} — run dir {}; the worktree is kept",
            run.path.display()
        )),
        End::Interrupted => output::warn("iterate interrupted; the worktree is kept"),
    }
    for line in wt.instructions(&plan.root) {
        output::note(&line);
    }
    Ok(match outcome.end {
        End::Aborted { .. } => exit_codes::ABORTED,
        End::Interrupted => exit_codes::INTERRUPTED,
        End::Stopped(IterateStop::VerifyFailed) => exit_codes::FINDINGS,
        End::Stopped(_) => exit_code(&report, plan),
    })
}

/// An absolute TARGET path under the user's repository, mapped into the worktree.
fn map_into(arg: &str, root: &Path, wt: &Path) -> String {
    let p = Path::new(arg);
    if !p.is_absolute() {
        return arg.to_string();
    }
    let canon = p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    match canon.strip_prefix(root).or_else(|_| p.strip_prefix(root)) {
        Ok(rel) => wt.join(rel).display().to_string(),
        Err(_) => arg.to_string(),
    }
}

fn budget_left(plan: &RunPlan, cost: &Cost) -> bool {
    plan.budget_usd.is_none_or(|b| cost.usd < b)
        && plan.budget_tokens.is_none_or(|b| cost.tokens < b)
}

fn add_cost(total: &mut Cost, part: &Cost) {
    total.usd += part.usd;
    total.tokens += part.tokens;
    for (mine, theirs) in [
        (&mut total.by_role, &part.by_role),
        (&mut total.by_tier, &part.by_tier),
    ] {
        for (k, v) in theirs {
            let line = mine.entry(k.clone()).or_default();
            line.usd += v.usd;
            line.tokens += v.tokens;
            line.dispatches += v.dispatches;
        }
    }
}

fn fixer_cost(records: &[crate::round::DispatchRecord]) -> Cost {
    let mut c = Cost::default();
    for d in records {
        let usd = d.outcome.cost_usd();
        let tokens = d.outcome.result.as_ref().map_or(0, |x| x.usage.total());
        c.usd += usd;
        c.tokens += tokens;
        for (map, key) in [
            (&mut c.by_role, d.role.as_str().to_string()),
            (&mut c.by_tier, d.outcome.tier.as_str().to_string()),
        ] {
            let line = map.entry(key).or_default();
            line.usd += usd;
            line.tokens += tokens;
            line.dispatches += 1;
        }
    }
    c
}

async fn outer_loop(s: &Setup<'_>, cancel: &CancellationToken) -> Outcome {
    let mut o = Outcome {
        end: End::Interrupted,
        iterations: vec![],
        last_report: None,
        last_meta: None,
        cost: Cost::default(),
        warnings: vec![],
    };
    let mut previous: Option<BTreeSet<String>> = None;
    let mut worsening = 0;
    for i in 1.. {
        if let Some(end) = iteration(s, i, &mut o, &mut previous, &mut worsening, cancel).await {
            o.end = end;
            break;
        }
        update_meta(s, o.iterations.len() as u32);
    }
    o
}

/// Keep the top-level meta.json's iteration count current while the loop runs.
fn update_meta(s: &Setup<'_>, completed: u32) {
    let path = s.run.meta();
    let Ok(text) = std::fs::read_to_string(&path) else {
        return;
    };
    if let Ok(mut m) = serde_json::from_str::<Meta>(&text) {
        if let Some(it) = m.iterate.as_mut() {
            it.iterations_completed = completed;
        }
        let _ = write_json_atomic(&path, &m);
    }
}

/// One iteration; `Some(end)` when the loop ends with it.
async fn iteration(
    s: &Setup<'_>,
    i: u32,
    o: &mut Outcome,
    previous: &mut Option<BTreeSet<String>>,
    worsening: &mut u32,
    cancel: &CancellationToken,
) -> Option<End> {
    let plan = s.plan;
    s.progress.line(&format!(
        "Iteration {i}/{} · review of {}",
        s.max_iterations, s.wt.branch
    ));
    let rel_dir = format!("iterations/{i}");
    let run = match s.run.child(&rel_dir) {
        Ok(r) => r,
        Err(e) => {
            return Some(End::aborted(
                "iterate_io_error",
                format!("cannot create {rel_dir}: {e}"),
            ))
        }
    };
    // Re-pin: the target as it is now in the worktree.
    let target = match resolve(&TargetRequest {
        args: s.args.clone(),
        base: s.base.clone(),
        base_tree: None,
        cwd: s.wt_cwd.clone(),
        max_file_bytes: plan.config.review.max_file_bytes,
    }) {
        Ok(t) => t,
        Err(e) => {
            return Some(End::aborted(
                "iterate_target_error",
                format!("iteration {i}: cannot pin the target in the worktree: {e}"),
            ))
        }
    };
    if i == 1 && target.sha256 != s.pinned_sha {
        let w = "the worktree's copy of the target differs from the pinned target (it changed while the worktree was set up)".to_string();
        output::warn(&w);
        o.warnings.push(w);
    }
    let mut iplan = plan.clone();
    iplan.target = Some(target.clone());
    if s.quality_critical {
        iplan.tier_start = Tier::Opus;
    }
    iplan.budget_usd = plan.budget_usd.map(|b| b - o.cost.usd);
    iplan.budget_tokens = plan.budget_tokens.map(|b| b.saturating_sub(o.cost.tokens));
    let started = Instant::now();
    let mut meta = match init_run_dir(&iplan, &target, &run, false) {
        Ok(m) => m,
        Err(e) => return Some(End::aborted("iterate_io_error", e.to_string())),
    };
    let result = run_review(&iplan, &target, &run, &mut meta, cancel, s.progress).await;
    let report = match finalize(&iplan, &target, &run, &mut meta, &result, started) {
        Ok(r) => r,
        Err(e) => return Some(End::aborted("iterate_io_error", e.to_string())),
    };
    add_cost(&mut o.cost, &report.cost);
    o.last_report = Some(report.clone());
    o.last_meta = Some(meta);

    let fixable: Vec<&ReportFinding> = report
        .confirmed
        .iter()
        .filter(|f| plan.fail_on.fails(f.severity))
        .collect();
    let fingerprints: BTreeSet<String> = fixable.iter().map(|f| f.fingerprint.clone()).collect();
    let mut rec = IterationReport {
        iteration: i,
        run_dir: rel_dir.clone(),
        review_status: report.status,
        review_stop_reason: report.stop_reason,
        review_abort_reason: report.abort_reason.clone(),
        target_sha256: target.sha256.clone(),
        confirmed: report.confirmed.clone(),
        to_fix: vec![],
        fix: None,
        verify: None,
        decision: "abort".into(),
        decision_reasons: vec![],
        cost_usd: report.cost.usd,
        tokens: report.cost.tokens,
    };
    let review_stop = match &result.end {
        ReviewEnd::Stopped(r) => *r,
        ReviewEnd::Aborted(a) => {
            rec.decision_reasons
                .push(format!("the review aborted: {}", a.detail()));
            o.iterations.push(rec);
            return Some(End::aborted(&a.reason(), a.detail()));
        }
        ReviewEnd::Interrupted | ReviewEnd::Empty => {
            rec.decision = "interrupted".into();
            o.iterations.push(rec);
            return Some(End::Interrupted);
        }
    };

    // After the review.
    let verdict = after_review(&ReviewFacts {
        iteration: i,
        max_iterations: s.max_iterations,
        review_stop,
        confirmed: &fingerprints,
        previous: previous.as_ref(),
        worsening: *worsening,
        budget_left: budget_left(plan, &o.cost),
    });
    *worsening = verdict.worsening;
    *previous = Some(fingerprints);
    rec.decision_reasons = verdict.reasons;
    if let Some(stop) = verdict.stop {
        rec.decision = "stop".into();
        o.iterations.push(rec);
        return Some(End::Stopped(stop));
    }

    // The Fixer.
    let items: Vec<(FixItem, &ReportFinding)> = fixable
        .iter()
        .enumerate()
        .map(|(k, f)| {
            (
                FixItem {
                    id: format!("F{}", k + 1),
                    fingerprint: f.fingerprint.clone(),
                    round: f.round,
                    round_finding_id: f.id.clone(),
                },
                *f,
            )
        })
        .collect();
    rec.to_fix = items.iter().map(|(it, _)| it.clone()).collect();
    let rulings: Vec<FixerRuling<'_>> = items
        .iter()
        .map(|(it, f)| FixerRuling {
            id: it.id.clone(),
            severity: f.severity,
            file: f.file.as_deref(),
            line: f.line,
            category: &f.category,
            description: &f.description,
            evidence: &f.evidence,
            resolution: f.resolution.as_deref(),
            edit_instruction: f.edit_instruction.as_deref(),
        })
        .collect();
    let fix_files: Vec<String> = fixable
        .iter()
        .filter_map(|f| f.file.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    s.progress.line(&format!(
        "Iteration {i} · Fixer ({} ruling(s))",
        rulings.len()
    ));
    let fr = run_fixer(
        &iplan,
        &target,
        &run,
        i,
        iplan.tier_start,
        &rulings,
        &fix_files,
        cancel,
    )
    .await;
    let fcost = fixer_cost(&fr.records);
    add_cost(&mut o.cost, &fcost);
    rec.cost_usd += fcost.usd;
    rec.tokens += fcost.tokens;
    let fix_json = run.path.join("fix.json");
    let (output, error): (Option<&FixerOutput>, Option<String>) = match &fr.end {
        FixerEnd::Answered(out) => (Some(out), None),
        FixerEnd::Malformed(e) => (None, Some(e.clone())),
        _ => (None, None),
    };
    let _ = write_json_atomic(
        &fix_json,
        &serde_json::json!({"output": output, "schema_error": error, "records": fr.records}),
    );
    let known: BTreeSet<&str> = items.iter().map(|(it, _)| it.id.as_str()).collect();
    for p in &fr.denied_writes {
        output::warn(&format!(
            "iteration {i}: the Fixer tried to write {p}; the agent CLI denied it"
        ));
    }
    let mut fix = FixReport {
        applied: vec![],
        skipped: vec![],
        errors: vec![],
        changed: vec![],
        reverted: vec![],
        commit: None,
        dir: format!("{rel_dir}/agents/fix/fixer"),
        cost_usd: fcost.usd,
        tokens: fcost.tokens,
    };
    fix.errors.extend(
        fr.denied_writes
            .iter()
            .map(|p| format!("fixer_write_denied:{p}")),
    );
    match &fr.end {
        FixerEnd::Answered(out) => {
            for id in &out.applied {
                if known.contains(id.as_str()) {
                    fix.applied.push(id.clone());
                } else {
                    fix.errors.push(format!("fixer_unknown_id:{id}"));
                }
            }
            for sk in &out.skipped {
                if known.contains(sk.finding_id.as_str()) {
                    fix.skipped.push(SkippedFix {
                        finding_id: sk.finding_id.clone(),
                        reason: sk.reason.clone(),
                    });
                } else {
                    fix.errors
                        .push(format!("fixer_unknown_id:{}", sk.finding_id));
                }
            }
        }
        FixerEnd::Malformed(e) => {
            fix.errors.push("fixer_malformed_json".into());
            tracing::warn!("iteration {i}: fixer_malformed_json: {e}");
        }
        FixerEnd::Aborted(a) => {
            rec.decision_reasons
                .push(format!("the Fixer aborted: {}", a.detail()));
            rec.fix = Some(fix);
            o.iterations.push(rec);
            return Some(End::aborted(&a.reason(), a.detail()));
        }
        FixerEnd::Interrupted => {
            rec.decision = "interrupted".into();
            rec.fix = Some(fix);
            o.iterations.push(rec);
            return Some(End::Interrupted);
        }
    }

    // Reject and revert changes outside ALLOWED_FILES, then commit the rest.
    let git = |e: crate::iterate::GitError| End::aborted("iterate_git_error", e.0);
    let repo = match s.wt.open() {
        Ok(r) => r,
        Err(e) => return Some(push_abort(o, rec, fix, git(e))),
    };
    let changes = match changed_paths(&repo) {
        Ok(c) => c,
        Err(e) => return Some(push_abort(o, rec, fix, git(e))),
    };
    let (kept, reverted) = match revert_outside(&repo, &changes, |p| target.is_allowed(p)) {
        Ok(x) => x,
        Err(e) => return Some(push_abort(o, rec, fix, git(e))),
    };
    for r in &reverted {
        output::warn(&format!(
            "iteration {i}: the Fixer changed {}, outside the target: reverted",
            r.path
        ));
    }
    fix.changed = kept;
    fix.reverted = reverted;
    if !fix.changed.is_empty() {
        match commit_all(&repo, &commit_message(&fix.applied, i)) {
            Ok(sha) => fix.commit = Some(sha),
            Err(e) => return Some(push_abort(o, rec, fix, git(e))),
        }
    }

    // --verify after the commit.
    let mut verify_ok = None;
    if let (Some(cmd), Some(_)) = (&s.verify, &fix.commit) {
        s.progress.line(&format!("Iteration {i} · verify: {cmd}"));
        let log = run.path.join("verify.log");
        let dir = if s.wt_cwd.is_dir() {
            s.wt_cwd.as_path()
        } else {
            s.wt.path.as_path()
        };
        let limit = plan.config.verify_timeout().unwrap_or(plan.timeout);
        let out = match run_verify(cmd, dir, &log, limit, plan.grace, cancel).await {
            Ok(out) => out,
            Err(e) => {
                let end = End::aborted(
                    "verify_unavailable",
                    format!("cannot run the verify command `{cmd}`: {e}"),
                );
                return Some(push_abort(o, rec, fix, end));
            }
        };
        let discarded = discard_all(&repo).unwrap_or_default();
        rec.verify = Some(VerifyReport {
            command: cmd.clone(),
            exit_code: out.exit_code,
            ok: out.ok(),
            timed_out: out.timed_out,
            log: format!("{rel_dir}/verify.log"),
            duration_ms: out.duration_ms,
            discarded,
        });
        if out.cancelled {
            rec.decision = "interrupted".into();
            rec.fix = Some(fix);
            o.iterations.push(rec);
            return Some(End::Interrupted);
        }
        verify_ok = Some(out.ok());
    }
    let (stop, why) = after_fix(FixFacts {
        changed: fix.changed.len(),
        verify_ok,
        budget_left: budget_left(plan, &o.cost),
    });
    rec.decision_reasons.push(why);
    rec.fix = Some(fix);
    rec.decision = if stop.is_some() { "stop" } else { "continue" }.into();
    o.iterations.push(rec);
    stop.map(End::Stopped)
}

fn push_abort(o: &mut Outcome, mut rec: IterationReport, fix: FixReport, end: End) -> End {
    if let End::Aborted { detail, .. } = &end {
        rec.decision_reasons.push(detail.clone());
    }
    rec.decision = "abort".into();
    rec.fix = Some(fix);
    o.iterations.push(rec);
    end
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absolute_targets_are_mapped_into_the_worktree() {
        let root = Path::new("/nonexistent/repo");
        let wt = Path::new("/nonexistent/repo/.arev/worktrees/x");
        assert_eq!(
            map_into("/nonexistent/repo/src/lib.rs", root, wt),
            "/nonexistent/repo/.arev/worktrees/x/src/lib.rs"
        );
        assert_eq!(map_into("src/lib.rs", root, wt), "src/lib.rs");
        assert_eq!(map_into("diff", root, wt), "diff");
        assert_eq!(map_into("/elsewhere/a.rs", root, wt), "/elsewhere/a.rs");
    }
}
