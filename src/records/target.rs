//! The target as the records name it: its kind, mode and type, why a file was skipped, and
//! a shard's slice (docs/architecture.md §5).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How the target was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TargetKind {
    /// The working tree (or a base) against HEAD, as `target/diff.patch`.
    Diff,
    /// One file, pinned as itself.
    File,
    /// Several paths or a glob, as `target/manifest.txt`.
    Manifest,
}

impl TargetKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Diff => "diff",
            Self::File => "file",
            Self::Manifest => "manifest",
        }
    }
}

/// LIGHTWEIGHT (3 rounds) or FULL (10 rounds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum Mode {
    Lightweight,
    Full,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Lightweight => "LIGHTWEIGHT",
            Self::Full => "FULL",
        }
    }

    /// Default round ceiling for the mode.
    pub fn max_rounds(self) -> u32 {
        match self {
            Self::Lightweight => 3,
            Self::Full => 10,
        }
    }

    /// Default number of Enthusiast passes per round.
    pub fn passes(self) -> u32 {
        match self {
            Self::Lightweight => 1,
            Self::Full => 2,
        }
    }
}

/// `code` or `spec`: selects the agent variants and the checklist.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TargetType {
    Code,
    Spec,
}

/// Why a file was left out of the review: `binary`, `too_large`, `not_utf8`, `unreadable`,
/// `symlink` (never followed), `submodule`, `run_dir` (arev's own output),
/// `control_chars` (a name with a newline or another control character, listed escaped),
/// or an exclude (docs/architecture.md §19.3): `excluded` (a configured or `--exclude` glob,
/// named in the entry's `glob`), `generated` / `vendored` (`.gitattributes`
/// `linguist-generated` / `linguist-vendored`), `lockfile`; `arev_dir` (a changed path
/// under `.arev/`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SkipReason {
    Binary,
    TooLarge,
    NotUtf8,
    Unreadable,
    // A symbolic link: never followed, never hashed through, never readable by agents.
    Symlink,
    // A git submodule (its commit pointer or its dirty work tree): not reviewable content.
    Submodule,
    // An arev run directory (or the configured run-dir base): arev's own output.
    RunDir,
    // A name holding a newline or another control character, which a one-path-per-line
    // listing cannot carry (listed escaped, e.g. `a\nb.rs`).
    ControlChars,
    // Matched a `[review] exclude` or `--exclude` glob (the entry names the glob).
    Excluded,
    // Marked `linguist-generated` in .gitattributes.
    Generated,
    // Marked `linguist-vendored` in .gitattributes.
    Vendored,
    // A well-known lockfile (`[review] skip_lockfiles`).
    Lockfile,
    // A changed path under `.arev/` (arev's own directory: repository inputs, run dirs),
    // never reviewed as code; in a diff, an unreviewed change.
    ArevDir,
}

impl SkipReason {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Binary => "binary",
            Self::TooLarge => "too_large",
            Self::NotUtf8 => "not_utf8",
            Self::Unreadable => "unreadable",
            Self::Symlink => "symlink",
            Self::Submodule => "submodule",
            Self::RunDir => "run_dir",
            Self::ControlChars => "control_chars",
            Self::Excluded => "excluded",
            Self::Generated => "generated",
            Self::Vendored => "vendored",
            Self::Lockfile => "lockfile",
            Self::ArevDir => "arev_dir",
        }
    }
}

/// `excluded:<glob>` for an excluded file, else the reason's name.
pub fn skip_label(reason: SkipReason, glob: Option<&str>) -> String {
    match (reason, glob) {
        (SkipReason::Excluded, Some(g)) => format!("excluded:{g}"),
        (r, _) => r.as_str().to_string(),
    }
}

/// What a shard's report records: which slice it is, the FULL manifest's identity, and the
/// files this shard covered. `arev merge` checks these across shards.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShardInfo {
    /// 1-based slice index.
    pub index: u32,
    /// Number of slices.
    pub count: u32,
    /// TARGET_SHA of the full manifest (docs/architecture.md §5), which every shard must
    /// agree on.
    pub manifest_sha256: String,
    /// Every reviewable file of the full manifest, in manifest order.
    pub manifest_files: Vec<String>,
    /// The files of `manifest_files` assigned to (and reviewed by) this shard, sorted.
    pub files: Vec<String>,
}
