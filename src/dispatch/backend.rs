//! Per-backend glue: the argv and prompt delivery of each backend, the parser of each event
//! format, and backend-specific post-processing of the exit status.

use super::claude::{claude_args, parse_stream_json};
use super::codex::{codex_args, parse_codex_jsonl};
use super::gemini::{apply_exit_code, gemini_args, parse_gemini_stream, prompt_with_role};
use super::{
    AgentSpec, BackendKind, DispatchRequest, EventFormat, ProcessEnd, ResultEvent, ToolUse,
};

/// How to start one agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    /// Arguments after the program.
    pub args: Vec<String>,
    /// Bytes written to stdin before closing it; `None` = stdin is `/dev/null` (the prompt
    /// is an argument).
    pub stdin: Option<Vec<u8>>,
}

/// The argv and stdin of `agent` for `req`.
///
/// `command` agents get exactly their `extra_args`, with `{model}` replaced by the tier's
/// model, and the prompt (with the role body appended in `<role_instructions>`) on stdin.
pub fn invocation(agent: &AgentSpec, req: &DispatchRequest) -> Invocation {
    match agent.backend {
        BackendKind::Claude => Invocation {
            args: claude_args(agent, req),
            stdin: Some(req.prompt.clone().into_bytes()),
        },
        BackendKind::Codex => Invocation {
            args: codex_args(agent, req),
            stdin: None,
        },
        BackendKind::Gemini => Invocation {
            args: gemini_args(agent, req),
            stdin: None,
        },
        BackendKind::Command => {
            let model = agent.models.get(req.tier);
            Invocation {
                args: agent
                    .extra_args
                    .iter()
                    .map(|a| a.replace("{model}", model))
                    .collect(),
                stdin: Some(prompt_with_role(&req.prompt, &req.system_prompt).into_bytes()),
            }
        }
    }
}

/// Parse stdout in `format`: tool uses, the result, the count of non-JSON lines.
pub fn parse_events(
    format: EventFormat,
    stdout: &[u8],
) -> (Vec<ToolUse>, Option<ResultEvent>, u64) {
    match format {
        EventFormat::Claude => parse_stream_json(stdout),
        EventFormat::Codex => parse_codex_jsonl(stdout),
        EventFormat::Gemini => parse_gemini_stream(stdout),
    }
}

/// Backend-specific meaning of the exit status (Gemini's exit codes 41–55).
pub fn interpret_exit(
    format: EventFormat,
    end: &ProcessEnd,
    result: &mut Option<ResultEvent>,
    stderr: &[u8],
) {
    if let (EventFormat::Gemini, ProcessEnd::Exited { code }) = (format, end) {
        apply_exit_code(*code, result, stderr);
    }
}
