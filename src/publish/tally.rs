//! `arev eval dispositions`: what became of arev's inline findings on pull requests, as the
//! forge reports it — fixed (the comment marked fixed on the forge's diff), dismissed (by
//! kind, by people allowed to dismiss), not raised again, or left open — per category and
//! severity (read from each comment's heading). The precision figure that mining fix commits
//! cannot give: what maintainers did with the findings.

use super::build::{is_closed, is_marked_fixed, parse_fp_marker};
use super::env::{process_env, settings};
use super::error::PublishError;
use super::http::RetryPolicy;
use super::model::Forge;
use super::plan::Existing;
use super::talk::{one_line, DismissBy};
use super::{github, gitlab};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

/// The counts of one category and severity.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Row {
    pub category: String,
    pub severity: String,
    pub fixed: usize,
    /// By kind (`false-positive`, `wont-fix`, `ack`, `thumbs-down`, `resolved`).
    pub dismissed: BTreeMap<String, usize>,
    pub not_raised_again: usize,
    pub open: usize,
}

/// The severity and category of an arev comment (`**arev · high · error-handling**`).
fn heading(body: &str) -> (String, String) {
    let head = body
        .lines()
        .find_map(|l| l.trim().strip_prefix("**arev · "))
        .and_then(|l| l.strip_suffix("**"))
        .unwrap_or("");
    let mut parts = head.splitn(2, " · ");
    let sev = one_line(parts.next().unwrap_or(""), 20);
    let cat = one_line(parts.next().unwrap_or(""), 60);
    (
        if sev.is_empty() { "?".into() } else { sev },
        if cat.is_empty() { "?".into() } else { cat },
    )
}

/// Add arev's comments of one pull request to `rows`.
fn add(rows: &mut BTreeMap<(String, String), Row>, existing: &[Existing]) {
    for e in existing {
        let Some(fp) = parse_fp_marker(&e.body) else {
            continue;
        };
        let (severity, category) = heading(&e.body);
        let r = rows
            .entry((category.clone(), severity.clone()))
            .or_insert_with(|| Row {
                category,
                severity,
                ..Row::default()
            });
        if is_marked_fixed(&e.body) {
            r.fixed += 1;
        } else if is_closed(&e.body) {
            r.not_raised_again += 1;
        } else if let Some(d) = e.talk.dismissal(fp) {
            *r.dismissed.entry(d.kind.as_str().to_string()).or_default() += 1;
        } else {
            r.open += 1;
        }
    }
}

/// The dispositions of arev's findings on pull requests `prs` of the repository the
/// environment names (reads only), per category and severity.
pub fn tally(
    forge: Forge,
    prs: &[u64],
    root: &Path,
    policy: RetryPolicy,
    dismiss_by: DismissBy,
) -> Result<Vec<Row>, PublishError> {
    let mut rows = BTreeMap::new();
    for &n in prs {
        let s = settings(forge, &process_env, Some(n), Some(root))?;
        let repo = s.target.repository.clone();
        let existing = match forge {
            Forge::Github => {
                let graphql = s
                    .graphql_url
                    .clone()
                    .unwrap_or_else(|| github::graphql_url(&s.api_url));
                let api = github::client(&s.api_url, s.token, policy, false);
                let me = github::identity(&api, &graphql)?;
                github::threads(&api, &graphql, &repo, n, &me, dismiss_by)?
            }
            Forge::Gitlab => {
                let api = gitlab::client(&s.api_url, s.token, policy, false);
                let me = gitlab::identity(&api)?;
                gitlab::threads(&api, &repo, n, me, dismiss_by)?
            }
        };
        add(&mut rows, &existing);
    }
    Ok(rows.into_values().collect())
}

/// The rows as a plain table.
pub fn render(rows: &[Row]) -> String {
    let mut s = String::from("category  severity  fixed  dismissed  not-raised-again  open\n");
    for r in rows {
        let dismissed: usize = r.dismissed.values().sum();
        let kinds: Vec<String> = r
            .dismissed
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        s.push_str(&format!(
            "{}  {}  {}  {}{}  {}  {}\n",
            r.category,
            r.severity,
            r.fixed,
            dismissed,
            if kinds.is_empty() {
                String::new()
            } else {
                format!(" ({})", kinds.join(", "))
            },
            r.not_raised_again,
            r.open
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::super::build::{fixed_body, fp_marker, not_raised_body};
    use super::super::talk::{Reply, Talk, Voice};
    use super::*;

    fn comment(body: String, talk: Talk) -> Existing {
        Existing {
            id: 1,
            thread: None,
            path: "a.rs".into(),
            body,
            commit: None,
            line: Some(1),
            talk,
        }
    }

    #[test]
    fn each_comment_counts_once_by_what_became_of_it() {
        let b = |fp: &str| format!("**arev · high · error-handling**\n\nx\n{}", fp_marker(fp));
        let dismissed = Talk {
            replies: vec![Reply {
                author: Voice {
                    login: "o".into(),
                    allowed: true,
                },
                mine: false,
                body: "arev: false-positive no".into(),
            }],
            ..Talk::default()
        };
        let ex = vec![
            comment(fixed_body(&b("a"), "s"), Talk::default()),
            comment(not_raised_body(&b("b"), "s"), Talk::default()),
            comment(b("c"), dismissed),
            comment(b("d"), Talk::default()),
            comment("a human comment".into(), Talk::default()),
        ];
        let mut rows = BTreeMap::new();
        add(&mut rows, &ex);
        let rows: Vec<Row> = rows.into_values().collect();
        assert_eq!(rows.len(), 1);
        let r = &rows[0];
        assert_eq!(
            (r.category.as_str(), r.severity.as_str()),
            ("error-handling", "high")
        );
        assert_eq!((r.fixed, r.not_raised_again, r.open), (1, 1, 1));
        assert_eq!(r.dismissed.get("false-positive"), Some(&1));
        assert!(render(&rows).contains("error-handling  high  1  1 (false-positive 1)  1  1"));
    }
}
