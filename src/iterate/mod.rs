//! Iterate mode (docs/architecture.md §13): the isolated worktree, change detection and
//! reverts, the verify command, and the outer loop's pure stop decision; `app::iterate`
//! drives the loop.
mod changes;
mod decide;
mod model;
mod render;
mod verify;
mod worktree;

pub use changes::{
    changed_paths, commit_all, commit_message, discard_all, revert_outside, Change, GitError,
    AUTHOR_EMAIL, AUTHOR_NAME,
};
pub use decide::{after_fix, after_review, FixFacts, ReviewFacts, Verdict};
pub use model::*;
pub use render::{markdown_section, text_section};
pub use verify::{run_verify, VerifyOutcome};
pub use worktree::{
    create as create_worktree, remove as remove_worktree, seed as seed_worktree, Worktree,
    BRANCH_PREFIX,
};
