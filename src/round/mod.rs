//! Rounds (docs/architecture.md §11): prompts, the Enthusiast∥Adversary→Judge driver, and
//! the stop decision.
mod blocks;
mod cites;
mod context;
mod debunked;
mod decide;
mod driver;
mod finders;
mod fixer;
mod map;
mod matcher;
mod meter;
mod progress;
mod prompt;
mod prover;
mod retry;
mod role;
mod state;
mod step;

pub use crate::records::round::*;
pub use crate::records::stop::StopReason;
pub use decide::{cluster_set, decide, same_rulings, DecideInput, Decision, RoundFacts};
pub use driver::{run_review, Judged, ReviewEnd, ReviewResult};
pub use fixer::{run_fixer, FixerEnd, FixerRun};
pub use map::CONTEXT_MAP_FILE;
pub use matcher::{matcher_first_line, run_matcher, MatcherEnd, MatcherJob, MatcherRun};
pub use progress::Progress;
pub use prompt::{first_line, prover_first_line, render, strip_frontmatter, Assets, PromptVars};
pub use prover::{run_prover, ProofMeter, ProverEnd, ProverJob, ProverRun};
