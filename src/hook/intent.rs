//! The Stop-hook review's intent: the user's prompts since review was enabled, newest kept
//! when they do not all fit, composed into the text `arev run --intent` gets (within its
//! 8 KiB limit). Pure functions; `state.rs` records the prompts.

use crate::resolve::INTENT_MAX_BYTES;

/// One recorded prompt is kept up to this many bytes (a pasted log is cut, marked).
pub const PROMPT_MAX_BYTES: usize = INTENT_MAX_BYTES / 2;

const HEADER: &str = "The user's requests to the coding agent in this Claude Code session, \
                      oldest first, since arev review was turned on. The reviewed changes were \
                      made to carry them out.\n";

/// `s` cut to at most `cap` bytes at a character boundary, with `…` appended when cut.
pub fn cut(s: &str, cap: usize) -> String {
    if s.len() <= cap {
        return s.to_string();
    }
    let mut end = cap;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// The intent for `prompts` (oldest first), at most `max` bytes: the newest prompts that fit,
/// with a line saying how many older ones were left out. `None` without prompts.
pub fn compose(prompts: &[String], max: usize) -> Option<String> {
    let prompts: Vec<&str> = prompts
        .iter()
        .map(|p| p.trim())
        .filter(|p| !p.is_empty())
        .collect();
    if prompts.is_empty() {
        return None;
    }
    let item = |n: usize, p: &str| format!("\n{n}. {p}\n");
    // Room for the header and an omission line of any realistic count.
    let omitted_room = "\n(999999 earlier requests left out)\n".len();
    let budget = max.saturating_sub(HEADER.len() + omitted_room);
    let mut kept: Vec<String> = Vec::new();
    let mut used = 0;
    for (i, p) in prompts.iter().enumerate().rev() {
        let text = item(i + 1, p);
        if used + text.len() > budget {
            if kept.is_empty() {
                // The newest request alone is too long: keep its beginning.
                let room = budget.saturating_sub(item(i + 1, "…").len());
                kept.push(item(i + 1, &cut(p, room)));
            }
            break;
        }
        used += text.len();
        kept.push(text);
    }
    kept.reverse();
    let mut out = HEADER.to_string();
    let left_out = prompts.len() - kept.len();
    if left_out > 0 {
        out.push_str(&format!(
            "\n({left_out} earlier request{} left out)\n",
            if left_out == 1 { "" } else { "s" }
        ));
    }
    for k in kept {
        out.push_str(&k);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn numbers_the_prompts_oldest_first() {
        let t = compose(&v(&["add an adder", "  ", "also a subtracter"]), 8192).unwrap();
        assert!(t.starts_with("The user's requests"), "{t}");
        assert!(
            t.ends_with("\n1. add an adder\n\n2. also a subtracter\n"),
            "{t}"
        );
        assert!(!t.contains("left out"));
        assert_eq!(compose(&v(&[" "]), 8192), None);
        assert_eq!(compose(&[], 8192), None);
    }

    #[test]
    fn keeps_the_newest_within_the_limit() {
        let many: Vec<String> = (0..400).map(|i| format!("request number {i}")).collect();
        let t = compose(&many, 2048).unwrap();
        assert!(t.len() <= 2048, "{}", t.len());
        assert!(t.contains("400. request number 399"));
        assert!(!t.contains("1. request number 0\n"));
        assert!(t.contains("earlier requests left out"), "{t}");
        // One huge prompt: its beginning, cut and marked.
        let t = compose(&v(&["old", &"x".repeat(20_000)]), 8192).unwrap();
        assert!(t.len() <= 8192, "{}", t.len());
        assert!(t.contains("2. xxx") && t.contains("…"), "{t}");
        assert!(t.contains("(1 earlier request left out)"), "{t}");
    }

    #[test]
    fn cut_respects_char_boundaries() {
        assert_eq!(cut("abc", 3), "abc");
        assert_eq!(cut("ééé", 3), "é…");
        assert_eq!(cut("ab", 0), "…");
    }
}
