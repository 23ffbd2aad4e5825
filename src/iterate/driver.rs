//! The iterate loop (docs/architecture.md, iterate mode): review the target inside the
//! worktree, have the Fixer apply the confirmed rulings, revert changes outside
//! ALLOWED_FILES, commit, verify, re-pin and review again, until the outer loop stops for one
//! reason. Never merges. Each review is a full run dir at `<run>/iterations/<i>/`, with the
//! Fixer's dispatch under `agents/fix/`, its records in `fix.json` and the verify output in
//! `verify.log`. The stop decisions are the pure functions of `super::decide`.

use super::fix::{fix_files, fix_items, fixable, fixer_rulings, new_fix_report, record_answer};
use super::setup::Setup;
use super::{
    after_fix, after_review, changed_paths, commit_all, commit_message, discard_all,
    keep_to_rulings, revert_outside, run_verify, FixFacts, FixReport, IterateStop, IterationReport,
    ReviewFacts, VerifyReport,
};
use crate::findings::{FixerOutput, Tier};
use crate::output;
use crate::report::{Cost, Report};
use crate::resolve::RunPlan;
use crate::round::Action;
use crate::round::{run_fixer, FixerEnd, ReviewEnd};
use crate::store::{write_json_atomic, AbortReason, Meta, Phase, ProgressLog, Recorder, RunDir};
use crate::target::{resolve, PinnedTarget, TargetRequest};
use std::collections::BTreeSet;
use std::time::Instant;
use tokio_util::sync::CancellationToken;

/// How the iterate run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum End {
    Stopped(IterateStop),
    Aborted { reason: AbortReason, detail: String },
    Interrupted,
}

impl End {
    fn aborted(reason: AbortReason, detail: impl Into<String>) -> Self {
        Self::Aborted {
            reason,
            detail: detail.into(),
        }
    }
}

/// What the loop produced.
#[derive(Debug)]
pub struct Outcome {
    pub end: End,
    pub iterations: Vec<IterationReport>,
    /// The report of the last review that finished.
    pub last_report: Option<Report>,
    /// Every review and every fix.
    pub cost: Cost,
    pub warnings: Vec<String>,
}

/// Run iterations until the loop stops; after each one the iterate run's meta.json (`rec`)
/// records how far it got.
pub async fn run_loop(s: &Setup<'_>, rec: &mut Recorder, cancel: &CancellationToken) -> Outcome {
    let mut o = Outcome {
        end: End::Interrupted,
        iterations: vec![],
        last_report: None,
        cost: Cost::default(),
        warnings: vec![],
    };
    let mut last_meta: Option<Meta> = None;
    let mut previous: Option<BTreeSet<String>> = None;
    let mut worsening = 0;
    for i in 1.. {
        let it = Iteration {
            s,
            i,
            rel_dir: format!("iterations/{i}"),
            cancel,
        };
        let end = it
            .run(rec, &mut o, &mut last_meta, &mut previous, &mut worsening)
            .await;
        rec.record_iteration(o.iterations.len() as u32, last_meta.as_ref());
        if let Some(end) = end {
            o.end = end;
            break;
        }
    }
    o
}

fn budget_left(plan: &RunPlan, cost: &Cost) -> bool {
    plan.budget_usd.is_none_or(|b| cost.usd < b)
        && plan.budget_tokens.is_none_or(|b| cost.tokens < b)
}

/// One iteration of the loop.
struct Iteration<'a, 's> {
    s: &'a Setup<'s>,
    i: u32,
    /// `iterations/<i>`, relative to the iterate run dir.
    rel_dir: String,
    cancel: &'a CancellationToken,
}

/// The iteration's review, pinned and finished.
struct Reviewed {
    plan: RunPlan,
    target: PinnedTarget,
    run: RunDir,
    report: Report,
    end: ReviewEnd,
    /// `--prove`: the review's proofs (their files under `<run>/proofs/<finding>/`).
    proofs: Vec<crate::records::FindingProof>,
}

impl Iteration<'_, '_> {
    /// `Some(end)` when the loop ends with this iteration.
    async fn run(
        &self,
        parent: &Recorder,
        o: &mut Outcome,
        last_meta: &mut Option<Meta>,
        previous: &mut Option<BTreeSet<String>>,
        worsening: &mut u32,
    ) -> Option<End> {
        let (s, i) = (self.s, self.i);
        let r = match self.review(parent, o, last_meta).await {
            Ok(r) => r,
            Err(end) => return Some(end),
        };
        let fixable = fixable(&r.report.confirmed, s.plan.fail_on);
        let fingerprints: BTreeSet<String> =
            fixable.iter().map(|f| f.fingerprint.clone()).collect();
        let mut rec = IterationReport {
            iteration: i,
            run_dir: self.rel_dir.clone(),
            review_status: r.report.status,
            review_stop_reason: r.report.stop_reason,
            review_abort_reason: r.report.abort_reason,
            target_sha256: r.target.sha256.clone(),
            confirmed: r.report.confirmed.clone(),
            to_fix: vec![],
            fix: None,
            verify: None,
            decision: Action::Abort,
            decision_reasons: vec![],
            cost_usd: r.report.cost.usd,
            tokens: r.report.cost.tokens,
            unpriced_tokens: r.report.cost.unpriced_tokens,
        };
        let review_stop = match &r.end {
            ReviewEnd::Stopped(reason) => *reason,
            ReviewEnd::Aborted(a) => {
                rec.decision_reasons
                    .push(format!("the review aborted: {}", a.detail()));
                o.iterations.push(rec);
                return Some(End::aborted(a.reason(), a.detail()));
            }
            ReviewEnd::Interrupted | ReviewEnd::Empty => {
                rec.decision = Action::Interrupted;
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
            budget_left: budget_left(s.plan, &o.cost),
        });
        *worsening = verdict.worsening;
        *previous = Some(fingerprints);
        rec.decision_reasons = verdict.reasons;
        if let Some(stop) = verdict.stop {
            rec.decision = Action::Stop;
            o.iterations.push(rec);
            return Some(End::Stopped(stop));
        }

        // The Fixer, then the commit and --verify.
        let (fix, end) = self.fix(parent.progress(), &r, &fixable, o, &mut rec).await;
        rec.fix = Some(fix);
        match end {
            Step::End(end) => {
                o.iterations.push(rec);
                Some(end)
            }
            Step::Failed(end) => {
                if let End::Aborted { detail, .. } = &end {
                    rec.decision_reasons.push(detail.clone());
                }
                rec.decision = Action::Abort;
                o.iterations.push(rec);
                Some(end)
            }
            Step::Decided(stop, why) => {
                rec.decision_reasons.push(why);
                rec.decision = if stop.is_some() {
                    Action::Stop
                } else {
                    Action::Continue
                };
                o.iterations.push(rec);
                stop.map(End::Stopped)
            }
        }
    }

    /// Re-pin the target in the worktree and review it in its own run dir.
    async fn review(
        &self,
        parent: &Recorder,
        o: &mut Outcome,
        last_meta: &mut Option<Meta>,
    ) -> Result<Reviewed, End> {
        let (s, i, rel_dir) = (self.s, self.i, &self.rel_dir);
        let plan = s.plan;
        s.progress.line(&format!(
            "Iteration {i}/{} · review of {}",
            s.max_iterations, s.wt.branch
        ));
        parent.progress().phase(Phase::Review, Some(i));
        let run = parent.run().child(rel_dir).map_err(|e| {
            End::aborted(
                AbortReason::IterateIoError,
                format!("cannot create {rel_dir}: {e}"),
            )
        })?;
        // Re-pin: the target as it is now in the worktree.
        let target = resolve(&TargetRequest {
            args: s.args.clone(),
            base: s.base.clone(),
            base_tree: None,
            cwd: s.wt_cwd.clone(),
            max_file_bytes: plan.settings.review.max_file_bytes,
            excludes: plan.excludes.clone(),
        })
        .and_then(|t| crate::resolve::with_context(t, &plan.settings))
        .map_err(|e| {
            End::aborted(
                AbortReason::IterateTargetError,
                format!("iteration {i}: cannot pin the target in the worktree: {e}"),
            )
        })?;
        if i == 1 && target.sha256 != s.target.sha256 {
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
        let io =
            |e: crate::store::RecordError| End::aborted(AbortReason::IterateIoError, e.to_string());
        let start = crate::review::start(&iplan, &target, false);
        let rec = parent.begin_nested(run.clone(), &start).map_err(io)?;
        let (finished, result) =
            crate::review::review(&iplan, &target, rec, self.cancel, s.progress, started)
                .await
                .map_err(io)?;
        o.cost.absorb(&finished.report.cost);
        o.last_report = Some(finished.report.clone());
        *last_meta = Some(finished.meta);
        Ok(Reviewed {
            plan: iplan,
            target,
            run,
            report: finished.report,
            end: result.end,
            proofs: result.proof.map(|p| p.proofs).unwrap_or_default(),
        })
    }

    /// Dispatch the Fixer for `fixable`, revert what it changed outside the target, commit
    /// the rest and run `--verify`.
    async fn fix(
        &self,
        live: &ProgressLog,
        r: &Reviewed,
        fixable: &[&crate::report::ReportFinding],
        o: &mut Outcome,
        rec: &mut IterationReport,
    ) -> (FixReport, Step) {
        let (s, i, rel_dir) = (self.s, self.i, &self.rel_dir);
        let items = fix_items(fixable);
        rec.to_fix = items.iter().map(|(it, _)| it.clone()).collect();
        let rulings = fixer_rulings(&items);
        s.progress.line(&format!(
            "Iteration {i} · Fixer ({} ruling(s))",
            rulings.len()
        ));
        live.phase(Phase::Fix, Some(i));
        // The Fixer may spend what the loop has left of its budgets (and no more).
        let mut fplan = r.plan.clone();
        fplan.budget_usd = s.plan.budget_usd.map(|b| b - o.cost.usd);
        fplan.budget_tokens = s
            .plan
            .budget_tokens
            .map(|b| b.saturating_sub(o.cost.tokens));
        // A link made since the last Fixer (by `--verify`'s build, say) would carry this
        // Fixer's writes out of the worktree: checked before it starts, too.
        if let Some(a) = super::link_gate(&s.wt.path) {
            rec.decision_reasons
                .push(format!("the Fixer was not started: {}", a.detail()));
            let fix = new_fix_report(format!("{rel_dir}/agents/fix/fixer"), 0.0, 0);
            return (fix, Step::End(End::aborted(a.reason(), a.detail())));
        }
        let fr = run_fixer(
            &fplan,
            &r.target,
            &r.run,
            i,
            r.plan.tier_start,
            &rulings,
            &fix_files(fixable),
            &|| super::link_gate(&s.wt.path),
            self.cancel,
            live,
        )
        .await;
        let fcost = Cost::from_dispatches(&fr.records);
        o.cost.absorb(&fcost);
        rec.cost_usd += fcost.usd;
        rec.tokens += fcost.tokens;
        rec.unpriced_tokens += fcost.unpriced_tokens;
        let (output, error): (Option<&FixerOutput>, Option<String>) = match &fr.end {
            FixerEnd::Answered(out) => (Some(out), None),
            FixerEnd::Malformed(e) => (None, Some(e.clone())),
            _ => (None, None),
        };
        let _ = write_json_atomic(
            &r.run.path.join("fix.json"),
            &serde_json::json!({"output": output, "schema_error": error, "records": fr.records}),
        );
        for p in &fr.denied_writes {
            output::warn(&format!(
                "iteration {i}: the Fixer tried to write {p}; the agent CLI denied it"
            ));
        }
        let dir = format!("{rel_dir}/agents/fix/fixer");
        let mut fix = new_fix_report(dir, fcost.usd, fcost.tokens);
        fix.unpriced_tokens = fcost.unpriced_tokens;
        fix.errors.extend(
            fr.denied_writes
                .iter()
                .map(|p| format!("fixer_write_denied:{p}")),
        );
        match &fr.end {
            FixerEnd::Answered(out) => {
                let known: BTreeSet<&str> = items.iter().map(|(it, _)| it.id.as_str()).collect();
                record_answer(out, &known, &mut fix);
            }
            FixerEnd::Malformed(e) => {
                fix.errors.push("fixer_malformed_json".into());
                tracing::warn!("iteration {i}: fixer_malformed_json: {e}");
            }
            FixerEnd::Aborted(a) => {
                rec.decision_reasons
                    .push(format!("the Fixer aborted: {}", a.detail()));
                return (fix, Step::End(End::aborted(a.reason(), a.detail())));
            }
            FixerEnd::Interrupted => {
                rec.decision = Action::Interrupted;
                return (fix, Step::End(End::Interrupted));
            }
            FixerEnd::BudgetExhausted => {
                fix.errors.push("fixer_budget_exhausted".into());
                let why = "budget-exhausted: the Fixer was stopped when the budget ran out; \
                           whatever it edited stays uncommitted in the worktree";
                return (
                    fix,
                    Step::Decided(Some(IterateStop::BudgetExhausted), why.into()),
                );
            }
        }
        let budget_left = budget_left(s.plan, &o.cost);
        let scope: Vec<(Option<String>, Option<u32>)> =
            fixable.iter().map(|f| (f.file.clone(), f.line)).collect();
        let step = self
            .commit_and_verify(live, r, &scope, &mut fix, rec, budget_left)
            .await;
        (fix, step)
    }

    /// Reject and revert changes outside ALLOWED_FILES and outside the lines of the rulings
    /// (`scope`: each fixed finding's file and line), commit the rest, then `--verify`.
    async fn commit_and_verify(
        &self,
        live: &ProgressLog,
        r: &Reviewed,
        scope: &[(Option<String>, Option<u32>)],
        fix: &mut FixReport,
        rec: &mut IterationReport,
        budget_left: bool,
    ) -> Step {
        let (s, i, rel_dir) = (self.s, self.i, &self.rel_dir);
        let target = &r.target;
        let git =
            |e: super::GitError| Step::Failed(End::aborted(AbortReason::IterateGitError, e.0));
        let repo = match s.wt.open() {
            Ok(r) => r,
            Err(e) => return git(e),
        };
        let (kept, reverted) = match revert_out_of_scope(&repo, target, scope, i) {
            Ok(x) => x,
            Err(e) => return git(e),
        };
        fix.changed = kept;
        fix.reverted = reverted;
        if !fix.changed.is_empty() {
            match commit_all(&repo, &commit_message(&fix.applied, i)) {
                Ok(sha) => fix.commit = Some(sha),
                Err(e) => return git(e),
            }
        }

        let mut verify_ok = None;
        if let (Some(cmd), Some(_)) = (&s.verify, &fix.commit) {
            s.progress.line(&format!("Iteration {i} · verify: {cmd}"));
            live.phase(Phase::Verify, Some(i));
            let log = r.run.path.join("verify.log");
            let dir = if s.wt_cwd.is_dir() {
                s.wt_cwd.as_path()
            } else {
                s.wt.path.as_path()
            };
            let plan = s.plan;
            let t = &plan.settings.timeouts;
            let out = match run_verify(cmd, dir, &log, t.verify, t.grace, self.cancel).await {
                Ok(out) => out,
                Err(e) => {
                    return Step::Failed(End::aborted(
                        AbortReason::VerifyUnavailable,
                        format!("cannot run the verify command `{cmd}`: {e}"),
                    ))
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
                rec.decision = Action::Interrupted;
                return Step::End(End::Interrupted);
            }
            verify_ok = Some(out.ok());
        }
        // `--prove`: each applied finding's failing reproducer, again on the fix commit.
        let unproven = match self.prove_fixes(r, fix, rec, verify_ok).await {
            Some(n) => n,
            None => {
                rec.decision = Action::Interrupted;
                return Step::End(End::Interrupted);
            }
        };
        let (stop, why) = after_fix(FixFacts {
            changed: fix.changed.len(),
            verify_ok,
            unproven,
            budget_left,
        });
        Step::Decided(stop, why)
    }

    /// `--prove`: run each applied finding's failing reproducer on the fix commit (not after
    /// a failed `--verify`), record them in `fix.proofs`; how many are unproven. None on
    /// Ctrl-C.
    async fn prove_fixes(
        &self,
        r: &Reviewed,
        fix: &mut FixReport,
        rec: &IterationReport,
        verify_ok: Option<bool>,
    ) -> Option<usize> {
        let (s, i, rel_dir) = (self.s, self.i, &self.rel_dir);
        let (Some(prove), Some(commit), false) =
            (&s.plan.prove, &fix.commit, verify_ok == Some(false))
        else {
            return Some(0);
        };
        let todo = super::prove::to_check(&rec.to_fix, &fix.applied, &r.proofs);
        if todo.is_empty() {
            return Some(0);
        }
        s.progress.line(&format!(
            "Iteration {i} · the reproducers of {} fixed finding(s) on the fix commit",
            todo.len()
        ));
        let check = super::prove::FixCheck {
            prove,
            worktree: &s.wt.path,
            commit,
            run: &r.run,
            rel_dir,
        };
        let done = super::prove::check_fixes(&check, &todo, self.cancel).await?;
        for p in &done {
            s.progress.line(&format!(
                "Iteration {i} · {} · {}{}",
                p.id,
                p.status.as_str(),
                p.reason
                    .as_deref()
                    .map(|r| format!(" ({r})"))
                    .unwrap_or_default()
            ));
        }
        let unproven = done
            .iter()
            .filter(|p| p.status == super::FixProofStatus::FixUnproven)
            .count();
        fix.proofs = done;
        Some(unproven)
    }
}

/// Revert what the Fixer changed outside the target, then outside the lines of its rulings
/// (`scope`), each said on stderr. Returns the paths still changed and what was reverted.
fn revert_out_of_scope(
    repo: &git2::Repository,
    target: &PinnedTarget,
    scope: &[(Option<String>, Option<u32>)],
    i: u32,
) -> Result<(Vec<String>, Vec<super::RevertedPath>), super::GitError> {
    let changes = changed_paths(repo)?;
    let (kept, mut reverted) = revert_outside(repo, &changes, |p| target.is_allowed(p))?;
    for p in &reverted {
        output::warn(&format!(
            "iteration {i}: the Fixer changed {}, outside the target: reverted",
            p.path
        ));
    }
    let (kept, far) = keep_to_rulings(repo, &changes, kept, scope)?;
    for p in &far {
        output::warn(&format!(
            "iteration {i}: the Fixer changed {} outside the lines of its rulings (± {}): those changes reverted",
            p.path,
            super::FIX_CONTEXT_LINES
        ));
    }
    reverted.extend(far);
    Ok((kept, reverted))
}

/// How the fix part of an iteration ended.
enum Step {
    /// The loop ends (the Fixer aborted, or Ctrl-C) with the decision already recorded.
    End(End),
    /// The loop aborts after the Fixer (git, `--verify` unavailable): the detail joins the
    /// decision's reasons.
    Failed(End),
    /// The decision after the fix: a stop reason or go on, and why.
    Decided(Option<IterateStop>, String),
}
