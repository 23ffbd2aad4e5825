//! The isolated worktree: branch `arev/iterate/<run-id>` from HEAD, checked out with git2 at
//! `<repo>/.arev/worktrees/<run-id>`, seeded with the user's uncommitted and untracked
//! changes. Only the new branch ref and git's worktree admin dir are created in the user's
//! repository; its working tree, index, HEAD and other branches are never written.

use super::changes::{commit_all, git_err, GitError};
use crate::findings::Role;
use crate::gates::Abort;
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

/// A symbolic link of the worktree (committed, or brought by `seed`) that resolves outside
/// it: its path in the worktree and where it leads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "--iterate: `{link}` is a symbolic link to {} (outside the worktree): a Fixer's write \
     through it would land there, so arev does not fix this tree; remove or repoint the \
     link (a link inside the repository is fine), or review it without --iterate \
     (docs/trust.md)",
    to.display()
)]
pub struct EscapingLink {
    pub link: String,
    pub to: PathBuf,
}

/// The first link of the worktree's HEAD tree (every link it checked out) that leads outside
/// the worktree, followed as the kernel would — through other links, dangling or not.
pub fn escaping_link(wt: &Worktree) -> Result<Option<EscapingLink>, GitError> {
    let repo = wt.open()?;
    let tree = repo
        .head()
        .and_then(|h| h.peel_to_tree())
        .map_err(|e| git_err("read the worktree's HEAD", &e))?;
    let root = wt.path.canonicalize().unwrap_or_else(|_| wt.path.clone());
    let mut links = vec![];
    tree.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
        if entry.filemode() == i32::from(git2::FileMode::Link) {
            if let Some(name) = entry.name() {
                links.push(format!("{dir}{name}"));
            }
        }
        git2::TreeWalkResult::Ok
    })
    .map_err(|e| git_err("list the worktree's links", &e))?;
    Ok(links
        .into_iter()
        .find_map(|link| leads_out(&root, Path::new(&link))))
}

/// The link at `link` (relative to the canonical `root`) as an [`EscapingLink`] when a write
/// through it would land outside `root`.
fn leads_out(root: &Path, link: &Path) -> Option<EscapingLink> {
    let to = leads_to(&root.join(link));
    // A `..` left in it could not be resolved: it may lead anywhere.
    let unresolved = to
        .components()
        .any(|c| c == std::path::Component::ParentDir);
    (unresolved || !to.starts_with(root)).then(|| EscapingLink {
        link: link.to_string_lossy().into_owned(),
        to,
    })
}

/// The most directory entries [`escaping_working_link`] looks at before it gives up.
pub const MAX_WORKING_ENTRIES: usize = 1_000_000;

/// Why the worktree's working files could not be checked for links leading outside.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LinkWalkError {
    #[error("the worktree holds more than {0} entries")]
    TooMany(usize),
    #[error("cannot list {path}: {error}")]
    Unreadable { path: String, error: String },
}

/// The first symbolic link (by path) among the working files under `root` — tracked,
/// untracked or ignored, whatever git knows of them — that leads outside `root`, followed as
/// [`escaping_link`] follows one. The walk follows no link, does not descend into the root's
/// `.git` directory (a `.git` that is a link is checked like any link), and stops at
/// `max_entries` entries: past it, or at a directory it cannot list, the tree is not known
/// to be free of such a link, which is an error.
pub fn escaping_working_link(
    root: &Path,
    max_entries: usize,
) -> Result<Option<EscapingLink>, LinkWalkError> {
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let unreadable = |rel: &Path, e: std::io::Error| LinkWalkError::Unreadable {
        path: root.join(rel).display().to_string(),
        error: e.to_string(),
    };
    let mut links: Vec<PathBuf> = vec![];
    let mut dirs = vec![PathBuf::new()];
    let mut seen = 0usize;
    while let Some(rel) = dirs.pop() {
        let entries = std::fs::read_dir(root.join(&rel)).map_err(|e| unreadable(&rel, e))?;
        for entry in entries {
            let entry = entry.map_err(|e| unreadable(&rel, e))?;
            seen += 1;
            if seen > max_entries {
                return Err(LinkWalkError::TooMany(max_entries));
            }
            let path = rel.join(entry.file_name());
            // The entry's own type: a link is not followed.
            let kind = entry.file_type().map_err(|e| unreadable(&path, e))?;
            if kind.is_symlink() {
                links.push(path);
            } else if kind.is_dir() && !(rel.as_os_str().is_empty() && entry.file_name() == ".git")
            {
                dirs.push(path);
            }
        }
    }
    links.sort();
    Ok(links.iter().find_map(|l| leads_out(&root, l)))
}

/// Where a write through `p` would land: resolved by the kernel (every link followed) as far
/// as it exists, the rest appended; a dangling link is followed by hand. A `..` after what
/// cannot be resolved stays in the result (`Path::file_name` of it is none).
fn leads_to(p: &Path) -> PathBuf {
    let mut seen = 0;
    let mut at = p.to_path_buf();
    loop {
        if let Ok(c) = at.canonicalize() {
            return c;
        }
        // Not resolvable as a whole: a dangling link somewhere. Follow the last component
        // when it is a link, else resolve the parent and append the name.
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() && seen < 40 => {
                seen += 1;
                let Ok(target) = std::fs::read_link(&at) else {
                    return at;
                };
                at = at
                    .parent()
                    .map_or_else(|| target.clone(), |d| d.join(&target));
            }
            _ => {
                let (Some(parent), Some(name)) = (at.parent(), at.file_name()) else {
                    return at;
                };
                return leads_to(parent).join(name);
            }
        }
    }
}

/// The Fixer's link gate (docs/iterate.md, docs/trust.md), after each of its dispatches: a
/// symbolic link among the worktree's working files that leads outside it — one the Fixer
/// made, with a shell or otherwise — would carry the next write (the next Fixer's, a
/// reproducer's) out of the worktree, so it aborts the iterate as a write outside does
/// (`fixer_offtarget_write`); so does a worktree the walk cannot finish.
pub fn link_gate(worktree: &Path) -> Option<Abort> {
    let detail = match escaping_working_link(worktree, MAX_WORKING_ENTRIES) {
        Ok(None) => return None,
        Ok(Some(EscapingLink { link, to })) => format!(
            "`{link}` in the worktree is a symbolic link to {} (outside the worktree): a write \
             through it would land there, so nothing of this iteration is committed",
            to.display()
        ),
        Err(e) => format!(
            "arev cannot check the worktree for a symbolic link leading outside it ({e}), so \
             nothing of this iteration is committed"
        ),
    };
    Some(Abort::LinkOutside {
        role: Role::Fixer,
        detail,
    })
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// Where a write through each link lands, as the kernel follows it: relative links inside
    /// stay inside, dangling or not; absolute ones, chains through a link out, and a `..`
    /// after a link to `.` lead out.
    #[test]
    fn a_link_leads_where_the_kernel_would_write() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap().join("wt");
        let out = d.path().canonicalize().unwrap().join("outside");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::create_dir_all(&out).unwrap();
        for (link, target) in [
            ("inside", "sub"),
            ("dangling_in", "build/out"),
            ("abs_out", out.to_str().unwrap()),
            ("dangling_out", "/nonexistent-arev-test/a"),
            ("dot", "."),
            ("tricky", "dot/sub/../.."),
            ("to_dangling_out", "dangling_out/x"),
            ("up", "../outside"),
            ("up_missing", "missing/../../x"),
        ] {
            symlink(target, root.join(link)).unwrap();
        }
        let to = |l: &str| leads_to(&root.join(l));
        assert_eq!(to("inside"), root.join("sub"));
        assert_eq!(to("dangling_in"), root.join("build/out"));
        assert_eq!(to("abs_out"), out);
        assert_eq!(to("dangling_out"), Path::new("/nonexistent-arev-test/a"));
        assert_eq!(to("tricky"), d.path().canonicalize().unwrap());
        assert_eq!(
            to("to_dangling_out"),
            Path::new("/nonexistent-arev-test/a/x")
        );
        assert_eq!(to("up"), out);
        assert!(to("up_missing")
            .components()
            .any(|c| c == std::path::Component::ParentDir));
    }

    /// The working files' walk finds a new link leading out wherever it sits (deep, in an
    /// ignored or untracked place, as the root's `.git`), never one leading inside, and
    /// does not look inside the root's `.git` directory.
    #[test]
    fn the_working_files_walk_finds_a_link_leading_out_wherever_it_is() {
        let d = tempfile::tempdir().unwrap();
        let base = d.path().canonicalize().unwrap();
        let root = base.join("wt");
        std::fs::create_dir_all(root.join("src/deep/er")).unwrap();
        std::fs::create_dir_all(root.join(".git/objects")).unwrap();
        std::fs::write(root.join("src/lib.rs"), "x").unwrap();
        symlink("../lib.rs", root.join("src/deep/inside")).unwrap();
        symlink("/", root.join(".git/objects/out")).unwrap();
        let walk = |max| escaping_working_link(&root, max);
        assert_eq!(walk(MAX_WORKING_ENTRIES), Ok(None));

        symlink(&base, root.join("src/deep/er/z_out")).unwrap();
        symlink("../../../..", root.join("src/deep/er/a_up")).unwrap();
        let found = walk(MAX_WORKING_ENTRIES).unwrap().unwrap();
        assert_eq!(found.link, "src/deep/er/a_up");
        assert_eq!(found.to, base);
        assert!(found
            .to_string()
            .contains("`src/deep/er/a_up` is a symbolic link"));

        std::fs::remove_file(root.join("src/deep/er/a_up")).unwrap();
        std::fs::remove_file(root.join("src/deep/er/z_out")).unwrap();
        let git = root.join(".git");
        std::fs::remove_dir_all(&git).unwrap();
        symlink("/tmp", &git).unwrap();
        assert_eq!(walk(MAX_WORKING_ENTRIES).unwrap().unwrap().link, ".git");

        // Too many entries to check: not known to be clean.
        std::fs::remove_file(&git).unwrap();
        assert_eq!(walk(3), Err(LinkWalkError::TooMany(3)));
    }
}
