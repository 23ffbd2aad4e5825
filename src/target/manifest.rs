//! Manifest targets: several paths, directories and globs expanded (globset + a parallel
//! `ignore` walk), deduplicated, sorted, hashed in parallel, pinned as `manifest.txt`.

use super::brief::{self, BRIEF_FILES};
use super::locate::{locate, Context};
use super::scan::{
    self, escape_path, has_control_chars, is_run_dir, manifest_digest, normalize_rel, rel_string,
    ScanError, REPIN_MAX_FILE_BYTES,
};
use super::statkey::now_ns;
use super::{
    skip_summary, Artefact, Excludes, PinKeys, SkipReason, SkippedFile, TargetError, TargetFile,
};
use git2::Repository;
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use ignore::{DirEntry, ParallelVisitor, ParallelVisitorBuilder, WalkBuilder, WalkState};
use rayon::prelude::*;
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// A resolved and hashed manifest.
#[derive(Debug)]
pub(crate) struct ManifestPin {
    pub files: Vec<TargetFile>,
    pub skipped: Vec<SkippedFile>,
    pub artefact: Artefact,
    pub sha256: String,
    pub measured_lines: u64,
    pub brief: String,
    /// Each file's stat pre-key (the drift check's).
    pub keys: PinKeys,
}

/// Whether `arg` uses glob syntax.
fn has_glob_meta(arg: &str) -> bool {
    arg.contains(['*', '?', '[', '{'])
}

/// One walked pattern: a glob, or a directory turned into `dir/**`.
struct Pattern {
    /// The argument it came from (for "matched nothing").
    arg: String,
    /// Root-relative directory the walk has to cover.
    prefix: Vec<String>,
}

/// Expand, hash and pin the manifest named by `args`.
pub(crate) fn pin_manifest(
    ctx: &Context,
    args: &[String],
    excludes: &Excludes,
    repo: Option<&Repository>,
) -> Result<ManifestPin, TargetError> {
    let mut plain: Vec<String> = Vec::new();
    let mut patterns: Vec<Pattern> = Vec::new();
    let mut skipped: Vec<SkippedFile> = Vec::new();
    let mut set = GlobSetBuilder::new();
    for arg in args {
        let candidate = ctx.cwd.join(arg);
        let located = match std::fs::symlink_metadata(&candidate) {
            Ok(_) => match locate(ctx, arg) {
                // A link named (or on the way to a path named) is listed, never followed.
                Err(TargetError::Symlink(link)) => {
                    skipped.push(SkippedFile::new(link, SkipReason::Symlink));
                    continue;
                }
                Err(TargetError::ControlChars(name)) => {
                    skipped.push(SkippedFile::new(name, SkipReason::ControlChars));
                    continue;
                }
                other => Some(other?),
            },
            Err(_) => None,
        };
        match (std::fs::symlink_metadata(&candidate), located) {
            (Ok(meta), Some((_, rel))) if meta.is_file() => plain.push(rel),
            (Ok(meta), Some((_, rel))) if meta.is_dir() => {
                let glob = if rel.is_empty() {
                    "**".to_owned()
                } else {
                    format!("{}/**", globset::escape(&rel))
                };
                set.add(build_glob(&glob, arg)?);
                patterns.push(Pattern {
                    arg: arg.clone(),
                    prefix: split(&rel),
                });
            }
            (Err(_), _) if has_glob_meta(arg) => {
                let glob = root_relative_glob(ctx, arg)?;
                set.add(build_glob(&glob, arg)?);
                patterns.push(Pattern {
                    arg: arg.clone(),
                    prefix: literal_prefix(&glob),
                });
            }
            (Ok(_), _) => {
                // A FIFO, socket or device named explicitly: not a reviewable file.
                return Err(TargetError::Unreadable {
                    path: arg.clone(),
                    message: "not a regular file".to_owned(),
                });
            }
            (Err(e), _) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(TargetError::NoSuchFile(arg.clone()))
            }
            (Err(e), _) => {
                return Err(TargetError::Unreadable {
                    path: arg.clone(),
                    message: e.to_string(),
                })
            }
        }
    }

    let mut paths = plain;
    if !patterns.is_empty() {
        let set = set.build().map_err(|e| TargetError::InvalidGlob {
            glob: patterns
                .iter()
                .map(|p| p.arg.as_str())
                .collect::<Vec<_>>()
                .join(" "),
            message: e.to_string(),
        })?;
        let walked = walk(ctx, &set, &patterns);
        if let Some(p) = patterns
            .iter()
            .zip(&walked.matched)
            .find(|(_, m)| !m.load(Ordering::Relaxed))
        {
            return Err(TargetError::GlobMatchedNothing(p.0.arg.clone()));
        }
        // Excludes apply to what the walk found, never to a file named explicitly.
        let excluder = excludes.compile(repo)?;
        for path in walked.paths {
            match excluder.why(&path) {
                Some((reason, glob)) => skipped.push(SkippedFile { path, reason, glob }),
                None => paths.push(path),
            }
        }
        skipped.extend(walked.skipped);
    }
    paths.sort_unstable();
    paths.dedup();
    hash_files(ctx, paths, skipped, &args.join(" "))
}

/// Hash the sorted, deduplicated `paths` in parallel and build the pin.
fn hash_files(
    ctx: &Context,
    paths: Vec<String>,
    mut skipped: Vec<SkippedFile>,
    display: &str,
) -> Result<ManifestPin, TargetError> {
    let root = ctx.root.as_path();
    let cap = ctx.max_file_bytes;
    let taken_ns = now_ns();
    let scanned: Vec<_> = paths
        .par_iter()
        .enumerate()
        .map(|(i, rel)| {
            scan::scan_file(root, rel, cap, i < BRIEF_FILES).map(|s| {
                let items = s.text.as_deref().map(brief::code_items);
                (s.sha256, s.lines, items, s.stat)
            })
        })
        .collect();
    let mut keys = PinKeys {
        taken_ns,
        by_path: HashMap::with_capacity(paths.len()),
    };

    let mut files = Vec::with_capacity(paths.len());
    let mut items: Vec<(usize, Vec<String>)> = Vec::new();
    let mut measured_lines: u64 = 0;
    for (path, result) in paths.into_iter().zip(scanned) {
        match result {
            Ok((sha256, lines, file_items, stat)) => {
                measured_lines += u64::from(lines);
                keys.by_path.insert(path.clone(), stat);
                if let Some(it) = file_items {
                    items.push((files.len(), it));
                }
                files.push(TargetFile {
                    path,
                    sha256,
                    lines,
                });
            }
            Err(ScanError::Skip(reason, _)) => skipped.push(SkippedFile::new(path, reason)),
            // Vanished between the walk and the read.
            Err(ScanError::Missing) => skipped.push(SkippedFile::new(path, SkipReason::Unreadable)),
        }
    }
    skipped.sort_by(|a, b| a.path.cmp(&b.path));
    skipped.dedup_by(|a, b| a.path == b.path);
    if files.is_empty() {
        return Err(TargetError::NothingReviewable {
            target: display.to_owned(),
            skipped: skip_summary(&skipped),
        });
    }

    let sha256 = manifest_digest(files.iter().map(|f| (f.sha256.as_str(), f.path.as_str())));
    let mut bytes = Vec::with_capacity(files.iter().map(|f| f.path.len() + 1).sum());
    for f in &files {
        bytes.extend_from_slice(f.path.as_bytes());
        bytes.push(b'\n');
    }
    let brief = brief::code_brief(
        items
            .iter()
            .map(|(i, it)| (files[*i].path.as_str(), it.as_slice())),
    );
    Ok(ManifestPin {
        files,
        skipped,
        artefact: Artefact::in_memory("manifest.txt", bytes),
        sha256,
        measured_lines,
        brief,
        keys,
    })
}

/// Re-hash an already pinned manifest's files (same order) for drift detection.
///
/// With the pin's `keys`, a file whose stat key has not moved keeps its pinned sha256 and
/// is not read again.
pub(crate) fn rehash(
    root: &Path,
    files: &[TargetFile],
    keys: Option<&PinKeys>,
) -> Result<String, TargetError> {
    let shas: Vec<Result<String, TargetError>> = files
        .par_iter()
        .map(|f| {
            if keys.is_some_and(|k| k.unchanged(root, &f.path)) {
                return Ok(f.sha256.clone());
            }
            scan::read_regular(root, &f.path, REPIN_MAX_FILE_BYTES)
                .map(|bytes| scan::sha256_hex(&bytes))
                .map_err(|e| e.into_target_error(&f.path, REPIN_MAX_FILE_BYTES, 0))
        })
        .collect();
    let shas = shas.into_iter().collect::<Result<Vec<_>, _>>()?;
    Ok(manifest_digest(
        shas.iter()
            .zip(files)
            .map(|(s, f)| (s.as_str(), f.path.as_str())),
    ))
}

fn build_glob(glob: &str, arg: &str) -> Result<globset::Glob, TargetError> {
    GlobBuilder::new(glob)
        .literal_separator(true)
        .build()
        .map_err(|e| TargetError::InvalidGlob {
            glob: arg.to_owned(),
            message: e.kind().to_string(),
        })
}

/// `arg` (relative to cwd, or absolute inside root) as a root-relative glob.
fn root_relative_glob(ctx: &Context, arg: &str) -> Result<String, TargetError> {
    let outside = || ctx.outside_error(arg);
    let joined = if Path::new(arg).is_absolute() {
        let rest = Path::new(arg)
            .strip_prefix(&ctx.root)
            .map_err(|_| outside())?;
        rest.to_str().ok_or_else(outside)?.to_owned()
    } else if ctx.cwd_rel.is_empty() {
        arg.to_owned()
    } else {
        format!("{}/{arg}", ctx.cwd_rel)
    };
    normalize_rel(&joined).ok_or_else(outside)
}

fn split(rel: &str) -> Vec<String> {
    rel.split('/')
        .filter(|p| !p.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The leading directories of a root-relative glob that hold no glob syntax.
fn literal_prefix(glob: &str) -> Vec<String> {
    let parts: Vec<&str> = glob.split('/').collect();
    parts[..parts.len().saturating_sub(1)]
        .iter()
        .take_while(|p| !has_glob_meta(p) && !p.contains('\\'))
        .map(|p| (*p).to_owned())
        .collect()
}

/// What the walk found.
struct Walked {
    paths: Vec<String>,
    skipped: Vec<SkippedFile>,
    matched: Vec<AtomicBool>,
}

/// Whether `a` is a component-wise prefix of `b`.
fn is_prefix(a: &[String], b: &[&str]) -> bool {
    a.len() <= b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

/// Walk from the root, in parallel, honouring .gitignore at every level (hidden files
/// included; `.git/` and `.arev/` never), descending only into directories on the way to or
/// inside a pattern's fixed prefix — so a prefix inside an ignored directory finds nothing,
/// as `git` would. Collects matching regular files; matching links (and links on a prefix)
/// are listed as skipped `symlink`, run dirs as `run_dir`, names with control characters as
/// `control_chars`.
fn walk(ctx: &Context, set: &GlobSet, patterns: &[Pattern]) -> Walked {
    let prefixes: Vec<Vec<String>> = patterns.iter().map(|p| p.prefix.clone()).collect();
    let matched: Vec<AtomicBool> = patterns.iter().map(|_| AtomicBool::new(false)).collect();
    let sink = Mutex::new((Vec::new(), Vec::new()));
    let mut builder = WalkBuilder::new(&ctx.root);
    builder
        .hidden(false)
        .ignore(false)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(true)
        .parents(true)
        .require_git(false)
        .follow_links(false)
        .filter_entry(|e| !matches!(e.file_name().to_str(), Some(".git" | ".arev")));
    let mut visitors = Collectors {
        root: &ctx.root,
        set,
        prefixes: &prefixes,
        run_dirs: &ctx.run_dirs,
        matched: &matched,
        sink: &sink,
    };
    builder.build_parallel().visit(&mut visitors);
    let (paths, skipped) = sink
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    Walked {
        paths,
        skipped,
        matched,
    }
}

type Sink = Mutex<(Vec<String>, Vec<SkippedFile>)>;

struct Collectors<'a> {
    root: &'a Path,
    set: &'a GlobSet,
    prefixes: &'a [Vec<String>],
    run_dirs: &'a [String],
    matched: &'a [AtomicBool],
    sink: &'a Sink,
}

impl<'s, 'a: 's> ParallelVisitorBuilder<'s> for Collectors<'a> {
    fn build(&mut self) -> Box<dyn ParallelVisitor + 's> {
        Box::new(Collector {
            root: self.root,
            set: self.set,
            prefixes: self.prefixes,
            run_dirs: self.run_dirs,
            matched: self.matched,
            sink: self.sink,
            paths: Vec::new(),
            skipped: Vec::new(),
            hits: Vec::new(),
        })
    }
}

/// One walker thread's collector; hands its findings to the sink when dropped.
struct Collector<'a> {
    root: &'a Path,
    set: &'a GlobSet,
    prefixes: &'a [Vec<String>],
    run_dirs: &'a [String],
    matched: &'a [AtomicBool],
    sink: &'a Sink,
    paths: Vec<String>,
    skipped: Vec<SkippedFile>,
    hits: Vec<usize>,
}

impl Collector<'_> {
    fn skip(&mut self, path: String, reason: SkipReason) {
        self.skipped.push(SkippedFile::new(path, reason));
    }

    fn take(&mut self, entry: &DirEntry) -> WalkState {
        let Ok(rel) = entry.path().strip_prefix(self.root) else {
            return WalkState::Continue;
        };
        let Some(rel_s) = rel_string(rel) else {
            if entry.file_type().is_some_and(|t| t.is_file()) {
                self.set.matches_into(rel, &mut self.hits);
                if !self.hits.is_empty() {
                    self.skip(escape_path(&rel.to_string_lossy()), SkipReason::NotUtf8);
                }
            }
            return WalkState::Skip;
        };
        let parts: Vec<&str> = rel_s.split('/').filter(|p| !p.is_empty()).collect();
        // Only directories on the way to a prefix, or inside one, are of interest.
        let on_way = self.prefixes.iter().any(|p| {
            is_prefix(p, &parts)
                || (parts.len() < p.len() && parts.iter().zip(p).all(|(a, b)| a == b))
        });
        if !on_way {
            return WalkState::Skip;
        }
        let Some(kind) = entry.file_type() else {
            return WalkState::Continue;
        };
        if kind.is_dir() {
            if parts.is_empty() {
                return WalkState::Continue;
            }
            let inside = self.prefixes.iter().any(|p| is_prefix(p, &parts));
            if inside && (self.run_dirs.contains(&rel_s) || is_run_dir(entry.path())) {
                self.skip(rel_s, SkipReason::RunDir);
                return WalkState::Skip;
            }
            return WalkState::Continue;
        }
        self.set.matches_into(rel, &mut self.hits);
        if kind.is_symlink() {
            // A link that matches, or that stands where a pattern's fixed prefix goes on.
            let on_prefix: Vec<usize> = self
                .prefixes
                .iter()
                .enumerate()
                .filter(|(_, p)| {
                    parts.len() <= p.len() && parts.iter().zip(p.iter()).all(|(a, b)| a == b)
                })
                .map(|(i, _)| i)
                .collect();
            if self.hits.is_empty() && on_prefix.is_empty() {
                return WalkState::Continue;
            }
            for &i in self.hits.iter().chain(&on_prefix) {
                self.matched[i].store(true, Ordering::Relaxed);
            }
            self.skip(rel_s, SkipReason::Symlink);
            return WalkState::Continue;
        }
        if !kind.is_file() || self.hits.is_empty() {
            return WalkState::Continue;
        }
        for &i in &self.hits {
            self.matched[i].store(true, Ordering::Relaxed);
        }
        if has_control_chars(&rel_s) {
            self.skip(escape_path(&rel_s), SkipReason::ControlChars);
        } else {
            self.paths.push(rel_s);
        }
        WalkState::Continue
    }
}

impl ParallelVisitor for Collector<'_> {
    fn visit(&mut self, entry: Result<DirEntry, ignore::Error>) -> WalkState {
        match entry {
            Ok(entry) => self.take(&entry),
            Err(_) => WalkState::Continue,
        }
    }
}

impl Drop for Collector<'_> {
    fn drop(&mut self) {
        let mut sink = self
            .sink
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        sink.0.append(&mut self.paths);
        sink.1.append(&mut self.skipped);
    }
}
