//! Setting up an iterate run: its run dir and records, the worktree on a new branch seeded
//! with the user's uncommitted work, and the loop's fixed inputs (the TARGET arguments and the
//! user's cwd mapped into the worktree). A failed set-up leaves neither run dir nor worktree.

use super::{create_worktree, escaping_link, remove_worktree, seed_worktree, Worktree};
use crate::errors::ExpectedError;
use crate::output;
use crate::resolve::RunPlan;
use crate::round::Progress;
use crate::store::{add_git_exclude, create_run_dir, MetaIterate, Recorder};
use crate::target::{PinnedTarget, TargetKind};
use std::path::{Path, PathBuf};

/// `--max-iterations` when not given.
pub const DEFAULT_MAX_ITERATIONS: u32 = 5;

/// The iterate options of `arev run --iterate`.
#[derive(Debug, Clone)]
pub struct Options {
    /// The TARGET arguments as given.
    pub targets: Vec<String>,
    /// `--base`.
    pub base: Option<String>,
    pub max_iterations: Option<u32>,
    pub quality_critical: bool,
    pub verify: Option<String>,
}

/// Everything fixed for the loop.
pub struct Setup<'a> {
    pub plan: &'a RunPlan,
    /// The target as pinned in the user's repository.
    pub target: PinnedTarget,
    pub wt: Worktree,
    /// The snapshot commit of the user's uncommitted work, if any.
    pub snapshot: Option<String>,
    /// The user's cwd mapped into the worktree (targets and `--verify` run from there).
    pub wt_cwd: PathBuf,
    /// The TARGET arguments, absolute paths mapped into the worktree.
    pub args: Vec<String>,
    /// For diff targets: `--base`, else the branch's start commit.
    pub base: Option<String>,
    pub max_iterations: u32,
    pub quality_critical: bool,
    pub verify: Option<String>,
    pub progress: Progress,
}

/// Create the run dir and its records, the worktree and its branch; seed the worktree.
pub fn prepare<'a>(
    plan: &'a RunPlan,
    cwd: &Path,
    opts: Options,
) -> Result<(Setup<'a>, Recorder), ExpectedError> {
    let Some(target) = plan.target.clone() else {
        return Err(ExpectedError::Usage(
            "--iterate: there is nothing to review".into(),
        ));
    };
    let Some(git) = plan.git_common_dir.as_deref().filter(|_| target.in_repo) else {
        return Err(ExpectedError::Usage(
            "--iterate needs a git repository: the fixes go to a worktree on a new branch".into(),
        ));
    };
    // The worktree lives under `.arev/`, which must stay out of the user's `git status`.
    add_git_exclude(git).map_err(|e| ExpectedError::write(git.join("info/exclude"), e))?;
    let run = create_run_dir(&plan.runs_base, &plan.display)
        .map_err(|e| ExpectedError::write(&plan.runs_base, e))?;
    let mut rec = crate::review::begin(plan, &target, run, false)?;
    let wt = match create_worktree(&plan.root, rec.run().id.as_str()) {
        Ok(w) => w,
        Err(e) => {
            rec.discard();
            return Err(ExpectedError::Usage(e.to_string()));
        }
    };
    let snapshot = match seed_worktree(&plan.root, &wt) {
        Ok(s) => s,
        Err(e) => {
            remove_worktree(&plan.root, &wt);
            rec.discard();
            return Err(ExpectedError::Usage(e.to_string()));
        }
    };
    // A link the Fixer could write through to outside the worktree: no fixing here.
    let refused = match escaping_link(&wt) {
        Ok(None) => None,
        Ok(Some(link)) => Some(link.to_string()),
        Err(e) => Some(e.to_string()),
    };
    if let Some(why) = refused {
        remove_worktree(&plan.root, &wt);
        rec.discard();
        return Err(ExpectedError::Usage(why));
    }
    let max_iterations = opts.max_iterations.unwrap_or(DEFAULT_MAX_ITERATIONS);
    rec.record_iterate(MetaIterate {
        branch: wt.branch.clone(),
        worktree: wt.path.display().to_string(),
        base_commit: wt.base_commit.clone(),
        iterations_completed: 0,
        max_iterations,
    })?;
    for line in wt.instructions(&plan.root, &wt.base_commit).iter().take(1) {
        output::note(&format!("iterate: {line}"));
    }

    let cwd = cwd.canonicalize().unwrap_or_else(|_| cwd.to_path_buf());
    let rel = cwd.strip_prefix(&plan.root).unwrap_or(Path::new(""));
    let setup = Setup {
        plan,
        wt_cwd: wt.path.join(rel),
        args: opts
            .targets
            .iter()
            .map(|a| map_into(a, &plan.root, &wt.path))
            .collect(),
        base: (target.kind == TargetKind::Diff)
            .then(|| opts.base.clone().unwrap_or_else(|| wt.base_commit.clone())),
        max_iterations,
        quality_critical: opts.quality_critical,
        verify: opts.verify,
        progress: Progress::new(plan.outputs.quiet),
        target,
        wt,
        snapshot,
    };
    Ok((setup, rec))
}

/// An absolute TARGET path under the user's repository, mapped into the worktree.
fn map_into(arg: &str, root: &Path, wt: &Path) -> String {
    let p = Path::new(arg);
    if !p.is_absolute() {
        return arg.to_string();
    }
    let canon = p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    match canon.strip_prefix(root).or_else(|_| p.strip_prefix(root)) {
        Ok(rel) => wt.join(rel).display().to_string(),
        Err(_) => arg.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absolute_targets_are_mapped_into_the_worktree() {
        let root = Path::new("/nonexistent/repo");
        let wt = Path::new("/nonexistent/repo/.arev/worktrees/x");
        assert_eq!(
            map_into("/nonexistent/repo/src/lib.rs", root, wt),
            "/nonexistent/repo/.arev/worktrees/x/src/lib.rs"
        );
        assert_eq!(map_into("src/lib.rs", root, wt), "src/lib.rs");
        assert_eq!(map_into("diff", root, wt), "diff");
        assert_eq!(map_into("/elsewhere/a.rs", root, wt), "/elsewhere/a.rs");
    }
}
