//! A publish's records in the run dir: the payload kept in `publish/<forge>.json` before the
//! first request (what `arev publish` retries) and the outcome of the last attempt in
//! `publish/<forge>.result.json`.

use super::error::PublishError;
use super::model::{Forge, Payload, PublishRecord, PublishStatus};
use super::plan::Published;
use crate::output;
use crate::store::write_json_atomic;
use std::path::{Path, PathBuf};

/// `<run_dir>/publish/<forge>.json`.
pub fn payload_path(run_dir: &Path, forge: Forge) -> PathBuf {
    run_dir
        .join("publish")
        .join(format!("{}.json", forge.as_str()))
}

/// `<run_dir>/publish/<forge>.result.json`.
pub fn record_path(run_dir: &Path, forge: Forge) -> PathBuf {
    run_dir
        .join("publish")
        .join(format!("{}.result.json", forge.as_str()))
}

/// Keep the payload in the run dir (before the first request).
pub fn keep_payload(run_dir: &Path, payload: &Payload) -> Result<PathBuf, PublishError> {
    let path = payload_path(run_dir, payload.forge);
    let dir = run_dir.join("publish");
    std::fs::create_dir_all(&dir).map_err(|e| PublishError::Write {
        path: dir.clone(),
        source: e,
    })?;
    write_json_atomic(&path, payload).map_err(|e| PublishError::Write {
        path: path.clone(),
        source: e,
    })?;
    Ok(path)
}

/// A kept payload of this forge in `run_dir`, if any (an unreadable one is a bad setting).
pub fn kept_payload(run_dir: &Path, forge: Forge) -> Result<Option<Payload>, PublishError> {
    let path = payload_path(run_dir, forge);
    let bad = |message: String| {
        PublishError::BadSetting(format!("cannot read run {}: {message}", path.display()))
    };
    match std::fs::read_to_string(&path) {
        Ok(text) => serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| bad(format!("unreadable publish payload: {e}"))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(bad(e.to_string())),
    }
}

/// The record of one attempt's outcome.
pub fn outcome_record(
    forge: Forge,
    attempted_at: String,
    head: Option<&str>,
    outcome: &Result<Published, String>,
) -> PublishRecord {
    match outcome {
        Ok(p) => PublishRecord {
            forge,
            status: PublishStatus::Published,
            attempted_at,
            error: None,
            head_sha: Some(p.head_sha.clone()),
            summary: Some(p.summary.to_string()),
            commented: p.commented.clone(),
            already_commented: p.already_commented.clone(),
            outside_diff: p.outside_diff.clone(),
            marked_fixed: p.marked_fixed.clone(),
        },
        Err(e) => PublishRecord {
            forge,
            status: PublishStatus::Failed,
            attempted_at,
            error: Some(e.clone()),
            head_sha: head.map(String::from),
            summary: None,
            commented: vec![],
            already_commented: vec![],
            outside_diff: vec![],
            marked_fixed: vec![],
        },
    }
}

/// Record the attempt's outcome next to the payload (a failure to record is a warning).
pub fn record(
    run_dir: &Path,
    forge: Forge,
    head: Option<&str>,
    outcome: &Result<Published, String>,
) {
    let at = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let rec = outcome_record(forge, at, head, outcome);
    let path = record_path(run_dir, forge);
    if let Err(e) = write_json_atomic(&path, &rec) {
        output::warn(&format!("cannot write {}: {e}", path.display()));
    }
}

/// "; the payload is kept in …" when it is.
pub fn kept_note(run_dir: Option<&Path>, forge: Forge) -> String {
    match run_dir.map(|d| payload_path(d, forge)) {
        Some(p) if p.is_file() => format!("; the payload is kept in {}", p.display()),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::publish::build_payload;
    use crate::publish::PrTarget;
    use crate::report::fixtures;
    use crate::store::RunStatus;

    fn payload() -> Payload {
        let r = fixtures::shard(1, 1, &["src/lib.rs"], RunStatus::Complete);
        let target = PrTarget {
            repository: "o/r".into(),
            number: 7,
            head_sha: Some("abc".into()),
        };
        build_payload(&r, Forge::Gitlab, target, "ptr".into(), &|_, _| None)
    }

    #[test]
    fn a_kept_payload_reloads_exactly_and_is_named_in_the_note() {
        let d = tempfile::tempdir().unwrap();
        assert!(kept_payload(d.path(), Forge::Gitlab).unwrap().is_none());
        assert_eq!(kept_note(Some(d.path()), Forge::Gitlab), "");
        let p = payload();
        let path = keep_payload(d.path(), &p).unwrap();
        assert_eq!(path, d.path().join("publish").join("gitlab.json"));
        assert_eq!(kept_payload(d.path(), Forge::Gitlab).unwrap(), Some(p));
        assert!(kept_payload(d.path(), Forge::Github).unwrap().is_none());
        assert_eq!(
            kept_note(Some(d.path()), Forge::Gitlab),
            format!("; the payload is kept in {}", path.display())
        );
        assert_eq!(kept_note(None, Forge::Gitlab), "");
    }

    #[test]
    fn an_unreadable_kept_payload_is_a_bad_setting_naming_the_file() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("publish")).unwrap();
        let path = payload_path(d.path(), Forge::Github);
        std::fs::write(&path, "{not json").unwrap();
        let e = kept_payload(d.path(), Forge::Github).unwrap_err();
        assert!(e.is_setting());
        let prefix = format!(
            "cannot read run {}: unreadable publish payload: ",
            path.display()
        );
        assert!(e.to_string().starts_with(&prefix), "{e}");
    }

    #[test]
    fn the_record_says_what_the_attempt_did_or_why_it_failed() {
        let published = Published {
            head_sha: "0123456789abcdef".into(),
            summary: "created",
            commented: vec!["a".into()],
            already_commented: vec!["b".into()],
            outside_diff: vec![],
            marked_fixed: vec!["c".into()],
        };
        let ok = outcome_record(Forge::Github, "t".into(), Some("x"), &Ok(published));
        assert_eq!(ok.status, PublishStatus::Published);
        assert_eq!(ok.head_sha.as_deref(), Some("0123456789abcdef"));
        assert_eq!(ok.summary.as_deref(), Some("created"));
        assert_eq!(
            (ok.commented, ok.marked_fixed),
            (vec!["a".into()], vec!["c".into()])
        );
        assert_eq!(ok.error, None);
        let failed = outcome_record(
            Forge::Gitlab,
            "t".into(),
            Some("x"),
            &Err("HTTP 500".into()),
        );
        assert_eq!(failed.status, PublishStatus::Failed);
        assert_eq!(failed.error.as_deref(), Some("HTTP 500"));
        assert_eq!(failed.head_sha.as_deref(), Some("x"));
        assert!(failed.summary.is_none() && failed.commented.is_empty());

        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("publish")).unwrap();
        record(d.path(), Forge::Gitlab, None, &Err("boom".into()));
        let text = std::fs::read_to_string(record_path(d.path(), Forge::Gitlab)).unwrap();
        let back: PublishRecord = serde_json::from_str(&text).unwrap();
        assert_eq!(back.error.as_deref(), Some("boom"));
    }
}
