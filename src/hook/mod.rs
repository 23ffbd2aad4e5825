//! Claude Code hooks (docs/architecture.md §14): `arev hook prompt` (opt-in, baseline
//! snapshot, intent) and `arev hook stop` (review the session's own changes; advisor
//! semantics and circuit breakers). JSON on stdin, JSON on stdout, always exit 0: every
//! internal error fails open with a visible `systemMessage`.
mod decide;
mod env;
mod error;
mod input;
mod intent;
mod lock;
mod message;
mod prompt;
mod review;
mod state;
mod stop;

pub use decide::{
    advance, decide, BlockerWhy, Chain, Decision, FindingBrief, ReviewOutcome, SilentWhy,
    StopFacts, Verdict,
};
pub use env::HookEnv;
pub use error::HookError;
pub use message::{stop_output, system_message, SessionAsides};
pub use prompt::{is_generated, parse_prompt, prompt, PromptCommand};
pub use review::{outcome_of, verdict_of};
pub use state::{find_root, SessionState, SessionStore};
pub use stop::stop;
