//! GitHub (REST): the sticky summary issue comment, one `COMMENT` review with the new inline
//! comments on right-side lines of the PR diff (as the PR's `files` API reports it), and the
//! "fixed" / "not raised again" edits of earlier arev review comments (fixed only when the
//! compare API's diff from the comment's `original_commit_id` to the head changes its line).
//! Only comments authored by the token's own identity (`GET /user`, or GraphQL `viewer` for
//! a GitHub App installation token such as Actions' `GITHUB_TOKEN`) count as arev's.

use super::build::{check_head, is_summary, short_sha};
use super::diff::{right_lines, RightLines};
use super::error::PublishError;
use super::github_talk::{answer, read_talk, Gate};
use super::http::{Api, Method, RetryPolicy, Secret};
use super::model::Payload;
use super::plan::{gone, plan, Existing, Plan, Published};
use super::since::{changed_ids, no_diff, FileDiff, MAX_COMPARE_BYTES};
use super::talk::DismissBy;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// A client for GitHub's REST API at `api_url` with `token`.
pub fn client(api_url: &str, token: String, policy: RetryPolicy, dry_run: bool) -> Api {
    Api::new(
        api_url,
        Secret::new("authorization", "Bearer ", token),
        vec![
            ("accept", "application/vnd.github+json".into()),
            ("x-github-api-version", "2022-11-28".into()),
        ],
        policy,
        dry_run,
    )
}

fn field<'a>(v: &'a Value, key: &str, path: &str) -> Result<&'a Value, PublishError> {
    v.get(key).ok_or_else(|| PublishError::BadAnswer {
        method: Method::GET,
        path: path.to_string(),
        message: format!(
            "no `{key}` in {}",
            v.to_string().chars().take(120).collect::<String>()
        ),
    })
}

/// The GraphQL endpoint of the REST API at `api_url` (`GITHUB_GRAPHQL_URL` in Actions):
/// `https://api.github.com/graphql`, GHES `https://host/api/graphql`.
pub fn graphql_url(api_url: &str) -> String {
    match api_url.strip_suffix("/v3") {
        Some(api) => format!("{api}/graphql"),
        None => format!("{api_url}/graphql"),
    }
}

/// The login the token publishes as: `GET /user`; an installation token (403 there) is a
/// bot, whose login GraphQL's `viewer` gives (`github-actions` → `github-actions[bot]`, as
/// its comments are authored).
pub fn identity(api: &Api, graphql: &str) -> Result<String, PublishError> {
    match api.get("/user") {
        Ok(u) => u
            .get("login")
            .and_then(Value::as_str)
            .map(String::from)
            .ok_or_else(|| PublishError::BadAnswer {
                method: Method::GET,
                path: "/user".into(),
                message: "no `login`".into(),
            }),
        Err(PublishError::Http { status: 403, .. }) => {
            let v = api.post_to(
                graphql,
                &json!({"query": "query { viewer { __typename login } }"}),
            )?;
            let login = v.pointer("/data/viewer/login").and_then(Value::as_str);
            let kind = v.pointer("/data/viewer/__typename").and_then(Value::as_str);
            match (login, kind) {
                (Some(l), Some("Bot")) if !l.ends_with("[bot]") => Ok(format!("{l}[bot]")),
                (Some(l), _) => Ok(l.to_string()),
                _ => Err(PublishError::BadAnswer {
                    method: Method::POST,
                    path: "/graphql".into(),
                    message: "no `data.viewer.login`".into(),
                }),
            }
        }
        Err(e) => Err(e),
    }
}

/// Whether a comment was written by `me`.
fn by(c: &Value, me: &str) -> bool {
    c.pointer("/user/login")
        .and_then(Value::as_str)
        .is_some_and(|l| l.eq_ignore_ascii_case(me))
}

/// Publish `payload` to its pull request, as `me` (the token's login); `graphql` is the
/// GraphQL endpoint (threads, resolution); `dismiss_by` who may dismiss a finding.
pub fn publish(
    api: &Api,
    graphql: &str,
    payload: &Payload,
    me: &str,
    dismiss_by: DismissBy,
) -> Result<Published, PublishError> {
    let repo = &payload.target.repository;
    let n = payload.target.number;
    let head = head_sha(api, payload)?;
    check_head(payload, &head)?;
    let diff = pr_diff(api, repo, n)?;
    let existing = threads(api, graphql, repo, n, me, dismiss_by)?;
    let changed = changed_ids(&gone(payload, &existing), &head, |base| {
        compare(api, repo, base, &head)
    })?;
    let plan = plan(payload, &diff, &existing, &head, &changed);
    let summary = sticky_summary(api, repo, n, &plan.summary_body(payload), me)?;
    // 2. One review with the new inline comments.
    if !plan.post.is_empty() {
        post_review(api, repo, n, &head, &plan)?;
    }
    // 3. The conversation: one reply per event per thread ("Fixed in", dismissed), and the
    // fixed findings' threads resolved.
    answer(api, graphql, repo, n, &plan)?;
    // 4. Earlier comments whose finding is gone: say so ("Fixed" or not raised again). The
    // edit closes the comment, so it comes last (a retry still replies and resolves).
    for f in &plan.fixed {
        api.write(
            Method::PATCH,
            &format!("/repos/{repo}/pulls/comments/{}", f.existing.id),
            &json!({ "body": f.body }),
        )?;
    }
    Ok(plan.published(&head, summary))
}

/// The PR's inline comments that open threads, with the conversation on arev's own.
pub fn threads(
    api: &Api,
    graphql: &str,
    repo: &str,
    n: u64,
    me: &str,
    dismiss_by: DismissBy,
) -> Result<Vec<Existing>, PublishError> {
    let (mut existing, all) = earlier_comments(api, repo, n, me)?;
    read_talk(
        &mut Gate::new(api, repo, dismiss_by),
        graphql,
        n,
        me,
        &all,
        &mut existing,
    )?;
    Ok(existing)
}

/// The PR's head commit: the payload's, or GitHub's.
fn head_sha(api: &Api, payload: &Payload) -> Result<String, PublishError> {
    let repo = &payload.target.repository;
    let n = payload.target.number;
    Ok(match &payload.target.head_sha {
        Some(h) => h.clone(),
        None => {
            let path = format!("/repos/{repo}/pulls/{n}");
            let pr = api.get(&path)?;
            match pr.pointer("/head/sha").and_then(Value::as_str) {
                Some(h) => h.to_string(),
                None => {
                    return Err(PublishError::BadAnswer {
                        method: Method::GET,
                        path,
                        message: "no head.sha".into(),
                    })
                }
            }
        }
    })
}

/// The PR's diff as GitHub sees it: only its right-side lines take inline comments.
fn pr_diff(api: &Api, repo: &str, n: u64) -> Result<BTreeMap<String, RightLines>, PublishError> {
    let files_path = format!("/repos/{repo}/pulls/{n}/files?per_page=100");
    let mut diff: BTreeMap<String, RightLines> = BTreeMap::new();
    for f in api.get_all(&files_path)? {
        let name = field(&f, "filename", &files_path)?
            .as_str()
            .unwrap_or_default()
            .to_string();
        // A large or binary file's `patch` is omitted: no line of it can take a comment.
        let patch = f.get("patch").and_then(Value::as_str).unwrap_or("");
        diff.insert(name, right_lines(patch));
    }
    Ok(diff)
}

/// The compare API's diff from `base` (a comment's commit) to `head`, by file; None when
/// GitHub has none for it (an unknown commit, an answer over the cap) or `base` is not an
/// ancestor of `head` (the diff's old side would not be the comment's commit). One page of
/// commits: the files come with the first page whatever its size.
fn compare(
    api: &Api,
    repo: &str,
    base: &str,
    head: &str,
) -> Result<Option<Vec<FileDiff>>, PublishError> {
    let path = format!("/repos/{repo}/compare/{base}...{head}?per_page=1");
    let v = match api.get_capped(&path, MAX_COMPARE_BYTES) {
        Ok(v) => v,
        Err(e) if no_diff(&e) => return Ok(None),
        Err(e) => return Err(e),
    };
    let straight = v.get("status").and_then(Value::as_str) == Some("ahead")
        && v.pointer("/merge_base_commit/sha").and_then(Value::as_str) == Some(base);
    if !straight {
        return Ok(None);
    }
    let files = v.get("files").and_then(Value::as_array);
    Ok(Some(
        files
            .into_iter()
            .flatten()
            .filter_map(|f| {
                let status = f.get("status").and_then(Value::as_str).unwrap_or("");
                // A copy leaves its source as it was (a change to it is its own entry).
                if status == "copied" {
                    return None;
                }
                let old_path = f
                    .get("previous_filename")
                    .or_else(|| f.get("filename"))
                    .and_then(Value::as_str)?;
                Some(FileDiff {
                    old_path: old_path.to_string(),
                    deleted: status == "removed",
                    patch: f.get("patch").and_then(Value::as_str).map(String::from),
                })
            })
            .collect(),
    ))
}

/// Earlier inline comments that open their threads (arev's carry a fingerprint marker),
/// with the commit each was made on and its line there; and every review comment as listed
/// (replies are read from them).
fn earlier_comments(
    api: &Api,
    repo: &str,
    n: u64,
    me: &str,
) -> Result<(Vec<Existing>, Vec<Value>), PublishError> {
    let comments_path = format!("/repos/{repo}/pulls/{n}/comments?per_page=100");
    let mut existing = vec![];
    let all = api.get_all(&comments_path)?;
    for c in &all {
        // arev's comments are its own and open their threads: another author's (a copy of a
        // marker) or a reply (someone quoting one) is not arev's.
        if !by(c, me) || c.get("in_reply_to_id").is_some_and(|v| !v.is_null()) {
            continue;
        }
        let id = field(c, "id", &comments_path)?.as_u64().unwrap_or(0);
        let text = |k: &str| c.get(k).and_then(Value::as_str).map(String::from);
        let number = |k: &str| {
            c.get(k)
                .and_then(Value::as_u64)
                .and_then(|l| u32::try_from(l).ok())
        };
        // The line where the comment was made (it holds in that commit), else where GitHub
        // shows it now.
        let (commit, line) = match (text("original_commit_id"), number("original_line")) {
            (Some(sha), Some(l)) => (Some(sha), Some(l)),
            _ => (text("commit_id"), number("line")),
        };
        existing.push(Existing {
            id,
            thread: None,
            path: c
                .get("path")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            body: c
                .get("body")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            commit,
            line,
            talk: Default::default(),
        });
    }
    Ok((existing, all))
}

/// The sticky summary (step 1): the first issue comment that starts with the marker,
/// edited to `body` (or created); whether it was `created`, `updated` or `unchanged`.
/// Only arev's own comments (by `me`) count.
fn sticky_summary(
    api: &Api,
    repo: &str,
    n: u64,
    body: &str,
    me: &str,
) -> Result<&'static str, PublishError> {
    let issue_path = format!("/repos/{repo}/issues/{n}/comments?per_page=100");
    let sticky = api.get_all(&issue_path)?.into_iter().find(|c| {
        by(c, me)
            && c.get("body")
                .and_then(Value::as_str)
                .is_some_and(is_summary)
    });
    Ok(match sticky {
        Some(c) if c.get("body").and_then(Value::as_str) == Some(body) => "unchanged",
        Some(c) => {
            let id = field(&c, "id", &issue_path)?.as_u64().unwrap_or(0);
            api.write(
                Method::PATCH,
                &format!("/repos/{repo}/issues/comments/{id}"),
                &json!({ "body": body }),
            )?;
            "updated"
        }
        None => {
            api.write(
                Method::POST,
                &format!("/repos/{repo}/issues/{n}/comments"),
                &json!({ "body": body }),
            )?;
            "created"
        }
    })
}

/// One `COMMENT` review at `head` with the plan's new inline comments.
fn post_review(
    api: &Api,
    repo: &str,
    n: u64,
    head: &str,
    plan: &Plan<'_>,
) -> Result<(), PublishError> {
    let comments: Vec<Value> = plan
        .post
        .iter()
        .map(|p| {
            json!({
                "path": p.comment.path,
                "line": p.comment.line,
                "side": "RIGHT",
                "body": p.comment.body,
            })
        })
        .collect();
    let short = short_sha(head);
    api.write(
        Method::POST,
        &format!("/repos/{repo}/pulls/{n}/reviews"),
        &json!({
            "commit_id": head,
            "event": "COMMENT",
            "body": format!(
                "**arev**: {} new finding(s) at {short}. The arev summary comment has the whole report.",
                plan.post.len()
            ),
            "comments": comments,
        }),
    )?;
    Ok(())
}
