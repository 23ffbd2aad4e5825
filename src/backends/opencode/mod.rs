//! The `opencode` backend, OpenCode (`opencode run --format json`): its profile, its
//! invocation (a config arev writes per dispatch: the role body as an agent's prompt, a
//! reviewer's permissions, a self-hosted endpoint as provider `arev`), its private home, and
//! its JSONL decoder (docs/self-hosted.md).
//!
//! Events (OpenCode 1.18.33, one JSON object `{type, timestamp, sessionID, …}` per line):
//! `step_start`; `text` (a finished text part); `tool_use` (a tool call once it completed or
//! failed, `part.state.status`; a call of a tool OpenCode does not offer is its `invalid`
//! tool, whose input names the tool asked for); `step_finish` with the step's `tokens`
//! (`input` without the cached ones, `output`, `reasoning`, `cache.read`, `cache.write`) and
//! OpenCode's `cost`; `error` (`error.name`, and for an `APIError` the HTTP `statusCode`,
//! `isRetryable` and `message`, reported after OpenCode's own retries). The answer is the
//! text of the last step. OpenCode prints no retry events, so a fault is known when the
//! process ends.

use super::backend::{Backend, Credentials, Floor, LoginFile, Npm, Profile};
use super::event::{AgentEvent, Decoder};
use super::fault::{from_api, truncated, ApiError};
use super::floor::Refused;
use super::home::{cache_home, data_home, homes_base, private_dir, ReviewerHome};
use super::lines::{lax, lax_object, tagged};
use super::spec::{AgentSpec, DispatchRequest, Invocation, Wrap};
use super::view::{Hidden, ViewError};
use crate::records::{Fault, FileAccess, ProcessEnd, ResultEvent, Role, ToolUse, Usage};
use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The agent arev defines in OpenCode's config and runs (`--agent`).
pub const AGENT: &str = "arev";
/// The provider arev defines for an agent's `base_url` (`-m arev/<model>`).
pub const PROVIDER: &str = "arev";
/// The config file arev writes into the dispatch's directory (`OPENCODE_CONFIG`).
pub const CONFIG_FILE: &str = "opencode.json";
/// Stands for the key's `{env:…}` until the config text is written.
const KEY_SLOT: &str = "\u{0}arev-api-key\u{0}";

/// What OpenCode's view hides in its working directory and each ancestor (docs/trust.md
/// "Round five"). OpenCode 1.18.33 loads `{plugin,plugins}/*.{ts,js}` of every `.opencode`
/// directory and the `plugin` list of every `opencode.json(c)` (and of `.opencode/
/// opencode.json(c)`) from its working directory up to the project's root — or `/` outside
/// git —, whatever `OPENCODE_PURE` and `OPENCODE_DISABLE_PROJECT_CONFIG` say (its v2
/// config reads them unconditionally); its themes are looked up to `/`.
const HIDDEN: Hidden = Hidden {
    cli: "OpenCode",
    what: "plugins and configuration (`.opencode/`, `opencode.json`, `opencode.jsonc`) and \
           files outside the context scope",
    names: &[".opencode", "opencode.json", "opencode.jsonc"],
};

/// The environment of every OpenCode agent: nothing of the repository's or the user's
/// configuration but arev's, nothing fetched from the network.
const OPENCODE_ENV: &[(&str, &str)] = &[
    // The repository's opencode.json, .opencode/, AGENTS.md / CLAUDE.md / CONTEXT.md.
    ("OPENCODE_DISABLE_PROJECT_CONFIG", "1"),
    // ~/.claude/CLAUDE.md and the skills under ~/.claude and ~/.agents.
    ("OPENCODE_DISABLE_CLAUDE_CODE", "1"),
    ("OPENCODE_DISABLE_EXTERNAL_SKILLS", "1"),
    // Plugins: external ones and the default ones.
    ("OPENCODE_PURE", "1"),
    ("OPENCODE_DISABLE_DEFAULT_PLUGINS", "1"),
    // Nothing from the internet: the update check, models.dev, LSP servers.
    ("OPENCODE_DISABLE_AUTOUPDATE", "1"),
    ("OPENCODE_DISABLE_MODELS_FETCH", "1"),
    ("OPENCODE_DISABLE_LSP_DOWNLOAD", "1"),
];

/// `opencode run` (yargs: short booleans group, every letter counts).
const FLOOR: &[Refused] = &[
    Refused {
        long: &["--auto"],
        short: &[],
        why: "approves every permission",
    },
    Refused {
        long: &["--agent", "--command"],
        short: &[],
        why: "runs another agent or command (its own prompt and permissions)",
    },
    Refused {
        long: &["--dir", "--file"],
        short: &['f'],
        why: "grants directories or files",
    },
    Refused {
        long: &[
            "--continue",
            "--session",
            "--fork",
            "--share",
            "--attach",
            "--port",
            "--password",
            "--username",
            "--interactive",
        ],
        short: &['c', 's', 'p', 'u', 'i'],
        why: "runs another session or a server",
    },
];

/// OpenCode's profile.
static PROFILE: Profile = Profile {
    name: "opencode",
    npm: Some(Npm {
        package: "opencode-ai",
        version: "1.18.33",
    }),
    credentials: Some(Credentials {
        vars: &[],
        login: Some(LoginFile {
            env_dir: None,
            home_dir: ".local/share/opencode",
            file: "auth.json",
        }),
        fix: "run `opencode auth login`, or name the provider's key in the agent's `pass_env`, \
              or give the agent a `base_url` (docs/self-hosted.md)",
        keychain_on_macos: false,
    }),
    env_prefixes: &[],
    default_models: [
        "anthropic/claude-haiku-4-5",
        "anthropic/claude-sonnet-4-5",
        "anthropic/claude-opus-4-5",
    ],
    list_prices: &[],
    reports_cost: false,
    floor: Some(Floor {
        refused: FLOOR,
        config_keys: None,
        short_flags_take_values: false,
    }),
    personal_context: "a private HOME, config and data directory per dispatch (the user's \
                       auth.json linked in); no project or global config, AGENTS.md, \
                       CLAUDE.md, skills or plugins; the role body is the agent's prompt",
};

/// OpenCode (`opencode run --format json`).
pub struct OpenCode;

impl Backend for OpenCode {
    fn profile(&self) -> &'static Profile {
        &PROFILE
    }

    /// None on the command line: the per-dispatch `opencode.json` names the provider.
    fn endpoint_args(&self, _base_url: &str, _key_var: Option<&str>) -> Option<Vec<String>> {
        Some(vec![])
    }

    /// `run --format json --agent arev --model=<model>`, the prompt on stdin (verbatim: a
    /// positional message is re-quoted by OpenCode), the config in the dispatch's
    /// directory. `--title` spares the request that would name the session.
    fn invocation(&self, agent: &AgentSpec, req: &DispatchRequest) -> Invocation {
        let model = agent.models.get(req.tier);
        let model = match &agent.base_url {
            Some(_) => format!("{PROVIDER}/{model}"),
            None => model.to_string(),
        };
        let mut args: Vec<String> = ["run", "--format", "json", "--agent", AGENT, "--title"]
            .iter()
            .map(|s| (*s).to_string())
            .collect();
        // The model in the `--model=value` form (docs/trust.md "Round five"): never read as a
        // flag (`--attach=<host>` would send the session elsewhere).
        args.extend(["arev review".into(), format!("--model={model}")]);
        args.extend(agent.extra_args.iter().cloned());
        let path = config_path(req);
        let mut env: Vec<(String, String)> = OPENCODE_ENV
            .iter()
            .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
            .collect();
        env.push(("OPENCODE_CONFIG".into(), path.display().to_string()));
        let text = config_text(&config(agent, req), agent.api_key_env.as_deref());
        Invocation {
            args,
            stdin: Some(Arc::<[u8]>::from(Arc::clone(&req.prompt))),
            env,
            files: vec![(path, Arc::from(text.into_bytes()))],
        }
    }

    /// Its filesystem view: the working directory and every ancestor without `.opencode/`,
    /// `opencode.json` and `opencode.jsonc`, and — as the scope view masks them for Codex —
    /// without any path of `req.hidden` or any `.git` (its `grep` reads whatever its ripgrep
    /// finds, whatever the `read` rules say, and no rule can name a path that is not UTF-8);
    /// what it needs is kept (its working directory, the dispatch's directory with arev's
    /// config, the other read directories, its binary). One bwrap for both.
    fn wrap(&self, agent: &AgentSpec, req: &DispatchRequest) -> Result<Option<Wrap>, ViewError> {
        super::view::scope_and_names_view(agent, req, &HIDDEN).map(Some)
    }

    fn check_wrap(&self) -> Result<(), ViewError> {
        super::view::probe(&HIDDEN)
    }

    fn decoder(&self, model: &str) -> Box<dyn Decoder> {
        Box::new(OpenCodeDecoder {
            model: model.to_string(),
            usage: Usage::default(),
            steps: 0,
            text: Vec::new(),
            error: None,
            denials: Vec::new(),
        })
    }

    fn permits(&self, role: Role, t: &ToolUse) -> bool {
        match t.name.as_str() {
            "read" | "glob" | "grep" | "list" => true,
            "edit" | "write" | "multiedit" => matches!(role, Role::Fixer | Role::Prover),
            _ => false,
        }
    }

    /// A home of its own: empty config and data directories (the user's `auth.json` linked
    /// in, so that a login for a hosted provider still works), the user's cache.
    fn private_home(
        &self,
        parent_env: &[(OsString, OsString)],
    ) -> std::io::Result<Option<ReviewerHome>> {
        let dir = private_dir(&homes_base(parent_env), "opencode-")?;
        let home = dir.path();
        let (config, data, state) = (
            home.join(".config"),
            home.join(".local/share"),
            home.join(".local/state"),
        );
        for d in [&config, &data.join("opencode"), &state] {
            std::fs::create_dir_all(d)?;
        }
        if let Some(auth) = data_home(parent_env).map(|d| d.join("opencode/auth.json")) {
            if auth.exists() {
                std::os::unix::fs::symlink(&auth, data.join("opencode/auth.json"))?;
            }
        }
        let cache = cache_home(parent_env).unwrap_or_else(|| home.join(".cache"));
        let s = |p: &Path| p.display().to_string();
        let env = vec![
            ("HOME".into(), s(home)),
            ("XDG_CONFIG_HOME".into(), s(&config)),
            ("XDG_DATA_HOME".into(), s(&data)),
            ("XDG_STATE_HOME".into(), s(&state)),
            ("XDG_CACHE_HOME".into(), s(&cache)),
        ];
        Ok(Some(ReviewerHome { _dir: dir, env }))
    }
}

fn config_path(req: &DispatchRequest) -> PathBuf {
    let dir = std::path::absolute(&req.out_dir).unwrap_or_else(|_| req.out_dir.clone());
    dir.join(CONFIG_FILE)
}

/// OpenCode's config for one dispatch: agent `arev` (the role body as its prompt, the role's
/// permissions), provider `arev` for a `base_url`, nothing shared, no snapshots.
fn config(agent: &AgentSpec, req: &DispatchRequest) -> Value {
    let mut c = json!({
        "$schema": "https://opencode.ai/config.json",
        "autoupdate": false,
        "share": "disabled",
        "snapshot": false,
        "agent": {AGENT: {
            "mode": "primary",
            "description": "arev reviewer",
            "prompt": req.system_prompt,
            "permission": permissions(req),
        }},
    });
    if let Some(url) = &agent.base_url {
        let models: Map<String, Value> = [
            &agent.models.haiku,
            &agent.models.sonnet,
            &agent.models.opus,
        ]
        .into_iter()
        .map(|m| (m.clone(), json!({ "name": m })))
        .collect();
        let mut options = json!({ "baseURL": url });
        if agent.api_key_env.is_some() {
            options["apiKey"] = json!(KEY_SLOT);
        }
        c["provider"] = json!({PROVIDER: {
            "npm": "@ai-sdk/openai-compatible",
            "name": "arev (self-hosted)",
            "options": options,
            "models": models,
        }});
    }
    c
}

/// Everything denied but reading and searching (search: only when offered) — and the
/// Fixer's and Prover's edits, inside the working directory only and never of OpenCode's own
/// configuration — confined to the working directory and the other read directories; never
/// VCS metadata nor anything of `req.hidden` (outside the context scope). OpenCode matches `read` patterns against the path
/// relative to the project and `external_directory` ones against absolute directories;
/// `*` crosses `/`; the last matching rule wins.
fn permissions(req: &DispatchRequest) -> Value {
    // The Matcher (`arev eval bench --score`) reads like a reviewer: never an edit.
    let reviewer = matches!(
        req.role,
        Role::Enthusiast | Role::Adversary | Role::Judge | Role::Matcher
    );
    let search = if req.search || !reviewer {
        "allow"
    } else {
        "deny"
    };
    let mut external = Map::new();
    external.insert("*".into(), "deny".into());
    for d in req.read_dirs.iter().filter(|d| !d.starts_with(&req.cwd)) {
        external.insert(d.display().to_string(), "allow".into());
        external.insert(format!("{}/*", d.display()), "allow".into());
    }
    let mut read = json!({"*": "allow", ".git": "deny", ".git/*": "deny", "*/.git": "deny", "*/.git/*": "deny"});
    // What the repository holds outside the context scope (an ignored `.env`, untracked
    // files): denied by its path relative to the project, and all below it. Every such
    // pattern sorts after the `*` allow, so it is the last rule matching that path.
    // A path no rule can name is masked by the view instead ([`OpenCode::wrap`]).
    for h in &req.hidden {
        if let Some(rel) = h.strip_prefix(&req.cwd).ok().and_then(Path::to_str) {
            if !rel.is_empty() {
                // The rules are written in key order (a JSON object arev builds sorted): a
                // name that sorts before `*` (`(secret)`, `!x`, `$x`) is written behind a
                // leading `*`, so it still comes after the allow and is the last rule that
                // matches (it may deny a little more, never less).
                let rel = if rel < "*" {
                    format!("*{rel}")
                } else {
                    rel.to_string()
                };
                read[format!("{rel}/*")] = json!("deny");
                read[rel] = json!("deny");
            }
        }
    }
    let mut p = json!({
        "*": "deny",
        "read": read,
        "list": "allow",
        "glob": search,
        "grep": search,
        "external_directory": external,
    });
    if !reviewer {
        // OpenCode asks `edit` with the path relative to its worktree (the cwd): anything
        // outside it (`../…`, whatever `external_directory` let through) is denied, and so
        // is VCS metadata and OpenCode's own configuration (its view shows it empty and
        // read-only).
        p["edit"] = json!({"*": "allow", "../*": "deny", ".git": "deny", ".git/*": "deny",
                           "*/.git": "deny", "*/.git/*": "deny",
                           ".opencode": "deny", ".opencode/*": "deny",
                           "opencode.json": "deny", "opencode.jsonc": "deny"});
    }
    p
}

/// The text of `config`. OpenCode substitutes `{env:…}` and `{file:…}` in its config's text
/// before parsing it, so every brace inside a JSON string is written as an escape
/// (`\u007b`, the same string once parsed): a role body or a model name can never make it
/// read a variable or a file. Only the key slot becomes `{env:<key_var>}` (the key itself is
/// never written).
fn config_text(config: &Value, key_var: Option<&str>) -> String {
    let text = escape_braces(&config.to_string());
    let slot = Value::String(KEY_SLOT.into()).to_string();
    match key_var {
        Some(v) => text.replace(&slot, &format!("\"{{env:{v}}}\"")),
        None => text,
    }
}

/// `{` and `}` inside the JSON strings of `json` as `\u007b` / `\u007d`.
fn escape_braces(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    let (mut in_string, mut escaped) = (false, false);
    for c in json.chars() {
        match c {
            '{' if in_string => out.push_str("\\u007b"),
            '}' if in_string => out.push_str("\\u007d"),
            _ => out.push(c),
        }
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
        }
    }
    out
}

/// `opencode run --format json` events arev reads.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum OpenCodeEvent {
    StepStart {},
    Text {
        #[serde(default, deserialize_with = "lax_object")]
        part: Option<TextPart>,
    },
    ToolUse {
        #[serde(default, deserialize_with = "lax_object")]
        part: Option<ToolPart>,
    },
    StepFinish {
        #[serde(default, deserialize_with = "lax_object")]
        part: Option<FinishPart>,
    },
    Error {
        #[serde(default, deserialize_with = "lax_object")]
        error: Option<ErrorBody>,
    },
    #[serde(other)]
    Other,
}

#[derive(Debug, Deserialize)]
struct TextPart {
    #[serde(default, deserialize_with = "lax")]
    text: Option<String>,
}

#[derive(Debug, Deserialize)]
struct ToolPart {
    #[serde(default, deserialize_with = "lax")]
    id: Option<String>,
    #[serde(default, deserialize_with = "lax")]
    tool: Option<String>,
    #[serde(default, deserialize_with = "lax_object")]
    state: Option<ToolState>,
}

#[derive(Debug, Deserialize)]
struct ToolState {
    #[serde(default)]
    input: Value,
    #[serde(default, deserialize_with = "lax")]
    status: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct FinishPart {
    #[serde(default, deserialize_with = "lax")]
    reason: Option<String>,
    #[serde(default, deserialize_with = "lax_object")]
    tokens: Option<Tokens>,
}

#[derive(Debug, Default, Deserialize)]
struct Tokens {
    #[serde(default, deserialize_with = "lax")]
    input: Option<u64>,
    #[serde(default, deserialize_with = "lax")]
    output: Option<u64>,
    #[serde(default, deserialize_with = "lax")]
    reasoning: Option<u64>,
    #[serde(default, deserialize_with = "lax_object")]
    cache: Option<CacheTokens>,
}

#[derive(Debug, Default, Deserialize)]
struct CacheTokens {
    #[serde(default, deserialize_with = "lax")]
    read: Option<u64>,
    #[serde(default, deserialize_with = "lax")]
    write: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
struct ErrorBody {
    #[serde(default, deserialize_with = "lax")]
    name: Option<String>,
    #[serde(default, deserialize_with = "lax_object")]
    data: Option<ErrorData>,
}

#[derive(Debug, Default, Deserialize)]
struct ErrorData {
    #[serde(default, deserialize_with = "lax")]
    message: Option<String>,
    #[serde(default, rename = "statusCode", deserialize_with = "lax")]
    status_code: Option<u16>,
    #[serde(default, rename = "responseBody", deserialize_with = "lax")]
    response_body: Option<String>,
}

/// The decoder's state: what the stream said so far.
struct OpenCodeDecoder {
    model: String,
    usage: Usage,
    steps: u64,
    /// The text parts of the current step.
    text: Vec<String>,
    /// The last `error` line's message and fault.
    error: Option<(String, Fault)>,
    /// The tool calls that failed (a permission refused them, or the tool did), as
    /// `{tool_name, tool_use_id}`: they changed nothing.
    denials: Vec<Value>,
}

impl Decoder for OpenCodeDecoder {
    fn event(&mut self, v: Value, out: &mut Vec<AgentEvent>) {
        let Some(event) = tagged::<OpenCodeEvent>(v) else {
            return;
        };
        match event {
            OpenCodeEvent::StepStart {} => self.text.clear(),
            OpenCodeEvent::Text { part } => {
                if let Some(t) = part.and_then(|p| p.text) {
                    out.push(AgentEvent::Text(t.clone()));
                    self.text.push(t);
                }
            }
            OpenCodeEvent::ToolUse { part } => {
                let failed = part
                    .as_ref()
                    .and_then(|p| p.state.as_ref())
                    .is_some_and(|s| s.status.as_deref() == Some("error"));
                if let Some(t) = part.and_then(tool_use) {
                    if failed {
                        self.denials
                            .push(json!({"tool_name": t.name, "tool_use_id": t.id}));
                    }
                    out.push(AgentEvent::ToolUse(t));
                }
            }
            OpenCodeEvent::StepFinish { part } => {
                let part = part.unwrap_or_default();
                self.steps += 1;
                add_usage(&mut self.usage, part.tokens.unwrap_or_default());
                out.push(AgentEvent::Usage(self.usage.clone()));
                if part.reason.as_deref() == Some("length") {
                    self.error = Some(("the output token limit".into(), truncated()));
                }
            }
            OpenCodeEvent::Error { error } => {
                let e = error.unwrap_or_default();
                let fault = error_fault(&e, &self.model);
                out.push(AgentEvent::Error(fault.clone()));
                let data = e.data.unwrap_or_default();
                let message = data.message.or(e.name).unwrap_or_else(|| "error".into());
                self.error = Some((message, fault));
            }
            OpenCodeEvent::Other => {}
        }
    }

    /// The result: the error OpenCode reported, else the text of the last step.
    fn end(&mut self, _end: &ProcessEnd, _stderr: &[u8], out: &mut Vec<AgentEvent>) {
        let usage = std::mem::take(&mut self.usage);
        let permission_denials = std::mem::take(&mut self.denials);
        let (result, fault) = match self.error.take() {
            Some((message, fault)) => (
                ResultEvent {
                    is_error: true,
                    subtype: "error".into(),
                    text: Some(message),
                    total_cost_usd: 0.0,
                    usage,
                    permission_denials,
                    num_turns: Some(self.steps),
                },
                Some(fault),
            ),
            None if self.steps > 0 => (
                ResultEvent {
                    is_error: false,
                    subtype: "success".into(),
                    text: Some(self.text.concat()).filter(|t| !t.is_empty()),
                    total_cost_usd: 0.0,
                    usage,
                    permission_denials,
                    num_turns: Some(self.steps),
                },
                None,
            ),
            None => return,
        };
        out.push(AgentEvent::Result { result, fault });
    }
}

/// Step tokens: OpenCode's `input` excludes the cached ones; reasoning is output.
fn add_usage(total: &mut Usage, t: Tokens) {
    let cache = t.cache.unwrap_or_default();
    total.input_tokens += t.input.unwrap_or(0);
    total.output_tokens += t.output.unwrap_or(0) + t.reasoning.unwrap_or(0);
    total.cache_read_input_tokens += cache.read.unwrap_or(0);
    total.cache_creation_input_tokens += cache.write.unwrap_or(0);
}

/// A tool call: the tool the model asked for (a call of a tool OpenCode does not offer is
/// its `invalid` tool, naming the one asked for) and its file accesses.
fn tool_use(p: ToolPart) -> Option<ToolUse> {
    let input = p.state.map(|s| s.input).unwrap_or(Value::Null);
    let tool = p.tool.unwrap_or_default();
    let name = match tool.as_str() {
        "invalid" => input
            .get("tool")
            .and_then(Value::as_str)
            .unwrap_or("invalid")
            .to_string(),
        _ => tool,
    };
    let path = |k: &str| input.get(k).and_then(Value::as_str).map(str::to_owned);
    let access = match name.as_str() {
        "read" => {
            path("filePath").map_or_else(|| FileAccess::unknown("no filePath"), FileAccess::read)
        }
        "glob" | "grep" | "list" => FileAccess::search(path("path").unwrap_or_default()),
        "edit" | "write" | "multiedit" => FileAccess {
            write: vec![path("filePath").unwrap_or_default()],
            ..FileAccess::none()
        },
        "apply_patch" | "patch" | "bash" | "task" => {
            FileAccess::unknown(format!("`{name}` can touch any file"))
        }
        _ => FileAccess::none(),
    };
    Some(ToolUse {
        id: p.id?,
        name,
        input,
        access,
    })
}

/// The fault of an `error` line: an `APIError`'s HTTP status (an OpenAI-shaped body's error
/// type settles it), a connection OpenCode gave up on, an answer cut at the output limit.
fn error_fault(e: &ErrorBody, model: &str) -> Fault {
    let data = e.data.as_ref();
    let name = e.name.as_deref().unwrap_or_default();
    if name == "MessageOutputLengthError" {
        return truncated();
    }
    let mut api = ApiError {
        status: data.and_then(|d| d.status_code),
        text: data.and_then(|d| d.message.clone()).unwrap_or_default(),
        ..ApiError::default()
    };
    if let Some(body) = data.and_then(|d| d.response_body.as_deref()) {
        api.kind = openai_kind(body);
    }
    if name == "ProviderAuthError" {
        api.kind = "authentication_error".into();
    }
    from_api(&api, model, "")
}

/// The normalised error type of an OpenAI-compatible error body, or "".
fn openai_kind(body: &str) -> String {
    let Ok(v) = serde_json::from_str::<Value>(body) else {
        return String::new();
    };
    let e = &v["error"];
    let (code, kind) = (
        e["code"].as_str().unwrap_or_default(),
        e["type"].as_str().unwrap_or_default(),
    );
    match (code, kind) {
        ("invalid_api_key", _) | (_, "authentication_error") => "authentication_error",
        ("model_not_found", _) => "not_found_error",
        ("insufficient_quota", _) | (_, "insufficient_quota") => "billing",
        ("rate_limit_exceeded", _) => "rate_limit_error",
        _ => "",
    }
    .into()
}

#[cfg(test)]
mod tests;
