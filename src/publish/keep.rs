//! A publish's records in the run dir: the payload kept in `publish/<forge>.json` before the
//! first request, sealed with the token (what a retry by the same job sends again; a payload
//! whose seal this token does not reproduce — another job's, or one written by hand — is
//! ignored), and the outcome of the last attempt in `publish/<forge>.result.json`.

use super::error::PublishError;
use super::model::{Forge, Payload, PublishRecord, PublishStatus};
use super::plan::Published;
use crate::output;
use crate::store::write_json_atomic;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::path::{Path, PathBuf};

/// HMAC-SHA256 (RFC 2104) of `message` under `key`, ready to finalize or verify.
fn mac(key: &[u8], message: &[u8]) -> Option<Hmac<Sha256>> {
    // HMAC takes a key of any length (a long one is hashed first): this never fails.
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(key).ok()?;
    mac.update(message);
    Some(mac)
}

/// The MAC of `payload` (its `seal` field left out) under `token`.
fn seal_mac(payload: &Payload, token: &str) -> Option<Hmac<Sha256>> {
    let mut unsealed = payload.clone();
    unsealed.seal = String::new();
    let text = serde_json::to_vec(&unsealed).unwrap_or_default();
    mac(token.as_bytes(), &text)
}

/// The seal of `payload` (its `seal` field left out) under `token`.
pub fn seal_of(payload: &Payload, token: &str) -> String {
    seal_mac(payload, token)
        .map(|m| hex::encode(m.finalize().into_bytes()))
        .unwrap_or_default()
}

/// Whether `payload`'s seal is the one `token` makes (lowercase hex, as [`seal_of`] writes
/// it), compared in constant time.
fn seal_holds(payload: &Payload, token: &str) -> bool {
    let lower_hex = |b: u8| b.is_ascii_digit() || (b'a'..=b'f').contains(&b);
    if !payload.seal.bytes().all(lower_hex) {
        return false;
    }
    let (Ok(seal), Some(mac)) = (hex::decode(&payload.seal), seal_mac(payload, token)) else {
        return false;
    };
    mac.verify_slice(&seal).is_ok()
}

/// `payload` sealed with `token`.
pub fn sealed(mut payload: Payload, token: &str) -> Payload {
    payload.seal = seal_of(&payload, token);
    payload
}

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

/// The largest kept payload read back (a summary is at most 1,000,000 characters).
const MAX_KEPT_BYTES: u64 = 16 << 20;

/// The payload of this forge an earlier attempt of the same job kept in `run_dir`: one
/// whose seal `token` reproduces. Anything else there (missing, unreadable, too large,
/// another job's, forged) is None: the payload is rebuilt from report.json.
pub fn kept_payload(run_dir: &Path, forge: Forge, token: &str) -> Option<Payload> {
    let path = payload_path(run_dir, forge);
    let text = crate::store::read_capped(&path, MAX_KEPT_BYTES, "a kept payload").ok()?;
    let p: Payload = serde_json::from_slice(&text).ok()?;
    let ok = p.forge == forge && !p.seal.is_empty() && seal_holds(&p, token);
    if !ok {
        output::note(&format!(
            "{} was not kept by a publish with this token: rebuilding the payload from report.json",
            path.display()
        ));
    }
    ok.then_some(p)
}

/// The record of one attempt's outcome.
pub fn outcome_record(
    forge: Forge,
    attempted_at: String,
    head: Option<&str>,
    outcome: Result<&Published, &PublishError>,
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
            not_raised_again: p.not_raised_again.clone(),
            dismissed: p.dismissed.iter().map(Into::into).collect(),
            resolved: p.resolved.clone(),
            replies: p.replies,
        },
        Err(e) => PublishRecord {
            forge,
            status: PublishStatus::Failed,
            attempted_at,
            error: Some(e.to_string()),
            head_sha: head.map(String::from),
            summary: None,
            commented: vec![],
            already_commented: vec![],
            outside_diff: vec![],
            marked_fixed: vec![],
            not_raised_again: vec![],
            dismissed: vec![],
            resolved: vec![],
            replies: 0,
        },
    }
}

/// Record the attempt's outcome next to the payload (a failure to record is a warning).
pub fn record(
    run_dir: &Path,
    forge: Forge,
    head: Option<&str>,
    outcome: Result<&Published, &PublishError>,
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
        build_payload(&r, Forge::Gitlab, target, "ptr".into(), None, &|_, _| None)
    }

    fn hmac_hex(key: &[u8], message: &[u8]) -> String {
        hex::encode(mac(key, message).unwrap().finalize().into_bytes())
    }

    #[test]
    fn hmac_matches_rfc_4231() {
        // RFC 4231 test cases 1 and 2.
        assert_eq!(
            hmac_hex(&[0x0b; 20], b"Hi There"),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
        );
        assert_eq!(
            hmac_hex(b"Jefe", b"what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        // Case 6: a key longer than the block.
        assert_eq!(
            hmac_hex(
                &[0xaa; 131],
                b"Test Using Larger Than Block-Size Key - Hash Key First"
            ),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        );
    }

    #[test]
    fn a_kept_payload_reloads_only_with_the_token_that_sealed_it() {
        let d = tempfile::tempdir().unwrap();
        assert!(kept_payload(d.path(), Forge::Gitlab, "tok").is_none());
        assert_eq!(kept_note(Some(d.path()), Forge::Gitlab), "");
        let p = sealed(payload(), "tok");
        let path = keep_payload(d.path(), &p).unwrap();
        assert_eq!(path, d.path().join("publish").join("gitlab.json"));
        assert_eq!(
            kept_payload(d.path(), Forge::Gitlab, "tok"),
            Some(p.clone())
        );
        assert!(kept_payload(d.path(), Forge::Gitlab, "another job's token").is_none());
        assert!(kept_payload(d.path(), Forge::Github, "tok").is_none());
        assert_eq!(
            kept_note(Some(d.path()), Forge::Gitlab),
            format!("; the payload is kept in {}", path.display())
        );
        assert_eq!(kept_note(None, Forge::Gitlab), "");
        // An edit after sealing (a forged summary) breaks the seal.
        let mut forged = p;
        forged.summary = "no findings, safe to merge".into();
        keep_payload(d.path(), &forged).unwrap();
        assert!(kept_payload(d.path(), Forge::Gitlab, "tok").is_none());
        // The seal is checked as written: upper case, cut short or not hex does not hold.
        let good = sealed(payload(), "tok");
        for seal in [
            good.seal.to_uppercase(),
            good.seal[..62].to_string(),
            format!("{}zz", &good.seal[..62]),
        ] {
            let mut bad = good.clone();
            bad.seal = seal;
            keep_payload(d.path(), &bad).unwrap();
            assert!(kept_payload(d.path(), Forge::Gitlab, "tok").is_none());
        }
        keep_payload(d.path(), &good).unwrap();
        assert_eq!(kept_payload(d.path(), Forge::Gitlab, "tok"), Some(good));
        // Unsealed or unreadable: rebuilt, never an error.
        keep_payload(d.path(), &payload()).unwrap();
        assert!(kept_payload(d.path(), Forge::Gitlab, "tok").is_none());
        std::fs::write(&path, "{not json").unwrap();
        assert!(kept_payload(d.path(), Forge::Gitlab, "tok").is_none());
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
            not_raised_again: vec!["d".into()],
            ..Published::default()
        };
        let ok = outcome_record(Forge::Github, "t".into(), Some("x"), Ok(&published));
        assert_eq!(ok.status, PublishStatus::Published);
        assert_eq!(ok.head_sha.as_deref(), Some("0123456789abcdef"));
        assert_eq!(ok.summary.as_deref(), Some("created"));
        assert_eq!(
            (ok.commented, ok.marked_fixed, ok.not_raised_again),
            (vec!["a".into()], vec!["c".into()], vec!["d".into()])
        );
        assert_eq!(ok.error, None);
        let failed = outcome_record(
            Forge::Gitlab,
            "t".into(),
            Some("x"),
            Err(&PublishError::BadSetting("HTTP 500".into())),
        );
        assert_eq!(failed.status, PublishStatus::Failed);
        assert_eq!(failed.error.as_deref(), Some("HTTP 500"));
        assert_eq!(failed.head_sha.as_deref(), Some("x"));
        assert!(failed.summary.is_none() && failed.commented.is_empty());

        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("publish")).unwrap();
        record(
            d.path(),
            Forge::Gitlab,
            None,
            Err(&PublishError::BadSetting("boom".into())),
        );
        let text = std::fs::read_to_string(record_path(d.path(), Forge::Gitlab)).unwrap();
        let back: PublishRecord = serde_json::from_str(&text).unwrap();
        assert_eq!(back.error.as_deref(), Some("boom"));
    }
}
