//! What one dispatch of an agent produced, as `outcome.json` holds it (and round-N.json
//! summarises it): the tool uses, the result event, how the process ended.

use super::agent::{Role, Tier};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A tool call seen in the agent's events (deduplicated by id).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolUse {
    pub id: String,
    /// The backend's tool name (`Read`, `read_file`, `shell` for a Codex command, …).
    pub name: String,
    /// The tool's input verbatim (for a Codex command: `{"command": …}`).
    pub input: serde_json::Value,
    /// What it did to the file system, in backend-neutral terms (what the read gates check).
    pub access: FileAccess,
}

/// The file-system effect of one tool use, normalised across backends (what the read gates
/// check). Paths are as the agent wrote them: relative to the agent's working directory
/// unless absolute; the gates normalise them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FileAccess {
    /// Files read, in whole or in part (`Read`, `read_file`, `cat`, `sed -n`, …).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read: Vec<String>,
    /// Paths searched or listed (`Grep`, `Glob`, `grep_search`, `rg`, `ls`, …); an empty
    /// string is the working directory.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub search: Vec<String>,
    /// Paths written or edited (a reviewer never may).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub write: Vec<String>,
    /// Set when the tool's file accesses cannot be derived (e.g. `find`, a script, `$(…)`);
    /// the read membership gate treats such a tool use as off-target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unknown: Option<String>,
}

impl FileAccess {
    /// Not a file tool.
    pub fn none() -> Self {
        Self::default()
    }

    pub fn read(path: impl Into<String>) -> Self {
        Self {
            read: vec![path.into()],
            ..Self::default()
        }
    }

    pub fn search(path: impl Into<String>) -> Self {
        Self {
            search: vec![path.into()],
            ..Self::default()
        }
    }

    pub fn unknown(reason: impl Into<String>) -> Self {
        Self {
            unknown: Some(reason.into()),
            ..Self::default()
        }
    }

    /// Whether the tool touched the file system at all (or might have).
    pub fn is_file_tool(&self) -> bool {
        !(self.read.is_empty()
            && self.search.is_empty()
            && self.write.is_empty()
            && self.unknown.is_none())
    }
}

/// Token usage as reported by the agent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_creation_input_tokens: u64,
    pub cache_read_input_tokens: u64,
}

impl std::ops::AddAssign<&Usage> for Usage {
    fn add_assign(&mut self, u: &Usage) {
        self.input_tokens += u.input_tokens;
        self.output_tokens += u.output_tokens;
        self.cache_creation_input_tokens += u.cache_creation_input_tokens;
        self.cache_read_input_tokens += u.cache_read_input_tokens;
    }
}

impl Usage {
    pub fn total(&self) -> u64 {
        self.input_tokens
            + self.output_tokens
            + self.cache_creation_input_tokens
            + self.cache_read_input_tokens
    }
}

/// The last `result` event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ResultEvent {
    pub is_error: bool,
    pub subtype: String,
    /// The final answer text (`result`), absent on some error subtypes.
    pub text: Option<String>,
    pub total_cost_usd: f64,
    pub usage: Usage,
    /// `permission_denials[]` verbatim.
    pub permission_denials: Vec<serde_json::Value>,
    pub num_turns: Option<u64>,
}

/// How the process ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ProcessEnd {
    /// Exited with a code.
    Exited { code: i32 },
    /// Killed by a signal not sent by arev.
    Signaled { signal: i32 },
    /// The wall-clock timeout fired; arev sent SIGTERM (and SIGKILL after the grace).
    TimedOut { killed: bool },
    /// Cancelled (Ctrl-C); arev sent SIGTERM (and SIGKILL after the grace).
    Cancelled { killed: bool },
    /// The process could not be started.
    SpawnFailed { message: String },
}

/// Everything arev learned from one dispatch. Serialized as `outcome.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AgentOutcome {
    pub label: String,
    /// The configured agent name that ran (e.g. `claude`, `codex`).
    pub agent: String,
    pub role: Role,
    pub tier: Tier,
    /// The model string passed to the CLI.
    pub model: String,
    pub end: ProcessEnd,
    /// Tool uses in order of first appearance, deduplicated by id.
    pub tool_uses: Vec<ToolUse>,
    /// The last `result` event, if any.
    pub result: Option<ResultEvent>,
    /// stdout lines that were not JSON (counted, kept verbatim in events.jsonl).
    pub malformed_lines: u64,
    pub stdout_bytes: u64,
    pub stdout_truncated: bool,
    pub stderr_truncated: bool,
    pub duration_ms: u64,
    /// Why it failed, when its events name a cause (docs/contracts.md §19.2): transient, permanent or a
    /// truncated answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<Fault>,
    /// What a dispatch that printed no result spent (failed, timed out, cancelled): summed
    /// from the per-message usage in its events and priced at the model's list price
    /// (docs/contracts.md §19.1). Absent when a result event gives the spend, or nothing was spent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streamed: Option<StreamedSpend>,
    /// Its model has no known price and its CLI reports no cost (docs/configuration.md
    /// "Budgets and `[prices]`"): its tokens are counted, its `cost_usd` of 0 means unknown.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unpriced: bool,
    /// The size of the answer text once it was parsed and dropped ([`Self::forget_answer`]).
    /// Not serialized: outcome.json, written before, gives it.
    #[serde(skip)]
    pub answer_forgotten: Option<u64>,
}

impl AgentOutcome {
    /// The outcome of a dispatch of `agent` that has not produced anything yet.
    pub fn empty(
        label: &str,
        agent: &str,
        role: Role,
        tier: Tier,
        model: &str,
        end: ProcessEnd,
    ) -> Self {
        Self {
            label: label.to_string(),
            agent: agent.to_string(),
            role,
            tier,
            model: model.to_string(),
            end,
            tool_uses: Vec::new(),
            result: None,
            malformed_lines: 0,
            stdout_bytes: 0,
            stdout_truncated: false,
            stderr_truncated: false,
            duration_ms: 0,
            fault: None,
            streamed: None,
            unpriced: false,
            answer_forgotten: None,
        }
    }

    /// Bytes of the answer text (None without one), also once it was forgotten.
    pub fn answer_bytes(&self) -> Option<u64> {
        let text = self.result.as_ref().and_then(|r| r.text.as_ref());
        text.map(|t| t.len() as u64).or(self.answer_forgotten)
    }

    /// Drop the answer text, keeping its size: once it was parsed nothing reads it again, and
    /// events.jsonl holds it verbatim (a round of 3 × 1,000 findings held ~0.9 MiB of
    /// answers through the Judge's dispatch).
    pub fn forget_answer(&mut self) {
        if let Some(text) = self.result.as_mut().and_then(|r| r.text.take()) {
            self.answer_forgotten = Some(text.len() as u64);
        }
    }

    /// The final answer text when the dispatch was authentic (ran, produced a result,
    /// not `is_error`).
    pub fn answer(&self) -> Option<&str> {
        match &self.result {
            Some(r) if !r.is_error => r.text.as_deref(),
            _ => None,
        }
    }

    /// What the dispatch cost: the result event's figure, else what its events show it
    /// spent ([`Self::streamed`]).
    pub fn cost_usd(&self) -> f64 {
        match (&self.result, &self.streamed) {
            (Some(r), _) => r.total_cost_usd,
            (None, Some(s)) => s.cost_usd,
            (None, None) => 0.0,
        }
    }

    /// Tokens the agent used: the result event's, else those its events show.
    pub fn tokens(&self) -> u64 {
        match (&self.result, &self.streamed) {
            (Some(r), _) => r.usage.total(),
            (None, Some(s)) => s.usage.total(),
            (None, None) => 0,
        }
    }

    /// The tokens whose price is unknown ([`Self::unpriced`]): all of them, or none.
    pub fn unpriced_tokens(&self) -> u64 {
        if self.unpriced {
            self.tokens()
        } else {
            0
        }
    }
}

/// The spend of a dispatch without a result event, from its events' per-message usage.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StreamedSpend {
    pub usage: Usage,
    /// `usage` at the model's price (0 when it has none: the outcome is then `unpriced`).
    pub cost_usd: f64,
}

/// How a failed dispatch is handled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FaultClass {
    /// Worth re-dispatching after a backoff.
    Transient,
    /// No re-dispatch can succeed: abort now.
    Permanent,
    /// The answer was cut at the output cap.
    Truncated,
    /// Its CLI stopped it at its share of the run's budget (Claude Code's
    /// `--max-budget-usd`): a re-dispatch cannot be paid for, so the run's budget is spent.
    Budget,
}

/// The classified cause of a failed dispatch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Fault {
    pub class: FaultClass,
    /// `overloaded`, `rate_limited`, `server_error`, `connection`, `authentication`,
    /// `permission`, `billing`, `invalid_request`, `unknown_model`, `refusal`,
    /// `output_truncated` or `budget_share`.
    pub cause: String,
    /// The API's HTTP status, when the CLI reported one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// How long to wait before retrying, when the CLI showed it (its retry delay, which
    /// honours the API's `retry-after`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
    /// One line naming the cause and the fix.
    pub message: String,
}
