//! Why `arev install claude` (or its `--uninstall`) changed nothing or stopped: exit 2, one
//! line naming the file.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    #[error("{}: {source}", .path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: not valid JSON ({source}); nothing was changed", .path.display())]
    SettingsJson {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    /// settings.json (or its `hooks`) has a shape arev will not merge into.
    #[error("{}: {shape}; nothing was changed", .path.display())]
    SettingsShape { path: PathBuf, shape: String },
    #[error("refusing to overwrite {} (not written by arev install); move it away first", .0.display())]
    Foreign(PathBuf),
    #[error(
        "{}: not a regular file (a symbolic link?); not an arev install record, nothing was changed",
        .0.display()
    )]
    RecordNotAFile(PathBuf),
    #[error("{0}; nothing was changed")]
    RecordUnreadable(#[source] crate::store::CappedReadError),
    #[error("{}: not an arev install record ({source})", .path.display())]
    RecordJson {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("{}: {source}", .path.display())]
    RecordEncode {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
}

impl InstallError {
    /// An I/O error on `path`.
    pub(super) fn io(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> Self + '_ {
        move |source| Self::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    /// settings.json at `path` has `shape`.
    pub(super) fn shape(path: &std::path::Path, shape: impl Into<String>) -> Self {
        Self::SettingsShape {
            path: path.to_path_buf(),
            shape: shape.into(),
        }
    }
}

impl From<InstallError> for crate::errors::ExpectedError {
    fn from(e: InstallError) -> Self {
        Self::Install(Box::new(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::errors::ExpectedError;

    #[test]
    fn an_install_error_reaches_the_top_typed_with_its_line_and_exit_code() {
        let e = InstallError::Foreign(PathBuf::from("/p/.claude/commands/a.md"));
        let line = e.to_string();
        assert_eq!(
            line,
            "refusing to overwrite /p/.claude/commands/a.md (not written by arev install); move it away first"
        );
        let top = ExpectedError::from(e);
        assert_eq!(top.to_string(), line);
        assert_eq!(top.exit_code(), crate::exit_codes::USAGE);
        let ExpectedError::Install(inner) = &top else {
            panic!("{top:?}")
        };
        assert!(matches!(
            inner.downcast_ref::<InstallError>(),
            Some(InstallError::Foreign(_))
        ));
    }
}
