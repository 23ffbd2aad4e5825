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
            let cwd = std::env::current_dir()
                .map_err(ExpectedError::os("cannot read the current directory"))?;
            let dir = crate::hook::find_root(&cwd).unwrap_or(cwd).join(".claude");
            // A committed `.claude` symlink would point the install (and its removals)
            // outside the repository.
            if std::fs::symlink_metadata(&dir).is_ok_and(|m| m.file_type().is_symlink()) {
                return Err(ExpectedError::Usage(format!(
                    "{}: a symbolic link; arev installs only into a real .claude directory of \
                     the repository, nothing was changed",
                    dir.display()
                )));
            }
            dir
        }
    };
    // The hooks and commands call `arev` from PATH: what a teammate who clones the
    // repository has too (never the absolute path of this build, which `cargo clean` or
    // another machine does not have).
    let summary = if args.uninstall {
        crate::install::uninstall(&dir)
    } else {
        crate::install::install(&dir, "arev")
    }?;
    for left in &summary.left {
        output::warn(left);
    }
    if !args.uninstall && crate::dispatch::resolve_binary("arev").is_err() {
        output::warn(
            "`arev` is not on PATH here: the hooks and /adversarial-review call it from PATH; \
             install it (install.sh, or cargo install --git …) or add its directory to PATH",
        );
    }
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
