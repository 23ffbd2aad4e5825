//! The context-citation gate (docs/contracts.md §22.2): a `{file, line, text}` citation an
//! agent attaches to a finding, an Adversary map entry or a ruling is kept only when its file
//! is in the context scope, its line exists and holds the quoted text (whitespace-normalised).
//! A citation that does not hold is dropped and counted (`context_cite_invalid`), never an
//! abort. The check is a pure function over a [`ContextSource`]; [`ScopeLines`] is the
//! real one, reading the pinned tree's working-tree content under a size cap, never through
//! a symbolic link, and judging a file by its content as the scope pinned it: a file that
//! changed since the pin is read from the repository's objects, or, where its pinned
//! content is not stored, its citations are dropped (`changed since the pin`).

use crate::findings::ContextCite;
use std::collections::{HashMap, HashSet};
use std::path::{Component, Path};
use std::sync::{Arc, Mutex};

/// At most this many citations per finding, map entry or ruling; those past it are dropped
/// unchecked and counted like any invalid one.
pub const MAX_CITES: usize = crate::records::MAX_CONTEXT_CITES;
/// The longest quote kept (characters, after whitespace normalisation); a longer one is
/// dropped: a citation points at a line, it does not carry a file.
pub const MAX_CITE_TEXT: usize = 300;
/// A quote shorter than this must be the whole (normalised) line: `(` is on every line.
pub const MIN_CITE_TEXT: usize = 8;
/// The longest cited path (bytes).
const MAX_CITE_PATH: usize = 1024;
/// Files whose lines [`ScopeLines`] keeps in memory (a citation past them is still checked,
/// its file read again).
const CACHED_FILES: usize = 64;

/// What the citation gate checks against: which files are in the context scope, and their
/// lines.
pub trait ContextSource: Sync {
    /// Whether the repository-relative, normalised path is in the context scope.
    fn in_scope(&self, rel: &str) -> bool;
    /// The lines of a file of the scope (no line terminators); None when it cannot be read
    /// as text within the cap.
    fn lines(&self, rel: &str) -> Option<Arc<[String]>>;
    /// The repository root (an absolute citation is accepted only below it).
    fn root(&self) -> &Path;
    /// Whether [`ContextSource::lines`] gave None for `rel` because the file changed since
    /// the pin and its pinned content is not stored.
    fn drifted(&self, _rel: &str) -> bool {
        false
    }
}

/// Why a citation was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CiteDrop {
    /// Past the fifth citation of its finding, entry or ruling.
    OverCap,
    /// Empty, absolute outside the repository, with `..`, `.` or an empty component.
    BadPath,
    /// Not a file of the context scope (ignored, untracked, `.git`, outside the repository).
    OutOfScope,
    /// The file could not be read as text within the cap.
    Unreadable,
    /// The file changed since the pin, and its pinned content is not stored (a file modified
    /// in the working tree at pin time, modified again).
    Drifted,
    /// Line 0, or past the file's end.
    NoSuchLine,
    /// The quote is empty, too short, too long, or not on that line.
    TextMismatch,
}

impl CiteDrop {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::OverCap => "more than 5 citations",
            Self::BadPath => "not a repository-relative path",
            Self::OutOfScope => "not in the context scope",
            Self::Unreadable => "not readable as text",
            Self::Drifted => "changed since the pin",
            Self::NoSuchLine => "no such line",
            Self::TextMismatch => "the quoted text is not on that line",
        }
    }
}

/// A citation the gate dropped: where it pointed (path cut to 120 characters) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DroppedCite {
    pub at: String,
    pub why: CiteDrop,
}

impl std::fmt::Display for DroppedCite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.at, self.why.as_str())
    }
}

/// Whitespace runs folded to one space, ends trimmed.
fn normalise_ws(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The cited path as a repository-relative path of plain components, or None. An absolute
/// path is accepted below `root` (agents Read with absolute paths); `./` prefixes go.
pub fn cite_path(file: &str, root: &Path) -> Option<String> {
    let file = file.trim();
    if file.is_empty() || file.len() > MAX_CITE_PATH || file.contains('\0') {
        return None;
    }
    let p = Path::new(file);
    let rel = if p.is_absolute() {
        p.strip_prefix(root).ok()?
    } else {
        p
    };
    let mut parts = vec![];
    for (i, c) in rel.components().enumerate() {
        match c {
            Component::Normal(s) => parts.push(s.to_str()?),
            // A leading `./` is harmless; `..`, a root or a prefix is not.
            Component::CurDir if i == 0 => {}
            _ => return None,
        }
    }
    // `a//b` and `a/./b` are not how anything names a file.
    let joined = parts.join("/");
    let plain = file.trim_start_matches("./");
    if parts.is_empty() || (!p.is_absolute() && plain != joined) {
        return None;
    }
    Some(joined)
}

/// One citation checked: the kept citation (path normalised, quote whitespace-normalised), or
/// why it was dropped.
fn check_one(c: &ContextCite, src: &dyn ContextSource) -> Result<ContextCite, CiteDrop> {
    let rel = cite_path(&c.file, src.root()).ok_or(CiteDrop::BadPath)?;
    if !src.in_scope(&rel) {
        return Err(CiteDrop::OutOfScope);
    }
    let lines = src.lines(&rel).ok_or_else(|| {
        if src.drifted(&rel) {
            CiteDrop::Drifted
        } else {
            CiteDrop::Unreadable
        }
    })?;
    let line = usize::try_from(c.line)
        .ok()
        .and_then(|n| n.checked_sub(1))
        .and_then(|i| lines.get(i))
        .ok_or(CiteDrop::NoSuchLine)?;
    let quote = normalise_ws(&c.text);
    let on_line = normalise_ws(line);
    let len = quote.chars().count();
    let fits = !quote.is_empty()
        && len <= MAX_CITE_TEXT
        && (len >= MIN_CITE_TEXT || quote == on_line)
        && on_line.contains(&quote);
    if !fits {
        return Err(CiteDrop::TextMismatch);
    }
    Ok(ContextCite {
        file: rel,
        line: c.line,
        text: quote,
    })
}

/// Where a citation pointed, for a record's reason line (agent text cut short).
fn at(c: &ContextCite) -> String {
    let file: String = c.file.chars().take(120).collect();
    format!("{file}:{}", c.line)
}

/// Check `cites` in place: the first [`MAX_CITES`] that hold stay (normalised, duplicates
/// folded into one), the rest are returned as dropped, in order. A duplicate of a kept
/// citation is neither kept twice nor counted.
pub fn check_cites(cites: &mut Vec<ContextCite>, src: &dyn ContextSource) -> Vec<DroppedCite> {
    if cites.is_empty() {
        return vec![];
    }
    let mut kept: Vec<ContextCite> = Vec::with_capacity(cites.len().min(MAX_CITES));
    let mut dropped = vec![];
    for (i, c) in std::mem::take(cites).into_iter().enumerate() {
        let checked = if i >= MAX_CITES {
            Err(CiteDrop::OverCap)
        } else {
            check_one(&c, src)
        };
        match checked {
            Ok(k) if kept.contains(&k) => {}
            Ok(k) => kept.push(k),
            Err(why) => dropped.push(DroppedCite { at: at(&c), why }),
        }
    }
    *cites = kept;
    dropped
}

/// What a file's content was pinned as: a git blob id (40 hex digits) or a sha256 (64).
type Pins<'a> = Box<dyn Fn(&str) -> Option<String> + Send + Sync + 'a>;

/// The real [`ContextSource`]: the context scope's membership predicate and the files'
/// working-tree content, each read at most `cap` bytes, as UTF-8 text, refusing a symbolic
/// link anywhere on the path (docs/trust.md); with [`ScopeLines::with_pins`], the content
/// as pinned.
pub struct ScopeLines<'a> {
    root: &'a Path,
    cap: u64,
    in_scope: Box<dyn Fn(&str) -> bool + Send + Sync + 'a>,
    pins: Option<Pins<'a>>,
    cache: Mutex<HashMap<String, Option<Arc<[String]>>>>,
    drifted: Mutex<HashSet<String>>,
}

impl<'a> ScopeLines<'a> {
    pub fn new(
        root: &'a Path,
        cap: u64,
        in_scope: Box<dyn Fn(&str) -> bool + Send + Sync + 'a>,
    ) -> Self {
        Self {
            root,
            cap,
            in_scope,
            pins: None,
            cache: Mutex::new(HashMap::new()),
            drifted: Mutex::new(HashSet::new()),
        }
    }

    /// The citation source of a pinned target: a target file, or (`context = "tree"`) a file
    /// of its context scope, each judged as pinned — the scope's blob id, else the target
    /// file's sha256 ([`ScopeLines::with_pins`]).
    pub fn of_target(target: &'a crate::target::PinnedTarget, cap: u64) -> Self {
        Self::new(&target.root, cap, Box::new(move |rel| target.readable(rel))).with_pins(Box::new(
            move |rel| {
                let scoped = target.context.as_ref().and_then(|c| c.blob(rel));
                let pinned = target.file(rel).map(|f| f.sha256.as_str());
                scoped
                    .or(pinned)
                    .filter(|p| !p.is_empty())
                    .map(str::to_owned)
            },
        ))
    }

    /// Judge each file by its content as pinned (`pins` gives its blob id or sha256, None
    /// for a file not pinned): a working-tree file that no longer matches is read from the
    /// repository's objects by its blob id, or counts as drifted.
    pub fn with_pins(mut self, pins: Pins<'a>) -> Self {
        self.pins = Some(pins);
        self
    }

    fn read(&self, rel: &str) -> Option<Arc<[String]>> {
        let now = read_no_follow(self.root, rel, self.cap);
        let bytes = match self.pins.as_ref().and_then(|p| p(rel)) {
            None => now,
            Some(pin) if now.as_deref().is_some_and(|b| matches_pin(b, &pin)) => now,
            Some(pin) => match pinned_blob(self.root, &pin, self.cap) {
                Some(b) => Some(b),
                None => {
                    let mut d = self.drifted.lock().unwrap_or_else(|e| e.into_inner());
                    d.insert(rel.to_string());
                    return None;
                }
            },
        }?;
        let text = String::from_utf8(bytes).ok()?;
        Some(
            text.split('\n')
                .map(|l| l.strip_suffix('\r').unwrap_or(l).to_string())
                .collect(),
        )
    }
}

/// Whether `bytes` are the content pinned as `pin` (a git blob id or a sha256).
fn matches_pin(bytes: &[u8], pin: &str) -> bool {
    use sha2::Digest;
    match pin.len() {
        40 => git2::Oid::hash_object(git2::ObjectType::Blob, bytes)
            .is_ok_and(|o| o.to_string() == pin),
        64 => hex::encode(sha2::Sha256::digest(bytes)) == pin,
        _ => false,
    }
}

/// The content of the blob `pin` in the repository at `root`, when stored and within `cap`.
fn pinned_blob(root: &Path, pin: &str, cap: u64) -> Option<Vec<u8>> {
    if pin.len() != 40 {
        return None;
    }
    let repo = git2::Repository::open(root).ok()?;
    let blob = repo.find_blob(git2::Oid::from_str(pin).ok()?).ok()?;
    (blob.size() as u64 <= cap).then(|| blob.content().to_vec())
}

impl ContextSource for ScopeLines<'_> {
    fn in_scope(&self, rel: &str) -> bool {
        (self.in_scope)(rel)
    }

    fn lines(&self, rel: &str) -> Option<Arc<[String]>> {
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(l) = cache.get(rel) {
            return l.clone();
        }
        let lines = self.read(rel);
        if cache.len() < CACHED_FILES {
            cache.insert(rel.to_string(), lines.clone());
        }
        lines
    }

    fn root(&self) -> &Path {
        self.root
    }

    fn drifted(&self, rel: &str) -> bool {
        self.drifted
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(rel)
    }
}

/// `root/rel`'s bytes: every directory on the way a real directory (not a link), the file a
/// regular file opened without following a link, at most `cap` bytes.
fn read_no_follow(root: &Path, rel: &str, cap: u64) -> Option<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let mut at = root.to_path_buf();
    let parts: Vec<&str> = rel.split('/').collect();
    let (name, dirs) = parts.split_last()?;
    for d in dirs {
        at.push(d);
        let m = std::fs::symlink_metadata(&at).ok()?;
        if !m.file_type().is_dir() {
            return None;
        }
    }
    at.push(name);
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(&at)
        .ok()?;
    if !file.metadata().ok()?.file_type().is_file() {
        return None;
    }
    let mut bytes = Vec::new();
    file.take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .ok()?;
    if bytes.len() as u64 > cap {
        return None;
    }
    Some(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{cite, MemScope};

    fn files() -> MemScope {
        MemScope::new(&[
            (
                "app.py",
                "import ringbuf\n\nif len(buf) > 0:\n    buf.pop()\n",
            ),
            (
                "tests/test_app.py",
                "def test_pop():\n    assert pop() == 1\n",
            ),
        ])
    }

    fn whys(d: &[DroppedCite]) -> Vec<CiteDrop> {
        d.iter().map(|d| d.why).collect()
    }

    #[test]
    fn a_real_quote_of_a_scope_line_is_kept_normalised() {
        let src = files();
        let mut c = vec![
            cite("./app.py", 3, "if  len(buf)\t> 0:"),
            cite("/repo/tests/test_app.py", 2, "assert pop() == 1"),
            // Short quotes are kept only as the whole line.
            cite("app.py", 4, "buf.pop()"),
        ];
        assert!(check_cites(&mut c, &src).is_empty());
        assert_eq!(
            c,
            [
                cite("app.py", 3, "if len(buf) > 0:"),
                cite("tests/test_app.py", 2, "assert pop() == 1"),
                cite("app.py", 4, "buf.pop()"),
            ]
        );
        // A duplicate is folded, not counted.
        let mut c = vec![
            cite("app.py", 3, "len(buf) > 0"),
            cite("app.py", 3, "len(buf) > 0"),
        ];
        assert!(check_cites(&mut c, &src).is_empty());
        assert_eq!(c.len(), 1);
    }

    #[test]
    fn fabricated_citations_are_dropped_with_their_reason() {
        let src = files();
        let long = "x".repeat(MAX_CITE_TEXT + 1);
        use CiteDrop::*;
        let cases = [
            (cite("app.py", 3, "if len(buf) >= 0:"), TextMismatch),
            (cite("app.py", 99, "import ringbuf"), NoSuchLine),
            (cite("app.py", 0, "import ringbuf"), NoSuchLine),
            (cite(".env", 1, "SECRET=hunter2"), OutOfScope),
            (cite("../outside/app.py", 1, "import ringbuf"), BadPath),
            (cite("/etc/passwd", 1, "root:x:0:0"), BadPath),
            (cite("/repo/../etc/passwd", 1, "root:x:0:0"), BadPath),
            (cite("app.py", 1, "  "), TextMismatch),
            (cite("app.py", 1, "import"), TextMismatch),
            (cite("app.py", 1, &long), TextMismatch),
            (cite("", 1, "import ringbuf"), BadPath),
            (cite("a/../app.py", 1, "import ringbuf"), BadPath),
            (cite("tests//test_app.py", 1, "def test_pop():"), BadPath),
        ];
        for (c, why) in cases {
            let mut one = vec![c.clone()];
            let d = check_cites(&mut one, &src);
            assert!(one.is_empty(), "{c:?} kept");
            assert_eq!(whys(&d), [why], "{c:?}");
        }
        let mut c = vec![cite("app.py", 3, "if len(buf) >= 0:")];
        let d = check_cites(&mut c, &src);
        assert_eq!(
            d[0].to_string(),
            "app.py:3 (the quoted text is not on that line)"
        );
    }

    #[test]
    fn past_five_citations_the_rest_are_dropped_unchecked() {
        let src = files();
        let mut c: Vec<ContextCite> = (0..7)
            .map(|i| cite("app.py", 1 + (i % 4), "import ringbuf"))
            .collect();
        // Lines 1 (ok), 2, 3, 4 (wrong text), 1 (duplicate, folded), then two past the cap.
        let d = check_cites(&mut c, &src);
        assert_eq!(c, [cite("app.py", 1, "import ringbuf")]);
        use CiteDrop::*;
        assert_eq!(
            whys(&d),
            [TextMismatch, TextMismatch, TextMismatch, OverCap, OverCap]
        );
    }

    #[test]
    fn the_reader_refuses_links_and_files_past_the_cap() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("src/a.py"), "one\r\ntwo\n").unwrap();
        std::fs::write(root.join("big.txt"), "y".repeat(100)).unwrap();
        std::fs::write(root.join("bin"), [0xff, 0xfe, 0x00]).unwrap();
        std::os::unix::fs::symlink(root.join("src/a.py"), root.join("link.py")).unwrap();
        std::os::unix::fs::symlink(root.join("src"), root.join("dirlink")).unwrap();
        let s = ScopeLines::new(root, 64, Box::new(|_| true));
        assert_eq!(&*s.lines("src/a.py").unwrap(), ["one", "two", ""]);
        assert!(s.lines("link.py").is_none());
        assert!(s.lines("dirlink/a.py").is_none());
        assert!(s.lines("big.txt").is_none());
        assert!(s.lines("bin").is_none());
        assert!(s.lines("none.py").is_none());
        // Through the gate: a link in scope (a predicate that says yes) is still unreadable.
        let mut c = vec![cite("link.py", 1, "one"), cite("src/a.py", 2, "two")];
        let dropped = check_cites(&mut c, &s);
        assert_eq!(whys(&dropped), [CiteDrop::Unreadable]);
        assert_eq!(c, [cite("src/a.py", 2, "two")]);
        // Out of the predicate's scope: never read.
        let only = ScopeLines::new(root, 64, Box::new(|p| p == "src/a.py"));
        let mut c = vec![cite("big.txt", 1, "yyyyyyyyyy")];
        assert_eq!(whys(&check_cites(&mut c, &only)), [CiteDrop::OutOfScope]);
    }
}
