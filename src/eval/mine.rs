//! `arev eval mine`: walk the history with git2 (read-only), reject the matching commits
//! whose subject names a chore, measure each other fix commit's diff (what it does to code:
//! `code::measure`), and turn the ones `select::locate` accepts into cases (written as
//! `<id>.json` into the cases directory).

use super::code::measure;
use super::error::EvalError;
use super::model::{CaseOrigin, EvalCase, ExpectedLocation, OriginKind, EVAL_SCHEMA_VERSION};
use super::select::{
    case_id, chore_of, locate, without_fixed_adjectives, Change, Chore, Content, FileFacts, Hunk,
    Limits, Skip,
};
use super::write::write_json;
use git2::{Commit, Delta, Diff, DiffFindOptions, DiffOptions, Oid, Patch, Repository, Sort};
use globset::GlobSet;
use regex::Regex;
use std::path::Path;

/// What to mine.
#[derive(Debug, Clone)]
pub struct MineOptions {
    /// Only commits not reachable from this revision (`REV..HEAD`).
    pub since: Option<String>,
    /// Matched against the subject (the message's first line).
    pub regex: Regex,
    /// Subjects matching this are rejected (`--reject-pattern`).
    pub reject: Option<Regex>,
    /// Chore kinds let through (`--allow-chores`).
    pub allow_chores: Vec<Chore>,
    /// At most this many cases (the newest first).
    pub max: usize,
    pub paths: Option<GlobSet>,
    pub limits: Limits,
}

/// One fix commit whose subject matched, and what became of it.
#[derive(Debug, Clone)]
pub struct Considered {
    pub commit: String,
    pub subject: String,
    pub result: Result<EvalCase, Skip>,
}

/// The outcome of a mining walk.
#[derive(Debug, Clone, Default)]
pub struct Mined {
    /// Commits walked.
    pub walked: usize,
    /// Commits whose subject matched, in walk order (newest first), with their fate.
    pub considered: Vec<Considered>,
}

impl Mined {
    pub fn cases(&self) -> impl Iterator<Item = &EvalCase> {
        self.considered
            .iter()
            .filter_map(|c| c.result.as_ref().ok())
    }
}

/// Write every mined case to `<out>/<id>.json` (creating `out`).
pub fn write_cases(mined: &Mined, out: &Path) -> Result<(), EvalError> {
    std::fs::create_dir_all(out).map_err(|e| EvalError::write(out, e))?;
    for case in mined.cases() {
        write_json(&out.join(format!("{}.json", case.id)), case)?;
    }
    Ok(())
}

fn git(what: &str, e: &git2::Error) -> EvalError {
    EvalError::Git(format!("{what}: {}", e.message()))
}

/// Walk HEAD's history (newest first) and mine up to `opts.max` cases.
pub fn mine(repo: &Repository, opts: &MineOptions) -> Result<Mined, EvalError> {
    let mut walk = repo.revwalk().map_err(|e| git("walk the history", &e))?;
    walk.set_sorting(Sort::TOPOLOGICAL | Sort::TIME)
        .map_err(|e| git("walk the history", &e))?;
    walk.push_head().map_err(|e| {
        git(
            "read HEAD (a repository without commits has no history to mine)",
            &e,
        )
    })?;
    if let Some(rev) = &opts.since {
        let obj = repo
            .revparse_single(rev)
            .and_then(|o| o.peel_to_commit())
            .map_err(|e| EvalError::Usage(format!("--since {rev}: {}", e.message())))?;
        walk.hide(obj.id())
            .map_err(|e| git("walk the history", &e))?;
    }
    let mut mined = Mined::default();
    let mut cases = 0;
    for oid in walk {
        if cases >= opts.max {
            break;
        }
        let oid = oid.map_err(|e| git("walk the history", &e))?;
        mined.walked += 1;
        let commit = repo
            .find_commit(oid)
            .map_err(|e| git(&format!("read commit {oid}"), &e))?;
        let message = String::from_utf8_lossy(commit.message_bytes()).into_owned();
        let subject = message.lines().next().unwrap_or("").trim().to_string();
        if !opts.regex.is_match(&without_fixed_adjectives(&subject)) {
            continue;
        }
        let chore = chore_of(&subject).filter(|c| !opts.allow_chores.contains(c));
        let result = if commit.parent_count() != 1 {
            consider(repo, &commit, &message, opts)?
        } else if opts.reject.as_ref().is_some_and(|r| r.is_match(&subject)) {
            Err(Skip::Rejected)
        } else if let Some(c) = chore {
            Err(Skip::Chore(c))
        } else {
            consider(repo, &commit, &message, opts)?
        };
        if result.is_ok() {
            cases += 1;
        }
        mined.considered.push(Considered {
            commit: oid.to_string(),
            subject,
            result,
        });
    }
    Ok(mined)
}

/// One matching commit → a case, or why not.
fn consider(
    repo: &Repository,
    commit: &Commit<'_>,
    message: &str,
    opts: &MineOptions,
) -> Result<Result<EvalCase, Skip>, EvalError> {
    match commit.parent_count() {
        0 => return Ok(Err(Skip::Root)),
        1 => {}
        _ => return Ok(Err(Skip::Merge)),
    }
    let Ok(parent) = commit.parent(0) else {
        return Ok(Err(Skip::NoParent));
    };
    let files = file_facts(repo, &parent, commit)?;
    let located = match locate(&files, opts.paths.as_ref(), opts.limits) {
        Ok(l) => l,
        Err(skip) => return Ok(Err(skip)),
    };
    let sha = commit.id().to_string();
    let mut expected = Vec::new();
    for (file, ranges) in &located {
        for &(start, end) in ranges {
            expected.push(ExpectedLocation {
                file: file.clone(),
                start,
                end,
            });
        }
    }
    Ok(Ok(EvalCase {
        schema_version: EVAL_SCHEMA_VERSION,
        id: case_id(&sha),
        revision: parent.id().to_string(),
        targets: located.into_iter().map(|(f, _)| f).collect(),
        expected,
        origin: CaseOrigin {
            kind: OriginKind::Mined,
            commit: Some(sha),
            message: Some(message.trim_end().to_string()),
        },
    }))
}

/// Measure every file the commit changed against its parent.
fn file_facts(
    repo: &Repository,
    parent: &Commit<'_>,
    commit: &Commit<'_>,
) -> Result<Vec<FileFacts>, EvalError> {
    let old_tree = parent
        .tree()
        .map_err(|e| git("read the parent's tree", &e))?;
    let new_tree = commit
        .tree()
        .map_err(|e| git("read the commit's tree", &e))?;
    let mut opts = DiffOptions::new();
    // Blobs over the review's size cap are never loaded (libgit2 sniffs them as binary).
    opts.context_lines(0)
        .interhunk_lines(0)
        .max_size(i64::try_from(MAX_BLOB_BYTES).unwrap_or(i64::MAX));
    let mut diff = repo
        .diff_tree_to_tree(Some(&old_tree), Some(&new_tree), Some(&mut opts))
        .map_err(|e| git("diff the commit", &e))?;
    let mut find = DiffFindOptions::new();
    find.renames(true);
    diff.find_similar(Some(&mut find))
        .map_err(|e| git("find renames", &e))?;
    let mut out = Vec::new();
    for idx in 0..diff.deltas().len() {
        if let Some(f) = one_file(repo, &diff, idx)? {
            out.push(f);
        }
    }
    Ok(out)
}

/// The largest blob mined (what a review reads by default: `max_file_bytes`); a side over it
/// is never loaded and its file is no target.
pub const MAX_BLOB_BYTES: u64 = crate::target::DEFAULT_MAX_FILE_BYTES;

/// A file measured without reading it (a submodule, a side over the size cap).
fn unread(old_path: String, new_path: String, change: Change, why: &'static str) -> FileFacts {
    FileFacts {
        old_path,
        new_path,
        change,
        binary: false,
        hunks: vec![],
        whitespace_only: false,
        old_lines: 0,
        // Never looked at: the file is rejected for `why` before its content counts.
        content: Content::Code,
        unread: Some(why),
    }
}

/// The hunks of delta `idx` (zero context), every one counted as code until measured.
fn hunks_of(diff: &Diff<'_>, idx: usize, new_path: &str) -> Result<Vec<Hunk>, EvalError> {
    let patch = Patch::from_diff(diff, idx).map_err(|e| git(&format!("diff {new_path}"), &e))?;
    let mut hunks = Vec::new();
    if let Some(p) = &patch {
        for h in 0..p.num_hunks() {
            let (hunk, _) = p
                .hunk(h)
                .map_err(|e| git(&format!("diff {new_path}"), &e))?;
            hunks.push(Hunk {
                old_start: hunk.old_start(),
                old_lines: hunk.old_lines(),
                new_start: hunk.new_start(),
                new_lines: hunk.new_lines(),
                code: true,
            });
        }
    }
    Ok(hunks)
}

/// Whether the two sides differ only in whitespace.
fn whitespace_only(
    o: &git2::Blob<'_>,
    n: &git2::Blob<'_>,
    (old_path, new_path): (&str, &str),
) -> Result<bool, EvalError> {
    let mut ws = DiffOptions::new();
    ws.context_lines(0).ignore_whitespace(true);
    let p = Patch::from_blobs(
        o,
        Some(std::path::Path::new(old_path)),
        n,
        Some(std::path::Path::new(new_path)),
        Some(&mut ws),
    )
    .map_err(|e| git(&format!("diff {new_path}"), &e))?;
    Ok(p.num_hunks() == 0)
}

fn one_file(
    repo: &Repository,
    diff: &Diff<'_>,
    idx: usize,
) -> Result<Option<FileFacts>, EvalError> {
    let Some(delta) = diff.get_delta(idx) else {
        return Ok(None);
    };
    let path = |f: &git2::DiffFile<'_>| f.path().and_then(|p| p.to_str()).map(str::to_string);
    let (Some(old_path), Some(new_path)) = (path(&delta.old_file()), path(&delta.new_file()))
    else {
        // A path that is not UTF-8 cannot be a target.
        return Ok(None);
    };
    let change = match delta.status() {
        Delta::Added => Change::Added,
        Delta::Deleted => Change::Deleted,
        Delta::Modified => Change::Modified,
        Delta::Renamed => Change::Renamed,
        _ => Change::Other,
    };
    // A submodule's "blob" is a commit of another repository: nothing to read or review.
    let gitlink = |f: git2::DiffFile<'_>| f.mode() == git2::FileMode::Commit;
    if gitlink(delta.old_file()) || gitlink(delta.new_file()) {
        return Ok(Some(unread(
            old_path,
            new_path,
            change,
            "a submodule (its commit pointer is not reviewable content)",
        )));
    }
    // Sizes from the object headers: a side over the cap is never loaded.
    let odb = repo
        .odb()
        .map_err(|e| git("open the object database", &e))?;
    let too_large = [delta.old_file().id(), delta.new_file().id()]
        .into_iter()
        .filter(|oid| !oid.is_zero())
        .any(|oid| {
            odb.read_header(oid)
                .is_ok_and(|(size, _)| size as u64 > MAX_BLOB_BYTES)
        });
    if too_large {
        return Ok(Some(unread(
            old_path,
            new_path,
            change,
            "over the size cap (a review would skip it as too_large)",
        )));
    }
    let mut hunks = hunks_of(diff, idx, &new_path)?;
    // Binary-ness is known once the patch was generated.
    let binary = diff.get_delta(idx).is_some_and(|d| d.flags().is_binary());
    let blob = |oid: Oid| {
        if oid.is_zero() {
            return Ok(None);
        }
        repo.find_blob(oid)
            .map(Some)
            .map_err(|e| git(&format!("read {old_path}"), &e))
    };
    let old_blob = blob(delta.old_file().id())?;
    let new_blob = blob(delta.new_file().id())?;
    let old_lines = old_blob.as_ref().map_or(0, |b| line_count(b.content()));
    let content = match (&old_blob, &new_blob) {
        (Some(o), Some(n)) if !binary => measure(
            &new_path,
            &String::from_utf8_lossy(o.content()),
            &String::from_utf8_lossy(n.content()),
            &mut hunks,
        ),
        _ => Content::Code,
    };
    let whitespace_only = match (&old_blob, &new_blob) {
        (Some(o), Some(n)) if !binary && !hunks.is_empty() => {
            whitespace_only(o, n, (&old_path, &new_path))?
        }
        _ => false,
    };
    Ok(Some(FileFacts {
        old_path,
        new_path,
        change,
        binary,
        hunks,
        whitespace_only,
        content,
        old_lines,
        unread: None,
    }))
}

/// Lines in `bytes` (a last line without a newline counts).
pub fn line_count(bytes: &[u8]) -> u32 {
    let n = bytes.iter().filter(|&&b| b == b'\n').count()
        + usize::from(bytes.last().is_some_and(|&b| b != b'\n'));
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_lines() {
        assert_eq!(line_count(b""), 0);
        assert_eq!(line_count(b"a"), 1);
        assert_eq!(line_count(b"a\n"), 1);
        assert_eq!(line_count(b"a\nb"), 2);
        assert_eq!(line_count(b"\n\n"), 2);
    }

    #[test]
    fn mined_cases_are_written_one_file_each_and_skips_are_not() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("cases");
        let mined = crate::eval::console::tests::mined();
        write_cases(&mined, &out).unwrap();
        let names: Vec<_> = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names, ["fix-0123456789ab.json"]);
        let text = std::fs::read_to_string(out.join("fix-0123456789ab.json")).unwrap();
        let back: EvalCase = serde_json::from_str(&text).unwrap();
        assert_eq!(Some(&back), mined.cases().next());
    }
}
