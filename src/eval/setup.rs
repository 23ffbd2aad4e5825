//! From `arev eval`'s flags to the stages' inputs: the repository, the mining options, an
//! evaluation's options and resolved cases (config checked and digested, output dir chosen
//! and kept out of git under `.arev/`), and the eval reports `compare` reads.

use super::cases::{check_in_repo, load_cases, ResolvedCase};
use super::error::EvalError;
use super::mine::MineOptions;
use super::model::EvalReport;
use super::run::RunOptions;
use super::select::{Chore, Limits, CHORES, DEFAULT_FIX_REGEX};
use crate::cli::{EvalMineArgs, EvalRunArgs};
use crate::config::{load, ConfigSources};
use std::path::{Path, PathBuf};

/// `p` from the command line, relative to `cwd`.
pub fn absolute(cwd: &Path, p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    }
}

/// The repository containing `cwd` (`arev eval <what>` needs one).
pub fn open_repo(cwd: &Path, what: &str) -> Result<git2::Repository, EvalError> {
    git2::Repository::discover(cwd).map_err(|_| {
        EvalError::Usage(format!(
            "arev eval {what} needs a git repository ({} is not in one)",
            cwd.display()
        ))
    })
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `arev eval mine`'s options: `--grep` (case-insensitive) and the `--paths` globs checked.
pub fn mine_options(a: &EvalMineArgs) -> Result<MineOptions, EvalError> {
    let regex = regex::RegexBuilder::new(a.grep.as_deref().unwrap_or(DEFAULT_FIX_REGEX))
        .case_insensitive(true)
        .build()
        .map_err(|e| EvalError::Usage(format!("--grep: {}", one_line(&e.to_string()))))?;
    let reject = a
        .reject_pattern
        .as_deref()
        .map(|r| {
            regex::RegexBuilder::new(r)
                .case_insensitive(true)
                .build()
                .map_err(|e| {
                    EvalError::Usage(format!("--reject-pattern: {}", one_line(&e.to_string())))
                })
        })
        .transpose()?;
    let mut allow_chores: Vec<Chore> = Vec::new();
    match &a.allow_chores {
        None => {}
        Some(kinds) if kinds.is_empty() => allow_chores = CHORES.iter().map(|(c, _)| *c).collect(),
        Some(kinds) => {
            for k in kinds {
                let c = Chore::from_label(k).ok_or_else(|| {
                    let known: Vec<&str> = CHORES.iter().map(|(c, _)| c.as_str()).collect();
                    EvalError::Usage(format!(
                        "--allow-chores {k}: not a chore kind (one of {})",
                        known.join(", ")
                    ))
                })?;
                allow_chores.push(c);
            }
        }
    }
    let paths = if a.paths.is_empty() {
        None
    } else {
        let mut b = globset::GlobSetBuilder::new();
        for g in &a.paths {
            let glob = globset::GlobBuilder::new(g)
                .literal_separator(true)
                .build()
                .map_err(|e| EvalError::Usage(format!("--paths {g}: {e}")))?;
            b.add(glob);
        }
        Some(
            b.build()
                .map_err(|e| EvalError::Usage(format!("--paths: {e}")))?,
        )
    };
    Ok(MineOptions {
        since: a.since.clone(),
        regex,
        reject,
        allow_chores,
        max: a.max as usize,
        paths,
        limits: Limits {
            max_files: a.max_files as usize,
            max_lines: a.max_lines as usize,
        },
    })
}

/// `arev eval run`'s options and cases: the `--config` file (which must exist) and the
/// layered configuration's digest, every case of `--cases` checked against the repository,
/// and the output dir (`--out`, else `.arev/eval/<config digest>`; git-excluded when under
/// `.arev/`). Nothing is written but the exclude line.
pub fn prepare_run(
    cwd: &Path,
    a: &EvalRunArgs,
) -> Result<(RunOptions, Vec<ResolvedCase>), EvalError> {
    let repo = open_repo(cwd, "run")?;
    let (root, git_dir) = crate::resolve::discover_root(cwd);
    let git_dir = git_dir.unwrap_or_else(|| repo.commondir().to_path_buf());
    let config = a.config.as_ref().map(|p| absolute(cwd, p));
    if let Some(p) = &config {
        if !p.is_file() {
            return Err(EvalError::Usage(format!(
                "--config {}: no such file",
                p.display()
            )));
        }
    }
    let (resolved, config_digest) = load(&ConfigSources::discover(&root, config.clone()))?;
    // Where `arev run` keeps its verdicts (a bad `[cache] dir` is reported by the reviews).
    let cache_dir = crate::resolve::cache_dir(&resolved.cache.dir, &root, crate::xdg::cache_home())
        .ok()
        .flatten();
    let cases_dir = absolute(cwd, &a.cases);
    let cases = load_cases(&cases_dir)?
        .into_iter()
        .map(|c| check_in_repo(&repo, c))
        .collect::<Result<Vec<_>, _>>()?;
    let out_dir = match &a.out {
        Some(o) => absolute(cwd, o),
        None => root.join(".arev").join("eval").join(&config_digest[..12]),
    };
    if out_dir.starts_with(root.join(".arev")) {
        crate::store::add_git_exclude(&git_dir)
            .map_err(|e| EvalError::write(git_dir.join("info/exclude"), e))?;
    }
    let exe = std::env::current_exe().map_err(|source| EvalError::Os {
        what: "cannot find the arev executable",
        source,
    })?;
    let opts = RunOptions {
        cases_dir,
        out_dir,
        config,
        jobs: a.jobs as usize,
        tolerance: a.tolerance,
        exe,
        user_root: root,
        git_dir,
        config_digest,
        use_cache: a.use_cache,
        cache_dir,
        prove: prove_plan(a, &resolved)?,
    };
    Ok((opts, cases))
}

/// `--prove`: the reproducers' sandbox and limits from the panel's configuration (the
/// reviews resolve the same), the sandbox checked here once, before any case runs.
fn prove_plan(
    a: &EvalRunArgs,
    config: &crate::config::Settings,
) -> Result<Option<crate::resolve::ProvePlan>, EvalError> {
    if !a.prove {
        return Ok(None);
    }
    let p = &config.prove;
    let plan = crate::resolve::ProvePlan {
        sandbox: a.prove_sandbox.map_or(p.sandbox, Into::into),
        min_severity: p.min_severity,
        max_findings: p.max_findings,
        timeout: config.timeouts.prove,
        memory_bytes: p.memory,
        env: p.env.clone(),
        bind_ro: p.bind_ro.clone(),
        require_proof: false,
    };
    crate::prove::preflight(plan.sandbox)?;
    Ok(Some(plan))
}

/// An `eval.json` for `arev eval compare`.
pub fn read_report(p: &Path) -> Result<EvalReport, EvalError> {
    let bad = |message: String| EvalError::BadReport {
        path: p.to_path_buf(),
        message,
    };
    let text = std::fs::read_to_string(p).map_err(|e| bad(e.to_string()))?;
    serde_json::from_str(&text).map_err(|e| bad(format!("not an arev eval.json: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mine_args(grep: Option<&str>, paths: &[&str]) -> EvalMineArgs {
        EvalMineArgs {
            since: Some("v1".into()),
            grep: grep.map(String::from),
            max: 7,
            paths: paths.iter().map(|p| p.to_string()).collect(),
            max_files: 2,
            max_lines: 30,
            out: PathBuf::from("cases"),
            reject_pattern: None,
            allow_chores: None,
        }
    }

    #[test]
    fn allow_chores_takes_kinds_or_all() {
        let mut a = mine_args(None, &[]);
        assert!(mine_options(&a).unwrap().allow_chores.is_empty());
        a.allow_chores = Some(vec![]);
        assert_eq!(mine_options(&a).unwrap().allow_chores.len(), CHORES.len());
        a.allow_chores = Some(vec!["typo".into(), "CI".into()]);
        assert_eq!(
            mine_options(&a).unwrap().allow_chores,
            [Chore::Typo, Chore::Ci]
        );
        a.allow_chores = Some(vec!["typos".into()]);
        let e = mine_options(&a).unwrap_err().to_string();
        assert!(
            e.starts_with("--allow-chores typos: not a chore kind (one of revert, typo,"),
            "{e}"
        );
    }

    #[test]
    fn mine_options_take_the_flags_and_name_a_bad_one() {
        let o = mine_options(&mine_args(None, &[])).unwrap();
        assert!(
            o.regex.is_match("FIX the parser"),
            "the default, case-insensitive"
        );
        assert!(o.paths.is_none());
        assert_eq!((o.since.as_deref(), o.max), (Some("v1"), 7));
        assert_eq!((o.limits.max_files, o.limits.max_lines), (2, 30));
        let o = mine_options(&mine_args(Some("oops"), &["src/*.rs"])).unwrap();
        let globs = o.paths.unwrap();
        assert!(globs.is_match("src/a.rs") && !globs.is_match("src/x/a.rs"));
        let e = mine_options(&mine_args(Some("(unclosed"), &[])).unwrap_err();
        let e = e.to_string();
        assert!(e.starts_with("--grep: ") && !e.contains('\n'), "{e}");
        let e = mine_options(&mine_args(None, &["a/[b"])).unwrap_err();
        assert!(e.to_string().starts_with("--paths a/[b: "), "{e}");
    }

    #[test]
    fn paths_are_taken_from_the_cwd_and_a_repo_is_required() {
        let cwd = Path::new("/w");
        assert_eq!(absolute(cwd, Path::new("x/y")), PathBuf::from("/w/x/y"));
        assert_eq!(absolute(cwd, Path::new("/abs")), PathBuf::from("/abs"));
        let d = tempfile::tempdir().unwrap();
        let Err(e) = open_repo(d.path(), "mine") else {
            panic!("a temp dir is not in a repository")
        };
        assert_eq!(
            e.to_string(),
            format!(
                "arev eval mine needs a git repository ({} is not in one)",
                d.path().display()
            )
        );
    }

    #[test]
    fn read_report_names_the_file_it_cannot_use() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("eval.json");
        assert!(read_report(&p)
            .unwrap_err()
            .to_string()
            .starts_with(&format!("{}: ", p.display())));
        std::fs::write(&p, "{}").unwrap();
        let e = read_report(&p).unwrap_err().to_string();
        assert!(
            e.starts_with(&format!("{}: not an arev eval.json: ", p.display())),
            "{e}"
        );
        let r = crate::eval::compare::tests::report("cfg", 3, vec![]);
        std::fs::write(&p, serde_json::to_string(&r).unwrap()).unwrap();
        assert_eq!(read_report(&p).unwrap().config_digest, "cfg");
    }
}
