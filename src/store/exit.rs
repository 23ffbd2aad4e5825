//! A run's last record: the exit code its arev process ends with, added to the final
//! meta.json once the report is out and any publish is done (so that a reader — `arev run
//! --background --wait`, a script — gets exactly what the process returned).

use super::{write_json_atomic, Meta, RecordError};
use std::path::Path;

/// Record `code` in `meta` (the run's final meta.json) and rewrite `<run_dir>/meta.json`.
pub fn record_exit_code(run_dir: &Path, meta: &mut Meta, code: i32) -> Result<(), RecordError> {
    meta.exit_code = Some(code);
    let path = run_dir.join("meta.json");
    write_json_atomic(&path, meta).map_err(|source| RecordError { path, source })
}
