//! Scratch trees (docs/prove.md "Where"): throw-away checkouts a Prover writes its
//! reproducer into and arev runs it in — the reviewed content (HEAD plus the user's
//! uncommitted and untracked changes, as iterate seeds its worktree) or a commit such as the
//! merge-base of `diff --base`. Each lives in a temporary directory of its own (`tmp.*`, as
//! `mktemp` names them): a git dir that borrows the user's objects read-only
//! (`objects/info/alternates`) and the tree beside it, named like the repository's
//! directory (no `.git` inside the tree, so the sandbox copies the files only). Nothing is
//! written to the user's repository: no worktree admin dir, no ref, no index, no object.
//!
//! No symbolic link of the repository is made in a tree: each is checked out as git does
//! where links cannot be made (`core.symlinks = false`) — a regular file holding the link's
//! target — so nothing an agent or a reproducer writes through a path of the tree can land
//! outside it.
//!
//! The check before any run (`Scratch::new_files`): compared with the index the checkout
//! wrote, a Prover may only have created regular files, each at most 256 KiB, and no
//! symbolic link; a modified, deleted or retyped file rejects the proof.
//!
//! `Scratch::remove` removes the directory whatever a reproducer did to it
//! (`cleanup::remove_tree`) and says what it could not remove; a scratch tree dropped
//! without it is removed the same way, a failure logged.

use git2::build::CheckoutBuilder;
use git2::{DiffOptions, IndexAddOption, Oid, Repository, Status, StatusOptions};
use std::path::{Component, Path, PathBuf};

/// The largest file a Prover may create.
pub const MAX_PROOF_FILE: u64 = 256 * 1024;
/// The most files a Prover may create.
pub const MAX_PROOF_FILES: usize = 32;

/// A scratch tree could not be made, checked or copied.
#[derive(Debug, thiserror::Error)]
pub enum ScratchError {
    #[error("cannot {0}: {1}")]
    Git(String, String),
    #[error("cannot {0}: {1}")]
    Io(String, std::io::Error),
}

fn git(what: &str) -> impl Fn(git2::Error) -> ScratchError + '_ {
    move |e| ScratchError::Git(what.to_string(), e.message().to_string())
}

fn io(what: String) -> impl Fn(std::io::Error) -> ScratchError {
    move |e| ScratchError::Io(what.clone(), e)
}

/// Why a Prover's work is rejected before anything runs (`prover_modified_code`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Rejected(pub String);

/// A checkout in a temporary directory.
pub struct Scratch {
    /// The temporary directory (canonical), holding `git` and the tree.
    dir: PathBuf,
    /// The tree's name in `dir`.
    name: String,
    repo: Repository,
    /// `remove` ran: nothing is left for the drop to do.
    removed: bool,
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !self.removed {
            if let Err(e) = super::cleanup::remove_tree(&self.dir) {
                tracing::warn!("scratch tree {} left behind: {e}", self.dir.display());
            }
        }
    }
}

/// A scratch tree that could not be removed: its path and why.
#[derive(Debug, thiserror::Error)]
#[error("the scratch tree {} was left behind: {source}", path.display())]
pub struct LeftBehind {
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

impl std::fmt::Debug for Scratch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scratch")
            .field("tree", &self.tree())
            .finish()
    }
}

impl Scratch {
    /// The reviewed content of the repository at `root`: its HEAD, then its working tree's
    /// changes against HEAD (modified, deleted and untracked non-ignored files), as iterate
    /// seeds its worktree.
    pub fn of_working_tree(root: &Path) -> Result<Self, ScratchError> {
        let user = Repository::open(root).map_err(git("open the repository"))?;
        let head = user
            .head()
            .and_then(|h| h.peel_to_tree())
            .map_err(git("read HEAD"))?;
        let s = Self::checkout(&user, head.id(), tree_name(root))?;
        s.overlay(&user, &head)?;
        Ok(s)
    }

    /// The tree of `rev` (a commit or tree id, or any revision) in the repository at `root`.
    pub fn at(root: &Path, rev: &str) -> Result<Self, ScratchError> {
        let user = Repository::open(root).map_err(git("open the repository"))?;
        let tree = user
            .revparse_single(rev)
            .and_then(|o| o.peel_to_tree())
            .map_err(git(&format!("read {rev}")))?;
        Self::checkout(&user, tree.id(), tree_name(root))
    }

    /// The checked-out files (the Prover's cwd and the sandbox's workdir).
    pub fn tree(&self) -> PathBuf {
        self.dir.join(&self.name)
    }

    /// Remove the scratch directory, whatever a reproducer did to it (permissions taken
    /// away, chains of any depth); what could not be removed is the error.
    pub fn remove(mut self) -> Result<(), LeftBehind> {
        self.removed = true;
        super::cleanup::remove_tree(&self.dir).map_err(|source| LeftBehind {
            path: self.dir.clone(),
            source,
        })
    }

    /// A fresh git dir borrowing `user`'s objects, with `tree` checked out beside it as
    /// `name`.
    fn checkout(user: &Repository, tree: Oid, name: String) -> Result<Self, ScratchError> {
        let dir = tempfile::Builder::new()
            .prefix("tmp.")
            .tempdir()
            .map_err(io("create a scratch directory".into()))?;
        // Canonical: the Prover's paths and the sandbox's binds are compared with it.
        let base = dir
            .path()
            .canonicalize()
            .map_err(io("resolve the scratch directory".into()))?;
        // From here on the directory is this value's to remove (`Drop`, `remove`).
        let _ = dir.keep();
        let repo = match Self::init(&base, user) {
            Ok(r) => r,
            Err(e) => {
                let _ = super::cleanup::remove_tree(&base);
                return Err(e);
            }
        };
        let s = Self {
            dir: base,
            name,
            repo,
            removed: false,
        };
        let tree_dir = s.tree();
        std::fs::create_dir(&tree_dir).map_err(io(format!("create {}", tree_dir.display())))?;
        // In memory only: no gitlink file in the tree.
        s.repo
            .set_workdir(&tree_dir, false)
            .map_err(git("set the scratch tree"))?;
        {
            let t = s.repo.find_tree(tree).map_err(git("read the tree"))?;
            let mut co = CheckoutBuilder::new();
            co.force().recreate_missing(true);
            s.repo
                .checkout_tree(t.as_object(), Some(&mut co))
                .map_err(git("check out the tree"))?;
        }
        Ok(s)
    }

    /// The scratch git dir in `base`: bare, borrowing `user`'s objects, and checking links
    /// out as files (`core.symlinks = false`).
    fn init(base: &Path, user: &Repository) -> Result<Repository, ScratchError> {
        let gitdir = base.join("git");
        Repository::init_bare(&gitdir).map_err(git("create the scratch repository"))?;
        let objects = user.commondir().join("objects");
        let alternates = gitdir.join("objects/info/alternates");
        std::fs::write(&alternates, format!("{}\n", objects.display()))
            .map_err(io(format!("write {}", alternates.display())))?;
        let repo = Repository::open(&gitdir).map_err(git("open the scratch repository"))?;
        repo.config()
            .and_then(|mut c| c.set_bool("core.symlinks", false))
            .map_err(git("configure the scratch repository"))?;
        Ok(repo)
    }

    /// Bring `user`'s working-tree changes against `head` into the tree, and into its index
    /// (so that the check sees only what comes after).
    fn overlay(&self, user: &Repository, head: &git2::Tree<'_>) -> Result<(), ScratchError> {
        let Some(from) = user.workdir() else {
            return Ok(());
        };
        let mut opts = DiffOptions::new();
        opts.include_untracked(true)
            .recurse_untracked_dirs(true)
            .include_typechange(true);
        let diff = user
            .diff_tree_to_workdir_with_index(Some(head), Some(&mut opts))
            .map_err(git("diff the working tree"))?;
        let to = self.tree();
        for d in diff.deltas() {
            let Some(rel) = d.new_file().path().or_else(|| d.old_file().path()) else {
                continue;
            };
            let dst = to.join(rel);
            let src = from.join(rel);
            remove_any(&dst)?;
            let Ok(meta) = std::fs::symlink_metadata(&src) else {
                continue; // deleted in the working tree
            };
            ensure_dirs(&to, rel)?;
            if meta.file_type().is_symlink() {
                // As the checkout makes a link: a file holding its target.
                let target =
                    std::fs::read_link(&src).map_err(io(format!("read {}", src.display())))?;
                std::fs::write(&dst, target.as_os_str().as_encoded_bytes())
                    .map_err(io(format!("write {}", dst.display())))?;
            } else if meta.is_file() {
                std::fs::copy(&src, &dst).map_err(io(format!("copy {}", src.display())))?;
            }
        }
        let mut index = self.repo.index().map_err(git("open the scratch index"))?;
        index
            .add_all(["*"], IndexAddOption::DEFAULT | IndexAddOption::FORCE, None)
            .and_then(|()| index.update_all(["*"], None))
            .and_then(|()| index.write())
            .map_err(git("index the reviewed content"))?;
        Ok(())
    }

    /// The files created since the checkout (sorted, `/`-separated), each checked: a regular
    /// file of at most 256 KiB, at most 32 of them. Any other change — a modified, deleted or
    /// retyped file, a symbolic link, anything that is not a regular file — is `Rejected`.
    pub fn new_files(&self) -> Result<Result<Vec<String>, Rejected>, ScratchError> {
        let mut opts = StatusOptions::new();
        opts.include_untracked(true)
            .recurse_untracked_dirs(true)
            .include_ignored(true)
            .recurse_ignored_dirs(true)
            .exclude_submodules(true)
            .renames_index_to_workdir(false);
        let statuses = self
            .repo
            .statuses(Some(&mut opts))
            .map_err(git("read the scratch tree's status"))?;
        let tree = self.tree();
        let mut new = vec![];
        for s in statuses.iter() {
            let st = s.status();
            let path = String::from_utf8_lossy(s.path_bytes()).into_owned();
            if st.intersects(Status::WT_NEW | Status::IGNORED) {
                let meta = std::fs::symlink_metadata(tree.join(&path))
                    .map_err(io(format!("inspect {path}")))?;
                if meta.file_type().is_symlink() {
                    return Ok(Err(Rejected(format!("{path} is a symbolic link"))));
                }
                if !meta.is_file() {
                    return Ok(Err(Rejected(format!("{path} is not a regular file"))));
                }
                if meta.len() > MAX_PROOF_FILE {
                    return Ok(Err(Rejected(format!(
                        "{path} has {} bytes (at most {MAX_PROOF_FILE})",
                        meta.len()
                    ))));
                }
                new.push(path);
            } else if st.intersects(
                Status::WT_MODIFIED
                    | Status::WT_DELETED
                    | Status::WT_TYPECHANGE
                    | Status::WT_RENAMED,
            ) {
                let what = if st.contains(Status::WT_DELETED) {
                    "deleted"
                } else {
                    "modified"
                };
                return Ok(Err(Rejected(format!(
                    "{path} (an existing file) was {what}"
                ))));
            }
        }
        if new.len() > MAX_PROOF_FILES {
            return Ok(Err(Rejected(format!(
                "{} new files (at most {MAX_PROOF_FILES})",
                new.len()
            ))));
        }
        new.sort();
        Ok(Ok(new))
    }
}

/// The tree's name: the repository's directory name (a checkout looks like any other), or
/// `src` when that is not a plain name or collides with the git dir.
fn tree_name(root: &Path) -> String {
    root.file_name()
        .and_then(|n| n.to_str())
        .filter(|n| !n.is_empty() && *n != "git" && !n.starts_with('.'))
        .map_or_else(|| "src".to_string(), str::to_string)
}

/// Copy `files` (checked new files, relative) from the tree `from` into `to`: their parent
/// directories are created as real directories, and a link or a non-directory in the way is
/// an error (a copy never writes through a link, whatever `to` holds).
pub fn copy_files(from: &Path, files: &[String], to: &Path) -> Result<(), ScratchError> {
    for f in files {
        let rel = Path::new(f);
        if !rel.components().all(|c| matches!(c, Component::Normal(_))) {
            return Err(ScratchError::Io(
                format!("copy {f}"),
                std::io::Error::other("not a plain relative path"),
            ));
        }
        let bytes = read_regular(&from.join(rel))?;
        ensure_dirs(to, rel)?;
        let dst = to.join(rel);
        remove_any(&dst)?;
        std::fs::write(&dst, bytes).map_err(io(format!("write {}", dst.display())))?;
    }
    Ok(())
}

/// A regular file's bytes, never through a link, at most `MAX_PROOF_FILE`.
fn read_regular(p: &Path) -> Result<Vec<u8>, ScratchError> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW)
        .open(p)
        .map_err(io(format!("open {}", p.display())))?;
    let meta = file
        .metadata()
        .map_err(io(format!("inspect {}", p.display())))?;
    if !meta.is_file() || meta.len() > MAX_PROOF_FILE {
        return Err(ScratchError::Io(
            format!("copy {}", p.display()),
            std::io::Error::other("not a regular file of at most 256 KiB"),
        ));
    }
    let mut out = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(MAX_PROOF_FILE + 1)
        .read_to_end(&mut out)
        .map_err(io(format!("read {}", p.display())))?;
    Ok(out)
}

/// Create the parent directories of `rel` under `root`, refusing a link or a file in the way.
fn ensure_dirs(root: &Path, rel: &Path) -> Result<(), ScratchError> {
    let mut at = root.to_path_buf();
    let parents: Vec<_> = rel
        .parent()
        .map(|p| p.components().collect())
        .unwrap_or_default();
    for c in parents {
        at.push(c);
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                return Err(ScratchError::Io(
                    format!("create {}", at.display()),
                    std::io::Error::other("a link or a file is in the way"),
                ))
            }
            Err(_) => std::fs::create_dir(&at).map_err(io(format!("create {}", at.display())))?,
        }
    }
    Ok(())
}

/// Remove a file or link at `p` (a directory is removed with its content); nothing there is
/// fine.
fn remove_any(p: &Path) -> Result<(), ScratchError> {
    match std::fs::symlink_metadata(p) {
        Ok(m) if m.is_dir() => {
            std::fs::remove_dir_all(p).map_err(io(format!("remove {}", p.display())))
        }
        Ok(_) => std::fs::remove_file(p).map_err(io(format!("remove {}", p.display()))),
        Err(_) => Ok(()),
    }
}

#[cfg(test)]
#[path = "scratch_tests.rs"]
mod tests;
