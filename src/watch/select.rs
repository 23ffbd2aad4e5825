//! Which run `arev status|result|cancel` mean: the one named (a run dir, a run id or a
//! unique prefix of one), else the newest under the runs base — the first line of `arev runs`.

use crate::store::{find_run, list_runs, LoadRunError};
use std::path::{Path, PathBuf};

/// Why no run was selected.
#[derive(Debug, thiserror::Error)]
pub enum SelectError {
    #[error("no runs under {0}")]
    NoRuns(String),
    #[error("cannot list the runs under {base}: {message}")]
    Unlistable { base: String, message: String },
    #[error(transparent)]
    Find(#[from] LoadRunError),
}

impl From<SelectError> for crate::errors::ExpectedError {
    fn from(e: SelectError) -> Self {
        Self::Watch(Box::new(e))
    }
}

/// The run dir named by `arg`, or the newest run under `base`.
pub fn select_run(arg: Option<&str>, base: &Path) -> Result<PathBuf, SelectError> {
    if let Some(a) = arg {
        return Ok(find_run(a, base)?);
    }
    let runs = list_runs(base).map_err(|e| SelectError::Unlistable {
        base: base.display().to_string(),
        message: e.to_string(),
    })?;
    runs.first()
        .map(|r| PathBuf::from(&r.run_dir))
        .ok_or_else(|| SelectError::NoRuns(base.display().to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_run_unless_one_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path();
        let e = select_run(None, base).unwrap_err();
        assert_eq!(e.to_string(), format!("no runs under {}", base.display()));
        assert!(matches!(
            select_run(Some("nope"), base),
            Err(SelectError::Find(LoadRunError::NotFound { .. }))
        ));
        for (id, at) in [
            ("20260101-120000-aaaaaa-x", "2026-01-01T12:00:00.000Z"),
            ("20260101-130000-bbbbbb-x", "2026-01-01T13:00:00.000Z"),
        ] {
            std::fs::create_dir_all(base.join(id)).unwrap();
            std::fs::write(
                base.join(id).join("meta.json"),
                format!("{{\"started_at\":\"{at}\"}}"),
            )
            .unwrap();
        }
        assert_eq!(
            select_run(None, base).unwrap(),
            base.join("20260101-130000-bbbbbb-x")
        );
        assert_eq!(
            select_run(Some("20260101-12"), base).unwrap(),
            base.join("20260101-120000-aaaaaa-x")
        );
    }
}
