//! The `<context_map>` block of every prompt (docs/architecture.md §5.3): computed once per
//! review, before round 1, from the pinned target and the context scope, and kept in the run
//! dir as `target/context-map.txt`; every later dispatch of the run (each role, each round,
//! the Fixer, the Prover) reads that same text back, so every prompt carries identical bytes.

use crate::resolve::RunPlan;
use crate::store::{write_record, RunDir};
use crate::target::{ContextMode, PinnedTarget};

/// The map's file under the run dir's `target/`.
pub const CONTEXT_MAP_FILE: &str = "context-map.txt";

/// The run's `<context_map>` block ("" when the review has no map: no context scope, or a
/// target that defines no symbol).
pub(super) fn context_map(plan: &RunPlan, target: &PinnedTarget, run: &RunDir) -> String {
    let path = run.target_dir().join(CONTEXT_MAP_FILE);
    if let Ok(text) = std::fs::read_to_string(&path) {
        return text;
    }
    let Some(files) = scope_files(target) else {
        return String::new();
    };
    let map = crate::target::map::for_target(target, &files, plan.settings.review.max_file_bytes);
    if !map.text.is_empty() {
        if let Err(e) = write_record(&path, map.text.as_bytes()) {
            tracing::warn!("cannot write {}: {e}", path.display());
        }
    }
    map.text
}

/// The files of the context scope, sorted (None: the review reads the target only —
/// `[review] context = "target"`, or no scope was built).
fn scope_files(target: &PinnedTarget) -> Option<Vec<&str>> {
    let scope = target.context.as_deref()?;
    (scope.mode() == ContextMode::Tree).then(|| scope.files().collect())
}
