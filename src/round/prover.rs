//! The Prover's dispatch (`--prove`, docs/prove.md): one confirmed finding, the target
//! pointer and a scratch worktree of the reviewed content as its cwd. The same prompt
//! contract and gates as the reviewers (authenticity retry, Read of the target, forbidden
//! tools, reads — anywhere inside the worktree, nowhere else — and the schema re-dispatch),
//! plus the Fixer's write gate: every Write must land inside the worktree. A gate that fires
//! rejects this one proof; the review's verdict stands.

use super::context::{Ctx, RoundView};
use super::fixer::write_violation;
use super::meter::Meter;
use super::prompt::{embed_json, escape_text, prover_first_line, render};
use super::role::{run_role, Checks, RoleOutput, RoleRun, Who};
use super::DispatchRecord;
use crate::findings::{ProverOutput, Role, Tier};
use crate::gates::ReadScope;
use crate::records::Spend;
use crate::resolve::RunPlan;
use crate::store::{ProgressLog, RunDir};
use crate::target::PinnedTarget;
use tokio_util::sync::CancellationToken;

/// One proof to dispatch.
#[derive(Debug, Clone)]
pub struct ProverJob<T> {
    /// The finding's key in the run dir (`r1-F3`): `agents/p/<key>/`, `proofs/<key>/`.
    pub key: String,
    /// The finding's id in its round (`F3`), which the answer must name.
    pub finding_id: String,
    /// The round that confirmed it (the prompt's `[AR Round N …]`).
    pub round: u32,
    pub tier: Tier,
    /// The finding with its ruling, as the prompt's `<finding>` JSON.
    pub finding: T,
    /// One sentence on where the reproducer runs besides the reviewed content.
    pub base_note: String,
    /// `[timeouts] prove`, as the prompt states it.
    pub time_limit: String,
    /// Its share of what is left of `--budget-usd`.
    pub max_usd: Option<f64>,
}

/// How a Prover's dispatch ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProverEnd {
    Answered(ProverOutput),
    /// Invalid twice (or naming another finding): no reproducer.
    Malformed(String),
    /// A gate fired (`prover_offtarget_read`, `prover_forbidden_tool`,
    /// `prover_offtarget_write`, `prover_no_tool_invocation`, `agent_dispatch_unavailable`):
    /// the reason and its detail. Nothing it wrote is run.
    Rejected {
        reason: String,
        detail: String,
    },
    Interrupted,
}

/// The Prover's result and every dispatch attempt.
#[derive(Debug, Clone)]
pub struct ProverRun {
    pub end: ProverEnd,
    pub records: Vec<DispatchRecord>,
}

impl ProverRun {
    /// What its dispatches cost.
    pub fn spent(&self) -> Spend {
        let mut s = Spend::default();
        for r in &self.records {
            s.add(&Spend::of_outcome(&r.outcome));
        }
        s
    }
}

/// The proof phase's spend against what the review left of its budgets: shared by the
/// Provers running side by side; once passed, the phase's token is cancelled (the Provers in
/// flight stop) and nothing more starts.
#[derive(Clone, Default)]
pub struct ProofMeter(Meter);

impl ProofMeter {
    /// `left_usd` / `left_tokens`: what the review left (None: no budget).
    pub fn new(left_usd: Option<f64>, left_tokens: Option<u64>) -> Self {
        Self(Meter::new(left_usd, left_tokens))
    }

    /// Cancel `token` once the budget is passed (at once when it already is).
    pub fn arm(&self, token: &CancellationToken) {
        self.0.arm(token);
    }

    pub fn tripped(&self) -> bool {
        self.0.tripped()
    }

    pub fn total(&self) -> Spend {
        self.0.total()
    }
}

/// Dispatch the Prover for `job`. `target` is pinned in the user's repository; `worktree`
/// is the scratch worktree (its cwd and read scope). Its dispatch dirs are
/// `<run>/agents/p/<key>/prover-<key>[-retry]/`.
#[allow(clippy::too_many_arguments)]
pub async fn run_prover<T: serde::Serialize + Sync>(
    plan: &RunPlan,
    target: &PinnedTarget,
    worktree: &std::path::Path,
    run: &RunDir,
    job: &ProverJob<T>,
    meter: &ProofMeter,
    cancel: &CancellationToken,
    progress: &ProgressLog,
) -> ProverRun {
    let rejected = |detail: String| ProverRun {
        end: ProverEnd::Rejected {
            reason: "agent_dispatch_unavailable".into(),
            detail,
        },
        records: vec![],
    };
    let inside = rooted(target, worktree);
    let mut ctx = match Ctx::new(plan, &inside, run) {
        Ok(c) => c,
        Err((_, detail)) => return rejected(detail),
    };
    ctx.meter = meter.0.clone();
    let view = match ctx.view(job.round, None) {
        Ok(v) => v,
        Err(e) => return rejected(format!("cannot prepare the target view: {e}")),
    };
    // Reads anywhere inside the worktree (the code under test, its tests, its manifests),
    // the target artefact, nothing else.
    let view = RoundView {
        scope: ReadScope::tree(worktree, &ctx.target_path(), &[]),
        ..view
    };
    let prompt = prover_prompt(&ctx, &view, job);
    let who = Who {
        role: Role::Prover,
        pass: None,
        round: job.round,
        tier: job.tier,
        max_usd: job.max_usd,
        finding: Some(&job.key),
    };
    let id_check = |o: &ProverOutput| {
        (o.finding_id() != job.finding_id).then(|| {
            format!(
                "the answer names finding {} but you were asked to prove {}",
                o.finding_id(),
                job.finding_id
            )
        })
    };
    let checks = Checks {
        content: Some(&id_check),
        ..Checks::none()
    };
    // A gate abort cancels the token it is given: keep that local to this dispatch.
    let local = cancel.child_token();
    let r: RoleRun<ProverOutput> =
        run_role(&ctx, &view, who, prompt, &local, progress, checks).await;
    let end = ending(r.output, worktree, &r.records, &job.finding_id, cancel);
    ProverRun {
        end,
        records: r.records,
    }
}

/// What the dispatch's output means for the proof.
fn ending(
    out: RoleOutput<ProverOutput>,
    worktree: &std::path::Path,
    records: &[DispatchRecord],
    finding_id: &str,
    cancel: &CancellationToken,
) -> ProverEnd {
    let reject = |reason: String, detail: String| ProverEnd::Rejected { reason, detail };
    match out {
        _ if cancel.is_cancelled() => ProverEnd::Interrupted,
        RoleOutput::Cancelled => ProverEnd::Interrupted,
        RoleOutput::Abort(a) => reject(a.reason().to_string(), a.detail()),
        // Whatever it answered, a write outside the worktree rejects the proof.
        out => match write_violation(worktree, records) {
            Some(path) => reject("prover_offtarget_write".into(), path),
            None => match out {
                RoleOutput::Valid(o) if o.finding_id() == finding_id => ProverEnd::Answered(o),
                RoleOutput::Valid(o) => ProverEnd::Malformed(format!(
                    "the answer names finding {}, not {finding_id}",
                    o.finding_id()
                )),
                RoleOutput::Malformed(e) => ProverEnd::Malformed(e),
                RoleOutput::Lost(detail) => reject("agent_dispatch_unavailable".into(), detail),
                RoleOutput::Abort(a) => reject(a.reason().to_string(), a.detail()),
                RoleOutput::Cancelled => ProverEnd::Interrupted,
            },
        },
    }
}

/// The target as seen from the worktree: the same pin, its files under `worktree`.
fn rooted(target: &PinnedTarget, worktree: &std::path::Path) -> PinnedTarget {
    let mut t = target.clone();
    if let Some(p) = &target.file_path {
        if let Ok(rel) = p.strip_prefix(&target.root) {
            t.file_path = Some(worktree.join(rel));
        }
    }
    t.root = worktree.to_path_buf();
    t
}

/// The Prover's prompt: first line `[AR Round {N} — {MODE}] Prover (finding {id})`, the
/// target tag, and the finding with its ruling as JSON inside `<finding>…</finding>`.
fn prover_prompt<T: serde::Serialize>(
    ctx: &Ctx<'_>,
    view: &RoundView,
    job: &ProverJob<T>,
) -> Result<String, super::prompt::PromptError> {
    let mut v = ctx.base_vars(view, job.round, Role::Prover);
    v.set("finding_id", escape_text(&job.finding_id))
        .set("finding", embed_json(&job.finding))
        .set("worktree", ctx.target.root.display().to_string())
        .set("time_limit", escape_text(&job.time_limit))
        .set("base_note", escape_text(&job.base_note));
    let header = prover_first_line(job.round, ctx.mode(), &job.finding_id);
    render(&header, ctx.assets.template(Role::Prover), &v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gates::Abort;

    #[test]
    fn a_gate_rejects_the_proof_and_a_wrong_id_is_no_answer() {
        let d = tempfile::tempdir().unwrap();
        let none = CancellationToken::new();
        let a = Abort::OfftargetRead {
            role: Role::Prover,
            path: "/etc/passwd".into(),
        };
        assert_eq!(
            ending(RoleOutput::Abort(a), d.path(), &[], "F1", &none),
            ProverEnd::Rejected {
                reason: "prover_offtarget_read".into(),
                detail: "the prover read /etc/passwd, which is outside the target".into()
            }
        );
        let other = ProverOutput::Unprovable(crate::findings::Unprovable {
            finding_id: "F2".into(),
            unprovable: "x".into(),
        });
        assert!(matches!(
            ending(RoleOutput::Valid(other.clone()), d.path(), &[], "F1", &none),
            ProverEnd::Malformed(_)
        ));
        assert_eq!(
            ending(RoleOutput::Valid(other.clone()), d.path(), &[], "F2", &none),
            ProverEnd::Answered(other.clone())
        );
        let cancelled = CancellationToken::new();
        cancelled.cancel();
        assert_eq!(
            ending(RoleOutput::Valid(other), d.path(), &[], "F2", &cancelled),
            ProverEnd::Interrupted
        );
    }

    #[test]
    fn the_target_is_seen_from_the_worktree() {
        let mut t = crate::test_support::target(
            std::path::Path::new("/repo"),
            crate::target::TargetKind::File,
            &[("src/a.rs", 3)],
        );
        t.file_path = Some("/repo/src/a.rs".into());
        let r = rooted(&t, std::path::Path::new("/wt"));
        assert_eq!(r.root, std::path::Path::new("/wt"));
        assert_eq!(
            r.file_path.as_deref(),
            Some(std::path::Path::new("/wt/src/a.rs"))
        );
        assert_eq!(r.sha256, t.sha256);
    }
}
