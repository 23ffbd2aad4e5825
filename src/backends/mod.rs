//! The agent CLIs arev drives, one module each (docs/architecture.md "Adding a backend"):
//! its static profile (npm package and tested version, credentials, the environment it may
//! receive, default models and prices, the argv floor, how personal context is kept out),
//! the invocation of one dispatch, and one streaming decoder from its output lines to
//! [`AgentEvent`]s, which [`Fold`] folds into what a dispatch records.
//!
//! This file is the ONE registry: a backend is its module and one line of `registry!`.
mod backend;
mod claude;
mod codex;
mod command;
mod event;
mod fault;
mod floor;
mod fold;
mod gemini;
mod home;
mod lines;
mod opencode;
mod price;
mod shell;
mod spec;
mod view;

pub use backend::{Backend, Credentials, Floor, LoginFile, Npm, Profile};
pub use claude::claude_access;
#[cfg(test)]
pub(crate) use codex::codex_endpoint_arg;
pub use command::prompt_with_role;
pub use event::{AgentEvent, Decoder};
pub use fault::{cut_answer, truncated_recovered};
pub use floor::{check as check_floor, FloorViolation, Refused};
#[cfg(test)]
pub(crate) use fold::parse_events;
pub use fold::{decode_all, decode_ended, Fold, Folded};
pub use gemini::{exit_meaning, gemini_access};
pub use home::{agent_tmp, homes_env, PrivateDir, ReviewerHome};
pub use price::{cost_usd, list_price_usd, price_of};
pub use shell::shell_access;
pub use spec::{
    AgentSpec, DispatchRequest, Invocation, ModelPrice, TierModels, Wrap, MAX_ARG_PROMPT,
};
pub use view::{find_bwrap, ViewError};

use crate::records::{Role, ToolUse};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Generates [`BackendKind`] (every backend, and `command`), [`EventFormat`] (the backends
/// with an event format of their own) and their lookups from one line per backend:
/// `/// <doc of the backend kind>` then `Variant = "config name" => module::Type, "<doc of
/// its event format>";`.
macro_rules! registry {
    ($(
        $(#[doc = $doc:literal])*
        $variant:ident = $name:literal => $imp:path, $format_doc:literal;
    )*) => {
        /// Which CLI an agent is: decides the argv, how the prompt is delivered and the event format.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
        pub enum BackendKind {
            $(
                $(#[doc = $doc])*
                #[serde(rename = $name)]
                $variant,
            )*
            /// Any executable: `extra_args` only, prompt on stdin, events in the declared `format`.
            #[serde(rename = "command")]
            Command,
        }

        /// The event format an agent prints on stdout.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
        pub enum EventFormat {
            $(
                #[doc = $format_doc]
                #[serde(rename = $name)]
                $variant,
            )*
        }

        impl BackendKind {
            /// Every backend, `command` last.
            pub const ALL: &'static [Self] = &[$(Self::$variant,)* Self::Command];

            /// The backend's module.
            pub fn backend(self) -> &'static dyn Backend {
                match self {
                    $(Self::$variant => &$imp,)*
                    Self::Command => &command::Command,
                }
            }

            /// The event format of a built-in backend (`None` for `command`, which
            /// declares one).
            pub fn native_format(self) -> Option<EventFormat> {
                match self {
                    $(Self::$variant => Some(EventFormat::$variant),)*
                    Self::Command => None,
                }
            }
        }

        impl EventFormat {
            /// The backend whose stream this is (its decoder, tools and vendor).
            pub fn backend(self) -> &'static dyn Backend {
                match self {
                    $(Self::$variant => &$imp,)*
                }
            }
        }
    };
}

registry! {
    /// Claude Code (`claude -p`), prompt on stdin, stream-json events.
    Claude = "claude" => claude::Claude, "Claude Code `--output-format stream-json --verbose`.";
    /// OpenAI Codex (`codex exec --json`), prompt as the last argument, JSONL events.
    Codex = "codex" => codex::Codex, "Codex `exec --json` JSONL.";
    /// Gemini CLI (`gemini -p <prompt> -o stream-json`), stream-json events.
    Gemini = "gemini" => gemini::Gemini, "Gemini CLI `-o stream-json`.";
    /// OpenCode (`opencode run --format json`), prompt on stdin, JSONL events.
    OpenCode = "opencode" => opencode::OpenCode, "OpenCode `run --format json`.";
}

impl BackendKind {
    /// Its name in the configuration (`backend = "…"`).
    pub fn as_str(self) -> &'static str {
        self.profile().name
    }

    /// Its static profile.
    pub fn profile(self) -> &'static Profile {
        self.backend().profile()
    }

    /// The backend of this configuration name.
    pub fn named(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|k| k.as_str() == name)
    }
}

impl EventFormat {
    /// The backend kind that prints this format.
    pub fn kind(self) -> BackendKind {
        BackendKind::ALL
            .iter()
            .copied()
            .find(|k| k.native_format() == Some(self))
            .unwrap_or(BackendKind::Command)
    }

    /// The profile of the backend printing it.
    pub fn profile(self) -> &'static Profile {
        self.backend().profile()
    }
}

/// Whether `role` may make the tool call `t` (decoded from events in `format`): for a
/// reviewer only the format's read-only tools, for the Fixer also its write tools. The tool
/// gate aborts on any other call, whether or not the CLI ran it.
pub fn tool_permitted(format: EventFormat, role: Role, t: &ToolUse) -> bool {
    format.backend().permits(role, t)
}

/// The default tier → model map of `backend`.
pub fn default_models(backend: BackendKind) -> TierModels {
    let [haiku, sonnet, opus] = backend.profile().default_models;
    TierModels {
        haiku: haiku.into(),
        sonnet: sonnet.into(),
        opus: opus.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::Tier;
    use std::path::PathBuf;
    use std::time::Duration;

    fn invocation(agent: &AgentSpec, req: &DispatchRequest) -> Invocation {
        agent.backend.backend().invocation(agent, req)
    }

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
            base_url: None,
            api_key_env: None,
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
            hidden: vec![],
            out_dir: PathBuf::from("/tmp/x"),
            timeout: Duration::from_secs(1),
            grace: Duration::from_secs(1),
            output_cap: 1,
            max_budget_usd: None,
            price: None,
            search: true,
        }
    }

    /// Every value arev places in an argv — models, the fallback model, the role body, the
    /// prompt, paths — is one word no CLI reads as an option (docs/trust.md "Round five"):
    /// `--flag=<value>`, or after `--`. Each value here starts with `-` and names a flag the
    /// CLI has; none may stand as a word of its own, nor follow a flag that takes a value.
    #[test]
    fn no_value_in_any_backends_argv_reads_as_an_option() {
        const EVIL: &str = "EVIL";
        for b in [
            BackendKind::Claude,
            BackendKind::Codex,
            BackendKind::Gemini,
            BackendKind::OpenCode,
        ] {
            let mut a = agent(b);
            a.models = TierModels {
                haiku: "--attach=EVIL".into(),
                sonnet: "--yolo=EVIL".into(),
                opus: "-sEVIL".into(),
            };
            a.fallback_model = Some("--setting-sources=EVIL".into());
            for tier in [Tier::Haiku, Tier::Sonnet, Tier::Opus] {
                let mut r = req("--yolo EVIL prompt".into());
                r.system_prompt = "--setting-sources=project EVIL".into();
                r.tier = tier;
                r.cwd = PathBuf::from("/-EVIL/repo");
                r.read_dirs = vec![r.cwd.clone(), PathBuf::from("/-EVIL/runs/target")];
                r.out_dir = PathBuf::from("/-EVIL/runs/r1/judge");
                let args = invocation(&a, &r).args;
                let end = args.iter().position(|x| x == "--").unwrap_or(args.len());
                for (i, x) in args[..end].iter().enumerate() {
                    if !x.contains(EVIL) {
                        continue;
                    }
                    let ok = match x.split_once('=') {
                        // `--flag=value`: the flag is arev's, the value one word with it.
                        Some((flag, _)) if x.starts_with("--") => !flag.contains(EVIL),
                        // A word of its own that cannot be an option, after a flag arev chose.
                        _ => !x.starts_with('-') && i > 0 && !args[i - 1].contains(EVIL),
                    };
                    assert!(ok, "{b:?} {tier:?}: {x:?} in {args:?}");
                }
                let model = a.models.get(tier);
                assert!(
                    args[..end]
                        .iter()
                        .any(|x| x.starts_with("--model=") && x.ends_with(model)),
                    "{b:?}: {args:?}"
                );
            }
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
                i.args.iter().any(|a| a
                    .trim_start_matches("--prompt=")
                    .starts_with(&*small.prompt)),
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
        assert_eq!(
            i.args[0], "--prompt= ",
            "the role body is the system prompt"
        );
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
