//! One file of a diff: the delta to read and diff (`Step`, `Job`), its two sides read (the
//! working tree's without following links, oversized sides never loaded), diffed as
//! buffers, and its part of the patch written (`Done`, `Entry`).

use super::base::git_err;
use super::header::{first_hunk, mode_str, Header};
use crate::target::scan::{count_lines, read_regular_meta, ScanError};
use crate::target::statkey::StatKey;
use crate::target::{Hunk, SkipReason, TargetError};
use git2::{DiffOptions, FileMode, Oid, Patch};
use sha2::{Digest, Sha256};
use std::path::Path;

/// Size of a blob from the object header (not loaded); 0 when unknown.
fn blob_size(odb: &git2::Odb<'_>, id: Oid) -> u64 {
    if id.is_zero() {
        return 0;
    }
    odb.read_header(id).map_or(0, |(size, _)| size as u64)
}

/// A blob as the object database holds it (None for the zero id: an empty side).
fn blob<'o>(odb: &'o git2::Odb<'_>, id: Oid) -> Result<Option<git2::OdbObject<'o>>, TargetError> {
    if id.is_zero() {
        return Ok(None);
    }
    odb.read(id).map(Some).map_err(|e| git_err(&e))
}

/// One file of the rendered patch (each sent to the sink in this order).
#[derive(Debug)]
pub(super) struct Entry {
    pub(super) path: String,
    pub(super) deleted: bool,
    pub(super) new_id: Oid,
    pub(super) old_id: Oid,
    /// sha256 and line count of the working-tree file, read without following links.
    pub(super) read: Option<(String, u32)>,
    /// Its stat pre-key, taken before it was read.
    pub(super) stat: Option<StatKey>,
    pub(super) hunks: Vec<Hunk>,
}

/// One delta, in order: listed as skipped without reading anything, or a file to diff.
pub(super) enum Step<'a> {
    Skip(String, SkipReason, Option<String>),
    Diff(Job<'a>),
}

/// A file to read and diff: its path, whether the delta deletes it, the old side (None:
/// the file is new) and the new side's id and mode as git listed them.
pub(super) struct Job<'a> {
    pub(super) path: &'a str,
    pub(super) deleted: bool,
    pub(super) old: Option<(Oid, FileMode)>,
    pub(super) new: (Oid, FileMode),
}

/// What diffing one file gave.
pub(super) enum Done {
    /// No change after all (the index changed it, the working tree changed it back), or a
    /// deletion of a file that was never there.
    Nothing,
    Skip(SkipReason),
    /// Its part of the patch, and what the pin records of it.
    File(Vec<u8>, Box<Entry>),
}

/// What every file's diff reads from: the object database (safe to share between threads),
/// the working tree, the size cap, and which side is new (the working tree or the index).
pub(super) struct Work<'o, 'r> {
    pub(super) odb: &'o git2::Odb<'r>,
    pub(super) root: &'o Path,
    pub(super) cap: u64,
    pub(super) workdir: bool,
}

/// A file's new side as read: the working tree's bytes (with their sha256, line count and
/// stat pre-key) or the index's blob, and whether the file turned out to be gone.
struct NewSide<'o> {
    bytes: Vec<u8>,
    blob: Option<git2::OdbObject<'o>>,
    read: Option<(String, u32)>,
    stat: Option<StatKey>,
    deleted: bool,
}

impl<'o> Work<'o, '_> {
    /// Read and diff one file of `step` (a skipped step gives nothing).
    pub(super) fn diff(&self, step: &Step<'_>) -> Result<Done, TargetError> {
        let Step::Diff(job) = step else {
            return Ok(Done::Nothing);
        };
        let (path, old) = (job.path, job.old);
        // Sizes first, from metadata and object headers: an oversized side is never loaded.
        if old.is_some_and(|(id, _)| blob_size(self.odb, id) > self.cap) {
            return Ok(Done::Skip(SkipReason::TooLarge));
        }
        let side = match self.new_side(job)? {
            Ok(side) => side,
            Err(reason) => return Ok(Done::Skip(reason)),
        };
        let deleted = side.deleted;
        if deleted && old.is_none() {
            return Ok(Done::Nothing);
        }
        let old_blob = match old {
            Some((id, _)) => blob(self.odb, id)?,
            None => None,
        };
        let new_side = side.blob.as_ref().map_or(&side.bytes[..], |o| o.data());
        let old_side = old_blob.as_ref().map_or(&[][..], |o| o.data());
        let p = Path::new(path);
        let mut opts = DiffOptions::new();
        opts.indent_heuristic(true);
        let mut patch = Patch::from_buffers(old_side, Some(p), new_side, Some(p), Some(&mut opts))
            .map_err(|e| git_err(&e))?;
        // The new side's blob id: libgit2 hashed the buffer for the patch.
        let new = (!deleted).then(|| (patch.delta().new_file().id(), job.new.1));
        if patch.delta().flags().is_binary() {
            return Ok(Done::Skip(SkipReason::Binary));
        }
        // A path the index changed and the working tree changed back: no change at all.
        if patch.num_hunks() == 0
            && old.map(|(id, m)| (id, mode_str(m))) == new.map(|(id, m)| (id, mode_str(m)))
        {
            return Ok(Done::Nothing);
        }
        let hunks = hunks_of(&patch, deleted)?;
        let header = Header {
            path,
            old,
            new,
            has_hunks: patch.num_hunks() > 0,
        };
        let chunk = chunk_of(&header, &mut patch)?;
        let entry = Entry {
            path: path.to_owned(),
            deleted,
            new_id: new.map_or(Oid::zero(), |(id, _)| id),
            old_id: old.map_or(Oid::zero(), |(id, _)| id),
            read: side.read,
            stat: side.stat,
            hunks,
        };
        Ok(Done::File(chunk, Box::new(entry)))
    }

    /// The new side of `job`: nothing for a deletion, the working-tree file read without
    /// following links (gone since git looked: a deletion now), or the index's blob; the
    /// reason to skip the file when that side cannot be reviewed.
    fn new_side(&self, job: &Job<'_>) -> Result<Result<NewSide<'o>, SkipReason>, TargetError> {
        let mut side = NewSide {
            bytes: Vec::new(),
            blob: None,
            read: None,
            stat: None,
            deleted: job.deleted,
        };
        if side.deleted {
            return Ok(Ok(side));
        }
        if self.workdir {
            match read_regular_meta(self.root, job.path, self.cap) {
                Ok((bytes, meta)) => {
                    side.read = Some((hex::encode(Sha256::digest(&bytes)), count_lines(&bytes)));
                    side.stat = Some(StatKey::of(&meta));
                    side.bytes = bytes;
                }
                Err(ScanError::Skip(reason, _)) => return Ok(Err(reason)),
                // Gone from the working tree since git looked: a deletion now.
                Err(ScanError::Missing) => side.deleted = true,
            }
        } else if blob_size(self.odb, job.new.0) > self.cap {
            return Ok(Err(SkipReason::TooLarge));
        } else {
            side.blob = blob(self.odb, job.new.0)?;
        }
        Ok(Ok(side))
    }
}

/// The lines each hunk of `patch` covers on the side the pin points at: the new side, or
/// the old one for a deletion.
fn hunks_of(patch: &Patch<'_>, deleted: bool) -> Result<Vec<Hunk>, TargetError> {
    let mut hunks = Vec::with_capacity(patch.num_hunks());
    for h in 0..patch.num_hunks() {
        let (h, _) = patch.hunk(h).map_err(|e| git_err(&e))?;
        let (start, lines) = if deleted {
            (h.old_start(), h.old_lines())
        } else {
            (h.new_start(), h.new_lines())
        };
        // A pure deletion has no new lines: anchor it on the line it follows.
        let start = start.max(1);
        let end = start + lines.saturating_sub(1);
        hunks.push(Hunk { start, end });
    }
    Ok(hunks)
}

/// The file's part of the patch: its header as git writes it, then libgit2's hunks.
fn chunk_of(header: &Header<'_>, patch: &mut Patch<'_>) -> Result<Vec<u8>, TargetError> {
    let mut chunk = Vec::new();
    header.write(&mut chunk);
    if header.has_hunks {
        let buf = patch.to_buf().map_err(|e| git_err(&e))?;
        if let Some(at) = first_hunk(&buf) {
            chunk.extend_from_slice(&buf[at..]);
        }
    }
    Ok(chunk)
}
