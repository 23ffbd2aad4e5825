//! Where a rendered patch goes, one file at a time: the pin's spool file (with its digest,
//! line count, brief and drift pre-key), a hasher, or per-path chunks.

use crate::target::brief::DiffBrief;
use crate::target::scan::count_lines;
use crate::target::TargetError;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::io::Write;

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
