//! Per-backend glue: the argv and prompt delivery of each backend, the parser of each event
//! format, and backend-specific post-processing of the exit status.

use super::claude::{claude_args, claude_env, claude_permits, parse_stream_json};
use super::codex::{codex_args, codex_files, codex_permits, parse_codex_jsonl};
use super::gemini::{
    apply_exit_code, gemini_args, gemini_env, gemini_files, gemini_permits, parse_gemini_stream,
    prompt_with_role,
};
use super::{
    AgentSpec, BackendKind, DispatchRequest, EventFormat, ProcessEnd, ResultEvent, ToolUse,
};
use crate::findings::Role;
use std::sync::Arc;

/// Prompts longer than this go on stdin even for backends that take the prompt as an
/// argument: Linux caps one argument at 128 KiB (`MAX_ARG_STRLEN`), and a Judge prompt
/// carrying many findings can approach that.
pub const MAX_ARG_PROMPT: usize = 100 * 1024;

/// How to start one agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    /// Arguments after the program.
    pub args: Vec<String>,
    /// Bytes written to stdin before closing it; `None` = stdin is `/dev/null` (the prompt
    /// is an argument).
    pub stdin: Option<Arc<[u8]>>,
    /// Variables set on top of the inherited (allowlisted) environment.
    pub env: Vec<(String, String)>,
    /// Files the argv or environment names, written (into the agent's `out_dir`) before the
    /// agent starts: Codex's model instructions, Gemini's system prompt and tool policy.
    pub files: Vec<(std::path::PathBuf, Arc<[u8]>)>,
}

/// The argv and stdin of `agent` for `req`.
///
/// `command` agents get exactly their `extra_args`, with `{model}` replaced by the tier's
/// model, and the prompt (with the role body appended in `<role_instructions>`) on stdin.
pub fn invocation(agent: &AgentSpec, req: &DispatchRequest) -> Invocation {
    match agent.backend {
        BackendKind::Claude => Invocation {
            args: claude_args(agent, req),
            stdin: Some(Arc::from(Arc::clone(&req.prompt))),
            env: claude_env(),
            files: vec![],
        },
        // `codex exec … -- -` reads the prompt from stdin.
        BackendKind::Codex if req.prompt.len() > MAX_ARG_PROMPT => {
            let mut args = codex_args(agent, req);
            if let Some(last) = args.last_mut() {
                *last = "-".into();
            }
            Invocation {
                args,
                stdin: Some(Arc::from(Arc::clone(&req.prompt))),
                env: vec![],
                files: codex_files(req),
            }
        }
        BackendKind::Codex => Invocation {
            args: codex_args(agent, req),
            stdin: None,
            env: vec![],
            files: codex_files(req),
        },
        // Gemini appends the `-p` text to its stdin input: the prompt goes on stdin and `-p`
        // is a blank (the role body is the system prompt), so the header stays the first line.
        BackendKind::Gemini if req.prompt.len() > MAX_ARG_PROMPT => {
            let mut args = gemini_args(agent, req);
            args[1] = " ".into();
            Invocation {
                args,
                stdin: Some(Arc::from(Arc::clone(&req.prompt))),
                env: gemini_env(req),
                files: gemini_files(req),
            }
        }
        BackendKind::Gemini => Invocation {
            args: gemini_args(agent, req),
            stdin: None,
            env: gemini_env(req),
            files: gemini_files(req),
        },
        BackendKind::Command => {
            let model = agent.models.get(req.tier);
            Invocation {
                args: agent
                    .extra_args
                    .iter()
                    .map(|a| a.replace("{model}", model))
                    .collect(),
                stdin: Some(
                    prompt_with_role(&req.prompt, &req.system_prompt)
                        .into_bytes()
                        .into(),
                ),
                env: vec![],
                files: vec![],
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

/// Whether `role` may make the tool call `t` (parsed from events in `format`): for a
/// reviewer only the format's read-only tools, for the Fixer also its write tools. The tool
/// gate aborts on any other call, whether or not the CLI ran it.
pub fn tool_permitted(format: EventFormat, role: Role, t: &ToolUse) -> bool {
    match format {
        EventFormat::Claude => claude_permits(role, &t.name),
        EventFormat::Codex => codex_permits(role, t),
        EventFormat::Gemini => gemini_permits(role, &t.name),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dispatch::TierModels;
    use crate::findings::{Role, Tier};
    use std::path::PathBuf;
    use std::time::Duration;

    fn agent(backend: BackendKind) -> AgentSpec {
        AgentSpec {
            name: backend.as_str().into(),
            backend,
            format: backend.native_format().unwrap_or(EventFormat::Claude),
            binary: PathBuf::from("/bin/true"),
            extra_args: vec![],
            models: TierModels::default(),
            max_turns: 4,
            timeout: None,
            pass_env: vec![],
            fallback_model: None,
        }
    }

    fn req(prompt: String) -> DispatchRequest {
        DispatchRequest {
            role: Role::Judge,
            label: "judge".into(),
            prompt: prompt.into(),
            system_prompt: "You are the Judge.".into(),
            tier: Tier::Opus,
            cwd: PathBuf::from("/repo"),
            read_dirs: vec![PathBuf::from("/repo")],
            out_dir: PathBuf::from("/tmp/x"),
            timeout: Duration::from_secs(1),
            grace: Duration::from_secs(1),
            output_cap: 1,
            max_budget_usd: None,
            price: None,
            search: true,
        }
    }

    #[test]
    fn prompt_delivery_per_backend() {
        let small = req("[AR Round 1 — FULL] Judge\nx".into());
        let i = invocation(&agent(BackendKind::Claude), &small);
        assert_eq!(i.stdin.as_deref(), Some(small.prompt.as_bytes()));
        for b in [BackendKind::Codex, BackendKind::Gemini] {
            let i = invocation(&agent(b), &small);
            assert_eq!(i.stdin, None, "{b:?}: stdin /dev/null");
            assert!(
                i.args.iter().any(|a| a.starts_with(&*small.prompt)),
                "{b:?}"
            );
        }
        let big = req(format!(
            "[AR Round 1 — FULL] Judge\n{}",
            "x".repeat(MAX_ARG_PROMPT)
        ));
        let i = invocation(&agent(BackendKind::Codex), &big);
        assert_eq!(i.args.last().map(String::as_str), Some("-"));
        assert_eq!(i.args[i.args.len() - 2], "--");
        assert_eq!(i.stdin.as_deref(), Some(big.prompt.as_bytes()));
        let i = invocation(&agent(BackendKind::Gemini), &big);
        assert_eq!(i.stdin.as_deref(), Some(big.prompt.as_bytes()));
        assert!(i.args.iter().all(|a| a.len() < MAX_ARG_PROMPT));
        assert_eq!(i.args[1], " ", "the role body is the system prompt");
        // Gemini's workspace is untrusted while it loads settings and its system prompt is
        // the role body; Claude Code loads no CLAUDE.md and no memory; the others set
        // nothing.
        for b in [BackendKind::Codex, BackendKind::Command] {
            assert!(invocation(&agent(b), &small).env.is_empty(), "{b:?}");
        }
        let claude = invocation(&agent(BackendKind::Claude), &small).env;
        for var in [
            "CLAUDE_CODE_DISABLE_CLAUDE_MDS",
            "CLAUDE_CODE_DISABLE_AUTO_MEMORY",
        ] {
            assert!(
                claude.contains(&(var.to_string(), "1".to_string())),
                "{claude:?}"
            );
        }
        for p in [&small, &big] {
            assert_eq!(
                invocation(&agent(BackendKind::Gemini), p).env,
                [
                    (
                        "GEMINI_CLI_TRUST_WORKSPACE".to_string(),
                        "false".to_string()
                    ),
                    (
                        "GEMINI_SYSTEM_MD".to_string(),
                        "/tmp/x/system.md".to_string()
                    )
                ]
            );
        }
    }
}
