//! One Stop-hook review: `arev run diff --base-tree <baseline snapshot> [--intent FILE]
//! --format json --allow-empty` as a supervised child process (the full round protocol, its
//! own run dir and report), bounded by `[hook] timeout`, turned into a `Verdict` — or into the
//! reason it produced none. If the hook itself is killed (Claude Code's hook timeout), the
//! review gets SIGTERM at once. Before that, the verdict cache (`store::cache`, the one
//! `arev run` keeps) is asked for the verdict of that very review ([`cached_verdict`]).

use super::decide::{FindingBrief, ReviewOutcome, Verdict};
use super::lock::lock_reviews;
use super::state::SessionStore;
use crate::findings::Severity;
use crate::process::{supervise_blocking, Ended, Env, Input, Limits, Sink, Spec};
use crate::report::{Report, ReportFinding};
use crate::store::cache::VerdictCache;
use crate::store::RunStatus;
use crate::target::TargetIdentity;
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
    /// `--base-tree`: the session's baseline snapshot (only the changes since it are reviewed).
    pub base_tree: String,
    /// `--intent`: the user's prompts since review was enabled, composed into a file.
    pub intent: Option<PathBuf>,
    pub timeout: Duration,
    pub grace: Duration,
}

/// [`review`], one per session at a time: a Stop hook that finds another hook of its session
/// reviewing waits for it (the session's review lock), then takes the verdict of `target` from
/// the verdict cache if that review was of the same diff (the child review stores it there
/// before it exits, so before the lock is released), and only reviews itself otherwise.
pub fn review_shared(
    store: &SessionStore,
    target: &TargetIdentity,
    req: &ReviewRequest,
) -> ReviewOutcome {
    // A lock that cannot be taken (an unwritable session dir) never stops the review.
    let _lock = lock_reviews(&store.dir)
        .map_err(|e| tracing::debug!(error = %e, "no session review lock"))
        .ok();
    if let Some(v) = cached_verdict(req, target) {
        return ReviewOutcome::Reviewed(v);
    }
    review(req)
}

/// The `arev run` arguments (after `run`) of the review `req` asks for.
fn run_args(req: &ReviewRequest) -> Vec<OsString> {
    let mut args: Vec<OsString> = ["diff", "--format", "json", "--allow-empty", "-q"]
        .into_iter()
        .map(OsString::from)
        .collect();
    args.extend(["--base-tree".into(), (&req.base_tree).into()]);
    if let Some(i) = &req.intent {
        args.extend(["--intent".into(), i.into()]);
    }
    args
}

/// The verdict the verdict cache holds for the review `req` asks for, whose target is
/// `target` (the session's snapshot diff, `Snapshot::identity`): the key is computed as the
/// child `arev run` computes it, from the plan its arguments resolve to (configuration,
/// prompts, agents, review context, the intent file) — without pinning the diff again. A
/// function of the target's identity: whatever finds that identity cheaply may sit in front.
/// None on a miss, with `--no-cache`-like conditions (no cache directory), or when the plan
/// cannot be resolved (the review then says why).
pub fn cached_verdict(req: &ReviewRequest, target: &TargetIdentity) -> Option<Verdict> {
    let args = crate::cli::RunArgs::parse_run(run_args(req))
        .map_err(|e| tracing::debug!(error = %e, "hook review arguments"))
        .ok()?;
    let plan = crate::resolve::resolve_unpinned(&args, &req.root, target)
        .map_err(|e| tracing::debug!(error = %e, "hook verdict-cache plan"))
        .ok()?;
    let dir = plan.memory.cache_dir.as_ref()?;
    let key = crate::review::cache_key(&plan, target)?;
    let hit = VerdictCache::new(dir).lookup(&key)?;
    Some(verdict_of(&hit.report))
}

/// Run the review to a verdict. Never panics; every failure is a `Failed` with the reason.
pub fn review(req: &ReviewRequest) -> ReviewOutcome {
    let mut args = vec![OsString::from("run")];
    args.extend(run_args(req));
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
        return timed_out_outcome(&finished.stdout.kept, req.timeout);
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

/// A review stopped at `[hook] timeout`: `arev run` got the signal, stopped its agents and
/// (normally) recorded the run as `interrupted` and printed its report, which names the run
/// dir. Never a verdict, even if the report came out complete at the last moment.
fn timed_out_outcome(stdout: &[u8], timeout: Duration) -> ReviewOutcome {
    let limit = humantime::format_duration(timeout);
    let run = match serde_json::from_slice::<Report>(stdout) {
        Ok(r) => format!(
            "it was stopped and recorded as {} in {}",
            r.status.as_str(),
            r.run_dir
        ),
        Err(_) => {
            "it was stopped before it could write its report (`arev runs` lists it)".to_string()
        }
    };
    ReviewOutcome::Unfinished(format!(
        "the review took longer than [hook] timeout ({limit}); {run}"
    ))
}

/// A report → a verdict (complete or empty), or why there is none.
pub fn outcome_of(report: &Report) -> ReviewOutcome {
    match report.status {
        RunStatus::Complete | RunStatus::Empty => ReviewOutcome::Reviewed(verdict_of(report)),
        RunStatus::Aborted => ReviewOutcome::Failed(format!(
            "the review aborted ({}): {} — run dir {}",
            report
                .abort_reason
                .map_or_else(|| "unknown".into(), |a| a.to_string()),
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
