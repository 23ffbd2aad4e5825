//! One publish of a finished review: find the report (`arev publish <RUN>`), build the
//! payload (or reload the one an earlier attempt kept), keep it, send it and record the
//! outcome; the line saying what it did, and the exit code after a failed `--publish`.

use super::build::{build_payload, report_pointer, short_sha, validate_report};
use super::env::{process_env, settings};
use super::error::PublishError;
use super::http::RetryPolicy;
use super::keep::{keep_payload, kept_payload, record, sealed};
use super::model::Forge;
use super::plan::Published;
use super::send::send;
use crate::errors::ExpectedError;
use crate::exit_codes;
use crate::output::inert_line;
use crate::report::Report;
use crate::store::{load_report, load_report_file, RunStatus};
use std::path::{Component, Path, PathBuf};

/// The report `arev publish <RUN>` names, and its run dir when it has one: `run` is a
/// report file (published from its run dir when that holds the same run), else the run dir
/// `dir_of()` finds for it (a directory, or a run id under the runs base). A run without a
/// verdict (interrupted, running) is refused.
pub fn find_report(
    cwd: &Path,
    run: &str,
    dir_of: impl FnOnce() -> Result<PathBuf, ExpectedError>,
) -> Result<(Report, Option<PathBuf>), ExpectedError> {
    let direct = cwd.join(run);
    let (report, run_dir) = if direct.is_file() {
        let r = load_report_file(&direct)?;
        // A report.json, in its run dir or copied out of it (`--out arev.json`), publishes
        // from (and keeps its payload in) that run dir when it is there and is the same run.
        let dir = PathBuf::from(&r.run_dir);
        let same_run = load_report(&dir).is_ok_and(|in_dir| in_dir.run_id == r.run_id);
        (r, same_run.then_some(dir))
    } else {
        let dir = dir_of()?;
        let r = load_report(&dir)?;
        (r, Some(dir))
    };
    if report.status == RunStatus::Interrupted || report.status == RunStatus::Running {
        return Err(ExpectedError::Usage(format!(
            "run {} is {}: there is no review to publish",
            report.run_id,
            report.status.as_str()
        )));
    }
    Ok((report, run_dir))
}

/// The text of 1-based `line` of `root/path` (None for a path leaving the root, an
/// unreadable file or a line out of range).
pub fn line_text(root: &Path, path: &str, line: u32) -> Option<String> {
    let rel = Path::new(path);
    if rel.is_absolute() || rel.components().any(|c| matches!(c, Component::ParentDir)) {
        return None;
    }
    let text = std::fs::read_to_string(root.join(rel)).ok()?;
    let l = text.lines().nth((line as usize).checked_sub(1)?)?;
    Some(l.strip_suffix('\r').unwrap_or(l).to_string())
}

/// The time bound of a whole publish: `AREV_PUBLISH_TIMEOUT` seconds, else the default.
pub fn policy() -> Result<RetryPolicy, PublishError> {
    let mut p = RetryPolicy::default();
    if let Some(v) = process_env("AREV_PUBLISH_TIMEOUT").filter(|v| !v.trim().is_empty()) {
        let s: u64 = v.trim().parse().ok().filter(|s| *s > 0).ok_or_else(|| {
            PublishError::BadSetting(format!(
                "AREV_PUBLISH_TIMEOUT must be a positive number of seconds, not `{}`",
                crate::output::inert_line(&v)
            ))
        })?;
        p.total = std::time::Duration::from_secs(s);
    }
    Ok(p)
}

/// Build (or reload the same job's), keep, send and record; the PR/MR number and what was
/// published. The report is validated first (in the fork flow it is the untrusted side's
/// artifact); the repository, PR and API host come only from the environment, `--pr` and
/// the checkout at `root`; the PR's head must be the commit the report reviewed. Errors
/// are returned for the caller to print; with a run dir (and not a dry run) every outcome
/// is recorded there, failures included.
pub fn publish_report(
    forge: Forge,
    report: &Report,
    run_dir: Option<&Path>,
    root: &Path,
    pr: Option<u64>,
    dry_run: bool,
    dismiss_by: super::talk::DismissBy,
) -> Result<(u64, Published), PublishError> {
    let keep_in = run_dir.filter(|_| !dry_run);
    let mut head = None;
    let outcome = (|| {
        validate_report(report).map_err(|check| PublishError::BadReport {
            run_id: inert_line(&report.run_id).into_owned(),
            check,
        })?;
        let policy = policy()?;
        let settings = settings(forge, &process_env, pr, Some(root))?;
        let number = settings.target.number;
        let reviewed = report.target.commit.as_deref();
        // The flagged lines are read for suggestions only from a checkout of the reviewed
        // commit (the publishing job's checkout may be another).
        let here = crate::report::head_commit(root);
        let lines_here = reviewed.is_some() && here.as_deref() == reviewed;
        let kept = run_dir.and_then(|d| kept_payload(d, forge, &settings.token));
        let payload = match kept {
            // The payload this job kept; the target is this publish's own.
            Some(mut p) => {
                p.target = settings.target.clone();
                p
            }
            None => sealed(
                build_payload(
                    report,
                    forge,
                    settings.target.clone(),
                    report_pointer(&report.run_id, settings.ci_url.as_deref()),
                    settings.web_url.as_deref(),
                    &|path, line| lines_here.then(|| line_text(root, path, line)).flatten(),
                ),
                &settings.token,
            ),
        };
        head.clone_from(&payload.target.head_sha);
        if let Some(d) = keep_in {
            keep_payload(d, &payload)?;
        }
        send(&payload, settings, policy, dry_run, dismiss_by).map(|p| (number, p))
    })();
    if let Some(d) = keep_in {
        record(d, forge, head.as_deref(), outcome.as_ref().map(|(_, p)| p));
    }
    outcome
}

/// One line on stderr saying what a publish did.
pub fn describe(forge: Forge, number: u64, p: &Published) -> String {
    let what = match forge {
        Forge::Github => "pull request",
        Forge::Gitlab => "merge request",
    };
    format!(
        "published to {what} #{number} at {}: summary {}, {} new inline comment(s), {} already commented, {} outside the diff (summary only), {} marked fixed, {} not raised again{}",
        short_sha(&p.head_sha),
        p.summary,
        p.commented.len(),
        p.already_commented.len(),
        p.outside_diff.len(),
        p.marked_fixed.len(),
        p.not_raised_again.len(),
        if p.dismissed.is_empty() && p.replies == 0 && p.resolved.is_empty() {
            String::new()
        } else {
            format!(
                ", {} dismissed on the pull request, {} thread(s) resolved, {} repl(ies)",
                p.dismissed.len(),
                p.resolved.len(),
                p.replies
            )
        }
    )
}

/// The exit code of `arev run --publish` whose publish failed: the review's `code`, unless
/// `--publish-strict` (then 2 for a review that reached a verdict).
pub fn code_after_failed_publish(code: i32, strict: bool) -> i32 {
    if strict && (code == exit_codes::OK || code == exit_codes::FINDINGS) {
        exit_codes::USAGE
    } else {
        code
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures;

    #[test]
    fn describe_names_the_request_kind_and_counts() {
        let p = Published {
            head_sha: "0123456789abcdef".into(),
            summary: "updated",
            commented: vec!["a".into(), "b".into()],
            already_commented: vec![],
            outside_diff: vec!["c".into()],
            marked_fixed: vec![],
            not_raised_again: vec![],
            ..Published::default()
        };
        assert_eq!(
            describe(Forge::Gitlab, 4, &p),
            format!(
                "published to merge request #4 at {}: summary updated, 2 new inline comment(s), 0 already commented, 1 outside the diff (summary only), 0 marked fixed, 0 not raised again",
                short_sha("0123456789abcdef")
            )
        );
        assert!(describe(Forge::Github, 4, &p).starts_with("published to pull request #4 at "));
    }

    #[test]
    fn line_text_reads_a_line_inside_the_root_only() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("a.rs"), "one\r\ntwo\nthree").unwrap();
        assert_eq!(line_text(d.path(), "a.rs", 1).as_deref(), Some("one"));
        assert_eq!(line_text(d.path(), "a.rs", 3).as_deref(), Some("three"));
        assert_eq!(line_text(d.path(), "a.rs", 0), None);
        assert_eq!(line_text(d.path(), "a.rs", 4), None);
        assert_eq!(line_text(d.path(), "missing.rs", 1), None);
        assert_eq!(line_text(d.path(), "../a.rs", 1), None);
        let abs = d.path().join("a.rs");
        assert_eq!(line_text(d.path(), &abs.display().to_string(), 1), None);
    }

    #[test]
    fn a_failed_publish_fails_the_run_only_when_strict_and_the_review_had_a_verdict() {
        use exit_codes::{ABORTED, FINDINGS, OK, USAGE};
        for (code, strict, after) in [
            (OK, false, OK),
            (OK, true, USAGE),
            (FINDINGS, true, USAGE),
            (FINDINGS, false, FINDINGS),
            (ABORTED, true, ABORTED),
        ] {
            assert_eq!(
                code_after_failed_publish(code, strict),
                after,
                "{code} {strict}"
            );
        }
    }

    #[test]
    fn find_report_takes_a_copied_report_and_refuses_a_run_without_a_verdict() {
        let d = tempfile::tempdir().unwrap();
        let never = || -> Result<PathBuf, ExpectedError> { panic!("not a run id") };
        let mut r = fixtures::shard(1, 1, &["a.rs"], RunStatus::Complete);
        r.run_dir = d.path().join("gone").display().to_string();
        std::fs::write(
            d.path().join("arev.json"),
            serde_json::to_string(&r).unwrap(),
        )
        .unwrap();
        let (found, run_dir) = find_report(d.path(), "arev.json", never).unwrap();
        assert_eq!((found.run_id.as_str(), run_dir), ("run-1", None));

        r.status = RunStatus::Interrupted;
        std::fs::write(
            d.path().join("arev.json"),
            serde_json::to_string(&r).unwrap(),
        )
        .unwrap();
        let e = find_report(d.path(), "arev.json", never).unwrap_err();
        assert_eq!(
            e.to_string(),
            "run run-1 is interrupted: there is no review to publish"
        );
        // Not a file: the run dir `dir_of` finds, whose report must load.
        let e = find_report(d.path(), "no-such-run", || Ok(d.path().join("runs")));
        assert!(e.is_err());
        let e = find_report(d.path(), "no-such-run", || {
            Err(ExpectedError::Usage("no run no-such-run".into()))
        });
        assert_eq!(e.unwrap_err().to_string(), "no run no-such-run");
    }
}
