//! Excludes (docs/architecture.md §19.3): which files of a diff, a directory or a glob are
//! left out of the review before anything is read — the configured and `--exclude` globs
//! (`excluded`), files `.gitattributes` marks `linguist-generated` (`generated`) or
//! `linguist-vendored` (`vendored`), asked of git itself, and well-known lockfiles
//! (`lockfile`). A file named on the command line is never excluded: the user asked for it.

use super::{SkipReason, TargetError};
use git2::{AttrCheckFlags, AttrValue, Repository};
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use std::path::Path;

/// Lockfiles left out by default (`[review] skip_lockfiles`), matched by file name at any
/// depth: machine-written dependency pins whose review is noise.
pub const LOCKFILES: &[&str] = &[
    "Cargo.lock",
    "package-lock.json",
    "npm-shrinkwrap.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "bun.lock",
    "bun.lockb",
    "deno.lock",
    "composer.lock",
    "Gemfile.lock",
    "Pipfile.lock",
    "poetry.lock",
    "uv.lock",
    "pdm.lock",
    "go.sum",
    "go.work.sum",
    "flake.lock",
    "mix.lock",
    "pubspec.lock",
    "Podfile.lock",
    "Package.resolved",
    "Cartfile.resolved",
    "packages.lock.json",
    "paket.lock",
    "gradle.lockfile",
    "conan.lock",
    "shard.lock",
    "stack.yaml.lock",
    "MODULE.bazel.lock",
];

/// Where `linguist-generated` / `linguist-vendored` are read from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum AttributeSource {
    /// The repository's own attributes: `.gitattributes` in the working tree, then the
    /// index, plus `.git/info/attributes` and the user's global file (git's usual order).
    #[default]
    Repository,
    /// The `.gitattributes` files of this commit (the merge-base under `--repo-config
    /// base`: a change cannot mark its own files generated), plus `.git/info/attributes`
    /// and the user's global file.
    Commit(String),
    /// No attribute lookups (e.g. when repository inputs are ignored).
    Ignore,
}

/// What to leave out, as configured (plain data; compiled per resolution).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Excludes {
    /// `[review] exclude` then `--exclude`, as written.
    pub globs: Vec<String>,
    /// `[review] skip_lockfiles`.
    pub skip_lockfiles: bool,
    pub attributes: AttributeSource,
}

impl Excludes {
    /// The configured globs and lockfile switch, attributes read from the repository.
    pub fn new(globs: Vec<String>, skip_lockfiles: bool) -> Self {
        Self {
            globs,
            skip_lockfiles,
            attributes: AttributeSource::Repository,
        }
    }

    /// Nothing excluded (re-pinning an already pinned file list).
    pub fn none() -> Self {
        Self {
            globs: vec![],
            skip_lockfiles: false,
            attributes: AttributeSource::Ignore,
        }
    }

    /// Check every glob (an invalid one is a usage error naming it).
    pub fn validate(&self) -> Result<(), TargetError> {
        compile_globs(&self.globs).map(|_| ())
    }

    /// Compile against `repo` (attributes are looked up only with a repository).
    pub(crate) fn compile<'r>(
        &'r self,
        repo: Option<&'r Repository>,
    ) -> Result<Excluder<'r>, TargetError> {
        let at_commit = match (&self.attributes, repo) {
            (AttributeSource::Commit(c), Some(r)) => Some(commit_attributes(r, c)?),
            _ => None,
        };
        Ok(Excluder {
            set: compile_globs(&self.globs)?,
            globs: &self.globs,
            lockfiles: self.skip_lockfiles,
            repo: repo.filter(|_| self.attributes == AttributeSource::Repository),
            at_commit,
            rules: std::cell::RefCell::new(AttrRules::default()),
        })
    }
}

/// A handle on the repository at `repo` whose index is `commit`'s tree (in memory only,
/// never written): attribute lookups with `INDEX_ONLY` then read that commit's
/// `.gitattributes` files.
fn commit_attributes(repo: &Repository, commit: &str) -> Result<Repository, TargetError> {
    let bad = |e: git2::Error| TargetError::InvalidExclude {
        glob: format!(".gitattributes at {commit}"),
        message: e.message().to_string(),
    };
    let own = Repository::open(repo.path()).map_err(bad)?;
    {
        let tree = git2::Oid::from_str(commit)
            .and_then(|oid| own.find_commit(oid))
            .and_then(|c| c.tree())
            .map_err(bad)?;
        let mut index = git2::Index::new().map_err(bad)?;
        index.read_tree(&tree).map_err(bad)?;
        own.set_index(&mut index).map_err(bad)?;
    }
    Ok(own)
}

/// A glob without a `/` matches a file name at any depth (as in `.gitignore`); any other
/// glob is anchored at the repository root. `*` never crosses a `/`, `**` does.
fn glob_text(glob: &str) -> String {
    let g = glob.trim().trim_start_matches("./");
    if g.contains('/') {
        g.trim_start_matches('/').to_owned()
    } else {
        format!("**/{g}")
    }
}

pub(crate) fn compile_globs(globs: &[String]) -> Result<GlobSet, TargetError> {
    let mut set = GlobSetBuilder::new();
    for g in globs {
        let glob = GlobBuilder::new(&glob_text(g))
            .literal_separator(true)
            .build()
            .map_err(|e| TargetError::InvalidExclude {
                glob: g.clone(),
                message: e.kind().to_string(),
            })?;
        set.add(glob);
    }
    set.build().map_err(|e| TargetError::InvalidExclude {
        glob: globs.join(" "),
        message: e.to_string(),
    })
}

/// Compiled excludes for one resolution.
pub(crate) struct Excluder<'r> {
    set: GlobSet,
    globs: &'r [String],
    lockfiles: bool,
    repo: Option<&'r Repository>,
    /// Attributes read from a commit's tree instead (see [`commit_attributes`]).
    at_commit: Option<Repository>,
    /// Where attribute rules that could set the linguist attributes are (filled as asked).
    rules: std::cell::RefCell<AttrRules>,
}

/// The attribute files that could mark a path `linguist-*`, found lazily: a path is looked up
/// in git only when one of them applies to it. A rule file that does not mention `linguist`
/// cannot set those attributes (a macro that does is defined in a file that mentions it), so
/// most paths of most repositories need no lookup — libgit2's costs tens of microseconds.
#[derive(Default)]
struct AttrRules {
    /// `info/attributes`, the user's and the system's files mention `linguist` (None: not
    /// read yet).
    global: Option<bool>,
    /// Per directory (`""` for the root): whether a `.gitattributes` there or above does.
    dirs: std::collections::HashMap<String, bool>,
    /// The index (for a `.gitattributes` tracked but missing from the working tree).
    index: Option<Option<git2::Index>>,
}

/// Whether the file at `path` mentions `linguist` (a missing file does not).
fn mentions_linguist(path: &Path) -> bool {
    std::fs::read(path).is_ok_and(|b| b.windows(8).any(|w| w == b"linguist"))
}

impl AttrRules {
    fn global(&mut self, repo: &Repository) -> bool {
        *self.global.get_or_insert_with(|| {
            let config = repo.config().ok();
            let user = config
                .as_ref()
                .and_then(|c| c.get_path("core.attributesfile").ok())
                .or_else(|| Some(crate::xdg::config_home()?.join("git").join("attributes")));
            let mut files = vec![
                repo.commondir().join("info").join("attributes"),
                std::path::PathBuf::from("/etc/gitattributes"),
            ];
            files.extend(user);
            files.iter().any(|f| mentions_linguist(f))
        })
    }

    /// Whether a `.gitattributes` in `dir` (repository-relative) or above mentions
    /// `linguist`; one tracked but missing from the working tree counts as mentioning it.
    fn dir(&mut self, repo: &Repository, dir: &str) -> bool {
        if let Some(&known) = self.dirs.get(dir) {
            return known;
        }
        let parent = dir.rfind('/').map_or("", |i| &dir[..i]);
        let above = !dir.is_empty() && self.dir(repo, parent);
        let rel = if dir.is_empty() {
            ".gitattributes".to_owned()
        } else {
            format!("{dir}/.gitattributes")
        };
        let here = match repo.workdir().map(|w| w.join(&rel)) {
            Some(file) if file.exists() => mentions_linguist(&file),
            _ => self
                .index
                .get_or_insert_with(|| repo.index().ok())
                .as_ref()
                .is_some_and(|i| i.get_path(Path::new(&rel), 0).is_some()),
        };
        self.dirs.insert(dir.to_owned(), above || here);
        above || here
    }

    /// Whether `rel` could carry a `linguist-*` attribute.
    fn may_apply(&mut self, repo: &Repository, rel: &str) -> bool {
        let dir = rel.rfind('/').map_or("", |i| &rel[..i]);
        self.global(repo) || self.dir(repo, dir)
    }
}

/// Whether git attribute `name` is set (`name`, `name=true`) for `rel`; unset, `-name`,
/// `name=false` and lookup errors count as not set.
fn attr_set(repo: &Repository, rel: &str, name: &str, flags: AttrCheckFlags) -> bool {
    match repo.get_attr(Path::new(rel), name, flags) {
        Ok(v) => match AttrValue::from_string(v) {
            AttrValue::True => true,
            AttrValue::String(s) => matches!(s.trim(), "true" | "1" | "yes"),
            _ => false,
        },
        Err(_) => false,
    }
}

/// Whether `rel`'s file name is a well-known lockfile.
pub fn is_lockfile(rel: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    LOCKFILES.contains(&name)
}

impl Excluder<'_> {
    /// Why `rel` (repository-relative) is left out, with the glob for `excluded`: the
    /// user's globs first (the first that matches, in configuration order), then
    /// `generated`, `vendored`, `lockfile`.
    pub fn why(&self, rel: &str) -> Option<(SkipReason, Option<String>)> {
        if let Some(i) = self.set.matches(rel).into_iter().min() {
            let glob = self.globs.get(i).cloned();
            return Some((SkipReason::Excluded, glob));
        }
        let rules = |repo| self.rules.borrow_mut().may_apply(repo, rel);
        let lookup = match (&self.at_commit, self.repo) {
            (Some(at), _) => Some((at, AttrCheckFlags::INDEX_ONLY)),
            (None, Some(repo)) if rules(repo) => Some((repo, AttrCheckFlags::FILE_THEN_INDEX)),
            _ => None,
        };
        if let Some((repo, flags)) = lookup {
            if attr_set(repo, rel, "linguist-generated", flags) {
                return Some((SkipReason::Generated, None));
            }
            if attr_set(repo, rel, "linguist-vendored", flags) {
                return Some((SkipReason::Vendored, None));
            }
        }
        if self.lockfiles && is_lockfile(rel) {
            return Some((SkipReason::Lockfile, None));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn why(e: &Excludes, rel: &str) -> Option<(SkipReason, Option<String>)> {
        e.compile(None).unwrap().why(rel)
    }

    #[test]
    fn globs_anchor_at_the_root_unless_they_are_bare_names() {
        let e = Excludes::new(
            vec!["*.min.js".into(), "gen/**".into(), "./docs/*.md".into()],
            false,
        );
        assert_eq!(
            why(&e, "web/a/app.min.js"),
            Some((SkipReason::Excluded, Some("*.min.js".into())))
        );
        assert_eq!(
            why(&e, "gen/x/y.rs").map(|w| w.1),
            Some(Some("gen/**".into()))
        );
        assert!(why(&e, "src/gen/y.rs").is_none(), "gen/** is anchored");
        assert!(why(&e, "docs/a.md").is_some());
        assert!(why(&e, "docs/sub/a.md").is_none(), "* does not cross /");
    }

    #[test]
    fn the_first_configured_glob_names_the_reason() {
        let e = Excludes::new(vec!["src/**".into(), "*.rs".into()], true);
        assert_eq!(why(&e, "src/a.rs").unwrap().1.as_deref(), Some("src/**"));
        // A user's glob wins over the lockfile rule.
        let e = Excludes::new(vec!["Cargo.*".into()], true);
        assert_eq!(why(&e, "Cargo.lock").unwrap().0, SkipReason::Excluded);
    }

    #[test]
    fn lockfiles_by_name_at_any_depth_and_only_when_asked() {
        let on = Excludes::new(vec![], true);
        assert_eq!(
            why(&on, "web/package-lock.json"),
            Some((SkipReason::Lockfile, None))
        );
        assert_eq!(why(&on, "go.sum").map(|w| w.0), Some(SkipReason::Lockfile));
        assert!(why(&on, "src/lock.rs").is_none());
        assert!(why(&on, "Cargo.lock.md").is_none());
        assert!(why(&Excludes::new(vec![], false), "Cargo.lock").is_none());
    }

    #[test]
    fn an_invalid_glob_is_named() {
        let e = Excludes::new(vec!["ok/**".into(), "bad/[".into()], true);
        let err = e.validate().unwrap_err().to_string();
        assert!(err.contains("`bad/[`"), "{err}");
    }

    #[test]
    fn attributes_come_from_git() {
        let d = tempfile::tempdir().unwrap();
        let repo = Repository::init(d.path()).unwrap();
        std::fs::write(
            d.path().join(".gitattributes"),
            "gen/** linguist-generated\nthird_party/** linguist-vendored=true\n\
             gen/keep.rs -linguist-generated\nx.rs linguist-generated=false\n",
        )
        .unwrap();
        let e = Excludes::new(vec![], true);
        let ex = e.compile(Some(&repo)).unwrap();
        assert_eq!(
            ex.why("gen/a/b.rs").map(|w| w.0),
            Some(SkipReason::Generated)
        );
        assert_eq!(
            ex.why("third_party/z.c").map(|w| w.0),
            Some(SkipReason::Vendored)
        );
        assert!(ex.why("gen/keep.rs").is_none(), "-attr unsets");
        assert!(ex.why("x.rs").is_none(), "=false is not set");
        assert!(ex.why("src/a.rs").is_none());
        let ignored = Excludes {
            attributes: AttributeSource::Ignore,
            ..e.clone()
        };
        assert!(ignored
            .compile(Some(&repo))
            .unwrap()
            .why("gen/a/b.rs")
            .is_none());
    }
}
