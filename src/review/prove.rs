//! The proof phase (`--prove`, docs/prove.md): after the review's last round, each confirmed
//! finding at or above `[prove] min_severity` — the most severe first, at most `[prove]
//! max_findings`, within what the review left of its budgets — gets a Prover in a scratch
//! tree of the reviewed content. arev checks what the Prover wrote (new files only), keeps
//! them in `proofs/<finding>/`, runs its command itself in the sandbox on the reviewed
//! content and, for a diff, on the base, and classifies the runs. The Provers run side by
//! side and each reproducer starts as soon as its Prover answered (at most one run per core
//! at a time), so the phase takes about one Prover call plus the slowest reproducer.

use crate::findings::{ProverOutput, Reproducer, Severity};
use crate::prove::{classify, copy_files, Rejected, SandboxSpec, Scratch, ScratchError};
use crate::records::evidence::BELOW_MIN_SEVERITY;
use crate::records::{
    DispatchRecord, Evidence, FindingProof, ProofCounts, ProofPhase, ProofStatus, ProveSummary,
    RunRecord,
};
use crate::resolve::{ProvePlan, RunPlan};
use crate::round::{run_prover, Judged, Progress, ProofMeter, ProverEnd, ProverJob, ReviewResult};
use crate::store::{write_json_record, ProgressLog, RunDir};
use crate::target::{PinnedTarget, TargetKind};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

/// A confirmed finding in the order proofs are tried.
struct Candidate<'a> {
    judged: &'a Judged,
    severity: Severity,
    key: String,
}

/// The finding as the Prover gets it: what was found, where, and how the Judge ruled.
#[derive(serde::Serialize)]
struct ProverFinding<'a> {
    id: &'a str,
    severity: Severity,
    file: Option<&'a str>,
    line: Option<u32>,
    category: &'a str,
    description: &'a str,
    evidence: &'a str,
    resolution: &'a str,
}

/// What every proof of the phase shares.
struct Phase<'a> {
    plan: &'a RunPlan,
    prove: &'a ProvePlan,
    target: &'a PinnedTarget,
    run: &'a RunDir,
    live: &'a ProgressLog,
    progress: Progress,
    meter: ProofMeter,
    /// The Provers' token: cancelled on Ctrl-C and when the budget is passed.
    token: CancellationToken,
    /// The reproducers' token: cancelled on Ctrl-C only (a run costs no tokens).
    interrupt: CancellationToken,
    /// One permit per core: the reproducers that may run at once.
    cores: Arc<Semaphore>,
    /// The revision the base run checks out (None: no base run).
    base: Option<String>,
    max_usd: Option<f64>,
}

/// Run the proof phase of `result` (a review that stopped with a verdict).
pub async fn prove_findings(
    plan: &RunPlan,
    target: &PinnedTarget,
    run: &RunDir,
    live: &ProgressLog,
    result: &ReviewResult,
    cancel: &CancellationToken,
    progress: Progress,
) -> Option<ProofPhase> {
    let prove = plan.prove.as_ref()?;
    let started = Instant::now();
    let (chosen, mut proofs) = select(prove, result);
    let (left_usd, left_tokens, exhausted) = budget_left(plan, result);
    let token = cancel.child_token();
    let meter = ProofMeter::new(left_usd, left_tokens);
    meter.arm(&token);
    let phase = Phase {
        plan,
        prove,
        target,
        run,
        live,
        progress,
        meter,
        token,
        interrupt: cancel.clone(),
        cores: Arc::new(Semaphore::new(cores())),
        base: base_revision(target),
        max_usd: left_usd.map(|u| u / chosen.len().max(1) as f64),
    };
    let mut dispatches = vec![];
    let mut warnings = vec![];
    if exhausted {
        for c in &chosen {
            proofs.push(not_attempted(c, prove, "no budget left after the review"));
        }
    } else {
        if !chosen.is_empty() {
            progress.line(&format!(
                "Proof · {} finding(s) · sandbox {}",
                chosen.len(),
                prove.sandbox.as_str()
            ));
        }
        let done = futures::future::join_all(chosen.iter().map(|c| prove_one(&phase, c))).await;
        for (p, d, left) in done {
            proofs.push(p);
            dispatches.extend(d);
            warnings.extend(left);
        }
    }
    proofs.sort_by(|a, b| (a.round, &a.finding_id).cmp(&(b.round, &b.finding_id)));
    let mut counts = ProofCounts::default();
    for p in &proofs {
        counts.add(p.evidence.status);
    }
    if !proofs.is_empty() {
        progress.line(&format!("Proof · {}", counts.line()));
    }
    Some(ProofPhase {
        summary: ProveSummary {
            sandbox: prove.sandbox,
            require_proof: prove.require_proof,
            min_severity: prove.min_severity,
            max_findings: prove.max_findings,
            counts,
            duration_ms: started.elapsed().as_millis() as u64,
        },
        proofs,
        dispatches,
        warnings,
    })
}

/// The confirmed findings to prove (most severe first, at most `max_findings` at or above
/// `min_severity`), and the proofs of the others (`not_attempted`).
fn select<'a>(
    prove: &ProvePlan,
    result: &'a ReviewResult,
) -> (Vec<Candidate<'a>>, Vec<FindingProof>) {
    let mut confirmed: Vec<Candidate<'a>> = result
        .judged
        .iter()
        .filter_map(|j| {
            let r = j.ruling.as_ref().filter(|r| r.is_confirmed())?;
            Some(Candidate {
                judged: j,
                severity: r
                    .final_severity
                    .severity()
                    .unwrap_or(j.finding.finding.severity),
                key: proof_key(j.round, &j.finding.finding.id),
            })
        })
        .collect();
    // Stable: equal severities keep the review's order.
    confirmed.sort_by_key(|c| std::cmp::Reverse(c.severity));
    let mut chosen = vec![];
    let mut skipped = vec![];
    for c in confirmed {
        if c.severity < prove.min_severity {
            let why = format!("{BELOW_MIN_SEVERITY} ({})", prove.min_severity.as_str());
            skipped.push(not_attempted(&c, prove, &why));
        } else if chosen.len() >= prove.max_findings as usize {
            let why = format!("over [prove] max_findings ({})", prove.max_findings);
            skipped.push(not_attempted(&c, prove, &why));
        } else {
            chosen.push(c);
        }
    }
    (chosen, skipped)
}

/// The key of a finding's proof in the run dir (`r1-F3`: `proofs/<key>/`,
/// `agents/p/<key>/`).
pub fn proof_key(round: u32, id: &str) -> String {
    format!("r{round}-{}", safe_key(id))
}

/// A finding id as a directory name: `[A-Za-z0-9_-]` kept, anything else `_`.
fn safe_key(id: &str) -> String {
    let s: String = id
        .chars()
        .take(32)
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() {
        "_".into()
    } else {
        s
    }
}

/// What the review left of `--budget-usd` / `--budget-tokens`, and whether nothing is left.
fn budget_left(plan: &RunPlan, result: &ReviewResult) -> (Option<f64>, Option<u64>, bool) {
    let usd: f64 = result.rounds.iter().map(|r| r.cost_usd).sum();
    let tokens: u64 = result.rounds.iter().map(|r| r.tokens).sum();
    let left_usd = plan.budget_usd.map(|b| (b - usd).max(0.0));
    let left_tokens = plan.budget_tokens.map(|b| b.saturating_sub(tokens));
    let exhausted = left_usd.is_some_and(|u| u <= 0.0) || left_tokens == Some(0);
    (left_usd, left_tokens, exhausted)
}

/// How many reproducers may run at once: the machine's cores.
fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
}

/// The revision of the base run: for a diff, what it was taken against — the snapshot tree
/// (`--base-tree`), the merge-base of `--base` and HEAD, or HEAD. None for files and globs.
fn base_revision(target: &PinnedTarget) -> Option<String> {
    if target.kind != TargetKind::Diff {
        return None;
    }
    if let Some(tree) = &target.base_tree {
        return Some(tree.clone());
    }
    let Some(rev) = &target.base else {
        return Some("HEAD".into());
    };
    let repo = git2::Repository::open(&target.root).ok()?;
    let head = repo.head().ok()?.peel_to_commit().ok()?.id();
    let other = repo.revparse_single(rev).ok()?.peel_to_commit().ok()?.id();
    repo.merge_base(head, other).ok().map(|id| id.to_string())
}

fn evidence(prove: &ProvePlan, status: ProofStatus, reason: Option<String>) -> Evidence {
    Evidence {
        status,
        command: vec![],
        files: vec![],
        head: None,
        base: None,
        sandbox: prove.sandbox,
        reason,
    }
}

fn proof_of(c: &Candidate<'_>, claim: Option<String>, evidence: Evidence) -> FindingProof {
    FindingProof {
        round: c.judged.round,
        finding_id: c.judged.finding.finding.id.clone(),
        key: c.key.clone(),
        claim,
        evidence,
    }
}

fn not_attempted(c: &Candidate<'_>, prove: &ProvePlan, why: &str) -> FindingProof {
    proof_of(
        c,
        None,
        evidence(prove, ProofStatus::NotAttempted, Some(why.into())),
    )
}

fn inconclusive(c: &Candidate<'_>, prove: &ProvePlan, why: String) -> FindingProof {
    proof_of(
        c,
        None,
        evidence(prove, ProofStatus::Inconclusive, Some(why)),
    )
}

/// One finding's proof: its scratch trees, its Prover, the check, the runs. The record goes
/// to `proofs/<key>.json`; the Prover's dispatches are returned for the cost, and a warning
/// for each scratch tree that could not be removed.
async fn prove_one(
    ph: &Phase<'_>,
    c: &Candidate<'_>,
) -> (FindingProof, Vec<DispatchRecord>, Vec<String>) {
    let (proof, records, trees) = attempt(ph, c).await;
    let left = remove_trees(trees).await;
    for w in &left {
        ph.progress.line(&format!("warning: {w}"));
    }
    let dir = ph.run.path.join("proofs");
    let path = dir.join(format!("{}.json", c.key));
    // A proof rejected before its files were kept has no `proofs/` dir yet.
    if let Err(e) = std::fs::create_dir_all(&dir) {
        tracing::warn!("cannot create {}: {e}", dir.display());
    } else if let Err(e) = write_json_record(&path, &proof) {
        tracing::warn!("cannot write {}: {e}", path.display());
    }
    ph.progress.line(&format!(
        "Proof · {} · {}{}",
        c.judged.finding.finding.id,
        proof.evidence.status.as_str(),
        proof
            .evidence
            .reason
            .as_deref()
            .map(|r| format!(" ({})", r.chars().take(120).collect::<String>()))
            .unwrap_or_default()
    ));
    (proof, records, left)
}

/// Remove scratch trees (off the runtime's thread); what was left behind, as warnings.
async fn remove_trees(trees: Vec<Scratch>) -> Vec<String> {
    if trees.is_empty() {
        return vec![];
    }
    let removed = tokio::task::spawn_blocking(move || {
        trees
            .into_iter()
            .filter_map(|t| t.remove().err().map(|e| e.to_string()))
            .collect::<Vec<String>>()
    })
    .await;
    let left = removed.unwrap_or_else(|e| vec![format!("removing the scratch trees failed: {e}")]);
    for w in &left {
        tracing::warn!("{w}");
    }
    left
}

/// The proof, the Prover's dispatches, and the scratch trees to remove.
async fn attempt(
    ph: &Phase<'_>,
    c: &Candidate<'_>,
) -> (FindingProof, Vec<DispatchRecord>, Vec<Scratch>) {
    let prove = ph.prove;
    let (head, base) = match scratch_trees(ph).await {
        Ok(t) => t,
        Err(e) => return (inconclusive(c, prove, e.to_string()), vec![], vec![]),
    };
    let trees = |head: Scratch, base: Option<Scratch>| {
        std::iter::once(head).chain(base).collect::<Vec<_>>()
    };
    if ph.token.is_cancelled() {
        return (
            not_attempted(c, prove, stop_reason(ph)),
            vec![],
            trees(head, base),
        );
    }
    let f = &c.judged.finding.finding;
    let ruling = c.judged.ruling.as_ref();
    let job = ProverJob {
        key: c.key.clone(),
        finding_id: f.id.clone(),
        round: c.judged.round,
        tier: ph.plan.tier_start,
        finding: ProverFinding {
            id: &f.id,
            severity: c.severity,
            file: ruling.and_then(|r| r.file.as_deref()).or(f.file.as_deref()),
            line: ruling.and_then(|r| r.line).or(f.line),
            category: &f.category,
            description: &f.description,
            evidence: &f.evidence,
            resolution: ruling.map_or("", |r| r.resolution.as_str()),
        },
        base_note: base_note(ph),
        time_limit: prove.time_limit(),
        max_usd: ph.max_usd,
    };
    let head_tree = head.tree();
    let pr = run_prover(
        ph.plan, ph.target, &head_tree, ph.run, &job, &ph.meter, &ph.token, ph.live,
    )
    .await;
    let proof = match pr.end {
        ProverEnd::Answered(ProverOutput::Reproducer(r)) => {
            reproduce(ph, c, &head, base.as_ref(), r).await
        }
        ProverEnd::Answered(ProverOutput::Unprovable(u)) => {
            inconclusive(c, prove, format!("unprovable: {}", u.unprovable))
        }
        ProverEnd::Malformed(e) => inconclusive(c, prove, format!("prover_malformed_json: {e}")),
        ProverEnd::Rejected { reason, detail } => {
            inconclusive(c, prove, format!("{reason}: {detail}"))
        }
        ProverEnd::Interrupted => not_attempted(c, prove, stop_reason(ph)),
    };
    (proof, pr.records, trees(head, base))
}

/// Why a proof stopped before it ran: the budget, or an interruption.
fn stop_reason(ph: &Phase<'_>) -> &'static str {
    if ph.meter.tripped() {
        "the budget ran out during the proof phase"
    } else {
        "interrupted"
    }
}

/// What the prompt says about the base run.
fn base_note(ph: &Phase<'_>) -> String {
    match &ph.base {
        Some(_) => "arev also runs your files, unchanged, on the code before the change: a \
                    reproducer of a defect the change introduced passes there."
            .into(),
        None => "arev runs your files on the reviewed code only.".into(),
    }
}

/// A scratch tree that could not be made: the proof is inconclusive.
#[derive(Debug, thiserror::Error)]
enum ScratchSetup {
    #[error("cannot prepare the scratch tree: {0}")]
    Scratch(#[from] ScratchError),
    #[error("cannot prepare the scratch tree: {0}")]
    Join(#[from] tokio::task::JoinError),
}

/// Why the Prover's tree is refused (`prover_modified_code`).
#[derive(Debug, thiserror::Error)]
enum ModifiedCode {
    #[error("{0}")]
    Rejected(String),
    #[error("{0}")]
    Scratch(#[from] ScratchError),
    #[error("it created no file")]
    NoFile,
    #[error("its answer lists {0}, which it did not create")]
    Unlisted(String),
}

/// The scratch tree of the reviewed content, and of the base when there is one (made side by
/// side, off the runtime's thread). The repository is the target's: the user's, or in
/// iterate mode the worktree.
async fn scratch_trees(ph: &Phase<'_>) -> Result<(Scratch, Option<Scratch>), ScratchSetup> {
    let root = ph.target.root.clone();
    let head = tokio::task::spawn_blocking(move || Scratch::of_working_tree(&root));
    let base = ph.base.clone().map(|rev| {
        let root = ph.target.root.clone();
        tokio::task::spawn_blocking(move || Scratch::at(&root, &rev))
    });
    let joined = |r: Result<Result<Scratch, ScratchError>, tokio::task::JoinError>| {
        Ok::<_, ScratchSetup>(r??)
    };
    let head = joined(head.await)?;
    let base = match base {
        Some(b) => Some(joined(b.await)?),
        None => None,
    };
    Ok((head, base))
}

/// The Prover answered with a reproducer: check the tree, keep its files, run it on the
/// reviewed content (and the base), classify.
async fn reproduce(
    ph: &Phase<'_>,
    c: &Candidate<'_>,
    head: &Scratch,
    base: Option<&Scratch>,
    r: Reproducer,
) -> FindingProof {
    let prove = ph.prove;
    let claim = Some(r.claim.clone());
    let files = match checked_files(head, &r) {
        Ok(f) => f,
        Err(why) => {
            let mut p = inconclusive(c, prove, format!("prover_modified_code: {why}"));
            p.evidence.command = r.command;
            p.claim = claim;
            return p;
        }
    };
    let mut ev = evidence(prove, ProofStatus::Inconclusive, None);
    ev.command = r.command.clone();
    ev.files = files.clone();
    let keep = ph.run.proof_dir(&c.key);
    let kept = std::fs::create_dir_all(&keep).map_err(|e| e.to_string());
    if let Err(e) =
        kept.and_then(|()| copy_files(&head.tree(), &files, &keep).map_err(|e| e.to_string()))
    {
        tracing::warn!("cannot keep the reproducer of {}: {e}", c.key);
    }
    // The same files on the base; a base they cannot be copied into says nothing.
    let base = base.and_then(|b| match copy_files(&head.tree(), &files, &b.tree()) {
        Ok(()) => Some(b),
        Err(e) => {
            ev.reason = Some(format!("the base run did not happen: {e}"));
            None
        }
    });
    let head_spec = sandbox_spec(prove, head.tree(), &r.command);
    let base_spec = base
        .as_ref()
        .map(|b| sandbox_spec(prove, b.tree(), &r.command));
    let (head_run, base_run) = futures::join!(sandboxed(ph, &head_spec), async {
        match &base_spec {
            Some(s) => Some(sandboxed(ph, s).await),
            None => None,
        }
    });
    let (head_run, base_run) = match (head_run, base_run) {
        (Some(h), None) => (h, None),
        (Some(h), Some(Some(b))) => (h, Some(b)),
        _ => {
            let mut p = not_attempted(c, prove, "interrupted");
            p.claim = claim;
            return p;
        }
    };
    ev.status = if ph.base.is_some() && base_run.is_none() {
        // A base that could not be prepared: a failure on head proves nothing about when.
        match classify(&head_run, None) {
            ProofStatus::Reproduced => ProofStatus::Inconclusive,
            s => s,
        }
    } else {
        classify(&head_run, base_run.as_ref())
    };
    ev.head = Some(head_run);
    ev.base = base_run;
    proof_of(c, claim, ev)
}

/// The new files the Prover made, checked; every file its answer lists must be among them.
fn checked_files(head: &Scratch, r: &Reproducer) -> Result<Vec<String>, ModifiedCode> {
    let files = match head.new_files()? {
        Ok(f) => f,
        Err(Rejected(why)) => return Err(ModifiedCode::Rejected(why)),
    };
    if files.is_empty() {
        return Err(ModifiedCode::NoFile);
    }
    if let Some(missing) = r.files.iter().find(|f| !files.contains(f)) {
        return Err(ModifiedCode::Unlisted(missing.clone()));
    }
    Ok(files)
}

/// The sandbox of a run of `argv` in `workdir` under `prove`'s limits.
pub fn sandbox_spec(prove: &ProvePlan, workdir: PathBuf, argv: &[String]) -> SandboxSpec {
    SandboxSpec {
        workdir,
        argv: argv.to_vec(),
        timeout: prove.timeout,
        memory_bytes: prove.memory_bytes,
        env_allow: prove.env.clone(),
        bind_ro: prove.bind_ro.clone(),
        mode: prove.sandbox,
    }
}

/// One run under the sandbox, when a core is free. None when the phase was cancelled; a run
/// that could not start is a record with its `sandbox_error`.
async fn sandboxed(ph: &Phase<'_>, spec: &SandboxSpec) -> Option<RunRecord> {
    let _permit = tokio::select! {
        p = ph.cores.acquire() => p.ok()?,
        () = ph.interrupt.cancelled() => return None,
    };
    match crate::prove::run(spec, &ph.interrupt).await {
        Ok(r) => Some(r),
        Err(crate::prove::ProveError::Cancelled) => None,
        Err(e) => Some(RunRecord {
            sandbox_error: Some(e.to_string()),
            ..RunRecord::default()
        }),
    }
}

/// Why a kept reproducer could not be run again.
#[derive(Debug, thiserror::Error)]
pub enum RerunError {
    #[error("cannot prepare the scratch tree of {rev}: {source}")]
    Scratch {
        rev: String,
        #[source]
        source: crate::prove::ScratchError,
    },
    #[error("cannot place the reproducer's files: {0}")]
    Files(#[source] crate::prove::ScratchError),
    #[error("the scratch tree's task failed: {0}")]
    Task(#[from] tokio::task::JoinError),
}

/// Run a kept reproducer again — its `files` (under `kept`, as `proofs/<finding>/` holds
/// them) and `command` — on the tree of `rev` in the repository at `root`, in a scratch tree
/// of its own, under `prove`'s sandbox and limits. Iterate runs it on the fix commit, eval
/// on a case's buggy and fixed revisions. `Ok(None)` when `cancel` fired; a run that could
/// not start is a record with its `sandbox_error`.
pub async fn rerun_at(
    prove: &ProvePlan,
    root: &std::path::Path,
    rev: &str,
    kept: &std::path::Path,
    files: &[String],
    command: &[String],
    cancel: &CancellationToken,
) -> Result<Option<RunRecord>, RerunError> {
    let (root, owned_rev) = (root.to_path_buf(), rev.to_string());
    let scratch = tokio::task::spawn_blocking(move || Scratch::at(&root, &owned_rev))
        .await?
        .map_err(|source| RerunError::Scratch {
            rev: rev.to_string(),
            source,
        })?;
    copy_files(kept, files, &scratch.tree()).map_err(RerunError::Files)?;
    let spec = sandbox_spec(prove, scratch.tree(), command);
    let run = match crate::prove::run(&spec, cancel).await {
        Ok(r) => Some(r),
        Err(crate::prove::ProveError::Cancelled) => None,
        Err(e) => Some(RunRecord {
            sandbox_error: Some(e.to_string()),
            ..RunRecord::default()
        }),
    };
    for w in remove_trees(vec![scratch]).await {
        crate::output::warn(&w);
    }
    Ok(run)
}

#[cfg(test)]
#[path = "prove_tests.rs"]
mod tests;
