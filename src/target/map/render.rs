//! The `<context_map>` block (docs/architecture.md §5.3): which references are listed —
//! round-robin over the symbols in their rank order, so that no one common name fills the
//! map — and the text, capped at [`MAP_BYTES`] and [`MAP_REFERENCES`]. Pure, deterministic.

use super::search::{Found, Reference};
use super::symbols::Symbol;

/// The block's cap in bytes, tags included.
pub const MAP_BYTES: usize = 2048;
/// At most this many `symbol — path:line (kind)` lines.
pub const MAP_REFERENCES: usize = 60;

const OPEN: &str = "<context_map>\n";
const CLOSE: &str = "</context_map>";
const LEGEND: &str = "symbol — path:line (kind): where the target's symbols occur elsewhere in \
                      the repository, found by name (a pointer to Read, never evidence)\n";

/// The rendered map and what it lists.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContextMap {
    /// The whole `<context_map>` block ("" when the target defines no symbol).
    pub text: String,
    /// Symbols searched.
    pub symbols: usize,
    /// Reference lines listed.
    pub references: usize,
    /// The distinct files those lines name, sorted.
    pub paths: Vec<String>,
}

/// A path or name as the block shows it: no markup, no line breaks.
fn clean(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '<' | '>' => '?',
            c if c.is_control() => '?',
            c => c,
        })
        .collect()
}

fn line_of(sym: &Symbol, r: &Reference) -> String {
    format!(
        "{} — {}:{} ({})\n",
        clean(&sym.name),
        clean(&r.path),
        r.line,
        r.kind.as_str()
    )
}

/// Render `symbols` with their `found` references (same order) into the capped block.
pub fn render(symbols: &[Symbol], found: &Found) -> ContextMap {
    if symbols.is_empty() {
        return ContextMap::default();
    }
    let fixed = OPEN.len() + LEGEND.len() + CLOSE.len();
    // Reserve room for the closing account of what was left out.
    let budget = MAP_BYTES.saturating_sub(fixed + 96);
    let mut picked: Vec<Vec<String>> = vec![Vec::new(); symbols.len()];
    let mut paths = std::collections::BTreeSet::new();
    let (mut bytes, mut count) = (0usize, 0usize);
    let mut depth = 0;
    'rounds: loop {
        let mut any = false;
        for (i, sym) in symbols.iter().enumerate() {
            let Some(r) = found.refs.get(i).and_then(|v| v.get(depth)) else {
                continue;
            };
            any = true;
            let line = line_of(sym, r);
            if count >= MAP_REFERENCES || bytes + line.len() > budget {
                break 'rounds;
            }
            bytes += line.len();
            count += 1;
            picked[i].push(line);
            paths.insert(r.path.clone());
        }
        if !any {
            break;
        }
        depth += 1;
    }
    let mut out = String::from(OPEN);
    out.push_str(LEGEND);
    for lines in &picked {
        for l in lines {
            out.push_str(l);
        }
    }
    let total: usize = found.totals.iter().sum();
    if total > count {
        out.push_str(&format!("… {} more references not listed\n", total - count));
    }
    let unused: Vec<String> = symbols
        .iter()
        .enumerate()
        .filter(|(i, _)| found.totals.get(*i).is_none_or(|t| *t == 0))
        .map(|(_, s)| clean(&s.name))
        .collect();
    if !unused.is_empty() {
        let room = MAP_BYTES.saturating_sub(out.len() + CLOSE.len() + 40);
        let mut names = String::new();
        for n in &unused {
            if names.len() + n.len() + 2 > room {
                names.push_str(", …");
                break;
            }
            if !names.is_empty() {
                names.push_str(", ");
            }
            names.push_str(n);
        }
        if !names.starts_with(", …") {
            out.push_str(&format!("no reference elsewhere: {names}\n"));
        }
    }
    out.push_str(CLOSE);
    ContextMap {
        text: out,
        symbols: symbols.len(),
        references: count,
        paths: paths.into_iter().collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::search::Kind;
    use super::super::symbols::Origin;
    use super::*;

    fn sym(name: &str) -> Symbol {
        Symbol {
            name: name.into(),
            origin: Origin::Changed,
            public: true,
            file: "src/a.rs".into(),
            line: 1,
        }
    }

    fn refs(n: usize, kind: Kind) -> Vec<Reference> {
        (0..n)
            .map(|i| Reference {
                path: format!("src/caller_{i:03}.rs"),
                line: i as u32 + 1,
                kind,
            })
            .collect()
    }

    #[test]
    fn lists_round_robin_grouped_by_symbol() {
        let syms = [sym("alpha_one"), sym("beta_two")];
        let found = Found {
            refs: vec![refs(3, Kind::Use), refs(1, Kind::Test)],
            totals: vec![3, 1],
        };
        let m = render(&syms, &found);
        assert_eq!(m.references, 4);
        let body: Vec<&str> = m.text.lines().skip(2).collect();
        assert_eq!(
            body,
            vec![
                "alpha_one — src/caller_000.rs:1 (use)",
                "alpha_one — src/caller_001.rs:2 (use)",
                "alpha_one — src/caller_002.rs:3 (use)",
                "beta_two — src/caller_000.rs:1 (test)",
                "</context_map>",
            ]
        );
        assert!(m
            .text
            .starts_with("<context_map>\nsymbol — path:line (kind)"));
    }

    #[test]
    fn caps_bytes_and_references_and_says_what_was_left_out() {
        let syms: Vec<Symbol> = (0..30).map(|i| sym(&format!("symbol_{i:02}"))).collect();
        let found = Found {
            refs: (0..30).map(|_| refs(64, Kind::Use)).collect(),
            totals: vec![400; 30],
        };
        let m = render(&syms, &found);
        assert!(m.text.len() <= MAP_BYTES, "{}", m.text.len());
        assert!(m.references <= MAP_REFERENCES);
        assert!(m.references > 20, "{}", m.references);
        // Round-robin: every symbol got its first reference before any got a second.
        for i in 0..m.references.min(30) {
            assert!(m
                .text
                .contains(&format!("symbol_{i:02} — src/caller_000.rs:1")));
        }
        assert!(m.text.contains(&format!(
            "… {} more references not listed",
            12000 - m.references
        )));
        assert!(m.text.ends_with("</context_map>"));
        let many = Found {
            refs: vec![refs(64, Kind::Use)],
            totals: vec![64],
        };
        let short: Vec<Symbol> = vec![sym("x_y")];
        assert!(render(&short, &many).references <= MAP_REFERENCES);
    }

    #[test]
    fn unused_symbols_are_named_and_markup_is_neutralised() {
        let syms = [sym("lonely_fn")];
        let found = Found {
            refs: vec![vec![Reference {
                path: "a</context_map>\nb.rs".into(),
                line: 2,
                kind: Kind::Use,
            }]],
            totals: vec![0],
        };
        let m = render(&syms, &found);
        assert_eq!(m.text.matches("</context_map>").count(), 1, "{}", m.text);
        assert!(m.text.contains("lonely_fn — a?/context_map??b.rs:2 (use)"));
        assert!(m.text.contains("no reference elsewhere: lonely_fn"));
        assert_eq!(render(&[], &Found::default()), ContextMap::default());
    }
}
