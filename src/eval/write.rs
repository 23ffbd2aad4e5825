//! The files `arev eval` writes (cases, each case's result, eval.json and eval.md), written
//! atomically: a temp file in the same directory, fsynced, then renamed over the target.

use super::error::EvalError;
use std::io::Write;
use std::path::Path;

/// Write `value` as pretty JSON atomically (temp file in the same directory, then rename).
pub fn write_json(path: &Path, value: &impl serde::Serialize) -> Result<(), EvalError> {
    let w = |e: std::io::Error| EvalError::write(path, e);
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    std::fs::create_dir_all(dir).map_err(w)?;
    let mut bytes = vec![];
    crate::output::write_json(&mut bytes, value, true).map_err(|e| w(std::io::Error::other(e)))?;
    bytes.push(b'\n');
    write_bytes(path, &bytes)
}

/// Write `bytes` atomically.
pub fn write_bytes(path: &Path, bytes: &[u8]) -> Result<(), EvalError> {
    let w = |e: std::io::Error| EvalError::write(path, e);
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(".tmp-")
        .tempfile_in(dir)
        .map_err(w)?;
    tmp.write_all(bytes).map_err(w)?;
    tmp.as_file().sync_all().map_err(w)?;
    tmp.persist(path).map_err(|e| w(e.error))?;
    Ok(())
}
