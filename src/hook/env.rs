//! What a hook depends on besides its stdin: the process environment (`AREV_DISABLE`, the
//! working directory) and the layered configuration of the repository it runs in. Shared by
//! `arev hook prompt` and `arev hook stop`.

use super::error::HookError;
use crate::config::{load, ConfigSources, Settings};
use std::path::{Path, PathBuf};

/// The process environment a hook depends on.
#[derive(Debug, Clone)]
pub struct HookEnv {
    /// `AREV_DISABLE=1`: every hook is a no-op.
    pub disabled: bool,
    /// Fallback when the input has no `cwd`.
    pub cwd: PathBuf,
}

impl HookEnv {
    pub fn from_process() -> Self {
        Self {
            disabled: std::env::var_os("AREV_DISABLE").is_some_and(|v| v == "1"),
            cwd: std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
        }
    }
}

/// Load the layered config for `root` (hooks take no `--config`); the error is the one line
/// the hook shows the user.
pub(super) fn load_config(root: &Path) -> Result<Settings, HookError> {
    load(&ConfigSources::discover(root, None))
        .map(|(c, _)| c)
        .map_err(HookError::BadConfig)
}
