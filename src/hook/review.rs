//! One Stop-hook review: `arev run diff [--base HEAD-at-enable] --format json --allow-empty`
//! as a supervised child process (the full round protocol, its own run dir and report),
//! bounded by `[hook] timeout`, turned into a `Verdict` — or into the reason it produced none.
//! If the hook itself is killed (Claude Code's hook timeout), the review gets SIGTERM at once.

use super::decide::{FindingBrief, ReviewOutcome, Verdict};
use super::lock::lock_reviews;
use super::state::SessionStore;
use crate::findings::Severity;
use crate::process::{supervise_blocking, Ended, Env, Input, Limits, Sink, Spec};
use crate::report::{Report, ReportFinding};
use crate::store::RunStatus;
use nix::sys::signal::Signal;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The report on stdout is kept up to this size (far beyond any real report).
const REPORT_CAP: u64 = 64 << 20;
/// The review's stderr is kept up to this size (its last line explains a failure).
const STDERR_CAP: u64 = 1 << 20;
/// After SIGTERM the review stops its own agents (their grace) and records the run as
/// interrupted; it gets this much more before SIGKILL.
const FINALIZE_MARGIN: Duration = Duration::from_secs(5);

/// Variables of the Claude Code session that must not leak into the reviewers.
const SESSION_VARS: &[&str] = &[
    "CLAUDECODE",
    "CLAUDE_CODE_SESSION_ID",
    "CLAUDE_CODE_ENTRYPOINT",
    "CLAUDE_PROJECT_DIR",
    "CLAUDE_PLUGIN_ROOT",
    "CLAUDE_PLUGIN_DATA",
    "CLAUDE_PID",
    "CLAUDE_EFFORT",
];

/// What to review and how long it may take.
#[derive(Debug, Clone)]
pub struct ReviewRequest {
    /// The `arev` executable (normally the running one).
    pub exe: PathBuf,
    pub root: PathBuf,
    /// `--base`: HEAD when review was enabled.
    pub base: Option<String>,
    pub timeout: Duration,
    pub grace: Duration,
}

/// [`review`], one per session at a time: a Stop hook that finds another hook of its session
/// reviewing waits for it (the session's review lock), then takes the verdict cached for
/// `sha` if that review was of the same diff, and only reviews itself otherwise. The verdict
/// is cached before the lock is released.
pub fn review_shared(store: &SessionStore, sha: &str, req: &ReviewRequest) -> ReviewOutcome {
    // A lock that cannot be taken (an unwritable session dir) never stops the review.
    let _lock = lock_reviews(&store.dir)
        .map_err(|e| tracing::debug!(error = %e, "no session review lock"))
        .ok();
    if let Some(v) = store.load_verdict(sha) {
        return ReviewOutcome::Reviewed(v);
    }
    let outcome = review(req);
    if let ReviewOutcome::Reviewed(v) = &outcome {
        // Cached under the sha that was pinned: that diff is never reviewed again.
        let _ = store.save_verdict(v);
    }
    outcome
}

/// Run the review to a verdict. Never panics; every failure is a `Failed` with the reason.
pub fn review(req: &ReviewRequest) -> ReviewOutcome {
    let mut args: Vec<OsString> = ["run", "diff", "--format", "json", "--allow-empty", "-q"]
        .into_iter()
        .map(OsString::from)
        .collect();
    if let Some(b) = &req.base {
        args.extend(["--base".into(), b.into()]);
    }
    let spec = Spec {
        label: "hook review".into(),
        program: req.exe.clone(),
        args,
        cwd: req.root.clone(),
        // The reviewers are Claude Code sessions too: arev's hooks stay off inside them, so a
        // project-scoped install can never make a review review itself.
        env: Env::Inherit {
            remove: SESSION_VARS.iter().map(OsString::from).collect(),
            set: vec![("AREV_DISABLE".into(), "1".into())],
        },
        stdin: Input::Null,
        stdout: Sink::Capture { cap: REPORT_CAP },
        stderr: Sink::Capture { cap: STDERR_CAP },
        // SIGTERM: `arev run` stops its agents and records the run as interrupted.
        parent_death: Signal::SIGTERM,
    };
    let limits = Limits {
        timeout: req.timeout,
        grace: req.grace.saturating_add(FINALIZE_MARGIN),
    };
    let finished = match supervise_blocking(spec, limits) {
        Ok(f) => f,
        Err(e) => {
            return ReviewOutcome::Failed(format!("cannot start {} ({e})", req.exe.display()))
        }
    };
    if let Ended::TimedOut { .. } = finished.ended {
        return ReviewOutcome::Failed(format!(
            "the review took longer than [hook] timeout ({})",
            humantime::format_duration(req.timeout)
        ));
    }
    let code = finished.ended.exit_code();
    match serde_json::from_slice::<Report>(&finished.stdout.kept) {
        Ok(report) => outcome_of(&report),
        Err(_) => {
            let stderr = String::from_utf8_lossy(&finished.stderr.kept);
            let last = stderr
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("no message");
            ReviewOutcome::Failed(format!(
                "`arev run diff` exited with {} and no report: {}",
                code.map_or("a signal".to_string(), |c| format!("code {c}")),
                last.trim()
            ))
        }
    }
}

/// A report → a verdict (complete or empty), or why there is none.
pub fn outcome_of(report: &Report) -> ReviewOutcome {
    match report.status {
        RunStatus::Complete | RunStatus::Empty => ReviewOutcome::Reviewed(verdict_of(report)),
        RunStatus::Aborted => ReviewOutcome::Failed(format!(
            "the review aborted ({}): {} — run dir {}",
            report.abort_reason.as_deref().unwrap_or("unknown"),
            report.abort_detail.as_deref().unwrap_or("no detail"),
            report.run_dir
        )),
        RunStatus::Interrupted | RunStatus::Running => ReviewOutcome::Failed(format!(
            "the review was interrupted — run dir {}",
            report.run_dir
        )),
    }
}

fn brief(f: &ReportFinding) -> FindingBrief {
    FindingBrief {
        fingerprint: f.fingerprint.clone(),
        severity: f.severity,
        file: f.file.clone(),
        line: f.line,
        category: f.category.clone(),
        description: f.description.clone(),
        edit_instruction: f.edit_instruction.clone(),
    }
}

/// Severity → action (docs/architecture.md §14.1): critical = blocker, high/medium =
/// concern, low = aside.
pub fn verdict_of(report: &Report) -> Verdict {
    let pick = |sevs: &[Severity]| {
        report
            .gating()
            .filter(|f| sevs.contains(&f.severity))
            .map(brief)
            .collect()
    };
    Verdict {
        sha: report.target.sha256.clone(),
        run_id: report.run_id.clone(),
        report: Path::new(&report.run_dir)
            .join("report.md")
            .display()
            .to_string(),
        critical: pick(&[Severity::Critical]),
        concerns: pick(&[Severity::High, Severity::Medium]),
        asides: pick(&[Severity::Low]),
    }
}
