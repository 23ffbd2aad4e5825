//! The `codex` backend, OpenAI Codex (`codex exec --json`): its profile, its read-only argv
//! (docs/architecture.md §9.1, §16.3), its private home, and its JSONL decoder.
//!
//! Events (one JSON object per line): `command_execution` items become tool uses (deduplicated
//! by item id; `item.started` already carries the command, so a command that was still
//! running when the agent was killed is counted too) whose file accesses are derived from the
//! command line by `backends::shell` (what cannot be derived is documented there);
//! `file_change` items are writes; `mcp_tool_call` and `collab_tool_call` (sub-agent) items
//! have underivable accesses; `web_search` items touch no file. Only a shell command proven
//! read-only is a reviewer's tool (`codex_permits`); any other tool call aborts the review.
//! Other item types (`reasoning`, `plan`, `todo_list`, unknown ones) are not tool calls. The
//! text of the LAST `agent_message` item is the answer. `turn.completed` carries the usage. `turn.failed` is a dispatch failure (a `result` with
//! `is_error: true`, subtype `turn_failed`); an `error` event is one too unless a
//! `turn.completed` follows it (Codex reports transient "Reconnecting… n/5" errors that it
//! then recovers from). `error`-type *items* are non-fatal warnings and are ignored.
//!
//! Codex reports no cost; `total_cost_usd` is 0. Its `input_tokens` include the cached ones,
//! which are reported as `cache_read_input_tokens` instead, so that `Usage::total` counts each
//! token once.

use super::backend::{Backend, Credentials, Floor, LoginFile, Npm, Profile};
use super::event::Decoder;
use super::floor::Refused;
use super::home::{homes_base, mirror, private_dir, ReviewerHome};
use super::spec::{AgentSpec, DispatchRequest, Invocation, Wrap, MAX_ARG_PROMPT};
use super::view::{Hidden, ViewError};
use crate::records::{Role, ToolUse, Usage};
mod decode;
mod endpoint;

use decode::codex_permits;

pub(crate) use endpoint::codex_endpoint_arg;
use endpoint::codex_provider_args;
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;

/// The file in the agent's `out_dir` holding the role body, Codex's `model_instructions_file`.
pub const INSTRUCTIONS_FILE: &str = "instructions.md";

/// Codex's tools and prompt sections a reviewer never uses, turned off: each is resent with
/// every request. Measured against Codex 0.169.0 (benches/cost.rs, docs/performance.md):
/// the goal tools (~820 tokens), the multi-agent namespace and `tool_search` (~215),
/// `view_image` (~100), `web_search` (also a network tool), `request_user_input` (~355; no
/// one answers in `exec`), and the skills list (~1,190 tokens, the user's own skills among
/// them).
const UNUSED: [&str; 12] = [
    "--disable",
    "goals",
    "--disable",
    "multi_agent",
    "--disable",
    "view_image",
    "-c",
    "web_search=\"disabled\"",
    "-c",
    "tools.experimental_request_user_input={enabled=false}",
    "-c",
    "skills.include_instructions=false",
];

/// `workspace-write` makes `/tmp` and `$TMPDIR` writable besides the cwd: not for arev's
/// writers, whose every change belongs in their worktree (Codex 0.169.0 then rejects an
/// `apply_patch` outside it, tests/integration/real_iterate.rs).
const WRITE_ROOTS: [&str; 4] = [
    "-c",
    "sandbox_workspace_write.exclude_slash_tmp=true",
    "-c",
    "sandbox_workspace_write.exclude_tmpdir_env_var=true",
];

/// Prompt sections a read-only reviewer does without, on every request: the sandbox
/// permissions text (~120 tokens; the role body says what a reviewer may do) and the
/// environment context (~155 tokens: cwd, shell, date; the prompt names every path in
/// full). A Prover or Fixer, which writes in its worktree, keeps both. Measured with
/// benches/cost.rs against Codex 0.169.0 (docs/performance.md).
const REVIEWER_UNUSED: [&str; 4] = [
    "-c",
    "include_permissions_instructions=false",
    "-c",
    "include_environment_context=false",
];

/// The files [`codex_args`] names, to be written before Codex starts: the role body as the
/// model instructions (none when there is no role body).
pub fn codex_files(req: &DispatchRequest) -> Vec<(PathBuf, Arc<[u8]>)> {
    if req.system_prompt.is_empty() {
        return vec![];
    }
    vec![(
        instructions_path(req),
        Arc::from(req.system_prompt.as_bytes()),
    )]
}

fn instructions_path(req: &DispatchRequest) -> PathBuf {
    let dir = std::path::absolute(&req.out_dir).unwrap_or_else(|_| req.out_dir.clone());
    dir.join(INSTRUCTIONS_FILE)
}

/// The argv (without the program) for a read-only Codex worker. The prompt is the last
/// argument, after `--` (a prompt equal to a subcommand name would otherwise be parsed as
/// one); stdin must be `/dev/null` (a piped stdin is appended to the prompt). A prompt too
/// long for one argument is passed as `-` with the text on stdin instead
/// (`Backend::invocation`).
///
/// The role body REPLACES Codex's own base instructions (`model_instructions_file`, written
/// by [`codex_files`]; ~5,400 tokens on every request about editing, planning and AGENTS.md,
/// measured with benches/cost.rs), and the tools a reviewer does not use are not offered
/// ([`UNUSED`]). The user's global `$CODEX_HOME/AGENTS.md`, which Codex 0.169.0 sends whatever
/// the config says (`project_doc_max_bytes = 0` covers project docs only), is kept out by
/// the private `CODEX_HOME` the dispatch sets (`backends::home`): links to the user's own
/// files, credentials included, but not that one.
///
/// Nothing of the reviewed repository configures the session: the working directory is
/// declared an untrusted project for this run (`-c projects={…}`), so Codex never loads its
/// `.codex/config.toml` / `hooks.json` (MCP servers, hooks) even when the user trusted that
/// project; verified against Codex 0.169.0 (tests/integration/trust.rs). Commands the model
/// runs get only the core environment (`shell_environment_policy.inherit = "core"`: no API
/// key). `--sandbox read-only` blocks writes and the network but NOT reads: inside the
/// repository, what is outside the context scope is masked by the dispatch's filesystem view
/// (`Codex::wrap`); outside it, reads are caught by the read gate (the agent's run is then aborted and its
/// events after the off-target command are not kept).
pub fn codex_args(agent: &AgentSpec, req: &DispatchRequest) -> Vec<String> {
    // The Fixer edits and the Prover creates its reproducer with `apply_patch`, which the
    // read-only sandbox rejects without a trace: they get `workspace-write`, its writable
    // roots cut to the cwd (the iterate worktree, the Prover's scratch worktree) by
    // [`WRITE_ROOTS`]. A shell command that writes is still a forbidden tool; a file change
    // outside the worktree still fails the write gate.
    let writes = matches!(req.role, Role::Fixer | Role::Prover);
    let sandbox = if writes {
        "workspace-write"
    } else {
        "read-only"
    };
    let mut args: Vec<String> = [
        "exec",
        "--json",
        "--sandbox",
        sandbox,
        "--skip-git-repo-check",
        "--ephemeral",
    ]
    .iter()
    .map(|s| (*s).to_string())
    .collect();
    // Values in the `--flag=value` form, the prompt after `--` (docs/trust.md "Round five"):
    // none is read as a flag, whatever it starts with.
    args.push(format!("--cd={}", req.cwd.display()));
    args.push(format!("--model={}", agent.models.get(req.tier)));
    args.push("-c".into());
    args.push(format!(
        "projects={{{}={{trust_level=\"untrusted\"}}}}",
        toml_basic_string(&req.cwd.display().to_string())
    ));
    args.push("-c".into());
    args.push("shell_environment_policy.inherit=\"core\"".into());
    args.extend(UNUSED.iter().map(|s| (*s).to_string()));
    if writes {
        args.extend(WRITE_ROOTS.iter().map(|s| (*s).to_string()));
    }
    if matches!(req.role, Role::Enthusiast | Role::Adversary | Role::Judge) {
        args.extend(REVIEWER_UNUSED.iter().map(|s| (*s).to_string()));
    }
    if !req.system_prompt.is_empty() {
        args.push("-c".into());
        args.push(format!(
            "model_instructions_file={}",
            toml_basic_string(&instructions_path(req).display().to_string())
        ));
    }
    args.extend(agent.extra_args.iter().cloned());
    args.push("--".into());
    args.push(req.prompt.to_string());
    args
}

/// `s` as a one-line TOML basic string (`-c` values are parsed as TOML). JSON string
/// escapes are all valid TOML escapes; DEL is the one character TOML also wants escaped.
fn toml_basic_string(s: &str) -> String {
    serde_json::Value::String(s.to_string())
        .to_string()
        .replace('\u{7f}', "\\u007f")
}

/// `codex exec --json` events arev reads; every other `type` (`thread.started`,
/// `turn.started`, `item.plan.delta`, …) is `Other`.
/// Codex (`codex exec`, docs/architecture.md §16.3). `-c`/`--config` is checked by key:
/// only model and provider settings ([`CONFIG_KEYS`]) may be set.
const FLOOR: &[Refused] = &[
    Refused {
        long: &[
            "--sandbox",
            "--full-auto",
            "--approve-for-me",
            "--dangerously-bypass-approvals-and-sandbox",
            "--dangerously-bypass-hook-trust",
            "--profile",
            "--ignore-rules",
            "--enable",
            "--cyber-access-program",
        ],
        short: &['s', 'p'],
        why: "changes the sandbox or approvals",
    },
    Refused {
        long: &["--trust"],
        short: &[],
        why: "loads the project's own config, MCP servers and hooks",
    },
    Refused {
        long: &[
            "--add-dir",
            "--cd",
            "--worktree",
            "--image",
            "--output-last-message",
        ],
        short: &['C', 'i', 'o'],
        why: "grants directories or files",
    },
];

/// The only `codex -c` keys (first dotted segment) allowed in `extra_args`: the model and
/// its provider. Anything else (sandbox, approvals, MCP servers, shell environment, hooks,
/// notify, projects/trust, profiles, features, instructions) is refused.
const CONFIG_KEYS: &[&str] = &[
    "model",
    "model_provider",
    "model_providers",
    "model_reasoning_effort",
    "model_reasoning_summary",
    "model_verbosity",
    "model_context_window",
    "model_auto_compact_token_limit",
    "openai_base_url",
    "hide_agent_reasoning",
    "show_raw_agent_reasoning",
];

/// Entries of `$CODEX_HOME` a reviewer does not see: the global instructions and the
/// memories.
const PERSONAL: [&str; 3] = ["AGENTS.md", "AGENTS.override.md", "memories"];

/// What Codex's view hides, for messages and the trial view (`arev doctor`, preflight).
const HIDDEN: Hidden = Hidden {
    cli: "Codex",
    what: "`.git`, ignored and untracked files (outside the context scope)",
    names: &[".git", ".env"],
};

/// Codex's profile.
static PROFILE: Profile = Profile {
    name: "codex",
    npm: Some(Npm {
        package: "@openai/codex",
        version: "0.169.0",
    }),
    credentials: Some(Credentials {
        vars: &["CODEX_API_KEY", "OPENAI_API_KEY", "CODEX_ACCESS_TOKEN"],
        login: Some(LoginFile {
            env_dir: Some("CODEX_HOME"),
            home_dir: ".codex",
            file: "auth.json",
        }),
        fix: "set OPENAI_API_KEY (or CODEX_API_KEY), or run `codex login`",
        keychain_on_macos: false,
    }),
    env_prefixes: &["OPENAI_", "CODEX_", "AZURE_OPENAI_"],
    default_models: ["gpt-5.4", "gpt-5.5", "gpt-5.5"],
    list_prices: &[],
    reports_cost: false,
    floor: Some(Floor {
        refused: FLOOR,
        config_keys: Some(CONFIG_KEYS),
        short_flags_take_values: true,
    }),
    personal_context: "a private CODEX_HOME of links to the user's own, without AGENTS.md \
                       and memories; the role body replaces the base instructions",
};

/// OpenAI Codex (`codex exec --json`).
pub struct Codex;

impl Backend for Codex {
    fn profile(&self) -> &'static Profile {
        &PROFILE
    }

    /// Provider `arev`, defined and selected by `-c` arguments.
    fn endpoint_args(&self, base_url: &str, key_var: Option<&str>) -> Option<Vec<String>> {
        Some(codex_provider_args(base_url, key_var))
    }

    fn endpoint_in_args(&self, args: &[String]) -> Option<String> {
        codex_endpoint_arg(args)
    }

    /// The prompt is the last argument, or (too long for one) `-` with the text on stdin.
    fn invocation(&self, agent: &AgentSpec, req: &DispatchRequest) -> Invocation {
        let mut args = codex_args(agent, req);
        let mut stdin = None;
        // `codex exec … -- -` reads the prompt from stdin.
        if req.prompt.len() > MAX_ARG_PROMPT {
            if let Some(last) = args.last_mut() {
                *last = "-".into();
            }
            stdin = Some(Arc::<[u8]>::from(Arc::clone(&req.prompt)));
        }
        Invocation {
            args,
            stdin,
            env: vec![],
            files: codex_files(req),
        }
    }

    /// Its filesystem view (docs/trust.md "What reviewers may read"): the host's filesystem
    /// with every path of [`view_paths`] masked — Codex's `--sandbox read-only` lets its
    /// shell read anything, and a command's output reaches the model before the read gate
    /// can act, so what is outside the scope must not exist for it. Kept: the working
    /// directory (writable: the Prover's `workspace-write` worktree), the dispatch's
    /// directory, the read directories, its binary. Codex's own sandbox runs inside the
    /// view (bubblewrap nests). Paths outside the repository are left as that sandbox
    /// leaves them: readable, caught by the read gate after the fact.
    fn wrap(&self, agent: &AgentSpec, req: &DispatchRequest) -> Result<Option<Wrap>, ViewError> {
        super::view::scope_view(agent, req, &HIDDEN).map(Some)
    }

    fn check_wrap(&self) -> Result<(), ViewError> {
        super::view::probe(&HIDDEN)
    }

    fn decoder(&self, model: &str) -> Box<dyn Decoder> {
        Box::new(decode::CodexDecoder {
            model: model.to_string(),
            last_message: None,
            usage: Usage::default(),
            turns: 0,
            failed: None,
            pending_error: None,
        })
    }

    fn permits(&self, role: Role, t: &ToolUse) -> bool {
        codex_permits(role, t)
    }

    /// The user's `CODEX_HOME` seen through links, without its personal context.
    fn private_home(
        &self,
        parent_env: &[(OsString, OsString)],
    ) -> std::io::Result<Option<ReviewerHome>> {
        let dir = private_dir(&homes_base(parent_env), "codex-")?;
        let real = super::home::var(parent_env, "CODEX_HOME")
            .or_else(|| super::home::var(parent_env, "HOME").map(|h| h.join(".codex")));
        if let Some(real) = real {
            mirror(&real, dir.path(), |name| !PERSONAL.contains(&name))?;
        }
        let env = vec![("CODEX_HOME".into(), dir.path().display().to_string())];
        Ok(Some(ReviewerHome { _dir: dir, env }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backends::{parse_events, BackendKind, EventFormat, TierModels};
    use crate::records::{Role, Tier};
    use std::path::PathBuf;
    use std::time::Duration;

    const STARTED: &str = r#"{"type":"thread.started","thread_id":"01a1ff39"}"#;
    const TURN: &str = r#"{"type":"turn.started"}"#;
    const REASONING: &str = r#"{"type":"item.completed","item":{"id":"item_0","type":"reasoning","text":"**Planning**"}}"#;
    const CMD_START: &str = r#"{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"/bin/bash -lc 'cat src/lib.rs'","aggregated_output":"","exit_code":null,"status":"in_progress"}}"#;
    const CMD_DONE: &str = r#"{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"/bin/bash -lc 'cat src/lib.rs'","aggregated_output":"fn a() {}\n","exit_code":0,"status":"completed"}}"#;
    const WARN: &str = r#"{"type":"item.completed","item":{"id":"item_2","type":"error","message":"Model metadata for `fake-model` not found"}}"#;
    const MSG1: &str = r#"{"type":"item.completed","item":{"id":"item_3","type":"agent_message","text":"Reading."}}"#;
    const MSG2: &str = r#"{"type":"item.completed","item":{"id":"item_4","type":"agent_message","text":"{\"findings\":[]}"}}"#;
    const DONE: &str = r#"{"type":"turn.completed","usage":{"input_tokens":300,"cached_input_tokens":30,"cache_write_input_tokens":5,"output_tokens":60,"reasoning_output_tokens":15}}"#;

    fn lines(ls: &[&str]) -> Vec<u8> {
        let mut s = ls.join("\n");
        s.push('\n');
        s.into_bytes()
    }

    #[test]
    fn parses_a_normal_run() {
        let out = lines(&[
            STARTED, TURN, REASONING, CMD_START, CMD_DONE, WARN, MSG1, MSG2, DONE,
        ]);
        let (tools, result, bad) = parse_events(EventFormat::Codex, &out);
        assert_eq!(bad, 0);
        assert_eq!(tools.len(), 1, "{tools:?}");
        assert_eq!(tools[0].id, "item_1");
        assert_eq!(tools[0].name, "shell");
        assert_eq!(tools[0].access.read, ["src/lib.rs"]);
        let r = result.unwrap();
        assert!(!r.is_error);
        assert_eq!(r.text.as_deref(), Some("{\"findings\":[]}"));
        assert_eq!(r.usage.input_tokens, 270);
        assert_eq!(r.usage.cache_read_input_tokens, 30);
        assert_eq!(r.usage.cache_creation_input_tokens, 5);
        assert_eq!(r.usage.output_tokens, 60);
        assert_eq!(r.usage.total(), 365);
        assert_eq!(r.num_turns, Some(1));
    }

    #[test]
    fn turn_failed_and_error_are_failures_but_recovered_errors_are_not() {
        let err =
            r#"{"type":"error","message":"unexpected status 400 Bad Request: {\"error\":\"no\"}"}"#;
        let failed =
            r#"{"type":"turn.failed","error":{"message":"unexpected status 400 Bad Request"}}"#;
        let (_, r, _) = parse_events(EventFormat::Codex, &lines(&[STARTED, TURN, err, failed]));
        let r = r.unwrap();
        assert!(r.is_error);
        assert_eq!(r.subtype, "turn_failed");
        assert_eq!(r.text.as_deref(), Some("unexpected status 400 Bad Request"));

        let (_, r, _) = parse_events(EventFormat::Codex, &lines(&[STARTED, TURN, err]));
        let r = r.unwrap();
        assert!(r.is_error);
        assert_eq!(r.subtype, "error");

        let reconnect = r#"{"type":"error","message":"Reconnecting... 1/5 (stream disconnected)"}"#;
        let (_, r, _) = parse_events(
            EventFormat::Codex,
            &lines(&[STARTED, TURN, reconnect, MSG2, DONE]),
        );
        let r = r.unwrap();
        assert!(!r.is_error, "{r:?}");
        assert_eq!(r.text.as_deref(), Some("{\"findings\":[]}"));
    }

    #[test]
    fn no_turn_completed_is_no_result_and_garbage_is_counted() {
        let mut out = lines(&[STARTED, TURN, CMD_START, "not json", "[1]"]);
        out.extend_from_slice(&DONE.as_bytes()[..20]);
        let (tools, r, bad) = parse_events(EventFormat::Codex, &out);
        assert!(r.is_none());
        assert_eq!(bad, 3);
        assert_eq!(tools.len(), 1, "a started command counts");
    }

    #[test]
    fn other_items_map_to_accesses() {
        let fc = r#"{"type":"item.completed","item":{"id":"i5","type":"file_change","changes":[{"path":"/abs/p","kind":"add"}],"status":"completed"}}"#;
        let mcp = r#"{"type":"item.completed","item":{"id":"i6","type":"mcp_tool_call","server":"fs","tool":"read","arguments":{"p":1},"status":"completed"}}"#;
        let web =
            r#"{"type":"item.completed","item":{"id":"i7","type":"web_search","query":"rust"}}"#;
        let find = r#"{"type":"item.completed","item":{"id":"i8","type":"command_execution","command":"/bin/bash -lc 'find . -name x'","exit_code":0,"status":"completed"}}"#;
        let (tools, _, _) = parse_events(EventFormat::Codex, &lines(&[fc, mcp, web, find, DONE]));
        assert_eq!(tools[0].access.write, ["/abs/p"]);
        assert!(tools[1].access.unknown.is_some());
        assert_eq!(tools[1].name, "mcp:fs/read");
        assert!(!tools[2].access.is_file_tool());
        assert!(tools[3].access.unknown.as_deref().unwrap().contains("find"));
    }

    fn fixture_agent() -> AgentSpec {
        AgentSpec {
            name: "codex".into(),
            backend: BackendKind::Codex,
            format: EventFormat::Codex,
            binary: PathBuf::from("/usr/bin/codex"),
            extra_args: vec!["-c".into(), "model_provider=fake".into()],
            models: TierModels {
                haiku: "m-small".into(),
                sonnet: "m-mid".into(),
                opus: "m-big".into(),
            },
            max_turns: 8,
            timeout: None,
            pass_env: vec![],
            fallback_model: None,
            base_url: None,
            api_key_env: None,
        }
    }

    fn fixture_req(role: Role) -> DispatchRequest {
        DispatchRequest {
            role,
            label: "judge".into(),
            prompt: "review".into(),
            system_prompt: "You are the \"Judge\".\nRule.".into(),
            tier: Tier::Sonnet,
            cwd: PathBuf::from("/repo"),
            read_dirs: vec![PathBuf::from("/repo")],
            hidden: vec![],
            out_dir: PathBuf::from("/tmp/x"),
            timeout: Duration::from_secs(1),
            grace: Duration::from_secs(1),
            output_cap: 1024,
            max_budget_usd: None,
            price: None,
            search: true,
        }
    }

    #[test]
    fn fixer_and_prover_argv_write_in_the_worktree_only() {
        let (agent, req) = (fixture_agent(), fixture_req(Role::Judge));
        let args = codex_args(&agent, &req);
        // The Fixer (and the Prover) write: `workspace-write`, the worktree its only
        // writable root (no /tmp, no $TMPDIR), the rest of the argv the reviewer's.
        for role in [Role::Fixer, Role::Prover] {
            let writer = DispatchRequest {
                role,
                cwd: PathBuf::from("/repo/.arev/worktrees/r1"),
                ..req.clone()
            };
            let w = codex_args(&agent, &writer);
            assert_eq!(w[2..4], ["--sandbox", "workspace-write"], "{role:?}");
            let at = w
                .iter()
                .position(|a| a == "sandbox_workspace_write.exclude_slash_tmp=true")
                .expect("/tmp excluded");
            assert_eq!(
                w[at - 1..at + 3],
                [
                    "-c",
                    "sandbox_workspace_write.exclude_slash_tmp=true",
                    "-c",
                    "sandbox_workspace_write.exclude_tmpdir_env_var=true"
                ]
            );
            assert!(w.iter().any(|a| a == "--cd=/repo/.arev/worktrees/r1"));
            assert!(!w.iter().any(|a| a.contains("danger") || a == "--full-auto"));
            assert!(!w.iter().any(|a| a == "--add-dir"));
        }
        assert!(!args
            .iter()
            .any(|a| a.starts_with("sandbox_workspace_write")));
    }

    #[test]
    fn argv_is_read_only_with_the_prompt_last() {
        let (agent, req) = (fixture_agent(), fixture_req(Role::Judge));
        let args = codex_args(&agent, &req);
        assert_eq!(
            args,
            [
                "exec",
                "--json",
                "--sandbox",
                "read-only",
                "--skip-git-repo-check",
                "--ephemeral",
                "--cd=/repo",
                "--model=m-mid",
                "-c",
                "projects={\"/repo\"={trust_level=\"untrusted\"}}",
                "-c",
                "shell_environment_policy.inherit=\"core\"",
                "--disable",
                "goals",
                "--disable",
                "multi_agent",
                "--disable",
                "view_image",
                "-c",
                "web_search=\"disabled\"",
                "-c",
                "tools.experimental_request_user_input={enabled=false}",
                "-c",
                "skills.include_instructions=false",
                "-c",
                "include_permissions_instructions=false",
                "-c",
                "include_environment_context=false",
                "-c",
                "model_instructions_file=\"/tmp/x/instructions.md\"",
                "-c",
                "model_provider=fake",
                "--",
                "review",
            ]
        );
        // The role body replaces Codex's base instructions, from the file written before
        // Codex starts.
        let files = codex_files(&req);
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].0, PathBuf::from("/tmp/x/instructions.md"));
        assert_eq!(&*files[0].1, req.system_prompt.as_bytes());
        let no_role = DispatchRequest {
            system_prompt: String::new(),
            ..req
        };
        assert!(codex_files(&no_role).is_empty());
        assert!(!codex_args(&agent, &no_role)
            .iter()
            .any(|a| a.starts_with("model_instructions_file")));

        assert!(!args
            .iter()
            .any(|a| a.contains("danger") || a == "--full-auto"));
        let (_, v) = args[9].split_once('=').unwrap();
        let t: toml::Table = format!("x = {v}").parse().unwrap();
        assert_eq!(t["x"]["/repo"]["trust_level"].as_str(), Some("untrusted"));
        assert!(!args
            .iter()
            .any(|a| a.starts_with("sandbox_workspace_write")));
        let odd = "tab\there \u{7f} ünï \\ \"q\" \u{1}";
        let t: toml::Table = format!("x = {}", toml_basic_string(odd)).parse().unwrap();
        assert_eq!(t["x"].as_str(), Some(odd));
    }

    /// A reviewer runs without Codex's permissions text and environment context; a writer
    /// (Prover, Fixer), which works in its worktree, keeps both.
    #[test]
    fn only_reviewers_drop_the_permissions_text_and_environment_context() {
        let agent = fixture_agent();
        for (role, dropped) in [
            (Role::Enthusiast, true),
            (Role::Adversary, true),
            (Role::Judge, true),
            (Role::Prover, false),
            (Role::Fixer, false),
        ] {
            let req = fixture_req(role);
            let a = codex_args(&agent, &req);
            for flag in REVIEWER_UNUSED.iter().filter(|f| **f != "-c") {
                assert_eq!(a.iter().any(|x| x == flag), dropped, "{role:?}: {a:?}");
            }
        }
    }

    /// Every dispatch runs in a view where `req.hidden` and the `.git` of the working and
    /// read directories are masked (a directory by a tmpfs, a file by an empty file) and what
    /// Codex needs is bound back.
    #[test]
    fn the_view_masks_hidden_paths_and_every_git_and_keeps_the_worktree() {
        // bubblewrap is installed wherever the tests run (as for `view::probe`'s test).
        let bwrap = crate::backends::view::find_bwrap().expect("bwrap on PATH");
        let d = tempfile::tempdir().unwrap();
        let base = d.path().canonicalize().unwrap();
        let (repo, wt) = (base.join("repo"), base.join("wt"));
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(repo.join(".arev/runs/r/agents/a")).unwrap();
        std::fs::create_dir_all(&wt).unwrap();
        std::fs::write(wt.join(".git"), "gitdir: /elsewhere").unwrap();
        std::fs::write(repo.join(".env"), "TOKEN=x").unwrap();
        let agent = AgentSpec {
            name: "codex".into(),
            backend: BackendKind::Codex,
            format: EventFormat::Codex,
            binary: base.join("codex"),
            extra_args: vec![],
            models: TierModels {
                haiku: "m".into(),
                sonnet: "m".into(),
                opus: "m".into(),
            },
            max_turns: 8,
            timeout: None,
            pass_env: vec![],
            fallback_model: None,
            base_url: None,
            api_key_env: None,
        };
        let out = repo.join(".arev/runs/r/agents/a");
        let req = DispatchRequest {
            role: Role::Prover,
            cwd: wt.clone(),
            read_dirs: vec![repo.clone()],
            hidden: vec![repo.join(".git"), repo.join(".env"), repo.join(".arev")],
            out_dir: out.clone(),
            label: "prover".into(),
            prompt: "prove".into(),
            system_prompt: String::new(),
            tier: Tier::Sonnet,
            timeout: Duration::from_secs(1),
            grace: Duration::from_secs(1),
            output_cap: 1024,
            max_budget_usd: None,
            price: None,
            search: true,
        };
        let w = Codex.wrap(&agent, &req).unwrap().unwrap();
        assert_eq!(w.program, bwrap);
        let args: Vec<String> = w
            .args
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let has = |seq: &[&str]| {
            args.windows(seq.len())
                .any(|win| win.iter().zip(seq).all(|(a, b)| a == b))
        };
        let p = |x: &PathBuf| x.display().to_string();
        assert!(has(&["--tmpfs", &p(&repo.join(".git"))]), "{args:?}");
        assert!(has(&["--tmpfs", &p(&repo.join(".arev"))]), "{args:?}");
        // A file is masked by an empty regular file, never `/dev/null` (Codex's own sandbox
        // binds the host `nodev`: a device there reads "Permission denied", and Codex then
        // reports no item for the command).
        let empty = p(&out.join("view-empty"));
        assert!(
            has(&["--ro-bind", &empty, &p(&repo.join(".env"))]),
            "{args:?}"
        );
        assert!(
            has(&["--ro-bind", &empty, &p(&wt.join(".git"))]),
            "{args:?}"
        );
        assert!(!args.iter().any(|a| a == "/dev/null"), "{args:?}");
        assert_eq!(std::fs::read(out.join("view-empty")).unwrap(), b"");
        // The dispatch's directory, under the masked `.arev/`, is bound back writable.
        assert!(has(&["--bind", &p(&out), &p(&out)]), "{args:?}");
        assert!(has(&["--chdir", &p(&wt), "--"]), "{args:?}");

        // Started in the view, a shell sees the masked files empty and the rest as it is.
        std::fs::write(repo.join(".git/config"), "token=SECRET").unwrap();
        std::fs::write(repo.join("caller.rs"), "fn caller() {}").unwrap();
        let script = format!(
            "cat {0}/.env {0}/.git/config {1}/.git; ls -A {0}/.git; cat {0}/caller.rs",
            p(&repo),
            p(&wt)
        );
        let out = std::process::Command::new(&w.program)
            .args(&w.args)
            .args(["/bin/sh", "-c", &script])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(stdout, "fn caller() {}");
    }
}
