//! What a run remembers (docs/architecture.md §20), resolved with the rest of the plan: the
//! `--baseline` report, `--only-new`, `--incremental`, the suppressions in force and where
//! the verdict cache lives (None: no cache).

use super::baseline::load_baseline;
use super::suppressions::load_suppressions;
use super::RepoInputs;
use crate::cli::RunArgs;
use crate::config::Settings;
use crate::errors::ExpectedError;
use crate::findings::suppress::SuppressionSet;
use crate::records::Report;
use crate::target::lexical;
use std::path::{Path, PathBuf};

/// The memory part of a `RunPlan`.
#[derive(Debug, Clone, Default)]
pub struct MemoryPlan {
    /// `--baseline`: the earlier report.
    pub baseline: Option<Report>,
    /// `--only-new`.
    pub only_new: bool,
    /// `--incremental`.
    pub incremental: bool,
    /// `.arev/suppressions.toml` entries in force today.
    pub suppressions: SuppressionSet,
    /// The verdict cache directory; None with `--no-cache` or without a usable location.
    pub cache_dir: Option<PathBuf>,
    /// Why the verdict cache is not used, when that was not asked for (printed at the start).
    pub warnings: Vec<String>,
}

/// Resolve the memory flags of `arev run` for the repository at `root`, the suppressions
/// from its repository inputs (`--repo-config`).
pub fn resolve_memory(
    args: &RunArgs,
    config: &Settings,
    root: &Path,
    cwd: &Path,
    runs_base: &Path,
    inputs: &RepoInputs,
) -> Result<MemoryPlan, ExpectedError> {
    let baseline = args
        .baseline
        .as_deref()
        .map(|b| load_baseline(b, cwd, runs_base))
        .transpose()?;
    let today = chrono::Utc::now().date_naive();
    let suppressions = load_suppressions(inputs, today)?;
    let mut warnings = vec![];
    // A verdict is reused without its proofs, and a proof is never cached: `--prove`
    // reviews and proves every time.
    let cache_dir = if args.no_cache || args.iterate || args.prove {
        None
    } else {
        let dir = cache_dir(&config.cache.dir, root, crate::xdg::cache_home())?;
        match dir {
            Some(d) if inside(&d, root) => {
                warnings.push(format!(
                    "the verdict cache {} is inside the repository: not used (the reviewed tree must not be able to supply verdicts; set [cache] dir)",
                    d.display()
                ));
                None
            }
            d => d,
        }
    };
    Ok(MemoryPlan {
        baseline,
        only_new: args.only_new,
        incremental: args.incremental,
        suppressions,
        cache_dir,
        warnings,
    })
}

/// Whether `dir` lies inside the repository at `root` (lexically or once resolved).
fn inside(dir: &Path, root: &Path) -> bool {
    let canonical = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let dir = lexical(dir);
    dir.starts_with(root) || canonical(&dir).starts_with(canonical(root))
}

/// The verdict cache directory: `[cache] dir` (absolute, outside the repository at `root`:
/// the reviewed tree must not be able to hand arev verdicts; a usage error otherwise), else
/// `arev` under `cache_home` (the user's cache directory, [`crate::xdg::cache_home`]), else
/// none. (A default that lands inside the repository is dropped by the caller, with a
/// warning.)
pub fn cache_dir(
    configured: &str,
    root: &Path,
    cache_home: Option<PathBuf>,
) -> Result<Option<PathBuf>, ExpectedError> {
    if !configured.is_empty() {
        let dir = Path::new(configured);
        if !dir.is_absolute() {
            return Err(ExpectedError::Usage(format!(
                "[cache] dir = \"{configured}\": must be an absolute path"
            )));
        }
        let dir = lexical(dir);
        if inside(&dir, root) {
            return Err(ExpectedError::Usage(format!(
                "[cache] dir = \"{configured}\": inside the repository {}; the reviewed tree must not be able to supply verdicts",
                root.display()
            )));
        }
        return Ok(Some(dir));
    }
    Ok(cache_home.map(|d| d.join("arev")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_dir_follows_config_xdg_then_home() {
        let root = Path::new("/repo");
        let p = |s: &str| Some(PathBuf::from(s));
        let home = |xdg: Option<&str>, home: &str| {
            crate::xdg::cache_home_from(xdg.map(Into::into), Some(home.into()))
        };
        assert_eq!(
            cache_dir("", root, home(Some("/xdg"), "/home/u")).unwrap(),
            p("/xdg/arev")
        );
        assert_eq!(
            cache_dir("", root, home(Some("relative"), "/home/u")).unwrap(),
            p("/home/u/.cache/arev")
        );
        assert_eq!(cache_dir("", root, None).unwrap(), None);
        assert_eq!(
            cache_dir("/ci/cache", root, p("/xdg")).unwrap(),
            p("/ci/cache")
        );
        for bad in ["rel/dir", "/repo/.cache", "/other/../repo/x"] {
            let e = cache_dir(bad, root, None).unwrap_err().to_string();
            assert!(e.starts_with("[cache] dir"), "{bad}: {e}");
        }
    }
}
