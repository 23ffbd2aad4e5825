//! `arev init`: write a commented `arev.toml` (`config::init_text`) at the repository root,
//! never overwriting; the primary language is asked once on a TTY (or given with
//! `--language`).

use crate::cli::InitArgs;
use crate::config::init_text;
use crate::errors::ExpectedError;
use crate::output;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

fn repo_root(cwd: &Path) -> PathBuf {
    git2::Repository::discover(cwd)
        .ok()
        .and_then(|r| r.workdir().map(Path::to_path_buf))
        .unwrap_or_else(|| cwd.to_path_buf())
}

pub(crate) fn init_command(args: &InitArgs) -> Result<(), ExpectedError> {
    let cwd =
        std::env::current_dir().map_err(ExpectedError::os("cannot read the current directory"))?;
    let root = repo_root(&cwd);
    let path = root.join("arev.toml");
    for existing in [path.clone(), root.join(".arev").join("config.toml")] {
        if existing.exists() {
            return Err(ExpectedError::Usage(format!(
                "{} already exists; arev init never overwrites a config",
                existing.display()
            )));
        }
    }
    let language = match &args.language {
        Some(l) => Some(l.trim().to_string()).filter(|l| !l.is_empty()),
        None if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() => {
            output::prompt("Primary language of the agents' prose (e.g. en, de; empty = none): ");
            let mut answer = String::new();
            let _ = std::io::stdin().read_line(&mut answer);
            Some(answer.trim().to_string()).filter(|l| !l.is_empty())
        }
        None => None,
    };
    let text = init_text(language.as_deref());
    // create_new: never clobber a file that appeared since the check.
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
        .map_err(|e| ExpectedError::write(&path, e))?;
    f.write_all(text.as_bytes())
        .map_err(|e| ExpectedError::write(&path, e))?;
    output::progress(&format!("arev: wrote {}", path.display()));
    Ok(())
}
