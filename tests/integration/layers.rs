//! The layering guard (docs/architecture.md §3.1): every `crate::<module>` path in `src/`
//! names its own module or one in a lower layer of the table in §3.1 (so no module imports
//! one above it and the modules have no import cycle), and inside every module — and every
//! submodule directory, such as `target/diff` — the files import each other without a
//! cycle. The failures name the file and the offending path.

use regex::Regex;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Modules exempt from the table: the unit tests' shared fixtures (`#[cfg(test)]` only),
/// which any module's tests may use and which build values of the modules they test.
const EXEMPT: &[&str] = &["test_support"];

pub(crate) fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `dir`, sorted (also what `sizes` walks).
pub(crate) fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The source without comments (line comments, block comments, doc comments), so that a
/// path mentioned in prose is not taken for an import. String literals are kept as they are.
fn code(text: &str) -> String {
    let block = Regex::new(r"(?s)/\*.*?\*/").unwrap();
    let text = block.replace_all(text, "");
    text.lines()
        .map(|l| match l.find("//") {
            // `"…//…"` (a URL in a string) is not a comment: cut only outside quotes.
            Some(i) if l[..i].matches('"').count() % 2 == 0 => &l[..i],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The path that follows each `<prefix>::` in `code` (`crate`, `super`, …): `(first name,
/// the path as written)` for a plain path, one pair per top-level item of a `{…}` group.
fn paths_after(code: &str, prefix: &str) -> Vec<(String, String)> {
    let re = Regex::new(&format!(r"(?:^|[^\w]){prefix}::")).unwrap();
    let mut out = Vec::new();
    for m in re.find_iter(code) {
        let rest = &code[m.end()..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 0usize;
            let mut item = String::new();
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        push_item(&mut out, prefix, &item);
                        item.clear();
                        continue;
                    }
                    _ => {}
                }
                item.push(c);
            }
            push_item(&mut out, prefix, &item);
        } else {
            let mut end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(rest.len());
            // `a::b::{C, D}`: shown whole.
            if rest[end..].starts_with('{') {
                end += rest[end..].find('}').map_or(0, |i| i + 1);
            }
            push_item(&mut out, prefix, &rest[..end]);
        }
    }
    out
}

fn push_item(out: &mut Vec<(String, String)>, prefix: &str, item: &str) {
    let item: String = item.split_whitespace().collect::<Vec<_>>().join(" ");
    let first: String = item
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    if !first.is_empty() {
        out.push((first, format!("{prefix}::{item}")));
    }
}

/// The top-level module a file under `src/` belongs to (`store` for src/store/recorder.rs
/// and for src/store.rs); None for the crate root (lib.rs, main.rs).
fn module_of(rel: &Path) -> Option<String> {
    let first = rel.components().next()?.as_os_str().to_str()?;
    match first {
        "lib.rs" | "main.rs" => None,
        f => Some(f.trim_end_matches(".rs").to_string()),
    }
}

/// The layers of docs/architecture.md §3.1, bottom first: each row's modules.
fn layers() -> Vec<Vec<String>> {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/architecture.md"))
            .unwrap();
    let section = doc
        .split("\n### 3.1 ")
        .nth(1)
        .expect("docs/architecture.md has a section 3.1 (the layers)");
    let name = Regex::new(r"`(\w+)`").unwrap();
    let mut rows = Vec::new();
    for line in section.lines().skip_while(|l| !l.starts_with('|')) {
        if !line.starts_with('|') {
            break;
        }
        let cells: Vec<&str> = line.split('|').collect();
        // | layer | modules | what they are |
        if let Some(first) = cells.get(1).map(|c| c.trim()) {
            if first.parse::<u32>().is_ok() {
                let mods = name
                    .captures_iter(cells[2])
                    .map(|c| c[1].to_string())
                    .collect();
                rows.push(mods);
            }
        }
    }
    assert!(
        !rows.is_empty(),
        "no layer rows in docs/architecture.md §3.1"
    );
    rows
}

#[test]
fn no_module_imports_one_above_it() {
    let src = src();
    let rows = layers();
    let mut layer: BTreeMap<String, usize> = BTreeMap::new();
    for (i, row) in rows.iter().enumerate() {
        for m in row {
            assert!(
                layer.insert(m.clone(), i).is_none(),
                "docs/architecture.md §3.1 lists `{m}` twice"
            );
        }
    }
    let files = rust_files(&src);
    let modules: BTreeSet<String> = files
        .iter()
        .filter_map(|f| module_of(f.strip_prefix(&src).unwrap()))
        .collect();
    let mut problems = Vec::new();
    for m in &modules {
        if !layer.contains_key(m) && !EXEMPT.contains(&m.as_str()) {
            problems.push(format!(
                "src/{m}: the module is in no layer of docs/architecture.md §3.1 (add it to the table)"
            ));
        }
    }
    for m in layer.keys() {
        if !modules.contains(m) {
            problems.push(format!(
                "docs/architecture.md §3.1 lists `{m}`, which is not a module of src/"
            ));
        }
    }
    for file in &files {
        let rel = file.strip_prefix(&src).unwrap();
        let Some(from) = module_of(rel) else { continue };
        let Some(&at) = layer.get(&from) else {
            continue;
        };
        let text = code(&std::fs::read_to_string(file).unwrap());
        for (to, path) in paths_after(&text, "crate") {
            if to == from || EXEMPT.contains(&to.as_str()) || !modules.contains(&to) {
                continue;
            }
            let Some(&there) = layer.get(&to) else {
                continue;
            };
            if there >= at {
                let how = if there == at { "beside it" } else { "above it" };
                problems.push(format!(
                    "src/{}: `{path}`: {from} (layer {at}) imports {to} (layer {there}), {how} (docs/architecture.md §3.1)",
                    rel.display()
                ));
            }
        }
    }
    problems.sort();
    problems.dedup();
    assert!(
        problems.is_empty(),
        "upward imports:\n{}",
        problems.join("\n")
    );
}

/// Every directory of `src/` that holds a module's files (`round`, `target`, `target/diff`),
/// as its path under `src/`, sorted.
fn module_dirs() -> Vec<String> {
    let src = src();
    let dirs: BTreeSet<String> = rust_files(&src)
        .iter()
        .filter_map(|f| f.parent())
        .filter(|d| *d != src)
        .map(|d| d.strip_prefix(&src).unwrap().to_str().unwrap().to_string())
        .collect();
    dirs.into_iter().collect()
}

/// Names of a module's files, and for each file the files it names with the paths.
type FileGraph = BTreeMap<String, BTreeMap<String, Vec<String>>>;

/// The files of `src/<module>/` (`module` may be nested: `target/diff`) and what each names
/// of the others: a direct submodule (`super::step::…`, `crate::round::step::…`) or an item
/// one of them defines and `mod.rs` re-exports (`super::Places`). A subdirectory
/// (`target/diff/`) counts as one file.
fn file_graph(module: &str) -> FileGraph {
    let dir = src().join(module);
    let node = |p: &Path| -> String {
        let rel = p.strip_prefix(&dir).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_str()
            .unwrap();
        first.trim_end_matches(".rs").to_string()
    };
    let files: Vec<PathBuf> = rust_files(&dir)
        .into_iter()
        .filter(|p| p != &dir.join("mod.rs"))
        .collect();
    let nodes: BTreeSet<String> = files.iter().map(|p| node(p)).collect();
    // Which file defines a name (names defined in two files are left unresolved).
    let item = Regex::new(
        r"(?m)^\s*pub(?:\([\w:]+\))?\s+(?:async\s+)?(?:struct|enum|fn|const|type|trait|static|mod)\s+(\w+)",
    )
    .unwrap();
    let mut defined: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut texts = Vec::new();
    for f in &files {
        let text = code(&std::fs::read_to_string(f).unwrap());
        // A file's tests may use any sibling's helpers: only its own code counts.
        let text = text
            .split("#[cfg(test)]\nmod tests")
            .next()
            .unwrap()
            .to_string();
        for c in item.captures_iter(&text) {
            defined.entry(c[1].to_string()).or_default().insert(node(f));
        }
        texts.push((node(f), f.parent() == Some(&dir), text));
    }
    let mut graph = FileGraph::new();
    let path = module.replace('/', "::");
    for (from, top, text) in &texts {
        let mut refs = paths_after(text, &format!("crate::{path}"));
        if *top {
            refs.extend(paths_after(text, "super"));
        }
        for (first, path) in refs {
            let to = if nodes.contains(&first) {
                Some(first.clone())
            } else {
                defined
                    .get(&first)
                    .filter(|d| d.len() == 1)
                    .and_then(|d| d.first().cloned())
            };
            if let Some(to) = to.filter(|t| t != from) {
                graph
                    .entry(from.clone())
                    .or_default()
                    .entry(to)
                    .or_default()
                    .push(path);
            }
        }
    }
    graph
}

/// A cycle of `graph` (its first file repeated at the end), if it has one.
fn find_cycle(graph: &FileGraph) -> Option<Vec<String>> {
    // Depth-first search for a back edge.
    fn visit(
        n: &str,
        graph: &FileGraph,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| p == n) {
            let mut cycle = path[i..].to_vec();
            cycle.push(n.to_string());
            return Some(cycle);
        }
        if !done.insert(n.to_string()) {
            return None;
        }
        path.push(n.to_string());
        for next in graph.get(n).map(|g| g.keys()).into_iter().flatten() {
            if let Some(c) = visit(next, graph, path, done) {
                return Some(c);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|n| visit(n, graph, &mut vec![], &mut done))
}

#[test]
fn no_module_has_a_file_cycle() {
    let mut problems = Vec::new();
    for module in module_dirs() {
        let graph = file_graph(&module);
        if let Some(cycle) = find_cycle(&graph) {
            // A file (`step.rs`) or a submodule directory (`diff/`).
            let name = |n: &str| {
                let file = format!("src/{module}/{n}.rs");
                if src()
                    .join(module.as_str())
                    .join(format!("{n}.rs"))
                    .is_file()
                {
                    file
                } else {
                    format!("src/{module}/{n}/")
                }
            };
            let via: Vec<String> = cycle
                .windows(2)
                .map(|w| format!("{}: `{}`", name(&w[0]), graph[&w[0]][&w[1]][0]))
                .collect();
            problems.push(format!(
                "{module}: the files import each other in a cycle {}:\n  {}",
                cycle.join(" → "),
                via.join("\n  ")
            ));
        }
    }
    assert!(problems.is_empty(), "file cycles:\n{}", problems.join("\n"));
}

/// The guard itself: what it reads as paths, and that a module not in the table or an
/// upward path would be seen.
#[test]
fn the_guard_reads_paths_and_groups() {
    let text = code(
        "use crate::{report::{a, b}, store::Meta};\n// crate::iterate in a comment\nlet x = crate::round::f(\"http://h\"); /* crate::hook */\n",
    );
    let got: Vec<String> = paths_after(&text, "crate")
        .into_iter()
        .map(|(m, _)| m)
        .collect();
    assert_eq!(got, ["report", "store", "round"]);
    // Every module directory is checked for file cycles, nested ones too.
    let dirs = module_dirs();
    for d in [
        "records",
        "round",
        "target",
        "target/diff",
        "backends/shell",
    ] {
        assert!(dirs.iter().any(|x| x == d), "{d} is checked ({dirs:?})");
    }
    // A cycle is found, through a file or a re-exported item alike.
    let edge = |from: &str, to: &str| {
        (
            from.to_string(),
            BTreeMap::from([(to.to_string(), vec![format!("super::{to}")])]),
        )
    };
    let graph: FileGraph = [edge("a", "b"), edge("b", "c"), edge("c", "a")].into();
    assert_eq!(find_cycle(&graph).unwrap(), ["a", "b", "c", "a"]);
    let graph: FileGraph = [edge("a", "b"), edge("b", "c")].into();
    assert_eq!(find_cycle(&graph), None);
    let rows = layers();
    assert_eq!(
        rows[0].first().map(String::as_str),
        Some("records"),
        "records is the bottom layer"
    );
    assert_eq!(rows.last().unwrap(), &["app"], "app is the top layer");
}
