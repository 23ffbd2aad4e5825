//! Builders shared by unit tests (compiled only under `cfg(test)`).

use crate::findings::{ArtefactType, Finding, Severity};
use crate::target::{Hunk, Mode, PinnedTarget, TargetFile, TargetKind, TargetType};
use std::collections::BTreeMap;
use std::path::Path;

/// SARIF schema validation against the in-repo fixture (shared with the integration tests).
#[path = "../tests/support/sarif_schema.rs"]
pub(crate) mod sarif_schema;

/// A manifest-like target rooted at `root` with `files` as (path, lines).
pub(crate) fn target(root: &Path, kind: TargetKind, files: &[(&str, u32)]) -> PinnedTarget {
    let mut files: Vec<TargetFile> = files
        .iter()
        .map(|(p, n)| TargetFile {
            path: (*p).to_string(),
            sha256: "0".repeat(64),
            lines: *n,
        })
        .collect();
    files.sort_by(|a, b| a.path.cmp(&b.path));
    PinnedTarget {
        kind,
        display: "test".into(),
        root: root.to_path_buf(),
        in_repo: true,
        file_path: None,
        artefact: None,
        sha256: "f".repeat(64),
        files,
        skipped: vec![],
        hunks: BTreeMap::new(),
        base: None,
        base_tree: None,
        measured_lines: 10,
        mode: Mode::Lightweight,
        target_type: TargetType::Code,
        brief: String::new(),
        keys: None,
        context: None,
    }
}

/// Add hunks for a diff target.
pub(crate) fn with_hunks(mut t: PinnedTarget, file: &str, hunks: &[(u32, u32)]) -> PinnedTarget {
    t.hunks.insert(
        file.to_string(),
        hunks
            .iter()
            .map(|&(start, end)| Hunk { start, end })
            .collect(),
    );
    t
}

/// A finding with the given place and category.
pub(crate) fn finding(id: &str, file: Option<&str>, line: Option<u32>, cat: &str) -> Finding {
    Finding {
        id: id.into(),
        severity: Severity::Medium,
        target_type: ArtefactType::Code,
        file: file.map(Into::into),
        line,
        category: cat.into(),
        description: format!("{cat} problem"),
        evidence: "quoted".into(),
        source: "enthusiast".into(),
        prior_finding_id: None,
    }
}
