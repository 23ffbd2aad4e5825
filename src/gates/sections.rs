//! Spec sections (docs/architecture.md §19.5): the headings of a spec document, and the
//! membership check of the section paths spec-track findings and rulings name as their
//! `file` (`## Metrics / ### tokens_saved`). A section path is real only when every one of
//! its headings exists in the document (outside fenced code blocks); it is then rewritten
//! to its canonical form, the heading chain as the document spells it, and carries the
//! line of its innermost heading.

/// One ATX heading (`## Design`) of the document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Heading {
    /// 1-based line number.
    pub line: u32,
    /// 1..=6 (`#` .. `######`).
    pub level: u8,
    /// The heading as written, markers included, trimmed (`## Design`).
    pub raw: String,
    /// The text only, normalised for comparison (markers, closing `#`s and case dropped,
    /// whitespace collapsed).
    key: String,
}

/// The headings of one spec document.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outline {
    headings: Vec<Heading>,
    lines: u32,
}

/// A section a finding names, resolved against the document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// The canonical section path: the headings from the outermost `##` (or the `#` title
    /// for text directly under it) down to the innermost, joined by ` / `.
    pub path: String,
    /// The line of the innermost heading.
    pub line: u32,
}

/// Heading text as compared: without leading/closing `#` markers, whitespace collapsed,
/// lower-cased.
fn key(text: &str) -> String {
    let t = text.trim().trim_start_matches('#').trim();
    // A closing sequence (`## Design ##`) is not part of the text.
    let t = t.trim_end_matches('#').trim_end();
    t.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// `(level, trimmed line)` when `line` is an ATX heading (up to 3 spaces of indent, 1–6
/// `#`, then a space or the end).
fn atx(line: &str) -> Option<(u8, &str)> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let t = line.trim();
    let hashes = t.len() - t.trim_start_matches('#').len();
    if !(1..=6).contains(&hashes) {
        return None;
    }
    let rest = &t[hashes..];
    (rest.is_empty() || rest.starts_with([' ', '\t'])).then_some((hashes as u8, t))
}

impl Outline {
    /// Parse the headings of `text`, skipping fenced code blocks (```` ``` ```` / `~~~`).
    pub fn parse(text: &str) -> Self {
        let mut headings = vec![];
        let mut fence: Option<(char, usize)> = None;
        let mut lines = 0u32;
        for (i, line) in text.lines().enumerate() {
            lines = i as u32 + 1;
            let t = line.trim_start();
            let run = |c: char| t.len() - t.trim_start_matches(c).len();
            match fence {
                Some((c, n)) => {
                    if run(c) >= n && t.trim_start_matches(c).trim().is_empty() {
                        fence = None;
                    }
                    continue;
                }
                None => {
                    for c in ['`', '~'] {
                        if run(c) >= 3 {
                            fence = Some((c, run(c)));
                        }
                    }
                    if fence.is_some() {
                        continue;
                    }
                }
            }
            if let Some((level, raw)) = atx(line) {
                let k = key(raw);
                if !k.is_empty() {
                    headings.push(Heading {
                        line: lines,
                        level,
                        raw: raw.trim_end_matches('#').trim_end().to_string(),
                        key: k,
                    });
                }
            }
        }
        Self { headings, lines }
    }

    pub fn headings(&self) -> &[Heading] {
        &self.headings
    }

    /// The enclosing headings of heading `i` (outermost first), itself last.
    fn chain(&self, i: usize) -> Vec<usize> {
        let mut out = vec![i];
        let mut level = self.headings[i].level;
        for j in (0..i).rev() {
            if self.headings[j].level < level {
                out.push(j);
                level = self.headings[j].level;
            }
        }
        out.reverse();
        out
    }

    /// The last line of heading `i`'s section (before the next heading of its level or
    /// higher, else the document's end).
    fn end(&self, i: usize) -> u32 {
        let level = self.headings[i].level;
        self.headings[i + 1..]
            .iter()
            .find(|h| h.level <= level)
            .map_or(self.lines, |h| h.line.saturating_sub(1))
    }

    fn canonical(&self, i: usize) -> String {
        let chain = self.chain(i);
        // From the outermost `##`: the `#` title only for text directly under it.
        let from = chain
            .iter()
            .position(|&j| self.headings[j].level > 1)
            .unwrap_or(chain.len() - 1);
        chain[from..]
            .iter()
            .map(|&j| self.headings[j].raw.as_str())
            .collect::<Vec<_>>()
            .join(" / ")
    }

    /// Resolve the section path `path` (components joined by ` / `), preferring, among
    /// headings of the innermost component's name, the one under the named outer headings
    /// and then the one whose section holds `line`. None when a component names no heading
    /// of the document (an invented section).
    pub fn resolve(&self, path: &str, line: Option<u32>) -> Option<Section> {
        let parts: Vec<String> = path
            .split(" / ")
            .map(key)
            .filter(|k| !k.is_empty())
            .collect();
        let (last, outer) = parts.split_last()?;
        if !parts
            .iter()
            .all(|p| self.headings.iter().any(|h| &h.key == p))
        {
            return None;
        }
        let candidates: Vec<usize> = (0..self.headings.len())
            .filter(|&i| &self.headings[i].key == last)
            .collect();
        let under_outer = |i: usize| {
            let chain: Vec<&str> = self
                .chain(i)
                .iter()
                .map(|&j| self.headings[j].key.as_str())
                .collect();
            // Every outer component is an ancestor, in order.
            let mut it = chain.iter();
            outer.iter().all(|o| it.any(|c| c == o))
        };
        let holds = |i: usize| line.is_some_and(|l| self.headings[i].line <= l && l <= self.end(i));
        let pick = candidates
            .iter()
            .copied()
            .max_by_key(|&i| (under_outer(i), holds(i), std::cmp::Reverse(i)))?;
        Some(Section {
            path: self.canonical(pick),
            line: self.headings[pick].line,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "# Cache\n\nIntro.\n\n## Design\n\nText.\n\n### Eviction ###\n\nLRU.\n\n```md\n## Not A Heading\n```\n\n## Rollout\n\n### Eviction\n\nLater.\n";

    #[test]
    fn headings_outside_fences_with_their_lines() {
        let o = Outline::parse(DOC);
        let got: Vec<(u32, &str)> = o
            .headings()
            .iter()
            .map(|h| (h.line, h.raw.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                (1, "# Cache"),
                (5, "## Design"),
                (9, "### Eviction"),
                (17, "## Rollout"),
                (19, "### Eviction")
            ]
        );
    }

    #[test]
    fn sections_resolve_to_their_canonical_path_and_heading_line() {
        let o = Outline::parse(DOC);
        let s = o.resolve("# Cache / ## Design", Some(7)).unwrap();
        assert_eq!(
            s,
            Section {
                path: "## Design".into(),
                line: 5
            }
        );
        // Case, spacing and markers are forgiven; the outer heading picks the duplicate.
        let s = o.resolve("## rollout /   ### EVICTION", None).unwrap();
        assert_eq!(
            s,
            Section {
                path: "## Rollout / ### Eviction".into(),
                line: 19
            }
        );
        // Without an outer heading, the line decides.
        assert_eq!(o.resolve("### Eviction", Some(11)).unwrap().line, 9);
        assert_eq!(o.resolve("### Eviction", Some(21)).unwrap().line, 19);
        // Text directly under the title keeps the title.
        assert_eq!(o.resolve("# Cache", None).unwrap().path, "# Cache");
    }

    #[test]
    fn invented_or_fenced_headings_are_not_sections() {
        let o = Outline::parse(DOC);
        assert!(o.resolve("## Totally Invented Section", Some(3)).is_none());
        assert!(o.resolve("## Design / ### Invented", Some(7)).is_none());
        assert!(o.resolve("## Not A Heading", None).is_none());
        assert!(o.resolve("", None).is_none());
    }
}
