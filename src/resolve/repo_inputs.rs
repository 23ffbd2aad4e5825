//! Repository inputs (`--repo-config worktree|base|ignore`): the reviewed repository's
//! `arev.toml` / `.arev/config.toml`, `.arev/{agents,prompts,heuristics}/*.md` and
//! `.arev/suppressions.toml`, read once,
//! from the working tree, from a commit's tree (the merge-base with `--base`, so that a change
//! cannot alter its own review), or not at all. Symbolic links and non-UTF-8 files are
//! refused: a repository input is never a way to read something outside the repository.

use super::error::{InputProblem, RepoInputError};
use crate::config::RepoSource;
use git2::{ObjectType, Oid, Repository, TreeWalkMode, TreeWalkResult};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The repository config files, in order of preference (the first present one is used).
pub const CONFIG_FILES: [&str; 2] = ["arev.toml", ".arev/config.toml"];
/// The external suppressions (docs/architecture.md §20.2): a repository input, so that with
/// `--repo-config base` a change cannot add a suppression that silences findings about
/// itself.
pub const SUPPRESSIONS_FILE: &str = ".arev/suppressions.toml";
/// Directories whose `*.md` files override the embedded role bodies, templates and checklist.
pub const OVERRIDE_DIRS: [&str; 3] = [".arev/agents", ".arev/prompts", ".arev/heuristics"];
/// A repository input larger than this is refused.
const MAX_INPUT_BYTES: usize = 1 << 20;

/// One input as found: its text, or why it cannot be used.
type Found = BTreeMap<String, Result<String, InputProblem>>;
/// Repo-relative path → text of the usable inputs.
type Texts = BTreeMap<String, String>;

/// The repository inputs of one run and where they came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepoInputs {
    pub source: RepoSource,
    /// With `base`: the commit whose tree they were read from.
    pub commit: Option<String>,
    /// Where a worktree input lives (its files are named relative to it).
    root: PathBuf,
    /// Repo-relative path → text: the config files present, the suppressions file and every
    /// `*.md` of the override directories.
    pub files: BTreeMap<String, String>,
}

impl RepoInputs {
    /// No repository inputs (`--repo-config ignore`, or nothing to read).
    pub fn none(source: RepoSource, root: &Path) -> Self {
        Self {
            source,
            commit: None,
            root: root.to_path_buf(),
            files: BTreeMap::new(),
        }
    }

    /// Read them from the working tree at `root`.
    pub fn from_worktree(root: &Path) -> Result<Self, RepoInputError> {
        Ok(Self {
            source: RepoSource::Worktree,
            commit: None,
            root: root.to_path_buf(),
            files: usable(scan_worktree(root), |p| root.join(p).display().to_string())?,
        })
    }

    /// Read them from the tree of `commit` in `repo` (the working tree at `root` is only
    /// named in messages).
    pub fn from_commit(
        repo: &Repository,
        commit: Oid,
        root: &Path,
    ) -> Result<Self, RepoInputError> {
        let short = short(commit);
        let found = scan_commit(repo, commit)?;
        Ok(Self {
            source: RepoSource::Base,
            commit: Some(commit.to_string()),
            root: root.to_path_buf(),
            files: usable(found, |p| format!("{short}:{p}"))?,
        })
    }

    /// How an input is named in messages: its absolute path, or `<commit>:<path>`.
    pub fn origin(&self, rel: &str) -> PathBuf {
        match &self.commit {
            Some(c) => PathBuf::from(format!("{}:{rel}", &c[..c.len().min(12)])),
            None => self.root.join(rel),
        }
    }

    /// The config layer: where it came from and its text.
    pub fn config(&self) -> Option<(PathBuf, String)> {
        CONFIG_FILES
            .iter()
            .find_map(|f| self.files.get(*f).map(|t| (self.origin(f), t.clone())))
    }

    /// The suppressions file: where it came from and its text, if present.
    pub fn suppressions(&self) -> Option<(PathBuf, &str)> {
        self.files
            .get(SUPPRESSIONS_FILE)
            .map(|t| (self.origin(SUPPRESSIONS_FILE), t.as_str()))
    }

    /// The override `.arev/<dir>/<name>.md`, if present.
    pub fn override_text(&self, dir: &str, name: &str) -> Option<&str> {
        self.files
            .get(&format!(".arev/{dir}/{name}.md"))
            .map(String::as_str)
    }

    /// The repo-relative paths read.
    pub fn paths(&self) -> Vec<String> {
        self.files.keys().cloned().collect()
    }

    /// sha256 over every input (path and text, in path order); the same for two runs exactly
    /// when they used the same repository inputs.
    pub fn digest(&self) -> String {
        let mut h = Sha256::new();
        for (path, text) in &self.files {
            h.update(path.as_bytes());
            h.update([0]);
            h.update((text.len() as u64).to_le_bytes());
            h.update(text.as_bytes());
        }
        hex::encode(h.finalize())
    }

    /// The worktree inputs under `root` that differ from these (added, removed, changed or
    /// unusable), for the `base` warning.
    pub fn differing_worktree(&self, root: &Path) -> Vec<String> {
        let wt = scan_worktree(root);
        let mut out: Vec<String> = wt
            .iter()
            .filter(|(p, t)| t.as_ref().ok() != self.files.get(*p))
            .map(|(p, _)| p.clone())
            .collect();
        out.extend(self.files.keys().filter(|p| !wt.contains_key(*p)).cloned());
        out.sort();
        out
    }
}

fn short(commit: Oid) -> String {
    let s = commit.to_string();
    s[..s.len().min(12)].to_string()
}

/// Every input usable, or the first that is not, named by `name`.
fn usable(found: Found, name: impl Fn(&str) -> String) -> Result<Texts, RepoInputError> {
    found
        .into_iter()
        .map(|(p, t)| match t {
            Ok(text) => Ok((p, text)),
            Err(problem) => Err(RepoInputError::Unusable {
                name: name(&p),
                problem,
                max: MAX_INPUT_BYTES,
            }),
        })
        .collect()
}

fn text_of(bytes: Vec<u8>) -> Result<String, InputProblem> {
    if bytes.len() > MAX_INPUT_BYTES {
        return Err(InputProblem::TooLarge(bytes.len() as u64));
    }
    String::from_utf8(bytes).map_err(|_| InputProblem::NotUtf8)
}

/// The inputs in the working tree: never following a symbolic link.
fn scan_worktree(root: &Path) -> Found {
    let mut found = Found::new();
    let read = |rel: &str| -> Option<Result<String, InputProblem>> {
        let p = root.join(rel);
        let meta = std::fs::symlink_metadata(&p).ok()?;
        if meta.file_type().is_symlink() {
            return Some(Err(InputProblem::Symlink));
        }
        if !meta.is_file() {
            return None;
        }
        if meta.len() > MAX_INPUT_BYTES as u64 {
            return Some(Err(InputProblem::TooLarge(meta.len())));
        }
        Some(
            std::fs::read(&p)
                .map_err(InputProblem::Io)
                .and_then(text_of),
        )
    };
    for f in CONFIG_FILES.into_iter().chain([SUPPRESSIONS_FILE]) {
        if let Some(t) = read(f) {
            found.insert(f.to_string(), t);
        }
    }
    for dir in OVERRIDE_DIRS {
        let p = root.join(dir);
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                found.insert(dir.to_string(), Err(InputProblem::Symlink));
                continue;
            }
            Ok(m) if m.is_dir() => {}
            _ => continue,
        }
        let Ok(entries) = std::fs::read_dir(&p) else {
            continue;
        };
        for e in entries.flatten() {
            let Some(name) = e.file_name().to_str().map(str::to_string) else {
                continue;
            };
            if name.ends_with(".md") {
                let rel = format!("{dir}/{name}");
                if let Some(t) = read(&rel) {
                    found.insert(rel, t);
                }
            }
        }
    }
    found
}

/// The inputs in `commit`'s tree (a symlink entry is unusable; submodules are skipped).
fn scan_commit(repo: &Repository, commit: Oid) -> Result<Found, RepoInputError> {
    let tree = repo
        .find_commit(commit)
        .and_then(|c| c.tree())
        .map_err(RepoInputError::Commit)?;
    let mut found = Found::new();
    let blob = |entry: &git2::TreeEntry<'_>| -> Option<Result<String, InputProblem>> {
        if entry.kind() != Some(ObjectType::Blob) {
            return None;
        }
        Some(if entry.filemode() == 0o120000 {
            Err(InputProblem::Symlink)
        } else {
            repo.find_blob(entry.id())
                .map_err(InputProblem::Git)
                .and_then(|b| text_of(b.content().to_vec()))
        })
    };
    for f in CONFIG_FILES.into_iter().chain([SUPPRESSIONS_FILE]) {
        if let Some(t) = tree.get_path(Path::new(f)).ok().and_then(|e| blob(&e)) {
            found.insert(f.to_string(), t);
        }
    }
    for dir in OVERRIDE_DIRS {
        let Ok(entry) = tree.get_path(Path::new(dir)) else {
            continue;
        };
        if entry.filemode() == 0o120000 {
            found.insert(dir.to_string(), Err(InputProblem::Symlink));
            continue;
        }
        let Ok(sub) = repo.find_tree(entry.id()) else {
            continue;
        };
        let mut entries = vec![];
        sub.walk(TreeWalkMode::PreOrder, |parent, e| {
            // Only the directory's own files, not its subdirectories.
            if parent.is_empty() {
                if let Some(name) = e.name() {
                    if name.ends_with(".md") {
                        entries.push((format!("{dir}/{name}"), e.to_owned()));
                    }
                }
                if e.kind() == Some(ObjectType::Tree) {
                    return TreeWalkResult::Skip;
                }
            }
            TreeWalkResult::Ok
        })
        .map_err(RepoInputError::Commit)?;
        for (rel, e) in entries {
            if let Some(t) = blob(&e) {
                found.insert(rel, t);
            }
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn git(dir: &Path, args: &[&str]) {
        let ok = Command::new("git")
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "commit.gpgsign=false",
            ])
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap()
            .status
            .success();
        assert!(ok, "git {args:?}");
    }

    fn write(dir: &Path, rel: &str, text: &str) {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn worktree_and_commit_read_the_same_inputs_and_refuse_symlinks() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        git(root, &["init", "-q", "."]);
        write(root, "arev.toml", "[review]\npasses = 2\n");
        write(root, ".arev/agents/judge.md", "You are the base Judge.\n");
        write(root, ".arev/agents/notes.txt", "not an input\n");
        write(root, ".arev/agents/deeper/x.md", "not an input either\n");
        write(root, ".arev/prompts/enthusiast.md", "template\n");
        write(root, ".arev/suppressions.toml", "# none yet\n");
        git(root, &["add", "-A"]);
        git(root, &["commit", "-qm", "base"]);
        let repo = Repository::open(root).unwrap();
        let head = repo.head().unwrap().peel_to_commit().unwrap().id();

        let wt = RepoInputs::from_worktree(root).unwrap();
        let base = RepoInputs::from_commit(&repo, head, root).unwrap();
        assert_eq!(wt.files, base.files);
        assert_eq!(
            wt.paths(),
            vec![
                ".arev/agents/judge.md",
                ".arev/prompts/enthusiast.md",
                ".arev/suppressions.toml",
                "arev.toml"
            ]
        );
        assert_eq!(
            base.suppressions().map(|(o, t)| (o, t.to_string())),
            Some((
                PathBuf::from(format!(
                    "{}:.arev/suppressions.toml",
                    &head.to_string()[..12]
                )),
                "# none yet\n".to_string()
            ))
        );
        assert_eq!(wt.digest(), base.digest());
        assert_eq!(
            base.override_text("agents", "judge"),
            Some("You are the base Judge.\n")
        );
        let (origin, text) = base.config().unwrap();
        assert_eq!(
            origin,
            PathBuf::from(format!("{}:arev.toml", &head.to_string()[..12]))
        );
        assert_eq!(text, "[review]\npasses = 2\n");
        assert!(base.differing_worktree(root).is_empty());

        // The change rewrites the Judge and adds a config: the base copy stays in force.
        write(root, ".arev/agents/judge.md", "You are the PR's Judge.\n");
        write(root, ".arev/config.toml", "[review]\npasses = 9\n");
        assert_eq!(
            base.differing_worktree(root),
            vec![".arev/agents/judge.md", ".arev/config.toml"]
        );
        assert_ne!(
            RepoInputs::from_worktree(root).unwrap().digest(),
            base.digest()
        );

        // A symlinked input is refused in the working tree, and in a commit.
        std::fs::remove_file(root.join(".arev/agents/judge.md")).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", root.join(".arev/agents/judge.md")).unwrap();
        let err = RepoInputs::from_worktree(root).unwrap_err().to_string();
        assert!(
            err.contains(".arev/agents/judge.md: a symbolic link"),
            "{err}"
        );
        git(root, &["add", "-A"]);
        git(root, &["commit", "-qm", "link"]);
        let head = repo.head().unwrap().peel_to_commit().unwrap().id();
        let err = RepoInputs::from_commit(&repo, head, root)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(":.arev/agents/judge.md: a symbolic link"),
            "{err}"
        );
    }
}
