//! Payload building (pure): a report → the summary, one inline comment body per located
//! confirmed finding (with a committable suggestion when the fix is an exact single-line
//! replacement), the hidden fingerprint markers, the "fixed" and "not raised again" edits
//! and the summary cut.

use super::error::{PublishError, ReportCheck};
use super::model::{Forge, InlineComment, Payload, PrTarget, PAYLOAD_VERSION};
use super::talk::Dismissal;
use crate::report::{
    md_code, md_line_link_at, md_text, render_markdown_at, MdContext, Report, ReportFinding,
};
use crate::store::RunStatus;

/// The first line of the sticky summary (also written by the Markdown renderer).
pub const SUMMARY_MARKER: &str = "<!-- arev-report -->";
/// Added to an inline comment once its finding is gone and the forge's diff changed its
/// line (so it is edited only once).
pub const FIXED_MARKER: &str = "<!-- arev:fixed -->";
/// Added to an inline comment once its finding is gone but no diff of the forge shows its
/// line changed (edited only once too).
pub const NOT_RAISED_MARKER: &str = "<!-- arev:not-raised -->";
const FP_OPEN: &str = "<!-- arev:fp=";
const FP_CLOSE: &str = " -->";

/// `<!-- arev:fp=<fingerprint> -->`.
pub fn fp_marker(fingerprint: &str) -> String {
    format!("{FP_OPEN}{fingerprint}{FP_CLOSE}")
}

/// `<!-- arev:fp=<fingerprint> panel=<panel> -->`: the marker with the panel that raised the
/// finding (what `arev eval dispositions` counts by); without a panel, [`fp_marker`].
pub fn marker(fingerprint: &str, panel: Option<&str>) -> String {
    match panel.filter(|p| plain_panel(p)) {
        Some(p) => format!("{FP_OPEN}{fingerprint} panel={p}{FP_CLOSE}"),
        None => fp_marker(fingerprint),
    }
}

/// What an arev inline comment's marker says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Marker<'a> {
    pub fingerprint: &'a str,
    /// None in a marker written before arev named the panel (or a field it cannot read).
    pub panel: Option<&'a str>,
}

/// The marker of an arev inline comment, if the body has one: the fingerprint, then
/// `key=value` fields (an unknown key is skipped, for a later arev's markers).
pub fn parse_marker(body: &str) -> Option<Marker<'_>> {
    let start = body.find(FP_OPEN)? + FP_OPEN.len();
    let rest = &body[start..];
    let inner = &rest[..rest.find(FP_CLOSE)?];
    let mut fields = inner.split(' ');
    let fp = fields.next()?;
    if fp.is_empty() || !fp.chars().all(|c| c.is_ascii_alphanumeric()) {
        return None;
    }
    let mut panel = None;
    for f in fields {
        let (k, v) = f.split_once('=')?;
        if k == "panel" && plain_panel(v) {
            panel = Some(v);
        }
    }
    Some(Marker {
        fingerprint: fp,
        panel,
    })
}

/// The fingerprint in an arev inline comment's marker, if the body has one.
pub fn parse_fp_marker(body: &str) -> Option<&str> {
    parse_marker(body).map(|m| m.fingerprint)
}

/// A panel as a marker holds it: configured agent names (`[A-Za-z0-9_.-]`, at most 40
/// characters each) joined by `+`, at most 8 of them.
pub fn plain_panel(p: &str) -> bool {
    let names: Vec<&str> = p.split('+').collect();
    names.len() <= 8
        && names.iter().all(|n| {
            (1..=40).contains(&n.len())
                && n.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
        })
}

/// The panel of a review: the configured agents that took part (their dispatches in the
/// report's cost; else those that found or ruled on its findings, for a review replayed
/// from the verdict cache), sorted and joined by `+` (`claude+codex`). None when the report
/// names none a marker can hold.
pub fn panel_of(report: &Report) -> Option<String> {
    let mut names: std::collections::BTreeSet<&str> = report
        .cost
        .by_agent
        .iter()
        .filter(|(_, c)| c.dispatches > 0)
        .map(|(n, _)| n.as_str())
        .collect();
    if names.is_empty() {
        for f in report
            .confirmed
            .iter()
            .chain(&report.debunked)
            .chain(&report.unresolved)
        {
            names.extend(f.found_by.iter().map(String::as_str));
            names.extend(f.ruled_by.as_deref());
        }
    }
    let panel = names.into_iter().collect::<Vec<_>>().join("+");
    plain_panel(&panel).then_some(panel)
}

/// Whether an inline comment was already edited to say its finding was fixed.
pub fn is_marked_fixed(body: &str) -> bool {
    body.contains(FIXED_MARKER)
}

/// Whether an inline comment was already closed: marked fixed or not raised again.
pub fn is_closed(body: &str) -> bool {
    is_marked_fixed(body) || body.contains(NOT_RAISED_MARKER)
}

/// Whether an issue comment / MR note is arev's sticky summary.
pub fn is_summary(body: &str) -> bool {
    body.trim_start().starts_with(SUMMARY_MARKER)
}

/// An exact single-line replacement: `path:line — replace "old" with "new"`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replacement<'a> {
    pub path: &'a str,
    pub line: u32,
    pub old: &'a str,
    pub new: &'a str,
}

/// Parse the exact form `path:line — replace "old" with "new"` (one line, an em dash, the
/// two strings in double quotes); anything else is not a committable replacement.
pub fn parse_replacement(instruction: &str) -> Option<Replacement<'_>> {
    let s = instruction.trim();
    if s.contains('\n') {
        return None;
    }
    let (place, rest) = s.split_once(" — replace \"")?;
    let (path, line) = place.rsplit_once(':')?;
    let line: u32 = line.parse().ok().filter(|l| *l > 0)?;
    let body = rest.strip_suffix('"')?;
    let mut parts = body.split("\" with \"");
    let (old, new) = (parts.next()?, parts.next()?);
    if parts.next().is_some() || old.is_empty() || path.is_empty() {
        return None;
    }
    Some(Replacement {
        path,
        line,
        old,
        new,
    })
}

/// The line with the replacement made, when `old` occurs exactly once in it.
pub fn replaced_line(line_text: &str, r: &Replacement<'_>) -> Option<String> {
    (line_text.matches(r.old).count() == 1).then(|| line_text.replacen(r.old, r.new, 1))
}

/// The suggestion block for `new_line` (GitHub ```` ```suggestion ````, GitLab
/// ```` ```suggestion:-0+0 ````); None when the line itself holds a code fence.
pub fn suggestion_block(forge: Forge, new_line: &str) -> Option<String> {
    if new_line.contains("```") {
        return None;
    }
    let fence = match forge {
        Forge::Github => "```suggestion",
        Forge::Gitlab => "```suggestion:-0+0",
    };
    Some(format!("{fence}\n{new_line}\n```"))
}

/// Agent text as one inert Markdown paragraph line (inline comments are prose, not
/// tables): no HTML, no link, no `@mention` that pings, no copy of arev's markers.
fn prose(s: &str) -> String {
    md_text(
        &s.split_whitespace().collect::<Vec<_>>().join(" "),
        MdContext::Inline,
    )
}

/// The body of the inline comment for `f` at its line, whose current text is `line_text`
/// (None when the file cannot be read: then no suggestion, only the instruction), raised by
/// `panel` (in the hidden marker); its context citations follow the Judge's resolution,
/// each a link below `links` (the forge's files at the reviewed commit, `super::links`;
/// relative as in report.md without).
pub fn comment_body(
    forge: Forge,
    f: &ReportFinding,
    line_text: Option<&str>,
    panel: Option<&str>,
    links: Option<&str>,
) -> String {
    let mut s = format!(
        "**arev · {} · {}**\n\n{}\n",
        f.severity,
        prose(&f.category),
        prose(&f.description)
    );
    if let Some(r) = f.resolution.as_deref().map(prose).filter(|r| !r.is_empty()) {
        s.push_str(&format!("\n*Judge:* {r}\n"));
    }
    // The context citations (docs/contracts.md §22.2), as report.md shows them, but linked
    // absolutely: a relative link does not resolve on the PR page.
    for c in &f.context {
        s.push_str(&format!(
            "\nsee {} {}\n",
            md_line_link_at(&c.file, c.line, MdContext::Inline, links),
            md_code(&c.text, MdContext::Inline)
        ));
    }
    let instruction = f.edit_instruction.as_deref().map(str::trim).unwrap_or("");
    let suggestion = parse_replacement(instruction)
        .filter(|r| Some(r.path) == f.file.as_deref() && Some(r.line) == f.line)
        .and_then(|r| line_text.and_then(|t| replaced_line(t, &r)))
        .and_then(|new_line| suggestion_block(forge, &new_line));
    match suggestion {
        Some(block) => s.push_str(&format!("\n{block}\n")),
        None if !instruction.is_empty() => {
            s.push_str(&format!("\n**Fix:** {}\n", prose(instruction)))
        }
        None => {}
    }
    s.push_str(&format!("\n{}", marker(&f.fingerprint, panel)));
    s
}

/// The first 12 characters of a commit sha (char-safe: the sha comes from outside).
pub fn short_sha(sha: &str) -> String {
    sha.chars().take(12).collect()
}

/// The edited body of an inline comment whose finding is gone and whose line the forge's
/// diff from the comment's commit to `head_sha` changed: a "fixed" line on top, the original
/// below (marker kept, so the comment still counts as arev's).
pub fn fixed_body(old_body: &str, head_sha: &str) -> String {
    let short = short_sha(head_sha);
    format!(
        "{FIXED_MARKER}\n✅ **Fixed** in {short}: this line changed since the comment, and a later arev review of this file no longer finds it.\n\n<details><summary>Original comment</summary>\n\n{old_body}\n\n</details>"
    )
}

/// The edited body of an inline comment whose finding is gone but whose line no diff of the
/// forge shows changed (or whose commit the forge no longer has): it says the finding was
/// not raised again, and claims no fix.
pub fn not_raised_body(old_body: &str, head_sha: &str) -> String {
    let short = short_sha(head_sha);
    format!(
        "{NOT_RAISED_MARKER}\n➖ **Not raised again** at {short}: a later arev review of this file no longer reports it, but its line has not changed since the comment (as far as the forge's diff shows), so this is not a claim that it was fixed.\n\n<details><summary>Original comment</summary>\n\n{old_body}\n\n</details>"
    )
}

/// The summary cut to `limit` characters, ending with `pointer` when cut.
pub fn fit_summary(text: &str, limit: usize, pointer: &str) -> String {
    if text.chars().count() <= limit {
        return text.to_string();
    }
    let tail = format!("\n\n…\n\n**Cut at {limit} characters.** {pointer}\n");
    let keep = limit.saturating_sub(tail.chars().count());
    let mut cut: String = text.chars().take(keep).collect();
    // Never end inside a line (a half table row renders as garbage).
    if let Some(nl) = cut.rfind('\n') {
        cut.truncate(nl);
    }
    cut.push_str(&tail);
    cut
}

/// The summary footer listing confirmed findings that are not on the PR diff's right side.
pub fn outside_diff_footer(outside: &[&InlineComment], unlocated: usize) -> String {
    if outside.is_empty() && unlocated == 0 {
        return String::new();
    }
    let mut s = String::from("\n---\n");
    if !outside.is_empty() {
        let places: Vec<String> = outside
            .iter()
            .map(|c| md_code(&format!("{}:{}", c.path, c.line), MdContext::Inline))
            .collect();
        s.push_str(&format!(
            "{} confirmed finding(s) are outside this pull request's diff, so they appear only in this summary: {}.\n",
            outside.len(),
            places.join(", ")
        ));
    }
    if unlocated > 0 {
        s.push_str(&format!(
            "{unlocated} confirmed finding(s) have no file and line, so they appear only in this summary.\n"
        ));
    }
    s
}

/// The summary section listing the findings dismissed on the pull request ("dismissed by
/// @who: reason"; the login escaped so that it never pings).
pub fn dismissed_footer(dismissed: &[Dismissal], comments: &[InlineComment]) -> String {
    if dismissed.is_empty() {
        return String::new();
    }
    let mut s = format!(
        "\n---\n{} confirmed finding(s) were dismissed on this pull request: not posted again and not gated while their code is unchanged.\n\n",
        dismissed.len()
    );
    for d in dismissed {
        let place = comments
            .iter()
            .find(|c| c.fingerprint == d.fingerprint)
            .map(|c| format!("{}:{}", c.path, c.line))
            .unwrap_or_else(|| short_sha(&d.fingerprint));
        s.push_str(&format!(
            "- {} — dismissed by {}: {} ({})\n",
            md_code(&place, MdContext::Inline),
            md_text(&format!("@{}", d.by), MdContext::Inline),
            md_text(&d.reason, MdContext::Inline),
            d.kind.as_str()
        ));
    }
    s
}

/// Where the full report is, for a cut summary.
pub fn report_pointer(run_id: &str, ci_url: Option<&str>) -> String {
    let id = md_code(run_id, MdContext::Inline);
    match ci_url {
        Some(u) => {
            format!("The full report is `report.md` in arev run {id} ([CI run]({u})).")
        }
        None => format!("The full report is `report.md` in arev run {id}."),
    }
}

/// The pull request's head (from the trusted event or the forge) must be the commit the
/// report reviewed: a report of another commit, or of none, is never published to it.
pub fn check_head(payload: &Payload, head: &str) -> Result<(), PublishError> {
    let what = match payload.forge {
        Forge::Github => "pull request",
        Forge::Gitlab => "merge request",
    };
    let n = payload.target.number;
    match payload.reviewed_commit.as_deref() {
        Some(c) if c == head => Ok(()),
        Some(c) => Err(PublishError::WrongTarget(format!(
            "the report is of commit {}, but {what} #{n} is at {}: publish the review of its head",
            crate::output::inert_line(&short_sha(c)),
            crate::output::inert_line(&short_sha(head))
        ))),
        None => Err(PublishError::WrongTarget(format!(
            "the report names no reviewed commit (a review outside git, or by an older arev), so it cannot be matched to {what} #{n}"
        ))),
    }
}

/// Whether a fingerprint can go into a marker as it is (what [`parse_fp_marker`] reads).
fn plain_fingerprint(fp: &str) -> bool {
    (1..=128).contains(&fp.len()) && fp.chars().all(|c| c.is_ascii_alphanumeric())
}

/// A repository-relative path arev can place a comment on: relative, no `..`, no control
/// character.
fn plain_path(p: &str) -> bool {
    !p.is_empty()
        && !p.starts_with('/')
        && !p.chars().any(char::is_control)
        && !p.split('/').any(|seg| seg == ".." || seg.is_empty())
}

/// Check a report before anything is built from it (in the fork flow it comes from the
/// untrusted side): a known schema version, a verdict, and fingerprints, paths and lines
/// that go into requests as they are. Every text is escaped when rendered; these are the
/// fields that are not.
pub fn validate_report(report: &Report) -> Result<(), ReportCheck> {
    if report.schema_version != crate::report::SCHEMA_VERSION {
        return Err(ReportCheck::SchemaVersion {
            found: report.schema_version,
            expected: crate::report::SCHEMA_VERSION,
        });
    }
    let open = report.confirmed.iter().chain(&report.unresolved);
    for f in open.chain(&report.debunked).chain(&report.absent) {
        if !plain_fingerprint(&f.fingerprint) {
            return Err(ReportCheck::Fingerprint {
                id: crate::output::inert_line(&f.id).into_owned(),
                fingerprint: crate::output::inert_line(&f.fingerprint).into_owned(),
            });
        }
        if let Some(p) = f.file.as_deref().filter(|p| !plain_path(p)) {
            return Err(ReportCheck::File {
                id: crate::output::inert_line(&f.id).into_owned(),
                file: crate::output::inert_line(p).into_owned(),
            });
        }
        if f.line == Some(0) {
            return Err(ReportCheck::LineZero(
                crate::output::inert_line(&f.id).into_owned(),
            ));
        }
    }
    if let Some(p) = report
        .coverage
        .files
        .iter()
        .map(|f| f.path.as_str())
        .find(|p| !plain_path(p))
    {
        return Err(ReportCheck::Coverage(
            crate::output::inert_line(p).into_owned(),
        ));
    }
    Ok(())
}

/// Build the payload: the summary from the report, one inline comment per confirmed finding
/// with a file and line (only for a completed review: an aborted one has no verdict and
/// comments nothing), reading each flagged line through `line_text(path, line)`. Every text
/// is rendered here from the report's fields (agent text escaped); `commit` is the commit
/// the report says it reviewed. `web_url` is the repository's page from the publishing
/// job's settings: with it (and a commit id) every line link is absolute, at that commit.
pub fn build_payload(
    report: &Report,
    forge: Forge,
    target: PrTarget,
    report_pointer: String,
    web_url: Option<&str>,
    line_text: &dyn Fn(&str, u32) -> Option<String>,
) -> Payload {
    let commit = report.target.commit.clone();
    let links = super::links::blob_base(forge, web_url, commit.as_deref());
    let links = links.as_deref();
    let verdict = report.status == RunStatus::Complete;
    let panel = panel_of(report);
    let (comments, fingerprints, covered_files) = if verdict {
        let comments = report
            .confirmed
            .iter()
            .filter_map(|f| {
                let (path, line) = (f.file.as_deref()?, f.line?);
                let text = line_text(path, line);
                Some(InlineComment {
                    fingerprint: f.fingerprint.clone(),
                    path: path.to_string(),
                    line,
                    body: comment_body(forge, f, text.as_deref(), panel.as_deref(), links),
                })
            })
            .collect();
        let fps = report
            .confirmed
            .iter()
            .map(|f| f.fingerprint.clone())
            .collect();
        let covered = report
            .coverage
            .files
            .iter()
            .filter(|f| f.status == crate::report::CoverageStatus::Reviewed)
            .map(|f| f.path.clone())
            .collect();
        (comments, fps, covered)
    } else {
        (vec![], vec![], vec![])
    };
    Payload {
        schema_version: PAYLOAD_VERSION,
        forge,
        run_id: report.run_id.clone(),
        target,
        summary: render_markdown_at(report, links),
        report_pointer,
        comments,
        fingerprints,
        covered_files,
        reviewed_commit: commit,
        seal: String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::Severity;
    use crate::report::fixtures;

    fn finding(sev: Severity, file: &str, line: u32) -> ReportFinding {
        let mut f = fixtures::finding(file, sev);
        f.line = Some(line);
        f.fingerprint = format!("fp{line}");
        f
    }

    #[test]
    fn replacement_parses_only_the_exact_single_line_form() {
        let r = parse_replacement("src/a.rs:12 — replace \"unwrap()\" with \"?\"").unwrap();
        assert_eq!(
            r,
            Replacement {
                path: "src/a.rs",
                line: 12,
                old: "unwrap()",
                new: "?"
            }
        );
        // The new text may be empty (a deletion); quotes inside are kept.
        let r = parse_replacement("a.rs:1 — replace \"x(\"y\")\" with \"\"").unwrap();
        assert_eq!((r.old, r.new), ("x(\"y\")", ""));
        for bad in [
            "src/a.rs:12 - replace \"a\" with \"b\"", // hyphen, not an em dash
            "src/a.rs — replace \"a\" with \"b\"",    // no line
            "src/a.rs:0 — replace \"a\" with \"b\"",  // line 0
            "src/a.rs:3 — replace \"\" with \"b\"",   // empty old
            "src/a.rs:3 — replace \"a\" with \"b\" and more",
            "src/a.rs:3 — replace \"a\" with \"b\"\nsrc/a.rs:4 — replace \"c\" with \"d\"",
            "src/a.rs:3 — replace \"a\" with \"b\" with \"c\"",
            "src/a.rs:3 — delete the line",
        ] {
            assert_eq!(parse_replacement(bad), None, "{bad}");
        }
    }

    #[test]
    fn replaced_line_needs_exactly_one_occurrence() {
        let r =
            parse_replacement("a.rs:2 — replace \"unwrap()\" with \"expect(\\\"n\\\")\"").unwrap();
        assert_eq!(
            replaced_line("    s.parse().unwrap()", &r).as_deref(),
            Some("    s.parse().expect(\\\"n\\\")")
        );
        assert_eq!(replaced_line("a.unwrap().b.unwrap()", &r), None);
        assert_eq!(replaced_line("nothing here", &r), None);
    }

    #[test]
    fn comment_body_has_a_suggestion_only_for_an_exact_replacement_on_its_line() {
        let mut f = finding(Severity::High, "src/lib.rs", 2);
        f.edit_instruction =
            Some("src/lib.rs:2 — replace \"unwrap()\" with \"unwrap_or(0)\"".into());
        let body = comment_body(
            Forge::Github,
            &f,
            Some("    s.parse().unwrap()"),
            None,
            None,
        );
        assert!(
            body.contains("```suggestion\n    s.parse().unwrap_or(0)\n```"),
            "{body}"
        );
        assert!(body.ends_with(&fp_marker(&f.fingerprint)));
        assert_eq!(parse_fp_marker(&body), Some(f.fingerprint.as_str()));
        let gl = comment_body(
            Forge::Gitlab,
            &f,
            Some("    s.parse().unwrap()"),
            Some("claude"),
            None,
        );
        assert!(
            gl.contains("```suggestion:-0+0\n    s.parse().unwrap_or(0)\n```"),
            "{gl}"
        );
        assert!(gl.ends_with(&format!("<!-- arev:fp={} panel=claude -->", f.fingerprint)));
        assert_eq!(
            parse_marker(&gl),
            Some(Marker {
                fingerprint: &f.fingerprint,
                panel: Some("claude")
            })
        );
        // The line changed since the review: no suggestion, the instruction as text.
        let stale = comment_body(
            Forge::Github,
            &f,
            Some("    s.trim().parse().unwrap().unwrap()"),
            None,
            None,
        );
        assert!(!stale.contains("```suggestion"));
        assert!(stale.contains("**Fix:** src/lib.rs:2 — replace"));
        // An instruction for another line never becomes a suggestion on this one.
        f.edit_instruction = Some("src/lib.rs:3 — replace \"unwrap()\" with \"x\"".into());
        assert!(!comment_body(
            Forge::Github,
            &f,
            Some("    s.parse().unwrap()"),
            None,
            None
        )
        .contains("```suggestion"));
        f.edit_instruction = None;
        let plain = comment_body(Forge::Github, &f, None, None, None);
        assert!(!plain.contains("**Fix:**"));
        assert!(plain.starts_with("**arev · high · "));
    }

    /// With the repository's web URL and the reviewed commit, the context citations of the
    /// inline comments and of the summary are absolute links to the forge's file at that
    /// commit (GitHub and GitLab forms, the path encoded); without either, report.md's
    /// relative links.
    #[test]
    fn citations_link_to_the_forge_file_at_the_reviewed_commit() {
        let sha = "0123456789abcdef0123456789abcdef01234567";
        let mut r = fixtures::shard(1, 1, &["src/lib.rs"], RunStatus::Complete);
        r.target.commit = Some(sha.into());
        let mut f = finding(Severity::High, "src/lib.rs", 2);
        f.context = vec![crate::test_support::cite(
            "src/a b#(1).rs",
            4,
            "parse(s) + 1",
        )];
        r.confirmed = vec![f];
        let target = PrTarget {
            repository: "o/r".into(),
            number: 7,
            head_sha: Some(sha.into()),
        };
        let build = |r: &Report, forge, web: Option<&str>| {
            build_payload(r, forge, target.clone(), "ptr".into(), web, &|_, _| None)
        };
        let gh = build(&r, Forge::Github, Some("https://github.com/o/r"));
        let want = format!(
            "[`src/a b#(1).rs:4`](https://github.com/o/r/blob/{sha}/src/a%20b%23%281%29.rs#L4)"
        );
        assert!(
            gh.comments[0]
                .body
                .contains(&format!("\nsee {want} `parse(s) + 1`\n")),
            "{}",
            gh.comments[0].body
        );
        assert!(gh.summary.contains(&want), "{}", gh.summary);
        let gl = build(&r, Forge::Gitlab, Some("https://gitlab.example.com/g/p"));
        let want =
            format!("(https://gitlab.example.com/g/p/-/blob/{sha}/src/a%20b%23%281%29.rs#L4)");
        assert!(
            gl.comments[0].body.contains(&want),
            "{}",
            gl.comments[0].body
        );
        assert!(gl.summary.contains(&want), "{}", gl.summary);
        // Unknown web URL, or no reviewed commit: the relative link, as in report.md.
        let rel = "(src/a%20b%23%281%29.rs#L4)";
        assert!(build(&r, Forge::Github, None).comments[0]
            .body
            .contains(rel));
        r.target.commit = None;
        let p = build(&r, Forge::Github, Some("https://github.com/o/r"));
        assert!(p.summary.contains(rel), "{}", p.summary);
    }

    #[test]
    fn markers_round_trip_and_reject_garbage() {
        assert_eq!(
            parse_fp_marker("x\n<!-- arev:fp=abc123 -->"),
            Some("abc123")
        );
        assert_eq!(parse_fp_marker("<!-- arev:fp= -->"), None);
        assert_eq!(parse_fp_marker("<!-- arev:fp=a b -->"), None);
        assert_eq!(parse_fp_marker("no marker"), None);
        let fixed = fixed_body("old\n<!-- arev:fp=abc -->", "0123456789abcdef0123");
        assert!(is_marked_fixed(&fixed));
        assert!(fixed.contains("**Fixed** in 0123456789ab"));
        assert_eq!(parse_fp_marker(&fixed), Some("abc"));
        assert!(!is_marked_fixed("old\n<!-- arev:fp=abc -->"));
        assert!(is_closed(&fixed));
        let gone = not_raised_body("old\n<!-- arev:fp=abc -->", "0123456789abcdef0123");
        assert!(is_closed(&gone) && !is_marked_fixed(&gone));
        assert!(
            gone.contains("**Not raised again** at 0123456789ab"),
            "{gone}"
        );
        assert!(!gone.contains("Fixed"), "{gone}");
        assert_eq!(parse_fp_marker(&gone), Some("abc"));
        assert!(!is_closed("old\n<!-- arev:fp=abc -->"));
        // A sha from outside is cut by characters, never inside one.
        assert!(fixed_body("x", &"é".repeat(20)).contains(&"é".repeat(12)));
        assert_eq!(short_sha("abc"), "abc");
        assert!(is_summary("<!-- arev-report -->\n## arev"));
        // The panel: read when valid; a marker without one (older arev) has none; unknown
        // fields are skipped, a field that is not `key=value` is no marker.
        let m = |b| parse_marker(b).map(|m| (m.fingerprint, m.panel));
        assert_eq!(
            m("x <!-- arev:fp=abc panel=claude+codex -->"),
            Some(("abc", Some("claude+codex")))
        );
        assert_eq!(m("<!-- arev:fp=abc -->"), Some(("abc", None)));
        assert_eq!(
            m("<!-- arev:fp=abc later=1 panel=p -->"),
            Some(("abc", Some("p")))
        );
        assert_eq!(m("<!-- arev:fp=abc panel=a<b -->"), Some(("abc", None)));
        let many = format!("<!-- arev:fp=abc panel={} -->", ["a"; 9].join("+"));
        assert_eq!(m(&many), Some(("abc", None)));
        assert_eq!(m("<!-- arev:fp=abc panel=a++b -->"), Some(("abc", None)));
        assert_eq!(m("<!-- arev:fp=abc panel -->"), None);
        assert_eq!(marker("abc", Some("bad name")), fp_marker("abc"));
        assert_eq!(
            parse_fp_marker(&fixed_body(&marker("abc", Some("p")), "s")),
            Some("abc")
        );
        assert!(!is_summary("see <!-- arev-report -->"));
    }

    #[test]
    fn summary_is_cut_at_the_limit_with_a_pointer() {
        let text = format!("{SUMMARY_MARKER}\n{}", "| row | ü |\n".repeat(10_000));
        let cut = fit_summary(&text, 65_536, "The full report is elsewhere.");
        assert!(cut.chars().count() <= 65_536, "{}", cut.chars().count());
        assert!(cut.starts_with(SUMMARY_MARKER));
        assert!(cut.ends_with("**Cut at 65536 characters.** The full report is elsewhere.\n"));
        assert!(cut.contains("| row | ü |\n\n…"), "cut at a line end");
        assert_eq!(fit_summary("short", 10, "p"), "short");
    }

    #[test]
    fn payload_of_a_completed_review_comments_located_findings_only() {
        let mut r = fixtures::shard(1, 1, &["src/lib.rs"], RunStatus::Complete);
        r.confirmed = vec![
            finding(Severity::High, "src/lib.rs", 2),
            finding(Severity::Low, "src/lib.rs", 5),
        ];
        r.confirmed[1].line = None;
        let target = PrTarget {
            repository: "o/r".into(),
            number: 7,
            head_sha: Some("abc".into()),
        };
        let p = build_payload(
            &r,
            Forge::Github,
            target.clone(),
            "ptr".into(),
            None,
            &|_, _| None,
        );
        assert_eq!(p.comments.len(), 1);
        assert_eq!(p.comments[0].line, 2);
        assert_eq!(p.fingerprints.len(), 2);
        // The panel in the marker: the agents that were dispatched, sorted.
        let panel = panel_of(&r);
        assert_eq!(
            parse_marker(&p.comments[0].body).and_then(|m| m.panel),
            panel.as_deref()
        );
        let mut two = r.clone();
        two.cost.by_agent.clear();
        for (name, n) in [("codex", 2), ("claude", 3), ("idle", 0)] {
            two.cost.by_agent.insert(
                name.into(),
                crate::report::CostLine {
                    dispatches: n,
                    ..Default::default()
                },
            );
        }
        assert_eq!(panel_of(&two).as_deref(), Some("claude+codex"));
        // Replayed from the cache (no dispatch): who found and ruled.
        two.cost.by_agent.clear();
        two.confirmed[0].found_by = vec!["gem".into()];
        two.confirmed[0].ruled_by = Some("claude".into());
        two.confirmed[1].found_by = vec![];
        two.confirmed[1].ruled_by = None;
        assert_eq!(panel_of(&two).as_deref(), Some("claude+gem"));
        two.confirmed[0].ruled_by = Some("not a name".into());
        assert_eq!(panel_of(&two), None);
        assert!(p.summary.starts_with(SUMMARY_MARKER));
        // An aborted run: the summary says "no verdict"; nothing inline, nothing "fixed".
        r.status = RunStatus::Aborted;
        r.stop_reason = None;
        r.abort_reason = Some(crate::store::AbortReason::AgentDispatchUnavailable);
        let p = build_payload(&r, Forge::Github, target, "ptr".into(), None, &|_, _| None);
        assert!(p.comments.is_empty() && p.covered_files.is_empty() && p.fingerprints.is_empty());
        assert!(p.summary.contains("no verdict"), "{}", p.summary);
    }
}
