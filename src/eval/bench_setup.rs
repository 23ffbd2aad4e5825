//! From `arev eval bench`'s flags to its inputs: the golden files and labels read and
//! checked (before anything is fetched), the panel's configuration and digest (the user
//! file, the current repository's `arev.toml` and `.arev/` when run inside one, `--config`),
//! the `--mirror` rewrites, the output dir, and the `--prove` sandbox checked once.

use super::bench::BenchOptions;
use super::error::EvalError;
use super::forge::{parse_mirror, Forge};
use super::golden::{load_golden, load_labels, BenchPr};
use super::setup::absolute;
use crate::cli::EvalBenchArgs;
use crate::config::{load, ConfigSources};
use std::collections::BTreeMap;
use std::path::Path;

/// The options, the PRs (narrowed by `--only`) and the `requires_context` labels.
pub type Prepared = (BenchOptions, Vec<BenchPr>, BTreeMap<String, String>);

pub fn prepare_bench(cwd: &Path, a: &EvalBenchArgs) -> Result<Prepared, EvalError> {
    let golden = absolute(cwd, &a.golden);
    let mut prs = load_golden(&golden)?;
    if !a.only.is_empty() {
        prs.retain(|p| a.only.iter().any(|o| p.url.contains(o.as_str())));
        if prs.is_empty() {
            return Err(EvalError::Usage(format!(
                "--only {}: no pull request of {} matches",
                a.only.join(" "),
                golden.display()
            )));
        }
    }
    let labels = match &a.labels {
        Some(p) => load_labels(&absolute(cwd, p))?,
        None => BTreeMap::new(),
    };
    let mirrors = a
        .mirror
        .iter()
        .map(|m| parse_mirror(m).map_err(EvalError::Usage))
        .collect::<Result<Vec<_>, _>>()?;
    if !(a.api_url.starts_with("https://") || a.api_url.starts_with("http://")) {
        return Err(EvalError::Usage(format!(
            "--api-url {}: expected an http(s) URL",
            a.api_url
        )));
    }
    let (root, _) = crate::resolve::discover_root(cwd);
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
    let out_dir = absolute(cwd, &a.out);
    let prove = if a.prove {
        let sandbox = a.prove_sandbox.map_or(resolved.prove.sandbox, Into::into);
        crate::prove::preflight(sandbox)?;
        Some(sandbox.as_str().to_string())
    } else {
        None
    };
    let exe = std::env::current_exe().map_err(|source| EvalError::Os {
        what: "cannot find the arev executable",
        source,
    })?;
    let opts = BenchOptions {
        golden,
        forge: Forge {
            api: a.api_url.clone(),
            mirrors,
            token: std::env::var("GITHUB_TOKEN").ok().filter(|t| !t.is_empty()),
            repos: out_dir.join("repos"),
        },
        out_dir,
        config,
        jobs: a.jobs as usize,
        exe,
        user_root: root,
        config_digest,
        use_cache: a.use_cache,
        prove,
    };
    Ok((opts, prs, labels))
}
