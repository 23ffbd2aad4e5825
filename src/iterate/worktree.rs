//! The isolated worktree: branch `arev/iterate/<run-id>` from HEAD, checked out with git2 at
//! `<repo>/.arev/worktrees/<run-id>`, seeded with the user's uncommitted and untracked
//! changes. Only the new branch ref and git's worktree admin dir are created in the user's
//! repository; its working tree, index, HEAD and other branches are never written.

use super::changes::{commit_all, git_err, GitError};
use git2::{
    ApplyLocation, BranchType, Diff, DiffFormat, DiffOptions, Repository, WorktreeAddOptions,
};
use std::path::{Path, PathBuf};

/// Prefix of every branch arev creates.
pub const BRANCH_PREFIX: &str = "arev/iterate/";

/// A created worktree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Worktree {
    /// Absolute path of the worktree's root.
    pub path: PathBuf,
    /// `arev/iterate/<run-id>`.
    pub branch: String,
    /// git's name for the worktree (its admin dir is `.git/worktrees/<name>`).
    pub name: String,
    /// The commit the branch starts from (the user's HEAD).
    pub base_commit: String,
}

impl Worktree {
    pub fn open(&self) -> Result<Repository, GitError> {
        Repository::open(&self.path).map_err(|e| git_err("open the worktree", &e))
    }

    /// How to inspect and remove it (printed at the end, also after an abort). `from` is
    /// where the fixes start: the snapshot commit of the user's work, else the base commit.
    pub fn instructions(&self, user_root: &Path, from: &str) -> Vec<String> {
        vec![
            format!(
                "branch {} (worktree {}) — never merged",
                self.branch,
                self.path.display()
            ),
            format!("see the fixes alone: git diff {from} {}", self.branch),
            format!(
                "remove it: git -C {} worktree remove --force {} && git -C {} branch -D {}",
                shell_quote(&user_root.display().to_string()),
                shell_quote(&self.path.display().to_string()),
                shell_quote(&user_root.display().to_string()),
                self.branch
            ),
        ]
    }
}

/// The fixes alone: the diff from `from` (the snapshot of the user's work, else the base
/// commit) to the branch tip, as `git diff --binary` prints it, so `git apply` takes it on
/// the user's working tree. Empty when the branch holds no fix.
pub fn fixes_patch(wt: &Worktree, from: &str) -> Result<Vec<u8>, GitError> {
    let repo = wt.open()?;
    let tree_of = |rev: &str| {
        repo.revparse_single(rev)
            .and_then(|o| o.peel_to_tree())
            .map_err(|e| git_err(&format!("read {rev}"), &e))
    };
    let (old, new) = (tree_of(from)?, tree_of("HEAD")?);
    let mut opts = DiffOptions::new();
    opts.show_binary(true);
    let diff = repo
        .diff_tree_to_tree(Some(&old), Some(&new), Some(&mut opts))
        .map_err(|e| git_err("diff the fixes", &e))?;
    let mut text = Vec::new();
    diff.print(DiffFormat::Patch, |_, _, line| {
        if matches!(line.origin(), '+' | '-' | ' ') {
            text.push(line.origin() as u8);
        }
        text.extend_from_slice(line.content());
        true
    })
    .map_err(|e| git_err("render the fixes", &e))?;
    Ok(text)
}

pub fn shell_quote(s: &str) -> String {
    if s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+=:,@".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// Create branch `arev/iterate/<run_id>` at HEAD and check it out in a new worktree at
/// `<root>/.arev/worktrees/<run_id>`.
pub fn create(root: &Path, run_id: &str) -> Result<Worktree, GitError> {
    let repo = Repository::open(root).map_err(|e| git_err("open the repository", &e))?;
    let head = repo.head().and_then(|h| h.peel_to_commit()).map_err(|e| {
        GitError(format!(
            "--iterate needs a commit to branch from (HEAD: {})",
            e.message()
        ))
    })?;
    let dir = root.join(".arev").join("worktrees");
    std::fs::create_dir_all(&dir)
        .map_err(|e| GitError(format!("cannot create {}: {e}", dir.display())))?;
    let path = dir.join(run_id);
    let branch_name = format!("{BRANCH_PREFIX}{run_id}");
    let branch = repo
        .branch(&branch_name, &head, false)
        .map_err(|e| git_err(&format!("create branch {branch_name}"), &e))?;
    let reference = branch.into_reference();
    let mut opts = WorktreeAddOptions::new();
    opts.reference(Some(&reference));
    if let Err(e) = repo.worktree(run_id, &path, Some(&opts)) {
        // Leave nothing half-made behind: the branch is ours and still unused.
        if let Ok(mut b) = repo.find_branch(&branch_name, BranchType::Local) {
            let _ = b.delete();
        }
        return Err(git_err(&format!("add the worktree {}", path.display()), &e));
    }
    let path = path.canonicalize().unwrap_or(path);
    Ok(Worktree {
        path,
        branch: branch_name,
        name: run_id.to_string(),
        base_commit: head.id().to_string(),
    })
}

/// Bring the user's uncommitted work into the worktree: the diff of HEAD against the
/// working tree (index and untracked, non-ignored files included, binary content too) is
/// applied there and committed as one snapshot commit. None when there is nothing to bring.
pub fn seed(root: &Path, wt: &Worktree) -> Result<Option<String>, GitError> {
    let user = Repository::open(root).map_err(|e| git_err("open the repository", &e))?;
    let tree = user
        .head()
        .and_then(|h| h.peel_to_tree())
        .map_err(|e| git_err("read HEAD", &e))?;
    let mut opts = DiffOptions::new();
    opts.include_untracked(true)
        .recurse_untracked_dirs(true)
        .show_untracked_content(true)
        .show_binary(true);
    let diff = user
        .diff_tree_to_workdir_with_index(Some(&tree), Some(&mut opts))
        .map_err(|e| git_err("diff the working tree", &e))?;
    if diff.deltas().len() == 0 {
        return Ok(None);
    }
    // Through patch text (as `git diff --binary` prints it): untracked files become
    // new-file hunks, binary files carry their content.
    let mut text = Vec::new();
    diff.print(DiffFormat::Patch, |_, _, line| {
        if matches!(line.origin(), '+' | '-' | ' ') {
            text.push(line.origin() as u8);
        }
        text.extend_from_slice(line.content());
        true
    })
    .map_err(|e| git_err("render your uncommitted changes", &e))?;
    let patch = Diff::from_buffer(&text).map_err(|e| git_err("parse the patch", &e))?;
    let repo = wt.open()?;
    repo.apply(&patch, ApplyLocation::WorkDir, None)
        .map_err(|e| git_err("apply your uncommitted changes in the worktree", &e))?;
    let sha = commit_all(
        &repo,
        "arev: snapshot of the uncommitted and untracked changes under review",
    )?;
    Ok(Some(sha))
}

/// Undo `create` after a failure before anything was reviewed: delete the worktree's files,
/// prune git's admin dir for it, delete the branch. Best effort.
pub fn remove(root: &Path, wt: &Worktree) {
    let _ = std::fs::remove_dir_all(&wt.path);
    let Ok(repo) = Repository::open(root) else {
        return;
    };
    if let Ok(w) = repo.find_worktree(&wt.name) {
        let mut opts = git2::WorktreePruneOptions::new();
        opts.valid(true).working_tree(true);
        let _ = w.prune(Some(&mut opts));
    }
    let branch = repo.find_branch(&wt.branch, BranchType::Local);
    if let Ok(mut b) = branch {
        let _ = b.delete();
    }
}
