//! The detached checkout a case is reviewed in: a fresh git repository in a temporary
//! directory that borrows the user's objects (`objects/info/alternates`), its HEAD detached
//! at the buggy revision and checked out there. Nothing is written to the user's
//! repository — no worktree admin dir, no branch, no index — and dropping the checkout
//! deletes the directory.
//!
//! The panel is the user's, not history's: the checkout's own `arev.toml` and `.arev/` (as
//! they were at the buggy revision) are removed, and the user's current `arev.toml`,
//! `.arev/config.toml` and `.arev/{agents,prompts,heuristics}/` copied in, so every case is
//! reviewed by the same configuration — the one whose digest the results record.

use super::error::CheckoutError;
use git2::{build::CheckoutBuilder, Oid, Repository};
use std::path::{Path, PathBuf};

/// The repository-level arev configuration paths a checkout takes from the user's tree.
const CONFIG_FILES: &[&str] = &["arev.toml", ".arev/config.toml"];
const CONFIG_DIRS: &[&str] = &[".arev/agents", ".arev/prompts", ".arev/heuristics"];

/// A checkout; removed when dropped.
#[derive(Debug)]
pub struct Checkout {
    dir: tempfile::TempDir,
    /// The checkout's root (canonical).
    pub root: PathBuf,
}

impl Checkout {
    /// Delete the checkout now, reporting a failure.
    pub fn remove(self) -> std::io::Result<()> {
        self.dir.close()
    }
}

/// Check `commit` of the repository whose common git dir is `git_dir` out into a new
/// temporary directory, with `user_root`'s arev configuration.
pub fn create(git_dir: &Path, commit: Oid, user_root: &Path) -> Result<Checkout, CheckoutError> {
    let dir = tempfile::Builder::new()
        .prefix("arev-eval-")
        .tempdir()
        .map_err(CheckoutError::TempDir)?;
    let root = dir
        .path()
        .canonicalize()
        .unwrap_or_else(|_| dir.path().to_path_buf());
    let g = |what: &str, source: git2::Error| CheckoutError::Git {
        what: what.to_string(),
        source,
    };
    let repo = Repository::init(&root).map_err(|e| g("init", e))?;
    let objects = git_dir.join("objects");
    let objects = objects.canonicalize().unwrap_or(objects);
    let alternates = repo.path().join("objects").join("info").join("alternates");
    std::fs::create_dir_all(alternates.parent().unwrap_or(&root))
        .and_then(|()| std::fs::write(&alternates, format!("{}\n", objects.display())))
        .map_err(|source| CheckoutError::Alternates {
            path: alternates.clone(),
            source,
        })?;
    drop(repo);
    // Reopen so that the object database reads the alternates.
    let repo = Repository::open(&root).map_err(|e| g("open", e))?;
    repo.set_head_detached(commit)
        .map_err(|e| g(&format!("detach HEAD at {commit}"), e))?;
    repo.checkout_head(Some(CheckoutBuilder::new().force()))
        .map_err(|e| g(&format!("check out {commit}"), e))?;
    replace_config(&root, user_root)?;
    Ok(Checkout { dir, root })
}

/// Swap the checkout's arev configuration for the user's.
pub(super) fn replace_config(root: &Path, user_root: &Path) -> Result<(), CheckoutError> {
    let io = |p: &Path, source: std::io::Error| CheckoutError::Config {
        path: p.to_path_buf(),
        source,
    };
    let historical = [root.join("arev.toml"), root.join(".arev")];
    for p in &historical {
        match std::fs::symlink_metadata(p) {
            Ok(m) if m.is_dir() => std::fs::remove_dir_all(p).map_err(|e| io(p, e))?,
            Ok(_) => std::fs::remove_file(p).map_err(|e| io(p, e))?,
            Err(_) => {}
        }
    }
    let copy = |rel: &str| -> Result<(), CheckoutError> {
        let from = user_root.join(rel);
        // Regular files only: a symlink in the user's tree is not followed.
        if !std::fs::symlink_metadata(&from).is_ok_and(|m| m.is_file()) {
            return Ok(());
        }
        let to = root.join(rel);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
        }
        std::fs::copy(&from, &to).map_err(|e| io(&from, e))?;
        Ok(())
    };
    for f in CONFIG_FILES {
        copy(f)?;
    }
    for d in CONFIG_DIRS {
        let Ok(entries) = std::fs::read_dir(user_root.join(d)) else {
            continue;
        };
        for e in entries.flatten() {
            if let Some(name) = e.file_name().to_str() {
                copy(&format!("{d}/{name}"))?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn git(dir: &Path, args: &[&str]) -> String {
        let o = Command::new("git")
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).trim().to_string()
    }

    #[test]
    fn checks_out_a_revision_without_writing_to_the_user_repo() {
        let tmp = tempfile::tempdir().unwrap();
        let user = tmp.path().join("user");
        std::fs::create_dir_all(user.join(".arev/prompts")).unwrap();
        git(&user, &["init", "-q", "-b", "main"]);
        git(&user, &["config", "user.email", "t@example.com"]);
        git(&user, &["config", "user.name", "T"]);
        std::fs::write(user.join("a.rs"), "old\n").unwrap();
        std::fs::write(user.join("arev.toml"), "# historical\n").unwrap();
        git(&user, &["add", "a.rs", "arev.toml"]);
        git(&user, &["commit", "-q", "-m", "one"]);
        let first = git(&user, &["rev-parse", "HEAD"]);
        std::fs::write(user.join("a.rs"), "new\n").unwrap();
        std::fs::write(user.join("arev.toml"), "# current\n").unwrap();
        std::fs::write(user.join(".arev/prompts/judge.md"), "judge\n").unwrap();
        git(&user, &["commit", "-q", "-am", "two"]);
        let before = (
            git(&user, &["for-each-ref"]),
            std::fs::read(user.join(".git/index")).unwrap(),
            git(&user, &["worktree", "list"]),
        );
        let co = create(&user.join(".git"), Oid::from_str(&first).unwrap(), &user).unwrap();
        assert_eq!(
            std::fs::read_to_string(co.root.join("a.rs")).unwrap(),
            "old\n"
        );
        // The panel's configuration is the user's current one, not history's.
        assert_eq!(
            std::fs::read_to_string(co.root.join("arev.toml")).unwrap(),
            "# current\n"
        );
        assert_eq!(
            std::fs::read_to_string(co.root.join(".arev/prompts/judge.md")).unwrap(),
            "judge\n"
        );
        assert_eq!(git(&co.root, &["rev-parse", "HEAD"]), first);
        assert_eq!(
            git(&co.root, &["rev-parse", "--abbrev-ref", "HEAD"]),
            "HEAD",
            "detached"
        );
        let after = (
            git(&user, &["for-each-ref"]),
            std::fs::read(user.join(".git/index")).unwrap(),
            git(&user, &["worktree", "list"]),
        );
        assert!(before == after, "the user's repository changed");
        let root = co.root.clone();
        co.remove().unwrap();
        assert!(!root.exists());
    }
}
