//! `arev publish github|gitlab <RUN>` and `arev run --publish`: build (or reload) the
//! payload, keep it in the run dir's `publish/` before the first request, send it, and
//! record the outcome. A failed publish after a run keeps the review's exit code unless
//! `--publish-strict`.

use super::emit::{cwd, named_run_dir};
use crate::cli::{PublishArgs, RunArgs};
use crate::errors::ExpectedError;
use crate::exit_codes;
use crate::output;
use crate::publish::{
    build_payload, process_env, report_pointer, send, settings, short_sha, Forge, Payload,
    PublishError, PublishRecord, PublishStatus, Published, RetryPolicy,
};
use crate::report::Report;
use crate::store::{load_report, load_report_file, write_json_atomic, RunStatus};
use std::path::{Component, Path, PathBuf};

fn payload_path(run_dir: &Path, forge: Forge) -> PathBuf {
    run_dir
        .join("publish")
        .join(format!("{}.json", forge.as_str()))
}

fn record_path(run_dir: &Path, forge: Forge) -> PathBuf {
    run_dir
        .join("publish")
        .join(format!("{}.result.json", forge.as_str()))
}

/// The text of 1-based `line` of `root/path` (None for a path leaving the root, an
/// unreadable file or a line out of range).
fn line_text(root: &Path, path: &str, line: u32) -> Option<String> {
    let rel = Path::new(path);
    if rel.is_absolute() || rel.components().any(|c| matches!(c, Component::ParentDir)) {
        return None;
    }
    let text = std::fs::read_to_string(root.join(rel)).ok()?;
    let l = text.lines().nth((line as usize).checked_sub(1)?)?;
    Some(l.strip_suffix('\r').unwrap_or(l).to_string())
}

/// Keep the payload in the run dir (before the first request).
fn keep_payload(run_dir: &Path, payload: &Payload) -> Result<PathBuf, PublishError> {
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

/// Record the attempt's outcome next to the payload (a failure to record is a warning).
fn record(run_dir: &Path, forge: Forge, head: Option<&str>, outcome: &Result<Published, String>) {
    let at = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let rec = match outcome {
        Ok(p) => PublishRecord {
            forge,
            status: PublishStatus::Published,
            attempted_at: at,
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
            attempted_at: at,
            error: Some(e.clone()),
            head_sha: head.map(String::from),
            summary: None,
            commented: vec![],
            already_commented: vec![],
            outside_diff: vec![],
            marked_fixed: vec![],
        },
    };
    let path = record_path(run_dir, forge);
    if let Err(e) = write_json_atomic(&path, &rec) {
        output::warn(&format!("cannot write {}: {e}", path.display()));
    }
}

/// One line on stderr saying what a publish did.
fn describe(forge: Forge, number: u64, p: &Published) -> String {
    let what = match forge {
        Forge::Github => "pull request",
        Forge::Gitlab => "merge request",
    };
    format!(
        "published to {what} #{number} at {}: summary {}, {} new inline comment(s), {} already commented, {} outside the diff (summary only), {} marked fixed",
        short_sha(&p.head_sha),
        p.summary,
        p.commented.len(),
        p.already_commented.len(),
        p.outside_diff.len(),
        p.marked_fixed.len()
    )
}

/// A kept payload of this forge in `run_dir`, if any.
fn kept_payload(run_dir: &Path, forge: Forge) -> Result<Option<Payload>, ExpectedError> {
    let path = payload_path(run_dir, forge);
    match std::fs::read_to_string(&path) {
        Ok(text) => serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| ExpectedError::BadRun {
                path: path.clone(),
                message: format!("unreadable publish payload: {e}"),
            }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(ExpectedError::BadRun {
            path,
            message: e.to_string(),
        }),
    }
}

/// Build (or reload), keep, send and record. Errors are returned for the caller to print;
/// with a run dir (and not a dry run) every outcome is recorded there, failures included.
fn publish_report(
    forge: Forge,
    report: &Report,
    run_dir: Option<&Path>,
    root: &Path,
    pr: Option<u64>,
    dry_run: bool,
) -> Result<(u64, Published), PublishError> {
    let keep_in = run_dir.filter(|_| !dry_run);
    let mut head = None;
    let outcome = (|| {
        let kept = match run_dir {
            Some(d) => {
                kept_payload(d, forge).map_err(|e| PublishError::BadSetting(e.to_string()))?
            }
            None => None,
        };
        let settings = settings(forge, &process_env, pr, kept.as_ref().map(|p| &p.target))?;
        let number = settings.target.number;
        let payload = match kept {
            // The exact payload an earlier attempt kept; only its PR may be overridden.
            Some(mut p) => {
                p.target = settings.target.clone();
                p
            }
            None => build_payload(
                report,
                forge,
                settings.target.clone(),
                report_pointer(&report.run_id, settings.ci_url.as_deref()),
                &|path, line| line_text(root, path, line),
            ),
        };
        head.clone_from(&payload.target.head_sha);
        if let Some(d) = keep_in {
            keep_payload(d, &payload)?;
        }
        send(&payload, settings, RetryPolicy::default(), dry_run).map(|p| (number, p))
    })();
    if let Some(d) = keep_in {
        record(
            d,
            forge,
            head.as_deref(),
            &outcome
                .as_ref()
                .map(|(_, p)| p.clone())
                .map_err(|e| e.to_string()),
        );
    }
    outcome
}

/// "; the payload is kept in …" when it is.
fn kept_note(run_dir: Option<&Path>, forge: Forge) -> String {
    match run_dir.map(|d| payload_path(d, forge)) {
        Some(p) if p.is_file() => format!("; the payload is kept in {}", p.display()),
        _ => String::new(),
    }
}

/// `arev publish github|gitlab <RUN_DIR|RUN_ID|REPORT.json> [--pr N] [--dry-run]`.
pub(crate) fn publish_command(args: &PublishArgs) -> Result<i32, ExpectedError> {
    let cwd = cwd()?;
    let forge: Forge = args.forge.into();
    let direct = cwd.join(&args.run);
    let (report, run_dir) = if direct.is_file() {
        let r = load_report_file(&direct).map_err(|e| ExpectedError::Usage(e.to_string()))?;
        // A report.json, in its run dir or copied out of it (`--out arev.json`), publishes
        // from (and keeps its payload in) that run dir when it is there and is the same run.
        let dir = PathBuf::from(&r.run_dir);
        let same_run = load_report(&dir).is_ok_and(|in_dir| in_dir.run_id == r.run_id);
        (r, same_run.then_some(dir))
    } else {
        let dir = named_run_dir(&cwd, &args.run, args.run_dir.as_deref())?;
        let r = load_report(&dir).map_err(|e| ExpectedError::Usage(e.to_string()))?;
        (r, Some(dir))
    };
    if report.status == RunStatus::Interrupted || report.status == RunStatus::Running {
        return Err(ExpectedError::Usage(format!(
            "run {} is {}: there is no review to publish",
            report.run_id,
            report.status.as_str()
        )));
    }
    let (root, _) = crate::resolve::discover_root(&cwd);
    match publish_report(
        forge,
        &report,
        run_dir.as_deref(),
        &root,
        args.pr,
        args.dry_run,
    ) {
        Ok((number, p)) => {
            if !args.dry_run {
                output::note(&describe(forge, number, &p));
            }
            Ok(exit_codes::OK)
        }
        Err(e) if e.is_setting() => Err(ExpectedError::Usage(e.to_string())),
        Err(e) => Err(ExpectedError::Usage(format!(
            "publishing to {} failed: {e}{}",
            forge.as_str(),
            kept_note(run_dir.as_deref().filter(|_| !args.dry_run), forge)
        ))),
    }
}

/// `arev run --publish`: check the settings before reviewing (a missing token is a usage
/// error, exit 2, before any agent runs).
pub(crate) fn preflight(args: &RunArgs) -> Result<(), ExpectedError> {
    match args.publish {
        Some(f) => settings(f.into(), &process_env, None, None)
            .map(|_| ())
            .map_err(|e| {
                ExpectedError::Usage(format!("--publish {}: {e}", Forge::from(f).as_str()))
            }),
        None => Ok(()),
    }
}

/// `arev run --publish`: publish the finished review (whatever its verdict; an interrupted
/// run is not published) and return the exit code: the review's `code`, unless the publish
/// failed under `--publish-strict` (then 2 for a review that reached a verdict).
pub(crate) fn after_run(
    args: &RunArgs,
    report: &Report,
    run_dir: &Path,
    root: &Path,
    code: i32,
) -> i32 {
    let Some(f) = args.publish else {
        return code;
    };
    let forge: Forge = f.into();
    if report.status == RunStatus::Interrupted {
        output::warn(&format!(
            "not published to {}: the review was interrupted",
            forge.as_str()
        ));
        return code;
    }
    match publish_report(forge, report, Some(run_dir), root, None, false) {
        Ok((number, p)) => {
            output::note(&describe(forge, number, &p));
            code
        }
        Err(e) => {
            output::error(&format!(
                "publishing to {} failed: {e}{} — retry with `arev publish {} {}`",
                forge.as_str(),
                kept_note(Some(run_dir), forge),
                forge.as_str(),
                run_dir.display()
            ));
            if args.publish_strict && (code == exit_codes::OK || code == exit_codes::FINDINGS) {
                exit_codes::USAGE
            } else {
                code
            }
        }
    }
}
