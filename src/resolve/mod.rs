//! Resolve: arguments + config + pinned target → one immutable `RunPlan`; its agents → a `Panel`.
mod baseline;
mod context;
mod error;
mod intent;
mod memory;
mod outputs;
mod panel;
mod plan;
mod price;
mod prove;
mod repo_inputs;
pub mod suppressions;

pub use context::{
    load_rules, match_paths, resolve_context, CommitTree, ContextError, MatchedPaths, NoFiles,
    RepoFiles, ReviewContext, RulesFile, Worktree, RULES_CAP,
};
pub use error::{
    AgentSpecError, DestinationProblem, FixFirst, InputProblem, OutputError, RepoFileReadError,
    RepoInputError, SuppressionsError,
};
pub use intent::INTENT_MAX_BYTES;
pub use memory::{cache_dir, MemoryPlan};
pub use outputs::Outputs;
pub use panel::{agent_spec, Panel};
pub(crate) use plan::discover_root;
pub use plan::{
    resolve_repo_inputs, resolve_run, resolve_unpinned, with_context, AgentRef, PlanError, RunPlan,
};
pub use price::price_for;
pub use prove::{resolve_prove, ProvePlan};
pub use repo_inputs::{RepoInputs, CONFIG_FILES, OVERRIDE_DIRS};
