//! The Matcher's dispatch (`arev eval bench --score`, docs/eval.md "The public benchmark"):
//! one (golden comment, candidate) pair, written by arev into a file that is the target, and
//! the benchmark's question — does the candidate name the same underlying issue as the
//! golden comment? The same prompt contract and gates as the reviewers (authenticity retry,
//! the Read of the target, forbidden tools, reads outside the target, the schema re-dispatch
//! once); a gate that fires, or an answer malformed twice, gives no verdict: the pair counts
//! as no match and is reported.

use super::context::Ctx;
use super::prompt::{escape_text, render};
use super::role::{run_role, Checks, RoleOutput, RoleRun, Who};
use super::DispatchRecord;
use crate::findings::{Role, Tier};
use crate::gates::{AnswerError, AnswerSchema};
use crate::records::{MatcherOutput, Spend};
use crate::resolve::RunPlan;
use crate::store::{ProgressLog, RunDir};
use crate::target::PinnedTarget;
use tokio_util::sync::CancellationToken;

impl AnswerSchema for MatcherOutput {
    fn check(&self) -> Result<(), AnswerError> {
        // `confidence` in 0..=1 is checked when it is parsed (records).
        Ok(())
    }
}

/// One pair to match.
#[derive(Debug, Clone)]
pub struct MatcherJob {
    /// `g1-c2`: the dispatch's label (`matcher-g1-c2`) and the prompt's first line.
    pub pair: String,
    pub tier: Tier,
    pub max_usd: Option<f64>,
}

/// How a Matcher's dispatch ended.
#[derive(Debug, Clone, PartialEq)]
pub enum MatcherEnd {
    Answered(MatcherOutput),
    /// Invalid twice: no verdict (the parse error).
    Malformed(String),
    /// A gate fired (its reason and detail): no verdict.
    Rejected {
        reason: String,
        detail: String,
    },
    Interrupted,
}

/// The Matcher's result and every dispatch attempt.
#[derive(Debug, Clone)]
pub struct MatcherRun {
    pub end: MatcherEnd,
    pub records: Vec<DispatchRecord>,
}

impl MatcherRun {
    pub fn spent(&self) -> Spend {
        let mut s = Spend::default();
        for r in &self.records {
            s.add(&Spend::of_outcome(&r.outcome));
        }
        s
    }
}

/// The Matcher's first line: `[AR Round 1 — {MODE}] Matcher (pair g1-c2)`.
pub fn matcher_first_line(mode: &str, pair: &str) -> String {
    format!(
        "[AR Round 1 — {mode}] {} (pair {pair})",
        Role::Matcher.title()
    )
}

/// Dispatch the Matcher on the pair file `target` (pinned by `plan`); its dispatch dirs are
/// `<run>/agents/r1/matcher-<pair>[-retry]/`.
pub async fn run_matcher(
    plan: &RunPlan,
    target: &PinnedTarget,
    run: &RunDir,
    job: &MatcherJob,
    cancel: &CancellationToken,
    progress: &ProgressLog,
) -> MatcherRun {
    let rejected = |detail: String| MatcherRun {
        end: MatcherEnd::Rejected {
            reason: "agent_dispatch_unavailable".into(),
            detail,
        },
        records: vec![],
    };
    let ctx = match Ctx::new(plan, target, run) {
        Ok(c) => c,
        Err((_, detail)) => return rejected(detail),
    };
    let view = match ctx.view(1, None) {
        Ok(v) => v,
        Err(e) => return rejected(format!("cannot prepare the target view: {e}")),
    };
    let mut v = ctx.base_vars(&view, 1, Role::Matcher);
    v.set("pair", escape_text(&job.pair));
    let header = matcher_first_line(ctx.mode(), &job.pair);
    let prompt = render(&header, ctx.assets.template(Role::Matcher), &v);
    let who = Who {
        role: Role::Matcher,
        pass: None,
        round: 1,
        tier: job.tier,
        max_usd: job.max_usd,
        // Matchers run side by side: each pair's label is its own (`matcher-g1-c2`).
        finding: Some(&job.pair),
    };
    // A gate abort cancels the token it is given: keep that local to this pair.
    let local = cancel.child_token();
    let r: RoleRun<MatcherOutput> =
        run_role(&ctx, &view, who, prompt, &local, progress, Checks::none()).await;
    let end = match r.output {
        _ if cancel.is_cancelled() => MatcherEnd::Interrupted,
        RoleOutput::Valid(o) => MatcherEnd::Answered(o),
        RoleOutput::Malformed(e) => MatcherEnd::Malformed(e),
        RoleOutput::Abort(a) => MatcherEnd::Rejected {
            reason: a.reason().to_string(),
            detail: a.detail(),
        },
        RoleOutput::Lost(detail) => MatcherEnd::Rejected {
            reason: "agent_dispatch_unavailable".into(),
            detail,
        },
        RoleOutput::Cancelled => MatcherEnd::Interrupted,
    };
    MatcherRun {
        end,
        records: r.records,
    }
}
