//! The conversation on review threads, for the loopback fake forges: replies, reactions /
//! award emoji, resolution and permissions, kept like the services keep them.
//!
//! GitHub: `POST /repos/{o}/{r}/pulls/{n}/comments/{id}/replies` (a reply to a reply points
//! at the thread's first comment, as GitHub does), `GET
//! /repos/{o}/{r}/pulls/comments/{id}/reactions` (filtered by `content`), `GET
//! /repos/{o}/{r}/collaborators/{login}/permission` (404 for a non-collaborator), review
//! comments' `author_association` and `reactions` roll-up, and GraphQL
//! `pullRequest.reviewThreads` (paged by `after`) and `resolveReviewThread` (errors for an
//! unknown thread or a malformed document). GitLab: `POST …/discussions/{id}/notes`, `PUT
//! …/discussions/{id}` with `resolved`, `GET …/notes/{id}/award_emoji`, `GET
//! /projects/{id}/members/all/{user_id}` (404 for a non-member).

#![allow(dead_code)]

use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};
use std::collections::HashMap;

fn reply(status: u16, body: Value) -> Response {
    (
        StatusCode::from_u16(status).unwrap(),
        [("content-type", "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// GitHub's side of the conversation.
#[derive(Debug, Default)]
pub struct GhTalk {
    /// `(comment id, login, content)`.
    pub reactions: Vec<(u64, String, String)>,
    /// First comment id of a thread → who resolved it.
    pub resolved: HashMap<u64, String>,
    /// login → `admin` / `write` / `read` (absent: not a collaborator, 404).
    pub permissions: HashMap<String, String>,
    /// GraphQL documents received (to validate against GitHub's schema).
    pub graphql: Vec<Value>,
}

fn id_of(c: &Value) -> u64 {
    c["id"].as_u64().unwrap_or(0)
}

/// The first comment of the thread `id` belongs to.
fn root_of(comments: &[Value], id: u64) -> Option<u64> {
    let c = comments.iter().find(|c| id_of(c) == id)?;
    Some(c["in_reply_to_id"].as_u64().unwrap_or(id))
}

/// GitHub REST routes of the conversation under `/repos/{o}/{r}` (`seg`: the rest), or None.
#[allow(clippy::too_many_arguments)]
pub fn github_rest(
    talk: &mut GhTalk,
    comments: &mut Vec<Value>,
    next_id: &mut u64,
    pr: u64,
    method: &Method,
    seg: &[&str],
    query: &HashMap<String, String>,
    body: Option<&Value>,
    login: &str,
) -> Option<Response> {
    let n = pr.to_string();
    Some(match (method.as_str(), seg) {
        ("POST", ["pulls", num, "comments", id, "replies"]) if *num == n => {
            let Some(text) = body.and_then(|b| b["body"].as_str()) else {
                return Some(reply(
                    422,
                    json!({"message": "Invalid request.\n\n\"body\" wasn't supplied."}),
                ));
            };
            let Some(root) = id.parse().ok().and_then(|id| root_of(comments, id)) else {
                return Some(reply(404, json!({"message": "Not Found"})));
            };
            let first = comments.iter().find(|c| id_of(c) == root).cloned().unwrap();
            *next_id += 1;
            let c = json!({"id": *next_id, "in_reply_to_id": root, "path": first["path"],
                "line": first["line"], "original_line": first["original_line"], "side": "RIGHT",
                "commit_id": first["commit_id"], "original_commit_id": first["original_commit_id"],
                "body": text, "user": {"login": login}, "author_association": "NONE",
                "reactions": rollup(&talk.reactions, *next_id)});
            comments.push(c.clone());
            reply(201, c)
        }
        ("GET", ["pulls", "comments", id, "reactions"]) => {
            let Ok(id) = id.parse::<u64>() else {
                return Some(reply(404, json!({"message": "Not Found"})));
            };
            if !comments.iter().any(|c| id_of(c) == id) {
                return Some(reply(404, json!({"message": "Not Found"})));
            }
            let want = query.get("content");
            let list: Vec<Value> = talk
                .reactions
                .iter()
                .enumerate()
                .filter(|(_, (c, _, content))| *c == id && want.is_none_or(|w| w == content))
                .map(|(i, (_, who, content))| {
                    json!({"id": i + 1, "node_id": format!("REA_{i}"), "content": content,
                        "user": {"login": who, "id": 1, "type": "User"},
                        "created_at": "2026-11-28T00:00:00Z"})
                })
                .collect();
            reply(200, Value::Array(list))
        }
        ("GET", ["collaborators", who, "permission"]) => match talk.permissions.get(*who) {
            Some(p) => reply(
                200,
                json!({"permission": p, "role_name": p, "user": {"login": who}}),
            ),
            None => reply(
                404,
                json!({"message": format!("{who} is not a user"), "status": "404"}),
            ),
        },
        _ => return None,
    })
}

/// The `reactions` roll-up of comment `id`, as GitHub embeds it in a review comment.
pub fn rollup(reactions: &[(u64, String, String)], id: u64) -> Value {
    let count = |k: &str| {
        reactions
            .iter()
            .filter(|(c, _, content)| *c == id && content == k)
            .count()
    };
    json!({"url": "", "total_count": reactions.iter().filter(|(c, _, _)| *c == id).count(),
        "+1": count("+1"), "-1": count("-1"), "laugh": 0, "hooray": 0, "confused": 0,
        "heart": 0, "rocket": 0, "eyes": 0})
}

/// GitHub GraphQL: review threads and `resolveReviewThread` (`viewer` is answered by the
/// fake itself).
pub fn github_graphql(
    talk: &mut GhTalk,
    comments: &[Value],
    pr: u64,
    repo: &str,
    body: &Value,
    login: &str,
) -> Response {
    talk.graphql.push(body.clone());
    let q = body["query"].as_str().unwrap_or("");
    let vars = &body["variables"];
    let err = |m: &str| reply(200, json!({"errors": [{"message": m}]}));
    if q.contains("resolveReviewThread") {
        let Some(root) = vars["thread"]
            .as_str()
            .and_then(|t| t.strip_prefix("PRRT_"))
            .and_then(|t| t.parse::<u64>().ok())
            .filter(|r| comments.iter().any(|c| id_of(c) == *r))
        else {
            return err("Could not resolve to a node with the global id");
        };
        talk.resolved
            .entry(root)
            .or_insert_with(|| login.to_string());
        return reply(
            200,
            json!({"data": {"resolveReviewThread": {"thread": {"id": format!("PRRT_{root}"), "isResolved": true}}}}),
        );
    }
    if !q.contains("reviewThreads") {
        return err("unsupported query");
    }
    let (owner, name) = repo.split_once('/').unwrap();
    if vars["owner"] != owner || vars["name"] != name || vars["number"] != pr {
        return reply(
            200,
            json!({"data": {"repository": null}, "errors": [{"type": "NOT_FOUND", "message": "Could not resolve to a Repository"}]}),
        );
    }
    let roots: Vec<&Value> = comments
        .iter()
        .filter(|c| c["in_reply_to_id"].is_null())
        .collect();
    let start: usize = vars["after"]
        .as_str()
        .and_then(|a| a.strip_prefix("cursor:"))
        .and_then(|a| a.parse().ok())
        .unwrap_or(0);
    let page: Vec<Value> = roots
        .iter()
        .skip(start)
        .take(100)
        .map(|c| {
            let id = id_of(c);
            let by = talk.resolved.get(&id);
            json!({"id": format!("PRRT_{id}"), "isResolved": by.is_some(),
                "resolvedBy": by.map(|l| json!({"login": l})),
                "comments": {"nodes": [{"databaseId": id}]}})
        })
        .collect();
    let end = start + page.len();
    reply(
        200,
        json!({"data": {"repository": {"pullRequest": {"reviewThreads": {
            "pageInfo": {"hasNextPage": end < roots.len(), "endCursor": format!("cursor:{end}")},
            "nodes": page}}}}}),
    )
}

/// GitLab's side of the conversation.
#[derive(Debug, Default)]
pub struct GlTalk {
    /// `(note id, user, emoji name)`.
    pub awards: Vec<(u64, Value, String)>,
    /// user id → access level (absent: not a member, 404).
    pub access: HashMap<u64, u64>,
}

/// GitLab routes of the conversation (`path` without the API prefix), or None.
#[allow(clippy::too_many_arguments)]
pub fn gitlab_route(
    talk: &mut GlTalk,
    discussions: &mut [Value],
    notes: &mut Vec<Value>,
    next_id: &mut u64,
    mr: &str,
    project: &str,
    method: &Method,
    path: &str,
    body: Option<&Value>,
    me: Value,
) -> Option<Response> {
    if let Some(user) = path
        .strip_prefix(&format!("{project}/members/all/"))
        .filter(|_| *method == Method::GET)
    {
        let id: u64 = user.parse().ok()?;
        return Some(match talk.access.get(&id) {
            Some(level) => reply(
                200,
                json!({"id": id, "username": format!("user{id}"), "access_level": level, "state": "active"}),
            ),
            None => reply(404, json!({"message": "404 Not found"})),
        });
    }
    let rest = path.strip_prefix(mr)?;
    let seg: Vec<&str> = rest.trim_start_matches('/').split('/').collect();
    Some(match (method.as_str(), seg.as_slice()) {
        ("GET", ["notes", id, "award_emoji"]) => {
            let id: u64 = id.parse().ok()?;
            let list: Vec<Value> = talk
                .awards
                .iter()
                .enumerate()
                .filter(|(_, (n, _, _))| *n == id)
                .map(|(i, (_, user, name))| {
                    json!({"id": i + 1, "name": name, "user": user, "awardable_id": id,
                        "awardable_type": "Note"})
                })
                .collect();
            reply(200, Value::Array(list))
        }
        ("POST", ["discussions", d, "notes"]) => {
            let Some(text) = body.and_then(|b| b["body"].as_str()) else {
                return Some(reply(400, json!({"error": "body is missing"})));
            };
            let Some(disc) = discussions.iter_mut().find(|x| x["id"] == *d) else {
                return Some(reply(404, json!({"message": "404 Not found"})));
            };
            *next_id += 1;
            let note = json!({"id": *next_id, "body": text, "system": false,
                "type": "DiffNote", "author": me, "resolvable": true, "resolved": false});
            disc["notes"].as_array_mut().unwrap().push(note.clone());
            notes.push(note.clone());
            reply(201, note)
        }
        ("PUT", ["discussions", d]) => {
            let Some(resolved) = body.and_then(|b| b["resolved"].as_bool()) else {
                return Some(reply(400, json!({"error": "resolved is missing"})));
            };
            let Some(disc) = discussions.iter_mut().find(|x| x["id"] == *d) else {
                return Some(reply(404, json!({"message": "404 Not found"})));
            };
            set_resolved(disc, resolved, &me);
            reply(200, disc.clone())
        }
        _ => return None,
    })
}

/// Resolve (or reopen) every note of a discussion, as `by`.
pub fn set_resolved(disc: &mut Value, resolved: bool, by: &Value) {
    for n in disc["notes"].as_array_mut().unwrap() {
        n["resolvable"] = json!(true);
        n["resolved"] = json!(resolved);
        n["resolved_by"] = if resolved { by.clone() } else { Value::Null };
    }
}
