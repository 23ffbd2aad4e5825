//! Where a target argument points: the context it is resolved in (root, cwd, caps) and an
//! argument's path under the root, found without following any symlink.

use super::scan::{escape_path, has_control_chars, rel_string};
use super::TargetError;
use std::path::{Component, Path, PathBuf};

/// Where the target is resolved from.
#[derive(Debug, Clone)]
pub(crate) struct Context {
    /// Canonical repo work tree, or canonical cwd outside a repo.
    pub root: PathBuf,
    pub in_repo: bool,
    /// Canonical cwd.
    pub cwd: PathBuf,
    /// `cwd` relative to `root`, `/`-separated (empty at the root).
    pub cwd_rel: String,
    pub max_file_bytes: u64,
    /// Root-relative run-dir bases inside the root (never part of a diff or a walk).
    pub run_dirs: Vec<String>,
}

impl Context {
    /// The error for a path that is not under `root`.
    pub(crate) fn outside_error(&self, arg: &str) -> TargetError {
        if self.in_repo {
            TargetError::OutsideRepo(arg.to_owned())
        } else {
            TargetError::OutsideCwd(arg.to_owned())
        }
    }
}

/// `arg` (relative to cwd, or absolute) made absolute with `.` and `..` resolved lexically,
/// never through the file system (so that no symlink is followed).
fn lexical_abs(cwd: &Path, arg: &str) -> PathBuf {
    lexical(&cwd.join(arg))
}

/// `p` with `.` and `..` resolved lexically (`a/./b/../c` → `a/c`), never through the file
/// system.
pub fn lexical(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// The absolute path of the existing path `arg` (relative to cwd) under the root, and its
/// root-relative `/`-separated form, found without following any symlink below the root: a
/// link anywhere on the way is `TargetError::Symlink` naming the link. (An absolute path
/// through a symlinked *prefix* of the root, e.g. `/tmp` → `/private/tmp`, is accepted: the
/// root itself is canonical.)
pub(crate) fn locate(ctx: &Context, arg: &str) -> Result<(PathBuf, String), TargetError> {
    let lexical = lexical_abs(&ctx.cwd, arg);
    let exists = |p: &Path| match std::fs::symlink_metadata(p) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(TargetError::NoSuchFile(arg.to_owned()))
        }
        Err(e) => Err(TargetError::Unreadable {
            path: arg.to_owned(),
            message: e.to_string(),
        }),
    };
    let rel_path = match lexical.strip_prefix(&ctx.root) {
        Ok(r) => r.to_path_buf(),
        Err(_) => {
            exists(&lexical)?;
            lexical
                .ancestors()
                .find(|a| a.canonicalize().is_ok_and(|c| c == ctx.root))
                .and_then(|a| lexical.strip_prefix(a).ok())
                .map(Path::to_path_buf)
                .ok_or_else(|| ctx.outside_error(arg))?
        }
    };
    let rel = rel_string(&rel_path).ok_or_else(|| TargetError::NotUtf8(arg.to_owned()))?;
    // What a reviewer may never read (docs/trust.md) is no target either.
    if rel.split('/').any(|p| p == ".git") {
        return Err(TargetError::VcsMetadata(arg.to_owned()));
    }
    let mut at = ctx.root.clone();
    let mut walked = String::new();
    for part in rel.split('/').filter(|p| !p.is_empty()) {
        at.push(part);
        if !walked.is_empty() {
            walked.push('/');
        }
        walked.push_str(part);
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => return Err(TargetError::Symlink(walked)),
            Ok(_) => {}
            Err(_) => exists(&at)?,
        }
    }
    if has_control_chars(&rel) {
        return Err(TargetError::ControlChars(escape_path(&rel)));
    }
    Ok((at, rel))
}
