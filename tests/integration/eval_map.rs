//! `arev eval map`: the context map's fix-site recall on a mined history with a known
//! answer — the fix changes the defect's file, its caller (which the map of the change that
//! introduced the defect names) and an unrelated file (which it does not): 1 of 2, 50 %.

use crate::harness::TestRepo;

fn head(repo: &TestRepo) -> String {
    repo.git(&["rev-parse", "HEAD"]).trim().to_string()
}

#[test]
fn fix_site_recall_on_a_fixture_history() {
    let repo = TestRepo::new();
    repo.write(
        "src/parse.rs",
        "pub fn parse_header(s: &str) -> u32 {\n    s.len() as u32\n}\n",
    )
    .write(
        "src/main.rs",
        "fn main() {\n    let n = parse_header(\"abc\");\n    println!(\"{n}\");\n}\n",
    )
    .write("src/other.rs", "pub fn unrelated() -> u32 {\n    7\n}\n")
    .write(
        "tests/parse_test.rs",
        "#[test]\nfn header() {\n    assert_eq!(parse_header(\"ab\"), 2);\n}\n",
    )
    .commit("add the header parser");
    // The change that introduces the defect: the length is off by one and scaled.
    repo.write(
        "src/parse.rs",
        "pub fn parse_header(s: &str) -> u32 {\n    let n = s.len() as u32 + 1;\n    n * 2\n}\n",
    )
    .commit("parse_header counts the terminator");
    let introducing = head(&repo);
    repo.write(
        "src/parse.rs",
        "pub fn parse_header(s: &str) -> u32 {\n    let n = s.len() as u32;\n    n * 3\n}\n",
    )
    .write(
        "src/main.rs",
        "fn main() {\n    let n = parse_header(\"abc\") / 3;\n    println!(\"{n}\");\n}\n",
    )
    .write("src/other.rs", "pub fn unrelated() -> u32 {\n    8\n}\n")
    .commit("Fix off-by-one in parse_header");
    let cases = repo.scratch.join("cases");
    let mined = repo
        .arev()
        .args(&["eval", "mine", "--out", cases.to_str().unwrap()])
        .run();
    mined.assert_code(0);
    let map = repo
        .arev()
        .args(&["eval", "map", cases.to_str().unwrap()])
        .run();
    map.assert_code(0);
    let out = &map.stdout;
    let line = out
        .lines()
        .find(|l| l.starts_with("fix-"))
        .unwrap_or_else(|| panic!("no case line: {out}"));
    let cols: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(cols[1], &introducing[..12], "{out}");
    assert_eq!(&cols[2..6], ["2", "1", "0.50", "src/parse.rs"], "{out}");
    assert!(
        out.contains("fix-site recall: 50.0 % (1 of 2 other fixed files named, 1 of 1 cases with other files)"),
        "{out}"
    );
}
