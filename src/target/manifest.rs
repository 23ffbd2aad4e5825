//! Manifest targets: several paths, directories and globs expanded (globset + a parallel
//! `ignore` walk), deduplicated, sorted, hashed in parallel, pinned as `manifest.txt`.

use super::brief::{self, BRIEF_FILES};
use super::resolve::{locate, Context};
use super::scan::{self, manifest_digest, normalize_rel, rel_string, ScanError};
use super::{Artefact, SkipReason, SkippedFile, TargetError, TargetFile};
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use ignore::{DirEntry, ParallelVisitor, ParallelVisitorBuilder, WalkBuilder, WalkState};
use rayon::prelude::*;
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
pub(crate) fn pin_manifest(ctx: &Context, args: &[String]) -> Result<ManifestPin, TargetError> {
    let mut plain: Vec<String> = Vec::new();
    let mut patterns: Vec<Pattern> = Vec::new();
    let mut set = GlobSetBuilder::new();
    for arg in args {
        let candidate = ctx.cwd.join(arg);
        match std::fs::metadata(&candidate) {
            Ok(meta) if meta.is_file() => plain.push(locate(ctx, arg)?.1),
            Ok(meta) if meta.is_dir() => {
                let rel = locate(ctx, arg)?.1;
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
            _ if has_glob_meta(arg) => {
                let glob = root_relative_glob(ctx, arg)?;
                set.add(build_glob(&glob, arg)?);
                patterns.push(Pattern {
                    arg: arg.clone(),
                    prefix: literal_prefix(&glob),
                });
            }
            Ok(_) => {
                // A FIFO, socket or device named explicitly: not a reviewable file.
                return Err(TargetError::Unreadable {
                    path: arg.clone(),
                    message: "not a regular file".to_owned(),
                });
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(TargetError::NoSuchFile(arg.clone()))
            }
            Err(e) => {
                return Err(TargetError::Unreadable {
                    path: arg.clone(),
                    message: e.to_string(),
                })
            }
        }
    }

    let mut skipped: Vec<SkippedFile> = Vec::new();
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
        paths.extend(walked.paths);
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
    let scanned: Vec<_> = paths
        .par_iter()
        .enumerate()
        .map(|(i, rel)| {
            scan::scan_file(&root.join(rel), cap, i < BRIEF_FILES).map(|s| {
                let items = s.text.as_deref().map(brief::code_items);
                (s.sha256, s.lines, items)
            })
        })
        .collect();

    let mut files = Vec::with_capacity(paths.len());
    let mut items: Vec<(usize, Vec<String>)> = Vec::new();
    let mut measured_lines: u64 = 0;
    for (path, result) in paths.into_iter().zip(scanned) {
        match result {
            Ok((sha256, lines, file_items)) => {
                measured_lines += u64::from(lines);
                if let Some(it) = file_items {
                    items.push((files.len(), it));
                }
                files.push(TargetFile {
                    path,
                    sha256,
                    lines,
                });
            }
            Err(ScanError::Skip(reason, _)) => skipped.push(SkippedFile { path, reason }),
            // Vanished between the walk and the read.
            Err(ScanError::Missing) => skipped.push(SkippedFile {
                path,
                reason: SkipReason::Unreadable,
            }),
        }
    }
    skipped.sort_by(|a, b| a.path.cmp(&b.path));
    skipped.dedup_by(|a, b| a.path == b.path);
    if files.is_empty() {
        return Err(TargetError::NothingReviewable(display.to_owned()));
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
        artefact: Artefact {
            name: "manifest.txt",
            bytes,
        },
        sha256,
        measured_lines,
        brief,
    })
}

/// Re-hash an already pinned manifest's files (same order) for drift detection.
pub(crate) fn rehash(root: &Path, files: &[TargetFile]) -> Result<String, TargetError> {
    let shas: Vec<Result<String, TargetError>> = files
        .par_iter()
        .map(|f| {
            std::fs::read(root.join(&f.path))
                .map(|bytes| scan::sha256_hex(&bytes))
                .map_err(|e| {
                    if e.kind() == std::io::ErrorKind::NotFound {
                        TargetError::NoSuchFile(f.path.clone())
                    } else {
                        TargetError::Unreadable {
                            path: f.path.clone(),
                            message: e.to_string(),
                        }
                    }
                })
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

/// Walk the smallest directory covering every pattern, in parallel, honouring .gitignore
/// (hidden files included; `.git/` and `.arev/` never), collecting matching regular files.
fn walk(ctx: &Context, set: &GlobSet, patterns: &[Pattern]) -> Walked {
    let mut common: Vec<String> = patterns[0].prefix.clone();
    for p in &patterns[1..] {
        let n = common
            .iter()
            .zip(&p.prefix)
            .take_while(|(a, b)| a == b)
            .count();
        common.truncate(n);
    }
    let mut start = ctx.root.clone();
    start.extend(&common);

    let matched: Vec<AtomicBool> = patterns.iter().map(|_| AtomicBool::new(false)).collect();
    let sink = Mutex::new((Vec::new(), Vec::new()));
    let mut builder = WalkBuilder::new(&start);
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
    matched: &'a [AtomicBool],
    sink: &'a Sink,
}

impl<'s, 'a: 's> ParallelVisitorBuilder<'s> for Collectors<'a> {
    fn build(&mut self) -> Box<dyn ParallelVisitor + 's> {
        Box::new(Collector {
            root: self.root,
            set: self.set,
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
    matched: &'a [AtomicBool],
    sink: &'a Sink,
    paths: Vec<String>,
    skipped: Vec<SkippedFile>,
    hits: Vec<usize>,
}

impl Collector<'_> {
    fn take(&mut self, entry: &DirEntry) {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            return;
        }
        let Ok(rel) = entry.path().strip_prefix(self.root) else {
            return;
        };
        self.set.matches_into(rel, &mut self.hits);
        if self.hits.is_empty() {
            return;
        }
        for &i in &self.hits {
            self.matched[i].store(true, Ordering::Relaxed);
        }
        match rel_string(rel) {
            Some(s) => self.paths.push(s),
            None => self.skipped.push(SkippedFile {
                path: rel.to_string_lossy().replace('\\', "/"),
                reason: SkipReason::NotUtf8,
            }),
        }
    }
}

impl ParallelVisitor for Collector<'_> {
    fn visit(&mut self, entry: Result<DirEntry, ignore::Error>) -> WalkState {
        if let Ok(entry) = entry {
            self.take(&entry);
        }
        WalkState::Continue
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
