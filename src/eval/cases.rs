//! A cases directory: read every `<id>.json`, validate it (the shape here, pure; the
//! revision and files against the repository in `check_in_repo`), and the case digest.

use super::error::{CaseRule, EvalError};
use super::mine::line_count;
use super::model::{EvalCase, EVAL_SCHEMA_VERSION};
use git2::{ObjectType, Repository};
use sha2::{Digest, Sha256};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// A case with the file it came from.
#[derive(Debug, Clone)]
pub struct LoadedCase {
    pub path: PathBuf,
    pub case: EvalCase,
}

/// A case resolved against the repository.
#[derive(Debug, Clone)]
pub struct ResolvedCase {
    pub path: PathBuf,
    pub case: EvalCase,
    /// `revision` resolved to a commit.
    pub commit: git2::Oid,
    /// sha256 of the case's canonical JSON and the commit: a changed case is re-run.
    pub digest: String,
}

/// Every `*.json` in `dir` (not recursive), sorted by name, parsed and shape-checked.
pub fn load_cases(dir: &Path) -> Result<Vec<LoadedCase>, EvalError> {
    let bad = |message: String| EvalError::Usage(format!("{}: {message}", dir.display()));
    let entries = std::fs::read_dir(dir)
        .map_err(|e| bad(format!("cannot read the cases directory ({e})")))?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json") && p.is_file())
        .collect();
    paths.sort();
    if paths.is_empty() {
        return Err(bad(
            "no case files (*.json) — write some with `arev eval mine --out DIR`".into(),
        ));
    }
    paths
        .into_iter()
        .map(|path| {
            let case_err = |message: String| EvalError::BadCase {
                path: path.clone(),
                message,
            };
            let text = std::fs::read_to_string(&path).map_err(|e| case_err(e.to_string()))?;
            let case: EvalCase = serde_json::from_str(&text).map_err(|e| {
                case_err(format!(
                    "not a valid case (schemas/eval-case.schema.json): {e}"
                ))
            })?;
            let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
            validate(&case, stem).map_err(|rule| EvalError::InvalidCase {
                path: path.clone(),
                rule,
            })?;
            Ok(LoadedCase { path, case })
        })
        .collect()
}

/// Shape rules a case must keep, with the first one it breaks.
pub fn validate(case: &EvalCase, stem: &str) -> Result<(), CaseRule> {
    if case.schema_version != EVAL_SCHEMA_VERSION {
        return Err(CaseRule::SchemaVersion {
            found: case.schema_version,
            expected: EVAL_SCHEMA_VERSION,
        });
    }
    if case.id.is_empty()
        || case.id.len() > 100
        || !case
            .id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        || case.id.starts_with('.')
    {
        return Err(CaseRule::BadId(case.id.clone()));
    }
    if case.id != stem {
        return Err(CaseRule::IdNotFileName(case.id.clone()));
    }
    if case.revision.trim().is_empty() {
        return Err(CaseRule::NoRevision);
    }
    if case.targets.is_empty() {
        return Err(CaseRule::NoTargets);
    }
    let mut seen = BTreeSet::new();
    for t in &case.targets {
        check_path(t).map_err(|problem| CaseRule::TargetPath {
            target: t.clone(),
            problem,
        })?;
        if !seen.insert(t.as_str()) {
            return Err(CaseRule::TargetTwice(t.clone()));
        }
    }
    if case.expected.is_empty() {
        return Err(CaseRule::NoExpected);
    }
    for (i, e) in case.expected.iter().enumerate() {
        if !seen.contains(e.file.as_str()) {
            return Err(CaseRule::ExpectedNotTarget {
                index: i,
                file: e.file.clone(),
            });
        }
        if e.start == 0 || e.end < e.start {
            return Err(CaseRule::ExpectedLines {
                index: i,
                start: e.start,
                end: e.end,
            });
        }
    }
    Ok(())
}

/// A target is a plain repository-relative path outside arev's own configuration (which
/// the checkout replaces with the panel's, see `checkout.rs`).
fn check_path(p: &str) -> Result<(), &'static str> {
    if p.is_empty() || p.starts_with('/') || p.contains('\\') {
        return Err("must be a relative path with `/` separators");
    }
    if p.split('/').any(|c| c.is_empty() || c == "." || c == "..") {
        return Err("must be a normalised path (no empty, `.` or `..` components)");
    }
    if p == "arev.toml" || p.starts_with(".arev/") || p.starts_with(".git/") || p == ".git" {
        return Err("arev's configuration and git's directory cannot be targets");
    }
    Ok(())
}

/// Resolve the revision to a commit and check every target against it: a file (a blob) that
/// exists there, and expected ranges inside it.
pub fn check_in_repo(repo: &Repository, loaded: LoadedCase) -> Result<ResolvedCase, EvalError> {
    let LoadedCase { path, case } = loaded;
    let bad = |message: String| EvalError::BadCase {
        path: path.clone(),
        message,
    };
    let commit = repo
        .revparse_single(&case.revision)
        .and_then(|o| o.peel_to_commit())
        .map_err(|e| bad(format!("revision `{}`: {}", case.revision, e.message())))?;
    let tree = commit
        .tree()
        .map_err(|e| bad(format!("revision `{}`: {}", case.revision, e.message())))?;
    for t in &case.targets {
        let entry = tree.get_path(Path::new(t)).map_err(|_| {
            bad(format!(
                "target `{t}` does not exist at revision {}",
                case.revision
            ))
        })?;
        if entry.kind() != Some(ObjectType::Blob) || entry.filemode() == 0o120000 {
            return Err(bad(format!(
                "target `{t}` is not a regular file at revision {}",
                case.revision
            )));
        }
        let blob = repo
            .find_blob(entry.id())
            .map_err(|e| bad(format!("target `{t}`: {}", e.message())))?;
        let lines = line_count(blob.content());
        for (i, e) in case
            .expected
            .iter()
            .enumerate()
            .filter(|(_, e)| &e.file == t)
        {
            if e.end > lines {
                return Err(bad(format!(
                    "expected[{i}]: lines {}..{} but `{t}` has {lines} lines at revision {}",
                    e.start, e.end, case.revision
                )));
            }
        }
    }
    let digest = digest(&case, &commit.id().to_string());
    Ok(ResolvedCase {
        path,
        commit: commit.id(),
        digest,
        case,
    })
}

/// sha256 of the case's JSON and the commit it resolved to.
pub fn digest(case: &EvalCase, commit: &str) -> String {
    let mut h = Sha256::new();
    h.update(serde_json::to_vec(case).unwrap_or_default());
    h.update(b"\n");
    h.update(commit.as_bytes());
    hex::encode(h.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::model::{CaseOrigin, ExpectedLocation};

    fn case() -> EvalCase {
        EvalCase {
            schema_version: 1,
            id: "seeded-1".into(),
            revision: "HEAD~1".into(),
            targets: vec!["src/a.rs".into(), "src/b.rs".into()],
            expected: vec![ExpectedLocation {
                file: "src/a.rs".into(),
                start: 3,
                end: 4,
            }],
            origin: CaseOrigin::default(),
        }
    }

    #[test]
    fn a_good_case_passes() {
        assert_eq!(validate(&case(), "seeded-1"), Ok(()));
    }

    #[test]
    fn each_rule_names_what_is_wrong() {
        let check = |f: &dyn Fn(&mut EvalCase), stem: &str, needle: &str| {
            let mut c = case();
            f(&mut c);
            let err = validate(&c, stem).unwrap_err().to_string();
            assert!(err.contains(needle), "{err:?} lacks {needle:?}");
        };
        check(&|c| c.schema_version = 2, "seeded-1", "schema_version 2");
        check(&|c| c.id = "a b".into(), "a b", "[A-Za-z0-9._-]");
        check(&|c| c.id = ".x".into(), ".x", "not starting with a dot");
        check(&|_| {}, "other", "differs from the file name");
        check(
            &|c| c.revision = " ".into(),
            "seeded-1",
            "revision is empty",
        );
        check(&|c| c.targets.clear(), "seeded-1", "targets is empty");
        check(
            &|c| c.targets.push("/etc/passwd".into()),
            "seeded-1",
            "relative path",
        );
        check(
            &|c| c.targets.push("src/../x.rs".into()),
            "seeded-1",
            "normalised",
        );
        check(
            &|c| c.targets.push("arev.toml".into()),
            "seeded-1",
            "configuration",
        );
        check(
            &|c| c.targets.push(".arev/prompts/judge.md".into()),
            "seeded-1",
            "configuration",
        );
        check(
            &|c| c.targets.push("src/a.rs".into()),
            "seeded-1",
            "listed twice",
        );
        check(&|c| c.expected.clear(), "seeded-1", "expected is empty");
        check(
            &|c| c.expected[0].file = "src/c.rs".into(),
            "seeded-1",
            "not one of the targets",
        );
        check(
            &|c| c.expected[0].start = 0,
            "seeded-1",
            "start must be ≥ 1",
        );
        check(&|c| c.expected[0].end = 2, "seeded-1", "end ≥ start");
    }

    #[test]
    fn unknown_fields_are_rejected() {
        let text = r#"{"schema_version":1,"id":"x","revision":"HEAD","targets":["a.rs"],
            "expected":[{"file":"a.rs","start":1,"end":1}],"expect":[]}"#;
        let err = serde_json::from_str::<EvalCase>(text)
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown field `expect`"), "{err}");
        // origin is optional.
        let ok = r#"{"schema_version":1,"id":"x","revision":"HEAD","targets":["a.rs"],
            "expected":[{"file":"a.rs","start":1,"end":1}]}"#;
        assert!(serde_json::from_str::<EvalCase>(ok).is_ok());
    }

    #[test]
    fn digest_changes_with_the_case_and_the_commit() {
        let a = digest(&case(), "c1");
        assert_eq!(a, digest(&case(), "c1"));
        assert_ne!(a, digest(&case(), "c2"));
        let mut c = case();
        c.expected[0].end = 5;
        assert_ne!(a, digest(&c, "c1"));
    }
}
