//! Keeping the Fixer to the lines of its rulings: in a file it changed, every change more
//! than `FIX_CONTEXT_LINES` lines from each line a ruling names there is restored from the
//! worktree's HEAD, hunk by hunk, and the changes near a ruling are kept. A file no ruling
//! names is restored whole (a new one deleted); a ruling on a file without a line allows the
//! whole file.

use super::changes::{git_err, revert_outside, Change, GitError};
use super::{RevertAction, RevertedPath};
use git2::{DiffOptions, Patch, Repository};

/// How far from a ruling's line (either side) the Fixer may change lines.
pub const FIX_CONTEXT_LINES: u32 = 10;

/// Where the rulings let the Fixer change one file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Allowed {
    /// A ruling names the file without a line: any change is in scope.
    pub whole: bool,
    /// Inclusive 1-based line windows of the file as reviewed (before the fix).
    pub windows: Vec<(u32, u32)>,
}

impl Allowed {
    /// The scope in `path` of rulings given as `(file, line)`.
    pub fn of<'a>(
        path: &str,
        rulings: impl IntoIterator<Item = (Option<&'a str>, Option<u32>)>,
    ) -> Self {
        let mut a = Self::default();
        for (file, line) in rulings {
            if file != Some(path) {
                continue;
            }
            match line {
                Some(l) => a.windows.push((
                    l.saturating_sub(FIX_CONTEXT_LINES).max(1),
                    l.saturating_add(FIX_CONTEXT_LINES),
                )),
                None => a.whole = true,
            }
        }
        a
    }

    /// Whether no change to the file is in scope.
    pub fn nothing(&self) -> bool {
        !self.whole && self.windows.is_empty()
    }

    /// Whether a hunk replacing old lines `from..=to` (an insertion after line `from - 1`
    /// when `to < from`) touches a window.
    fn covers(&self, from: u32, to: u32) -> bool {
        let (from, to) = if to < from {
            (from.saturating_sub(1).max(1), from)
        } else {
            (from, to)
        };
        self.whole || self.windows.iter().any(|&(a, b)| from <= b && to >= a)
    }
}

/// `new` with every hunk (against `old`, no context lines) outside `allowed` undone, and how
/// many hunks were undone. Equal to `new` when every hunk is in scope.
pub fn restrict(
    old: &[u8],
    new: &[u8],
    allowed: &Allowed,
) -> Result<(Vec<u8>, usize), git2::Error> {
    let mut opts = DiffOptions::new();
    opts.context_lines(0).interhunk_lines(0).force_text(true);
    let patch = Patch::from_buffers(old, None, new, None, Some(&mut opts))?;
    let old_lines: Vec<&[u8]> = old.split_inclusive(|&b| b == b'\n').collect();
    let mut out = Vec::with_capacity(new.len());
    let mut next = 0usize; // old lines copied so far
    let mut undone = 0;
    for h in 0..patch.num_hunks() {
        let (hunk, n) = patch.hunk(h)?;
        let (start, count) = (hunk.old_start() as usize, hunk.old_lines() as usize);
        // Lines before the hunk: up to `start - 1` for a change, up to `start` for an
        // insertion (git numbers an insertion by the line it follows).
        let before = if count == 0 {
            start
        } else {
            start.saturating_sub(1)
        };
        for l in &old_lines[next.min(old_lines.len())..before.min(old_lines.len())] {
            out.extend_from_slice(l);
        }
        next = before + count;
        let to = (start + count).saturating_sub(1) as u32;
        if allowed.covers(
            if count == 0 {
                start as u32 + 1
            } else {
                start as u32
            },
            to,
        ) {
            for k in 0..n {
                let line = patch.line_in_hunk(h, k)?;
                if line.origin() == '+' {
                    out.extend_from_slice(line.content());
                }
            }
        } else {
            undone += 1;
            for l in &old_lines[before.min(old_lines.len())..next.min(old_lines.len())] {
                out.extend_from_slice(l);
            }
        }
    }
    for l in &old_lines[next.min(old_lines.len())..] {
        out.extend_from_slice(l);
    }
    Ok((out, undone))
}

/// Of the `kept` paths (changed inside the target), restore what lies outside the lines of
/// `rulings` (`(file, line)`, as reviewed: the worktree's HEAD). Returns the paths still
/// changed and what was restored (`restored`/`deleted` for a file no ruling names,
/// `outside_rulings` for a file whose far changes were undone and near ones kept).
pub fn keep_to_rulings(
    repo: &Repository,
    changes: &[Change],
    kept: Vec<String>,
    rulings: &[(Option<String>, Option<u32>)],
) -> Result<(Vec<String>, Vec<RevertedPath>), GitError> {
    let root = repo
        .workdir()
        .ok_or_else(|| GitError("the worktree has no working directory".into()))?
        .to_path_buf();
    let head = repo
        .head()
        .and_then(|h| h.peel_to_tree())
        .map_err(|e| git_err("read the worktree's HEAD", &e))?;
    let mut still = vec![];
    let mut restored = vec![];
    for path in kept {
        let allowed = Allowed::of(&path, rulings.iter().map(|(f, l)| (f.as_deref(), *l)));
        let Some(change) = changes.iter().find(|c| c.path == path) else {
            still.push(path);
            continue;
        };
        if allowed.nothing() {
            let (_, r) = revert_outside(repo, std::slice::from_ref(change), |_| false)?;
            restored.extend(r);
            continue;
        }
        let old = head
            .get_path(std::path::Path::new(&path))
            .ok()
            .and_then(|e| e.to_object(repo).ok())
            .and_then(|o| o.into_blob().ok())
            .map(|b| b.content().to_vec());
        let (Some(old), Ok(new)) = (old, std::fs::read(root.join(&path))) else {
            // New, deleted or not a file: a ruling names it, so the change is in scope.
            still.push(path);
            continue;
        };
        let (text, undone) =
            restrict(&old, &new, &allowed).map_err(|e| git_err(&format!("diff {path}"), &e))?;
        if undone > 0 {
            std::fs::write(root.join(&path), &text)
                .map_err(|e| GitError(format!("cannot restore lines of {path}: {e}")))?;
            restored.push(RevertedPath {
                path: path.clone(),
                action: RevertAction::OutsideRulings,
            });
        }
        if text != old {
            still.push(path);
        }
    }
    Ok((still, restored))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(n: u32) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    fn edit(text: &str, at: u32, with: &str) -> String {
        text.lines()
            .enumerate()
            .map(|(i, l)| {
                if i as u32 + 1 == at {
                    format!("{with}\n")
                } else {
                    format!("{l}\n")
                }
            })
            .collect()
    }

    #[test]
    fn edits_near_a_ruling_stay_and_far_ones_are_undone() {
        let old = lines(60);
        let near = edit(&old, 12, "fixed 12");
        let both = edit(&near, 50, "stray 50");
        let allowed = Allowed::of("a.rs", [(Some("a.rs"), Some(5)), (Some("b.rs"), Some(50))]);
        assert_eq!(allowed.windows, [(1, 15)]);
        let (out, undone) = restrict(old.as_bytes(), both.as_bytes(), &allowed).unwrap();
        assert_eq!(undone, 1);
        assert_eq!(String::from_utf8(out).unwrap(), near);
        // All in scope: unchanged.
        let (out, undone) = restrict(old.as_bytes(), near.as_bytes(), &allowed).unwrap();
        assert_eq!((out, undone), (near.into_bytes(), 0));
    }

    #[test]
    fn insertions_deletions_and_the_last_line_are_handled() {
        let old = lines(40);
        // An insertion after line 30 and a deletion of line 2; a ruling at line 3.
        let mut new: Vec<String> = old.lines().map(|l| format!("{l}\n")).collect();
        new.insert(30, "inserted\n".into());
        new.remove(1);
        let new: String = new.concat();
        let allowed = Allowed::of("a.rs", [(Some("a.rs"), Some(3))]);
        let (out, undone) = restrict(old.as_bytes(), new.as_bytes(), &allowed).unwrap();
        assert_eq!(undone, 1, "the insertion far away is undone");
        let want: String = old
            .lines()
            .filter(|l| *l != "line 2")
            .map(|l| format!("{l}\n"))
            .collect();
        assert_eq!(String::from_utf8(out).unwrap(), want);
        // A change to a last line without a newline, far away: restored byte for byte.
        let old = format!("{}tail", lines(30));
        let new = format!("{}TAIL\n", lines(30));
        let (out, undone) = restrict(old.as_bytes(), new.as_bytes(), &allowed).unwrap();
        assert_eq!((String::from_utf8(out).unwrap(), undone), (old.clone(), 1));
        // Nothing allowed: everything undone; a whole-file ruling: nothing undone.
        let none = Allowed::of("a.rs", [(Some("b.rs"), Some(3))]);
        assert!(none.nothing());
        let whole = Allowed::of("a.rs", [(Some("a.rs"), None)]);
        let (out, undone) = restrict(old.as_bytes(), new.as_bytes(), &whole).unwrap();
        assert_eq!((out, undone), (new.into_bytes(), 0));
    }
}
