//! The review's spend against its budgets while agents run (docs/contracts.md §19.3): what the finished
//! dispatches recorded plus what each agent in flight has spent so far, as its events
//! stream. Once the sum passes `--budget-usd` or `--budget-tokens`, the agents in flight are
//! stopped (the round's token is cancelled) and the meter stays tripped: nothing more is
//! started. Before the Judge has ruled the run aborts `budget_exhausted_before_verdict`
//! (the answers already received are kept, unresolved); after, it stops
//! `budget-exhausted`. Total spend stays within the budget plus what the agents in flight
//! spent in their last step.

use crate::dispatch::{SpendMeter, Usage};
use crate::records::{Role, Spend};
use crate::store::ProgressLog;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;

/// The review's meter; cheap to clone, shared by the concurrent dispatches of a round.
#[derive(Clone, Default)]
pub(super) struct Meter {
    budget_usd: Option<f64>,
    budget_tokens: Option<u64>,
    inner: Arc<Mutex<Inner>>,
}

#[derive(Default)]
struct Inner {
    /// The finished dispatches' spend.
    recorded: Spend,
    /// Each running agent's spend so far, by dispatch label.
    in_flight: BTreeMap<String, Spend>,
    tripped: bool,
    /// The token whose agents are stopped when the budget is passed (the round's).
    armed: Option<CancellationToken>,
}

impl Inner {
    fn total(&self) -> Spend {
        let mut t = self.recorded.clone();
        for s in self.in_flight.values() {
            t.add(s);
        }
        t
    }
}

impl Meter {
    pub fn new(budget_usd: Option<f64>, budget_tokens: Option<u64>) -> Self {
        Self {
            budget_usd,
            budget_tokens,
            inner: Arc::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The agents of the round under `token` are stopped once the budget is passed (at
    /// once when it already is).
    pub fn arm(&self, token: &CancellationToken) {
        let mut inner = self.lock();
        if inner.tripped {
            token.cancel();
        }
        inner.armed = Some(token.clone());
    }

    /// Whether the budget was passed, by finished or running agents.
    pub fn tripped(&self) -> bool {
        self.lock().tripped
    }

    /// The recorded and in-flight spend together.
    pub fn total(&self) -> Spend {
        self.lock().total()
    }

    /// Agent `label` has spent `spent` so far; trips the meter when the total passes a
    /// budget.
    fn running(&self, label: &str, spent: Spend) {
        let mut inner = self.lock();
        inner.in_flight.insert(label.to_string(), spent);
        self.check(&mut inner);
    }

    /// Agent `label` ended having spent `spent` (its recorded figure).
    pub fn finished(&self, label: &str, spent: &Spend) {
        let mut inner = self.lock();
        inner.in_flight.remove(label);
        inner.recorded.add(spent);
        self.check(&mut inner);
    }

    /// An agent was stopped at its share of the budget by its own CLI: the budget is spent
    /// whatever the sum says (the rest is the other agents' shares), so the meter trips.
    pub fn exhaust(&self) {
        let mut inner = self.lock();
        if !inner.tripped {
            tracing::debug!("an agent reached its share of the budget: stopping the others");
            inner.tripped = true;
            if let Some(token) = &inner.armed {
                token.cancel();
            }
        }
    }

    fn check(&self, inner: &mut Inner) {
        if inner.tripped {
            return;
        }
        let t = inner.total();
        let over = self.budget_usd.is_some_and(|b| t.cost_usd > b)
            || self.budget_tokens.is_some_and(|b| t.tokens > b);
        if over {
            tracing::debug!(
                usd = t.cost_usd,
                tokens = t.tokens,
                "the budget is spent: stopping the agents in flight"
            );
            inner.tripped = true;
            if let Some(token) = &inner.armed {
                token.cancel();
            }
        }
    }

    /// The meter of one dispatch: its running spend goes to the review's meter and to
    /// progress.json.
    pub fn agent(
        &self,
        (role, pass, label): (Role, Option<u32>, &str),
        progress: &ProgressLog,
    ) -> Arc<dyn SpendMeter> {
        Arc::new(AgentMeter {
            meter: self.clone(),
            progress: progress.clone(),
            role,
            pass,
            label: label.to_string(),
        })
    }
}

struct AgentMeter {
    meter: Meter,
    progress: ProgressLog,
    role: Role,
    pass: Option<u32>,
    label: String,
}

impl SpendMeter for AgentMeter {
    fn spending(&self, usage: &Usage, cost_usd: Option<f64>) {
        let spent = Spend::of(cost_usd, usage.total());
        self.progress
            .dispatch_spending(self.role, self.pass, &self.label, spent.clone());
        self.meter.running(&self.label, spent);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spend(cost_usd: f64, tokens: u64) -> Spend {
        Spend::of(Some(cost_usd), tokens)
    }

    #[test]
    fn agents_in_flight_are_stopped_once_the_total_passes_the_budget() {
        let m = Meter::new(Some(0.10), None);
        let round = CancellationToken::new();
        m.arm(&round);
        m.finished("enthusiast-p1", &spend(0.04, 1000));
        m.running("adversary", spend(0.03, 800));
        m.running("enthusiast-p2", spend(0.03, 800));
        assert!(
            !m.tripped() && !round.is_cancelled(),
            "0.10 is not past 0.10"
        );
        m.running("enthusiast-p2", spend(0.031, 900));
        assert!(m.tripped() && round.is_cancelled());
        assert!((m.total().cost_usd - 0.101).abs() < 1e-9);
        // The next round's token is cancelled as soon as it is armed.
        let next = CancellationToken::new();
        m.arm(&next);
        assert!(next.is_cancelled());
    }

    #[test]
    fn an_agent_stopped_at_its_share_trips_the_meter_whatever_the_sum() {
        let m = Meter::new(Some(0.10), None);
        let round = CancellationToken::new();
        m.arm(&round);
        m.finished("enthusiast-p1", &spend(0.04, 1000));
        assert!(!m.tripped());
        m.exhaust();
        assert!(m.tripped() && round.is_cancelled());
        let next = CancellationToken::new();
        m.arm(&next);
        assert!(next.is_cancelled(), "nothing more is started");
    }

    #[test]
    fn a_finished_agent_moves_from_in_flight_to_recorded() {
        let m = Meter::new(None, Some(5000));
        m.running("judge", spend(0.0, 3000));
        m.finished("judge", &spend(0.0, 3100));
        assert_eq!(m.total().tokens, 3100, "counted once");
        m.running("judge-retry", spend(0.0, 2000));
        assert!(m.tripped(), "3100 + 2000 tokens > 5000");
    }

    #[test]
    fn without_a_budget_nothing_trips() {
        let m = Meter::default();
        m.running("judge", spend(1e9, u64::MAX / 2));
        assert!(!m.tripped());
    }
}
