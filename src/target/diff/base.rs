//! Where a diff starts: HEAD's tree, a merge base's, or a snapshot tree; the index file's
//! key; and libgit2's errors as target errors.

use crate::target::statkey::StatKey;
use crate::target::TargetError;
use git2::{ErrorCode, Oid, Repository, Tree};

/// Where a diff starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DiffBase<'a> {
    /// HEAD's tree, or merge-base(REV, HEAD)'s with `--base REV`; the new side is the
    /// working tree with the index and untracked files, with the staged-diff fallback.
    Head(Option<&'a str>),
    /// A tree object (`--base-tree`, a working-tree snapshot); the new side is a snapshot of
    /// the working tree now (no staged fallback: the snapshot holds the index's content).
    Tree(&'a str),
}

/// A libgit2 error as a target error.
pub(super) fn git_err(e: &git2::Error) -> TargetError {
    TargetError::Git(e.message().to_owned())
}

/// The tree the diff starts from: HEAD's, merge-base(REV, HEAD)'s with a base, or None
/// (the empty tree) on an unborn branch.
fn base_tree<'r>(
    repo: &'r Repository,
    base: Option<&str>,
) -> Result<Option<Tree<'r>>, TargetError> {
    let head = match repo.head() {
        Ok(h) => Some(h.peel_to_commit().map_err(|e| git_err(&e))?),
        Err(e) if matches!(e.code(), ErrorCode::UnbornBranch | ErrorCode::NotFound) => None,
        Err(e) => return Err(git_err(&e)),
    };
    let Some(rev) = base else {
        return head.map(|c| c.tree().map_err(|e| git_err(&e))).transpose();
    };
    let bad = |message: String| TargetError::BadBase {
        rev: rev.to_owned(),
        message,
    };
    let base_commit = repo
        .revparse_single(rev)
        .and_then(|o| o.peel_to_commit())
        .map_err(|e| bad(e.message().to_owned()))?;
    let head = head.ok_or_else(|| bad("HEAD has no commits yet".to_owned()))?;
    let mb = repo
        .merge_base(base_commit.id(), head.id())
        .map_err(|e| bad(format!("no merge base with HEAD: {}", e.message())))?;
    let tree = repo
        .find_commit(mb)
        .and_then(|c| c.tree())
        .map_err(|e| git_err(&e))?;
    Ok(Some(tree))
}

/// The tree a diff starts from (None: the empty tree, an unborn branch).
pub(super) fn start_tree<'r>(
    repo: &'r Repository,
    base: DiffBase<'_>,
) -> Result<Option<Tree<'r>>, TargetError> {
    match base {
        DiffBase::Head(rev) => base_tree(repo, rev),
        DiffBase::Tree(oid) => snapshot_base(repo, oid).map(Some),
    }
}

/// The tree `oid` names, or why it cannot be used as a diff base.
fn snapshot_base<'r>(repo: &'r Repository, oid: &str) -> Result<Tree<'r>, TargetError> {
    let bad = |message: &str| TargetError::BadBaseTree {
        tree: oid.to_owned(),
        message: message.to_owned(),
    };
    let id = Oid::from_str(oid).map_err(|_| bad("not an object id"))?;
    repo.find_tree(id)
        .map_err(|_| bad("no such tree in the repository"))
}

/// The index file's key (None when there is none).
pub(super) fn index_key(repo: &Repository) -> Option<StatKey> {
    StatKey::lstat(&repo.path().join("index")).ok().flatten()
}
