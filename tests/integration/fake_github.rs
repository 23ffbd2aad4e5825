//! Loopback fake of GitHub's REST API (under a GHES-style `/api/v3` prefix), keeping state
//! like the service: one pull request with its files (`patch` hunks), issue comments, review
//! comments and reviews with ids; `per_page`/`page` pagination with absolute `Link` URLs;
//! 401 for a bad token, 403 for writes with a read-only token, 422 for a review comment on a
//! line that is not on the right side of the PR diff (the whole review is rejected, as
//! GitHub does) or a comment body over 65,536 characters; and injected faults (5xx, 429
//! with `Retry-After`, a redirect) for the next N matching requests. The compare endpoint
//! (`GET /repos/{o}/{r}/compare/{base}...{head}`) answers from a real git repository when
//! one is served (`serve_repo`), in the shape GitHub's OpenAPI description gives (merge
//! base, `status`, commits paged by `per_page`/`page`, files with `patch` hunks on the first
//! page); an unknown commit (or no repository) is GitHub's 404. Review comments carry
//! `commit_id`/`original_commit_id` and `line`/`original_line`. Identities as GitHub
//! has them: `TOKEN`/`READ_ONLY_TOKEN` are installation tokens (Actions' `GITHUB_TOKEN`:
//! `GET /user` is 403, GraphQL's `viewer` is the Bot `github-actions`, comments are by
//! `github-actions[bot]`), `PAT` a user's token (`GET /user` is `reviewbot`). Every
//! request is recorded with the credential it carried.

#![allow(dead_code)]

use crate::background::{bind, Background};
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::Router;
use serde_json::{json, Value};
use std::collections::{BTreeSet, HashMap};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

pub const TOKEN: &str = "ghs_fakeWriteToken0123456789";
pub const READ_ONLY_TOKEN: &str = "ghs_fakeReadOnlyToken0123456";
pub const PAT: &str = "ghp_fakePersonalToken0123456789";
pub const BOT_LOGIN: &str = "github-actions[bot]";
pub const PAT_LOGIN: &str = "reviewbot";
pub const REPO: &str = "octo/widgets";
pub const PREFIX: &str = "/api/v3";

/// One recorded request.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    /// Path without the `/api/v3` prefix.
    pub path: String,
    pub query: HashMap<String, String>,
    pub body: Option<Value>,
    pub status: u16,
    /// The `authorization` header as sent (empty without one).
    pub auth: String,
}

/// An injected answer for the next `times` requests matching `method` and a path suffix.
#[derive(Debug, Clone)]
pub struct Fault {
    pub method: &'static str,
    pub path_ends_with: String,
    pub status: u16,
    pub headers: Vec<(&'static str, String)>,
    pub body: Value,
    pub times: usize,
}

#[derive(Debug, Default)]
pub struct GhState {
    pub pr: u64,
    pub head_sha: String,
    /// `{filename, status, patch}` as the files API returns them.
    pub files: Vec<Value>,
    pub issue_comments: Vec<Value>,
    pub review_comments: Vec<Value>,
    pub reviews: Vec<Value>,
    /// Replies' reactions, resolution and permissions (`fake_talk`).
    pub talk: crate::fake_talk::GhTalk,
    pub next_id: u64,
    pub faults: Vec<Fault>,
    pub requests: Vec<Request>,
    /// The repository the compare endpoint answers from.
    pub repo: Option<PathBuf>,
    /// Other pull requests of the repository (no comments): `(number, state, merged)`,
    /// listed with `#pr` by `GET /repos/{o}/{r}/pulls`.
    pub other_prs: Vec<(u64, &'static str, bool)>,
}

impl GhState {
    fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }
}

pub struct FakeGithub {
    pub addr: SocketAddr,
    pub state: Arc<Mutex<GhState>>,
    _server: Background,
}

/// The new-file lines on the right side of a patch (added or context), an independent
/// reading of the unified-diff format.
pub fn right_side(patch: &str) -> BTreeSet<u64> {
    let mut out = BTreeSet::new();
    let mut new_line = 0u64;
    let mut in_hunk = false;
    for l in patch.lines() {
        if let Some(rest) = l.strip_prefix("@@ -") {
            let plus = rest.split(" +").nth(1).unwrap_or("0");
            new_line = plus.split([',', ' ']).next().unwrap().parse().unwrap_or(0);
            in_hunk = true;
        } else if in_hunk && !l.starts_with('\\') && !l.starts_with('-') {
            out.insert(new_line);
            new_line += 1;
        }
    }
    out
}

impl FakeGithub {
    /// A PR `#pr` at `head_sha` whose diff is `files` (`(filename, patch)`).
    pub fn start(pr: u64, head_sha: &str, files: &[(&str, &str)]) -> FakeGithub {
        let state = Arc::new(Mutex::new(GhState {
            pr,
            head_sha: head_sha.into(),
            files: files
                .iter()
                .map(|(f, p)| json!({"filename": f, "status": "modified", "patch": p}))
                .collect(),
            next_id: 1000,
            ..Default::default()
        }));
        let (listener, addr) = bind();
        let app = Router::new()
            .fallback(handle)
            .with_state((state.clone(), addr));
        FakeGithub {
            addr,
            state,
            _server: Background::spawn("fake-github", listener, app),
        }
    }

    pub fn api_url(&self) -> String {
        format!("http://{}{PREFIX}", self.addr)
    }

    pub fn requests(&self) -> Vec<Request> {
        self.state.lock().unwrap().requests.clone()
    }

    pub fn writes(&self) -> Vec<Request> {
        self.requests()
            .into_iter()
            // A GraphQL query (the token's identity) is a read.
            .filter(|r| r.method != "GET" && r.path != "/api/graphql")
            .collect()
    }

    pub fn clear_requests(&self) {
        self.state.lock().unwrap().requests.clear();
    }

    pub fn issue_comments(&self) -> Vec<Value> {
        self.state.lock().unwrap().issue_comments.clone()
    }

    pub fn review_comments(&self) -> Vec<Value> {
        self.state.lock().unwrap().review_comments.clone()
    }

    pub fn reviews(&self) -> Vec<Value> {
        self.state.lock().unwrap().reviews.clone()
    }

    pub fn fault(&self, f: Fault) {
        self.state.lock().unwrap().faults.push(f);
    }

    pub fn clear_faults(&self) {
        self.state.lock().unwrap().faults.clear();
    }

    /// Answer the compare endpoint from the git repository at `root`.
    pub fn serve_repo(&self, root: &std::path::Path) {
        self.state.lock().unwrap().repo = Some(root.to_path_buf());
    }

    /// A new push: another head commit.
    pub fn push(&self, head_sha: &str) {
        self.state.lock().unwrap().head_sha = head_sha.into();
    }

    /// An issue comment by someone else.
    pub fn add_issue_comment(&self, login: &str, body: &str) -> u64 {
        let mut s = self.state.lock().unwrap();
        let id = s.id();
        s.issue_comments
            .push(json!({"id": id, "body": body, "user": {"login": login}}));
        id
    }

    /// A review comment by someone else.
    pub fn add_review_comment(&self, login: &str, path: &str, line: u64, body: &str) -> u64 {
        let mut s = self.state.lock().unwrap();
        let id = s.id();
        let sha = s.head_sha.clone();
        s.review_comments.push(
            json!({"id": id, "path": path, "line": line, "original_line": line, "side": "RIGHT",
            "body": body, "commit_id": sha, "original_commit_id": sha, "user": {"login": login}}),
        );
        id
    }
}

impl FakeGithub {
    /// A reply by `login` (with GitHub's `author_association` for them) in the thread of
    /// comment `to`.
    pub fn reply_as(&self, to: u64, login: &str, association: &str, body: &str) -> u64 {
        let mut s = self.state.lock().unwrap();
        let root = s
            .review_comments
            .iter()
            .find(|c| c["id"] == to)
            .map(|c| c["in_reply_to_id"].as_u64().unwrap_or(to))
            .expect("a comment to reply to");
        let first = s
            .review_comments
            .iter()
            .find(|c| c["id"] == root)
            .cloned()
            .unwrap();
        let id = s.id();
        s.review_comments
            .push(json!({"id": id, "in_reply_to_id": root,
            "path": first["path"], "line": first["line"], "side": "RIGHT",
            "commit_id": first["commit_id"], "body": body, "user": {"login": login},
            "author_association": association}));
        id
    }

    /// A reaction (`+1`, `-1`, …) by `login` on comment `id`.
    pub fn react(&self, id: u64, login: &str, content: &str) {
        let mut s = self.state.lock().unwrap();
        s.talk.reactions.push((id, login.into(), content.into()));
        let rollup = crate::fake_talk::rollup(&s.talk.reactions, id);
        if let Some(c) = s.review_comments.iter_mut().find(|c| c["id"] == id) {
            c["reactions"] = rollup;
        }
    }

    /// `login` resolves the thread of first comment `root` (GitHub lets write access do it).
    pub fn resolve_as(&self, root: u64, login: &str) {
        let mut s = self.state.lock().unwrap();
        s.talk.resolved.insert(root, login.into());
    }

    /// Whether the thread of first comment `root` is resolved, and by whom.
    pub fn resolved_by(&self, root: u64) -> Option<String> {
        self.state.lock().unwrap().talk.resolved.get(&root).cloned()
    }

    /// `login`'s permission on the repository (`admin`, `write`, `read`).
    pub fn grant(&self, login: &str, permission: &str) {
        let mut s = self.state.lock().unwrap();
        s.talk.permissions.insert(login.into(), permission.into());
    }

    /// The GraphQL documents received (`{query, variables}`).
    /// Another pull request of the repository, without comments (`state` open or closed).
    pub fn add_pull_request(&self, number: u64, state: &'static str, merged: bool) {
        self.state
            .lock()
            .unwrap()
            .other_prs
            .push((number, state, merged));
    }

    pub fn graphql_documents(&self) -> Vec<Value> {
        self.state.lock().unwrap().talk.graphql.clone()
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
        .unwrap_or(30)
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
    // The other parameters stay in the links, as GitHub keeps them.
    let mut kept: Vec<String> = query
        .iter()
        .filter(|(k, _)| *k != "per_page" && *k != "page")
        .map(|(k, v)| format!("{k}={v}&"))
        .collect();
    kept.sort();
    let kept = kept.concat();
    let url = |p: usize| format!("http://{addr}{PREFIX}{path}?{kept}per_page={per_page}&page={p}");
    let mut links = vec![];
    if page < last {
        links.push(format!("<{}>; rel=\"next\"", url(page + 1)));
        links.push(format!("<{}>; rel=\"last\"", url(last)));
    }
    if page > 1 {
        links.push(format!("<{}>; rel=\"prev\"", url(page - 1)));
        links.push(format!("<{}>; rel=\"first\"", url(1)));
    }
    let mut r = reply(200, Value::Array(chunk));
    if !links.is_empty() {
        r.headers_mut()
            .insert("link", links.join(", ").parse().unwrap());
    }
    r
}

async fn handle(
    State((state, addr)): State<(Arc<Mutex<GhState>>, SocketAddr)>,
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
    let auth = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
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
        auth,
    });
    resp
}

fn route(
    s: &mut GhState,
    addr: SocketAddr,
    method: &Method,
    path: &str,
    query: &HashMap<String, String>,
    headers: &HeaderMap,
    body: Option<&Value>,
) -> Response {
    // Injected faults first (they stand for the service failing, whoever asks).
    if let Some(f) = s
        .faults
        .iter_mut()
        .find(|f| f.times > 0 && f.method == method.as_str() && path.ends_with(&f.path_ends_with))
    {
        f.times -= 1;
        let mut r = reply(f.status, f.body.clone());
        for (k, v) in &f.headers {
            r.headers_mut().insert(*k, v.parse().unwrap());
        }
        return r;
    }
    let auth = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let token = auth.strip_prefix("Bearer ").unwrap_or("");
    if token != TOKEN && token != READ_ONLY_TOKEN && token != PAT {
        return reply(
            401,
            json!({"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest", "status": "401"}),
        );
    }
    if headers.get("user-agent").is_none() {
        return reply(
            403,
            json!({"message": "Request forbidden by administrative rules. Please make sure your request has a User-Agent header"}),
        );
    }
    if *method != Method::GET && token == READ_ONLY_TOKEN {
        return reply(
            403,
            json!({"message": "Resource not accessible by integration", "status": "403"}),
        );
    }
    let login = if token == PAT { PAT_LOGIN } else { BOT_LOGIN };
    match (method.as_str(), path) {
        ("GET", "/user") if token == PAT => {
            return reply(200, json!({"login": PAT_LOGIN, "id": 77, "type": "User"}))
        }
        ("GET", "/user") => {
            return reply(
                403,
                json!({"message": "Resource not accessible by integration", "documentation_url": "https://docs.github.com/rest/users/users#get-the-authenticated-user", "status": "403"}),
            )
        }
        ("POST", "/api/graphql") => {
            let q = body.and_then(|b| b["query"].as_str()).unwrap_or("");
            if !q.contains("viewer") {
                let s = &mut *s;
                return crate::fake_talk::github_graphql(
                    &mut s.talk,
                    &s.review_comments,
                    s.pr,
                    REPO,
                    body.unwrap_or(&Value::Null),
                    login.trim_end_matches("[bot]"),
                );
            }
            let viewer = if token == PAT {
                json!({"__typename": "User", "login": PAT_LOGIN})
            } else {
                json!({"__typename": "Bot", "login": "github-actions"})
            };
            return reply(200, json!({"data": {"viewer": viewer}}));
        }
        _ => {}
    }
    let repo = format!("/repos/{REPO}");
    let Some(rest) = path.strip_prefix(&repo) else {
        return reply(404, json!({"message": "Not Found"}));
    };
    let pr = s.pr;
    let seg: Vec<&str> = rest.trim_start_matches('/').split('/').collect();
    if let Some(r) = crate::fake_talk::github_rest(
        &mut s.talk,
        &mut s.review_comments,
        &mut s.next_id,
        pr,
        method,
        &seg,
        query,
        body,
        login,
    ) {
        return r;
    }
    let body_str = |b: Option<&Value>| {
        b.and_then(|b| b.get("body"))
            .and_then(Value::as_str)
            .map(String::from)
    };
    match (method.as_str(), seg.as_slice()) {
        ("GET", ["pulls"]) => {
            let items = pull_list(s, addr, query);
            page_of(&items, query, addr, path)
        }
        ("GET", ["pulls", n, "comments"])
            if s.other_prs.iter().any(|(o, _, _)| o.to_string() == *n) =>
        {
            page_of(&[], query, addr, path)
        }
        ("GET", ["pulls", n]) if *n == pr.to_string() => reply(
            200,
            json!({"number": pr, "state": "open", "head": {"sha": s.head_sha, "ref": "feature"}}),
        ),
        ("GET", ["pulls", n, "files"]) if *n == pr.to_string() => {
            let files = s.files.clone();
            page_of(&files, query, addr, path)
        }
        ("GET", ["compare", basehead]) => compare(s, addr, basehead, query),
        ("GET", ["pulls", n, "comments"]) if *n == pr.to_string() => {
            let c = s.review_comments.clone();
            page_of(&c, query, addr, path)
        }
        ("GET", ["issues", n, "comments"]) if *n == pr.to_string() => {
            let c = s.issue_comments.clone();
            page_of(&c, query, addr, path)
        }
        ("POST", ["issues", n, "comments"]) if *n == pr.to_string() => {
            let Some(text) = body_str(body) else {
                return reply(
                    422,
                    json!({"message": "Invalid request.\n\n\"body\" wasn't supplied."}),
                );
            };
            if text.chars().count() > 65_536 {
                return reply(
                    422,
                    json!({"message": "Validation Failed", "errors": [{"resource": "IssueComment", "code": "custom", "field": "body", "message": "body is too long (maximum is 65536 characters)"}]}),
                );
            }
            let id = s.id();
            let c = json!({"id": id, "body": text, "user": {"login": login}});
            s.issue_comments.push(c.clone());
            reply(201, c)
        }
        ("PATCH", ["issues", "comments", id]) => {
            let Some(text) = body_str(body) else {
                return reply(422, json!({"message": "Invalid request."}));
            };
            if text.chars().count() > 65_536 {
                return reply(422, json!({"message": "Validation Failed"}));
            }
            match s
                .issue_comments
                .iter_mut()
                .find(|c| c["id"].as_u64().map(|x| x.to_string()).as_deref() == Some(*id))
            {
                Some(c) => {
                    c["body"] = json!(text);
                    reply(200, c.clone())
                }
                None => reply(404, json!({"message": "Not Found"})),
            }
        }
        ("POST", ["pulls", n, "reviews"]) if *n == pr.to_string() => {
            let Some(b) = body else {
                return reply(422, json!({"message": "Invalid request."}));
            };
            let event = b["event"].as_str().unwrap_or("");
            let commit = b["commit_id"].as_str().unwrap_or("").to_string();
            if event == "COMMENT" && b["body"].as_str().unwrap_or("").is_empty() {
                return reply(
                    422,
                    json!({"message": "Unprocessable Entity", "errors": ["Body is required for COMMENT"]}),
                );
            }
            let comments = b["comments"].as_array().cloned().unwrap_or_default();
            // Every comment must sit on a right-side line of its file's patch.
            for c in &comments {
                let file = s.files.iter().find(|f| f["filename"] == c["path"]);
                let lines = file
                    .and_then(|f| f["patch"].as_str())
                    .map(right_side)
                    .unwrap_or_default();
                let line = c["line"].as_u64().unwrap_or(0);
                if c["side"] != "RIGHT" || !lines.contains(&line) {
                    return reply(
                        422,
                        json!({"message": "Unprocessable Entity", "errors": ["Line could not be resolved"], "documentation_url": "https://docs.github.com/rest/pulls/reviews#create-a-review-for-a-pull-request"}),
                    );
                }
            }
            let review_id = s.id();
            for c in comments {
                let id = s.id();
                s.review_comments
                    .push(json!({"id": id, "pull_request_review_id": review_id,
                    "path": c["path"], "line": c["line"], "original_line": c["line"],
                    "side": "RIGHT", "body": c["body"], "commit_id": commit,
                    "original_commit_id": commit, "user": {"login": login}}));
            }
            let r = json!({"id": review_id, "state": "COMMENTED", "commit_id": commit, "body": b["body"]});
            s.reviews.push(r.clone());
            reply(200, r)
        }
        ("PATCH", ["pulls", "comments", id]) => {
            let Some(text) = body_str(body) else {
                return reply(422, json!({"message": "Invalid request."}));
            };
            match s
                .review_comments
                .iter_mut()
                .find(|c| c["id"].as_u64().map(|x| x.to_string()).as_deref() == Some(*id))
            {
                Some(c) => {
                    c["body"] = json!(text);
                    reply(200, c.clone())
                }
                None => reply(404, json!({"message": "Not Found"})),
            }
        }
        _ => reply(
            404,
            json!({"message": "Not Found", "documentation_url": "https://docs.github.com/rest"}),
        ),
    }
}

/// `GET /repos/{o}/{r}/pulls`: `#pr` and the other pull requests in `state` (GitHub's
/// default `open`; `closed` includes merged ones), newest (highest number) first, each a
/// `pull-request-simple` as GitHub's OpenAPI description gives it (its example, renumbered).
fn pull_list(s: &GhState, addr: SocketAddr, query: &HashMap<String, String>) -> Vec<Value> {
    let template: Value =
        serde_json::from_str(include_str!("../fixtures/github/pull-request-simple.json")).unwrap();
    let want = query.get("state").map_or("open", String::as_str);
    let mut prs: Vec<(u64, &str, bool)> = vec![(s.pr, "open", false)];
    prs.extend(s.other_prs.iter().copied());
    prs.sort_by_key(|p| std::cmp::Reverse(p.0));
    let api = format!("http://{addr}{PREFIX}/repos/{REPO}");
    prs.into_iter()
        .filter(|(_, state, _)| want == "all" || want == *state)
        .map(|(n, state, merged)| {
            let mut v = template.clone();
            v["number"] = json!(n);
            v["id"] = json!(5000 + n);
            v["url"] = json!(format!("{api}/pulls/{n}"));
            v["state"] = json!(state);
            v["created_at"] = json!(format!("2026-11-{:02}T10:00:00Z", n.min(28)));
            let closed = (state == "closed").then_some("2026-11-28T10:00:00Z");
            v["closed_at"] = json!(closed);
            v["merged_at"] = json!(closed.filter(|_| merged));
            if n == s.pr {
                v["head"]["sha"] = json!(s.head_sha);
            }
            v
        })
        .collect()
}

/// GitHub's `commit` object for `sha` of the served repository.
fn commit_object(repo: &std::path::Path, addr: SocketAddr, sha: &str) -> Value {
    let c = crate::fake_git::commit_info(repo, sha);
    let api = format!("http://{addr}{PREFIX}/repos/{REPO}");
    let web = format!("http://{addr}/{REPO}");
    let who = json!({"name": c.name, "email": c.email, "date": c.date});
    json!({
        "url": format!("{api}/commits/{sha}"), "sha": sha, "node_id": format!("C_{sha}"),
        "html_url": format!("{web}/commit/{sha}"),
        "comments_url": format!("{api}/commits/{sha}/comments"),
        "commit": {"url": format!("{api}/git/commits/{sha}"), "author": who, "committer": who,
            "message": c.message, "comment_count": 0,
            "tree": {"sha": c.tree, "url": format!("{api}/git/trees/{}", c.tree)}},
        "author": {}, "committer": {},
        "parents": c.parents.iter().map(|p| json!({"sha": p, "url": format!("{api}/commits/{p}")})).collect::<Vec<_>>(),
    })
}

/// `GET /repos/{o}/{r}/compare/{base}...{head}` from the served repository.
fn compare(
    s: &GhState,
    addr: SocketAddr,
    basehead: &str,
    query: &HashMap<String, String>,
) -> Response {
    let not_found = || {
        reply(
            404,
            json!({"message": "Not Found", "documentation_url": "https://docs.github.com/rest/commits/commits#compare-two-commits", "status": "404"}),
        )
    };
    let (Some(repo), Some((b, h))) = (s.repo.as_deref(), basehead.split_once("...")) else {
        return not_found();
    };
    let (Some(base), Some(head)) = (
        crate::fake_git::resolve(repo, b),
        crate::fake_git::resolve(repo, h),
    ) else {
        return not_found();
    };
    let Some(mb) = crate::fake_git::merge_base(repo, &base, &head) else {
        return reply(
            404,
            json!({"message": format!("No common ancestor between {b} and {h}."), "status": "404"}),
        );
    };
    let status = if base == head {
        "identical"
    } else if mb == base {
        "ahead"
    } else if mb == head {
        "behind"
    } else {
        "diverged"
    };
    let ahead = crate::fake_git::commits_between(repo, &base, &head);
    let behind = crate::fake_git::commits_between(repo, &head, &base);
    // Without a paging parameter: up to 250 commits; with one, pages (files on page 1 only).
    let paged = query.contains_key("per_page") || query.contains_key("page");
    let per_page: usize = query
        .get("per_page")
        .and_then(|v| v.parse().ok())
        .unwrap_or(if paged { 30 } else { 250 })
        .clamp(1, 250);
    let page: usize = query
        .get("page")
        .and_then(|v| v.parse().ok())
        .unwrap_or(1)
        .max(1);
    let commits: Vec<Value> = ahead
        .iter()
        .skip((page - 1) * per_page)
        .take(per_page)
        .map(|c| commit_object(repo, addr, c))
        .collect();
    let web = format!("http://{addr}/{REPO}");
    let api = format!("http://{addr}{PREFIX}/repos/{REPO}");
    let files: Vec<Value> = if page == 1 {
        crate::fake_git::changed_files(repo, &mb, &head)
            .into_iter()
            .take(300)
            .map(|f| {
                let status = match f.status {
                    'A' => "added",
                    'D' => "removed",
                    'R' => "renamed",
                    _ => "modified",
                };
                let blob = f.blob.clone();
                let mut e = json!({
                    "sha": blob, "filename": f.new_path, "status": status,
                    "additions": f.additions, "deletions": f.deletions,
                    "changes": f.additions + f.deletions,
                    "blob_url": format!("{web}/blob/{head}/{}", f.new_path),
                    "raw_url": format!("{web}/raw/{head}/{}", f.new_path),
                    "contents_url": format!("{api}/contents/{}?ref={head}", f.new_path),
                });
                if let Some(p) = f.patch {
                    e["patch"] = json!(p);
                }
                if f.status == 'R' {
                    e["previous_filename"] = json!(f.old_path);
                }
                e
            })
            .collect()
    } else {
        vec![]
    };
    reply(
        200,
        json!({
            "url": format!("{api}/compare/{basehead}"),
            "html_url": format!("{web}/compare/{basehead}"),
            "permalink_url": format!("{web}/compare/{REPO_OWNER}:{base}...{REPO_OWNER}:{head}"),
            "diff_url": format!("{web}/compare/{basehead}.diff"),
            "patch_url": format!("{web}/compare/{basehead}.patch"),
            "base_commit": commit_object(repo, addr, &base),
            "merge_base_commit": commit_object(repo, addr, &mb),
            "status": status,
            "ahead_by": ahead.len(),
            "behind_by": behind.len(),
            "total_commits": ahead.len(),
            "commits": commits,
            "files": files,
        }),
    )
}

/// The owner part of `REPO`.
const REPO_OWNER: &str = "octo";

/// A raw HTTP/1.1 request to a loopback fake (to check the fakes themselves).
pub fn raw_request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &Value,
) -> (u16, Value) {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    let payload = body.to_string();
    let mut req = format!(
        "{method} {path} HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: {}\r\nuser-agent: test\r\n",
        payload.len()
    );
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(&payload);
    s.write_all(req.as_bytes()).unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let status: u16 = out.split(' ').nth(1).unwrap().parse().unwrap();
    let body = out.split("\r\n\r\n").nth(1).unwrap_or("");
    // A chunked body: take the JSON between the first `{`/`[` and the last `}`/`]`.
    let start = body.find(['{', '[']).unwrap_or(0);
    let end = body.rfind(['}', ']']).map_or(body.len(), |i| i + 1);
    (
        status,
        serde_json::from_str(&body[start..end]).unwrap_or(Value::Null),
    )
}
