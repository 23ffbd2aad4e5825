//! Arguments of the commands about arev's own set-up and upkeep (`arev doctor`). Parsing
//! only.

use clap::Args;
use std::path::PathBuf;

pub(super) const DOCTOR_HELP: &str = "\
Checks what a review needs, in the current directory: git, the configuration (every layer
loads), and each agent CLI a role uses — found on PATH or at `[agents.<name>] binary`, its
`--version` against the version arev is tested with (claude 2.1.330, codex 0.169.0, gemini
0.61.0), and credentials (an API key in the environment or the CLI's own login file).
The repository's arev.toml is read from where `arev run` would read it (--repo-config,
AREV_REPO_CONFIG, --base): a binary only a config the review would not use names is never run.
One line per check: ok, warn (works, but not as tested), FAIL (with its fix), - (context).
`arev run` makes the first of these checks itself before it creates a run dir.

Exit codes:
  0    ready: no FAIL line
  2    at least one FAIL line";

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Read this config file on top of the user and repo files (as `arev run --config`).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Where the repository's own `arev.toml`/`.arev/config.toml` comes from, as for `arev
    /// run`: the working tree, the merge-base commit of --base, or nowhere [env:
    /// AREV_REPO_CONFIG] [default: base with --base, else worktree]. The agent binaries it
    /// names are the ones doctor runs (`--version`).
    #[arg(long, value_enum, value_name = "FROM")]
    pub repo_config: Option<super::run::RepoConfigArg>,
    /// The branch or commit a review would be against (`arev run diff --base REV`): its
    /// merge-base with HEAD holds the repository config doctor checks (implies
    /// `--repo-config base`).
    #[arg(long, value_name = "REV")]
    pub base: Option<String>,
}

/// The commit the binary was built from (set once by `main` from the build script's
/// `AREV_GIT_COMMIT`; unset outside a checkout).
static COMMIT: std::sync::OnceLock<&'static str> = std::sync::OnceLock::new();

/// Record the build's commit for `--version` and `arev doctor`.
pub fn set_commit(commit: Option<&'static str>) {
    if let Some(c) = commit {
        let _ = COMMIT.set(c);
    }
}

/// `0.1.0 (commit 0123456789ab)`, or the version alone without a known commit.
pub fn long_version() -> String {
    let v = env!("CARGO_PKG_VERSION");
    match COMMIT.get() {
        Some(c) => format!("{v} (commit {c})"),
        None => v.to_string(),
    }
}
