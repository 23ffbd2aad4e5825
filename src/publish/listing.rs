//! A repository's pull requests (GitHub `GET /repos/{owner}/{repo}/pulls`) or merge
//! requests (GitLab `GET /projects/:id/merge_requests`), newest first, as the forge lists
//! them: what `arev eval dispositions` counts when no `--pr` names them. The answer is the
//! forge's, so hostile: at most [`MAX_LISTED`] kept (a page of at most 100, each page
//! capped by the client's answer limit), every entry's number checked, duplicates (a pull
//! request opened while the pages were read shifts them) dropped.

use super::error::PublishError;
use super::gitlab::project_segment;
use super::http::{Api, Method};
use super::model::Forge;
use serde_json::Value;

/// The most pull requests one count lists.
pub const MAX_LISTED: usize = 200;

/// Which pull requests to list (by the forge's own state).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListState {
    All,
    Open,
    /// Closed or merged.
    Closed,
    Merged,
}

/// The listing's path and query of the first page.
fn first_page(forge: Forge, repository: &str, state: ListState, per_page: usize) -> String {
    match forge {
        Forge::Github => {
            // GitHub has no `merged` state: merged pull requests are closed ones with a
            // `merged_at` (kept below).
            let s = match state {
                ListState::All => "all",
                ListState::Open => "open",
                ListState::Closed | ListState::Merged => "closed",
            };
            format!(
                "/repos/{repository}/pulls?state={s}&sort=created&direction=desc&per_page={per_page}"
            )
        }
        Forge::Gitlab => {
            // GitLab's `closed` leaves merged ones out: `all`, then kept below.
            let s = match state {
                ListState::All | ListState::Closed => "all",
                ListState::Open => "opened",
                ListState::Merged => "merged",
            };
            format!(
                "/projects/{}/merge_requests?state={s}&order_by=created_at&sort=desc&per_page={per_page}",
                project_segment(repository)
            )
        }
    }
}

/// The number of one listed entry (GitHub `number`, GitLab `iid`), if it is one and in
/// `state`; Err for an entry that is not a pull request as the forge describes it.
fn entry(
    forge: Forge,
    v: &Value,
    state: ListState,
    path: &str,
) -> Result<Option<u64>, PublishError> {
    let key = match forge {
        Forge::Github => "number",
        Forge::Gitlab => "iid",
    };
    let bad = |message: String| PublishError::BadAnswer {
        method: Method::GET,
        path: path.to_string(),
        message,
    };
    let n = v
        .get(key)
        .and_then(Value::as_u64)
        .filter(|n| (1..=u64::from(u32::MAX)).contains(n))
        .ok_or_else(|| {
            bad(format!(
                "an entry without a valid `{key}`: {}",
                crate::output::inert_line(&v.to_string().chars().take(80).collect::<String>())
            ))
        })?;
    let merged = match forge {
        Forge::Github => v.get("merged_at").is_some_and(|m| !m.is_null()),
        Forge::Gitlab => v.get("state").and_then(Value::as_str) == Some("merged"),
    };
    let closed = v.get("state").and_then(Value::as_str)
        != Some(match forge {
            Forge::Github => "open",
            Forge::Gitlab => "opened",
        });
    let keep = match state {
        ListState::All | ListState::Open => true,
        ListState::Closed => closed,
        ListState::Merged => merged,
    };
    Ok(keep.then_some(n))
}

/// The newest `limit` (at most [`MAX_LISTED`]) pull requests of `repository` in `state`,
/// newest first. `Closed` and `Merged` read as many pages as `limit` needs of the forge's
/// wider list, so they may return fewer.
pub fn pull_requests(
    api: &Api,
    forge: Forge,
    repository: &str,
    state: ListState,
    limit: usize,
) -> Result<Vec<u64>, PublishError> {
    let limit = limit.clamp(1, MAX_LISTED);
    let per_page = limit.min(100);
    let path = first_page(forge, repository, state, per_page);
    let items = api.get_pages(&path, limit.div_ceil(per_page))?;
    let mut out: Vec<u64> = vec![];
    for v in &items {
        if let Some(n) = entry(forge, v, state, &path)? {
            if !out.contains(&n) {
                out.push(n);
            }
        }
    }
    out.truncate(limit);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_first_page_asks_for_the_newest_in_the_state() {
        assert_eq!(
            first_page(Forge::Github, "o/r", ListState::Merged, 30),
            "/repos/o/r/pulls?state=closed&sort=created&direction=desc&per_page=30"
        );
        assert_eq!(
            first_page(Forge::Gitlab, "g/p", ListState::Open, 100),
            "/projects/g%2Fp/merge_requests?state=opened&order_by=created_at&sort=desc&per_page=100"
        );
        assert!(first_page(Forge::Gitlab, "7", ListState::Closed, 5).contains("state=all"));
    }

    #[test]
    fn entries_are_checked_and_kept_by_state() {
        let gh = |n: Value, state: &str, merged: Value| json!({"number": n, "state": state, "merged_at": merged});
        let e = |v: &Value, s| entry(Forge::Github, v, s, "/p");
        let merged = gh(json!(3), "closed", json!("2026-01-01T00:00:00Z"));
        let closed = gh(json!(4), "closed", Value::Null);
        let open = gh(json!(5), "open", Value::Null);
        assert_eq!(e(&merged, ListState::Merged).unwrap(), Some(3));
        assert_eq!(e(&closed, ListState::Merged).unwrap(), None);
        assert_eq!(e(&closed, ListState::Closed).unwrap(), Some(4));
        assert_eq!(e(&open, ListState::Closed).unwrap(), None);
        assert_eq!(e(&open, ListState::All).unwrap(), Some(5));
        for bad in [
            json!(0),
            json!(-1),
            json!("7"),
            json!(1u64 << 40),
            Value::Null,
        ] {
            let err = e(&gh(bad.clone(), "open", Value::Null), ListState::All).unwrap_err();
            assert!(err.to_string().contains("valid `number`"), "{bad}: {err}");
        }
        let gl = |state: &str| json!({"iid": 9, "state": state});
        let g = |v: &Value, s| entry(Forge::Gitlab, v, s, "/p").unwrap();
        assert_eq!(g(&gl("merged"), ListState::Closed), Some(9));
        assert_eq!(g(&gl("closed"), ListState::Closed), Some(9));
        assert_eq!(g(&gl("opened"), ListState::Closed), None);
        assert_eq!(g(&gl("locked"), ListState::Merged), None);
        assert!(entry(Forge::Gitlab, &json!({"number": 9}), ListState::All, "/p").is_err());
    }
}
