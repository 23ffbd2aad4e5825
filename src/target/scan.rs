//! Reading and hashing target files: one read per file that yields sha256, line count and the
//! binary / size / UTF-8 verdict; path helpers; the `sha256sum`-style manifest digest.

use super::{SkipReason, TargetError};
use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::{Component, Path, PathBuf};

/// How many leading bytes are searched for a NUL to call a file binary (what git does).
pub(crate) const BINARY_SNIFF_BYTES: usize = 8 * 1024;

/// A readable UTF-8 text file, measured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Scanned {
    pub sha256: String,
    pub lines: u32,
    /// The file's text, kept only when asked for (the brief needs it).
    pub text: Option<String>,
}

/// Why a file could not be taken, with a message for `Unreadable`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ScanError {
    Skip(SkipReason, String),
    Missing,
}

impl ScanError {
    /// The `TargetError` for a single-file target named `arg`.
    pub(crate) fn into_target_error(self, arg: &str, cap: u64, size: u64) -> TargetError {
        match self {
            Self::Missing => TargetError::NoSuchFile(arg.to_owned()),
            Self::Skip(SkipReason::Binary, _) => TargetError::Binary(arg.to_owned()),
            Self::Skip(SkipReason::NotUtf8, _) => TargetError::NotUtf8(arg.to_owned()),
            Self::Skip(SkipReason::TooLarge, _) => TargetError::TooLarge {
                path: arg.to_owned(),
                size,
                cap,
            },
            Self::Skip(SkipReason::Unreadable, message) => TargetError::Unreadable {
                path: arg.to_owned(),
                message,
            },
        }
    }
}

/// Read `path` once and classify it: too large (by metadata, not read), unreadable, binary
/// (NUL in the first 8 KiB), not UTF-8, or text with its sha256 and line count.
pub(crate) fn scan_file(path: &Path, cap: u64, keep_text: bool) -> Result<Scanned, ScanError> {
    let mut file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(ScanError::Missing),
        Err(e) => return Err(ScanError::Skip(SkipReason::Unreadable, e.to_string())),
    };
    let size = file
        .metadata()
        .map_err(|e| ScanError::Skip(SkipReason::Unreadable, e.to_string()))?
        .len();
    if size > cap {
        return Err(ScanError::Skip(SkipReason::TooLarge, String::new()));
    }
    // Read exactly the size seen at open (no EOF probe: one read syscall for a small file).
    // A file that shrank meanwhile is taken as it is now; one that grew, as it was.
    let mut bytes = vec![0u8; usize::try_from(size).unwrap_or(usize::MAX)];
    let mut filled = 0;
    while filled < bytes.len() {
        match file.read(&mut bytes[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(ScanError::Skip(SkipReason::Unreadable, e.to_string())),
        }
    }
    bytes.truncate(filled);
    if is_binary(&bytes) {
        return Err(ScanError::Skip(SkipReason::Binary, String::new()));
    }
    let text = match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(_) => return Err(ScanError::Skip(SkipReason::NotUtf8, String::new())),
    };
    Ok(Scanned {
        sha256: sha256_hex(text.as_bytes()),
        lines: count_lines(text.as_bytes()),
        text: keep_text.then_some(text),
    })
}

/// The size of `path` for error messages (0 when it cannot be read).
pub(crate) fn file_size(path: &Path) -> u64 {
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

/// Git's heuristic: a NUL byte in the first 8 KiB.
pub(crate) fn is_binary(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(BINARY_SNIFF_BYTES)].contains(&0)
}

/// Number of lines: newlines, plus one for a final line without a newline.
pub(crate) fn count_lines(bytes: &[u8]) -> u32 {
    // Byte-wide partial sums over blocks of 255 vectorise far better than one wide counter.
    let mut chunks = bytes.chunks_exact(255);
    let mut newlines: usize = 0;
    for chunk in &mut chunks {
        let block: u8 = chunk.iter().fold(0u8, |acc, &b| acc + u8::from(b == b'\n'));
        newlines += usize::from(block);
    }
    newlines += chunks.remainder().iter().filter(|&&b| b == b'\n').count();
    let partial = usize::from(bytes.last().is_some_and(|&b| b != b'\n'));
    u32::try_from(newlines + partial).unwrap_or(u32::MAX)
}

/// Lowercase hex sha256 of `bytes`.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// Lowercase hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0xf)]));
    }
    out
}

/// TARGET_SHA of a manifest: sha256 of the lines `sha256sum` prints for the files, in order
/// (`<hex>  <path>\n`; a path holding `\` or a newline is escaped and the line starts with
/// `\`, exactly as GNU `sha256sum` does).
pub(crate) fn manifest_digest<'a>(entries: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    let mut hasher = Sha256::new();
    let mut line = String::new();
    for (sha, path) in entries {
        line.clear();
        if path.contains(['\\', '\n', '\r']) {
            line.push('\\');
            line.push_str(sha);
            line.push_str("  ");
            for c in path.chars() {
                match c {
                    '\\' => line.push_str("\\\\"),
                    '\n' => line.push_str("\\n"),
                    '\r' => line.push_str("\\r"),
                    c => line.push(c),
                }
            }
        } else {
            line.push_str(sha);
            line.push_str("  ");
            line.push_str(path);
        }
        line.push('\n');
        hasher.update(line.as_bytes());
    }
    hex(&hasher.finalize())
}

/// `rel` (relative to `root`) as a `/`-separated string, or None when not UTF-8.
pub(crate) fn rel_string(rel: &Path) -> Option<String> {
    let mut out = String::new();
    for comp in rel.components() {
        let Component::Normal(part) = comp else {
            continue;
        };
        if !out.is_empty() {
            out.push('/');
        }
        out.push_str(part.to_str()?);
    }
    Some(out)
}

/// Lexically normalise a `/`-separated relative path (`.` dropped, `..` pops). None when it
/// climbs above its start.
pub(crate) fn normalize_rel(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    Some(parts.join("/"))
}

/// Canonical form of `dir`, mapped to a target error when it does not exist.
pub(crate) fn canonical_dir(dir: &Path) -> Result<PathBuf, TargetError> {
    dir.canonicalize().map_err(|e| TargetError::Unreadable {
        path: dir.display().to_string(),
        message: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_lines_like_wc_plus_partial() {
        assert_eq!(count_lines(b""), 0);
        assert_eq!(count_lines(b"a"), 1);
        assert_eq!(count_lines(b"a\n"), 1);
        assert_eq!(count_lines(b"a\nb"), 2);
        assert_eq!(count_lines(b"\n\n"), 2);
        let mut big = "ab\n".repeat(1000).into_bytes();
        assert_eq!(count_lines(&big), 1000);
        big.push(b'x');
        assert_eq!(count_lines(&big), 1001);
        assert_eq!(count_lines(&[b'\n'; 600]), 600);
    }

    #[test]
    fn hex_and_sha() {
        assert_eq!(
            sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(hex(&[0x00, 0xab, 0xff]), "00abff");
    }

    #[test]
    fn normalises_relative_paths() {
        assert_eq!(
            normalize_rel("src/./a/../b.rs").as_deref(),
            Some("src/b.rs")
        );
        assert_eq!(normalize_rel("./x").as_deref(), Some("x"));
        assert_eq!(normalize_rel("a/../.."), None);
    }

    #[test]
    fn binary_sniff_only_looks_at_first_8k() {
        let mut v = vec![b'a'; BINARY_SNIFF_BYTES];
        v.push(0);
        assert!(!is_binary(&v));
        v[10] = 0;
        assert!(is_binary(&v));
    }

    #[test]
    fn manifest_digest_escapes_like_sha256sum() {
        let plain = manifest_digest([("ab", "x")]);
        assert_eq!(plain, sha256_hex(b"ab  x\n"));
        let escaped = manifest_digest([("ab", "a\\b")]);
        assert_eq!(escaped, sha256_hex(b"\\ab  a\\\\b\n"));
    }
}
