//! Read membership and tool-use gates: which paths an agent touched, normalised and checked.

use crate::dispatch::ToolUse;
use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};

/// A tool use that touched something outside the target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadViolation {
    pub tool: String,
    pub path: String,
}

/// The set of paths agents may touch: ALLOWED_FILES (under `root`) ∪ the target artefacts.
#[derive(Debug, Clone)]
pub struct ReadScope {
    cwd: PathBuf,
    target: PathBuf,
    allowed: HashSet<PathBuf>,
}

impl ReadScope {
    /// `target` is the path in the `<target>` tag; `extra` are further run-dir artefacts
    /// (e.g. relevant-N.txt) agents may read.
    pub fn new<'a>(
        root: &Path,
        allowed_files: impl Iterator<Item = &'a str>,
        target: &Path,
        extra: &[PathBuf],
    ) -> Self {
        let target = canonical(target, root);
        let mut allowed: HashSet<PathBuf> = allowed_files
            .map(|f| canonical(&root.join(f), root))
            .collect();
        allowed.insert(target.clone());
        allowed.extend(extra.iter().map(|p| canonical(p, root)));
        Self {
            cwd: root.to_path_buf(),
            target,
            allowed,
        }
    }

    /// Paths a tool use touches (`None` = the tool is not a file tool).
    fn touched(&self, t: &ToolUse) -> Option<PathBuf> {
        let key = match t.name.as_str() {
            "Read" => "file_path",
            // A search without a path searches the working directory: outside the target.
            "Grep" | "Glob" => "path",
            _ => return None,
        };
        let p = t.input.get(key).and_then(|v| v.as_str()).unwrap_or("");
        Some(if p.is_empty() {
            self.cwd.clone()
        } else {
            canonical(Path::new(p), &self.cwd)
        })
    }

    /// The first file-tool use outside the scope, if any.
    pub fn violation(&self, uses: &[ToolUse]) -> Option<ReadViolation> {
        uses.iter().find_map(|t| {
            let p = self.touched(t)?;
            (!self.allowed.contains(&p)).then(|| ReadViolation {
                tool: t.name.clone(),
                path: p.display().to_string(),
            })
        })
    }

    /// Whether some Read targets the pinned target itself.
    pub fn read_target(&self, uses: &[ToolUse]) -> bool {
        uses.iter()
            .filter(|t| t.name == "Read")
            .any(|t| self.touched(t).as_deref() == Some(self.target.as_path()))
    }
}

/// Absolute, `.`/`..` resolved lexically, then symlinks resolved when the path exists.
fn canonical(p: &Path, cwd: &Path) -> PathBuf {
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    };
    let mut out = PathBuf::new();
    for c in abs.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out.canonicalize().unwrap_or(out)
}
