//! The context map's search (docs/architecture.md §5.3): one word-bounded pass over every
//! file of the context scope for all the target's symbols at once, each hit classed as a
//! definition, a use or a test. Files are read through the caller's reader (the working
//! tree, or a commit's blobs in `arev eval`), in parallel; binary files are passed over.

use super::symbols::{definition, is_test_path};
use rayon::prelude::*;
use regex::bytes::Regex;
use std::collections::HashMap;

/// Hits kept per symbol and file (the rest are only counted).
const PER_FILE: usize = 3;
/// Hits kept per symbol over the whole scope, after ranking.
const PER_SYMBOL: usize = 64;
/// A file with a NUL in its first 8 KiB is binary.
const BINARY_PROBE: usize = 8192;

/// What a reference is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// A line that uses the symbol outside tests.
    Use,
    /// A line of a test file.
    Test,
    /// Another definition of the same name.
    Def,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Use => "use",
            Kind::Test => "test",
            Kind::Def => "def",
        }
    }
}

/// One place a symbol occurs in the scope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    pub path: String,
    pub line: u32,
    pub kind: Kind,
}

/// Every symbol's references, in the order of `symbols`, each list most relevant first
/// (uses, tests, definitions; nearer the symbol's own file first), with the number of hits
/// found in all (kept or not).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Found {
    pub refs: Vec<Vec<Reference>>,
    pub totals: Vec<usize>,
}

/// What [`search`] looks for: each symbol's name and the file the target defines it in.
pub struct Query<'a> {
    pub names: &'a [&'a str],
    pub homes: &'a [&'a str],
}

/// The reader of scope files and the target's own lines that are not "elsewhere".
pub struct Source<'a> {
    /// A scope file's bytes (None: unreadable or gone).
    pub read: &'a (dyn Fn(&str) -> Option<Vec<u8>> + Sync),
    /// Whether a hit at (path, line) is the target itself (a changed line, a file target).
    pub own: &'a (dyn Fn(&str, u32) -> bool + Sync),
}

/// Search `files` (sorted, repo-relative) for every name of `q`, word-bounded.
pub fn search(q: &Query<'_>, files: &[&str], src: &Source<'_>) -> Found {
    let n = q.names.len();
    let mut found = Found {
        refs: vec![Vec::new(); n],
        totals: vec![0; n],
    };
    let pattern = q
        .names
        .iter()
        .map(|s| regex::escape(s))
        .collect::<Vec<_>>()
        .join("|");
    let Ok(re) = Regex::new(&format!(r"(?-u:\b)(?:{pattern})(?-u:\b)")) else {
        return found;
    };
    if n == 0 {
        return found;
    }
    let index: HashMap<&[u8], usize> = q
        .names
        .iter()
        .enumerate()
        .map(|(i, s)| (s.as_bytes(), i))
        .collect();
    let per_file: Vec<Vec<(usize, Reference, usize)>> = files
        .par_iter()
        .map(|path| file_hits(path, &re, &index, q, src))
        .collect();
    for hits in per_file {
        for (sym, r, count) in hits {
            found.totals[sym] += count;
            found.refs[sym].push(r);
        }
    }
    for (sym, refs) in found.refs.iter_mut().enumerate() {
        let home = q.homes.get(sym).copied().unwrap_or("");
        refs.sort_by(|a, b| {
            (
                a.kind,
                std::cmp::Reverse(nearness(home, &a.path)),
                &a.path,
                a.line,
            )
                .cmp(&(
                    b.kind,
                    std::cmp::Reverse(nearness(home, &b.path)),
                    &b.path,
                    b.line,
                ))
        });
        refs.truncate(PER_SYMBOL);
    }
    found
}

/// The hits in one file: (symbol, reference, hits of that symbol this one stands for).
fn file_hits(
    path: &str,
    re: &Regex,
    index: &HashMap<&[u8], usize>,
    q: &Query<'_>,
    src: &Source<'_>,
) -> Vec<(usize, Reference, usize)> {
    let Some(bytes) = (src.read)(path) else {
        return Vec::new();
    };
    if bytes[..bytes.len().min(BINARY_PROBE)].contains(&0) {
        return Vec::new();
    }
    let test = is_test_path(path);
    let mut kept: Vec<(usize, Reference, usize)> = Vec::new();
    let mut per_symbol: HashMap<usize, usize> = HashMap::new();
    let (mut line, mut scanned) = (1u32, 0usize);
    let mut last_line = 0u32;
    let mut last_sym = usize::MAX;
    for m in re.find_iter(&bytes) {
        let Some(&sym) = index.get(m.as_bytes()) else {
            continue;
        };
        line += bytes[scanned..m.start()]
            .iter()
            .filter(|&&b| b == b'\n')
            .count() as u32;
        scanned = m.start();
        if (line, sym) == (last_line, last_sym) || (src.own)(path, line) {
            continue;
        }
        (last_line, last_sym) = (line, sym);
        let count = per_symbol.entry(sym).or_default();
        *count += 1;
        if *count > PER_FILE {
            if let Some(k) = kept.iter_mut().rev().find(|k| k.0 == sym) {
                k.2 += 1;
            }
            continue;
        }
        let kind = if test {
            Kind::Test
        } else if line_definition_is(&bytes, m.start(), q.names[sym]) {
            Kind::Def
        } else {
            Kind::Use
        };
        kept.push((
            sym,
            Reference {
                path: path.to_string(),
                line,
                kind,
            },
            1,
        ));
    }
    kept
}

/// Whether the line around byte `at` defines `name`.
fn line_definition_is(bytes: &[u8], at: usize, name: &str) -> bool {
    let start = bytes[..at]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let end = bytes[at..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(bytes.len(), |i| at + i);
    let text = String::from_utf8_lossy(&bytes[start..end]);
    definition(&text).is_some_and(|d| d.name == name)
}

/// How many leading directories `path` shares with `home`.
fn nearness(home: &str, path: &str) -> usize {
    let h: Vec<&str> = home.split('/').collect();
    let p: Vec<&str> = path.split('/').collect();
    h.iter()
        .take(h.len().saturating_sub(1))
        .zip(p.iter().take(p.len().saturating_sub(1)))
        .take_while(|(a, b)| a == b)
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn corpus() -> BTreeMap<&'static str, &'static str> {
        BTreeMap::from([
            (
                "src/ring.py",
                "class Ring:\n    def push_item(self, x):\n        pass\n",
            ),
            (
                "src/app.py",
                "from ring import Ring\n\nr = Ring()\nr.push_item(1)\nr.push_items(2)\n",
            ),
            (
                "tests/test_ring.py",
                "def test_push():\n    Ring().push_item(3)\n",
            ),
            ("lib/other.py", "def push_item(y):\n    return y\n"),
            ("img.bin", "push_item\0\0"),
        ])
    }

    fn run(names: &[&str], homes: &[&str], own: &(dyn Fn(&str, u32) -> bool + Sync)) -> Found {
        let c = corpus();
        let files: Vec<&str> = c.keys().copied().collect();
        let read = |p: &str| c.get(p).map(|t| t.as_bytes().to_vec());
        search(
            &Query { names, homes },
            &files,
            &Source { read: &read, own },
        )
    }

    #[test]
    fn word_bounded_hits_are_classed_and_ranked() {
        let own = |p: &str, l: u32| p == "src/ring.py" && l == 2;
        let f = run(&["push_item"], &["src/ring.py"], &own);
        let got: Vec<(String, u32, Kind)> = f.refs[0]
            .iter()
            .map(|r| (r.path.clone(), r.line, r.kind))
            .collect();
        assert_eq!(
            got,
            vec![
                ("src/app.py".into(), 4, Kind::Use),
                ("tests/test_ring.py".into(), 2, Kind::Test),
                ("lib/other.py".into(), 1, Kind::Def),
            ]
        );
        // `push_items` is another word; the binary file and the target's own line are not hits.
        assert_eq!(f.totals, vec![3]);
    }

    #[test]
    fn several_symbols_in_one_pass_and_a_cap_per_file() {
        let f = run(
            &["Ring", "push_item"],
            &["src/ring.py", "src/ring.py"],
            &|_, _| false,
        );
        let ring: Vec<(&str, u32)> = f.refs[0]
            .iter()
            .map(|r| (r.path.as_str(), r.line))
            .collect();
        assert_eq!(
            ring,
            vec![
                ("src/app.py", 1),
                ("src/app.py", 3),
                ("tests/test_ring.py", 2),
                ("src/ring.py", 1)
            ]
        );
        let many = "x = hot\n".repeat(50);
        let read = |_: &str| Some(many.as_bytes().to_vec());
        let f = search(
            &Query {
                names: &["hot"],
                homes: &["a"],
            },
            &["a.txt", "b.txt"],
            &Source {
                read: &read,
                own: &|_, _| false,
            },
        );
        assert_eq!(f.refs[0].len(), 2 * PER_FILE);
        assert_eq!(f.totals[0], 100);
    }

    #[test]
    fn no_names_no_hits() {
        let f = run(&[], &[], &|_, _| false);
        assert!(f.refs.is_empty());
    }
}
