//! 3A ∥ 3B: the Enthusiast passes and the Adversary dispatched concurrently, returned as
//! soon as every pass has answered — the Adversary done, or still running so that the round
//! can cancel it when its map would be thrown away (docs/contracts.md §7).

use super::context::{Ctx, RoundView};
use super::progress::Progress;
use super::role::{run_role, Checks, RoleOutput, RoleRun, Who};
use super::step::State;
use crate::findings::{AdversaryOutput, EnthusiastOutput, Role};
use crate::store::ProgressLog;
use futures::future::{Either, FutureExt, LocalBoxFuture};
use tokio_util::sync::CancellationToken;

/// A round's Adversary once the Enthusiast passes have answered: done, or still running
/// (awaited, or cancelled first when its map would be thrown away).
pub(super) enum Adversary<'a> {
    Done(RoleRun<AdversaryOutput>),
    Running(LocalBoxFuture<'a, RoleRun<AdversaryOutput>>),
}

impl Adversary<'_> {
    pub(super) fn running(&self) -> bool {
        matches!(self, Self::Running(_))
    }

    /// Its run, once it has ended (a cancelled one ends at once, its dispatch recorded).
    pub(super) async fn finish(self) -> RoleRun<AdversaryOutput> {
        match self {
            Self::Done(r) => r,
            Self::Running(f) => f.await,
        }
    }
}

/// 3A ∥ 3B: the Enthusiast passes and the Adversary, dispatched concurrently. Returns once
/// every pass has answered, with the Adversary done or still running (under `adv_cancel`, a
/// child of `round_cancel`; an Adversary abort cancels the whole round).
pub(super) async fn dispatch_finders<'a>(
    ctx: &'a Ctx<'_>,
    view: &'a RoundView,
    st: &State,
    round: u32,
    (round_cancel, adv_cancel): (&'a CancellationToken, &'a CancellationToken),
    (progress, live): (Progress, &'a ProgressLog),
) -> (Vec<RoleRun<EnthusiastOutput>>, Adversary<'a>) {
    let (plan, tier) = (ctx.plan, st.tier);
    // Hard budgets (docs/contracts.md §19.3): each of the dispatches starting now gets an equal share of
    // what is left (Claude's `--max-budget-usd`).
    let max_usd = st
        .budget_left(plan, (0.0, 0))
        .0
        .map(|left| left / f64::from(plan.passes + 1));
    let enth = (1..=plan.passes).map(|p| {
        let prompt = ctx.enthusiast_prompt(view, round, p, &st.history);
        let who = Who {
            role: Role::Enthusiast,
            pass: Some(p),
            round,
            tier,
            max_usd,
            finding: None,
        };
        async move {
            // A valid answer, however short, is taken as given (no paid re-prompt).
            let r: RoleRun<EnthusiastOutput> =
                run_role(ctx, view, who, prompt, round_cancel, live, Checks::none()).await;
            progress.line(&match &r.output {
                RoleOutput::Valid(o) => format!(
                    "Round {round} · Enthusiast pass {p}/{} ({} finding(s)){}",
                    plan.passes,
                    o.findings.len(),
                    r.context_note()
                ),
                RoleOutput::Malformed(_) => {
                    format!("Round {round} · Enthusiast pass {p}: malformed answer")
                }
                RoleOutput::Abort(a) => {
                    format!("Round {round} · Enthusiast pass {p}: {}", a.reason())
                }
                RoleOutput::Lost(cause) => {
                    format!("Round {round} · Enthusiast pass {p}: lost ({cause})")
                }
                RoleOutput::Cancelled => format!("Round {round} · Enthusiast pass {p}: cancelled"),
            });
            r
        }
    });
    let who = Who {
        role: Role::Adversary,
        pass: None,
        round,
        tier,
        max_usd,
        finding: None,
    };
    let prompt = ctx.adversary_prompt(view, round);
    let adv = async move {
        let r: RoleRun<AdversaryOutput> =
            run_role(ctx, view, who, prompt, adv_cancel, live, Checks::none()).await;
        match &r.output {
            RoleOutput::Valid(m) => progress.line(&format!(
                "Round {round} · Adversary ({} heuristic(s), {} safe zone(s)){}",
                m.heuristics.len(),
                m.safe_zones.len(),
                r.context_note()
            )),
            // No verdict can come from this round: stop the passes now (only an Enthusiast
            // pass is ever lost; an Adversary that cannot answer aborts).
            RoleOutput::Abort(_) | RoleOutput::Lost(_) => round_cancel.cancel(),
            RoleOutput::Malformed(_) | RoleOutput::Cancelled => {}
        }
        r
    }
    .boxed_local();
    let enth = Box::pin(futures::future::join_all(enth));
    match futures::future::select(enth, adv).await {
        Either::Left((passes, adv)) => (passes, Adversary::Running(adv)),
        Either::Right((adv, passes)) => (passes.await, Adversary::Done(adv)),
    }
}
