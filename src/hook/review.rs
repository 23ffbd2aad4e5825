//! One Stop-hook review: `arev run diff --base-tree <baseline snapshot> [--intent FILE]
//! --format json --allow-empty` as a child process (the full round protocol, its own run dir
//! and report), bounded by `[hook] timeout`, turned into a `Verdict` — or into the reason it
//! produced none.

use super::decide::{FindingBrief, ReviewOutcome, Verdict};
use crate::findings::Severity;
use crate::report::{Report, ReportFinding};
use crate::store::RunStatus;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

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

/// Run the review to a verdict. Never panics; every failure is a `Failed` with the reason.
pub fn review(req: &ReviewRequest) -> ReviewOutcome {
    let mut cmd = Command::new(&req.exe);
    cmd.args(["run", "diff", "--format", "json", "--allow-empty", "-q"]);
    cmd.arg("--base-tree").arg(&req.base_tree);
    if let Some(i) = &req.intent {
        cmd.arg("--intent").arg(i);
    }
    cmd.current_dir(&req.root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // The reviewers are Claude Code sessions too: arev's hooks stay off inside them, so a
        // project-scoped install can never make a review review itself.
        .env("AREV_DISABLE", "1");
    for v in SESSION_VARS {
        cmd.env_remove(v);
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            return ReviewOutcome::Failed(format!("cannot start {} ({e})", req.exe.display()))
        }
    };
    let mut out = child.stdout.take();
    let mut err = child.stderr.take();
    let out_t = std::thread::spawn(move || {
        let mut v = Vec::new();
        if let Some(o) = out.as_mut() {
            let _ = o.read_to_end(&mut v);
        }
        v
    });
    let err_t = std::thread::spawn(move || {
        let mut v = Vec::new();
        if let Some(e) = err.as_mut() {
            let _ = e.read_to_end(&mut v);
        }
        v
    });
    let started = Instant::now();
    let mut timed_out = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) => {}
            Err(_) => break None,
        }
        if !timed_out && started.elapsed() >= req.timeout {
            // SIGINT: `arev run` stops its agents and finalises the run dir as interrupted.
            timed_out = true;
            let pid = nix::unistd::Pid::from_raw(child.id() as i32);
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT);
        }
        if timed_out && started.elapsed() >= req.timeout + req.grace {
            let _ = child.kill();
            break child.wait().ok();
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stdout = out_t.join().unwrap_or_default();
    let stderr = err_t.join().unwrap_or_default();
    if timed_out {
        return timed_out_outcome(&stdout, req.timeout);
    }
    let code = status.and_then(|s| s.code());
    match serde_json::from_slice::<Report>(&stdout) {
        Ok(report) => outcome_of(&report),
        Err(_) => {
            let stderr = String::from_utf8_lossy(&stderr);
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

/// Severity → action (seed 004): critical = blocker, high/medium = concern, low = aside.
pub fn verdict_of(report: &Report) -> Verdict {
    let pick = |sevs: &[Severity]| {
        report
            .confirmed
            .iter()
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
