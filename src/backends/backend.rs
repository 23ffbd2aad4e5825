//! The `Backend` trait every agent CLI module implements, and its static `Profile`.

use super::event::Decoder;
use super::floor::Refused;
use super::home::ReviewerHome;
use super::spec::{AgentSpec, DispatchRequest, Invocation, ModelPrice, Wrap};
use super::view::ViewError;
use crate::records::{Role, ToolUse};
use std::ffi::OsString;
use std::path::PathBuf;

/// The npm package of a CLI and the version arev is tested with (what `.ci/run` installs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Npm {
    pub package: &'static str,
    pub version: &'static str,
}

/// Where a CLI keeps its login: `$<env_dir>` if set, else `~/<home_dir>`, then `file`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoginFile {
    pub env_dir: Option<&'static str>,
    pub home_dir: &'static str,
    pub file: &'static str,
}

/// What `arev doctor` looks for to say a CLI can authenticate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Credentials {
    /// Environment variables the CLI reads credentials (or a cloud route) from; the first
    /// is the one a failed authentication names.
    pub vars: &'static [&'static str],
    /// Its login file, if it has one.
    pub login: Option<LoginFile>,
    /// The fix, one line.
    pub fix: &'static str,
    /// A login may live in the macOS keychain, which arev does not read.
    pub keychain_on_macos: bool,
}

/// The argv floor of a CLI (docs/trust.md): flags `extra_args` may never carry.
#[derive(Debug, Clone, Copy)]
pub struct Floor {
    pub refused: &'static [Refused],
    /// The keys a `-c`/`--config key=value` may set (Codex); `None`: the flag is not
    /// special.
    pub config_keys: Option<&'static [&'static str]>,
    /// Every short flag takes a value (clap), so only the first letter of `-xyz` is a flag;
    /// otherwise short booleans group (`-dy`) and every letter counts.
    pub short_flags_take_values: bool,
}

/// What config, preflight and doctor know of a CLI without running it.
#[derive(Debug, Clone, Copy)]
pub struct Profile {
    /// Its name in the configuration (`backend = "claude"`).
    pub name: &'static str,
    /// The CLI's npm package and tested version (`None` for `command`).
    pub npm: Option<Npm>,
    /// Its credentials (`None`: arev cannot know what it needs).
    pub credentials: Option<Credentials>,
    /// Environment variable prefixes of its vendor it may receive (besides the allowlist
    /// every agent gets).
    pub env_prefixes: &'static [&'static str],
    /// Default model per tier: haiku, sonnet, opus.
    pub default_models: [&'static str; 3],
    /// Built-in list prices by model family (a substring of the model name), the first
    /// the dearest and the price of an unknown model of this CLI; empty: a model without a
    /// `[prices]` entry cannot be priced.
    pub list_prices: &'static [(&'static str, ModelPrice)],
    /// Whether its result reports the cost itself (else its usage is priced).
    pub reports_cost: bool,
    /// The argv floor (`None` for `command`: an arbitrary program, argv not interpreted).
    pub floor: Option<Floor>,
    /// How the user's personal context (memory files, instructions) is kept out.
    pub personal_context: &'static str,
}

/// One agent CLI: its profile, how to start it, and how to read what it prints.
pub trait Backend: Send + Sync + 'static {
    /// Its static profile.
    fn profile(&self) -> &'static Profile;

    /// The argv, stdin, environment and files of one dispatch of `req` by `agent`.
    fn invocation(&self, agent: &AgentSpec, req: &DispatchRequest) -> Invocation;

    /// The program the CLI is started under for `req` (None: started itself). OpenCode: a
    /// filesystem view without the repository's plugins nor the paths outside the context
    /// scope; Codex and Gemini: one without those paths; Claude Code: the same while a path
    /// of them has a name no rule can hold (`backends/view.rs`). An error: the
    /// dispatch does not start.
    fn wrap(&self, _agent: &AgentSpec, _req: &DispatchRequest) -> Result<Option<Wrap>, ViewError> {
        Ok(None)
    }

    /// Whether the program of `wrap` can be made and started here (checked before a run,
    /// and by `arev doctor`); the error names the fix.
    fn check_wrap(&self) -> Result<(), ViewError> {
        Ok(())
    }

    /// Whether the view it runs in while the paths outside the context scope hold a name no
    /// permission rule can hold (`view::unnamed`) can be made here: checked before a run of
    /// such a repository; the error names the fix. Nothing by default: a CLI that always
    /// runs in a view has it checked by [`Backend::check_wrap`]; Claude Code runs in one only
    /// then.
    fn check_unnamed_view(&self) -> Result<(), ViewError> {
        Ok(())
    }

    /// A fresh decoder of its event stream; `model` completes fault messages.
    fn decoder(&self, model: &str) -> Box<dyn Decoder>;

    /// Whether `role` may make the tool call `t` (decoded from its stream).
    fn permits(&self, role: Role, t: &ToolUse) -> bool;

    /// The environment prefixes it gets, given arev's own environment (Claude Code's cloud
    /// routes switch on more).
    fn env_prefixes(&self, _parent_env: &[(OsString, OsString)]) -> Vec<&'static str> {
        self.profile().env_prefixes.to_vec()
    }

    /// The arguments that point it at a self-hosted endpoint `base_url`, its key in the
    /// variable `key_var` (docs/self-hosted.md); `None`: it cannot use one.
    fn endpoint_args(&self, _base_url: &str, _key_var: Option<&str>) -> Option<Vec<String>> {
        None
    }

    /// The first of `args` (an agent's `extra_args`) that chooses the host it sends
    /// requests to, which only trusted config may do (docs/trust.md).
    fn endpoint_in_args(&self, _args: &[String]) -> Option<String> {
        None
    }

    /// A private home for one dispatch that keeps the user's personal context out (None:
    /// the CLI needs none).
    fn private_home(
        &self,
        _parent_env: &[(OsString, OsString)],
    ) -> std::io::Result<Option<ReviewerHome>> {
        Ok(None)
    }
}

impl Credentials {
    /// The login file, reading `var` for its directory.
    pub fn login_file(&self, var: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
        let l = self.login?;
        l.env_dir
            .and_then(&var)
            .map(PathBuf::from)
            .or_else(|| var("HOME").map(|h| PathBuf::from(h).join(l.home_dir)))
            .map(|d| d.join(l.file))
    }
}
