//! What changed in the worktree, undoing changes outside ALLOWED_FILES (tracked: restored
//! from the worktree's HEAD; untracked: deleted), and committing as `arev <arev@localhost>`.

use super::{RevertAction, RevertedPath};
use git2::build::CheckoutBuilder;
use git2::{IndexAddOption, Repository, Signature, Status, StatusOptions};
use std::path::Path;

/// A git operation that failed, as one line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct GitError(pub String);

pub(crate) fn git_err(what: &str, e: &git2::Error) -> GitError {
    GitError(format!("cannot {what}: {}", e.message()))
}

/// The fixed identity of arev's commits.
pub const AUTHOR_NAME: &str = "arev";
pub const AUTHOR_EMAIL: &str = "arev@localhost";

/// One changed path in the worktree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// Repository-relative, `/`-separated.
    pub path: String,
    /// Known to HEAD (modified, deleted, type-changed) as opposed to new.
    pub tracked: bool,
}

/// Paths whose working-tree content differs from HEAD (ignored files excluded), sorted.
pub fn changed_paths(repo: &Repository) -> Result<Vec<Change>, GitError> {
    let mut opts = StatusOptions::new();
    opts.include_untracked(true)
        .recurse_untracked_dirs(true)
        .include_ignored(false)
        .exclude_submodules(true);
    let statuses = repo
        .statuses(Some(&mut opts))
        .map_err(|e| git_err("read the worktree's status", &e))?;
    let mut out: Vec<Change> = statuses
        .iter()
        .filter(|s| s.status() != Status::CURRENT && !s.status().is_ignored())
        .filter_map(|s| {
            let path = s.path()?.to_string();
            let st = s.status();
            let tracked = !st.is_wt_new() || st.is_index_new();
            Some(Change { path, tracked })
        })
        .collect();
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out.dedup_by(|a, b| a.path == b.path);
    Ok(out)
}

/// Undo one change: restore a tracked path from HEAD, delete an untracked one.
fn revert(repo: &Repository, c: &Change) -> Result<RevertAction, GitError> {
    if c.tracked {
        let mut co = CheckoutBuilder::new();
        co.force().disable_pathspec_match(true).path(&c.path);
        repo.checkout_head(Some(&mut co))
            .map_err(|e| git_err(&format!("restore {}", c.path), &e))?;
        Ok(RevertAction::Restored)
    } else {
        let root = repo
            .workdir()
            .ok_or_else(|| GitError("the worktree has no working directory".into()))?;
        let p = root.join(&c.path);
        std::fs::remove_file(&p)
            .map_err(|e| GitError(format!("cannot delete {}: {e}", p.display())))?;
        remove_empty_parents(root, &p);
        Ok(RevertAction::Deleted)
    }
}

fn remove_empty_parents(root: &Path, file: &Path) {
    let mut dir = file.parent();
    while let Some(d) = dir {
        if d == root || !d.starts_with(root) || std::fs::remove_dir(d).is_err() {
            break;
        }
        dir = d.parent();
    }
}

/// Keep the changes to allowed paths, revert the others. Returns (kept paths, reverted).
pub fn revert_outside(
    repo: &Repository,
    changes: &[Change],
    allowed: impl Fn(&str) -> bool,
) -> Result<(Vec<String>, Vec<RevertedPath>), GitError> {
    let mut kept = vec![];
    let mut reverted = vec![];
    for c in changes {
        if allowed(&c.path) {
            kept.push(c.path.clone());
        } else {
            let action = revert(repo, c)?;
            reverted.push(RevertedPath {
                path: c.path.clone(),
                action,
            });
        }
    }
    Ok((kept, reverted))
}

/// Revert every change (ignored files are kept). Returns the paths discarded.
pub fn discard_all(repo: &Repository) -> Result<Vec<String>, GitError> {
    let changes = changed_paths(repo)?;
    let (_, reverted) = revert_outside(repo, &changes, |_| false)?;
    Ok(reverted.into_iter().map(|r| r.path).collect())
}

/// Stage every change (respecting ignore rules) and commit it on HEAD as arev.
pub fn commit_all(repo: &Repository, message: &str) -> Result<String, GitError> {
    let mut index = repo.index().map_err(|e| git_err("open the index", &e))?;
    index
        .add_all(["*"], IndexAddOption::DEFAULT, None)
        .and_then(|()| index.update_all(["*"], None))
        .and_then(|()| index.write())
        .map_err(|e| git_err("stage the changes", &e))?;
    let tree_id = index
        .write_tree()
        .map_err(|e| git_err("write the tree", &e))?;
    let tree = repo
        .find_tree(tree_id)
        .map_err(|e| git_err("read the tree", &e))?;
    let parent = repo
        .head()
        .and_then(|h| h.peel_to_commit())
        .map_err(|e| git_err("read the worktree's HEAD", &e))?;
    let sig = Signature::now(AUTHOR_NAME, AUTHOR_EMAIL).map_err(|e| git_err("sign", &e))?;
    let id = repo
        .commit(Some("HEAD"), &sig, &sig, message, &tree, &[&parent])
        .map_err(|e| git_err("commit", &e))?;
    Ok(id.to_string())
}

/// `arev: fix F1, F3 (iteration 2)`.
pub fn commit_message(applied: &[String], iteration: u32) -> String {
    if applied.is_empty() {
        format!("arev: changes by the Fixer (iteration {iteration})")
    } else {
        format!("arev: fix {} (iteration {iteration})", applied.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo() -> (tempfile::TempDir, Repository) {
        let d = tempfile::tempdir().unwrap();
        let r = Repository::init(d.path()).unwrap();
        std::fs::create_dir_all(d.path().join("src")).unwrap();
        std::fs::write(d.path().join("src/lib.rs"), "a\n").unwrap();
        std::fs::write(d.path().join("README"), "r\n").unwrap();
        {
            let mut i = r.index().unwrap();
            i.add_all(["*"], IndexAddOption::DEFAULT, None).unwrap();
            i.write().unwrap();
            let t = r.find_tree(i.write_tree().unwrap()).unwrap();
            let s = Signature::now("t", "t@t").unwrap();
            r.commit(Some("HEAD"), &s, &s, "init", &t, &[]).unwrap();
        }
        (d, r)
    }

    #[test]
    fn reverts_outside_and_commits_inside() {
        let (d, r) = repo();
        std::fs::write(d.path().join("src/lib.rs"), "b\n").unwrap();
        std::fs::write(d.path().join("README"), "changed\n").unwrap();
        std::fs::create_dir_all(d.path().join("new/deep")).unwrap();
        std::fs::write(d.path().join("new/deep/x.rs"), "x\n").unwrap();
        let ch = changed_paths(&r).unwrap();
        let paths: Vec<_> = ch.iter().map(|c| (c.path.as_str(), c.tracked)).collect();
        assert_eq!(
            paths,
            [
                ("README", true),
                ("new/deep/x.rs", false),
                ("src/lib.rs", true)
            ]
        );
        let (kept, reverted) = revert_outside(&r, &ch, |p| p == "src/lib.rs").unwrap();
        assert_eq!(kept, ["src/lib.rs"]);
        assert_eq!(
            reverted,
            [
                RevertedPath {
                    path: "README".into(),
                    action: RevertAction::Restored
                },
                RevertedPath {
                    path: "new/deep/x.rs".into(),
                    action: RevertAction::Deleted
                }
            ]
        );
        assert_eq!(
            std::fs::read_to_string(d.path().join("README")).unwrap(),
            "r\n"
        );
        assert!(!d.path().join("new").exists(), "empty dirs removed");
        let sha = commit_all(&r, &commit_message(&["F1".into(), "F3".into()], 2)).unwrap();
        let c = r.head().unwrap().peel_to_commit().unwrap();
        assert_eq!(c.id().to_string(), sha);
        assert_eq!(c.message(), Some("arev: fix F1, F3 (iteration 2)"));
        assert_eq!(c.author().email(), Some("arev@localhost"));
        assert!(changed_paths(&r).unwrap().is_empty());
        std::fs::write(d.path().join("src/lib.rs"), "c\n").unwrap();
        std::fs::write(d.path().join("out.txt"), "o\n").unwrap();
        assert_eq!(discard_all(&r).unwrap(), ["out.txt", "src/lib.rs"]);
        assert_eq!(
            std::fs::read_to_string(d.path().join("src/lib.rs")).unwrap(),
            "b\n"
        );
    }
}
