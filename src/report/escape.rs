//! Making agent (and repository) text inert in the human renderings: in Markdown no HTML,
//! no link or image, no `@mention` that would ping, no copy of the `<!-- arev-report -->`
//! marker a CI job looks for, nothing that breaks out of a table cell; on a terminal (and in
//! a CI log) no control sequence and no line that a CI runner would read as a command.
//!
//! Markdown follows CommonMark/GFM inline rules: text inside a code span is shown literally
//! (only the marker and, in a table, `|` need care there); everywhere else `<`, `>`, `&`
//! become entities, inline syntax characters are backslash-escaped (invisible once
//! rendered) and a zero-width space follows every `@`.

/// The marker the Markdown report starts with (a PR bot finds its comment by it).
pub const REPORT_MARKER: &str = "<!-- arev-report -->";

/// Where Markdown text goes: a GFM table cell (where `|` splits cells even inside a code
/// span) or running text / a list item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MdContext {
    Table,
    Inline,
}

const ZWSP: char = '\u{200B}';

/// Control characters (newlines included) folded to spaces: one line of text.
fn one_line(s: &str) -> String {
    s.replace("\r\n", " ")
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// One character of normal (non-code) Markdown text, made inert.
fn push_inert(out: &mut String, c: char) {
    match c {
        '<' => out.push_str("&lt;"),
        '>' => out.push_str("&gt;"),
        '&' => out.push_str("&amp;"),
        '@' => {
            out.push('@');
            out.push(ZWSP);
        }
        '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '~' | '!' => {
            out.push('\\');
            out.push(c);
        }
        c => out.push(c),
    }
}

/// The content of a code span: shown literally, except that the marker is broken (a
/// zero-width space after `<!`) and, in a table, `|` is escaped.
fn code_content(s: &str, ctx: MdContext) -> String {
    let s = s.replace("<!--", "<!\u{200B}--");
    match ctx {
        MdContext::Table => s.replace('|', "\\|"),
        MdContext::Inline => s,
    }
}

/// Length of the run of backticks starting at `i`.
fn run_len(chars: &[char], i: usize) -> usize {
    chars[i..].iter().take_while(|c| **c == '`').count()
}

/// Start of the next backtick run of exactly `n` at or after `from` (a code span's end).
fn closing_run(chars: &[char], from: usize, n: usize) -> Option<usize> {
    let mut i = from;
    while i < chars.len() {
        if chars[i] == '`' {
            let len = run_len(chars, i);
            if len == n {
                return Some(i);
            }
            i += len;
        } else {
            i += 1;
        }
    }
    None
}

/// Whether `s` is printable ASCII holding none of `special`.
fn plain_ascii(s: &str, special: &[u8]) -> bool {
    s.bytes()
        .all(|b| (0x20..0x7f).contains(&b) && !special.contains(&b))
}

/// Whether `s` reads the same as inert one-line Markdown: printable ASCII without a
/// character [`md_text`] would change (most agent descriptions).
fn already_inert(s: &str) -> bool {
    plain_ascii(s, b"<>&@\\`*_[]|~!")
}

/// Agent text as one line of inert Markdown. Code spans the agent wrote stay code spans.
pub fn md_text(s: &str, ctx: MdContext) -> String {
    if already_inert(s) {
        return s.to_string();
    }
    escaped(s, ctx)
}

/// [`md_text`] for text that needs it.
fn escaped(s: &str, ctx: MdContext) -> String {
    let chars: Vec<char> = one_line(s).chars().collect();
    let mut out = String::with_capacity(chars.len() + 16);
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\\' && chars.get(i + 1).is_some_and(char::is_ascii_punctuation) {
            // The agent's own escape: the escaped character, made inert our way.
            push_inert(&mut out, chars[i + 1]);
            i += 2;
            continue;
        }
        if c == '`' {
            let n = run_len(&chars, i);
            if let Some(end) = closing_run(&chars, i + n, n) {
                let content: String = chars[i + n..end].iter().collect();
                let fence = "`".repeat(n);
                out.push_str(&fence);
                out.push_str(&code_content(&content, ctx));
                out.push_str(&fence);
                i = end + n;
            } else {
                for _ in 0..n {
                    out.push_str("\\`");
                }
                i += n;
            }
            continue;
        }
        push_inert(&mut out, c);
        i += 1;
    }
    out
}

/// `s` (a path, a target as typed) as one inert code span, fenced with more backticks than
/// it holds.
pub fn md_code(s: &str, ctx: MdContext) -> String {
    // Printable ASCII without a backtick, `<` or `|`: fenced as it is (most paths).
    if !s.is_empty() && plain_ascii(s, b"`<|") {
        return ["`", s, "`"].concat();
    }
    let s = one_line(s);
    let longest = s.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if s.starts_with('`') || s.ends_with('`') || s.is_empty() {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{}{pad}{fence}", code_content(&s, ctx))
}

/// `text` (a reproducer's output) as a fenced Markdown code block: the fence longer than
/// any backtick run inside, the report marker broken, and every control character but the
/// newline and the tab — ESC, BEL, BS, CR, DEL, the C1 controls — shown as `\u{..}`, as
/// the terminal report shows it (the JSON has `\u001b`): nothing a terminal or a viewer
/// of the raw Markdown acts on.
pub fn md_block(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    let mut body = String::with_capacity(text.len() + 8);
    for c in text.trim_end_matches('\n').chars() {
        if c.is_control() && c != '\n' && c != '\t' {
            body.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            body.push(c);
        }
    }
    let body = body.replace("<!--", "<!\u{200B}--");
    format!("{fence}text\n{body}\n{fence}")
}

/// A link to line `line` of the repository file `path`, its text the code span `path:line`:
/// the destination is the path relative to the repository root, every byte outside
/// `A-Za-z0-9-._~/` percent-encoded (so no scheme, no `)`, no space), with a `#L<line>`
/// fragment. A path that is not plain (absolute, empty, `.`/`..` or empty components, a
/// control character) gets the code span alone: never a link arev did not build itself.
pub fn md_line_link(path: &str, line: u32, ctx: MdContext) -> String {
    md_line_link_at(path, line, ctx, None)
}

/// [`md_line_link`] whose destination, with a `base`, is absolute: `<base><path>#L<line>`,
/// the path encoded the same way. `base` is a forge's view of the repository's files at a
/// commit (`https://github.com/o/r/blob/<sha>/`), built by arev from trusted settings and
/// ending with `/` (publish's `links`), never from agent or report text.
pub fn md_line_link_at(path: &str, line: u32, ctx: MdContext, base: Option<&str>) -> String {
    let text = md_code(&format!("{path}:{line}"), ctx);
    let plain = !path.is_empty()
        && !path.chars().any(char::is_control)
        && path
            .split('/')
            .all(|c| !c.is_empty() && c != "." && c != "..");
    if !plain {
        return text;
    }
    let dest = url_path(path);
    format!("[{text}]({}{dest}#L{line})", base.unwrap_or(""))
}

/// `s` with every byte outside `A-Za-z0-9-._~/` percent-encoded: a URL path whose segments
/// are `s`'s, with no scheme, query, fragment, space or parenthesis left in it.
pub fn url_path(s: &str) -> String {
    let mut dest = String::with_capacity(s.len() + 8);
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            dest.push(b as char);
        } else {
            dest.push_str(&format!("%{b:02X}"));
        }
    }
    dest
}

/// Agent text for the terminal report: control characters (escape sequences included)
/// shown as `\u{..}`, tabs as spaces, and each further line indented by `indent`; a line
/// that would start with `::` (a GitHub Actions workflow command, even after leading
/// spaces) gets a backslash before it.
pub fn term_text(s: &str, indent: &str) -> String {
    let s = s.replace("\r\n", "\n").replace('\t', " ");
    let mut out = String::with_capacity(s.len());
    for (k, line) in s.split(['\n', '\r']).enumerate() {
        if k > 0 {
            out.push('\n');
            out.push_str(indent);
        }
        // The one escaping helper (control characters, workflow commands).
        out.push_str(&crate::output::inert(line));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_passed_through_unchanged_is_what_escaping_would_give() {
        let mut samples: Vec<String> = (0x20u8..0x7f).map(|b| format!("a{}b", b as char)).collect();
        samples.extend(
            [
                "plain words, 42.",
                "fn f() -> u32 { 1 }",
                "x = y; // (z)",
                "",
            ]
            .map(String::from),
        );
        for s in &samples {
            for ctx in [MdContext::Table, MdContext::Inline] {
                if already_inert(s) {
                    assert_eq!(&escaped(s, ctx), s, "{s:?}");
                }
            }
        }
        assert!(already_inert("defect 1 in fn f()"));
        for s in ["src/a.rs:3", "a b", " lead", "x-y_z.rs", "#sec/tion"] {
            for ctx in [MdContext::Table, MdContext::Inline] {
                let one = one_line(s);
                let fence = "`";
                assert_eq!(
                    md_code(s, ctx),
                    format!("{fence}{}{fence}", code_content(&one, ctx)),
                    "{s:?}"
                );
            }
        }
        assert!(!already_inert("a@b") && !already_inert("é") && !already_inert("a\tb"));
    }

    #[test]
    fn html_mentions_and_the_marker_are_inert() {
        let t = md_text(
            "<img src=x onerror=alert(1)> @octocat & @org/team <!-- arev-report -->",
            MdContext::Inline,
        );
        assert!(!t.contains('<') && !t.contains('>'), "{t}");
        assert!(t.contains("&lt;img"), "{t}");
        assert!(
            t.contains("@\u{200B}octocat") && t.contains("@\u{200B}org/team"),
            "{t}"
        );
        assert!(t.contains("&amp;"), "{t}");
        assert!(!t.contains(REPORT_MARKER), "{t}");
        // Inside a code span the text stays literal, but the marker is still broken.
        let c = md_text(
            "see `Vec<u8>` and `<!-- arev-report -->`",
            MdContext::Inline,
        );
        assert!(c.contains("`Vec<u8>`"), "{c}");
        assert!(!c.contains(REPORT_MARKER), "{c}");
        // An escaped backtick does not open a code span that would shield HTML.
        let e = md_text("\\`<b>`x", MdContext::Inline);
        assert!(!e.contains("<b>"), "{e}");
        // An unclosed backtick is literal, so what follows is still escaped.
        let u = md_text("`<script>", MdContext::Inline);
        assert!(!u.contains("<script>"), "{u}");
    }

    #[test]
    fn links_tables_and_newlines() {
        let t = md_text(
            "[click](http://x) ![img](http://y)\n| a | b |",
            MdContext::Table,
        );
        assert!(!t.contains('\n'), "{t}");
        assert!(
            t.contains("\\[click\\]") && t.contains("\\!\\[img\\]"),
            "{t}"
        );
        assert!(!t.replace("\\|", "").contains('|'), "{t}");
        let c = md_text("`a|b`", MdContext::Table);
        assert_eq!(c, "`a\\|b`");
        assert_eq!(md_text("`a|b`", MdContext::Inline), "`a|b`");
    }

    #[test]
    fn line_links_are_built_from_plain_paths_only() {
        assert_eq!(
            md_line_link("src/app.py", 3, MdContext::Inline),
            "[`src/app.py:3`](src/app.py#L3)"
        );
        assert_eq!(
            md_line_link("a b/(x)|.py", 7, MdContext::Table),
            "[`a b/(x)\\|.py:7`](a%20b/%28x%29%7C.py#L7)"
        );
        for hostile in [
            "//evil.example/x",
            "/etc/passwd",
            "../up.py",
            "a//b",
            "",
            "a\nb",
        ] {
            let md = md_line_link(hostile, 1, MdContext::Inline);
            assert!(!md.contains("]("), "{hostile}: {md}");
        }
        // `javascript:` is a path component, percent-encoded, never a scheme.
        assert_eq!(
            md_line_link("javascript:alert(1)", 1, MdContext::Inline),
            "[`javascript:alert(1):1`](javascript%3Aalert%281%29#L1)"
        );
    }

    #[test]
    fn code_spans_fence_past_backticks() {
        assert_eq!(md_code("src/a.rs:2", MdContext::Table), "`src/a.rs:2`");
        assert_eq!(md_code("a`b.rs", MdContext::Inline), "``a`b.rs``");
        assert_eq!(md_code("`x", MdContext::Inline), "`` `x ``");
        assert_eq!(md_code("a|b", MdContext::Table), "`a\\|b`");
    }

    #[test]
    fn a_code_block_shows_every_control_character_but_newline_and_tab_escaped() {
        let out = "ok\tdone\n\u{1b}[2J\u{1b}]8;;http://x\u{7}link\u{8}\u{7f}\u{9b}31m\u{85}\r\n";
        let b = md_block(out);
        assert_eq!(
            b,
            "```text\nok\tdone\n\\u{1b}[2J\\u{1b}]8;;http://x\\u{7}link\\u{8}\\u{7f}\\u{9b}31m\\u{85}\\u{d}\n```"
        );
        assert!(
            !b.chars().any(|c| c.is_control() && c != '\n' && c != '\t'),
            "{b:?}"
        );
    }

    #[test]
    fn terminal_text_has_no_control_sequences_or_workflow_commands() {
        let t = term_text(
            "red \x1b[31mtext\x07\nline two\n  ::error::fake\r\nok",
            "    ",
        );
        assert!(!t.contains('\x1b') && !t.contains('\x07'), "{t}");
        assert!(t.contains("\\u{1b}[31m"), "{t}");
        for line in t.lines() {
            assert!(!line.trim_start().starts_with("::"), "{line}");
        }
        assert!(t.contains("\n    line two\n"), "{t}");
    }
}
