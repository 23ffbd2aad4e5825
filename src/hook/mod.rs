//! Claude Code hooks (docs/architecture.md): `arev hook prompt` (opt-in, baseline snapshot,
//! intent) and `arev hook stop` (review the session's own changes; advisor semantics and
//! circuit breakers). JSON on stdin, JSON on
//! stdout, always exit 0: every internal error fails open with a visible `systemMessage`.
mod decide;
mod input;
mod intent;
mod message;
mod prompt;
mod review;
mod state;
mod stop;

pub use decide::{
    advance, decide, BlockerWhy, Chain, Decision, FindingBrief, ReviewOutcome, SilentWhy,
    StopFacts, Verdict,
};
pub use message::{stop_output, system_message, SessionAsides};
pub use prompt::{is_generated, parse_prompt, prompt, PromptCommand};
pub use review::{outcome_of, verdict_of};
pub use state::{find_root, SessionState, SessionStore};
pub use stop::stop;

use std::path::PathBuf;

/// The process environment a hook depends on.
#[derive(Debug, Clone)]
pub struct HookEnv {
    /// `AREV_DISABLE=1`: every hook is a no-op.
    pub disabled: bool,
    /// Fallback when the input has no `cwd`.
    pub cwd: PathBuf,
}

impl HookEnv {
    pub fn from_process() -> Self {
        Self {
            disabled: std::env::var_os("AREV_DISABLE").is_some_and(|v| v == "1"),
            cwd: std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
        }
    }
}
