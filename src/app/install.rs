//! `arev install claude [--scope project|user] [--uninstall]`.

use crate::cli::{InstallArgs, Scope};
use crate::errors::ExpectedError;
use crate::output;
use std::path::PathBuf;

pub(crate) fn install_command(args: &InstallArgs) -> Result<(), ExpectedError> {
    let dir = match args.scope {
        Scope::User => std::env::var_os("HOME")
            .map(|h| PathBuf::from(h).join(".claude"))
            .ok_or_else(|| ExpectedError::Usage("--scope user: HOME is not set".into()))?,
        Scope::Project => {
            let cwd = std::env::current_dir().map_err(|e| {
                ExpectedError::Usage(format!("cannot read the current directory: {e}"))
            })?;
            crate::hook::find_root(&cwd).unwrap_or(cwd).join(".claude")
        }
    };
    let summary = if args.uninstall {
        crate::install::uninstall(&dir)
    } else {
        // The hooks call this very binary, so they work without arev on PATH.
        let exe = std::env::current_exe()
            .map_err(|e| ExpectedError::Usage(format!("cannot locate the arev executable: {e}")))?;
        let exe = exe.canonicalize().unwrap_or(exe);
        crate::install::install(&dir, &exe.display().to_string())
    }
    .map_err(ExpectedError::Usage)?;
    let mut text = summary.lines.join("\n");
    if !args.uninstall {
        text.push_str(&format!(
            "\nStart a prompt with #arev to have arev review the session's changes when the agent stops; \
             /adversarial-review <file|diff|glob> runs a review on demand (in the background: \
             /arev-status, /arev-result, /arev-cancel follow it up). Undo: arev install claude --scope {} --uninstall",
            args.scope.as_str()
        ));
    }
    output::report(&text);
    Ok(())
}
