//! What can stop a reproducer from being run at all: the sandbox is not there or cannot
//! start (each message names the fix), the run was cancelled, or the process could not be
//! started. A command that runs and fails is not an error: it is a `RunOutcome`.

use std::path::PathBuf;

/// Why the sandbox cannot be used, or a run could not happen.
#[derive(Debug, thiserror::Error)]
pub enum ProveError {
    #[error(
        "--prove runs reproducers under bubblewrap, and `bwrap` is not on PATH: install it \
         (Debian/Ubuntu: `apt-get install bubblewrap`; Fedora: `dnf install bubblewrap`; \
         Arch: `pacman -S bubblewrap`), or run reproducers unsandboxed with \
         `--prove-sandbox none` or `[prove] sandbox = \"none\"` in your user config \
         (docs/prove.md \"Sandbox\")"
    )]
    BwrapMissing,
    #[error(
        "bubblewrap ({bwrap}) cannot create its namespaces here ({detail}): enable \
         unprivileged user namespaces (`sysctl kernel.unprivileged_userns_clone=1`; on \
         Ubuntu 23.10+ `sysctl kernel.apparmor_restrict_unprivileged_userns=0` or an \
         AppArmor profile for bwrap; in a container, run it with user namespaces allowed), \
         or run reproducers unsandboxed with `--prove-sandbox none` or `[prove] sandbox = \
         \"none\"` in your user config (docs/prove.md \"Sandbox\")"
    )]
    NoNamespaces { bwrap: PathBuf, detail: String },
    #[error(
        "bubblewrap ({bwrap}) cannot start a sandbox here ({detail}); check `bwrap --version` \
         and docs/prove.md \"Sandbox\", or run reproducers unsandboxed with \
         `--prove-sandbox none` or `[prove] sandbox = \"none\"` in your user config"
    )]
    SandboxBroken { bwrap: PathBuf, detail: String },
    #[error("the reproducer's working directory {0} is not an absolute path to a directory")]
    BadWorkdir(PathBuf),
    #[error("cannot measure the scratch tree {0} (its copy in the sandbox is sized from it): {1}")]
    MeasureTree(PathBuf, #[source] std::io::Error),
    #[error(
        "no place for the scratch tree's read-only stage in the sandbox: `[prove] bind_ro` \
         covers /mnt/src, /srv/src, /media/src and /opt/src (docs/prove.md \"Sandbox\")"
    )]
    NoStage,
    #[error("the reproducer has no command (an empty argv)")]
    EmptyCommand,
    #[error("cannot start the reproducer: {0}")]
    Spawn(#[source] std::io::Error),
    #[error("the proof was cancelled")]
    Cancelled,
}
