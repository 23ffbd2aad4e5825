//! `arev eval dispositions`: what became of arev's inline findings on pull requests, as the
//! forge reports it — fixed (the comment marked fixed on the forge's diff), dismissed (by
//! kind, by people allowed to dismiss), not raised again, or left open — per panel (from
//! each comment's hidden marker; `unknown` for a comment arev wrote before it named the
//! panel), category and severity (from its heading). The pull requests are the ones named,
//! else the repository's newest as the forge lists them. The precision figure that mining
//! fix commits cannot give: what maintainers did with the findings.

use super::build::{is_closed, is_marked_fixed, parse_marker};
use super::env::{process_env, repo_access};
use super::error::PublishError;
use super::http::RetryPolicy;
use super::listing::{pull_requests, ListState};
use super::model::Forge;
use super::plan::Existing;
use super::talk::{one_line, DismissBy};
use super::{github, gitlab};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

/// The panel of a comment whose marker names none.
pub const UNKNOWN_PANEL: &str = "unknown";

/// Which pull requests to count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Which {
    /// These (`--pr`).
    Named(Vec<u64>),
    /// The newest `limit` in `state`, as the forge lists them.
    Listed { state: ListState, limit: usize },
}

/// The counts, and the pull requests they are over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tally {
    pub prs: Vec<u64>,
    pub rows: Vec<Row>,
}

/// The counts of one panel, category and severity.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Row {
    /// The configured agents that raised the findings (`claude+codex`), or `unknown`.
    pub panel: String,
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

type Key = (String, String, String);

/// Add arev's comments of one pull request to `rows`.
fn add(rows: &mut BTreeMap<Key, Row>, existing: &[Existing]) {
    for e in existing {
        let Some(m) = parse_marker(&e.body) else {
            continue;
        };
        let (severity, category) = heading(&e.body);
        let panel = m.panel.unwrap_or(UNKNOWN_PANEL).to_string();
        let r = rows
            .entry((panel.clone(), category.clone(), severity.clone()))
            .or_insert_with(|| Row {
                panel,
                category,
                severity,
                ..Row::default()
            });
        if is_marked_fixed(&e.body) {
            r.fixed += 1;
        } else if is_closed(&e.body) {
            r.not_raised_again += 1;
        } else if let Some(d) = e.talk.dismissal(m.fingerprint) {
            *r.dismissed.entry(d.kind.as_str().to_string()).or_default() += 1;
        } else {
            r.open += 1;
        }
    }
}

/// The dispositions of arev's findings on the pull requests `which` names of the
/// repository the environment names (reads only), per panel, category and severity. One
/// client: the whole count is within `policy`'s time bound.
pub fn tally(
    forge: Forge,
    which: &Which,
    root: &Path,
    policy: RetryPolicy,
    dismiss_by: DismissBy,
) -> Result<Tally, PublishError> {
    let access = repo_access(forge, &process_env, Some(root))?;
    let repo = access.repository.clone();
    let mut rows = BTreeMap::new();
    let prs = match forge {
        Forge::Github => {
            let graphql = access
                .graphql_url
                .clone()
                .unwrap_or_else(|| github::graphql_url(&access.api_url));
            let api = github::client(&access.api_url, access.token, policy, false);
            let prs = listed(which, |s, l| pull_requests(&api, forge, &repo, s, l))?;
            let me = github::identity(&api, &graphql)?;
            for &n in &prs {
                add(
                    &mut rows,
                    &github::threads(&api, &graphql, &repo, n, &me, dismiss_by)?,
                );
            }
            prs
        }
        Forge::Gitlab => {
            let api = gitlab::client(&access.api_url, access.token, policy, false);
            let prs = listed(which, |s, l| pull_requests(&api, forge, &repo, s, l))?;
            let me = gitlab::identity(&api)?;
            for &n in &prs {
                add(&mut rows, &gitlab::threads(&api, &repo, n, me, dismiss_by)?);
            }
            prs
        }
    };
    Ok(Tally {
        prs,
        rows: rows.into_values().collect(),
    })
}

/// The pull requests `which` names, listing them through `list` when it names none.
fn listed(
    which: &Which,
    list: impl FnOnce(ListState, usize) -> Result<Vec<u64>, PublishError>,
) -> Result<Vec<u64>, PublishError> {
    match which {
        Which::Named(prs) => Ok(prs.clone()),
        Which::Listed { state, limit } => list(*state, *limit),
    }
}

/// The rows as a plain table.
pub fn render(rows: &[Row]) -> String {
    let mut s =
        String::from("panel  category  severity  fixed  dismissed  not-raised-again  open\n");
    for r in rows {
        let dismissed: usize = r.dismissed.values().sum();
        let kinds: Vec<String> = r
            .dismissed
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        s.push_str(&format!(
            "{}  {}  {}  {}  {}{}  {}  {}\n",
            r.panel,
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
    use super::super::build::{fixed_body, fp_marker, marker, not_raised_body};
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
            (r.panel.as_str(), r.category.as_str(), r.severity.as_str()),
            ("unknown", "error-handling", "high")
        );
        assert_eq!((r.fixed, r.not_raised_again, r.open), (1, 1, 1));
        assert_eq!(r.dismissed.get("false-positive"), Some(&1));
        assert!(
            render(&rows).contains("unknown  error-handling  high  1  1 (false-positive 1)  1  1")
        );
    }

    #[test]
    fn each_panel_counts_apart() {
        let b = |fp: &str, panel: Option<&str>| {
            format!("**arev · low · naming**\n\nx\n{}", marker(fp, panel))
        };
        let ex = vec![
            comment(b("a", Some("claude")), Talk::default()),
            comment(
                fixed_body(&b("b", Some("claude+codex")), "s"),
                Talk::default(),
            ),
            comment(b("c", Some("claude+codex")), Talk::default()),
            comment(b("d", None), Talk::default()),
        ];
        let mut rows = BTreeMap::new();
        add(&mut rows, &ex);
        let got: Vec<(String, usize, usize)> = rows
            .into_values()
            .map(|r| (r.panel, r.fixed, r.open))
            .collect();
        assert_eq!(
            got,
            vec![
                ("claude".into(), 0, 1),
                ("claude+codex".into(), 1, 1),
                ("unknown".into(), 0, 1)
            ]
        );
    }
}
