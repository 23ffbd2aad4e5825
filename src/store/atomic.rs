//! Atomic file writes: a temp file in the same directory, then rename over the target, so a
//! reader never sees half a file. Durable writes (`write_atomic`, `write_json_atomic`) also
//! fsync the file before the rename: the records a crash must not lose (meta.json,
//! report.json, state other programs keep). A run's bulk records (round-N.json, an agent's
//! prompt, events, stderr and outcome, the target artefact, report.md) use the `record`
//! variants, which skip the fsync: after a crash such a file is either the old one, the new
//! one, or (on some file systems) empty — never a torn mix — and meta.json says how far the
//! run got (docs/architecture.md §7.3).

use serde::Serialize;
use std::io::Write;
use std::path::Path;

fn temp_in(path: &Path) -> std::io::Result<tempfile::NamedTempFile> {
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    tempfile::Builder::new().prefix(".tmp-").tempfile_in(dir)
}

fn write_with(path: &Path, bytes: &[u8], durable: bool) -> std::io::Result<()> {
    let mut tmp = temp_in(path)?;
    tmp.write_all(bytes)?;
    if durable {
        tmp.as_file().sync_all()?;
    }
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Write `value` as JSON (pretty or compact, with a trailing newline) to `path` atomically,
/// streamed through a buffer into the temp file (no copy of the whole document in memory).
fn write_json_with<T: Serialize + ?Sized>(
    path: &Path,
    value: &T,
    pretty: bool,
    durable: bool,
) -> std::io::Result<()> {
    let tmp = temp_in(path)?;
    let mut w = std::io::BufWriter::with_capacity(64 * 1024, tmp);
    // DEL and C1 controls escaped (`output::write_json`): a record `cat` to a terminal, or
    // copied to stdout (`--format json`), carries none raw.
    crate::output::write_json(&mut w, value, pretty).map_err(std::io::Error::other)?;
    w.write_all(b"\n")?;
    let tmp = w.into_inner().map_err(|e| e.into_error())?;
    if durable {
        tmp.as_file().sync_all()?;
    }
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Write `bytes` to `path` atomically and durably (temp file in the same directory, fsync,
/// rename).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_with(path, bytes, true)
}

/// Serialize `value` as pretty JSON (with a trailing newline) and write it atomically and
/// durably.
pub fn write_json_atomic<T: Serialize + ?Sized>(path: &Path, value: &T) -> std::io::Result<()> {
    write_json_with(path, value, true, true)
}

/// Write a run record atomically, without the fsync (see the module note).
pub fn write_record(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_with(path, bytes, false)
}

/// Serialize a run record as pretty JSON and write it atomically, without the fsync.
pub fn write_json_record<T: Serialize + ?Sized>(path: &Path, value: &T) -> std::io::Result<()> {
    write_json_with(path, value, true, false)
}

/// Serialize a bulk run record (round-N.json: internal, read back by arev and tests, not by
/// people) as compact JSON and write it atomically, without the fsync.
pub fn write_compact_record<T: Serialize + ?Sized>(path: &Path, value: &T) -> std::io::Result<()> {
    write_json_with(path, value, false, false)
}

/// Copy the file `src` to `dest` atomically, without the fsync (a spooled target artefact
/// into its run dir; the kernel copies, nothing is held in memory).
pub fn copy_record(src: &Path, dest: &Path) -> std::io::Result<()> {
    copy_with(src, dest, false)
}

/// Copy the file `src` to `dest` atomically and durably (report.json to `--out`).
pub fn copy_atomic(src: &Path, dest: &Path) -> std::io::Result<()> {
    copy_with(src, dest, true)
}

fn copy_with(src: &Path, dest: &Path, durable: bool) -> std::io::Result<()> {
    let mut from = std::fs::File::open(src)?;
    let mut tmp = temp_in(dest)?;
    std::io::copy(&mut from, tmp.as_file_mut())?;
    if durable {
        tmp.as_file().sync_all()?;
    }
    tmp.persist(dest).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_and_replaces_without_leftovers() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.json");
        write_json_atomic(&p, &serde_json::json!({"a": 1})).unwrap();
        write_json_record(&p, &serde_json::json!({"a": 2})).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
        assert_eq!(v["a"], 2);
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "temp files left behind");
    }

    #[test]
    fn copies_a_file_whole() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("src");
        let big: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&src, &big).unwrap();
        let dest = dir.path().join("sub-dest");
        copy_record(&src, &dest).unwrap();
        assert_eq!(std::fs::read(&dest).unwrap(), big);
        write_record(&dest, b"x").unwrap();
        assert_eq!(std::fs::read(&dest).unwrap(), b"x");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }
}
