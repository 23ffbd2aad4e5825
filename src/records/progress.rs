//! progress.json (`schemas/progress.schema.json`): where a live run stands. Written by
//! `store::ProgressLog`, read by `arev status` and `arev runs`.

use super::agent::{Role, Tier};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What the run is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Reviewing (the rounds of one review).
    Review,
    /// Iterate mode: the Fixer applies the confirmed rulings.
    Fix,
    /// Iterate mode: the `--verify` command runs.
    Verify,
    /// The run finished; meta.json holds how.
    Done,
}

/// Whether a dispatch started or finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DispatchState {
    Started,
    Finished,
}

/// An agent running now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunningAgent {
    pub role: Role,
    pub pass: Option<u32>,
    /// The dispatch label (`enthusiast-p1`, `judge-retry`, `fixer`).
    pub label: String,
    /// Milliseconds since the run started, when this dispatch started. A reader measures
    /// the agent's elapsed time against now: `started_at + since_ms` is its start.
    pub since_ms: u64,
    /// Re-dispatches of this role before this one (0 for a first dispatch).
    #[serde(default)]
    pub retries: u32,
    /// What it has spent so far, from its events as they stream.
    #[serde(default)]
    pub spent: Spend,
}

/// Counts since the run started (over every review of an iterate run).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProgressCounts {
    pub dispatches_started: u32,
    pub dispatches_finished: u32,
    /// Rounds recorded (round-N.json written), completed or not.
    pub rounds: u32,
    /// Findings sent to the Judge.
    pub findings: u32,
    pub confirmed: u32,
    pub debunked: u32,
    /// Re-dispatches (an authenticity retry, a schema or cites re-prompt).
    #[serde(default)]
    pub retries: u32,
}

/// Cost and tokens: the run's finished dispatches' (a running agent's are added when it
/// ends), or one running agent's so far.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Spend {
    /// What the priced tokens cost.
    pub cost_usd: f64,
    pub tokens: u64,
    /// Of `tokens`, those of a model without a known price, which `cost_usd` leaves out
    /// (docs/configuration.md "Budgets and `[prices]`").
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unpriced_tokens: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Spend {
    /// `tokens` at `cost_usd`, None when their model has no known price.
    pub fn of(cost_usd: Option<f64>, tokens: u64) -> Self {
        Self {
            cost_usd: cost_usd.unwrap_or(0.0),
            tokens,
            unpriced_tokens: if cost_usd.is_none() { tokens } else { 0 },
        }
    }

    /// What a finished dispatch spent.
    pub fn of_outcome(o: &super::AgentOutcome) -> Self {
        Self {
            cost_usd: o.cost_usd(),
            tokens: o.tokens(),
            unpriced_tokens: o.unpriced_tokens(),
        }
    }

    /// Add `other` to this spend.
    pub fn add(&mut self, other: &Spend) {
        self.cost_usd += other.cost_usd;
        self.tokens += other.tokens;
        self.unpriced_tokens += other.unpriced_tokens;
    }

    /// `$0.0312`, `$0.0312 + price unknown` or `price unknown` (never `$0` for unpriced
    /// tokens).
    pub fn usd_text(&self) -> String {
        super::usd_or_unknown(
            self.cost_usd,
            self.tokens,
            self.unpriced_tokens,
            super::usd4,
        )
    }
}

/// progress.json.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunProgress {
    pub run_id: String,
    pub phase: Phase,
    /// Iterate mode: the current iteration.
    pub iteration: Option<u32>,
    /// The current review round and its tier (null before the first dispatch).
    pub round: Option<u32>,
    pub tier: Option<Tier>,
    /// Role, pass and state of the dispatch that last started or finished.
    pub role: Option<Role>,
    pub pass: Option<u32>,
    pub state: Option<DispatchState>,
    pub running: Vec<RunningAgent>,
    pub counts: ProgressCounts,
    /// The run's total so far.
    #[serde(default)]
    pub spent: Spend,
    pub started_at: String,
    pub updated_at: String,
    pub elapsed_ms: u64,
}

/// A running agent as `arev status --json` shows it: its elapsed time measured at the
/// moment of the call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LiveAgent {
    pub role: Role,
    pub pass: Option<u32>,
    pub label: String,
    /// Milliseconds since this dispatch started, measured now.
    pub elapsed_ms: u64,
    /// Re-dispatches of this role before this one.
    pub retries: u32,
    /// What it has spent so far (its events as they stream).
    pub spent: Spend,
}

/// `arev status --json` (`schemas/status.schema.json`): where a run stands, measured now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LiveStatus {
    pub run_id: String,
    pub run_dir: String,
    /// `running`, `abandoned`, `complete`, `aborted`, `interrupted`, `empty` (null when
    /// meta.json is unreadable).
    pub state: Option<String>,
    pub phase: Option<Phase>,
    pub round: Option<u32>,
    pub tier: Option<Tier>,
    /// The agents running now (empty once the run is not running).
    pub running: Vec<LiveAgent>,
    pub counts: Option<ProgressCounts>,
    /// The run's spend so far (finished dispatches; `running` adds the agents in flight).
    pub spent: Option<Spend>,
    /// Milliseconds since the run started: to now while it runs, else to its end.
    pub elapsed_ms: Option<u64>,
    pub exit_code: Option<i32>,
}
