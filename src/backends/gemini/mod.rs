//! The `gemini` backend, Gemini CLI (`gemini -p … -o stream-json`): its profile, its
//! read-only argv (docs/architecture.md §9.1, §16.4), its private home, its stream-json
//! decoder and its exit codes.
//!
//! Events: `tool_use` (`tool_name`, `tool_id`, `parameters`) become tool uses, deduplicated
//! by `tool_id`, with file accesses: `read_file` reads `file_path`; `read_many_files` reads
//! its `include` entries (patterns never match a target file, so they fail the read gate);
//! `grep_search`, `glob` and `list_directory` search `dir_path` (the working directory when
//! absent); `run_shell_command` is derived like a Codex command (`backends::shell`);
//! `write_file`/`replace` write `file_path`; other tools (`update_topic`, `google_web_search`,
//! `enter_plan_mode`, …) touch no file. In `--approval-mode default` only the read tools are
//! registered at all; a call of any tool outside `gemini_permits` aborts the review.
//! Assistant `message` events (text deltas) after the last tool use are the answer. The
//! `result` event ends the run: `status: "success"` or `"error"` (the reason is in a
//! preceding `error` event or in `result.error.message`); `stats` is the usage.
//!
//! The role body REPLACES the CLI's own system prompt (`GEMINI_SYSTEM_MD`, the file
//! written before the CLI starts): ~6,600 tokens on every request, about editing code, new
//! applications, sub-agents, skills and memory files, none of which a read-only reviewer
//! uses; the tools' own declarations still describe how to call them. The tools a role does
//! not use are not offered (`--policy`, a deny rule). Measured with benches/cost.rs
//! (docs/performance.md).

mod decode;

pub use decode::exit_meaning;

use super::backend::{Backend, Credentials, Floor, LoginFile, Npm, Profile};
use super::event::Decoder;
use super::floor::Refused;
use super::home::{homes_base, is_markdown, mirror, private_dir, ReviewerHome};
use super::shell::shell_access;
use super::spec::{AgentSpec, DispatchRequest, Invocation, Wrap, MAX_ARG_PROMPT};
use super::view::{Hidden, ViewError};
use crate::records::{FileAccess, Role, ToolUse};
use serde_json::Value;
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;

/// The file in the agent's `out_dir` holding the role body, the CLI's `GEMINI_SYSTEM_MD`.
pub const SYSTEM_FILE: &str = "system.md";
/// The file in the agent's `out_dir` holding the tool policy passed with `--policy`.
pub const POLICY_FILE: &str = "policy.toml";

/// Tools of `--approval-mode default` that no role uses, each resent with every request:
/// progress notes, web search, plan mode and sub-agents (none is allowed by
/// [`gemini_permits`] but `update_topic`, which touches nothing).
const UNUSED_TOOLS: [&str; 4] = [
    "update_topic",
    "google_web_search",
    "enter_plan_mode",
    "invoke_agent",
];
/// Tools `--approval-mode auto_edit` registers that neither writer uses: the Fixer edits
/// with `write_file` and `replace`, the Prover creates new files with `write_file` only
/// (and is also denied `replace`).
const WRITER_DENIED: [&str; 3] = ["run_shell_command", "web_fetch", "write_todos"];
/// The search tools, not offered to a reviewer of one file (it reads that file whole).
const SEARCH_TOOLS: [&str; 3] = ["list_directory", "glob", "grep_search"];

/// The roles that change files: the Fixer (in the iterate worktree) and the Prover (its
/// reproducer, in its scratch worktree).
fn writes(role: Role) -> bool {
    matches!(role, Role::Fixer | Role::Prover)
}

fn out_path(req: &DispatchRequest, name: &str) -> PathBuf {
    let dir = std::path::absolute(&req.out_dir).unwrap_or_else(|_| req.out_dir.clone());
    dir.join(name)
}

/// The policy that removes the tools `req`'s role does not use from what the CLI offers
/// (a tool denied without arguments is not declared to the model at all).
fn policy(req: &DispatchRequest) -> String {
    let mut denied: Vec<&str> = UNUSED_TOOLS.to_vec();
    if !req.search && !matches!(req.role, Role::Fixer | Role::Prover) {
        denied.extend(SEARCH_TOOLS);
    }
    if writes(req.role) {
        // `auto_edit` registers the edit and shell tools: the writers keep their file tools.
        denied.extend(WRITER_DENIED);
    }
    if req.role == Role::Prover {
        denied.push("replace");
    }
    let names: Vec<String> = denied.iter().map(|n| format!("\"{n}\"")).collect();
    let mut out = format!(
        "# arev: tools this reviewer does not use are not offered.\n[[rule]]\ntoolName = [{}]\ndecision = \"deny\"\npriority = 900\n",
        names.join(", ")
    );
    // What the repository holds outside the context scope (an ignored `.env`, untracked
    // files, `.git`): a file tool whose arguments name it — absolute, or relative to the
    // workspace — is denied before it runs.
    for h in &req.hidden {
        let Some(rel) = h.strip_prefix(&req.cwd).ok().and_then(|r| r.to_str()) else {
            continue;
        };
        if rel.is_empty() {
            continue;
        }
        let root = regex_escape(&req.cwd.display().to_string());
        let pattern = format!("\"(?:{root}/)?(?:\\./)?{}(?:/[^\"]*)?\"", regex_escape(rel));
        out.push_str(&format!(
            "[[rule]]\ntoolName = [{FILE_TOOLS}]\nargsPattern = {}\ndecision = \"deny\"\npriority = 950\n",
            toml::Value::String(pattern)
        ));
    }
    out
}

/// The file tools a deny rule on a path covers.
const FILE_TOOLS: &str =
    "\"read_file\", \"read_many_files\", \"grep_search\", \"glob\", \"list_directory\"";

/// `s` with every regular-expression metacharacter escaped.
fn regex_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if "\\^$.|?*+()[]{}/-".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The files [`gemini_args`] and [`gemini_env`] name, to be written before the CLI starts:
/// the role body as the system prompt (none without a role body) and the tool policy.
pub fn gemini_files(req: &DispatchRequest) -> Vec<(PathBuf, Arc<[u8]>)> {
    let mut files = vec![];
    if !req.system_prompt.trim().is_empty() {
        files.push((
            out_path(req, SYSTEM_FILE),
            Arc::from(req.system_prompt.as_bytes()),
        ));
    }
    files.push((
        out_path(req, POLICY_FILE),
        Arc::from(policy(req).as_bytes()),
    ));
    files
}

/// Environment set for every Gemini worker (over the inherited one).
///
/// `GEMINI_CLI_TRUST_WORKSPACE=false`: the reviewed repository is an untrusted workspace
/// while the CLI loads its settings, so its `.gemini/settings.json` (MCP servers, tool
/// discovery and call commands, hooks) is never loaded, whatever the user's trusted folders
/// say; `--skip-trust` then only lets the headless run start. Verified against Gemini CLI
/// 0.61.0 (tests/integration/trust.rs): with `--skip-trust` alone, a repository listed in
/// `~/.gemini/trustedFolders.json` had its tool-discovery command run.
///
/// `GEMINI_SYSTEM_MD`: the role body's file (see the module doc). The user's
/// `~/.gemini/GEMINI.md` (and private project memory), which Gemini CLI 0.61.0 appends to
/// any system prompt (`context.fileName` only adds names), is kept out by the private
/// `GEMINI_CLI_HOME` the dispatch sets (`backends::home`): links to the user's own files,
/// credentials included, but not the memory files.
pub fn gemini_env(req: &DispatchRequest) -> Vec<(String, String)> {
    let mut env = vec![("GEMINI_CLI_TRUST_WORKSPACE".into(), "false".into())];
    if !req.system_prompt.trim().is_empty() {
        env.push((
            "GEMINI_SYSTEM_MD".into(),
            out_path(req, SYSTEM_FILE).display().to_string(),
        ));
    }
    env
}

/// The argv (without the program) for a Gemini worker; stdin must be `/dev/null`
/// (`-p` text is appended to any stdin input). A prompt too long for one argument goes on
/// stdin instead (`Backend::invocation`).
///
/// A reviewer runs `--approval-mode default`, where only read tools exist; the Fixer and the
/// Prover `auto_edit`, their unused tools denied by the policy. `read_file`, `write_file`
/// and `replace` refuse any path that resolves outside the workspace (symlinks included);
/// the run's target artefacts are added with `--include-directories` when they lie outside
/// the repository.
pub fn gemini_args(agent: &AgentSpec, req: &DispatchRequest) -> Vec<String> {
    // Values in the `--flag=value` form (docs/trust.md "Round five"): a prompt, a model or a
    // path is never read as a flag, whatever it starts with.
    let mut args = vec![
        format!("--prompt={}", req.prompt),
        "-o".into(),
        "stream-json".into(),
        "--approval-mode".into(),
        // The Fixer's `write_file` and `replace` and the Prover's `write_file` are not
        // registered in `default`; `auto_edit` registers and approves them (the policy
        // denies the rest it adds). They refuse a path outside the workspace.
        if writes(req.role) {
            "auto_edit".into()
        } else {
            "default".into()
        },
        "--skip-trust".into(),
        format!("--policy={}", out_path(req, POLICY_FILE).display()),
        format!("--model={}", agent.models.get(req.tier)),
    ];
    for dir in req.read_dirs.iter().filter(|d| !d.starts_with(&req.cwd)) {
        args.push(format!("--include-directories={}", dir.display()));
    }
    args.extend(agent.extra_args.iter().cloned());
    args
}

/// Whether `role` may call the Gemini CLI tool `name`: the read-only tools of
/// `--approval-mode default` (`read_file`, `read_many_files`, `grep_search`, `glob`,
/// `list_directory`) and `update_topic` (a progress note for the UI that touches nothing);
/// the Fixer also `write_file` and `replace`, the Prover `write_file` (new files only: arev
/// rejects a change to an existing one before running anything). Everything else — `run_shell_command`,
/// `web_fetch`, `google_web_search`, sub-agents, MCP tools — nobody.
pub fn gemini_permits(role: Role, name: &str) -> bool {
    match name {
        "read_file" | "read_many_files" | "grep_search" | "glob" | "list_directory"
        | "update_topic" => true,
        "write_file" => matches!(role, Role::Fixer | Role::Prover),
        "replace" => role == Role::Fixer,
        _ => false,
    }
}

/// The file access of a Gemini CLI tool call (see the module docs).
pub fn gemini_access(name: &str, input: &Value) -> FileAccess {
    let arg = |k: &str| {
        input
            .get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    match name {
        "read_file" => FileAccess::read(arg("file_path")),
        "read_many_files" => {
            let paths: Vec<String> = input
                .get("include")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default();
            if paths.is_empty() {
                FileAccess::unknown("read_many_files without include paths")
            } else {
                FileAccess {
                    read: paths,
                    ..FileAccess::default()
                }
            }
        }
        "grep_search" | "glob" | "list_directory" => FileAccess::search(arg("dir_path")),
        "run_shell_command" => shell_access(&arg("command")),
        "write_file" | "replace" => FileAccess {
            write: vec![arg("file_path")],
            ..FileAccess::default()
        },
        _ => FileAccess::none(),
    }
}

/// Gemini CLI (docs/architecture.md §16.4).
const FLOOR: &[Refused] = &[
    Refused {
        long: &[
            "--yolo",
            "--approval-mode",
            "--allowed-tools",
            "--policy",
            "--admin-policy",
        ],
        short: &['y'],
        why: "grants tools or approvals",
    },
    Refused {
        long: &["--sandbox"],
        short: &['s'],
        why: "changes the sandbox",
    },
    Refused {
        long: &["--skip-trust"],
        short: &[],
        why: "changes which settings load",
    },
    Refused {
        long: &["--allowed-mcp-server-names", "--extensions"],
        short: &['e'],
        why: "adds MCP servers or extensions",
    },
    Refused {
        long: &[
            "--include-directories",
            "--worktree",
            "--session-file",
            "--delete-session",
        ],
        short: &['w'],
        why: "grants directories or files",
    },
    Refused {
        long: &["--resume", "--acp", "--experimental-acp"],
        short: &['r'],
        why: "runs another session",
    },
];

/// Entries of `~/.gemini` a reviewer does not see, besides every top-level `*.md` (the
/// memory files: `GEMINI.md` and the names `context.fileName` adds): private project memory,
/// chats and checkpoints (`tmp`), and extensions (each with its own context files).
const PERSONAL: [&str; 2] = ["tmp", "extensions"];

/// Gemini CLI's profile.
static PROFILE: Profile = Profile {
    name: "gemini",
    npm: Some(Npm {
        package: "@google/gemini-cli",
        version: "0.61.0",
    }),
    credentials: Some(Credentials {
        vars: &[
            "GEMINI_API_KEY",
            "GOOGLE_API_KEY",
            "GOOGLE_GENAI_USE_VERTEXAI",
            "GOOGLE_APPLICATION_CREDENTIALS",
        ],
        login: Some(LoginFile {
            env_dir: None,
            home_dir: ".gemini",
            file: "oauth_creds.json",
        }),
        fix: "set GEMINI_API_KEY, or run `gemini` once and log in with Google",
        keychain_on_macos: false,
    }),
    env_prefixes: &["GEMINI_", "GOOGLE_", "CLOUD_ML_", "VERTEX_"],
    default_models: [
        "gemini-2.5-flash-lite",
        "gemini-2.5-flash",
        "gemini-2.5-pro",
    ],
    list_prices: &[],
    reports_cost: false,
    floor: Some(Floor {
        refused: FLOOR,
        config_keys: None,
        short_flags_take_values: false,
    }),
    personal_context: "a private GEMINI_CLI_HOME of links to the user's own, without \
                       GEMINI.md, other memory files, tmp and extensions; an untrusted \
                       workspace; the role body replaces the system prompt",
};

/// Gemini CLI (`gemini -p <prompt> -o stream-json`).
pub struct Gemini;

/// What Gemini's view hides, for messages and the trial view (`arev doctor`, preflight).
const HIDDEN: Hidden = Hidden {
    cli: "Gemini CLI",
    what: "`.git`, ignored and untracked files (outside the context scope)",
    names: &[".git", ".env"],
};

impl Backend for Gemini {
    fn profile(&self) -> &'static Profile {
        &PROFILE
    }

    /// A view without what lies outside the context scope: Gemini CLI 0.61 applies no
    /// policy `argsPattern` rule to its file tools' paths, so an untracked file would be read
    /// (tests/integration/context_scope.rs), and its own `.gitignore` filter covers only
    /// ignored ones (docs/trust.md).
    fn wrap(&self, agent: &AgentSpec, req: &DispatchRequest) -> Result<Option<Wrap>, ViewError> {
        super::view::scope_view(agent, req, &HIDDEN).map(Some)
    }

    fn check_wrap(&self) -> Result<(), ViewError> {
        super::view::probe(&HIDDEN)
    }

    /// Gemini appends the `-p` text to its stdin input: a prompt too long for one argument
    /// goes on stdin and `-p` is a blank (the role body is the system prompt), so the
    /// header stays the first line.
    fn invocation(&self, agent: &AgentSpec, req: &DispatchRequest) -> Invocation {
        let mut args = gemini_args(agent, req);
        let mut stdin = None;
        if req.prompt.len() > MAX_ARG_PROMPT {
            args[0] = "--prompt= ".into();
            stdin = Some(Arc::<[u8]>::from(Arc::clone(&req.prompt)));
        }
        Invocation {
            args,
            stdin,
            env: gemini_env(req),
            files: gemini_files(req),
        }
    }

    fn decoder(&self, model: &str) -> Box<dyn Decoder> {
        Box::new(decode::GeminiDecoder::new(model))
    }

    fn permits(&self, role: Role, t: &ToolUse) -> bool {
        gemini_permits(role, &t.name)
    }

    /// The user's `~/.gemini` seen through links, without its personal context.
    fn private_home(
        &self,
        parent_env: &[(OsString, OsString)],
    ) -> std::io::Result<Option<ReviewerHome>> {
        let dir = private_dir(&homes_base(parent_env), "gemini-")?;
        let own = dir.path().join(".gemini");
        std::fs::create_dir(&own)?;
        let real = super::home::var(parent_env, "GEMINI_CLI_HOME")
            .or_else(|| super::home::var(parent_env, "HOME"));
        if let Some(real) = real {
            mirror(&real.join(".gemini"), &own, |name| {
                !PERSONAL.contains(&name) && !is_markdown(name)
            })?;
            // The CLI's last place for its environment file.
            let env_file = real.join(".env");
            if env_file.exists() {
                std::os::unix::fs::symlink(&env_file, dir.path().join(".env"))?;
            }
        }
        let env = vec![("GEMINI_CLI_HOME".into(), dir.path().display().to_string())];
        Ok(Some(ReviewerHome { _dir: dir, env }))
    }
}

#[cfg(test)]
mod tests {
    use super::decode::apply_exit_code;
    use super::*;
    use crate::backends::{parse_events, BackendKind, EventFormat, TierModels};
    use crate::records::{Role, Tier};
    use std::path::PathBuf;
    use std::time::Duration;

    const INIT: &str =
        r#"{"type":"init","timestamp":"t","session_id":"s","model":"gemini-2.5-flash"}"#;
    const USER: &str = r#"{"type":"message","timestamp":"t","role":"user","content":"look"}"#;
    const SAY: &str = r#"{"type":"message","role":"assistant","content":"Reading.","delta":true}"#;
    const READ: &str = r#"{"type":"tool_use","tool_name":"read_file","tool_id":"read_file_1","parameters":{"file_path":"src/lib.rs"}}"#;
    const READ_RES: &str =
        r#"{"type":"tool_result","tool_id":"read_file_1","status":"success","output":""}"#;
    const ANS1: &str =
        r#"{"type":"message","role":"assistant","content":"{\"findings\":","delta":true}"#;
    const ANS2: &str = r#"{"type":"message","role":"assistant","content":"[]}","delta":true}"#;
    const RESULT: &str = r#"{"type":"result","status":"success","stats":{"total_tokens":360,"input_tokens":300,"output_tokens":60,"cached":20,"input":280,"duration_ms":190,"tool_calls":1}}"#;

    fn lines(ls: &[&str]) -> Vec<u8> {
        let mut s = ls.join("\n");
        s.push('\n');
        s.into_bytes()
    }

    #[test]
    fn parses_a_normal_run() {
        let (tools, r, bad) = parse_events(
            EventFormat::Gemini,
            &lines(&[INIT, USER, SAY, READ, READ, READ_RES, ANS1, ANS2, RESULT]),
        );
        assert_eq!(bad, 0);
        assert_eq!(tools.len(), 1);
        assert_eq!(tools[0].name, "read_file");
        assert_eq!(tools[0].access.read, ["src/lib.rs"]);
        let r = r.unwrap();
        assert!(!r.is_error);
        assert_eq!(
            r.text.as_deref(),
            Some("{\"findings\":[]}"),
            "text after the last tool use"
        );
        assert_eq!(r.usage.input_tokens, 280);
        assert_eq!(r.usage.cache_read_input_tokens, 20);
        assert_eq!(r.usage.output_tokens, 60);
        assert_eq!(r.num_turns, Some(2));
    }

    #[test]
    fn error_results_carry_the_error_event_message() {
        let err =
            r#"{"type":"error","timestamp":"t","severity":"error","message":"quota exceeded"}"#;
        let warn = r#"{"type":"error","severity":"warning","message":"slow"}"#;
        let res = r#"{"type":"result","status":"error","stats":{}}"#;
        let (_, r, _) = parse_events(EventFormat::Gemini, &lines(&[INIT, warn, err, res]));
        let r = r.unwrap();
        assert!(r.is_error);
        assert_eq!(r.text.as_deref(), Some("quota exceeded"));
        let res2 = r#"{"type":"result","status":"error","error":{"type":"FatalTurnLimitedError","message":"Reached max turns"},"stats":{}}"#;
        let (_, r, _) = parse_events(EventFormat::Gemini, &lines(&[INIT, res2]));
        let r = r.unwrap();
        assert_eq!(r.subtype, "FatalTurnLimitedError");
        assert_eq!(r.text.as_deref(), Some("Reached max turns"));
        let (_, r, _) = parse_events(EventFormat::Gemini, &lines(&[INIT, SAY]));
        assert!(r.is_none(), "no result event, no result");
    }

    #[test]
    fn exit_codes_become_clear_errors() {
        let mut r = None;
        apply_exit_code(41, &mut r, b"Error: Invalid auth method selected.\n\n");
        let r = r.unwrap();
        assert!(r.is_error);
        assert_eq!(r.subtype, "exit_41");
        let text = r.text.unwrap();
        assert!(text.contains("authentication failed"), "{text}");
        assert!(text.ends_with("Invalid auth method selected."), "{text}");
        for code in [42, 44, 52, 53, 54, 55] {
            let mut r = None;
            apply_exit_code(code, &mut r, b"");
            assert!(r.unwrap().text.unwrap().contains(&format!("exit {code}")));
        }
        let mut ok = None;
        apply_exit_code(0, &mut ok, b"");
        apply_exit_code(1, &mut ok, b"");
        assert!(ok.is_none());
    }

    #[test]
    fn tool_accesses() {
        use serde_json::json;
        assert_eq!(
            gemini_access("grep_search", &json!({"pattern": "x"})).search,
            [""]
        );
        assert_eq!(
            gemini_access("list_directory", &json!({"dir_path": "/etc"})).search,
            ["/etc"]
        );
        assert_eq!(
            gemini_access("glob", &json!({"pattern": "*.rs", "dir_path": "src"})).search,
            ["src"]
        );
        assert_eq!(
            gemini_access("run_shell_command", &json!({"command": "cat a.rs"})).read,
            ["a.rs"]
        );
        assert_eq!(
            gemini_access("write_file", &json!({"file_path": "a.rs", "content": ""})).write,
            ["a.rs"]
        );
        assert!(!gemini_access("google_web_search", &json!({"query": "x"})).is_file_tool());
    }

    #[test]
    fn argv_is_read_only() {
        let agent = AgentSpec {
            name: "gemini".into(),
            backend: BackendKind::Gemini,
            format: EventFormat::Gemini,
            binary: PathBuf::from("/usr/bin/gemini"),
            extra_args: vec!["--debug".into()],
            models: TierModels::default(),
            max_turns: 8,
            timeout: None,
            pass_env: vec![],
            fallback_model: None,
            base_url: None,
            api_key_env: None,
        };
        let req = DispatchRequest {
            role: Role::Adversary,
            label: "adversary".into(),
            prompt: "[AR Round 1 — FULL] Adversary\nbody".into(),
            system_prompt: "You are the Adversary.".into(),
            tier: Tier::Haiku,
            cwd: PathBuf::from("/repo"),
            read_dirs: vec![PathBuf::from("/repo"), PathBuf::from("/runs/r/target")],
            hidden: vec![],
            out_dir: PathBuf::from("/tmp/x"),
            timeout: Duration::from_secs(1),
            grace: Duration::from_secs(1),
            output_cap: 1024,
            max_budget_usd: None,
            price: None,
            search: true,
        };
        let args = gemini_args(&agent, &req);
        assert_eq!(args[0], "--prompt=[AR Round 1 — FULL] Adversary\nbody");
        assert_eq!(
            &args[1..],
            [
                "-o",
                "stream-json",
                "--approval-mode",
                "default",
                "--skip-trust",
                "--policy=/tmp/x/policy.toml",
                "--model=haiku",
                "--include-directories=/runs/r/target",
                "--debug"
            ]
        );
        assert!(!args
            .iter()
            .any(|a| a == "yolo" || a == "-y" || a == "--yolo"));
        // The role body replaces the CLI's system prompt; the policy denies the tools no
        // role uses, and the search tools to a reviewer of one file.
        let env = gemini_env(&req);
        assert!(env.contains(&("GEMINI_SYSTEM_MD".into(), "/tmp/x/system.md".into())));
        let files = gemini_files(&req);
        assert_eq!(files[0].0, PathBuf::from("/tmp/x/system.md"));
        assert_eq!(&*files[0].1, b"You are the Adversary.");
        let policy = |req: &DispatchRequest| -> toml::Table {
            let files = gemini_files(req);
            let (_, text) = files
                .iter()
                .find(|(p, _)| p.ends_with(POLICY_FILE))
                .unwrap();
            std::str::from_utf8(text).unwrap().parse().unwrap()
        };
        let denied = |t: &toml::Table| -> Vec<String> {
            t["rule"][0]["toolName"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap().to_owned())
                .collect()
        };
        let t = policy(&req);
        assert_eq!(t["rule"][0]["decision"].as_str(), Some("deny"));
        let several = denied(&t);
        assert!(several.contains(&"google_web_search".to_owned()));
        assert!(!several
            .iter()
            .any(|n| gemini_permits(Role::Adversary, n) && n != "update_topic"));
        let one_file = DispatchRequest {
            search: false,
            ..req
        };
        assert!(denied(&policy(&one_file)).contains(&"grep_search".to_owned()));
        assert!(!denied(&policy(&one_file)).contains(&"read_file".to_owned()));
        let fixer = DispatchRequest {
            role: Role::Fixer,
            ..one_file
        };
        assert!(!denied(&policy(&fixer)).contains(&"grep_search".to_owned()));
    }

    #[test]
    fn paths_outside_the_context_scope_get_a_deny_rule() {
        let req = DispatchRequest {
            role: Role::Enthusiast,
            label: "enthusiast-p1".into(),
            prompt: "P".into(),
            system_prompt: "S".into(),
            tier: Tier::Haiku,
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
        };
        let policy = |req: &DispatchRequest| -> toml::Table {
            let files = gemini_files(req);
            let (_, text) = files
                .iter()
                .find(|(p, _)| p.ends_with(POLICY_FILE))
                .unwrap();
            std::str::from_utf8(text).unwrap().parse().unwrap()
        };
        // Paths outside the context scope: a deny rule whose pattern matches their absolute
        // and relative spellings (and what lies below), not their neighbours.
        let hidden = DispatchRequest {
            hidden: vec![PathBuf::from("/repo/.env"), PathBuf::from("/repo/build")],
            ..req
        };
        let t = policy(&hidden);
        let rules = t["rule"].as_array().unwrap();
        assert_eq!(rules.len(), 3);
        let env = rules[1]["argsPattern"].as_str().unwrap();
        assert_eq!(rules[1]["decision"].as_str(), Some("deny"));
        assert!(rules[1]["toolName"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t.as_str() == Some("read_file")));
        assert_eq!(env, "\"(?:\\/repo/)?(?:\\./)?\\.env(?:/[^\"]*)?\"");
        assert!(rules[2]["argsPattern"]
            .as_str()
            .unwrap()
            .contains("build(?:/"));
        // Without a role body the CLI keeps its own system prompt.
        let no_role = DispatchRequest {
            system_prompt: String::new(),
            ..hidden
        };
        assert!(!gemini_env(&no_role)
            .iter()
            .any(|(k, _)| k == "GEMINI_SYSTEM_MD"));
        assert_eq!(gemini_files(&no_role).len(), 1);
    }

    #[test]
    fn the_fixer_runs_auto_edit_with_every_unused_tool_denied() {
        let agent = AgentSpec {
            name: "gemini".into(),
            backend: BackendKind::Gemini,
            format: EventFormat::Gemini,
            binary: PathBuf::from("/usr/bin/gemini"),
            extra_args: vec![],
            models: TierModels::default(),
            max_turns: 8,
            timeout: None,
            pass_env: vec![],
            fallback_model: None,
            base_url: None,
            api_key_env: None,
        };
        let fixer = DispatchRequest {
            role: Role::Fixer,
            label: "fixer".into(),
            prompt: "[AR Round 1 — FULL] Fixer\nbody".into(),
            system_prompt: "You are the Fixer.".into(),
            tier: Tier::Opus,
            cwd: PathBuf::from("/repo/.arev/worktrees/r1"),
            read_dirs: vec![PathBuf::from("/repo/.arev/worktrees/r1")],
            hidden: vec![],
            out_dir: PathBuf::from("/tmp/x"),
            timeout: Duration::from_secs(1),
            grace: Duration::from_secs(1),
            output_cap: 1024,
            max_budget_usd: None,
            price: None,
            search: false,
        };
        let denied = |req: &DispatchRequest| -> Vec<String> {
            let files = gemini_files(req);
            let (_, text) = files
                .iter()
                .find(|(p, _)| p.ends_with(POLICY_FILE))
                .unwrap();
            let t: toml::Table = std::str::from_utf8(text).unwrap().parse().unwrap();
            assert_eq!(t["rule"][0]["decision"].as_str(), Some("deny"));
            t["rule"][0]["toolName"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap().to_owned())
                .collect()
        };
        let args = gemini_args(&agent, &fixer);
        assert_eq!(
            args[1..],
            [
                "-o",
                "stream-json",
                "--approval-mode",
                "auto_edit",
                "--skip-trust",
                "--policy=/tmp/x/policy.toml",
                "--model=opus"
            ]
        );
        let off = denied(&fixer);
        for t in [
            "run_shell_command",
            "web_fetch",
            "write_todos",
            "google_web_search",
            "invoke_agent",
            "enter_plan_mode",
        ] {
            assert!(off.contains(&t.to_owned()), "{t}");
        }
        for t in ["write_file", "replace", "read_file", "glob", "grep_search"] {
            assert!(!off.contains(&t.to_owned()), "{t}");
        }
        assert!(!off
            .iter()
            .any(|n| gemini_permits(Role::Fixer, n) && n != "update_topic"));
        let prover = DispatchRequest {
            role: Role::Prover,
            ..fixer
        };
        assert_eq!(gemini_args(&agent, &prover)[4], "auto_edit");
        assert!(denied(&prover).contains(&"replace".to_owned()));
    }
}
