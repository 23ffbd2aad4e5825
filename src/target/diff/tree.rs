//! Working-tree snapshots: the working tree written as a git tree object through a private
//! index (the Stop hook's baseline, and the new side of a `--base-tree` diff).

use super::base::git_err;
use super::rules::RUN_DIR;
use crate::target::TargetError;
use git2::{Index, IndexAddOption, Oid, Repository};
use std::path::Path;

/// Write the working tree as a tree object — what `git add -A && git write-tree` would record:
/// tracked and untracked files, ignored ones left out, `.arev/` left out — through a private
/// copy of the index, so the user's index, HEAD and branches are never touched. The blobs and
/// trees go into the object database (unreferenced: `git gc` prunes them after its expiry).
pub(crate) fn snapshot_tree(repo: &Repository) -> Result<Oid, TargetError> {
    let io = |e: std::io::Error| TargetError::Git(format!("cannot snapshot the working tree: {e}"));
    let workdir = repo
        .workdir()
        .ok_or_else(|| TargetError::Git("the repository has no working tree".to_owned()))?;
    let scratch = tempfile::tempdir().map_err(io)?;
    let private = scratch.path().join("index");
    // Starting from the user's index keeps its stat cache: unchanged files are not re-read.
    match std::fs::copy(repo.path().join("index"), &private) {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io(e)),
    }
    let mut index = Index::open(&private).map_err(|e| git_err(&e))?;
    // A handle of its own: the private index replaces the repository's only in this handle.
    let handle = Repository::open(workdir).map_err(|e| git_err(&e))?;
    handle.set_index(&mut index).map_err(|e| git_err(&e))?;
    // An untracked nested repository comes as `dir/`: libgit2 cannot add it as files, so it
    // is recorded as git does, a gitlink to its HEAD (a submodule-like entry every diff
    // lists as skipped), and left out while it has no commit.
    let mut nested: Vec<Vec<u8>> = Vec::new();
    let mut skip_nested = |path: &Path, _: &[u8]| -> i32 {
        let bytes = path.as_os_str().as_encoded_bytes();
        match bytes.strip_suffix(b"/") {
            Some(dir) => {
                nested.push(dir.to_vec());
                1
            }
            None => 0,
        }
    };
    index
        .add_all(["*"], IndexAddOption::DEFAULT, Some(&mut skip_nested))
        .and_then(|()| index.update_all(["*"], None))
        .map_err(|e| git_err(&e))?;
    for dir in nested {
        let head = Repository::open(workdir.join(String::from_utf8_lossy(&dir).as_ref()))
            .ok()
            .and_then(|r| r.head().ok().and_then(|h| h.target()));
        if let Some(id) = head {
            index.add(&gitlink(dir, id)).map_err(|e| git_err(&e))?;
        }
    }
    index
        .remove_dir(Path::new(RUN_DIR), 0)
        .map_err(|e| git_err(&e))?;
    index.write_tree_to(&handle).map_err(|e| git_err(&e))
}

/// An index entry for a submodule-like directory at `path` whose HEAD is `id`.
fn gitlink(path: Vec<u8>, id: Oid) -> git2::IndexEntry {
    let zero = git2::IndexTime::new(0, 0);
    git2::IndexEntry {
        ctime: zero,
        mtime: zero,
        dev: 0,
        ino: 0,
        mode: 0o160000,
        uid: 0,
        gid: 0,
        file_size: 0,
        id,
        // The path length bits are filled in by `Index::add`.
        flags: 0,
        flags_extended: 0,
        path,
    }
}
