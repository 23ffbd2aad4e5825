//! Finding membership: every file a finding or ruling names must be in ALLOWED_FILES, and
//! every section a spec-track finding names must exist in the document.

use super::sections::Outline;
use crate::target::{PinnedTarget, TargetType};
use std::borrow::Cow;

/// Result of checking one named file: the name, or the part of it that counts, borrowed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileCheck<'f> {
    /// In the target; the normalised repo-relative path.
    Allowed(&'f str),
    /// Not in the target; the name as written (trimmed).
    Offtarget(&'f str),
}

/// Normalise a file named by an agent (`./a.rs`, `/abs/root/a.rs`, `a.rs`) to the
/// repo-relative form and check it. Spec targets name sections (`## Design / Cache`),
/// which are accepted as long as they are headings or the spec file itself.
pub fn normalize_finding_file<'f>(file: &'f str, target: &PinnedTarget) -> FileCheck<'f> {
    let raw = file.trim();
    if target.target_type == TargetType::Spec && (raw.starts_with('#') || raw.is_empty()) {
        return FileCheck::Allowed(raw);
    }
    let rel = repo_relative(raw, target);
    if target.is_allowed(rel) {
        FileCheck::Allowed(rel)
    } else {
        FileCheck::Offtarget(raw)
    }
}

/// Where a finding or ruling points, after the membership checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place<'f> {
    /// In the target: the repo-relative file (for a spec, the canonical section path) and the
    /// line (for a section named without one, its heading's line). Borrowed from the name
    /// checked when it is a part of it (thousands of checks a round, most already
    /// repo-relative).
    Allowed {
        file: Cow<'f, str>,
        line: Option<u32>,
    },
    /// A context file (project rules): readable, but not part of the target.
    Context(String),
    /// Neither in the target nor context: a file outside it, or a section the document does
    /// not have.
    Offtarget(String),
}

/// `file` (as an agent wrote it) made repository-relative: the root prefix and `./` dropped.
pub fn repo_relative<'f>(file: &'f str, target: &PinnedTarget) -> &'f str {
    let raw = file.trim();
    let mut rel = raw;
    let root = target.root.to_string_lossy();
    if let Some(stripped) = rel.strip_prefix(root.as_ref()) {
        rel = stripped.trim_start_matches('/');
    }
    while let Some(s) = rel.strip_prefix("./") {
        rel = s;
    }
    rel
}

/// The membership check of a finding's or ruling's `file` and `line`: a target file, a
/// section that exists in a spec document (`outline`, docs/architecture.md §19.5), a context
/// file (`context`: the project rules), or off-target.
pub fn check_place<'f>(
    file: &'f str,
    line: Option<u32>,
    target: &PinnedTarget,
    outline: Option<&Outline>,
    context: &[String],
) -> Place<'f> {
    let raw = file.trim();
    if target.target_type == TargetType::Spec && raw.starts_with('#') {
        return match outline {
            Some(o) => match o.resolve(raw, line) {
                Some(s) => Place::Allowed {
                    file: Cow::Owned(s.path),
                    line: line.or(Some(s.line)),
                },
                None => Place::Offtarget(raw.to_string()),
            },
            None => Place::Allowed {
                file: Cow::Borrowed(raw),
                line,
            },
        };
    }
    match normalize_finding_file(raw, target) {
        FileCheck::Allowed(rel) => Place::Allowed {
            file: Cow::Borrowed(rel),
            line,
        },
        FileCheck::Offtarget(bad) => {
            let rel = repo_relative(bad, target);
            if context.iter().any(|c| c == rel) {
                Place::Context(rel.to_owned())
            } else {
                Place::Offtarget(bad.to_owned())
            }
        }
    }
}
