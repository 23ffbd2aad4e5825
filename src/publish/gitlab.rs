//! GitLab (REST v4): the sticky summary MR note, one diff discussion per new finding
//! positioned with the MR's latest version (base/start/head shas) on a right-side line of
//! its diff, and the "fixed" / "not raised again" edits of earlier arev discussion notes
//! (fixed only when the repository compare API's straight diff from the note's position
//! `head_sha` to the MR head changes its line). Only notes authored by the token's own user
//! (`GET /user`) count as arev's.

use super::build::{check_head, is_summary};
use super::diff::{right_lines, RightLine, RightLines};
use super::error::PublishError;
use super::gitlab_talk::{answer, read_talk, Gate};
use super::http::{Api, Method, RetryPolicy, Secret};
use super::model::Payload;
use super::plan::{gone, plan, Existing, Plan, Published};
use super::since::{changed_ids, no_diff, FileDiff, MAX_COMPARE_BYTES};
use super::talk::DismissBy;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// A client for GitLab's REST API v4 at `api_url` with `token`.
pub fn client(api_url: &str, token: String, policy: RetryPolicy, dry_run: bool) -> Api {
    Api::new(
        api_url,
        Secret::new("private-token", "", token),
        vec![("accept", "application/json".into())],
        policy,
        dry_run,
    )
}

/// A project id or path as one URL path segment (`group/proj` → `group%2Fproj`).
pub fn project_segment(project: &str) -> String {
    let mut out = String::new();
    for b in project.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

fn str_at<'a>(v: &'a Value, pointer: &str) -> Option<&'a str> {
    v.pointer(pointer).and_then(Value::as_str)
}

fn bad(path: &str, message: String) -> PublishError {
    PublishError::BadAnswer {
        method: Method::GET,
        path: path.to_string(),
        message,
    }
}

/// The user id the token publishes as (`GET /user`; a project or group access token is its
/// bot user).
pub fn identity(api: &Api) -> Result<u64, PublishError> {
    api.get("/user")?
        .get("id")
        .and_then(Value::as_u64)
        .ok_or_else(|| bad("/user", "no `id`".into()))
}

/// Whether a note was written by user `me`.
fn by(note: &Value, me: u64) -> bool {
    note.pointer("/author/id").and_then(Value::as_u64) == Some(me)
}

/// Publish `payload` to its merge request, as user `me`; `dismiss_by` who may dismiss.
pub fn publish(
    api: &Api,
    payload: &Payload,
    me: u64,
    dismiss_by: DismissBy,
) -> Result<Published, PublishError> {
    let mr = format!(
        "/projects/{}/merge_requests/{}",
        project_segment(&payload.target.repository),
        payload.target.number
    );
    let version = latest_version(api, &mr)?;
    check_head(payload, &version.head)?;
    let (diff, old_paths) = mr_diff(api, &mr)?;
    let project = format!("/projects/{}", project_segment(&payload.target.repository));
    let existing = threads(
        api,
        &payload.target.repository,
        payload.target.number,
        me,
        dismiss_by,
    )?;
    let changed = changed_ids(&gone(payload, &existing), &version.head, |base| {
        compare(api, &project, base, &version.head)
    })?;
    let plan = plan(payload, &diff, &existing, &version.head, &changed);
    let summary = sticky_summary(api, &mr, &plan.summary_body(payload), me)?;
    post_discussions(api, &mr, &version, &old_paths, &plan)?;
    // 3. The conversation: one reply per event per discussion, fixed ones resolved.
    answer(api, &mr, &plan)?;
    // 4. Earlier discussions whose finding is gone: edit their first note ("Fixed" or not
    // raised again); the edit closes them, so it comes last.
    for f in &plan.fixed {
        let thread = f.existing.thread.as_deref().unwrap_or_default();
        api.write(
            Method::PUT,
            &format!("{mr}/discussions/{thread}/notes/{}", f.existing.id),
            &json!({ "body": f.body }),
        )?;
    }
    Ok(plan.published(&version.head, summary))
}

/// The MR's diff discussions, with the conversation on arev's own.
pub fn threads(
    api: &Api,
    project_id: &str,
    iid: u64,
    me: u64,
    dismiss_by: DismissBy,
) -> Result<Vec<Existing>, PublishError> {
    let project = format!("/projects/{}", project_segment(project_id));
    let mr = format!("{project}/merge_requests/{iid}");
    let (mut existing, all) = earlier_discussions(api, &mr, me)?;
    read_talk(
        api,
        &mr,
        me,
        &all,
        &mut existing,
        &mut Gate::new(api, &project, dismiss_by),
    )?;
    Ok(existing)
}

/// The shas of the MR's latest version, which every diff position must name.
struct Version {
    base: String,
    start: String,
    head: String,
}

/// The latest MR version: the shas every diff position must name.
fn latest_version(api: &Api, mr: &str) -> Result<Version, PublishError> {
    let versions_path = format!("{mr}/versions");
    let versions = api.get(&versions_path)?;
    let latest = versions
        .get(0)
        .ok_or_else(|| bad(&versions_path, "the merge request has no version".into()))?;
    let sha = |k: &str| {
        str_at(latest, &format!("/{k}"))
            .map(String::from)
            .ok_or_else(|| bad(&versions_path, format!("no `{k}`")))
    };
    Ok(Version {
        base: sha("base_commit_sha")?,
        start: sha("start_commit_sha")?,
        head: sha("head_commit_sha")?,
    })
}

/// The MR's diff as GitLab sees it, with each file's old path (kept for the position).
type MrDiff = (BTreeMap<String, RightLines>, BTreeMap<String, String>);

/// The MR's diff as GitLab sees it (old path kept for the position).
fn mr_diff(api: &Api, mr: &str) -> Result<MrDiff, PublishError> {
    let diffs_path = format!("{mr}/diffs?per_page=100");
    let mut diff: BTreeMap<String, RightLines> = BTreeMap::new();
    let mut old_paths: BTreeMap<String, String> = BTreeMap::new();
    for d in api.get_all(&diffs_path)? {
        if d.get("deleted_file").and_then(Value::as_bool) == Some(true) {
            continue;
        }
        let Some(new_path) = str_at(&d, "/new_path") else {
            continue;
        };
        let old_path = str_at(&d, "/old_path").unwrap_or(new_path);
        diff.insert(
            new_path.to_string(),
            right_lines(str_at(&d, "/diff").unwrap_or("")),
        );
        old_paths.insert(new_path.to_string(), old_path.to_string());
    }
    Ok((diff, old_paths))
}

/// The repository compare API's straight diff (`from..to`, not from the merge base: its
/// old side is the note's commit whatever the history) from `base` to `head`, by file;
/// None when GitLab has none for it (an unknown commit, an answer over the cap).
fn compare(
    api: &Api,
    project: &str,
    base: &str,
    head: &str,
) -> Result<Option<Vec<FileDiff>>, PublishError> {
    let path = format!("{project}/repository/compare?from={base}&to={head}&straight=true");
    let v = match api.get_capped(&path, MAX_COMPARE_BYTES) {
        Ok(v) => v,
        Err(e) if no_diff(&e) => return Ok(None),
        Err(e) => return Err(e),
    };
    let diffs = v.get("diffs").and_then(Value::as_array);
    Ok(Some(
        diffs
            .into_iter()
            .flatten()
            .filter_map(|d| {
                Some(FileDiff {
                    old_path: str_at(d, "/old_path")?.to_string(),
                    deleted: d.get("deleted_file").and_then(Value::as_bool) == Some(true),
                    patch: str_at(d, "/diff").map(String::from),
                })
            })
            .collect(),
    ))
}

/// A discussion id arev puts into a path: 1-64 letters and digits (GitLab's are hex).
fn plain_id(id: &str) -> bool {
    (1..=64).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// Earlier diff discussions: the first note of each carries arev's marker; its position
/// names the commit it was made on (`head_sha`) and its line there. Also every discussion
/// as listed (their later notes are the replies).
fn earlier_discussions(
    api: &Api,
    mr: &str,
    me: u64,
) -> Result<(Vec<Existing>, Vec<Value>), PublishError> {
    let discussions_path = format!("{mr}/discussions?per_page=100");
    let mut existing = vec![];
    let all = api.get_all(&discussions_path)?;
    for d in &all {
        let Some(note) = d.pointer("/notes/0").filter(|n| by(n, me)) else {
            continue;
        };
        let path =
            str_at(note, "/position/new_path").or_else(|| str_at(note, "/position/old_path"));
        let (Some(path), Some(id), Some(thread)) = (
            path,
            note.get("id").and_then(Value::as_u64),
            str_at(d, "/id").filter(|id| plain_id(id)),
        ) else {
            continue;
        };
        existing.push(Existing {
            id,
            thread: Some(thread.to_string()),
            path: path.to_string(),
            body: str_at(note, "/body").unwrap_or_default().to_string(),
            commit: str_at(note, "/position/head_sha").map(String::from),
            line: note
                .pointer("/position/new_line")
                .and_then(Value::as_u64)
                .and_then(|l| u32::try_from(l).ok()),
            talk: Default::default(),
        });
    }
    Ok((existing, all))
}

/// The sticky summary note (step 1), edited to `body` (or created); whether it was
/// `created`, `updated` or `unchanged`.
fn sticky_summary(api: &Api, mr: &str, body: &str, me: u64) -> Result<&'static str, PublishError> {
    let notes_path = format!("{mr}/notes?per_page=100&sort=asc&order_by=created_at");
    let sticky = api.get_all(&notes_path)?.into_iter().find(|n| {
        n.get("system").and_then(Value::as_bool) != Some(true)
            && by(n, me)
            && str_at(n, "/body").is_some_and(is_summary)
    });
    Ok(match sticky {
        Some(n) if str_at(&n, "/body") == Some(body) => "unchanged",
        Some(n) => {
            let id = n.get("id").and_then(Value::as_u64).unwrap_or(0);
            api.write(
                Method::PUT,
                &format!("{mr}/notes/{id}"),
                &json!({ "body": body }),
            )?;
            "updated"
        }
        None => {
            api.write(
                Method::POST,
                &format!("{mr}/notes"),
                &json!({ "body": body }),
            )?;
            "created"
        }
    })
}

/// One positioned discussion per new finding (step 2).
fn post_discussions(
    api: &Api,
    mr: &str,
    version: &Version,
    old_paths: &BTreeMap<String, String>,
    plan: &Plan<'_>,
) -> Result<(), PublishError> {
    for p in &plan.post {
        let c = p.comment;
        let mut position = json!({
            "position_type": "text",
            "base_sha": version.base,
            "start_sha": version.start,
            "head_sha": version.head,
            "new_path": c.path,
            "old_path": old_paths.get(&c.path).unwrap_or(&c.path),
            "new_line": c.line,
        });
        // An unchanged line is named on both sides.
        if let RightLine::Context { old_line } = p.position {
            position["old_line"] = json!(old_line);
        }
        api.write(
            Method::POST,
            &format!("{mr}/discussions"),
            &json!({ "body": c.body, "position": position }),
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_paths_are_one_segment() {
        assert_eq!(project_segment("12"), "12");
        assert_eq!(project_segment("group/sub/proj"), "group%2Fsub%2Fproj");
    }
}
