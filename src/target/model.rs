//! The pinned target: what is reviewed, its sha256, the files agents may read, mode and type.

pub use super::spool::PatchSpool;
use super::statkey::StatKey;
pub use crate::records::target::{skip_label, Mode, SkipReason, TargetKind, TargetType};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A file that is part of the review.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TargetFile {
    /// Repo-relative (or cwd-relative outside a repo), `/`-separated.
    pub path: String,
    /// Hex sha256 of the file's bytes (for diff targets: of the working-tree file,
    /// or empty when the file was deleted).
    pub sha256: String,
    /// Number of lines (for the anchor gate).
    pub lines: u32,
}

/// A file left out, with the reason (listed in the report's coverage section).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SkippedFile {
    pub path: String,
    pub reason: SkipReason,
    /// For `excluded`: the glob that matched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub glob: Option<String>,
}

impl SkippedFile {
    pub fn new(path: String, reason: SkipReason) -> Self {
        Self {
            path,
            reason,
            glob: None,
        }
    }

    /// The reason as the coverage shows it: `excluded:<glob>`, else the reason itself.
    pub fn label(&self) -> String {
        skip_label(self.reason, self.glob.as_deref())
    }
}

/// A working-tree snapshot (see [`super::snapshot_diff`]): the tree object written for it and what
/// identifies the diff from a base tree to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// Oid of the tree holding the working tree (tracked and untracked, non-ignored files).
    pub tree: String,
    /// sha256 of the patch `arev run diff --base-tree <base>` pins now.
    pub sha: String,
    /// [`files_digest`] of the files that diff reviews.
    pub files_sha256: String,
    /// The diff's mode (by its patch lines).
    pub mode: Mode,
}

/// New-side line ranges of one file's hunks in a diff (inclusive, 1-based).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Hunk {
    pub start: u32,
    pub end: u32,
}

/// The artefact written under `<run>/target/` (diff.patch or manifest.txt).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Artefact {
    /// File name under `<run>/target/`: `diff.patch` or `manifest.txt`.
    pub name: &'static str,
    pub content: ArtefactContent,
}

/// Where an artefact's bytes are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArtefactContent {
    /// In memory (a manifest: one line per file).
    Bytes(Vec<u8>),
    /// A diff, spooled to a temporary file as it was rendered (a patch can be far larger
    /// than any file in it); removed when the last clone of the target is dropped.
    Patch(Arc<PatchSpool>),
}

impl Artefact {
    /// An artefact held in memory.
    pub fn in_memory(name: &'static str, bytes: Vec<u8>) -> Self {
        Self {
            name,
            content: ArtefactContent::Bytes(bytes),
        }
    }

    /// Its size in bytes.
    pub fn len(&self) -> u64 {
        match &self.content {
            ArtefactContent::Bytes(b) => b.len() as u64,
            ArtefactContent::Patch(p) => p.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// All its bytes (reads a spooled patch back: for tests and small artefacts).
    pub fn read(&self) -> std::io::Result<Vec<u8>> {
        match &self.content {
            ArtefactContent::Bytes(b) => Ok(b.clone()),
            ArtefactContent::Patch(p) => std::fs::read(p.path()),
        }
    }
}

/// Everything the rest of arev needs to know about the target. Immutable once built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PinnedTarget {
    pub kind: TargetKind,
    /// The target as the user gave it (`diff`, `src/lib.rs`, `src/**/*.rs a.rs`).
    pub display: String,
    /// Absolute root that `files[].path` are relative to (repo workdir, or cwd outside a repo).
    pub root: PathBuf,
    /// Whether `root` is a git work tree.
    pub in_repo: bool,
    /// For `File`: absolute path of the file. For `Diff`/`Manifest`: None (the artefact
    /// is written into the run dir and its path is known only then).
    pub file_path: Option<PathBuf>,
    /// The bytes to write to `<run>/target/<name>` for diff and manifest targets.
    pub artefact: Option<Artefact>,
    /// TARGET_SHA (docs/architecture.md §5).
    pub sha256: String,
    /// The reviewed files, sorted by path. ALLOWED_FILES is their paths.
    pub files: Vec<TargetFile>,
    /// Files left out (binary, too large, …).
    pub skipped: Vec<SkippedFile>,
    /// For diff targets: hunks per file (new side; old side for deleted files).
    pub hunks: BTreeMap<String, Vec<Hunk>>,
    /// `--base REV` as given, for diff targets.
    pub base: Option<String>,
    /// `--base-tree OID`: the diff starts from this tree (a working-tree snapshot) instead.
    pub base_tree: Option<String>,
    /// Lines of the target measured for mode selection (file lines, diff lines, total).
    pub measured_lines: u64,
    pub mode: Mode,
    pub target_type: TargetType,
    /// CONTEXT_BRIEF (≤ ~2 KB), computed from the target only.
    pub brief: String,
    /// File and manifest targets: each file's stat pre-key, for the end-of-run drift check
    /// (a diff keeps its own in its pin).
    pub keys: Option<Arc<PinKeys>>,
    /// The context scope (what agents may read besides the target), built once after the
    /// pin ([`PinnedTarget::with_context`]); None = none built (an empty run), read as the
    /// target's own files.
    pub context: Option<Arc<super::ContextScope>>,
}

/// What `fstat` said of each file of a file or manifest target as it was read, and when
/// the keys were taken: at the end of the run only the files whose key moved (or that
/// changed within [`super::statkey::RACY_MARGIN_NS`] of the pin) are read and hashed again
/// (docs/architecture.md §5.1).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PinKeys {
    pub taken_ns: i64,
    pub by_path: HashMap<String, StatKey>,
}

impl PinKeys {
    /// Whether `rel`'s content is proven unchanged since the pin: its key was taken, a fresh
    /// `lstat` of `root/rel` gives the same key, and the file had not changed just before.
    pub fn unchanged(&self, root: &Path, rel: &str) -> bool {
        self.by_path.get(rel).is_some_and(|k| {
            let now = StatKey::lstat(&root.join(rel)).ok().flatten();
            k.still(now.as_ref(), self.taken_ns)
        })
    }
}

/// What a review's verdict depends on in a pinned target (part of the verdict-cache key,
/// docs/architecture.md §20.4): its kind, TARGET_SHA, the content of every reviewed file (a
/// diff's patch does not pin the rest of its files, which agents may read), type and mode.
/// Computable without the rest of a `PinnedTarget`: the Stop hook derives it from its
/// snapshot (`Snapshot::identity`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetIdentity {
    pub kind: TargetKind,
    /// TARGET_SHA.
    pub sha256: String,
    /// [`files_digest`] of the reviewed files.
    pub files_sha256: String,
    pub target_type: TargetType,
    pub mode: Mode,
}

/// sha256 (hex) over `"<sha256>  <path>\n"` of every file, in the given (path) order.
pub fn files_digest<'a>(files: impl IntoIterator<Item = &'a TargetFile>) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for f in files {
        h.update(format!("{}  {}\n", f.sha256, f.path));
    }
    hex::encode(h.finalize())
}

impl PinnedTarget {
    /// What the verdict of reviewing this target depends on in it.
    pub fn identity(&self) -> TargetIdentity {
        TargetIdentity {
            kind: self.kind,
            sha256: self.sha256.clone(),
            files_sha256: files_digest(&self.files),
            target_type: self.target_type,
            mode: self.mode,
        }
    }

    /// ALLOWED_FILES: repo-relative paths agents may read and findings may name.
    pub fn allowed_files(&self) -> impl Iterator<Item = &str> {
        self.files.iter().map(|f| f.path.as_str())
    }

    pub fn is_allowed(&self, rel: &str) -> bool {
        self.files
            .binary_search_by(|f| f.path.as_str().cmp(rel))
            .is_ok()
    }

    pub fn file(&self, rel: &str) -> Option<&TargetFile> {
        self.files
            .binary_search_by(|f| f.path.as_str().cmp(rel))
            .ok()
            .map(|i| &self.files[i])
    }
}

/// A one-line account of skipped files for an error message: counts by reason with the
/// first few paths, e.g. `2 binary (a.png, b.png), 1 too_large (big.log)`.
pub fn skip_summary(skipped: &[SkippedFile]) -> String {
    const SHOWN: usize = 3;
    let mut by: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for s in skipped {
        by.entry(s.label()).or_default().push(&s.path);
    }
    if by.is_empty() {
        return "no files".into();
    }
    by.iter()
        .map(|(reason, paths)| {
            let mut names = paths
                .iter()
                .take(SHOWN)
                .copied()
                .collect::<Vec<_>>()
                .join(", ");
            if paths.len() > SHOWN {
                names.push_str(", …");
            }
            format!("{} {reason}: {names}", paths.len())
        })
        .collect::<Vec<_>>()
        .join("; ")
}
