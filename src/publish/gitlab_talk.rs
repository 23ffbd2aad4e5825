//! GitLab: the conversation on arev's own diff discussions — replies (the discussion's
//! later notes), 👎 (`GET …/notes/{id}/award_emoji`, `thumbsdown`), resolution (the first
//! note's `resolved` / `resolved_by`), who may dismiss (access level ≥ Developer, asked of
//! `GET /projects/{id}/members/all/{user_id}` once per person, bounded) — and arev's
//! answers: a reply (`POST …/discussions/{id}/notes`) and `PUT …/discussions/{id}` with
//! `resolved: true`. Everything read is bounded and validated.

use super::error::PublishError;
use super::http::{Api, Method};
use super::plan::{Existing, Plan};
use super::talk::{gitlab_username, DismissBy, Reply, Voice};
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// The most of arev's discussions whose award emoji are read per publish.
const MAX_REACTION_READS: usize = 100;
/// The most distinct people whose access level is asked per publish.
const MAX_PERMISSION_CHECKS: usize = 30;
/// GitLab's Developer access level: the least that may dismiss by default.
const DEVELOPER: u64 = 30;

/// Who may dismiss: GitLab's access level of the person in the project, asked once each.
pub struct Gate<'a> {
    api: &'a Api,
    project: &'a str,
    policy: DismissBy,
    asked: BTreeMap<u64, bool>,
}

impl<'a> Gate<'a> {
    pub fn new(api: &'a Api, project: &'a str, policy: DismissBy) -> Self {
        Self {
            api,
            project,
            policy,
            asked: BTreeMap::new(),
        }
    }

    fn allowed(&mut self, user: u64) -> Result<bool, PublishError> {
        if self.policy == DismissBy::Anyone {
            return Ok(true);
        }
        if let Some(a) = self.asked.get(&user) {
            return Ok(*a);
        }
        if self.asked.len() >= MAX_PERMISSION_CHECKS {
            return Ok(false);
        }
        let path = format!("{}/members/all/{user}", self.project);
        let allowed = match self.api.get_capped(&path, 1 << 20) {
            Ok(v) => v.get("access_level").and_then(Value::as_u64).unwrap_or(0) >= DEVELOPER,
            Err(PublishError::Http {
                status: 403 | 404, ..
            }) => false,
            Err(e) => return Err(e),
        };
        self.asked.insert(user, allowed);
        Ok(allowed)
    }
}

/// A person (`author`, `user`, `resolved_by` objects): validated username and id.
fn person(v: Option<&Value>) -> Option<(u64, String)> {
    let v = v?;
    let id = v.get("id").and_then(Value::as_u64)?;
    let name = v
        .get("username")
        .and_then(Value::as_str)
        .and_then(gitlab_username)?;
    Some((id, name))
}

/// Fill in the conversation of arev's discussions in `existing` from the MR's discussions
/// (`all`, as listed) and their first notes' award emoji.
pub fn read_talk(
    api: &Api,
    mr: &str,
    me: u64,
    all: &[Value],
    existing: &mut [Existing],
    gate: &mut Gate<'_>,
) -> Result<(), PublishError> {
    let mut reactions_read = 0;
    for e in existing.iter_mut() {
        if e.open_fp().is_none() {
            continue;
        }
        let Some(d) = all
            .iter()
            .find(|d| d.get("id").and_then(Value::as_str) == e.thread.as_deref())
        else {
            continue;
        };
        e.talk.thread = e.thread.clone();
        let notes = d.get("notes").and_then(Value::as_array);
        for n in notes.into_iter().flatten().skip(1) {
            if n.get("system").and_then(Value::as_bool) == Some(true) {
                continue;
            }
            let Some((id, login)) = person(n.get("author")) else {
                continue;
            };
            let allowed = id != me && gate.allowed(id)?;
            e.talk.replies.push(Reply {
                mine: id == me,
                author: Voice { login, allowed },
                body: n
                    .get("body")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .chars()
                    .take(4_000)
                    .collect(),
            });
        }
        let first = d.pointer("/notes/0");
        e.talk.resolved = first
            .and_then(|n| n.get("resolved"))
            .and_then(Value::as_bool)
            == Some(true);
        if let Some((id, login)) = person(first.and_then(|n| n.get("resolved_by"))) {
            if id != me {
                let allowed = e.talk.resolved && gate.allowed(id)?;
                e.talk.resolved_by = Some(Voice { login, allowed });
            }
        }
        if reactions_read < MAX_REACTION_READS {
            reactions_read += 1;
            let path = format!("{mr}/notes/{}/award_emoji?per_page=100", e.id);
            for a in api.get_pages(&path, 1)? {
                if a.get("name").and_then(Value::as_str) != Some("thumbsdown") {
                    continue;
                }
                let Some((id, login)) = person(a.get("user")).filter(|(id, _)| *id != me) else {
                    continue;
                };
                let allowed = gate.allowed(id)?;
                e.talk.thumbs_down.push(Voice { login, allowed });
            }
        }
    }
    Ok(())
}

/// arev's answers (one reply per event per discussion) and the resolution of its fixed
/// findings' discussions.
pub fn answer(api: &Api, mr: &str, plan: &Plan<'_>) -> Result<(), PublishError> {
    for a in &plan.answers {
        let Some(thread) = a.existing.thread.as_deref() else {
            continue;
        };
        api.write(
            Method::POST,
            &format!("{mr}/discussions/{thread}/notes"),
            &json!({ "body": a.body }),
        )?;
    }
    for e in &plan.resolve {
        let Some(thread) = e.talk.thread.as_deref() else {
            continue;
        };
        api.write(
            Method::PUT,
            &format!("{mr}/discussions/{thread}"),
            &json!({ "resolved": true }),
        )?;
    }
    Ok(())
}
