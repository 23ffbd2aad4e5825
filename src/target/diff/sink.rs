//! Where a rendered patch goes, one file at a time: the pin's spool file (with its digest,
//! line count, brief and drift pre-key), a hasher, or per-path chunks.

use crate::target::brief::DiffBrief;
use crate::target::scan::count_lines;
use crate::target::statkey::StatKey;
use crate::target::TargetError;
use git2::Oid;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

/// A pinned diff.patch, spooled to a temporary file (removed when dropped), with the drift
/// pre-key taken while it was rendered.
#[derive(Debug)]
pub struct PatchSpool {
    pub(super) path: tempfile::TempPath,
    pub(super) len: u64,
    pub(super) key: DriftKey,
}

impl PatchSpool {
    /// The spool file (copied into the run dir as `target/diff.patch`).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Bytes of the patch.
    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl PartialEq for PatchSpool {
    fn eq(&self, other: &Self) -> bool {
        *self.path == *other.path
    }
}

impl Eq for PatchSpool {}

/// What a diff's bytes depend on, cheaply checkable at the end of a run: the base tree, the
/// index file and, for every file of the patch, its bytes in the spool and the stat
/// pre-key of its working-tree file.
#[derive(Debug, Clone)]
pub(super) struct DriftKey {
    pub(super) base_tree: Option<Oid>,
    pub(super) index: Option<StatKey>,
    /// The patch is the staged diff (its new side is the index, not the working tree).
    pub(super) staged: bool,
    /// When the keys were taken (before any file was read).
    pub(super) taken_ns: i64,
    pub(super) entries: Vec<SpooledFile>,
}

/// One file's part of the spooled patch.
#[derive(Debug, Clone)]
pub(super) struct SpooledFile {
    pub(super) path: String,
    pub(super) offset: u64,
    pub(super) len: u64,
    /// The working-tree file's key before it was read (None: deleted or missing).
    pub(super) stat: Option<StatKey>,
}

/// Where a rendered patch goes, one reviewed file at a time.
pub(crate) trait PatchSink {
    /// The part of the patch for `path` (whole lines, git's bytes).
    fn file(&mut self, path: &str, chunk: &[u8]) -> std::io::Result<()>;
}

impl PatchSink for Sha256 {
    fn file(&mut self, _path: &str, chunk: &[u8]) -> std::io::Result<()> {
        self.update(chunk);
        Ok(())
    }
}

/// The pin's sink: spool file, digest, line count, brief and each file's byte range.
pub(super) struct SpoolSink {
    pub(super) out: std::io::BufWriter<tempfile::NamedTempFile>,
    pub(super) hasher: Sha256,
    pub(super) len: u64,
    pub(super) lines: u64,
    pub(super) brief: DiffBrief,
    pub(super) ranges: Vec<(u64, u64)>,
}

impl SpoolSink {
    pub(super) fn new() -> Result<Self, TargetError> {
        let file = tempfile::Builder::new()
            .prefix(".arev-diff-")
            .suffix(".patch")
            .tempfile()
            .map_err(spool_err)?;
        Ok(Self {
            out: std::io::BufWriter::with_capacity(256 * 1024, file),
            hasher: Sha256::new(),
            len: 0,
            lines: 0,
            brief: DiffBrief::default(),
            ranges: Vec::new(),
        })
    }
}

impl PatchSink for SpoolSink {
    fn file(&mut self, _path: &str, chunk: &[u8]) -> std::io::Result<()> {
        self.out.write_all(chunk)?;
        self.hasher.update(chunk);
        let len = chunk.len() as u64;
        self.ranges.push((self.len, len));
        self.len += len;
        self.lines += u64::from(count_lines(chunk));
        self.brief.feed(&String::from_utf8_lossy(chunk));
        Ok(())
    }
}

/// A spool file's I/O error as a target error.
pub(super) fn spool_err(e: std::io::Error) -> TargetError {
    TargetError::Spool(e.to_string())
}

/// A patch hashed and counted as it is rendered (nothing kept).
#[derive(Default)]
pub(super) struct HashSink {
    pub(super) hasher: Sha256,
    pub(super) lines: u64,
}

impl PatchSink for HashSink {
    fn file(&mut self, _path: &str, chunk: &[u8]) -> std::io::Result<()> {
        self.hasher.update(chunk);
        self.lines += u64::from(count_lines(chunk));
        Ok(())
    }
}

/// Collects the re-rendered parts of the patch per path.
#[derive(Default)]
pub(super) struct Chunks(pub(super) HashMap<String, Vec<u8>>);

impl PatchSink for Chunks {
    fn file(&mut self, path: &str, chunk: &[u8]) -> std::io::Result<()> {
        self.0
            .entry(path.to_owned())
            .or_default()
            .extend_from_slice(chunk);
        Ok(())
    }
}
