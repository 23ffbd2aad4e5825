//! Anchor gate: a finding's line must exist in its file (for diffs: inside a hunk of that file).

use crate::findings::Finding;
use crate::target::{PinnedTarget, TargetKind, TargetType};

/// Whether the finding's (file, line) is a real place in the target. Findings without a
/// file or line always pass. Spec findings name a section as `file` and a line of the
/// (single) spec document.
pub fn anchor_ok(f: &Finding, target: &PinnedTarget) -> bool {
    if target.target_type == TargetType::Spec {
        return match (f.line, target.files.first()) {
            (Some(line), Some(doc)) => line >= 1 && line <= doc.lines,
            _ => true,
        };
    }
    let (Some(file), Some(line)) = (f.file.as_deref(), f.line) else {
        return true;
    };
    if line == 0 {
        return false;
    }
    let Some(tf) = target.file(file) else {
        return false;
    };
    match target.kind {
        TargetKind::Diff => target
            .hunks
            .get(file)
            .is_some_and(|hs| hs.iter().any(|h| h.start <= line && line <= h.end)),
        TargetKind::File | TargetKind::Manifest => line <= tf.lines,
    }
}
