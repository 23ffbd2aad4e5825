//! Reading and hashing target files: one read per file that yields sha256, line count and the
//! binary / size / UTF-8 verdict; path helpers; the `sha256sum`-style manifest digest.

pub(crate) use super::scope::has_control_chars;
use super::statkey::StatKey;
use super::{SkipReason, TargetError};
use sha2::{Digest, Sha256};
use std::fmt::Write as _;
use std::fs::{File, Metadata};
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

/// The largest file re-read when checking a pinned target for drift: a reviewed file that
/// grew past it meanwhile counts as changed without being read (memory stays bounded).
pub const REPIN_MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// How many leading bytes are searched for a NUL to call a file binary (what git does).
pub(crate) const BINARY_SNIFF_BYTES: usize = 8 * 1024;

/// A readable UTF-8 text file, measured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Scanned {
    pub sha256: String,
    pub lines: u32,
    /// The file's text, kept only when asked for (the brief needs it).
    pub text: Option<String>,
    /// What `fstat` said of the open file before it was read (the drift check's pre-key).
    pub stat: StatKey,
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
            Self::Skip(SkipReason::Symlink, _) => TargetError::Symlink(arg.to_owned()),
            Self::Skip(SkipReason::ControlChars, _) => TargetError::ControlChars(escape_path(arg)),
            Self::Skip(
                reason @ (SkipReason::Submodule
                | SkipReason::RunDir
                | SkipReason::Excluded
                | SkipReason::Generated
                | SkipReason::Vendored
                | SkipReason::Lockfile
                | SkipReason::ArevDir),
                _,
            ) => TargetError::Unreadable {
                path: arg.to_owned(),
                message: format!("skipped ({})", reason.as_str()),
            },
        }
    }
}

/// Open `rel` (root-relative, `/`-separated) for reading without following a symlink in
/// any of its components, and only when it is a regular file. Returns the file and its
/// metadata (`fstat` of the open file).
///
/// On Linux 5.6 and later this is one `openat2` beneath the root with symlinks refused by
/// the kernel itself: nothing can be swapped between a check and the open, and it costs one
/// path walk where the portable [`open_regular_walk`] costs one per directory level (on a
/// 20,000-file manifest that was four `lstat` calls per file). Where `openat2` is missing
/// or filtered (old kernels, some seccomp profiles) the walk is used.
pub(crate) fn open_regular(root: &Path, rel: &str) -> Result<(File, Metadata), ScanError> {
    refuse_outside(rel)?;
    #[cfg(target_os = "linux")]
    if let Some(opened) = beneath::open(root, rel) {
        return opened;
    }
    open_regular_walk(root, rel)
}

/// The portable [`open_regular`]: every directory on the way and the file itself are checked
/// with `lstat`, and the opened file must be the very inode that `lstat` saw (a swap to a
/// link between the check and the open is caught).
pub(crate) fn open_regular_walk(root: &Path, rel: &str) -> Result<(File, Metadata), ScanError> {
    refuse_outside(rel)?;
    let unreadable = |e: std::io::Error| ScanError::Skip(SkipReason::Unreadable, e.to_string());
    let parts: Vec<&str> = rel.split('/').filter(|p| !p.is_empty()).collect();
    let Some((_, dirs)) = parts.split_last() else {
        return Err(ScanError::Skip(
            SkipReason::Unreadable,
            "not a regular file".into(),
        ));
    };
    let mut path = root.to_path_buf();
    for dir in dirs {
        path.push(dir);
        match std::fs::symlink_metadata(&path) {
            Ok(m) if m.file_type().is_symlink() => {
                return Err(ScanError::Skip(SkipReason::Symlink, String::new()))
            }
            Ok(m) if m.is_dir() => {}
            Ok(_) => return Err(ScanError::Missing),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(ScanError::Missing),
            Err(e) => return Err(unreadable(e)),
        }
    }
    path = root.join(rel);
    let seen = match std::fs::symlink_metadata(&path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(ScanError::Missing),
        Err(e) => return Err(unreadable(e)),
    };
    if seen.file_type().is_symlink() {
        return Err(ScanError::Skip(SkipReason::Symlink, String::new()));
    }
    if !seen.is_file() {
        return Err(ScanError::Skip(
            SkipReason::Unreadable,
            "not a regular file".into(),
        ));
    }
    let file = match File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(ScanError::Missing),
        Err(e) => return Err(unreadable(e)),
    };
    let meta = file.metadata().map_err(unreadable)?;
    if (meta.dev(), meta.ino()) != (seen.dev(), seen.ino()) {
        // Replaced (e.g. by a symlink) between the check and the open.
        return Err(ScanError::Skip(SkipReason::Symlink, String::new()));
    }
    Ok((file, meta))
}

/// A path that is no file under the root: empty, absolute, or climbing out with `..`.
fn refuse_outside(rel: &str) -> Result<(), ScanError> {
    let refuse = |why: &str| Err(ScanError::Skip(SkipReason::Unreadable, why.to_owned()));
    if rel.split('/').all(|p| p.is_empty()) {
        return refuse("not a regular file");
    }
    if rel.starts_with('/') || rel.split('/').any(|p| p == "..") {
        return refuse("not under the repository root");
    }
    Ok(())
}

#[cfg(target_os = "linux")]
mod beneath {
    //! `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)`: a file under a root, no symlink on
    //! the way, in one system call.

    use super::{ScanError, SkipReason};
    use nix::errno::Errno;
    use nix::fcntl::{openat2, OFlag, OpenHow, ResolveFlag};
    use nix::sys::stat::Mode;
    use std::fs::{File, Metadata};
    use std::os::fd::OwnedFd;
    use std::path::Path;
    use std::sync::atomic::{AtomicBool, Ordering};

    /// Set once `openat2` turned out to be unavailable: the walk is used from then on.
    static UNAVAILABLE: AtomicBool = AtomicBool::new(false);

    /// The opened regular file, or why not; `None` when `openat2` cannot be used here.
    pub(super) fn open(root: &Path, rel: &str) -> Option<Result<(File, Metadata), ScanError>> {
        if UNAVAILABLE.load(Ordering::Relaxed) {
            return None;
        }
        // The walk gives the same answers for a root that cannot be opened.
        let dir = open_root(root)?;
        open_at(&dir, rel)
    }

    /// `root` opened as a path-only directory descriptor (None: it cannot be).
    pub(super) fn open_root(root: &Path) -> Option<OwnedFd> {
        nix::fcntl::open(
            root,
            OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
            Mode::empty(),
        )
        .ok()
    }

    /// [`open`] beneath the root directory `dir` already opened ([`open_root`]).
    pub(super) fn open_at(dir: &OwnedFd, rel: &str) -> Option<Result<(File, Metadata), ScanError>> {
        if UNAVAILABLE.load(Ordering::Relaxed) {
            return None;
        }
        let unreadable = |e: String| Some(Err(ScanError::Skip(SkipReason::Unreadable, e)));
        // Non-blocking and never a controlling terminal: a FIFO or a device left in a working
        // tree is opened without effect, then refused as not a regular file.
        let how = OpenHow::new()
            .flags(OFlag::O_RDONLY | OFlag::O_CLOEXEC | OFlag::O_NONBLOCK | OFlag::O_NOCTTY)
            .resolve(ResolveFlag::RESOLVE_BENEATH | ResolveFlag::RESOLVE_NO_SYMLINKS);
        let fd = match openat2(dir, rel, how) {
            Ok(fd) => fd,
            Err(Errno::ENOSYS | Errno::EPERM | Errno::E2BIG | Errno::EINVAL) => {
                UNAVAILABLE.store(true, Ordering::Relaxed);
                return None;
            }
            Err(Errno::ELOOP) => {
                return Some(Err(ScanError::Skip(SkipReason::Symlink, String::new())))
            }
            Err(Errno::ENOENT | Errno::ENOTDIR) => return Some(Err(ScanError::Missing)),
            Err(Errno::EXDEV) => return unreadable("not under the repository root".into()),
            Err(e) => return unreadable(std::io::Error::from(e).to_string()),
        };
        let file = File::from(fd);
        let meta = match file.metadata() {
            Ok(m) => m,
            Err(e) => return unreadable(e.to_string()),
        };
        if !meta.is_file() {
            return unreadable("not a regular file".into());
        }
        Some(Ok((file, meta)))
    }
}

/// Read the opened `file` of `size` bytes (at most `size`: a file that grew meanwhile is
/// taken as it was; one that shrank, as it is now).
fn read_sized(file: &mut File, size: u64) -> Result<Vec<u8>, ScanError> {
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
    Ok(bytes)
}

/// A root opened once for many reads beneath it (the context map reads every file of the
/// scope: one `openat2` each instead of opening the root again for every file).
pub(crate) struct RootDir {
    path: PathBuf,
    #[cfg(target_os = "linux")]
    fd: Option<std::os::fd::OwnedFd>,
}

impl RootDir {
    pub(crate) fn open(root: &Path) -> Self {
        Self {
            path: root.to_path_buf(),
            #[cfg(target_os = "linux")]
            fd: beneath::open_root(root),
        }
    }

    /// [`read_regular`] beneath this root.
    pub(crate) fn read(&self, rel: &str, cap: u64) -> Result<Vec<u8>, ScanError> {
        #[cfg(target_os = "linux")]
        if let Some(dir) = &self.fd {
            refuse_outside(rel)?;
            if let Some(opened) = beneath::open_at(dir, rel) {
                let (mut file, meta) = opened?;
                if meta.len() > cap {
                    return Err(ScanError::Skip(SkipReason::TooLarge, String::new()));
                }
                return read_sized(&mut file, meta.len());
            }
        }
        read_regular(&self.path, rel, cap)
    }
}

/// The bytes of `rel` under `root` (never through a symlink), or why not: over `cap` bytes
/// (by metadata, not read), a link, missing, unreadable.
pub(crate) fn read_regular(root: &Path, rel: &str, cap: u64) -> Result<Vec<u8>, ScanError> {
    read_regular_meta(root, rel, cap).map(|(bytes, _)| bytes)
}

/// [`read_regular`], with the metadata of the opened file as it was before the read (its
/// stat pre-key: a change during the read leaves the key stale, never the content newer
/// than the key).
pub(crate) fn read_regular_meta(
    root: &Path,
    rel: &str,
    cap: u64,
) -> Result<(Vec<u8>, Metadata), ScanError> {
    let (mut file, meta) = open_regular(root, rel)?;
    if meta.len() > cap {
        return Err(ScanError::Skip(SkipReason::TooLarge, String::new()));
    }
    let bytes = read_sized(&mut file, meta.len())?;
    Ok((bytes, meta))
}

/// Read `rel` under `root` once (never through a symlink) and classify it: too large (by
/// metadata, not read), unreadable, binary (NUL in the first 8 KiB), not UTF-8, or text with
/// its sha256 and line count.
pub(crate) fn scan_file(
    root: &Path,
    rel: &str,
    cap: u64,
    keep_text: bool,
) -> Result<Scanned, ScanError> {
    let (bytes, meta) = read_regular_meta(root, rel, cap)?;
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
        stat: StatKey::of(&meta),
    })
}

/// `path` with control characters and backslashes escaped (`\n`, `\t`, `\u{1b}`, `\\`), for
/// listing a refused name in the report without writing it raw.
pub(crate) fn escape_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for c in path.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out
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
    let newlines = bytes.iter().filter(|&&b| b == b'\n').count();
    let partial = usize::from(bytes.last().is_some_and(|&b| b != b'\n'));
    u32::try_from(newlines + partial).unwrap_or(u32::MAX)
}

/// Lowercase hex sha256 of `bytes`.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
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
    hex::encode(hasher.finalize())
}

/// Whether `name` has the shape of a run id: `YYYYMMDD-HHMMSS-<6 hex>` then the end or
/// `-<slug>`.
pub(crate) fn is_run_id(name: &str) -> bool {
    let b = name.as_bytes();
    b.len() >= 22
        && b[..8].iter().all(u8::is_ascii_digit)
        && b[8] == b'-'
        && b[9..15].iter().all(u8::is_ascii_digit)
        && b[15] == b'-'
        && b[16..22]
            .iter()
            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(c))
        && (b.len() == 22 || b[22] == b'-')
}

/// Whether the directory `dir` is an arev run directory: named like a run id and holding a
/// `meta.json` (never through a symlink).
pub(crate) fn is_run_dir(dir: &Path) -> bool {
    dir.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(is_run_id)
        && std::fs::symlink_metadata(dir.join("meta.json")).is_ok_and(|m| m.is_file())
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

    /// What an open gave, reduced to what callers see.
    fn verdict(r: Result<(File, Metadata), ScanError>) -> String {
        match r {
            Ok((mut f, m)) => {
                let mut s = String::new();
                f.read_to_string(&mut s).unwrap();
                format!("ok {} {s}", m.len())
            }
            Err(ScanError::Missing) => "missing".into(),
            Err(ScanError::Skip(reason, why)) => format!("{} {why}", reason.as_str()),
        }
    }

    #[test]
    fn opening_beneath_the_root_refuses_links_and_strangers_as_the_walk_does() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        std::fs::create_dir_all(root.join("src/deep")).unwrap();
        std::fs::create_dir_all(root.join("real")).unwrap();
        std::fs::write(root.join("src/deep/a.rs"), "fn a() {}\n").unwrap();
        std::fs::write(root.join("real/b.rs"), "fn b() {}\n").unwrap();
        std::fs::write(root.join("secret.txt"), "s\n").unwrap();
        std::os::unix::fs::symlink("../secret.txt", root.join("src/link.rs")).unwrap();
        std::os::unix::fs::symlink("real", root.join("linked")).unwrap();
        std::os::unix::fs::symlink("/etc", root.join("src/etc")).unwrap();
        nix::unistd::mkfifo(&root.join("src/fifo"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        let cases = [
            ("src/deep/a.rs", "ok 10 fn a() {}\n"),
            ("./src//deep/a.rs", "ok 10 fn a() {}\n"),
            ("src/link.rs", "symlink "),
            ("linked/b.rs", "symlink "),
            ("src/etc/passwd", "symlink "),
            ("src/none.rs", "missing"),
            ("src/deep/a.rs/x", "missing"),
            // A FIFO is refused without blocking on its open.
            ("src/fifo", "unreadable not a regular file"),
            ("src/deep", "unreadable not a regular file"),
            ("", "unreadable not a regular file"),
            ("../x", "unreadable not under the repository root"),
            (
                "src/../secret.txt",
                "unreadable not under the repository root",
            ),
            ("/etc/passwd", "unreadable not under the repository root"),
        ];
        for (rel, want) in cases {
            assert_eq!(verdict(open_regular_walk(root, rel)), want, "walk: {rel}");
            assert_eq!(verdict(open_regular(root, rel)), want, "open: {rel}");
            // The kernel's answer itself, where it has openat2 (`open_regular` refuses the
            // paths outside the root before asking it).
            #[cfg(target_os = "linux")]
            if let Some(r) = refuse_outside(rel)
                .ok()
                .and_then(|()| beneath::open(root, rel))
            {
                assert_eq!(verdict(r), want, "openat2: {rel}");
            }
        }
    }

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
