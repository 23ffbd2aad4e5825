//! The review context (docs/architecture.md §19), resolved once into the plan: the project
//! rules (files read through a swappable source of repository inputs, capped at 8 KB in
//! all), the `[[review.paths]]` instructions (validated here, matched per target) and the
//! focus.

use super::error::RepoFileReadError;
use crate::config::PathInstruction;
use globset::{GlobBuilder, GlobMatcher};
use std::path::{Path, PathBuf};

/// The project rules of all files together may not exceed this many bytes.
pub const RULES_CAP: usize = 8 * 1024;
/// Rules files looked for when `[review] rules` is empty.
pub const DEFAULT_RULES: [&str; 2] = ["REVIEW.md", ".arev/rules.md"];
/// `--focus` / `[review] focus` and each `[[review.paths]] instructions` are at most this
/// many bytes (a prompt block, not a document).
pub const TEXT_CAP: usize = 2 * 1024;

/// A review-context input that cannot be used: exit 2, nothing reviewed.
#[derive(Debug, thiserror::Error)]
pub enum ContextError {
    #[error(
        "project rules are {total} bytes in all, over the {cap}-byte (8 KB) cap: {files}; shorten them or list fewer in [review] rules"
    )]
    RulesTooLarge {
        total: usize,
        cap: usize,
        files: String,
    },
    #[error("[review] rules: {path}: no such file")]
    RulesMissing { path: String },
    #[error("project rules {path}: {source}")]
    RulesUnreadable {
        path: String,
        #[source]
        source: RepoFileReadError,
    },
    #[error("project rules {0}: not UTF-8 text")]
    RulesNotUtf8(String),
    #[error("[[review.paths]] glob `{glob}`: {message}")]
    BadPathGlob { glob: String, message: String },
    #[error("{key} is {len} bytes, over the {cap}-byte cap")]
    TooLong { key: String, len: usize, cap: usize },
}

impl From<ContextError> for crate::errors::ExpectedError {
    fn from(e: ContextError) -> Self {
        Self::Resolve(Box::new(e))
    }
}

/// Where repository inputs are read from. The worktree source reads the checked-out files;
/// `--repo-config base` (docs/architecture.md §15.1) swaps in a source reading them from the
/// merge-base commit, so that a change cannot rewrite the rules it is reviewed by.
pub trait RepoFiles {
    /// The bytes of the repository-relative file `rel`; None when it does not exist.
    fn read(&self, rel: &str) -> Result<Option<Vec<u8>>, RepoFileReadError>;
}

/// Repository inputs as checked out under `root` (never through a symlink).
pub struct Worktree<'a> {
    pub root: &'a Path,
}

impl RepoFiles for Worktree<'_> {
    fn read(&self, rel: &str) -> Result<Option<Vec<u8>>, RepoFileReadError> {
        // A file far over the cap is refused by size, never loaded.
        Ok(crate::target::read_repo_file(
            self.root,
            rel,
            16 * RULES_CAP as u64,
        )?)
    }
}

/// Repository inputs as they are in a commit's tree (`--repo-config base`: the merge-base),
/// never through a symlink.
pub struct CommitTree<'a> {
    pub repo: &'a git2::Repository,
    pub commit: git2::Oid,
}

impl RepoFiles for CommitTree<'_> {
    fn read(&self, rel: &str) -> Result<Option<Vec<u8>>, RepoFileReadError> {
        let tree = self
            .repo
            .find_commit(self.commit)
            .and_then(|c| c.tree())
            .map_err(|source| RepoFileReadError::Commit {
                commit: self.commit,
                source,
            })?;
        let entry_error = |source| RepoFileReadError::Entry {
            rel: rel.to_string(),
            source,
        };
        let entry = match tree.get_path(Path::new(rel)) {
            Ok(e) => e,
            Err(e) if e.code() == git2::ErrorCode::NotFound => return Ok(None),
            Err(e) => return Err(entry_error(e)),
        };
        if entry.filemode() == 0o120000 {
            return Err(RepoFileReadError::Symlink {
                rel: rel.to_string(),
                commit: self.commit,
            });
        }
        let blob = entry
            .to_object(self.repo)
            .and_then(|o| o.peel_to_blob())
            .map_err(entry_error)?;
        if blob.size() > 16 * RULES_CAP {
            return Err(RepoFileReadError::TooLarge {
                rel: rel.to_string(),
                size: blob.size(),
                cap: RULES_CAP,
            });
        }
        Ok(Some(blob.content().to_vec()))
    }
}

/// No repository inputs at all (`--repo-config ignore`).
pub struct NoFiles;

impl RepoFiles for NoFiles {
    fn read(&self, _rel: &str) -> Result<Option<Vec<u8>>, RepoFileReadError> {
        Ok(None)
    }
}

/// One project rules file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RulesFile {
    /// Repository-relative, as configured (normalised).
    pub path: String,
    pub text: String,
}

/// Everything besides the target that shapes what reviewers look for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReviewContext {
    pub rules: Vec<RulesFile>,
    /// `--focus` or `[review] focus`, trimmed; None when empty.
    pub focus: Option<String>,
    /// `[[review.paths]]`, validated.
    pub paths: Vec<PathInstruction>,
}

impl ReviewContext {
    /// Absolute paths of the rules files under `root` (agents may Read them).
    pub fn rules_paths(&self, root: &Path) -> Vec<PathBuf> {
        self.rules.iter().map(|r| root.join(&r.path)).collect()
    }

    /// Whether `rel` (repository-relative) is a rules file.
    pub fn is_rules_file(&self, rel: &str) -> bool {
        let rel = rel.trim().trim_start_matches("./");
        self.rules.iter().any(|r| r.path == rel)
    }
}

/// Resolve the context: rules through `src`, focus (flag over config), path instructions.
pub fn resolve_context(
    rules: &[String],
    focus: Option<&str>,
    paths: &[PathInstruction],
    src: &dyn RepoFiles,
) -> Result<ReviewContext, ContextError> {
    let focus = focus.map(str::trim).filter(|f| !f.is_empty());
    if let Some(f) = focus {
        check_len("--focus / [review] focus", f)?;
    }
    for (i, p) in paths.iter().enumerate() {
        matcher(&p.glob)?;
        check_len(
            &format!("[[review.paths]] #{} instructions", i + 1),
            &p.instructions,
        )?;
    }
    Ok(ReviewContext {
        rules: load_rules(rules, src)?,
        focus: focus.map(String::from),
        paths: paths.to_vec(),
    })
}

fn check_len(key: &str, text: &str) -> Result<(), ContextError> {
    if text.len() > TEXT_CAP {
        return Err(ContextError::TooLong {
            key: key.into(),
            len: text.len(),
            cap: TEXT_CAP,
        });
    }
    Ok(())
}

/// The rules files: `configured` (each must exist), or the defaults that exist. Their text
/// together is at most `RULES_CAP` bytes.
pub fn load_rules(
    configured: &[String],
    src: &dyn RepoFiles,
) -> Result<Vec<RulesFile>, ContextError> {
    let explicit = !configured.is_empty();
    let names: Vec<String> = if explicit {
        configured.to_vec()
    } else {
        DEFAULT_RULES.iter().map(|s| (*s).to_string()).collect()
    };
    let mut out: Vec<RulesFile> = vec![];
    for name in names {
        let path = name.trim().trim_start_matches("./").to_string();
        if out.iter().any(|r| r.path == path) {
            continue;
        }
        let bytes = match src.read(&path) {
            Ok(Some(b)) => b,
            Ok(None) if explicit => return Err(ContextError::RulesMissing { path }),
            Ok(None) => continue,
            Err(source) => return Err(ContextError::RulesUnreadable { path, source }),
        };
        let text =
            String::from_utf8(bytes).map_err(|_| ContextError::RulesNotUtf8(path.clone()))?;
        out.push(RulesFile { path, text });
    }
    let total: usize = out.iter().map(|r| r.text.len()).sum();
    if total > RULES_CAP {
        let files = out
            .iter()
            .map(|r| format!("{} ({} bytes)", r.path, r.text.len()))
            .collect::<Vec<_>>()
            .join(", ");
        return Err(ContextError::RulesTooLarge {
            total,
            cap: RULES_CAP,
            files,
        });
    }
    Ok(out)
}

/// The matcher of a `[[review.paths]]` glob (a bare name matches at any depth, like the
/// excludes; `*` never crosses `/`).
fn matcher(glob: &str) -> Result<GlobMatcher, ContextError> {
    let g = glob.trim().trim_start_matches("./");
    let text = if g.contains('/') {
        g.trim_start_matches('/').to_string()
    } else {
        format!("**/{g}")
    };
    GlobBuilder::new(&text)
        .literal_separator(true)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|e| ContextError::BadPathGlob {
            glob: glob.to_string(),
            message: e.kind().to_string(),
        })
}

/// One `[[review.paths]]` entry that matched files of the target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatchedPaths {
    pub glob: String,
    pub instructions: String,
    /// The matching files, sorted.
    pub files: Vec<String>,
}

/// The entries of `paths` that match at least one of `files`, each with its files.
pub fn match_paths<'a>(
    paths: &[PathInstruction],
    files: impl Iterator<Item = &'a str>,
) -> Vec<MatchedPaths> {
    let files: Vec<&str> = files.collect();
    paths
        .iter()
        .filter_map(|p| {
            let m = matcher(&p.glob).ok()?;
            let mut hit: Vec<String> = files
                .iter()
                .filter(|f| m.is_match(f))
                .map(|f| (*f).to_string())
                .collect();
            hit.sort();
            (!hit.is_empty()).then(|| MatchedPaths {
                glob: p.glob.clone(),
                instructions: p.instructions.clone(),
                files: hit,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    struct Mem(BTreeMap<&'static str, Vec<u8>>);

    impl RepoFiles for Mem {
        fn read(&self, rel: &str) -> Result<Option<Vec<u8>>, RepoFileReadError> {
            Ok(self.0.get(rel).cloned())
        }
    }

    fn mem(files: &[(&'static str, &str)]) -> Mem {
        Mem(files
            .iter()
            .map(|(k, v)| (*k, v.as_bytes().to_vec()))
            .collect())
    }

    #[test]
    fn default_rules_are_taken_when_present() {
        let src = mem(&[("REVIEW.md", "R"), (".arev/rules.md", "A")]);
        let r = load_rules(&[], &src).unwrap();
        assert_eq!(
            r.iter().map(|f| f.path.as_str()).collect::<Vec<_>>(),
            ["REVIEW.md", ".arev/rules.md"]
        );
        assert!(load_rules(&[], &mem(&[])).unwrap().is_empty());
    }

    #[test]
    fn configured_rules_replace_the_defaults_and_must_exist() {
        let src = mem(&[("REVIEW.md", "R"), ("docs/review.md", "D")]);
        let r = load_rules(&["./docs/review.md".into()], &src).unwrap();
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].path, "docs/review.md");
        let e = load_rules(&["nope.md".into()], &src).unwrap_err();
        assert_eq!(e.to_string(), "[review] rules: nope.md: no such file");
    }

    #[test]
    fn the_cap_counts_all_files_and_names_them() {
        let big = "x".repeat(5000);
        let src = mem(&[("REVIEW.md", &big), (".arev/rules.md", &big)]);
        let e = load_rules(&[], &src).unwrap_err().to_string();
        assert!(e.contains("10000 bytes in all"), "{e}");
        assert!(
            e.contains("REVIEW.md (5000 bytes), .arev/rules.md (5000 bytes)"),
            "{e}"
        );
        let exact = "x".repeat(RULES_CAP);
        assert!(load_rules(&[], &mem(&[("REVIEW.md", &exact)])).is_ok());
    }

    #[test]
    fn non_utf8_rules_are_refused() {
        let src = Mem(BTreeMap::from([("REVIEW.md", vec![0xff, 0xfe])]));
        assert!(matches!(
            load_rules(&[], &src),
            Err(ContextError::RulesNotUtf8(_))
        ));
    }

    #[test]
    fn path_instructions_match_only_present_files() {
        let paths = vec![
            PathInstruction {
                glob: "migrations/**".into(),
                instructions: "reversible".into(),
            },
            PathInstruction {
                glob: "*.sql".into(),
                instructions: "no locks".into(),
            },
            PathInstruction {
                glob: "web/**".into(),
                instructions: "unused".into(),
            },
        ];
        let files = ["migrations/001.sql", "src/db/q.sql", "src/lib.rs"];
        let m = match_paths(&paths, files.iter().copied());
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].files, ["migrations/001.sql"]);
        assert_eq!(m[1].files, ["migrations/001.sql", "src/db/q.sql"]);
    }

    #[test]
    fn focus_and_globs_are_validated() {
        let src = mem(&[]);
        let c = resolve_context(&[], Some("  auth  "), &[], &src).unwrap();
        assert_eq!(c.focus.as_deref(), Some("auth"));
        assert_eq!(
            resolve_context(&[], Some(" "), &[], &src).unwrap().focus,
            None
        );
        let long = "y".repeat(TEXT_CAP + 1);
        assert!(resolve_context(&[], Some(&long), &[], &src).is_err());
        let bad = [PathInstruction {
            glob: "a/[".into(),
            instructions: "x".into(),
        }];
        let e = resolve_context(&[], None, &bad, &src)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("[[review.paths]] glob `a/[`"), "{e}");
    }
}
