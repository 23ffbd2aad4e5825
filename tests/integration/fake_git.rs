//! The fake forges' repository: the compare endpoints of `fake_github` and `fake_gitlab`
//! answer from a real git repository (the test's), as the forges answer from theirs —
//! commits resolved by `git rev-parse` (an unknown one: None, the forges' 404), the merge
//! base, the commits between, and each changed file with its hunks (`git diff`, headers
//! stripped: the forges' `patch` / `diff` fields start at the first `@@`).

#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

fn git(repo: &Path, args: &[&str]) -> Option<String> {
    let o = Command::new("git")
        .args(args)
        .current_dir(repo)
        .output()
        .ok()?;
    o.status
        .success()
        .then(|| String::from_utf8_lossy(&o.stdout).into_owned())
}

/// The full sha of commit `rev` (None when the repository has no such commit).
pub fn resolve(repo: &Path, rev: &str) -> Option<String> {
    if rev.starts_with('-') {
        return None;
    }
    git(
        repo,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{rev}^{{commit}}"),
        ],
    )
    .map(|s| s.trim().to_string())
}

/// The merge base of two commits (None for unrelated histories).
pub fn merge_base(repo: &Path, a: &str, b: &str) -> Option<String> {
    git(repo, &["merge-base", a, b]).map(|s| s.trim().to_string())
}

/// The commits reachable from `to` and not from `from`, oldest first.
pub fn commits_between(repo: &Path, from: &str, to: &str) -> Vec<String> {
    git(repo, &["rev-list", "--reverse", &format!("{from}..{to}")])
        .unwrap_or_default()
        .lines()
        .map(String::from)
        .collect()
}

/// One commit's fields: (subject, author name, author email, ISO date, parent shas, tree).
pub struct CommitInfo {
    pub sha: String,
    pub message: String,
    pub name: String,
    pub email: String,
    pub date: String,
    pub parents: Vec<String>,
    pub tree: String,
}

pub fn commit_info(repo: &Path, sha: &str) -> CommitInfo {
    let out = git(
        repo,
        &[
            "show",
            "-s",
            "--format=%H%x00%B%x00%an%x00%ae%x00%aI%x00%P%x00%T",
            sha,
        ],
    )
    .unwrap_or_default();
    let f: Vec<&str> = out.trim_end_matches('\n').split('\0').collect();
    let at = |i: usize| f.get(i).copied().unwrap_or("").to_string();
    CommitInfo {
        sha: at(0),
        message: at(1).trim().to_string(),
        name: at(2),
        email: at(3),
        date: at(4),
        parents: at(5).split_whitespace().map(String::from).collect(),
        tree: at(6),
    }
}

/// One changed file between two commits.
pub struct Changed {
    /// `A`, `M`, `D` or `R` (renamed).
    pub status: char,
    pub old_path: String,
    pub new_path: String,
    pub additions: u64,
    pub deletions: u64,
    /// The hunks (None for a binary file).
    pub patch: Option<String>,
    /// The blob at `to` (None for a deleted file).
    pub blob: Option<String>,
    pub old_mode: String,
    pub new_mode: String,
}

/// The files changed from `from` to `to` (`git diff from to`, renames found).
pub fn changed_files(repo: &Path, from: &str, to: &str) -> Vec<Changed> {
    let names = git(repo, &["diff", "--name-status", "-M", from, to]).unwrap_or_default();
    let mut out = vec![];
    for line in names.lines() {
        let parts: Vec<&str> = line.split('\t').collect();
        let status = parts[0].chars().next().unwrap_or('M');
        let (old_path, new_path) = match parts.as_slice() {
            [_, old, new] => (old.to_string(), new.to_string()),
            [_, p] => (p.to_string(), p.to_string()),
            _ => continue,
        };
        let mut paths = vec![old_path.as_str()];
        if new_path != old_path {
            paths.push(new_path.as_str());
        }
        let mut args = vec!["diff", "-M", from, to, "--"];
        args.extend(&paths);
        let text = git(repo, &args).unwrap_or_default();
        let patch = text.find("\n@@").map(|i| text[i + 1..].to_string());
        let (additions, deletions) = patch.as_deref().map_or((0, 0), |p| {
            let count = |c: char| {
                p.lines()
                    .filter(|l| l.starts_with(c) && !l.starts_with("@@"))
                    .count() as u64
            };
            (count('+'), count('-'))
        });
        let blob = (status != 'D')
            .then(|| git(repo, &["rev-parse", &format!("{to}:{new_path}")]))
            .flatten()
            .map(|s| s.trim().to_string());
        let mode = |rev: &str, p: &str| {
            git(repo, &["ls-tree", rev, "--", p])
                .and_then(|s| s.split_whitespace().next().map(String::from))
                .unwrap_or_else(|| "0".into())
        };
        out.push(Changed {
            status,
            additions,
            deletions,
            patch,
            blob,
            old_mode: mode(from, &old_path),
            new_mode: mode(to, &new_path),
            old_path,
            new_path,
        });
    }
    out
}
