//! Where reports go besides stdout (`Outputs`), and those destinations (`--out`, `--sarif`,
//! `--markdown`) checked before anything is reviewed: a destination that cannot be written
//! is a usage error (exit 2) at once, not after a paid review. Nothing of the user's is
//! written: the check creates and removes a temporary file in the destination's directory,
//! exactly the step the final atomic write takes first.

use super::error::{DestinationProblem, OutputError};
use crate::cli::Format;
use crate::errors::ExpectedError;
use std::path::{Path, PathBuf};

/// Where reports go besides stdout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outputs {
    pub format: Format,
    pub out: Option<PathBuf>,
    pub markdown: Option<PathBuf>,
    pub sarif: Option<PathBuf>,
    pub quiet: bool,
}

/// Check every requested destination; the first that cannot be written is the error.
pub(crate) fn check_destinations(outputs: &Outputs) -> Result<(), ExpectedError> {
    for (flag, path) in [
        ("--out", &outputs.out),
        ("--sarif", &outputs.sarif),
        ("--markdown", &outputs.markdown),
    ] {
        if let Some(p) = path {
            check(p).map_err(|problem| OutputError {
                flag,
                path: p.clone(),
                problem,
            })?;
        }
    }
    Ok(())
}

/// Why `path` cannot receive a report, if it cannot.
fn check(path: &Path) -> Result<(), DestinationProblem> {
    if path.file_name().is_none() {
        return Err(DestinationProblem::NotAFileName);
    }
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => return Err(DestinationProblem::Directory),
        Ok(m) if !m.is_file() => return Err(DestinationProblem::NotARegularFile),
        _ => {}
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return Err(DestinationProblem::ParentNotADirectory(dir.to_path_buf())),
        Err(_) => return Err(DestinationProblem::NoParent(dir.to_path_buf())),
    }
    tempfile::Builder::new()
        .prefix(".tmp-")
        .tempfile_in(dir)
        .map(drop)
        .map_err(|source| DestinationProblem::CannotWrite {
            dir: dir.to_path_buf(),
            source,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outs(out: Option<PathBuf>, sarif: Option<PathBuf>) -> Outputs {
        Outputs {
            format: Format::Text,
            out,
            markdown: None,
            sarif,
            quiet: false,
        }
    }

    #[test]
    fn writable_destinations_pass_and_leave_nothing() {
        let d = tempfile::tempdir().unwrap();
        let existing = d.path().join("old.json");
        std::fs::write(&existing, "keep").unwrap();
        check_destinations(&outs(
            Some(d.path().join("new.json")),
            Some(existing.clone()),
        ))
        .unwrap();
        assert_eq!(std::fs::read_to_string(&existing).unwrap(), "keep");
        let names: Vec<_> = std::fs::read_dir(d.path()).unwrap().collect();
        assert_eq!(
            names.len(),
            1,
            "no file created, the existing one untouched"
        );
    }

    #[test]
    fn unwritable_destinations_name_the_flag_and_why() {
        let d = tempfile::tempdir().unwrap();
        let e = check_destinations(&outs(Some(d.path().join("no/such/dir/a.json")), None))
            .unwrap_err()
            .to_string();
        assert!(e.contains("--out") && e.contains("does not exist"), "{e}");
        let e = check_destinations(&outs(None, Some(d.path().to_path_buf())))
            .unwrap_err()
            .to_string();
        assert!(e.contains("--sarif") && e.contains("is a directory"), "{e}");
        let file = d.path().join("f");
        std::fs::write(&file, "").unwrap();
        let e = check_destinations(&outs(Some(file.join("x.json")), None))
            .unwrap_err()
            .to_string();
        assert!(e.contains("is not a directory"), "{e}");
    }
}
