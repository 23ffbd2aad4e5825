//! The `claude` backend, Claude Code (`claude -p`): its profile, its read-only argv
//! (docs/architecture.md §16.1) with the prompt on stdin, and its stream-json decoder
//! (`decode.rs`).

mod decode;

use super::backend::{Backend, Credentials, Floor, LoginFile, Npm, Profile};
use super::event::Decoder;
use super::floor::Refused;
use super::spec::{AgentSpec, DispatchRequest, Invocation, ModelPrice, Wrap};
use super::view::{Hidden, ViewError};
use crate::records::{FileAccess, Role, ToolUse};
use serde_json::Value;
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;

/// The only tools a reviewer of several files gets: Read and Grep (no Glob: the prompt
/// names every file, and each tool's schema is resent with every request).
const READ_ONLY_TOOLS: &str = "Read,Grep";
/// A reviewer of one file Reads it whole: Read is all it uses.
const READ_TOOL: &str = "Read";
/// The Fixer's tools (iterate mode; cwd = the isolated worktree): read plus Edit and Write,
/// still under `dontAsk`, so anything else (Bash, WebFetch, …) is denied.
const FIXER_TOOLS: &str = "Read,Grep,Glob,Edit,Write";
/// The Prover's tools (`--prove`; cwd = a scratch worktree): read plus Write, never Edit — it
/// creates new files; arev rejects any change to an existing one before running anything.
const PROVER_TOOLS: &str = "Read,Grep,Write";

/// A path as a literal permission-rule pattern (gitignore syntax): glob characters escaped.
fn rule_path(dir: &std::path::Path) -> String {
    let mut out = String::new();
    for c in dir.display().to_string().trim_end_matches('/').chars() {
        if matches!(
            c,
            '\\' | '*' | '?' | '[' | ']' | '{' | '}' | '(' | ')' | '!'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The session's own settings layer (`--settings`): no hooks at all, and allow rules that
/// confine Read/Grep/Glob to `req.read_dirs` (and, for the Fixer, edits to its cwd).
///
/// Verified against Claude Code 2.1.330 (tests/integration/trust.rs): under `dontAsk` a read
/// outside the working directory is denied unless a rule allows it, a bare `Read` rule allows
/// ANY path (which is why there is none), and symlinks are resolved before the rules apply,
/// so an in-repo link to `/etc/hostname` is denied too. `//` starts an absolute path in a
/// rule. An `Edit(…)` rule also covers Write; a `Write(…)` rule alone allows nothing, not
/// even inside the cwd (verified for the Prover: Write denied under `Write(//wt/**)`,
/// allowed under `Edit(//wt/**)` with the Edit tool itself left out of `--tools`). The rules go in `--settings` JSON rather than `--allowedTools`, whose
/// value is split at commas and spaces (a path containing them would break the rule).
///
/// VCS metadata is denied whatever allows it (deny rules beat allow rules, in every settings
/// layer): `.git` at any depth under each read directory and the working directory — the
/// repository's `.git/` (where `actions/checkout` leaves the job's token in `.git/config`),
/// and the `.git` files of worktrees and submodules — for Read, Grep, Glob and Edit — and so
/// is every path of `req.hidden` (what the repository holds outside the context scope: an
/// ignored `.env`, untracked files), so the CLI refuses the read before anything reaches the
/// model. A path no rule can name (not UTF-8, or holding a control character:
/// [`super::view::unnamed`]) gets no rule: while `req.hidden` holds one, the dispatch runs in
/// the scope view instead ([`Claude::wrap`]), where every path of `req.hidden` is masked.
/// Those rules grow with the number of such paths (git collapses a wholly ignored
/// directory into one): past [`INLINE_SETTINGS_MAX`] bytes the layer is a file in the
/// dispatch's directory instead of an argument.
fn session_settings(req: &DispatchRequest) -> String {
    let mut allow = vec![];
    for dir in &req.read_dirs {
        let p = rule_path(dir);
        for tool in ["Read", "Grep", "Glob"] {
            allow.push(format!("{tool}(/{p}/**)"));
        }
    }
    if matches!(
        req.role,
        crate::records::Role::Fixer | crate::records::Role::Prover
    ) {
        allow.push(format!("Edit(/{}/**)", rule_path(&req.cwd)));
    }
    let mut deny = vec![];
    let mut dirs: Vec<&std::path::Path> = req.read_dirs.iter().map(PathBuf::as_path).collect();
    if !dirs.contains(&req.cwd.as_path()) {
        dirs.push(&req.cwd);
    }
    for dir in dirs {
        let p = rule_path(dir);
        for tool in ["Read", "Grep", "Glob", "Edit"] {
            deny.push(format!("{tool}(/{p}/**/.git)"));
            deny.push(format!("{tool}(/{p}/**/.git/**)"));
        }
    }
    // Everything in the repository outside the context scope: ignored (`.env`) and untracked
    // files, left-out tracked files; a wholly ignored directory is one entry.
    // A name no rule can hold is masked by the view instead.
    for h in req.hidden.iter().filter(|h| super::view::nameable(h)) {
        let p = rule_path(h);
        for tool in ["Read", "Grep", "Glob"] {
            deny.push(format!("{tool}(/{p})"));
            deny.push(format!("{tool}(/{p}/**)"));
        }
    }
    serde_json::json!({
        "disableAllHooks": true,
        "permissions": {"allow": allow, "deny": deny},
    })
    .to_string()
}

/// The largest `--settings` JSON passed inline (Linux caps one argument at 128 KiB).
const INLINE_SETTINGS_MAX: usize = 64 * 1024;

/// Where a settings layer too large for the argv is written (see [`session_settings`]).
fn settings_file(req: &DispatchRequest) -> PathBuf {
    req.out_dir.join("claude-settings.json")
}

/// The argv (without the program) for a read-only Claude Code worker; the prompt goes on stdin.
///
/// Nothing of the reviewed repository configures the session: `--setting-sources user`
/// loads the user's own settings (trusted: authentication, `env`) but never the project's
/// `.claude/settings.json` / `settings.local.json` (hooks, `apiKeyHelper`, permission rules);
/// `--strict-mcp-config` ignores `.mcp.json`; the `--settings` layer turns every hook off and
/// scopes the allow rules (see [`session_settings`]). The Fixer alone gets Edit and Write;
/// never `acceptEdits`, `bypassPermissions` or `--dangerously-*`, for any role (and the
/// config's argv floor keeps `extra_args` from adding them).
pub fn claude_args(agent: &AgentSpec, req: &DispatchRequest) -> Vec<String> {
    let tools = match req.role {
        crate::records::Role::Fixer => FIXER_TOOLS,
        crate::records::Role::Prover => PROVER_TOOLS,
        _ if req.search => READ_ONLY_TOOLS,
        _ => READ_TOOL,
    };
    let mut args: Vec<String> = [
        "-p",
        "--output-format",
        "stream-json",
        "--verbose",
        "--tools",
        tools,
        "--permission-mode",
        "dontAsk",
        "--strict-mcp-config",
        "--setting-sources",
        "user",
        "--no-session-persistence",
        "--max-turns",
    ]
    .iter()
    .map(|s| (*s).to_string())
    .collect();
    args.push(agent.max_turns.to_string());
    args.push("--settings".into());
    let settings = session_settings(req);
    args.push(if settings.len() > INLINE_SETTINGS_MAX {
        settings_file(req).display().to_string()
    } else {
        settings
    });
    // A value from configuration or a role body goes in the `--flag=value` form (docs/trust.md
    // "Round five"): one that starts with `-` is never read as a flag, neither by the option
    // parser nor by the CLI's early scan of its argv for `--settings` and
    // `--setting-sources` (which takes a `-…` word after any flag for a flag of its own).
    args.push(format!("--model={}", agent.models.get(req.tier)));
    if let Some(m) = &agent.fallback_model {
        args.push(format!("--fallback-model={m}"));
    }
    // The role body REPLACES Claude Code's own system prompt (~1,750 tokens on every
    // request, most of it about tools and memory files a reviewer does not have): measured
    // with benches/cost.rs.
    args.push(format!("--system-prompt={}", req.system_prompt));
    if let Some(usd) = req.max_budget_usd {
        // The CLI stops this session once it has spent its share of the run's budget.
        args.push("--max-budget-usd".into());
        args.push(format!("{usd:.6}"));
    }
    args.extend(agent.extra_args.iter().cloned());
    args
}

/// The environment a Claude Code reviewer runs with on top of the allowlisted one: no
/// `CLAUDE.md` (the user's `~/.claude/CLAUDE.md`, nor the reviewed repository's) and no
/// auto-memory reach the session (docs/contracts.md §19.1; verified with the real CLI in
/// tests/integration/real_claude.rs).
pub fn claude_env() -> Vec<(String, String)> {
    [
        ("CLAUDE_CODE_DISABLE_CLAUDE_MDS", "1"),
        ("CLAUDE_CODE_DISABLE_AUTO_MEMORY", "1"),
    ]
    .iter()
    .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
    .collect()
}

/// The file access of a Claude Code tool use: `Read` reads `file_path`; `Grep` and `Glob`
/// search `path` (the working directory without one); `Edit`/`Write` (the Fixer's) are
/// checked by the Fixer's write gate instead. Which tools a role may call at all is
/// `claude_permits`.
pub fn claude_access(name: &str, input: &Value) -> FileAccess {
    let arg = |k: &str| {
        input
            .get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    match name {
        "Read" => FileAccess::read(arg("file_path")),
        "Grep" | "Glob" => FileAccess::search(arg("path")),
        _ => FileAccess::none(),
    }
}

/// Whether `role` may call the Claude Code tool `name`: a reviewer only `Read`, `Grep` and
/// `Glob` (all it is given); the Fixer also its `Edit` and `Write`; the Prover `Write` only.
pub fn claude_permits(role: Role, name: &str) -> bool {
    match name {
        "Read" | "Grep" | "Glob" => true,
        "Edit" => role == Role::Fixer,
        "Write" => matches!(role, Role::Fixer | Role::Prover),
        _ => false,
    }
}

/// Claude Code (`claude -p`, docs/architecture.md §16.1).
const FLOOR: &[Refused] = &[
    Refused {
        long: &[
            "--permission-mode",
            "--permission-prompts",
            "--allowedTools",
            "--allowed-tools",
            "--dangerously-skip-permissions",
            "--allow-dangerously-skip-permissions",
        ],
        short: &[],
        why: "grants permissions",
    },
    Refused {
        long: &[
            "--tools", "--agent", "--agents", "--brief", "--chrome", "--ide",
        ],
        short: &[],
        why: "grants tools",
    },
    Refused {
        long: &["--add-dir", "--file", "--debug-file", "--worktree"],
        short: &['w'],
        why: "grants directories or files",
    },
    Refused {
        long: &["--settings", "--setting-sources", "--bare"],
        short: &[],
        why: "changes which settings and hooks load",
    },
    Refused {
        long: &["--mcp-config"],
        short: &[],
        why: "adds MCP servers",
    },
    Refused {
        long: &["--plugin-dir", "--plugin-url"],
        short: &[],
        why: "loads plugins",
    },
    Refused {
        long: &[
            "--resume",
            "--continue",
            "--fork-session",
            "--from-pr",
            "--teleport",
            "--cloud",
            "--environment",
            "--remote-control",
            "--desktop",
            "--tmux",
            "--background",
            "--bg",
        ],
        short: &['r', 'c'],
        why: "runs another session",
    },
];

/// Claude Code's list prices in USD per million tokens, by model family: Claude Code
/// 2.1.330's own table for the models the tier aliases resolve to (`claude-opus-5-5`,
/// `claude-sonnet-5-5`, `claude-haiku-5-5`), which gives the `total_cost_usd` of every
/// answered dispatch: checked against the real CLI by tests/integration/real_claude.rs
/// (`list_prices_are_the_clis_own`). A model of no known family is priced as Opus, the
/// dearest: a budget errs on the safe side.
const PRICES: &[(&str, ModelPrice)] = &[
    ("opus", price(4.0, 20.0, 5.0, 0.2)),
    ("sonnet", price(2.0, 10.0, 2.5, 0.1)),
    ("haiku", price(0.1, 0.5, 0.125, 0.01)),
];

const fn price(input: f64, output: f64, cache_write: f64, cache_read: f64) -> ModelPrice {
    ModelPrice {
        input,
        output,
        cache_read: Some(cache_read),
        cache_write: Some(cache_write),
    }
}

/// Claude Code's profile.
static PROFILE: Profile = Profile {
    name: "claude",
    npm: Some(Npm {
        package: "@anthropic-ai/claude-code",
        version: "2.1.330",
    }),
    credentials: Some(Credentials {
        vars: &[
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_AUTH_TOKEN",
            "CLAUDE_CODE_OAUTH_TOKEN",
            "CLAUDE_CODE_USE_BEDROCK",
            "CLAUDE_CODE_USE_VERTEX",
        ],
        login: Some(LoginFile {
            env_dir: Some("CLAUDE_CONFIG_DIR"),
            home_dir: ".claude",
            file: ".credentials.json",
        }),
        fix: "set ANTHROPIC_API_KEY, or run `claude` once and log in",
        keychain_on_macos: true,
    }),
    env_prefixes: &["ANTHROPIC_", "CLAUDE_"],
    default_models: ["haiku", "sonnet", "opus"],
    list_prices: PRICES,
    reports_cost: true,
    floor: Some(Floor {
        refused: FLOOR,
        config_keys: None,
        short_flags_take_values: false,
    }),
    personal_context: "no CLAUDE.md and no auto-memory (CLAUDE_CODE_DISABLE_CLAUDE_MDS, \
                       CLAUDE_CODE_DISABLE_AUTO_MEMORY); the role body replaces the system \
                       prompt; only the user's own settings load",
};

/// Claude Code on Amazon Bedrock (`CLAUDE_CODE_USE_BEDROCK`): AWS credentials and region.
const BEDROCK_PREFIXES: &[&str] = &["AWS_"];
/// Claude Code on Google Vertex AI (`CLAUDE_CODE_USE_VERTEX`): Google credentials, project
/// and region (`CLOUD_ML_REGION`, `VERTEX_REGION_*`).
const VERTEX_PREFIXES: &[&str] = &["GOOGLE_", "CLOUD_ML_", "VERTEX_"];

/// Whether `name` is set to a true value (anything but empty, `0` or `false`) in `env`.
fn switched_on(env: &[(OsString, OsString)], name: &str) -> bool {
    env.iter().any(|(k, v)| {
        k == name && {
            let v = v.to_string_lossy();
            let v = v.trim();
            !(v.is_empty() || v == "0" || v.eq_ignore_ascii_case("false"))
        }
    })
}

/// What Claude Code's view hides (only while `req.hidden` holds a path no permission rule
/// can name; `names` is unused: the view masks `req.hidden` itself).
const HIDDEN: Hidden = Hidden {
    cli: "Claude Code",
    what: "files outside the context scope",
    names: &[".git", ".env"],
};

/// Claude Code (`claude -p`).
pub struct Claude;

impl Backend for Claude {
    fn profile(&self) -> &'static Profile {
        &PROFILE
    }

    fn invocation(&self, agent: &AgentSpec, req: &DispatchRequest) -> Invocation {
        let settings = session_settings(req);
        let files = if settings.len() > INLINE_SETTINGS_MAX {
            vec![(settings_file(req), Arc::from(settings.into_bytes()))]
        } else {
            vec![]
        };
        Invocation {
            args: claude_args(agent, req),
            stdin: Some(Arc::from(Arc::clone(&req.prompt))),
            env: claude_env(),
            files,
        }
    }

    /// Its deny rules refuse what is outside the context scope, but a rule is a string and
    /// cannot name a path that is not UTF-8 or holds a control character: while `req.hidden`
    /// holds one, the dispatch runs in the scope view, which masks every path of it
    /// (docs/trust.md "What reviewers may read"). Otherwise nothing wraps it.
    fn wrap(&self, agent: &AgentSpec, req: &DispatchRequest) -> Result<Option<Wrap>, ViewError> {
        if super::view::unnamed(&req.hidden).is_none() {
            return Ok(None);
        }
        super::view::scope_view(agent, req, &HIDDEN).map(Some)
    }

    fn check_unnamed_view(&self) -> Result<(), ViewError> {
        super::view::probe(&HIDDEN)
    }

    fn decoder(&self, model: &str) -> Box<dyn Decoder> {
        Box::new(decode::ClaudeDecoder::new(model, PROFILE_KEY))
    }

    fn permits(&self, role: Role, t: &ToolUse) -> bool {
        claude_permits(role, &t.name)
    }

    /// Cloud credentials reach a Claude agent only with their route switched on in arev's
    /// environment, never just because they are set.
    fn env_prefixes(&self, parent_env: &[(OsString, OsString)]) -> Vec<&'static str> {
        let mut p = PROFILE.env_prefixes.to_vec();
        if switched_on(parent_env, "CLAUDE_CODE_USE_BEDROCK") {
            p.extend_from_slice(BEDROCK_PREFIXES);
        }
        if switched_on(parent_env, "CLAUDE_CODE_USE_VERTEX") {
            p.extend_from_slice(VERTEX_PREFIXES);
        }
        p
    }
}

/// The credentials variable an authentication failure names.
const PROFILE_KEY: &str = "ANTHROPIC_API_KEY";

#[cfg(test)]
mod tests;
