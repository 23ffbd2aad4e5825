//! Suppressions (docs/architecture.md §20): which findings a person already decided about,
//! and why. Reasons are mandatory.
//!
//! - **In source**: a comment on the flagged line or the line above holding
//!   `arev-ignore[<category>]: <reason>` (the category compared trimmed and case-blind), or
//!   `arev-ignore: <reason>` for any category. A marker without a reason is not applied and
//!   is reported as a warning naming its place.
//! - **External**: `.arev/suppressions.toml` entries `{fingerprint, reason, expires?}`, parsed
//!   and checked by `resolve` (an entry without a reason is a usage error there); here only
//!   the entries that apply today.
//!
//! - **Whose markers count**: in-source markers are part of the code under review, so with
//!   `--repo-config base` (an untrusted change) a marker is honoured only where the trusted
//!   tree has that marker for the same code: the marker's line is one the change left
//!   unchanged (mapped through the diff to the same line of the trusted copy), never
//!   because the same text appears elsewhere in the trusted file (a change cannot copy an
//!   existing marker above its own code); with `ignore` none is; a marker not honoured is a
//!   warning naming its place ([`InSource`]).
//!
//! Matching is pure: the caller hands over the flagged file's lines.

use crate::records::{Suppression, SuppressionKind};
use std::collections::{BTreeMap, BTreeSet};

/// A file's lines by index (0 is line 1), as the caller holds them.
pub trait LineAt {
    fn line_at(&self, index: usize) -> Option<&str>;
}

impl LineAt for [String] {
    fn line_at(&self, index: usize) -> Option<&str> {
        self.get(index).map(String::as_str)
    }
}

/// The marker an in-source suppression starts with.
pub const MARKER: &str = "arev-ignore";

/// One `arev-ignore` comment as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InlineMarker {
    /// `[category]`, trimmed and lower-cased; None = any category.
    pub category: Option<String>,
    /// The reason after `:`, trimmed (empty = none given).
    pub reason: String,
}

impl InlineMarker {
    fn applies_to(&self, category: &str) -> bool {
        self.category
            .as_deref()
            .is_none_or(|c| c == category.trim().to_ascii_lowercase())
    }
}

/// Comment closers stripped from the end of a reason (`*/`, `-->`, `#}`, `%>`).
const CLOSERS: [&str; 4] = ["*/", "-->", "#}", "%>"];

/// The `arev-ignore` marker on `line`, if any.
pub fn parse_marker(line: &str) -> Option<InlineMarker> {
    let at = line.find(MARKER)?;
    let mut rest = &line[at + MARKER.len()..];
    // `arev-ignored`, `arev-ignore-foo`: another word, not the marker.
    if rest
        .chars()
        .next()
        .is_some_and(|c| c.is_alphanumeric() || c == '-' || c == '_')
    {
        return None;
    }
    let mut category = None;
    if let Some(r) = rest.strip_prefix('[') {
        let end = r.find(']')?;
        category = Some(r[..end].trim().to_ascii_lowercase()).filter(|c| !c.is_empty());
        rest = &r[end + 1..];
    }
    let reason = match rest.trim_start().strip_prefix(':') {
        Some(r) => {
            let mut r = r.trim();
            while let Some(c) = CLOSERS.iter().find(|c| r.ends_with(*c)) {
                r = r[..r.len() - c.len()].trim_end();
            }
            r.to_string()
        }
        None => String::new(),
    };
    Some(InlineMarker { category, reason })
}

/// One entry of `.arev/suppressions.toml` that applies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExternalEntry {
    pub reason: String,
    /// `YYYY-MM-DD`, the last day it applies.
    pub expires: Option<String>,
    /// `.arev/suppressions.toml (entry 3)`.
    pub source: String,
}

/// Which in-source markers a run honours (decided by `--repo-config`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum InSource {
    /// Every marker (`worktree`: the tree under review is trusted).
    #[default]
    All,
    /// Only a marker on a line the change left as the trusted tree has it (`base`): the
    /// line maps through the diff to a marker line of the trusted copy; none at all with
    /// `ignore` (no trusted tree: `lines` is empty).
    Trusted {
        /// What the trusted tree is, for warnings: `the merge-base 1a2b3c4`.
        from: String,
        /// What decides `lines` besides the target (the commit id, `ignore`): part of the
        /// verdict-cache key.
        key: String,
        /// Repo-relative path → the 1-based lines of the reviewed copy that hold a marker
        /// the trusted copy has at the same place (unchanged lines only).
        lines: BTreeMap<String, BTreeSet<u32>>,
    },
}

impl InSource {
    fn honours(&self, file: &str, at: u32) -> bool {
        match self {
            Self::All => true,
            Self::Trusted { lines, .. } => lines.get(file).is_some_and(|l| l.contains(&at)),
        }
    }

    /// The 1-based lines of `new` holding a marker that `old` (the trusted copy) has at the
    /// same place: `unchanged` maps each line the change left alone (new → old, 1-based,
    /// from the diff of the two), and the old line must hold a marker.
    pub fn positional_markers(
        old: &str,
        new: &str,
        unchanged: &BTreeMap<u32, u32>,
    ) -> BTreeSet<u32> {
        let old_lines: Vec<&str> = old.lines().collect();
        new.lines()
            .enumerate()
            .filter(|(_, l)| parse_marker(l).is_some())
            .filter_map(|(i, l)| {
                let at = u32::try_from(i + 1).ok()?;
                let o = *unchanged.get(&at)?;
                let was = old_lines.get((o as usize).checked_sub(1)?)?;
                (*was == l && parse_marker(was).is_some()).then_some(at)
            })
            .collect()
    }
}

/// The suppressions of a run: external entries in force (by fingerprint) and whether
/// in-source markers are honoured.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SuppressionSet {
    pub external: BTreeMap<String, ExternalEntry>,
    /// Warnings about the suppressions file (expired entries), for the report.
    pub warnings: Vec<String>,
    /// sha256 of the file as read (empty without one): part of the verdict-cache key.
    pub file_sha256: String,
    /// Which in-source markers count.
    pub in_source: InSource,
}

/// What matching one finding found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Matched {
    pub suppression: Option<Suppression>,
    /// A reasonless marker that would have applied: `src/a.rs:3`.
    pub reasonless_at: Option<String>,
    /// A marker that would have applied but is not honoured ([`InSource`]): `src/a.rs:3`.
    pub untrusted_at: Option<String>,
}

impl SuppressionSet {
    /// The suppression that applies to a finding of `category` at `file:line` with
    /// `fingerprint`; `lines` are the flagged file's lines (None when unreadable). A marker
    /// on the flagged line wins over one on the line above, which wins over the file.
    pub fn matches<L: LineAt + ?Sized>(
        &self,
        file: Option<&str>,
        line: Option<u32>,
        category: &str,
        fingerprint: &str,
        lines: Option<&L>,
    ) -> Matched {
        let mut m = Matched::default();
        if let (Some(f), Some(l), Some(text)) = (file, line, lines) {
            for at in [l, l.saturating_sub(1)] {
                let Some(marker) = (at as usize)
                    .checked_sub(1)
                    .and_then(|i| text.line_at(i))
                    .and_then(parse_marker)
                else {
                    continue;
                };
                if !marker.applies_to(category) {
                    continue;
                }
                if marker.reason.is_empty() {
                    m.reasonless_at.get_or_insert_with(|| format!("{f}:{at}"));
                    continue;
                }
                if !self.in_source.honours(f, at) {
                    m.untrusted_at.get_or_insert_with(|| format!("{f}:{at}"));
                    continue;
                }
                m.suppression = Some(Suppression {
                    kind: SuppressionKind::InSource,
                    justification: marker.reason,
                    source: format!("{f}:{at}"),
                    expires: None,
                });
                return m;
            }
        }
        if let Some(e) = self.external.get(fingerprint) {
            m.suppression = Some(Suppression {
                kind: SuppressionKind::External,
                justification: e.reason.clone(),
                source: e.source.clone(),
                expires: e.expires.clone(),
            });
        }
        m
    }

    /// The entries in force as `fingerprint → reason` lines (part of the verdict-cache key:
    /// an entry added, removed or expired changes what a review says).
    pub fn digest_lines(&self) -> Vec<String> {
        let mut lines: Vec<String> = self
            .external
            .iter()
            .map(|(fp, e)| format!("{fp}\t{}\t{}", e.reason, e.expires.as_deref().unwrap_or("")))
            .collect();
        if let InSource::Trusted { key, .. } = &self.in_source {
            lines.push(format!("in-source markers trusted from\t{key}"));
        }
        lines
    }

    /// The warning for a marker at `place` that is not honoured.
    pub fn untrusted_warning(&self, place: &str) -> String {
        match &self.in_source {
            InSource::Trusted { from, .. } => format!(
                "{place}: `{MARKER}` is not applied: {from} does not have this marker at this place (an untrusted change cannot suppress findings about its own code; --repo-config)"
            ),
            InSource::All => format!("{place}: `{MARKER}` is not applied"),
        }
    }
}

/// The warning for a reasonless marker at `place`.
pub fn reasonless_warning(place: &str) -> String {
    format!(
        "{place}: `{MARKER}` without a reason is not applied (write `{MARKER}[<category>]: <reason>`)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_are_parsed_with_category_and_reason() {
        let m = |s: &str| parse_marker(s);
        assert_eq!(
            m("x.unwrap(); // arev-ignore[Error-Handling ]: input checked above"),
            Some(InlineMarker {
                category: Some("error-handling".into()),
                reason: "input checked above".into()
            })
        );
        assert_eq!(
            m("/* arev-ignore: generated code */"),
            Some(InlineMarker {
                category: None,
                reason: "generated code".into()
            })
        );
        assert_eq!(
            m("# arev-ignore[logic]").map(|x| x.reason),
            Some(String::new())
        );
        assert_eq!(
            m("// arev-ignore:   ").map(|x| x.reason),
            Some(String::new())
        );
        assert_eq!(
            m("<!-- arev-ignore: docs only -->").unwrap().reason,
            "docs only"
        );
        assert!(m("// arev-ignored: no").is_none());
        assert!(m("// arev-ignore-next: no").is_none());
        assert!(m("// arev-ignore[unclosed: x").is_none());
        assert!(m("plain code").is_none());
    }

    fn lines(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_flagged_line_or_the_one_above_suppresses_with_its_reason() {
        let set = SuppressionSet::default();
        let text = lines(&[
            "// arev-ignore[logic]: checked by the caller",
            "a();",
            "b(); // arev-ignore: on purpose",
            "",
            "c(); // arev-ignore[style]",
        ]);
        let text = text.as_slice();
        let m = set.matches(Some("a.rs"), Some(2), "Logic", "fp", Some(text));
        let s = m.suppression.unwrap();
        assert_eq!(s.kind, SuppressionKind::InSource);
        assert_eq!(s.justification, "checked by the caller");
        assert_eq!(s.source, "a.rs:1");
        // Another category: the marker above does not apply.
        let m = set.matches(Some("a.rs"), Some(2), "security", "fp", Some(text));
        assert_eq!(m, Matched::default());
        // The flagged line's own marker wins.
        let m = set.matches(Some("a.rs"), Some(3), "x", "fp", Some(text));
        assert_eq!(m.suppression.unwrap().source, "a.rs:3");
        // A reasonless marker is not applied and says where it is.
        let m = set.matches(Some("a.rs"), Some(5), "style", "fp", Some(text));
        assert!(m.suppression.is_none());
        assert_eq!(m.reasonless_at.as_deref(), Some("a.rs:5"));
        assert!(reasonless_warning("a.rs:5").contains("not applied"));
        // Line 1 has no line above.
        let m = set.matches(Some("a.rs"), Some(1), "logic", "fp", Some(text));
        assert_eq!(m.suppression.unwrap().source, "a.rs:1");
    }

    #[test]
    fn external_entries_match_by_fingerprint() {
        let mut set = SuppressionSet::default();
        set.external.insert(
            "abc".into(),
            ExternalEntry {
                reason: "accepted risk".into(),
                expires: Some("2999-01-01".into()),
                source: ".arev/suppressions.toml (entry 1)".into(),
            },
        );
        let m = set.matches(None, None, "logic", "abc", None::<&[String]>);
        let s = m.suppression.unwrap();
        assert_eq!(s.kind, SuppressionKind::External);
        assert_eq!(s.expires.as_deref(), Some("2999-01-01"));
        assert!(set
            .matches(None, None, "logic", "abd", None::<&[String]>)
            .suppression
            .is_none());
        assert_eq!(set.digest_lines(), ["abc\taccepted risk\t2999-01-01"]);
    }

    #[test]
    fn an_untrusted_tree_cannot_suppress_its_own_lines() {
        let text = lines(&[
            "a(); // arev-ignore[style]: checked upstream",
            "b(); // arev-ignore: added by the change",
        ]);
        let text = text.as_slice();
        // The change left line 1 as the trusted copy has it, and added line 2.
        let unchanged = BTreeMap::from([(1, 1)]);
        let old = "a(); // arev-ignore[style]: checked upstream\nb();";
        let new = text.join("\n");
        let trusted = InSource::Trusted {
            from: "the merge-base 1a2b3c4".into(),
            key: "1a2b3c4d".into(),
            lines: BTreeMap::from([(
                "a.rs".to_string(),
                InSource::positional_markers(old, &new, &unchanged),
            )]),
        };
        let set = SuppressionSet {
            in_source: trusted,
            ..SuppressionSet::default()
        };
        let m = set.matches(Some("a.rs"), Some(1), "style", "fp", Some(text));
        assert_eq!(m.suppression.unwrap().source, "a.rs:1");
        let m = set.matches(Some("a.rs"), Some(2), "logic", "fp", Some(text));
        assert!(m.suppression.is_none());
        assert_eq!(m.untrusted_at.as_deref(), Some("a.rs:2"));
        assert!(set.untrusted_warning("a.rs:2").starts_with(
            "a.rs:2: `arev-ignore` is not applied: the merge-base 1a2b3c4 does not have this marker at this place"
        ));
        // Another file of the trusted tree does not vouch for this one.
        let m = set.matches(Some("b.rs"), Some(1), "style", "fp", Some(text));
        assert_eq!(m.untrusted_at.as_deref(), Some("b.rs:1"));
        // An external entry still applies beside an untrusted marker.
        let mut set = set;
        set.external.insert(
            "fp".into(),
            ExternalEntry {
                reason: "accepted".into(),
                expires: None,
                source: "s".into(),
            },
        );
        let m = set.matches(Some("a.rs"), Some(2), "logic", "fp", Some(text));
        assert_eq!(m.suppression.unwrap().kind, SuppressionKind::External);
        assert_eq!(
            set.digest_lines().last().unwrap(),
            "in-source markers trusted from\t1a2b3c4d"
        );
        // `ignore`: no trusted tree, no marker honoured.
        let none = SuppressionSet {
            in_source: InSource::Trusted {
                from: "--repo-config ignore".into(),
                key: "ignore".into(),
                lines: BTreeMap::new(),
            },
            ..SuppressionSet::default()
        };
        let m = none.matches(Some("a.rs"), Some(1), "style", "fp", Some(text));
        assert_eq!(m.untrusted_at.as_deref(), Some("a.rs:1"));
    }

    #[test]
    fn a_copy_of_a_trusted_marker_elsewhere_vouches_for_nothing() {
        // The trusted copy has the marker on line 1; the change copies that very line above
        // its own new code (new line 3) and leaves line 1 alone (1 → 1).
        let old = "// arev-ignore: vetted\nok();";
        let new = "// arev-ignore: vetted\nok();\n// arev-ignore: vetted\nbug();";
        let unchanged = BTreeMap::from([(1, 1), (2, 2)]);
        assert_eq!(
            InSource::positional_markers(old, new, &unchanged),
            BTreeSet::from([1])
        );
        // A marker line the change edited (its reason reworded) is not the trusted one.
        let edited = "// arev-ignore: anything goes\nok();";
        assert!(InSource::positional_markers(old, edited, &BTreeMap::from([(2, 2)])).is_empty());
    }
}
