//! The context map's fix-site recall on mined cases (docs/eval.md "Fix-site recall"): for
//! each case, the change that introduced the defect (the commit that last touched most of
//! the lines the fix changed in the defect's own file, by blame at the buggy revision), its
//! context map computed over that commit's tree exactly as a review of that change would
//! compute it, and the share of the other files the real fix changed that the map names.
//! Read-only on the repository; no model.

use super::cases::ResolvedCase;
use super::error::EvalError;
use crate::target::map::{build, Subject};
use git2::{BlameOptions, Commit, Diff, DiffFormat, ObjectType, Oid, Repository, TreeWalkMode};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::Path;

/// Blobs of the introducing commit's tree read for the search at most, and their size cap.
const SCOPE_FILES: usize = 50_000;
const SCOPE_FILE_BYTES: u64 = 1024 * 1024;

/// One case's fix sites.
#[derive(Debug, Clone, PartialEq)]
pub struct FixSites {
    pub case_id: String,
    /// The commit the map was computed for (None: none found, see `note`).
    pub introducing: Option<String>,
    /// The file of the defect (the target with the most expected lines).
    pub defect_file: String,
    /// The files the fix changed other than `defect_file`, sorted.
    pub others: Vec<String>,
    /// Those of `others` the map names.
    pub named: Vec<String>,
    pub map_bytes: usize,
    pub map_references: usize,
    /// Why the case does not count, when it does not.
    pub note: Option<&'static str>,
}

impl FixSites {
    /// Whether the case counts towards the recall: an introducing change and other files.
    pub fn counts(&self) -> bool {
        self.note.is_none() && !self.others.is_empty()
    }
}

fn git(what: &str, e: &git2::Error) -> EvalError {
    EvalError::Git(format!("{what}: {}", e.message()))
}

/// The fix sites of every case (in order).
pub fn fix_sites(repo: &Repository, cases: &[ResolvedCase]) -> Result<Vec<FixSites>, EvalError> {
    cases.iter().map(|c| case_sites(repo, c)).collect()
}

fn case_sites(repo: &Repository, c: &ResolvedCase) -> Result<FixSites, EvalError> {
    let defect_file = defect_file(c);
    let mut out = FixSites {
        case_id: c.case.id.clone(),
        introducing: None,
        defect_file: defect_file.clone(),
        others: Vec::new(),
        named: Vec::new(),
        map_bytes: 0,
        map_references: 0,
        note: None,
    };
    let Some(fix) = c.case.origin.commit.as_deref() else {
        out.note = Some("no fix commit in the case's origin");
        return Ok(out);
    };
    let fix = Oid::from_str(fix)
        .and_then(|o| repo.find_commit(o))
        .map_err(|e| git(&format!("case {}: fix commit", c.case.id), &e))?;
    let buggy = repo
        .find_commit(c.commit)
        .map_err(|e| git("read the buggy revision", &e))?;
    out.others = changed_files(repo, Some(&buggy), &fix)?
        .into_iter()
        .filter(|p| *p != defect_file)
        .collect();
    let Some(intro) = introducing(repo, c, &defect_file)? else {
        out.note = Some("no introducing commit found by blame");
        return Ok(out);
    };
    let intro = repo
        .find_commit(intro)
        .map_err(|e| git("read the introducing commit", &e))?;
    out.introducing = Some(intro.id().to_string());
    let patch = patch_of(repo, &intro)?;
    let blobs = tree_blobs(repo, &intro)?;
    let files: Vec<&str> = blobs.keys().map(String::as_str).collect();
    let read = |p: &str| blobs.get(p).cloned();
    let map = build(Subject::Patch(&patch), &files, &read);
    let listed: BTreeSet<&str> = map.paths.iter().map(String::as_str).collect();
    out.named = out
        .others
        .iter()
        .filter(|p| listed.contains(p.as_str()))
        .cloned()
        .collect();
    out.map_bytes = map.text.len();
    out.map_references = map.references;
    Ok(out)
}

/// The target with the most expected lines (the first such in case order).
fn defect_file(c: &ResolvedCase) -> String {
    let mut lines: BTreeMap<&str, u32> = BTreeMap::new();
    for e in &c.case.expected {
        *lines.entry(e.file.as_str()).or_default() += e.end - e.start + 1;
    }
    let mut best: Option<(&str, u32)> = None;
    for t in &c.case.targets {
        let n = lines.get(t.as_str()).copied().unwrap_or(0);
        if best.is_none_or(|(_, b)| n > b) {
            best = Some((t.as_str(), n));
        }
    }
    best.map_or_else(String::new, |(t, _)| t.to_string())
}

/// Every path (old and new side) the diff from `from` (None: the empty tree) to `to` changes.
fn changed_files(
    repo: &Repository,
    from: Option<&Commit<'_>>,
    to: &Commit<'_>,
) -> Result<BTreeSet<String>, EvalError> {
    let diff = diff_of(repo, from, to)?;
    let mut out = BTreeSet::new();
    for d in diff.deltas() {
        for f in [d.old_file(), d.new_file()] {
            if let Some(p) = f.path().and_then(|p| p.to_str()) {
                if !f.id().is_zero() {
                    out.insert(p.to_string());
                }
            }
        }
    }
    Ok(out)
}

fn diff_of<'r>(
    repo: &'r Repository,
    from: Option<&Commit<'_>>,
    to: &Commit<'_>,
) -> Result<Diff<'r>, EvalError> {
    let old = from
        .map(Commit::tree)
        .transpose()
        .map_err(|e| git("read a tree", &e))?;
    let new = to.tree().map_err(|e| git("read a tree", &e))?;
    repo.diff_tree_to_tree(old.as_ref(), Some(&new), None)
        .map_err(|e| git("diff", &e))
}

/// The commit that last touched most of the expected lines of `file` at the buggy revision
/// (ties: the newer one, then the smaller id).
fn introducing(repo: &Repository, c: &ResolvedCase, file: &str) -> Result<Option<Oid>, EvalError> {
    let mut opts = BlameOptions::new();
    opts.newest_commit(c.commit);
    let blame = repo
        .blame_file(Path::new(file), Some(&mut opts))
        .map_err(|e| git(&format!("blame {file}"), &e))?;
    let mut votes: HashMap<Oid, u32> = HashMap::new();
    for e in c.case.expected.iter().filter(|e| e.file == file) {
        for line in e.start..=e.end {
            if let Some(h) = blame.get_line(line as usize) {
                *votes.entry(h.final_commit_id()).or_default() += 1;
            }
        }
    }
    let time = |o: &Oid| repo.find_commit(*o).map_or(0, |c| c.time().seconds());
    Ok(votes
        .into_iter()
        .max_by(|a, b| {
            (a.1, time(&a.0))
                .cmp(&(b.1, time(&b.0)))
                .then_with(|| b.0.cmp(&a.0))
        })
        .map(|(o, _)| o))
}

/// The introducing commit's patch against its first parent, as plain git renders it.
fn patch_of(repo: &Repository, commit: &Commit<'_>) -> Result<String, EvalError> {
    let parent = commit.parent(0).ok();
    let diff = diff_of(repo, parent.as_ref(), commit)?;
    let mut out = Vec::new();
    diff.print(DiffFormat::Patch, |_, _, line| {
        if matches!(line.origin(), '+' | '-' | ' ') {
            out.push(line.origin() as u8);
        }
        out.extend_from_slice(line.content());
        true
    })
    .map_err(|e| git("render the introducing patch", &e))?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// The regular files of the commit's tree (the scope a review of it would search), by path.
fn tree_blobs(
    repo: &Repository,
    commit: &Commit<'_>,
) -> Result<BTreeMap<String, Vec<u8>>, EvalError> {
    let tree = commit.tree().map_err(|e| git("read a tree", &e))?;
    let mut found: Vec<(String, Oid)> = Vec::new();
    tree.walk(TreeWalkMode::PreOrder, |dir, entry| {
        let regular = matches!(entry.filemode(), 0o100644 | 0o100755);
        if entry.kind() == Some(ObjectType::Blob) && regular && found.len() < SCOPE_FILES {
            if let Some(name) = entry.name() {
                found.push((format!("{dir}{name}"), entry.id()));
            }
        }
        git2::TreeWalkResult::Ok
    })
    .map_err(|e| git("walk a tree", &e))?;
    let odb = repo
        .odb()
        .map_err(|e| git("open the object database", &e))?;
    let mut out = BTreeMap::new();
    for (path, oid) in found {
        let small = odb
            .read_header(oid)
            .is_ok_and(|(size, _)| size as u64 <= SCOPE_FILE_BYTES);
        if small {
            if let Ok(b) = repo.find_blob(oid) {
                out.insert(path, b.content().to_vec());
            }
        }
    }
    Ok(out)
}

/// (named, others, recall) over the cases that count.
pub fn overall(sites: &[FixSites]) -> (usize, usize, Option<f64>) {
    let counted = sites.iter().filter(|s| s.counts());
    let (named, others) = counted.fold((0, 0), |(n, o), s| (n + s.named.len(), o + s.others.len()));
    let recall = (others > 0).then(|| named as f64 / others as f64);
    (named, others, recall)
}

/// The text table: one line per case, then the overall figure.
pub fn render_sites(sites: &[FixSites]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<24} {:<12} {:>6} {:>6} {:>6}  defect file",
        "case", "introduced", "others", "named", "recall"
    );
    for c in sites {
        let intro = c
            .introducing
            .as_deref()
            .map_or("-", |i| &i[..i.len().min(12)]);
        let recall = match (c.counts(), c.note) {
            (true, _) => format!("{:.2}", c.named.len() as f64 / c.others.len() as f64),
            (false, _) => "-".into(),
        };
        let _ = writeln!(
            s,
            "{:<24} {:<12} {:>6} {:>6} {:>6}  {}{}",
            c.case_id,
            intro,
            c.others.len(),
            c.named.len(),
            recall,
            c.defect_file,
            c.note.map_or(String::new(), |n| format!(" ({n})"))
        );
    }
    let (named, others, recall) = overall(sites);
    let counted = sites.iter().filter(|s| s.counts()).count();
    let _ = writeln!(
        s,
        "\nfix-site recall: {} ({named} of {others} other fixed files named, {counted} of {} cases with other files)",
        recall.map_or("n/a".into(), |r| format!("{:.1} %", r * 100.0)),
        sites.len()
    );
    s
}
