//! `AgentEvent`, what every backend's stream is decoded into, and the `Decoder` trait.

use crate::records::{Fault, ProcessEnd, ResultEvent, ToolUse, Usage};
use serde_json::Value;

/// One normalised event of an agent's stream.
#[derive(Debug, Clone, PartialEq)]
pub enum AgentEvent {
    /// A tool call (the fold keeps the first of each id).
    ToolUse(ToolUse),
    /// The usage so far (a running total, replacing the previous one).
    Usage(Usage),
    /// The CLI is retrying an API error: its classified fault (HTTP status, cause = the
    /// error's kind, class). The retry of a permanent one stops the agent.
    Retry(Fault),
    /// An error the CLI reported that names the fault of a run without a result.
    Error(Fault),
    /// Text of the model.
    Text(String),
    /// The run's result (the last one counts) and the fault it names.
    Result {
        result: ResultEvent,
        fault: Option<Fault>,
    },
}

/// A backend's streaming decoder: fed its stdout line by line as the agent prints it.
pub trait Decoder: Send {
    /// One line that is a JSON object (`type`-tagged or not).
    fn event(&mut self, event: Value, out: &mut Vec<AgentEvent>);

    /// The process ended (`end`, its stderr): the events only the end decides (a result
    /// synthesised from the stream, an exit code's meaning).
    fn end(&mut self, _end: &ProcessEnd, _stderr: &[u8], _out: &mut Vec<AgentEvent>) {}
}
