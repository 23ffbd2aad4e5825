//! `arev publish github|gitlab <RUN>` and `arev run --publish`: arguments → one publish of
//! the review (`crate::publish`: build or reload the payload, keep it in the run dir, send,
//! record) → a line on stderr and an exit code. A failed publish after a run keeps the
//! review's exit code unless `--publish-strict`.

use super::emit::{cwd, named_run_dir, verdict_without};
use crate::cli::{ForgeArg, PublishArgs, RunArgs};
use crate::config::{ConfigSources, DismissBy, FailOn};
use crate::errors::ExpectedError;
use crate::exit_codes;
use crate::output;
use crate::publish::{
    code_after_failed_publish, describe, find_report, kept_note, process_env, publish_report,
    settings, Forge, PublishFailed, Published,
};
use crate::report::Report;
use crate::store::RunStatus;
use std::path::Path;

/// The forge a `--publish` / `arev publish` argument names.
fn forge_of(f: ForgeArg) -> Forge {
    match f {
        ForgeArg::Github => Forge::Github,
        ForgeArg::Gitlab => Forge::Gitlab,
    }
}

/// `arev publish github|gitlab <RUN_DIR|RUN_ID|REPORT.json> [--pr N] [--dry-run]`.
pub(crate) fn publish_command(args: &PublishArgs) -> Result<i32, ExpectedError> {
    let cwd = cwd()?;
    let forge = forge_of(args.forge);
    let (report, run_dir) = find_report(&cwd, &args.run, || {
        named_run_dir(&cwd, &args.run, args.run_dir.as_deref())
    })?;
    let (root, _) = crate::resolve::discover_root(&cwd);
    if let Some(p) = args.config.as_deref().filter(|p| !p.is_file()) {
        return Err(ExpectedError::Usage(format!(
            "--config {}: no such file",
            p.display()
        )));
    }
    let (config, _) = crate::config::load(&ConfigSources::discover(&root, args.config.clone()))?;
    match publish_report(
        forge,
        &report,
        run_dir.as_deref(),
        &root,
        args.pr,
        args.dry_run,
        config.publish.dismiss_by,
    ) {
        Ok((number, p)) => {
            if !args.dry_run {
                output::note(&describe(forge, number, &p));
            }
            // `--fail-on`: the review's findings gate, those dismissed on the PR excepted.
            Ok(match args.fail_on {
                Some(f) => gate(&report, f.into(), &p),
                None => exit_codes::OK,
            })
        }
        Err(e) if e.is_setting() => Err(e.into()),
        Err(source) => Err(PublishFailed {
            what: format!("publishing to {} failed", forge.as_str()),
            source,
            kept: kept_note(run_dir.as_deref().filter(|_| !args.dry_run), forge),
        }
        .into()),
    }
}

/// `arev run --publish`: check the settings before reviewing (a missing token is a usage
/// error, exit 2, before any agent runs).
pub(crate) fn preflight(args: &RunArgs) -> Result<(), ExpectedError> {
    match args.publish {
        Some(f) => settings(
            forge_of(f),
            &process_env,
            None,
            cwd()
                .ok()
                .map(|c| crate::resolve::discover_root(&c).0)
                .as_deref(),
        )
        .map(|_| ())
        .map_err(|source| {
            PublishFailed {
                what: format!("--publish {}", forge_of(f).as_str()),
                source,
                kept: String::new(),
            }
            .into()
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
    (fail_on, dismiss_by): (FailOn, DismissBy),
) -> i32 {
    let Some(f) = args.publish else {
        return code;
    };
    let forge = forge_of(f);
    if report.status == RunStatus::Interrupted {
        output::warn(&format!(
            "not published to {}: the review was interrupted",
            forge.as_str()
        ));
        return code;
    }
    match publish_report(forge, report, Some(run_dir), root, None, false, dismiss_by) {
        Ok((number, p)) => {
            output::note(&describe(forge, number, &p));
            // A finding dismissed on the pull request no longer gates.
            if code == exit_codes::FINDINGS {
                gate(report, fail_on, &p)
            } else {
                code
            }
        }
        Err(e) => {
            output::error(&format!(
                "publishing to {} failed: {e}{} — retry with `arev publish {} {}`",
                forge.as_str(),
                kept_note(Some(run_dir), forge),
                forge.as_str(),
                run_dir.display()
            ));
            code_after_failed_publish(code, args.publish_strict)
        }
    }
}

/// The verdict of `report` at `fail_on` once published: the findings dismissed on the pull
/// request do not count.
fn gate(report: &Report, fail_on: FailOn, p: &Published) -> i32 {
    let dismissed = p.dismissed.iter().map(|d| d.fingerprint.clone()).collect();
    let code = verdict_without(report, fail_on, &dismissed);
    if !p.dismissed.is_empty() {
        output::note(&format!(
            "{} finding(s) dismissed on the pull request do not gate",
            p.dismissed.len()
        ));
    }
    code
}
