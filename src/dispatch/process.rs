//! Spawning one agent: own process group, stdin prompt, capped concurrent pipe reads,
//! timeout and cancellation with SIGTERM → grace → SIGKILL to the whole group.

use super::{AgentOutcome, AgentSpec, DispatchError, DispatchRequest};
use std::path::PathBuf;
use tokio_util::sync::CancellationToken;

/// Find the agent executable: an explicit path (must exist and be executable) or a name on PATH.
pub fn resolve_binary(_name_or_path: &str) -> Result<PathBuf, DispatchError> {
    todo!("helper: resolve_binary")
}

/// Run one agent to completion (or timeout/cancel). Writes prompt.md, events.jsonl,
/// stderr.log and outcome.json into `req.out_dir` atomically. Never panics on agent
/// misbehaviour: every failure is described in the returned outcome.
pub async fn dispatch(
    _agent: &AgentSpec,
    _req: &DispatchRequest,
    _cancel: &CancellationToken,
) -> Result<AgentOutcome, DispatchError> {
    todo!("helper: dispatch")
}
