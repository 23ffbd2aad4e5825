//! The one reader of files arev reads back but does not control: a run dir's records
//! (meta.json, progress.json, summary.json, report.json, arev.log), an artifact a pull
//! request's job uploaded, a shard's report, a repository's install record. Each is read
//! under a size cap, checked while reading (one byte past the cap, never the whole file), and
//! a file past it is a clear error naming the file and the cap (docs/trust.md).

use std::io::Read;
use std::path::{Path, PathBuf};

/// meta.json, progress.json, summary.json, outcome.json: a few KiB when arev writes them.
pub const MAX_RECORD_BYTES: u64 = 1 << 20;
/// The largest report.json arev reads back (a baseline, a report to re-render, merge or
/// publish): the findings' texts are capped, so a real report stays far below.
pub const MAX_REPORT_BYTES: u64 = 64 << 20;
/// `<run dir>/arev.log` of a background run, replayed on stderr by `--wait`.
pub const MAX_LOG_BYTES: u64 = 16 << 20;

/// Why a capped read failed.
#[derive(Debug, thiserror::Error)]
pub enum CappedReadError {
    #[error("{}: {source}", .path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: larger than {}, the most arev reads of {what}; refused", .path.display(), human(*.cap))]
    TooLarge {
        path: PathBuf,
        cap: u64,
        what: &'static str,
    },
    #[error("{}: not UTF-8", .path.display())]
    NotUtf8 { path: PathBuf },
}

impl CappedReadError {
    /// The file does not exist.
    pub fn is_not_found(&self) -> bool {
        matches!(self, Self::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound)
    }

    /// The same failure as an `io::Error` (for callers whose error type wraps one).
    pub fn into_io(self) -> std::io::Error {
        match self {
            Self::Io { source, .. } => source,
            Self::TooLarge { cap, what, .. } => std::io::Error::other(format!(
                "larger than {}, the most arev reads of {what}; refused",
                human(cap)
            )),
            Self::NotUtf8 { .. } => {
                std::io::Error::new(std::io::ErrorKind::InvalidData, "not UTF-8")
            }
        }
    }
}

fn human(bytes: u64) -> String {
    if bytes >= 1 << 20 && bytes % (1 << 20) == 0 {
        format!("{} MiB", bytes >> 20)
    } else if bytes >= 1 << 10 && bytes % (1 << 10) == 0 {
        format!("{} KiB", bytes >> 10)
    } else {
        format!("{bytes} bytes")
    }
}

/// The bytes of `path`, at most `cap` of them; `what` names the kind of file in the error
/// ("a run record", "a report").
pub fn read_capped(path: &Path, cap: u64, what: &'static str) -> Result<Vec<u8>, CappedReadError> {
    let io = |source| CappedReadError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let mut bytes = Vec::new();
    file.take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > cap {
        return Err(CappedReadError::TooLarge {
            path: path.to_path_buf(),
            cap,
            what,
        });
    }
    Ok(bytes)
}

/// [`read_capped`] as UTF-8 text.
pub fn read_capped_string(
    path: &Path,
    cap: u64,
    what: &'static str,
) -> Result<String, CappedReadError> {
    String::from_utf8(read_capped(path, cap, what)?).map_err(|_| CappedReadError::NotUtf8 {
        path: path.to_path_buf(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_up_to_the_cap_and_refuses_past_it() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("meta.json");
        std::fs::write(&p, vec![b'x'; 2048]).unwrap();
        assert_eq!(read_capped(&p, 2048, "a run record").unwrap().len(), 2048);
        let e = read_capped(&p, 2047, "a run record").unwrap_err();
        assert!(
            e.to_string().ends_with(
                "meta.json: larger than 2047 bytes, the most arev reads of a run record; refused"
            ),
            "{e}"
        );
        let e = read_capped(&p, 1024, "a run record").unwrap_err();
        assert!(e.to_string().contains("larger than 1 KiB"), "{e}");
        assert!(!e.is_not_found());
        assert!(read_capped(&d.path().join("none"), 1, "x")
            .unwrap_err()
            .is_not_found());
        std::fs::write(&p, [0xff, 0xfe]).unwrap();
        assert!(matches!(
            read_capped_string(&p, 10, "x"),
            Err(CappedReadError::NotUtf8 { .. })
        ));
    }
}
