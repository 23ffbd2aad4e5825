//! The PR diff as the forge sees it (pure): which new-file lines are on the right side of a
//! file's patch (added or context lines), and for a context line its old-file number; and
//! whether a patch changes a given old-file line (a "fixed" mark needs the forge's diff to).

use std::collections::BTreeMap;

/// One right-side line of a patch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RightLine {
    /// An added line.
    Added,
    /// An unchanged context line, with its number in the old file.
    Context { old_line: u32 },
}

/// The right-side lines of one file's patch, by new-file line number.
pub type RightLines = BTreeMap<u32, RightLine>;

/// `@@ -a[,b] +c[,d] @@` → (a, c).
fn hunk_start(header: &str) -> Option<(u32, u32)> {
    let rest = header.strip_prefix("@@ -")?;
    let (old, rest) = rest.split_once(" +")?;
    let (new, _) = rest.split_once(" @@")?;
    let first = |s: &str| s.split(',').next().and_then(|n| n.parse::<u32>().ok());
    Some((first(old)?, first(new)?))
}

/// The right-side lines of a unified-diff patch (GitHub's `patch`, GitLab's `diff`: hunks,
/// optionally after `---`/`+++` headers). A patch without hunks has none.
pub fn right_lines(patch: &str) -> RightLines {
    let mut out = RightLines::new();
    let mut pos: Option<(u32, u32)> = None;
    for line in patch.lines() {
        if line.starts_with("@@") {
            pos = hunk_start(line);
            continue;
        }
        let Some((old, new)) = pos.as_mut() else {
            continue;
        };
        match line.as_bytes().first() {
            Some(b'+') => {
                out.insert(*new, RightLine::Added);
                *new += 1;
            }
            Some(b'-') => *old += 1,
            Some(b'\\') => {} // "\ No newline at end of file"
            _ => {
                // A context line (a leading space, or an empty line from a trimmed patch).
                out.insert(*new, RightLine::Context { old_line: *old });
                *old += 1;
                *new += 1;
            }
        }
    }
    out
}

/// Whether `patch` (hunks of one file, from the forge's compare) removes or replaces
/// old-file `line`: one of its `-` lines is that line. A patch without hunks changes none.
pub fn changes_old_line(patch: &str, line: u32) -> bool {
    let mut old: Option<u32> = None;
    for l in patch.lines() {
        if l.starts_with("@@") {
            old = hunk_start(l).map(|(o, _)| o);
            continue;
        }
        let Some(o) = old.as_mut() else {
            continue;
        };
        match l.as_bytes().first() {
            Some(b'-') => {
                if *o == line {
                    return true;
                }
                *o += 1;
            }
            Some(b'+' | b'\\') => {}
            _ => *o += 1,
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_patch_changes_an_old_line_only_when_it_removes_or_replaces_it() {
        // Old lines 1-3; line 2 replaced, a line inserted after 3.
        let patch = "@@ -1,3 +1,4 @@\n a\n-b\n+B\n c\n+d\n@@ -10,2 +11,1 @@\n x\n-y\n";
        assert!(!changes_old_line(patch, 1));
        assert!(changes_old_line(patch, 2));
        assert!(
            !changes_old_line(patch, 3),
            "an insertion after it is not a change"
        );
        assert!(!changes_old_line(patch, 10));
        assert!(changes_old_line(patch, 11));
        assert!(!changes_old_line(patch, 5), "between hunks");
        // A hunk without counts, a deletion of the whole file, nothing.
        assert!(changes_old_line("@@ -4 +4 @@\n-a\n+b\n", 4));
        assert!(changes_old_line("@@ -1,2 +0,0 @@\n-a\n-b\n", 2));
        assert!(!changes_old_line("", 1));
        assert!(!changes_old_line("Binary files differ", 1));
        // Only an insertion before it: the line moved, it did not change.
        assert!(!changes_old_line("@@ -1,2 +1,3 @@\n+new\n a\n b\n", 2));
    }

    #[test]
    fn added_and_context_lines_are_on_the_right_side() {
        let patch = "@@ -1,4 +1,5 @@\n fn a() {\n-    old();\n+    new();\n+    more();\n }\n \n@@ -20,2 +21,3 @@ fn b() {\n x\n+y\n z\n\\ No newline at end of file";
        let r = right_lines(patch);
        assert_eq!(r.get(&1), Some(&RightLine::Context { old_line: 1 }));
        assert_eq!(r.get(&2), Some(&RightLine::Added));
        assert_eq!(r.get(&3), Some(&RightLine::Added));
        assert_eq!(r.get(&4), Some(&RightLine::Context { old_line: 3 }));
        assert_eq!(r.get(&5), Some(&RightLine::Context { old_line: 4 }));
        assert_eq!(r.get(&6), None, "between hunks");
        assert_eq!(r.get(&21), Some(&RightLine::Context { old_line: 20 }));
        assert_eq!(r.get(&22), Some(&RightLine::Added));
        assert_eq!(r.get(&23), Some(&RightLine::Context { old_line: 21 }));
        assert_eq!(r.len(), 8);
    }

    #[test]
    fn headers_are_skipped_and_a_new_file_is_all_added() {
        let r = right_lines("--- /dev/null\n+++ b/x.rs\n@@ -0,0 +1,2 @@\n+a\n+b\n");
        assert_eq!(r.len(), 2);
        assert!(r.values().all(|l| *l == RightLine::Added));
        assert!(right_lines("Binary files differ").is_empty());
        assert!(right_lines("").is_empty());
    }
}
