//! The `claude` backend: read-only argv (reference/agent-clis.md §1.2) and the stream-json parser.

use super::{AgentSpec, DispatchRequest, ResultEvent, ToolUse};

/// The argv (without the program) for a read-only Claude Code worker; the prompt goes on stdin.
pub fn claude_args(_agent: &AgentSpec, _req: &DispatchRequest) -> Vec<String> {
    todo!("helper: claude argv")
}

/// Parsed stream-json: tool uses (dedup by id), the last result, count of non-JSON lines.
pub fn parse_stream_json(_stdout: &[u8]) -> (Vec<ToolUse>, Option<ResultEvent>, u64) {
    todo!("helper: stream-json parser")
}
