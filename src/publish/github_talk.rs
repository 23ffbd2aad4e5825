//! GitHub: the conversation on arev's own review threads — replies (REST review comments
//! with `in_reply_to_id`, their `author_association`), 👎 reactions (the comment's
//! `reactions` roll-up, then `GET …/pulls/comments/{id}/reactions?content=-1`), who may
//! dismiss (`author_association` OWNER/MEMBER/COLLABORATOR for a reply, the permission API
//! `GET …/collaborators/{login}/permission` for a reaction or a resolution), and the
//! threads' node ids and resolved state (GraphQL `pullRequest.reviewThreads`); and arev's
//! answers: a reply (`POST …/pulls/{n}/comments/{id}/replies`) and `resolveReviewThread`.
//! Everything read is bounded (pages, threads, logins checked) and validated.

use super::error::PublishError;
use super::http::{Api, Method};
use super::plan::{Existing, Plan};
use super::talk::{github_login, DismissBy, Reply, Voice};
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// The review threads GraphQL query (`tests/integration` validates it against GitHub's
/// published schema).
pub const THREADS_QUERY: &str = "query($owner: String!, $name: String!, $number: Int!, $after: String) { repository(owner: $owner, name: $name) { pullRequest(number: $number) { reviewThreads(first: 100, after: $after) { pageInfo { hasNextPage endCursor } nodes { id isResolved resolvedBy { login } comments(first: 1) { nodes { databaseId } } } } } } }";

/// The mutation that resolves one of arev's threads.
pub const RESOLVE_MUTATION: &str = "mutation($thread: ID!) { resolveReviewThread(input: {threadId: $thread}) { thread { id isResolved } } }";

/// The most pages of review threads read (100 threads each).
const MAX_THREAD_PAGES: usize = 10;
/// The most of arev's threads whose 👎 reactions are read per publish.
const MAX_REACTION_READS: usize = 100;
/// The most distinct people whose permission is asked per publish (others cannot dismiss).
const MAX_PERMISSION_CHECKS: usize = 30;

/// Who may dismiss: by `author_association` when the forge gives it, else (a reaction, a
/// resolution) by the permission API, asked once per login and bounded.
pub struct Gate<'a> {
    api: &'a Api,
    repo: &'a str,
    policy: DismissBy,
    asked: BTreeMap<String, bool>,
}

impl<'a> Gate<'a> {
    pub fn new(api: &'a Api, repo: &'a str, policy: DismissBy) -> Self {
        Self {
            api,
            repo,
            policy,
            asked: BTreeMap::new(),
        }
    }

    /// Whether the author of a comment with `association` may dismiss.
    fn by_association(&self, association: Option<&str>) -> bool {
        self.policy == DismissBy::Anyone
            || matches!(association, Some("OWNER" | "MEMBER" | "COLLABORATOR"))
    }

    /// Whether `login` has write access (admin, maintain or write), asked of the forge.
    fn by_permission(&mut self, login: &str) -> Result<bool, PublishError> {
        if self.policy == DismissBy::Anyone {
            return Ok(true);
        }
        if let Some(a) = self.asked.get(login) {
            return Ok(*a);
        }
        // An app (`…[bot]`) is nobody's maintainer here; past the bound, nobody is asked.
        if login.ends_with("[bot]") || self.asked.len() >= MAX_PERMISSION_CHECKS {
            return Ok(false);
        }
        let path = format!("/repos/{}/collaborators/{login}/permission", self.repo);
        let allowed = match self.api.get_capped(&path, 1 << 20) {
            Ok(v) => matches!(
                v.get("permission").and_then(Value::as_str),
                Some("admin" | "maintain" | "write")
            ),
            // Not a collaborator (404), or the token may not ask (403): not allowed.
            Err(PublishError::Http {
                status: 403 | 404, ..
            }) => false,
            Err(e) => return Err(e),
        };
        self.asked.insert(login.to_string(), allowed);
        Ok(allowed)
    }
}

/// A validated login from a `user` object.
fn login_of(v: &Value) -> Option<String> {
    v.pointer("/user/login")
        .and_then(Value::as_str)
        .and_then(github_login)
}

/// Fill in the conversation of arev's threads in `existing` from the PR's review comments
/// (`all`, as listed), their 👎 reactions and the GraphQL threads.
/// Every request goes through `gate`'s client, for its repository.
pub fn read_talk(
    gate: &mut Gate<'_>,
    graphql: &str,
    n: u64,
    me: &str,
    all: &[Value],
    existing: &mut [Existing],
) -> Result<(), PublishError> {
    let (api, repo) = (gate.api, gate.repo);
    // GraphQL names an app by its login without `[bot]` (`github-actions`).
    let mine = |l: &str| {
        l.eq_ignore_ascii_case(me)
            || me
                .strip_suffix("[bot]")
                .is_some_and(|m| l.eq_ignore_ascii_case(m))
    };
    let arev: Vec<usize> = (0..existing.len())
        .filter(|i| existing[*i].open_fp().is_some())
        .collect();
    if arev.is_empty() {
        return Ok(());
    }
    // Replies: every comment answering one of arev's (GitHub points replies at the first
    // comment of the thread).
    let index: BTreeMap<u64, usize> = arev.iter().map(|i| (existing[*i].id, *i)).collect();
    for c in all {
        let Some(&i) = c
            .get("in_reply_to_id")
            .and_then(Value::as_u64)
            .and_then(|to| index.get(&to))
        else {
            continue;
        };
        let Some(login) = login_of(c) else {
            continue;
        };
        let allowed = !mine(&login)
            && gate.by_association(c.get("author_association").and_then(Value::as_str));
        existing[i].talk.replies.push(Reply {
            mine: mine(&login),
            author: Voice { login, allowed },
            body: c
                .get("body")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .chars()
                .take(4_000)
                .collect(),
        });
    }
    // 👎 on arev's comment: only where the roll-up counts some.
    let downs: Vec<usize> = arev
        .iter()
        .copied()
        .filter(|i| {
            all.iter().any(|c| {
                c.get("id").and_then(Value::as_u64) == Some(existing[*i].id)
                    && c.pointer("/reactions/-1")
                        .and_then(Value::as_u64)
                        .unwrap_or(0)
                        > 0
            })
        })
        .take(MAX_REACTION_READS)
        .collect();
    for i in downs {
        let path = format!(
            "/repos/{repo}/pulls/comments/{}/reactions?content=-1&per_page=100",
            existing[i].id
        );
        for r in api.get_pages(&path, 1)? {
            if r.get("content").and_then(Value::as_str) != Some("-1") {
                continue;
            }
            let Some(login) = login_of(&r).filter(|l| !mine(l)) else {
                continue;
            };
            let allowed = gate.by_permission(&login)?;
            existing[i].talk.thumbs_down.push(Voice { login, allowed });
        }
    }
    // Threads: node ids (to resolve) and who resolved them.
    let threads = review_threads(api, graphql, repo, n)?;
    for i in arev {
        let Some(t) = threads.get(&existing[i].id) else {
            continue;
        };
        existing[i].talk.thread = Some(t.id.clone());
        existing[i].talk.resolved = t.resolved;
        if let Some(login) = t.resolved_by.as_deref().filter(|l| !mine(l)) {
            let allowed = t.resolved && gate.by_permission(login)?;
            existing[i].talk.resolved_by = Some(Voice {
                login: login.to_string(),
                allowed,
            });
        }
    }
    Ok(())
}

/// One review thread as GraphQL reports it.
struct Thread {
    id: String,
    resolved: bool,
    resolved_by: Option<String>,
}

fn graphql_error(v: &Value) -> Option<String> {
    v.get("errors")
        .filter(|e| !e.is_null())
        .map(|e| e.to_string().chars().take(200).collect())
}

/// The PR's review threads by the database id of their first comment (bounded pages).
fn review_threads(
    api: &Api,
    graphql: &str,
    repo: &str,
    n: u64,
) -> Result<BTreeMap<u64, Thread>, PublishError> {
    let (owner, name) = repo.split_once('/').unwrap_or((repo, ""));
    let mut out = BTreeMap::new();
    let mut after: Option<String> = None;
    for _ in 0..MAX_THREAD_PAGES {
        let v = api.post_to(
            graphql,
            &json!({"query": THREADS_QUERY,
                "variables": {"owner": owner, "name": name, "number": n, "after": after}}),
        )?;
        if let Some(e) = graphql_error(&v) {
            return Err(PublishError::BadAnswer {
                method: Method::POST,
                path: "/graphql".into(),
                message: crate::output::inert_line(&e).into_owned(),
            });
        }
        let threads = v.pointer("/data/repository/pullRequest/reviewThreads");
        for t in threads
            .and_then(|t| t.get("nodes"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let id = t.get("id").and_then(Value::as_str).filter(|id| {
                (1..=200).contains(&id.len())
                    && id
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'=')
            });
            let first = t
                .pointer("/comments/nodes/0/databaseId")
                .and_then(Value::as_u64);
            let (Some(id), Some(first)) = (id, first) else {
                continue;
            };
            out.insert(
                first,
                Thread {
                    id: id.to_string(),
                    resolved: t.get("isResolved").and_then(Value::as_bool) == Some(true),
                    resolved_by: t
                        .pointer("/resolvedBy/login")
                        .and_then(Value::as_str)
                        .and_then(github_login),
                },
            );
        }
        let page = threads.and_then(|t| t.get("pageInfo"));
        let next = page
            .and_then(|p| p.get("hasNextPage"))
            .and_then(Value::as_bool)
            == Some(true);
        after = page
            .and_then(|p| p.get("endCursor"))
            .and_then(Value::as_str)
            .filter(|c| c.len() <= 200)
            .map(String::from);
        if !next || after.is_none() {
            break;
        }
    }
    Ok(out)
}

/// arev's answers (one reply per event per thread) and the resolution of its fixed
/// findings' threads.
pub fn answer(
    api: &Api,
    graphql: &str,
    repo: &str,
    n: u64,
    plan: &Plan<'_>,
) -> Result<(), PublishError> {
    for a in &plan.answers {
        api.write(
            Method::POST,
            &format!("/repos/{repo}/pulls/{n}/comments/{}/replies", a.existing.id),
            &json!({ "body": a.body }),
        )?;
    }
    for e in &plan.resolve {
        let Some(thread) = e.talk.thread.as_deref() else {
            continue;
        };
        let v = api.write_to(
            graphql,
            &json!({"query": RESOLVE_MUTATION, "variables": {"thread": thread}}),
        )?;
        if let Some(err) = graphql_error(&v) {
            return Err(PublishError::BadAnswer {
                method: Method::POST,
                path: "/graphql".into(),
                message: crate::output::inert_line(&err).into_owned(),
            });
        }
    }
    Ok(())
}
