//! Diff targets: HEAD (or merge-base with `--base`) vs the working tree, index and untracked
//! files included, with the staged-diff fallback; rendered byte for byte as plain git renders
//! it (docs/architecture.md §5.1: full object ids, no rename detection) and holding only the
//! reviewed files (links, submodules, run dirs, oversized and binary files are listed as
//! skipped and never loaded or followed). The patch is streamed one file at a time into a
//! sink — a spool file with its digest, line count and brief, or just a hasher — so memory
//! stays bounded by the size cap, not the patch; the spool remembers each file's bytes and
//! stat pre-key so that the end-of-run drift check re-renders only files that moved.
//! Also snapshots: the working tree written as a git tree object through a private index
//! (the Stop hook's baseline), and the diff of a snapshot tree against the working tree
//! now, rendered and streamed the same way.

use super::brief::DiffBrief;
use super::exclude::Excluder;
use super::scan::{
    count_lines, escape_path, has_control_chars, hex, is_run_dir, read_regular_meta, ScanError,
};
use super::statkey::{now_ns, StatKey};
use super::{Excludes, Hunk, SkipReason, SkippedFile, TargetError, TargetFile};
use git2::{
    Delta, Diff, DiffOptions, ErrorCode, FileMode, Index, IndexAddOption, Oid, Patch, Repository,
    Tree,
};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

/// The run directory's home inside a repository; never part of a diff.
const RUN_DIR: &str = ".arev";

/// At most this many paths are handed to libgit2 as a pathspec (its matching is linear in
/// the pathspec per path); a longer list is filtered after the diff instead.
const PATHSPEC_MAX: usize = 64;

/// A pinned diff: the patch spooled to a temporary file, and what was measured on the way.
#[derive(Debug)]
pub(crate) struct DiffPin {
    pub spool: PatchSpool,
    /// sha256 of the patch (TARGET_SHA).
    pub sha256: String,
    /// Lines of the patch.
    pub lines: u64,
    pub brief: String,
    pub files: Vec<TargetFile>,
    pub skipped: Vec<SkippedFile>,
    pub hunks: BTreeMap<String, Vec<Hunk>>,
}

/// A pinned diff.patch, spooled to a temporary file (removed when dropped), with the drift
/// pre-key taken while it was rendered.
#[derive(Debug)]
pub struct PatchSpool {
    path: tempfile::TempPath,
    len: u64,
    key: DriftKey,
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
struct DriftKey {
    base_tree: Option<Oid>,
    index: Option<StatKey>,
    /// The patch is the staged diff (its new side is the index, not the working tree).
    staged: bool,
    /// When the keys were taken (before any file was read).
    taken_ns: i64,
    entries: Vec<SpooledFile>,
}

/// One file's part of the spooled patch.
#[derive(Debug, Clone)]
struct SpooledFile {
    path: String,
    offset: u64,
    len: u64,
    /// The working-tree file's key before it was read (None: deleted or missing).
    stat: Option<StatKey>,
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
struct SpoolSink {
    out: std::io::BufWriter<tempfile::NamedTempFile>,
    hasher: Sha256,
    len: u64,
    lines: u64,
    brief: DiffBrief,
    ranges: Vec<(u64, u64)>,
}

impl SpoolSink {
    fn new() -> Result<Self, TargetError> {
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

fn spool_err(e: std::io::Error) -> TargetError {
    TargetError::Spool(e.to_string())
}

/// Which files of a diff are reviewed (everything else is left out of the patch).
#[derive(Debug, Clone, Default)]
pub(crate) struct DiffRules<'a> {
    /// `max_file_bytes`: a side over it is `too_large` and never loaded.
    pub cap: u64,
    /// Root-relative run-dir bases (besides `.arev/` and detected run dirs).
    pub run_dirs: &'a [String],
    /// Only these paths (re-pinning a target's own files); None = every changed path.
    pub only: Option<&'a BTreeSet<String>>,
    /// Excluded globs, generated/vendored files and lockfiles (listed as skipped).
    pub excludes: Option<&'a Excludes>,
}

impl<'a> DiffRules<'a> {
    /// Every changed path under the size cap `cap` and `excludes`, no extra run dirs: the
    /// rules `arev run diff` pins under with a configuration (the hook's and `diff_sha`'s).
    pub fn whole_tree(cap: u64, excludes: &'a Excludes) -> Self {
        Self {
            cap,
            run_dirs: &[],
            only: None,
            excludes: Some(excludes),
        }
    }
}

/// Where a diff starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DiffBase<'a> {
    /// HEAD's tree, or merge-base(REV, HEAD)'s with `--base REV`; the new side is the
    /// working tree with the index and untracked files, with the staged-diff fallback.
    Head(Option<&'a str>),
    /// A tree object (`--base-tree`, a working-tree snapshot); the new side is a snapshot of
    /// the working tree now (no staged fallback: the snapshot holds the index's content).
    Tree(&'a str),
}

/// One file of the rendered patch (each sent to the sink in this order).
#[derive(Debug)]
struct Entry {
    path: String,
    deleted: bool,
    new_id: Oid,
    old_id: Oid,
    /// sha256 and line count of the working-tree file, read without following links.
    read: Option<(String, u32)>,
    /// Its stat pre-key, taken before it was read.
    stat: Option<StatKey>,
    hunks: Vec<Hunk>,
}

/// The files of a rendered patch (the bytes went to the sink).
#[derive(Debug, Default)]
struct Rendered {
    entries: Vec<Entry>,
    skipped: Vec<SkippedFile>,
    /// Whether the diff had any change at all (reviewable or not) outside `.arev/`.
    changed: bool,
}

fn git_err(e: &git2::Error) -> TargetError {
    TargetError::Git(e.message().to_owned())
}

/// The tree the diff starts from: HEAD's, merge-base(REV, HEAD)'s with a base, or None
/// (the empty tree) on an unborn branch.
fn base_tree<'r>(
    repo: &'r Repository,
    base: Option<&str>,
) -> Result<Option<Tree<'r>>, TargetError> {
    let head = match repo.head() {
        Ok(h) => Some(h.peel_to_commit().map_err(|e| git_err(&e))?),
        Err(e) if matches!(e.code(), ErrorCode::UnbornBranch | ErrorCode::NotFound) => None,
        Err(e) => return Err(git_err(&e)),
    };
    let Some(rev) = base else {
        return head.map(|c| c.tree().map_err(|e| git_err(&e))).transpose();
    };
    let bad = |message: String| TargetError::BadBase {
        rev: rev.to_owned(),
        message,
    };
    let base_commit = repo
        .revparse_single(rev)
        .and_then(|o| o.peel_to_commit())
        .map_err(|e| bad(e.message().to_owned()))?;
    let head = head.ok_or_else(|| bad("HEAD has no commits yet".to_owned()))?;
    let mb = repo
        .merge_base(base_commit.id(), head.id())
        .map_err(|e| bad(format!("no merge base with HEAD: {}", e.message())))?;
    let tree = repo
        .find_commit(mb)
        .and_then(|c| c.tree())
        .map_err(|e| git_err(&e))?;
    Ok(Some(tree))
}

/// `(path, deleted)` of a delta: the new path, or the old one for a deletion.
fn delta_path<'a>(delta: &git2::DiffDelta<'a>) -> (&'a [u8], bool) {
    let deleted = delta.status() == Delta::Deleted;
    let file = if deleted {
        delta.old_file()
    } else {
        delta.new_file()
    };
    (file.path_bytes().unwrap_or_default(), deleted)
}

/// arev's own home inside the repository, never part of a diff and not listed.
fn is_arev_home(path: &[u8]) -> bool {
    path.strip_prefix(RUN_DIR.as_bytes())
        .is_some_and(|rest| rest.is_empty() || rest.starts_with(b"/"))
}

/// The run directory `path` lies in, if any: a configured run-dir base, or a directory
/// that is an arev run dir (named like a run id, holding `meta.json`). Cached per directory.
fn run_dir_of(
    root: &Path,
    path: &str,
    bases: &[String],
    cache: &mut HashMap<String, bool>,
) -> Option<String> {
    let mut end = 0;
    while let Some(i) = path[end..].find('/') {
        end += i;
        let dir = &path[..end];
        let hit = bases.iter().any(|b| b == dir)
            || *cache
                .entry(dir.to_owned())
                .or_insert_with(|| is_run_dir(&root.join(dir)));
        if hit {
            return Some(dir.to_owned());
        }
        end += 1;
    }
    None
}

/// Whether a side of a delta is a symlink or a submodule (a gitlink, or an untracked
/// nested repository, which git lists as a directory).
fn special_kind(delta: &git2::DiffDelta<'_>) -> Option<SkipReason> {
    let modes = [delta.old_file().mode(), delta.new_file().mode()];
    if modes.contains(&FileMode::Link) {
        Some(SkipReason::Symlink)
    } else if modes.contains(&FileMode::Commit)
        || modes.contains(&FileMode::Tree)
        || delta_path(delta).0.ends_with(b"/")
    {
        Some(SkipReason::Submodule)
    } else {
        None
    }
}

/// Size of a blob from the object header (not loaded); 0 when unknown.
fn blob_size(odb: &git2::Odb<'_>, id: Oid) -> u64 {
    if id.is_zero() {
        return 0;
    }
    odb.read_header(id).map_or(0, |(size, _)| size as u64)
}

/// `prefix` + `path` as git writes a name in a patch header (core.quotePath): in double
/// quotes with C escapes when it holds a quote, a backslash, a control character or a
/// non-ASCII byte (octal), else as is.
fn quote_path(prefix: &str, path: &str) -> String {
    let needs = path
        .bytes()
        .any(|b| b < 0x20 || b == b'"' || b == b'\\' || b >= 0x7f);
    if !needs {
        return format!("{prefix}{path}");
    }
    let mut out = String::with_capacity(path.len() + 8);
    out.push('"');
    out.push_str(prefix);
    for b in path.bytes() {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\t' => out.push_str("\\t"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            0x07 => out.push_str("\\a"),
            0x08 => out.push_str("\\b"),
            0x0b => out.push_str("\\v"),
            0x0c => out.push_str("\\f"),
            b if !(0x20..0x7f).contains(&b) => out.push_str(&format!("\\{b:03o}")),
            b => out.push(char::from(b)),
        }
    }
    out.push('"');
    out
}

/// A blob mode as git prints it.
fn mode_str(mode: FileMode) -> &'static str {
    match mode {
        FileMode::BlobExecutable => "100755",
        _ => "100644",
    }
}

/// What one file's patch header says.
struct Header<'a> {
    path: &'a str,
    /// None: the file does not exist on that side.
    old: Option<(Oid, FileMode)>,
    new: Option<(Oid, FileMode)>,
    has_hunks: bool,
}

impl Header<'_> {
    /// The header exactly as `git diff-index -p --full-index` writes it: no `index` line for
    /// a change of mode alone, no `---`/`+++` lines without hunks, and a tab after a
    /// `---`/`+++` name holding a space.
    fn write(&self, out: &mut Vec<u8>) {
        use std::fmt::Write as _;
        let a = quote_path("a/", self.path);
        let b = quote_path("b/", self.path);
        let mut h = String::with_capacity(200);
        let _ = writeln!(h, "diff --git {a} {b}");
        let zero = Oid::zero();
        let (old_id, new_id) = (
            self.old.map_or(zero, |(id, _)| id),
            self.new.map_or(zero, |(id, _)| id),
        );
        let mut same_mode = None;
        match (self.old, self.new) {
            (None, Some((_, m))) => {
                let _ = writeln!(h, "new file mode {}", mode_str(m));
            }
            (Some((_, m)), None) => {
                let _ = writeln!(h, "deleted file mode {}", mode_str(m));
            }
            (Some((_, om)), Some((_, nm))) if mode_str(om) != mode_str(nm) => {
                let _ = writeln!(h, "old mode {}\nnew mode {}", mode_str(om), mode_str(nm));
            }
            (Some((_, m)), Some(_)) => same_mode = Some(mode_str(m)),
            (None, None) => {}
        }
        if old_id != new_id {
            match same_mode {
                Some(m) => {
                    let _ = writeln!(h, "index {old_id}..{new_id} {m}");
                }
                None => {
                    let _ = writeln!(h, "index {old_id}..{new_id}");
                }
            }
        }
        if self.has_hunks {
            let tab = |name: &str| if name.contains(' ') { "\t" } else { "" };
            let minus = if self.old.is_some() {
                a
            } else {
                "/dev/null".to_owned()
            };
            let plus = if self.new.is_some() {
                b
            } else {
                "/dev/null".to_owned()
            };
            let _ = writeln!(h, "--- {minus}{}", tab(&minus));
            let _ = writeln!(h, "+++ {plus}{}", tab(&plus));
        }
        out.extend_from_slice(h.as_bytes());
    }
}

/// Offset of the first hunk line (`@@ ` at a line start), if any.
fn first_hunk(buf: &[u8]) -> Option<usize> {
    if buf.starts_with(b"@@ ") {
        return Some(0);
    }
    buf.windows(4).position(|w| w == b"\n@@ ").map(|i| i + 1)
}

/// A blob as the object database holds it (None for the zero id: an empty side).
fn blob<'o>(odb: &'o git2::Odb<'_>, id: Oid) -> Result<Option<git2::OdbObject<'o>>, TargetError> {
    if id.is_zero() {
        return Ok(None);
    }
    odb.read(id).map(Some).map_err(|e| git_err(&e))
}

/// Render `diff` as git prints it, one file at a time into `sink`, with only the files that
/// are reviewed: symlinks, submodules, run dirs, names with control characters, files over
/// the cap (never loaded), excluded files (docs/architecture.md §19.3) and binary files are
/// left out of the patch and listed as skipped. `.arev/` is left out silently. `workdir`: the new side is the working tree (else the
/// index). libgit2 lists the changed paths; each file's two sides are read here (the
/// working tree's without following links) and diffed as buffers, so no attribute or
/// filter lookup happens per file; the header is written as git writes it.
fn render(
    repo: &Repository,
    root: &Path,
    diff: &Diff<'_>,
    rules: &DiffRules<'_>,
    excluder: Option<&Excluder<'_>>,
    workdir: bool,
    sink: &mut dyn PatchSink,
) -> Result<Rendered, TargetError> {
    let mut out = Rendered::default();
    let n = diff.deltas().len();
    // A path that is a link or a submodule on any side (a type change is split into a
    // deletion and an addition) is skipped in all its deltas.
    let mut special: HashMap<String, SkipReason> = HashMap::new();
    for delta in diff.deltas() {
        if let Some(why) = special_kind(&delta) {
            let (path, _) = delta_path(&delta);
            special
                .entry(String::from_utf8_lossy(path).into_owned())
                .or_insert(why);
        }
    }
    let mut listed: HashSet<String> = HashSet::new();
    let mut run_dirs: HashMap<String, bool> = HashMap::new();
    let mut skip = |out: &mut Rendered, path: String, reason: SkipReason, glob: Option<String>| {
        out.changed = true;
        if listed.insert(path.clone()) {
            out.skipped.push(SkippedFile { path, reason, glob });
        }
    };
    // First the checks that need no I/O, in delta order; then the files are read and
    // diffed a window at a time on every core, and their patches go to the sink in order.
    let mut steps: Vec<Step<'_>> = Vec::with_capacity(n);
    for idx in 0..n {
        let Some(delta) = diff.get_delta(idx) else {
            continue;
        };
        let (raw, deleted) = delta_path(&delta);
        if is_arev_home(raw) {
            continue;
        }
        let Ok(path) = std::str::from_utf8(raw) else {
            let path = escape_path(&String::from_utf8_lossy(raw));
            steps.push(Step::Skip(path, SkipReason::NotUtf8, None));
            continue;
        };
        if rules.only.is_some_and(|only| !only.contains(path)) {
            continue;
        }
        if has_control_chars(path) {
            steps.push(Step::Skip(
                escape_path(path),
                SkipReason::ControlChars,
                None,
            ));
            continue;
        }
        if let Some(dir) = run_dir_of(root, path, rules.run_dirs, &mut run_dirs) {
            steps.push(Step::Skip(dir, SkipReason::RunDir, None));
            continue;
        }
        if let Some(why) = special.get(path) {
            let path = path.trim_end_matches('/').to_owned();
            steps.push(Step::Skip(path, *why, None));
            continue;
        }
        if let Some((why, glob)) = excluder.and_then(|e| e.why(path)) {
            steps.push(Step::Skip(path.to_owned(), why, glob));
            continue;
        }
        let (old_file, new_file) = (delta.old_file(), delta.new_file());
        steps.push(Step::Diff(Job {
            path,
            deleted,
            old: (!old_file.id().is_zero() && old_file.mode() != FileMode::Unreadable)
                .then(|| (old_file.id(), old_file.mode())),
            new: (new_file.id(), new_file.mode()),
        }));
    }
    let odb = repo.odb().map_err(|e| git_err(&e))?;
    let work = Work {
        odb: &odb,
        root,
        cap: rules.cap,
        workdir,
    };
    let mut rest = &steps[..];
    while !rest.is_empty() {
        let window = &rest[..rest.len().min(diff_window(rules.cap))];
        rest = &rest[window.len()..];
        // A small diff (the usual Stop-hook review) is rendered here, not handed to the pool.
        let done: Vec<Result<Done, TargetError>> = if window.len() < PARALLEL_FROM {
            window.iter().map(|step| work.diff(step)).collect()
        } else {
            use rayon::prelude::*;
            window.par_iter().map(|step| work.diff(step)).collect()
        };
        for (step, done) in window.iter().zip(done) {
            let path = match step {
                Step::Skip(path, reason, glob) => {
                    skip(&mut out, path.clone(), *reason, glob.clone());
                    continue;
                }
                Step::Diff(job) => job.path,
            };
            match done? {
                Done::Nothing => {}
                Done::Skip(reason) => skip(&mut out, path.to_owned(), reason, None),
                Done::File(chunk, entry) => {
                    out.changed = true;
                    sink.file(path, &chunk).map_err(spool_err)?;
                    out.entries.push(*entry);
                }
            }
        }
    }
    Ok(out)
}

/// How many files are read and diffed together (on every core) before their patches go to
/// the sink in order: each holds at most two sides within the size cap and a patch about as
/// large as both, so the window is sized for `DIFF_WINDOW_BYTES` of them at the cap (16
/// files at the default 1 MiB cap), between 2 and 32.
fn diff_window(cap: u64) -> usize {
    let per_file = cap.saturating_mul(4).max(1);
    usize::try_from(DIFF_WINDOW_BYTES / per_file)
        .unwrap_or(32)
        .clamp(2, 32)
}

/// The memory a window of files may hold at most, beyond what the rest of the pin holds.
const DIFF_WINDOW_BYTES: u64 = 64 << 20;

/// Fewer deltas than this in a window are diffed on the calling thread.
const PARALLEL_FROM: usize = 4;

/// One delta, in order: listed as skipped without reading anything, or a file to diff.
enum Step<'a> {
    Skip(String, SkipReason, Option<String>),
    Diff(Job<'a>),
}

/// A file to read and diff: its path, whether the delta deletes it, the old side (None:
/// the file is new) and the new side's id and mode as git listed them.
struct Job<'a> {
    path: &'a str,
    deleted: bool,
    old: Option<(Oid, FileMode)>,
    new: (Oid, FileMode),
}

/// What diffing one file gave.
enum Done {
    /// No change after all (the index changed it, the working tree changed it back), or a
    /// deletion of a file that was never there.
    Nothing,
    Skip(SkipReason),
    /// Its part of the patch, and what the pin records of it.
    File(Vec<u8>, Box<Entry>),
}

/// What every file's diff reads from: the object database (safe to share between threads),
/// the working tree, the size cap, and which side is new (the working tree or the index).
struct Work<'o, 'r> {
    odb: &'o git2::Odb<'r>,
    root: &'o Path,
    cap: u64,
    workdir: bool,
}

impl Work<'_, '_> {
    fn diff(&self, step: &Step<'_>) -> Result<Done, TargetError> {
        let Step::Diff(job) = step else {
            return Ok(Done::Nothing);
        };
        let (path, old) = (job.path, job.old);
        let mut deleted = job.deleted;
        // Sizes first, from metadata and object headers: an oversized side is never loaded.
        if old.is_some_and(|(id, _)| blob_size(self.odb, id) > self.cap) {
            return Ok(Done::Skip(SkipReason::TooLarge));
        }
        let mut read = None;
        let mut stat = None;
        let mut new_blob = None;
        let new_bytes: Vec<u8> = if deleted {
            Vec::new()
        } else if self.workdir {
            match read_regular_meta(self.root, path, self.cap) {
                Ok((bytes, meta)) => {
                    read = Some((hex(&Sha256::digest(&bytes)), count_lines(&bytes)));
                    stat = Some(StatKey::of(&meta));
                    bytes
                }
                Err(ScanError::Skip(reason, _)) => return Ok(Done::Skip(reason)),
                // Gone from the working tree since git looked: a deletion now.
                Err(ScanError::Missing) => {
                    deleted = true;
                    Vec::new()
                }
            }
        } else if blob_size(self.odb, job.new.0) > self.cap {
            return Ok(Done::Skip(SkipReason::TooLarge));
        } else {
            new_blob = blob(self.odb, job.new.0)?;
            Vec::new()
        };
        if deleted && old.is_none() {
            return Ok(Done::Nothing);
        }
        let old_blob = match old {
            Some((id, _)) => blob(self.odb, id)?,
            None => None,
        };
        let new_side = new_blob.as_ref().map_or(&new_bytes[..], |o| o.data());
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
        let mut chunk = Vec::new();
        Header {
            path,
            old,
            new,
            has_hunks: patch.num_hunks() > 0,
        }
        .write(&mut chunk);
        if patch.num_hunks() > 0 {
            let buf = patch.to_buf().map_err(|e| git_err(&e))?;
            if let Some(at) = first_hunk(&buf) {
                chunk.extend_from_slice(&buf[at..]);
            }
        }
        let entry = Entry {
            path: path.to_owned(),
            deleted,
            new_id: new.map_or(Oid::zero(), |(id, _)| id),
            old_id: old.map_or(Oid::zero(), |(id, _)| id),
            read,
            stat,
            hunks,
        };
        Ok(Done::File(chunk, Box::new(entry)))
    }
}

/// The diff options: full object ids and git's default indent heuristic (what plain git
/// prints), libgit2's binary sniff beyond the cap, and the paths of `rules.only` as a
/// literal pathspec when there are few.
fn options(rules: &DiffRules<'_>, untracked: bool) -> DiffOptions {
    let max_size = i64::try_from(rules.cap).unwrap_or(i64::MAX).max(1);
    let mut opts = DiffOptions::new();
    opts.max_size(max_size).id_abbrev(40).indent_heuristic(true);
    if untracked {
        opts.include_untracked(true)
            .recurse_untracked_dirs(true)
            .show_untracked_content(true);
    }
    if let Some(only) = rules.only.filter(|o| o.len() <= PATHSPEC_MAX) {
        for p in only {
            opts.pathspec(p);
        }
        opts.disable_pathspec_match(true);
    }
    opts
}

/// A rendered diff: its files, whether it is the staged fallback, the base tree, and the
/// snapshot of the working tree it was computed against (for a [`DiffBase::Tree`]).
struct Computed {
    rendered: Rendered,
    staged: bool,
    base_tree: Option<Oid>,
    snapshot: Option<Oid>,
}

/// The tree a diff starts from (None: the empty tree, an unborn branch).
fn start_tree<'r>(
    repo: &'r Repository,
    base: DiffBase<'_>,
) -> Result<Option<Tree<'r>>, TargetError> {
    match base {
        DiffBase::Head(rev) => base_tree(repo, rev),
        DiffBase::Tree(oid) => snapshot_base(repo, oid).map(Some),
    }
}

/// The patch, into `sink`. From HEAD (or a merge base): the working tree (with index and
/// untracked files) against the base tree, or the staged diff when that has no change at
/// all. From a tree: a snapshot of the working tree now against it.
fn compute(
    repo: &Repository,
    root: &Path,
    base: DiffBase<'_>,
    rules: &DiffRules<'_>,
    sink: &mut dyn PatchSink,
) -> Result<Computed, TargetError> {
    // Objects are read as git reads them, without re-hashing each one to verify it (a
    // sha1 pass over every old side; libgit2's default).
    static UNVERIFIED: std::sync::Once = std::sync::Once::new();
    UNVERIFIED.call_once(|| git2::opts::strict_hash_verification(false));
    let excluder = rules.excludes.map(|e| e.compile(Some(repo))).transpose()?;
    let excluder = excluder.as_ref();
    let tree = start_tree(repo, base)?;
    let base_tree = tree.as_ref().map(Tree::id);
    if let DiffBase::Tree(_) = base {
        let now = snapshot_tree(repo)?;
        let now_tree = repo.find_tree(now).map_err(|e| git_err(&e))?;
        let diff = repo
            .diff_tree_to_tree(
                tree.as_ref(),
                Some(&now_tree),
                Some(&mut options(rules, false)),
            )
            .map_err(|e| git_err(&e))?;
        // The new side is read from the working tree, as for any diff: the snapshot was
        // just written from it.
        return Ok(Computed {
            rendered: render(repo, root, &diff, rules, excluder, true, sink)?,
            staged: false,
            base_tree,
            snapshot: Some(now),
        });
    }
    let working = repo
        .diff_tree_to_workdir_with_index(tree.as_ref(), Some(&mut options(rules, true)))
        .map_err(|e| git_err(&e))?;
    let rendered = render(repo, root, &working, rules, excluder, true, sink)?;
    if rendered.changed {
        return Ok(Computed {
            rendered,
            staged: false,
            base_tree,
            snapshot: None,
        });
    }
    // Nothing was written to the sink: the staged diff goes there instead.
    let staged = repo
        .diff_tree_to_index(tree.as_ref(), None, Some(&mut options(rules, false)))
        .map_err(|e| git_err(&e))?;
    Ok(Computed {
        rendered: render(repo, root, &staged, rules, excluder, false, sink)?,
        staged: true,
        base_tree,
        snapshot: None,
    })
}

/// The index file's key (None when there is none).
fn index_key(repo: &Repository) -> Option<StatKey> {
    StatKey::lstat(&repo.path().join("index")).ok().flatten()
}

/// sha256 of the patch (the sha256 of the empty patch when nothing reviewable changed),
/// streamed: the patch is never held.
pub(crate) fn patch_sha(
    repo: &Repository,
    root: &Path,
    base: DiffBase<'_>,
    rules: &DiffRules<'_>,
) -> Result<String, TargetError> {
    let mut hasher = Sha256::new();
    compute(repo, root, base, rules, &mut hasher)?;
    Ok(hex(&hasher.finalize()))
}

/// A reviewed file of a rendered patch as the pin lists it: the working-tree file's sha256
/// and lines, or the lines of the blob (a deletion's old side, a staged new side) with no
/// sha256.
fn target_file(repo: &Repository, e: &Entry) -> TargetFile {
    let (sha256, lines) = match (e.deleted, &e.read) {
        (true, _) => (String::new(), blob_lines(repo, e.old_id)),
        (false, Some(read)) => read.clone(),
        // Staged (or gone from the working tree): measure the staged blob.
        (false, None) => (String::new(), blob_lines(repo, e.new_id)),
    };
    TargetFile {
        path: e.path.clone(),
        sha256,
        lines,
    }
}

/// Files sorted by path, each once.
fn sort_files(files: &mut Vec<TargetFile>) {
    files.sort_by(|a, b| a.path.cmp(&b.path));
    files.dedup_by(|a, b| a.path == b.path);
}

/// A patch hashed and counted as it is rendered (nothing kept).
#[derive(Default)]
struct HashSink {
    hasher: Sha256,
    lines: u64,
}

impl PatchSink for HashSink {
    fn file(&mut self, _path: &str, chunk: &[u8]) -> std::io::Result<()> {
        self.hasher.update(chunk);
        self.lines += u64::from(count_lines(chunk));
        Ok(())
    }
}

/// The diff from the tree `base` to the working tree now, as `--base-tree` pins it, without
/// keeping its patch.
pub(crate) struct SnapshotDiff {
    /// sha256 of the patch.
    pub sha256: String,
    /// Lines of the patch.
    pub lines: u64,
    /// The reviewed files, sorted (none when nothing changed).
    pub files: Vec<TargetFile>,
    /// The snapshot of the working tree the diff was computed against.
    pub tree: Oid,
}

/// The diff from the tree `base` to a snapshot of the working tree now, streamed.
pub(crate) fn snapshot_diff(
    repo: &Repository,
    root: &Path,
    base: &str,
    rules: &DiffRules<'_>,
) -> Result<SnapshotDiff, TargetError> {
    let mut sink = HashSink::default();
    let computed = compute(repo, root, DiffBase::Tree(base), rules, &mut sink)?;
    let tree = computed
        .snapshot
        .ok_or_else(|| TargetError::Git("the snapshot diff took no snapshot".to_owned()))?;
    let mut files: Vec<TargetFile> = if computed.rendered.changed {
        computed
            .rendered
            .entries
            .iter()
            .map(|e| target_file(repo, e))
            .collect()
    } else {
        Vec::new()
    };
    sort_files(&mut files);
    Ok(SnapshotDiff {
        sha256: hex(&sink.hasher.finalize()),
        lines: sink.lines,
        files,
        tree,
    })
}

/// Pin the diff of the repository whose work tree is `root` from `base`: the patch goes to
/// a spool file as it is rendered, hashed, counted and summarised on the way.
pub(crate) fn pin_diff(
    repo: &Repository,
    root: &Path,
    base: DiffBase<'_>,
    rules: &DiffRules<'_>,
) -> Result<DiffPin, TargetError> {
    // Keys are taken from here on: a file changed after this instant is never trusted.
    let taken_ns = now_ns();
    let index = index_key(repo);
    let mut sink = SpoolSink::new()?;
    let computed = compute(repo, root, base, rules, &mut sink)?;
    let rendered = computed.rendered;
    if !rendered.changed {
        return Err(TargetError::EmptyDiff {
            root: root.to_path_buf(),
        });
    }
    let SpoolSink {
        out,
        hasher,
        len,
        lines,
        brief,
        ranges,
    } = sink;
    let spooled = out
        .into_inner()
        .map_err(|e| spool_err(e.into_error()))?
        .into_temp_path();
    let mut files = Vec::new();
    let mut hunks = BTreeMap::new();
    let mut entries = Vec::with_capacity(rendered.entries.len());
    for (e, (offset, chunk_len)) in rendered.entries.into_iter().zip(ranges) {
        entries.push(SpooledFile {
            path: e.path.clone(),
            offset,
            len: chunk_len,
            stat: e.stat,
        });
        files.push(target_file(repo, &e));
        if !e.hunks.is_empty() {
            hunks.insert(e.path, e.hunks);
        }
    }
    sort_files(&mut files);
    let mut skipped = rendered.skipped;
    skipped.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(DiffPin {
        spool: PatchSpool {
            path: spooled,
            len,
            key: DriftKey {
                base_tree: computed.base_tree,
                index,
                staged: computed.staged,
                taken_ns,
                entries,
            },
        },
        sha256: hex(&hasher.finalize()),
        lines,
        brief: brief.finish(),
        files,
        skipped,
        hunks,
    })
}

/// Collects the re-rendered parts of the patch per path.
#[derive(Default)]
struct Chunks(HashMap<String, Vec<u8>>);

impl PatchSink for Chunks {
    fn file(&mut self, path: &str, chunk: &[u8]) -> std::io::Result<()> {
        self.0
            .entry(path.to_owned())
            .or_default()
            .extend_from_slice(chunk);
        Ok(())
    }
}

/// The TARGET_SHA of a pinned diff now, over the pinned files only (`only`), with the cap
/// `cap`. With the pin's spool, only files whose stat pre-key moved are re-rendered (the
/// rest of the patch is read back from the spool); with an unchanged base tree and index and
/// no file moved, nothing is read at all. Without a spool, or when the base, the index or
/// the staged fallback is involved, the whole patch of the pinned files is re-rendered.
/// A moved file's new side is the working tree for either base (the snapshot a
/// [`DiffBase::Tree`] diff takes holds the working tree's content).
pub(crate) fn repin(
    repo: &Repository,
    root: &Path,
    base: DiffBase<'_>,
    only: &BTreeSet<String>,
    cap: u64,
    pinned: Option<(&PatchSpool, &str)>,
) -> Result<String, TargetError> {
    let rules = DiffRules {
        cap,
        run_dirs: &[],
        only: Some(only),
        excludes: None,
    };
    let Some((spool, pinned_sha)) = pinned else {
        return patch_sha(repo, root, base, &rules);
    };
    let key = &spool.key;
    let base_tree = start_tree(repo, base)?.as_ref().map(Tree::id);
    if key.staged || base_tree != key.base_tree || index_key(repo) != key.index {
        return patch_sha(repo, root, base, &rules);
    }
    let mut moved = BTreeSet::new();
    for e in &key.entries {
        let now = StatKey::lstat(&root.join(&e.path)).ok().flatten();
        let same = match (&e.stat, &now) {
            (None, None) => true,
            (Some(k), now) => k.still(now.as_ref(), key.taken_ns),
            (None, Some(_)) => false,
        };
        if !same {
            moved.insert(e.path.clone());
        }
    }
    if moved.is_empty() {
        return Ok(pinned_sha.to_owned());
    }
    let moved_rules = DiffRules {
        only: Some(&moved),
        ..rules
    };
    let mut fresh = Chunks::default();
    let tree = base_tree.map(|id| repo.find_tree(id)).transpose();
    let tree = tree.map_err(|e| git_err(&e))?;
    let working = repo
        .diff_tree_to_workdir_with_index(tree.as_ref(), Some(&mut options(&moved_rules, true)))
        .map_err(|e| git_err(&e))?;
    let rendered = render(repo, root, &working, &moved_rules, None, true, &mut fresh)?;
    if !rendered.changed && moved.len() == key.entries.len() && matches!(base, DiffBase::Head(_)) {
        // Every pinned file changed back: the pin's rules fall back to the staged diff.
        return patch_sha(repo, root, base, &rules);
    }
    let mut file = std::fs::File::open(spool.path()).map_err(spool_err)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 256 * 1024];
    for e in &key.entries {
        if moved.contains(&e.path) {
            if let Some(chunk) = fresh.0.remove(&e.path) {
                hasher.update(&chunk);
            }
            continue;
        }
        file.seek(SeekFrom::Start(e.offset)).map_err(spool_err)?;
        let mut left = e.len;
        while left > 0 {
            let want = usize::try_from(left).unwrap_or(usize::MAX).min(buf.len());
            file.read_exact(&mut buf[..want]).map_err(spool_err)?;
            hasher.update(&buf[..want]);
            left -= want as u64;
        }
    }
    Ok(hex(&hasher.finalize()))
}

fn blob_lines(repo: &Repository, id: Oid) -> u32 {
    if id.is_zero() {
        return 0;
    }
    repo.find_blob(id)
        .map(|b| count_lines(b.content()))
        .unwrap_or(0)
}

/// Write the working tree as a tree object — what `git add -A && git write-tree` would record:
/// tracked and untracked files, ignored ones left out, `.arev/` left out — through a private
/// copy of the index, so the user's index, HEAD and branches are never touched. The blobs and
/// trees go into the object database (unreferenced: `git gc` prunes them after its expiry).
pub(crate) fn snapshot_tree(repo: &Repository) -> Result<Oid, TargetError> {
    let io = |e: std::io::Error| TargetError::Git(format!("cannot snapshot the working tree: {e}"));
    let workdir = repo
        .workdir()
        .ok_or_else(|| TargetError::Git("the repository has no working tree".to_owned()))?;
    let scratch = tempfile::tempdir().map_err(io)?;
    let private = scratch.path().join("index");
    // Starting from the user's index keeps its stat cache: unchanged files are not re-read.
    match std::fs::copy(repo.path().join("index"), &private) {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io(e)),
    }
    let mut index = Index::open(&private).map_err(|e| git_err(&e))?;
    // A handle of its own: the private index replaces the repository's only in this handle.
    let handle = Repository::open(workdir).map_err(|e| git_err(&e))?;
    handle.set_index(&mut index).map_err(|e| git_err(&e))?;
    // An untracked nested repository comes as `dir/`: libgit2 cannot add it as files, so it
    // is recorded as git does, a gitlink to its HEAD (a submodule-like entry every diff
    // lists as skipped), and left out while it has no commit.
    let mut nested: Vec<Vec<u8>> = Vec::new();
    let mut skip_nested = |path: &Path, _: &[u8]| -> i32 {
        let bytes = path.as_os_str().as_encoded_bytes();
        match bytes.strip_suffix(b"/") {
            Some(dir) => {
                nested.push(dir.to_vec());
                1
            }
            None => 0,
        }
    };
    index
        .add_all(["*"], IndexAddOption::DEFAULT, Some(&mut skip_nested))
        .and_then(|()| index.update_all(["*"], None))
        .map_err(|e| git_err(&e))?;
    for dir in nested {
        let head = Repository::open(workdir.join(String::from_utf8_lossy(&dir).as_ref()))
            .ok()
            .and_then(|r| r.head().ok().and_then(|h| h.target()));
        if let Some(id) = head {
            index.add(&gitlink(dir, id)).map_err(|e| git_err(&e))?;
        }
    }
    index
        .remove_dir(Path::new(RUN_DIR), 0)
        .map_err(|e| git_err(&e))?;
    index.write_tree_to(&handle).map_err(|e| git_err(&e))
}

/// An index entry for a submodule-like directory at `path` whose HEAD is `id`.
fn gitlink(path: Vec<u8>, id: Oid) -> git2::IndexEntry {
    let zero = git2::IndexTime::new(0, 0);
    git2::IndexEntry {
        ctime: zero,
        mtime: zero,
        dev: 0,
        ino: 0,
        mode: 0o160000,
        uid: 0,
        gid: 0,
        file_size: 0,
        id,
        // The path length bits are filled in by `Index::add`.
        flags: 0,
        flags_extended: 0,
        path,
    }
}

/// The tree `oid` names, or why it cannot be used as a diff base.
fn snapshot_base<'r>(repo: &'r Repository, oid: &str) -> Result<Tree<'r>, TargetError> {
    let bad = |message: &str| TargetError::BadBaseTree {
        tree: oid.to_owned(),
        message: message.to_owned(),
    };
    let id = Oid::from_str(oid).map_err(|_| bad("not an object id"))?;
    repo.find_tree(id)
        .map_err(|_| bad("no such tree in the repository"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_of_files_at_the_cap_stays_within_its_budget() {
        assert_eq!(diff_window(1 << 20), 16);
        assert_eq!(diff_window(64 << 10), 32);
        assert_eq!(diff_window(0), 32);
        assert_eq!(diff_window(100 << 20), 2);
        assert_eq!(diff_window(u64::MAX), 2);
        for cap in [4 << 10, 1 << 20, 3 << 20, 8 << 20] {
            let w = diff_window(cap) as u64;
            assert!(w * 4 * cap <= DIFF_WINDOW_BYTES, "{cap}");
        }
    }

    #[test]
    fn names_are_quoted_as_git_quotes_them() {
        assert_eq!(quote_path("a/", "src/x.rs"), "a/src/x.rs");
        assert_eq!(quote_path("b/", "sp ace"), "b/sp ace");
        assert_eq!(quote_path("a/", "é.txt"), "\"a/\\303\\251.txt\"");
        assert_eq!(quote_path("a/", "q\"b\\"), "\"a/q\\\"b\\\\\"");
    }

    #[test]
    fn headers_are_written_as_git_writes_them() {
        let id = |c: char| Oid::from_str(&c.to_string().repeat(40)).unwrap();
        let text = |h: Header<'_>| {
            let mut v = Vec::new();
            h.write(&mut v);
            String::from_utf8(v).unwrap()
        };
        assert_eq!(
            text(Header {
                path: "e",
                old: None,
                new: Some((id('e'), FileMode::Blob)),
                has_hunks: false
            }),
            format!(
                "diff --git a/e b/e\nnew file mode 100644\nindex {}..{}\n",
                Oid::zero(),
                id('e')
            )
        );
        assert_eq!(
            text(Header {
                path: "s p",
                old: Some((id('1'), FileMode::Blob)),
                new: Some((id('2'), FileMode::Blob)),
                has_hunks: true
            }),
            format!(
                "diff --git a/s p b/s p\nindex {}..{} 100644\n--- a/s p\t\n+++ b/s p\t\n",
                id('1'),
                id('2')
            )
        );
        assert_eq!(
            text(Header {
                path: "x.sh",
                old: Some((id('3'), FileMode::Blob)),
                new: Some((id('3'), FileMode::BlobExecutable)),
                has_hunks: false
            }),
            "diff --git a/x.sh b/x.sh\nold mode 100644\nnew mode 100755\n"
        );
        assert_eq!(
            text(Header {
                path: "gone",
                old: Some((id('4'), FileMode::Blob)),
                new: None,
                has_hunks: true
            }),
            format!(
                "diff --git a/gone b/gone\ndeleted file mode 100644\nindex {}..{}\n--- a/gone\n+++ /dev/null\n",
                id('4'),
                Oid::zero()
            )
        );
    }
}
