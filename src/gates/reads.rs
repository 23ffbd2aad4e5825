//! Read membership and tool-use gates: which paths an agent touched, normalised and checked.
//!
//! Backend-neutral: every backend's parser fills `ToolUse::access` (Claude `Read`/`Grep`/
//! `Glob`, Codex shell commands, Gemini `read_file`/`grep_search`/`glob`/`list_directory`),
//! and the rules here are the same for all: every read or searched path must be in scope, a
//! write is always a violation, and a tool use whose accesses cannot be derived (e.g. a Codex
//! `find` or a script) is a violation too — fail closed, since arev cannot show it stayed
//! inside the target.

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

    fn resolve(&self, p: &str) -> PathBuf {
        if p.is_empty() {
            self.cwd.clone()
        } else {
            canonical(Path::new(p), &self.cwd)
        }
    }

    /// The first tool use that touched (or may have touched) something outside the scope.
    pub fn violation(&self, uses: &[ToolUse]) -> Option<ReadViolation> {
        uses.iter().find_map(|t| {
            let a = &t.access;
            if let Some(reason) = &a.unknown {
                let what = t
                    .input
                    .get("command")
                    .and_then(|c| c.as_str())
                    .map_or_else(|| t.name.clone(), |c| format!("`{c}`"));
                return Some(ReadViolation {
                    tool: t.name.clone(),
                    path: format!("{what} (unverifiable: {reason})"),
                });
            }
            if let Some(w) = a.write.first() {
                return Some(ReadViolation {
                    tool: t.name.clone(),
                    path: format!("{} (a write)", self.resolve(w).display()),
                });
            }
            a.read.iter().chain(&a.search).find_map(|p| {
                let p = self.resolve(p);
                (!self.allowed.contains(&p)).then(|| ReadViolation {
                    tool: t.name.clone(),
                    path: p.display().to_string(),
                })
            })
        })
    }

    /// Whether some tool use read the pinned target itself.
    pub fn read_target(&self, uses: &[ToolUse]) -> bool {
        uses.iter()
            .flat_map(|t| &t.access.read)
            .any(|p| self.resolve(p) == self.target)
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
