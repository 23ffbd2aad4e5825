//! Read membership and tool-use gates: which paths an agent touched, normalised and checked.
//!
//! Backend-neutral: every backend's parser fills `ToolUse::access` (Claude `Read`/`Grep`/
//! `Glob`, Codex shell commands, Gemini `read_file`/`grep_search`/`glob`/`list_directory`),
//! and the rules here are the same for all: every read or searched path must be in scope, a
//! write is always a violation, and a tool use whose accesses cannot be derived (e.g. a Codex
//! `find` or a script) is a violation too — fail closed, since arev cannot show it stayed
//! inside the target. Paths are compared by where they resolve, never by how they are
//! spelled, and a symlink never widens the scope (see `ReadScope`).

use crate::dispatch::ToolUse;
use crate::target::{ContextMode, ContextScope};
use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

/// A tool use that touched something outside the target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadViolation {
    pub tool: String,
    pub path: String,
}

/// The set of paths agents may touch: ALLOWED_FILES (under `root`) ∪ the target artefacts ∪
/// (with [`ReadScope::with_context`]) the context scope's files.
///
/// Every access is checked by its *resolved* path (symlinks followed, as the agent's read
/// would): an artefact arev wrote, or a path inside the repository root that is itself in
/// ALLOWED_FILES. ALLOWED_FILES are taken literally (joined to the canonical root, never
/// resolved), so a link among them cannot make its destination readable: reading it
/// resolves outside the allowed set and is a violation.
#[derive(Debug, Clone)]
pub struct ReadScope {
    root: PathBuf,
    target: PathBuf,
    artefacts: HashSet<PathBuf>,
    allowed: HashSet<PathBuf>,
    /// The Prover's scope: every path that resolves inside `root` (its scratch worktree).
    whole_tree: bool,
    /// The context scope (`[review] context = "tree"`): its files may be read too.
    context: Option<Arc<ContextScope>>,
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
        let root = root.canonicalize().unwrap_or_else(|_| lexical(root, root));
        // Inside the root a path is taken literally (so a file swapped for a link resolves
        // away from it); run-dir artefacts outside the root are resolved once (the run dir
        // may sit under a symlinked prefix such as `/tmp`).
        let pin = |p: &Path| {
            let l = lexical(p, &root);
            if l.starts_with(&root) {
                l
            } else {
                resolved(p, &root)
            }
        };
        let target = pin(target);
        let allowed: HashSet<PathBuf> = allowed_files
            .map(|f| lexical(Path::new(f), &root))
            .collect();
        let mut artefacts: HashSet<PathBuf> = extra.iter().map(|p| pin(p)).collect();
        artefacts.insert(target.clone());
        Self {
            root,
            target,
            artefacts,
            allowed,
            whole_tree: false,
            context: None,
        }
    }

    /// This scope with the context scope's files readable too (nothing changes for
    /// `context = "target"`, whose files are the target's). `extra` adds artefacts (e.g.
    /// `target/context.txt`).
    pub fn with_context(mut self, context: Option<Arc<ContextScope>>, extra: &[PathBuf]) -> Self {
        self.context = context.filter(|c| c.mode() == ContextMode::Tree);
        if self.context.is_some() {
            for p in extra {
                let r = resolved(p, &self.root);
                self.artefacts.insert(r);
            }
        }
        self
    }

    /// Whether the resolved `p` is a file of the context scope (taken literally: the scope
    /// holds no links, and a path that resolves through one lands elsewhere).
    fn in_context(&self, p: &Path) -> bool {
        let Some(c) = &self.context else {
            return false;
        };
        p.strip_prefix(&self.root)
            .ok()
            .and_then(Path::to_str)
            .is_some_and(|rel| c.contains(rel))
    }

    /// The repo-relative path of a read that is a context file (in the scope, not a target
    /// file): for the per-agent record of context reads.
    pub fn context_file(&self, p: &str) -> Option<String> {
        let r = self.resolve(p);
        if self.allowed.contains(&r) || !self.in_context(&r) {
            return None;
        }
        r.strip_prefix(&self.root)
            .ok()
            .and_then(Path::to_str)
            .map(str::to_owned)
    }

    /// The Prover's scope: anything that resolves inside `root` (a scratch worktree of the
    /// reviewed content: a link in it that points out resolves outside), the target and
    /// `extra` artefacts.
    pub fn tree(root: &Path, target: &Path, extra: &[PathBuf]) -> Self {
        Self {
            whole_tree: true,
            ..Self::new(root, std::iter::empty(), target, extra)
        }
    }

    /// The (canonical) repository root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn resolve(&self, p: &str) -> PathBuf {
        if p.is_empty() {
            self.root.clone()
        } else {
            resolved(Path::new(p), &self.root)
        }
    }

    /// Whether the resolved path `p` may be touched. VCS metadata never may: a path with a
    /// `.git` component below the root (the repository's `.git/`, a worktree's or
    /// submodule's `.git` file) is off-target whatever lists it.
    fn in_scope(&self, p: &Path) -> bool {
        if is_vcs_metadata(p.strip_prefix(&self.root).unwrap_or(p)) {
            return false;
        }
        self.artefacts.contains(p)
            || (p.starts_with(&self.root)
                && (self.whole_tree || self.allowed.contains(p) || self.in_context(p)))
    }

    /// Whether the resolved `p` lies below the root, outside VCS metadata.
    fn in_tree(&self, p: &Path) -> bool {
        p.starts_with(&self.root) && !is_vcs_metadata(p.strip_prefix(&self.root).unwrap_or(p))
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
            // The Prover's scope (a scratch worktree) takes its new files: a write inside it
            // is the write gate's and the pre-run check's to judge, not a read. Any other
            // write fails here.
            if let Some(w) = a
                .write
                .iter()
                .find(|w| !(self.whole_tree && self.in_tree(&self.resolve(w))))
            {
                return Some(ReadViolation {
                    tool: t.name.clone(),
                    path: format!("{} (a write)", self.resolve(w).display()),
                });
            }
            a.read.iter().chain(&a.search).find_map(|p| {
                let r = self.resolve(p);
                (!self.in_scope(&r)).then(|| ReadViolation {
                    tool: t.name.clone(),
                    path: r.display().to_string(),
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

/// Whether `p` names VCS metadata: a `.git` component anywhere in it.
pub fn is_vcs_metadata(p: &Path) -> bool {
    p.components()
        .any(|c| matches!(c, Component::Normal(n) if n == ".git"))
}

/// Absolute (relative paths joined to `cwd`), `.`/`..` resolved lexically; no file-system
/// access.
fn lexical(p: &Path, cwd: &Path) -> PathBuf {
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
    out
}

/// Where an access of `p` really lands: every symlink resolved, like the OS resolves it
/// (`..` after a link climbs from the link's destination). For a path that does not exist,
/// its longest existing ancestor is resolved and the rest appended.
fn resolved(p: &Path, cwd: &Path) -> PathBuf {
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    };
    if let Ok(c) = abs.canonicalize() {
        return c;
    }
    let lex = lexical(&abs, cwd);
    for anc in lex.ancestors().skip(1) {
        if let Ok(c) = anc.canonicalize() {
            if let Ok(rest) = lex.strip_prefix(anc) {
                return c.join(rest);
            }
        }
    }
    lex
}
