//! Loopback fake of GitLab's REST API v4, keeping state like the service: one merge request
//! with versions (base/start/head shas, newest first) and diffs, notes and discussions with
//! ids; `per_page`/`page` pagination with absolute `Link` URLs; 401 for a bad
//! `PRIVATE-TOKEN`; 400 for a diff position that is not on the latest version or not on a
//! line of the diff (a context line must name its `old_line` too, an added line must not);
//! injected faults for the next N matching requests. The repository compare endpoint
//! (`GET /projects/:id/repository/compare?from=&to=&straight=`) answers from a real git
//! repository when one is served (`serve_repo`), in the shape of GitLab's `Compare` entity
//! (`commit`, `commits`, `diffs` with hunks, `compare_timeout`, `compare_same_ref`,
//! `web_url`); an unknown ref (or no repository) is GitLab's `404 Ref Not Found`. Every
//! request is recorded.

#![allow(dead_code)]

use crate::background::{bind, Background};
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::Router;
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

pub const TOKEN: &str = "glpat-fakeToken0123456789abc";
/// The project, by path (sent URL-encoded as one segment).
pub const PROJECT: &str = "group/widgets";
pub const PREFIX: &str = "/api/v4";
/// The user `TOKEN` belongs to (`GET /user`), the author of every note arev writes.
pub const BOT_ID: u64 = 900;
pub const BOT_USERNAME: &str = "arev-bot";

/// Another user's author record (ids apart from the bot's).
fn author(username: &str) -> Value {
    let id = if username == BOT_USERNAME {
        BOT_ID
    } else {
        100 + username.bytes().map(u64::from).sum::<u64>() % 700
    };
    json!({"id": id, "username": username})
}

#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    pub path: String,
    pub query: HashMap<String, String>,
    pub body: Option<Value>,
    pub status: u16,
    /// The credential headers as sent (`private-token`, `job-token`, `authorization`).
    pub credentials: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct Fault {
    pub method: &'static str,
    pub path_ends_with: String,
    pub status: u16,
    pub headers: Vec<(&'static str, String)>,
    pub times: usize,
}

#[derive(Debug, Default)]
pub struct GlState {
    pub iid: u64,
    /// Newest first, as the versions API lists them.
    pub versions: Vec<Value>,
    pub diffs: Vec<Value>,
    pub notes: Vec<Value>,
    pub discussions: Vec<Value>,
    /// Award emoji and members (`fake_talk`).
    pub talk: crate::fake_talk::GlTalk,
    pub next_id: u64,
    pub faults: Vec<Fault>,
    pub requests: Vec<Request>,
    /// The repository the compare endpoint answers from.
    pub repo: Option<PathBuf>,
    /// Other merge requests of the project (no discussions): `(iid, state)` with GitLab's
    /// states (`opened`, `closed`, `merged`), listed with `!iid`.
    pub other_mrs: Vec<(u64, &'static str)>,
}

pub struct FakeGitlab {
    pub addr: SocketAddr,
    pub state: Arc<Mutex<GlState>>,
    _server: Background,
}

/// new line → old line (None for an added line), for every right-side line of a diff.
pub fn right_side(diff: &str) -> BTreeMap<u64, Option<u64>> {
    let mut out = BTreeMap::new();
    let (mut old, mut new, mut in_hunk) = (0u64, 0u64, false);
    for l in diff.lines() {
        if let Some(rest) = l.strip_prefix("@@ -") {
            let mut it = rest.split(" +");
            old = it
                .next()
                .unwrap()
                .split(',')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            new = it
                .next()
                .unwrap()
                .split([',', ' '])
                .next()
                .unwrap()
                .parse()
                .unwrap();
            in_hunk = true;
        } else if !in_hunk || l.starts_with('\\') {
        } else if l.starts_with('+') {
            out.insert(new, None);
            new += 1;
        } else if l.starts_with('-') {
            old += 1;
        } else {
            out.insert(new, Some(old));
            old += 1;
            new += 1;
        }
    }
    out
}

impl FakeGitlab {
    /// MR `!iid` with one version at `head` and the diff `files` (`(path, diff)`).
    pub fn start(iid: u64, head: &str, files: &[(&str, &str)]) -> FakeGitlab {
        let state = Arc::new(Mutex::new(GlState {
            iid,
            diffs: files
                .iter()
                .map(|(p, d)| {
                    json!({"old_path": p, "new_path": p, "diff": d, "new_file": false,
                    "renamed_file": false, "deleted_file": false})
                })
                .collect(),
            next_id: 500,
            ..Default::default()
        }));
        let (listener, addr) = bind();
        let app = Router::new()
            .fallback(handle)
            .with_state((state.clone(), addr));
        let fake = FakeGitlab {
            addr,
            state,
            _server: Background::spawn("fake-gitlab", listener, app),
        };
        fake.push(head);
        fake
    }

    pub fn api_url(&self) -> String {
        format!("http://{}{PREFIX}", self.addr)
    }

    /// Answer the compare endpoint from the git repository at `root`.
    /// Another merge request of the project, without discussions (GitLab's `state`).
    pub fn add_merge_request(&self, iid: u64, state: &'static str) {
        self.state.lock().unwrap().other_mrs.push((iid, state));
    }

    pub fn serve_repo(&self, root: &std::path::Path) {
        self.state.lock().unwrap().repo = Some(root.to_path_buf());
    }

    /// A new push: a new MR version on top (base stays, start is the target branch tip).
    pub fn push(&self, head: &str) {
        let mut s = self.state.lock().unwrap();
        s.next_id += 1;
        let id = s.next_id;
        s.versions.insert(
            0,
            json!({"id": id, "head_commit_sha": head,
            "base_commit_sha": "b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0",
            "start_commit_sha": "5757575757575757575757575757575757575757",
            "state": "collected"}),
        );
    }

    pub fn requests(&self) -> Vec<Request> {
        self.state.lock().unwrap().requests.clone()
    }

    pub fn notes(&self) -> Vec<Value> {
        self.state.lock().unwrap().notes.clone()
    }

    pub fn diff_discussions(&self) -> Vec<Value> {
        self.state
            .lock()
            .unwrap()
            .discussions
            .iter()
            .filter(|d| d["individual_note"] == false)
            .cloned()
            .collect()
    }

    pub fn fault(&self, f: Fault) {
        self.state.lock().unwrap().faults.push(f);
    }

    /// A plain MR comment by someone else.
    pub fn add_note(&self, author_name: &str, body: &str) {
        let mut s = self.state.lock().unwrap();
        s.next_id += 1;
        let id = s.next_id;
        let note = json!({"id": id, "body": body, "system": false, "author": author(author_name)});
        s.notes.push(note.clone());
        s.discussions
            .push(json!({"id": format!("{id:040x}"), "individual_note": true, "notes": [note]}));
    }
}

impl FakeGitlab {
    /// The user id the fake gives `username`.
    pub fn user_id(username: &str) -> u64 {
        author(username)["id"].as_u64().unwrap()
    }

    /// A reply by `username` in discussion `d`.
    pub fn reply_as(&self, d: &str, username: &str, body: &str) {
        let mut s = self.state.lock().unwrap();
        s.next_id += 1;
        let note = json!({"id": s.next_id, "body": body, "system": false, "type": "DiffNote",
            "author": author(username), "resolvable": true, "resolved": false});
        s.notes.push(note.clone());
        let disc = s.discussions.iter_mut().find(|x| x["id"] == d).unwrap();
        disc["notes"].as_array_mut().unwrap().push(note);
    }

    /// An award emoji (`thumbsdown`, …) by `username` on note `id`.
    pub fn award(&self, id: u64, username: &str, name: &str) {
        let mut s = self.state.lock().unwrap();
        s.talk.awards.push((id, author(username), name.into()));
    }

    /// `username` resolves discussion `d`.
    pub fn resolve_as(&self, d: &str, username: &str) {
        let mut s = self.state.lock().unwrap();
        let disc = s.discussions.iter_mut().find(|x| x["id"] == d).unwrap();
        crate::fake_talk::set_resolved(disc, true, &author(username));
    }

    /// `username`'s access level in the project (30: Developer, 20: Reporter).
    pub fn grant(&self, username: &str, level: u64) {
        let mut s = self.state.lock().unwrap();
        s.talk.access.insert(Self::user_id(username), level);
    }
}

fn reply(status: u16, body: Value) -> Response {
    (
        StatusCode::from_u16(status).unwrap(),
        [("content-type", "application/json")],
        body.to_string(),
    )
        .into_response()
}

fn page_of(
    items: &[Value],
    query: &HashMap<String, String>,
    addr: SocketAddr,
    path: &str,
) -> Response {
    let per_page: usize = query
        .get("per_page")
        .and_then(|v| v.parse().ok())
        .unwrap_or(20)
        .clamp(1, 100);
    let page: usize = query
        .get("page")
        .and_then(|v| v.parse().ok())
        .unwrap_or(1)
        .max(1);
    let last = items.len().div_ceil(per_page).max(1);
    let chunk: Vec<Value> = items
        .iter()
        .skip((page - 1) * per_page)
        .take(per_page)
        .cloned()
        .collect();
    let mut r = reply(200, Value::Array(chunk));
    if page < last {
        // The other parameters stay in the links, as GitLab keeps them.
        let mut kept: Vec<String> = query
            .iter()
            .filter(|(k, _)| *k != "per_page" && *k != "page")
            .map(|(k, v)| format!("&{k}={v}"))
            .collect();
        kept.sort();
        let kept = kept.concat();
        let url =
            |p: usize| format!("http://{addr}{PREFIX}{path}?page={p}&per_page={per_page}{kept}");
        let link = format!(
            "<{}>; rel=\"next\", <{}>; rel=\"first\", <{}>; rel=\"last\"",
            url(page + 1),
            url(1),
            url(last)
        );
        r.headers_mut().insert("link", link.parse().unwrap());
        r.headers_mut()
            .insert("x-next-page", (page + 1).to_string().parse().unwrap());
    }
    r
}

async fn handle(
    State((state, addr)): State<(Arc<Mutex<GlState>>, SocketAddr)>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let mut s = state.lock().unwrap();
    let path = uri
        .path()
        .strip_prefix(PREFIX)
        .unwrap_or(uri.path())
        .to_string();
    let query: HashMap<String, String> = uri
        .query()
        .unwrap_or("")
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let json_body: Option<Value> = if body.is_empty() {
        None
    } else {
        Some(serde_json::from_slice(&body).unwrap_or(Value::String("<not JSON>".into())))
    };
    let credentials = ["private-token", "job-token", "authorization"]
        .iter()
        .filter_map(|h| headers.get(*h).and_then(|v| v.to_str().ok()))
        .map(String::from)
        .collect();
    let resp = route(
        &mut s,
        addr,
        &method,
        &path,
        &query,
        &headers,
        json_body.as_ref(),
    );
    s.requests.push(Request {
        method: method.to_string(),
        path,
        query,
        body: json_body,
        status: resp.status().as_u16(),
        credentials,
    });
    resp
}

/// `GET /projects/:id/merge_requests`: `!iid` (opened) and the other merge requests in
/// `state` (GitLab's default `all`), newest (highest iid) first, in the shape of GitLab's
/// `MergeRequestBasic` entity (the fields arev reads and their neighbours).
fn mr_list(s: &GlState, query: &HashMap<String, String>) -> Vec<Value> {
    let want = query.get("state").map_or("all", String::as_str);
    let mut mrs: Vec<(u64, &str)> = vec![(s.iid, "opened")];
    mrs.extend(s.other_mrs.iter().copied());
    mrs.sort_by_key(|m| std::cmp::Reverse(m.0));
    mrs.into_iter()
        .filter(|(_, state)| want == "all" || want == *state)
        .map(|(iid, state)| {
            json!({"id": 7000 + iid, "iid": iid, "project_id": 42, "title": format!("MR {iid}"),
                "description": "", "state": state,
                "created_at": format!("2026-11-{:02}T10:00:00.000Z", iid.min(28)),
                "updated_at": "2026-11-28T10:00:00.000Z",
                "merged_at": (state == "merged").then_some("2026-11-28T10:00:00.000Z"),
                "closed_at": (state == "closed").then_some("2026-11-28T10:00:00.000Z"),
                "target_branch": "main", "source_branch": format!("feature-{iid}"),
                "author": author("dev"), "draft": false, "merge_status": "can_be_merged",
                "web_url": format!("https://gitlab.example/{PROJECT}/-/merge_requests/{iid}")})
        })
        .collect()
}

fn bad_position(why: &str) -> Response {
    reply(
        400,
        json!({"message": format!("400 Bad request - Note {{:line_code=>[\"can't be blank\", \"must be a valid line code\"]}} ({why})")}),
    )
}

fn route(
    s: &mut GlState,
    addr: SocketAddr,
    method: &Method,
    path: &str,
    query: &HashMap<String, String>,
    headers: &HeaderMap,
    body: Option<&Value>,
) -> Response {
    if let Some(f) = s
        .faults
        .iter_mut()
        .find(|f| f.times > 0 && f.method == method.as_str() && path.ends_with(&f.path_ends_with))
    {
        f.times -= 1;
        let mut r = reply(f.status, json!({"message": "injected"}));
        for (k, v) in &f.headers {
            r.headers_mut().insert(*k, v.parse().unwrap());
        }
        return r;
    }
    if headers.get("private-token").and_then(|v| v.to_str().ok()) != Some(TOKEN) {
        return reply(401, json!({"message": "401 Unauthorized"}));
    }
    if *method == Method::GET && path == "/user" {
        return reply(200, author(BOT_USERNAME));
    }
    let project = format!("/projects/{}", PROJECT.replace('/', "%2F"));
    if *method == Method::GET && path == format!("{project}/repository/compare") {
        return compare(s, addr, query);
    }
    if *method == Method::GET && path == format!("{project}/merge_requests") {
        let items = mr_list(s, query);
        return page_of(&items, query, addr, path);
    }
    if let Some(n) = path
        .strip_prefix(&format!("{project}/merge_requests/"))
        .and_then(|r| r.strip_suffix("/discussions"))
    {
        if *method == Method::GET && s.other_mrs.iter().any(|(o, _)| o.to_string() == n) {
            return page_of(&[], query, addr, path);
        }
    }
    let mr = format!("{project}/merge_requests/{}", s.iid);
    {
        let s = &mut *s;
        if let Some(r) = crate::fake_talk::gitlab_route(
            &mut s.talk,
            &mut s.discussions,
            &mut s.notes,
            &mut s.next_id,
            &mr,
            &project,
            method,
            path,
            body,
            author(BOT_USERNAME),
        ) {
            return r;
        }
    }
    let Some(rest) = path.strip_prefix(&mr) else {
        return reply(404, json!({"message": "404 Project Not Found"}));
    };
    let seg: Vec<&str> = rest.trim_start_matches('/').split('/').collect();
    let text = body
        .and_then(|b| b.get("body"))
        .and_then(Value::as_str)
        .map(String::from);
    s.next_id += 1;
    let new_id = s.next_id;
    match (method.as_str(), seg.as_slice()) {
        ("GET", ["versions"]) => {
            let v = s.versions.clone();
            page_of(&v, query, addr, path)
        }
        ("GET", ["diffs"]) => {
            let v = s.diffs.clone();
            page_of(&v, query, addr, path)
        }
        ("GET", ["discussions"]) => {
            let v = s.discussions.clone();
            page_of(&v, query, addr, path)
        }
        ("GET", ["notes"]) => {
            let v = s.notes.clone();
            page_of(&v, query, addr, path)
        }
        ("POST", ["notes"]) => {
            let Some(text) = text else {
                return reply(400, json!({"error": "body is missing"}));
            };
            let note = json!({"id": new_id, "body": text, "system": false, "author": author(BOT_USERNAME)});
            s.notes.push(note.clone());
            s.discussions.push(
                json!({"id": format!("{new_id:040x}"), "individual_note": true, "notes": [note]}),
            );
            reply(201, s.notes.last().cloned().unwrap())
        }
        ("PUT", ["notes", id]) => {
            let Some(text) = text else {
                return reply(400, json!({"error": "body is missing"}));
            };
            update_note(s, id, &text)
        }
        ("POST", ["discussions"]) => {
            let (Some(text), Some(pos)) = (text, body.and_then(|b| b.get("position"))) else {
                return reply(400, json!({"error": "body is missing"}));
            };
            let latest = s.versions[0].clone();
            for (k, v) in [
                ("base_sha", "base_commit_sha"),
                ("start_sha", "start_commit_sha"),
                ("head_sha", "head_commit_sha"),
            ] {
                if pos[k] != latest[v] {
                    return bad_position(&format!("{k} is not the latest version's"));
                }
            }
            if pos["position_type"] != "text" {
                return bad_position("position_type");
            }
            let Some(diff) = s.diffs.iter().find(|d| d["new_path"] == pos["new_path"]) else {
                return bad_position("new_path not in the diff");
            };
            if pos["old_path"] != diff["old_path"] {
                return bad_position("old_path");
            }
            let lines = right_side(diff["diff"].as_str().unwrap_or(""));
            let new_line = pos["new_line"].as_u64().unwrap_or(0);
            match lines.get(&new_line) {
                None => return bad_position("new_line not on the diff"),
                Some(None) if !pos["old_line"].is_null() => {
                    return bad_position("old_line on an added line")
                }
                Some(Some(old)) if pos["old_line"].as_u64() != Some(*old) => {
                    return bad_position("a context line needs its old_line")
                }
                _ => {}
            }
            let note = json!({"id": new_id, "body": text, "system": false, "type": "DiffNote",
                "author": author(BOT_USERNAME), "position": pos, "resolvable": true,
                "resolved": false, "resolved_by": null});
            s.notes.push(note.clone());
            let d =
                json!({"id": format!("{new_id:040x}"), "individual_note": false, "notes": [note]});
            s.discussions.push(d.clone());
            reply(201, d)
        }
        ("PUT", ["discussions", d, "notes", id]) => {
            let Some(text) = text else {
                return reply(400, json!({"error": "body is missing"}));
            };
            if !s.discussions.iter().any(|x| x["id"] == *d) {
                return reply(404, json!({"message": "404 Not found"}));
            }
            update_note(s, id, &text)
        }
        _ => reply(404, json!({"error": "404 Not Found"})),
    }
}

/// GitLab's `Commit` entity for `sha` of the served repository.
fn commit_entity(repo: &std::path::Path, addr: SocketAddr, sha: &str) -> Value {
    let c = crate::fake_git::commit_info(repo, sha);
    json!({
        "id": sha, "short_id": &sha[..8.min(sha.len())], "created_at": c.date,
        "parent_ids": c.parents, "title": c.message.lines().next().unwrap_or(""),
        "message": c.message, "author_name": c.name, "author_email": c.email,
        "authored_date": c.date, "committer_name": c.name, "committer_email": c.email,
        "committed_date": c.date, "trailers": {}, "extended_trailers": {},
        "web_url": format!("http://{addr}/{PROJECT}/-/commit/{sha}"),
    })
}

/// `GET /projects/:id/repository/compare?from=&to=&straight=` from the served repository:
/// `straight=true` diffs `from..to` directly, else from the merge base (`from...to`).
fn compare(s: &GlState, addr: SocketAddr, query: &HashMap<String, String>) -> Response {
    let not_found = || reply(404, json!({"message": "404 Ref Not Found"}));
    let (Some(repo), Some(from), Some(to)) =
        (s.repo.as_deref(), query.get("from"), query.get("to"))
    else {
        return not_found();
    };
    let (Some(from), Some(to)) = (
        crate::fake_git::resolve(repo, from),
        crate::fake_git::resolve(repo, to),
    ) else {
        return not_found();
    };
    let straight = query.get("straight").map(String::as_str) == Some("true");
    let base = if straight {
        Some(from.clone())
    } else {
        crate::fake_git::merge_base(repo, &from, &to)
    };
    let Some(base) = base else {
        return not_found();
    };
    let commits: Vec<Value> = crate::fake_git::commits_between(repo, &from, &to)
        .iter()
        .map(|c| commit_entity(repo, addr, c))
        .collect();
    let diffs: Vec<Value> = crate::fake_git::changed_files(repo, &base, &to)
        .into_iter()
        .map(|f| {
            json!({
                "diff": f.patch.unwrap_or_default(), "new_path": f.new_path,
                "old_path": f.old_path, "a_mode": f.old_mode, "b_mode": f.new_mode,
                "new_file": f.status == 'A', "renamed_file": f.status == 'R',
                "deleted_file": f.status == 'D', "generated_file": false,
            })
        })
        .collect();
    reply(
        200,
        json!({
            "commit": commits.last().cloned(),
            "commits": commits,
            "diffs": diffs,
            "compare_timeout": false,
            "compare_same_ref": from == to,
            "web_url": format!("http://{addr}/{PROJECT}/-/compare/{from}...{to}"),
        }),
    )
}

fn update_note(s: &mut GlState, id: &str, text: &str) -> Response {
    let mut found = None;
    for n in s.notes.iter_mut() {
        if n["id"].as_u64().map(|x| x.to_string()).as_deref() == Some(id) {
            n["body"] = json!(text);
            found = Some(n.clone());
        }
    }
    for d in s.discussions.iter_mut() {
        for n in d["notes"].as_array_mut().unwrap() {
            if n["id"].as_u64().map(|x| x.to_string()).as_deref() == Some(id) {
                n["body"] = json!(text);
            }
        }
    }
    match found {
        Some(n) => reply(200, n),
        None => reply(404, json!({"message": "404 Not found"})),
    }
}
