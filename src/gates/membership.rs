//! Finding membership: every file a finding or ruling names must be in ALLOWED_FILES.

use crate::target::{PinnedTarget, TargetType};

/// Result of checking one named file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileCheck {
    /// In the target; the normalised repo-relative path.
    Allowed(String),
    /// Not in the target.
    Offtarget(String),
}

/// Normalise a file named by an agent (`./a.rs`, `/abs/root/a.rs`, `a.rs`) to the
/// repo-relative form and check it. Spec targets name sections (`## Design / Cache`),
/// which are accepted as long as they are headings or the spec file itself.
pub fn normalize_finding_file(file: &str, target: &PinnedTarget) -> FileCheck {
    let raw = file.trim();
    if target.target_type == TargetType::Spec && (raw.starts_with('#') || raw.is_empty()) {
        return FileCheck::Allowed(raw.to_string());
    }
    let root = target.root.to_string_lossy();
    let mut rel = raw;
    if let Some(stripped) = rel.strip_prefix(root.as_ref()) {
        rel = stripped.trim_start_matches('/');
    }
    while let Some(s) = rel.strip_prefix("./") {
        rel = s;
    }
    if target.is_allowed(rel) {
        FileCheck::Allowed(rel.to_string())
    } else {
        FileCheck::Offtarget(raw.to_string())
    }
}
