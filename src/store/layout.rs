//! Run-dir layout: `<base>/<run-id>/`, ids that never collide, and the `.git/info/exclude` entry.

use std::fmt;
use std::path::{Path, PathBuf};

/// The digest of report.json that `arev runs` reads (docs/architecture.md §7.2).
pub const SUMMARY_FILE: &str = "summary.json";

/// `YYYYMMDD-HHMMSS-<6 hex>-<slug ≤ 40>`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RunId(String);

impl RunId {
    /// A fresh id for `now` with a random 6-hex component and a slug of `target`.
    pub fn new(target: &str) -> Self {
        let now = chrono::Utc::now().format("%Y%m%d-%H%M%S");
        let mut rnd = [0u8; 3];
        // A failing OS RNG is not fatal: create-or-fail still guarantees uniqueness.
        let _ = getrandom::fill(&mut rnd);
        Self(format!("{now}-{}-{}", hex::encode(rnd), slug(target)))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for RunId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Lower-case, non-alphanumerics collapsed to `-`, trimmed, at most 40 characters.
pub(crate) fn slug(target: &str) -> String {
    let mut out = String::new();
    for c in target.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let trimmed = out.trim_matches('-');
    let mut s: String = trimmed.chars().take(40).collect();
    while s.ends_with('-') {
        s.pop();
    }
    if s.is_empty() {
        "target".into()
    } else {
        s
    }
}

/// A created run directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunDir {
    pub id: RunId,
    pub path: PathBuf,
}

impl RunDir {
    pub fn meta(&self) -> PathBuf {
        self.path.join("meta.json")
    }
    pub fn target_dir(&self) -> PathBuf {
        self.path.join("target")
    }
    pub fn brief(&self) -> PathBuf {
        self.path.join("brief.md")
    }
    pub fn round(&self, n: u32) -> PathBuf {
        self.path.join(format!("round-{n}.json"))
    }
    pub fn agent_dir(&self, round: u32, label: &str) -> PathBuf {
        self.path
            .join("agents")
            .join(format!("r{round}"))
            .join(label)
    }
    /// The Fixer's dispatch dir (iterate mode): `agents/fix/<label>`.
    pub fn fixer_dir(&self, label: &str) -> PathBuf {
        self.path.join("agents").join("fix").join(label)
    }
    /// A Prover's dispatch dir (`--prove`): `agents/p/<finding>/<label>`.
    pub fn prover_dir(&self, finding: &str, label: &str) -> PathBuf {
        self.path.join("agents").join("p").join(finding).join(label)
    }
    /// The Prover's files for `finding`, kept once checked: `proofs/<finding>/`.
    pub fn proof_dir(&self, finding: &str) -> PathBuf {
        self.path.join("proofs").join(finding)
    }
    /// Create the nested run dir `<self>/<rel>` (create-or-fail), e.g. `iterations/2`.
    pub fn child(&self, rel: &str) -> std::io::Result<RunDir> {
        let path = self.path.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::create_dir(&path)?;
        Ok(RunDir {
            id: RunId(format!("{}/{rel}", self.id)),
            path,
        })
    }
    pub fn report_json(&self) -> PathBuf {
        self.path.join("report.json")
    }
    pub fn report_md(&self) -> PathBuf {
        self.path.join("report.md")
    }
    /// summary.json: what `arev runs` lists, written with report.json.
    pub fn summary(&self) -> PathBuf {
        self.path.join(SUMMARY_FILE)
    }
}

/// `<repo root>/.arev/runs` inside a repo, else `<cwd>/.arev/runs`.
pub fn default_runs_base(root: &Path) -> PathBuf {
    root.join(".arev").join("runs")
}

/// `.arev` or a run-dir base that arev will not keep run dirs in.
#[derive(Debug, thiserror::Error)]
pub enum RunDirsError {
    #[error(
        "{} is a symbolic link; arev keeps its run dirs only in real directories (remove the link, or pass --run-dir)",
        .0.display()
    )]
    Symlink(PathBuf),
    #[error("{} is not a directory", .0.display())]
    NotADirectory(PathBuf),
}

/// `.arev` under `root` and the run-dir base `base` (and every directory between them and
/// the root) must be real directories where they exist: a symbolic link (a repository can
/// commit one) would send run dirs, prompts, patches and reports elsewhere. Err names the
/// link.
pub fn check_real_dirs(root: &Path, base: &Path) -> Result<(), RunDirsError> {
    let mut check: Vec<PathBuf> = vec![root.join(".arev")];
    // The base and its ancestors down to the root (or all of them, for a base outside it).
    let mut p = Some(base);
    while let Some(dir) = p {
        if dir == root || dir.as_os_str().is_empty() {
            break;
        }
        check.push(dir.to_path_buf());
        p = dir.parent();
    }
    for dir in check {
        match std::fs::symlink_metadata(&dir) {
            Ok(m) if m.file_type().is_symlink() => return Err(RunDirsError::Symlink(dir)),
            Ok(m) if !m.is_dir() => return Err(RunDirsError::NotADirectory(dir)),
            _ => {}
        }
    }
    Ok(())
}

/// Create a new, unique run directory under `base` (create-dir-or-fail, retrying on a clash).
pub fn create_run_dir(base: &Path, target: &str) -> std::io::Result<RunDir> {
    std::fs::create_dir_all(base)?;
    let mut last = None;
    for _ in 0..16 {
        let id = RunId::new(target);
        let path = base.join(id.as_str());
        match std::fs::create_dir(&path) {
            Ok(()) => return Ok(RunDir { id, path }),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("could not create a unique run dir")))
}

/// Add `.arev/` to the repository's `info/exclude` (never the user's `.gitignore`). Idempotent.
pub fn add_git_exclude(common_git_dir: &Path) -> std::io::Result<()> {
    let info = common_git_dir.join("info");
    let path = info.join("exclude");
    let existing = match std::fs::read_to_string(&path) {
        Ok(s) => s,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e),
    };
    if existing.lines().any(|l| {
        let l = l.trim();
        l == ".arev/" || l == ".arev" || l == "/.arev/" || l == "/.arev"
    }) {
        return Ok(());
    }
    std::fs::create_dir_all(&info)?;
    let mut next = existing;
    if !next.is_empty() && !next.ends_with('\n') {
        next.push('\n');
    }
    next.push_str("# added by arev: run directories\n.arev/\n");
    super::write_atomic(&path, next.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_linked_arev_or_run_base_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("repo");
        std::fs::create_dir_all(&root).unwrap();
        let base = root.join(".arev/runs");
        assert!(check_real_dirs(&root, &base).is_ok(), "nothing there yet");
        std::os::unix::fs::symlink(d.path(), root.join(".arev")).unwrap();
        let e = check_real_dirs(&root, &base).unwrap_err().to_string();
        assert!(e.contains(".arev is a symbolic link"), "{e}");
        std::fs::remove_file(root.join(".arev")).unwrap();
        std::fs::create_dir(root.join(".arev")).unwrap();
        std::os::unix::fs::symlink(d.path(), &base).unwrap();
        assert!(check_real_dirs(&root, &base)
            .unwrap_err()
            .to_string()
            .contains("runs is a symbolic link"));
    }

    #[test]
    fn slugs() {
        assert_eq!(slug("diff"), "diff");
        assert_eq!(slug("src/**/*.rs"), "src-rs");
        assert_eq!(slug("///"), "target");
        assert_eq!(slug(&"a".repeat(60)).len(), 40);
    }

    #[test]
    fn run_ids_are_unique_and_shaped() {
        let dir = tempfile::tempdir().unwrap();
        let a = create_run_dir(dir.path(), "src/lib.rs").unwrap();
        let b = create_run_dir(dir.path(), "src/lib.rs").unwrap();
        assert_ne!(a.path, b.path);
        let parts: Vec<&str> = a.id.as_str().splitn(4, '-').collect();
        assert_eq!(parts[0].len(), 8);
        assert_eq!(parts[1].len(), 6);
        assert_eq!(parts[2].len(), 6);
        assert_eq!(parts[3], "src-lib-rs");
    }

    #[test]
    fn exclude_is_idempotent() {
        let dir = tempfile::tempdir().unwrap();
        add_git_exclude(dir.path()).unwrap();
        add_git_exclude(dir.path()).unwrap();
        let s = std::fs::read_to_string(dir.path().join("info/exclude")).unwrap();
        assert_eq!(s.matches(".arev/").count(), 1);
    }
}
