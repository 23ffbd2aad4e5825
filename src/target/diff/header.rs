//! A file's patch header, written byte for byte as `git diff-index -p --full-index` writes
//! it, names quoted as core.quotePath quotes them.

use git2::{FileMode, Oid};

/// `prefix` + `path` as git writes a name in a patch header (core.quotePath): in double
/// quotes with C escapes when it holds a quote, a backslash, a control character or a
/// non-ASCII byte (octal), else as is.
fn quote_path(prefix: &str, path: &str) -> String {
    let needs = path
        .bytes()
        .any(|b| b < 0x20 || b == b'"' || b == b'\\' || b >= 0x7f);
    if !needs {
        return format!("{prefix}{path}");
    }
    let mut out = String::with_capacity(path.len() + 8);
    out.push('"');
    out.push_str(prefix);
    for b in path.bytes() {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\t' => out.push_str("\\t"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            0x07 => out.push_str("\\a"),
            0x08 => out.push_str("\\b"),
            0x0b => out.push_str("\\v"),
            0x0c => out.push_str("\\f"),
            b if !(0x20..0x7f).contains(&b) => out.push_str(&format!("\\{b:03o}")),
            b => out.push(char::from(b)),
        }
    }
    out.push('"');
    out
}

/// A blob mode as git prints it.
pub(super) fn mode_str(mode: FileMode) -> &'static str {
    match mode {
        FileMode::BlobExecutable => "100755",
        _ => "100644",
    }
}

/// What one file's patch header says.
pub(super) struct Header<'a> {
    pub(super) path: &'a str,
    /// None: the file does not exist on that side.
    pub(super) old: Option<(Oid, FileMode)>,
    pub(super) new: Option<(Oid, FileMode)>,
    pub(super) has_hunks: bool,
}

impl Header<'_> {
    /// The header exactly as `git diff-index -p --full-index` writes it: no `index` line for
    /// a change of mode alone, no `---`/`+++` lines without hunks, and a tab after a
    /// `---`/`+++` name holding a space.
    pub(super) fn write(&self, out: &mut Vec<u8>) {
        use std::fmt::Write as _;
        let a = quote_path("a/", self.path);
        let b = quote_path("b/", self.path);
        let mut h = String::with_capacity(200);
        let _ = writeln!(h, "diff --git {a} {b}");
        let zero = Oid::zero();
        let (old_id, new_id) = (
            self.old.map_or(zero, |(id, _)| id),
            self.new.map_or(zero, |(id, _)| id),
        );
        let mut same_mode = None;
        match (self.old, self.new) {
            (None, Some((_, m))) => {
                let _ = writeln!(h, "new file mode {}", mode_str(m));
            }
            (Some((_, m)), None) => {
                let _ = writeln!(h, "deleted file mode {}", mode_str(m));
            }
            (Some((_, om)), Some((_, nm))) if mode_str(om) != mode_str(nm) => {
                let _ = writeln!(h, "old mode {}\nnew mode {}", mode_str(om), mode_str(nm));
            }
            (Some((_, m)), Some(_)) => same_mode = Some(mode_str(m)),
            (None, None) => {}
        }
        if old_id != new_id {
            match same_mode {
                Some(m) => {
                    let _ = writeln!(h, "index {old_id}..{new_id} {m}");
                }
                None => {
                    let _ = writeln!(h, "index {old_id}..{new_id}");
                }
            }
        }
        if self.has_hunks {
            let tab = |name: &str| if name.contains(' ') { "\t" } else { "" };
            let minus = if self.old.is_some() {
                a
            } else {
                "/dev/null".to_owned()
            };
            let plus = if self.new.is_some() {
                b
            } else {
                "/dev/null".to_owned()
            };
            let _ = writeln!(h, "--- {minus}{}", tab(&minus));
            let _ = writeln!(h, "+++ {plus}{}", tab(&plus));
        }
        out.extend_from_slice(h.as_bytes());
    }
}

/// Offset of the first hunk line (`@@ ` at a line start), if any.
pub(super) fn first_hunk(buf: &[u8]) -> Option<usize> {
    if buf.starts_with(b"@@ ") {
        return Some(0);
    }
    buf.windows(4).position(|w| w == b"\n@@ ").map(|i| i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_quoted_as_git_quotes_them() {
        assert_eq!(quote_path("a/", "src/x.rs"), "a/src/x.rs");
        assert_eq!(quote_path("b/", "sp ace"), "b/sp ace");
        assert_eq!(quote_path("a/", "é.txt"), "\"a/\\303\\251.txt\"");
        assert_eq!(quote_path("a/", "q\"b\\"), "\"a/q\\\"b\\\\\"");
    }

    #[test]
    fn headers_are_written_as_git_writes_them() {
        let id = |c: char| Oid::from_str(&c.to_string().repeat(40)).unwrap();
        let text = |h: Header<'_>| {
            let mut v = Vec::new();
            h.write(&mut v);
            String::from_utf8(v).unwrap()
        };
        assert_eq!(
            text(Header {
                path: "e",
                old: None,
                new: Some((id('e'), FileMode::Blob)),
                has_hunks: false
            }),
            format!(
                "diff --git a/e b/e\nnew file mode 100644\nindex {}..{}\n",
                Oid::zero(),
                id('e')
            )
        );
        assert_eq!(
            text(Header {
                path: "s p",
                old: Some((id('1'), FileMode::Blob)),
                new: Some((id('2'), FileMode::Blob)),
                has_hunks: true
            }),
            format!(
                "diff --git a/s p b/s p\nindex {}..{} 100644\n--- a/s p\t\n+++ b/s p\t\n",
                id('1'),
                id('2')
            )
        );
        assert_eq!(
            text(Header {
                path: "x.sh",
                old: Some((id('3'), FileMode::Blob)),
                new: Some((id('3'), FileMode::BlobExecutable)),
                has_hunks: false
            }),
            "diff --git a/x.sh b/x.sh\nold mode 100644\nnew mode 100755\n"
        );
        assert_eq!(
            text(Header {
                path: "gone",
                old: Some((id('4'), FileMode::Blob)),
                new: None,
                has_hunks: true
            }),
            format!(
                "diff --git a/gone b/gone\ndeleted file mode 100644\nindex {}..{}\n--- a/gone\n+++ /dev/null\n",
                id('4'),
                Oid::zero()
            )
        );
    }
}
