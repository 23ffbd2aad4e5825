//! Iterate mode (docs/architecture.md §13): the set-up (worktree, branch), the loop of
//! review → fix → commit → verify, its pure stop decisions, and the iterate report.
mod changes;
mod decide;
mod driver;
mod finish;
mod fix;
mod prove;
mod scope;
mod setup;
mod verify;
mod worktree;

pub use crate::records::iterate::*;
pub use crate::records::stop::IterateStop;
pub use changes::{
    changed_paths, commit_all, commit_message, discard_all, revert_outside, Change, GitError,
    AUTHOR_EMAIL, AUTHOR_NAME,
};
pub use decide::{after_fix, after_review, FixFacts, ReviewFacts, Verdict};
pub use driver::{run_loop, End, Outcome};
pub use finish::{finish, fixes_from, PATCH_FILE};
pub use fix::FixerRuling;
pub use scope::{keep_to_rulings, FIX_CONTEXT_LINES};
pub use setup::{prepare, Options, Setup, DEFAULT_MAX_ITERATIONS};
pub use verify::{run_verify, VerifyOutcome};
pub use worktree::{
    create as create_worktree, escaping_link, escaping_working_link, fixes_patch, link_gate,
    remove as remove_worktree, seed as seed_worktree, shell_quote, EscapingLink, LinkWalkError,
    Worktree, BRANCH_PREFIX, MAX_WORKING_ENTRIES,
};
