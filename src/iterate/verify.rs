//! `--verify CMD`: `sh -c CMD` in the worktree under the process supervisor (own process
//! group, stdout and stderr into one log file, SIGTERM → grace → SIGKILL on timeout or
//! Ctrl-C, bounded even after SIGKILL, nothing left running afterwards).

use crate::process::{supervise, Ended, Env, Input, Limits, Sink, Spec};
use nix::sys::signal::Signal;
use std::path::Path;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// How the command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyOutcome {
    /// None when killed by a signal.
    pub exit_code: Option<i32>,
    pub cancelled: bool,
    /// Killed after `[timeouts] verify`.
    pub timed_out: bool,
    pub duration_ms: u64,
}

impl VerifyOutcome {
    pub fn ok(&self) -> bool {
        !self.cancelled && !self.timed_out && self.exit_code == Some(0)
    }
}

/// Run `sh -c command` in `cwd`, writing its output to `log`. After `limit`, or on Ctrl-C,
/// its process group gets SIGTERM, then SIGKILL after `grace`.
pub async fn run_verify(
    command: &str,
    cwd: &Path,
    log: &Path,
    limit: Duration,
    grace: Duration,
    cancel: &CancellationToken,
) -> std::io::Result<VerifyOutcome> {
    let started = Instant::now();
    let out = std::fs::File::create(log)?;
    let err = out.try_clone()?;
    let spec = Spec {
        label: "verify".into(),
        program: "sh".into(),
        args: vec!["-c".into(), command.into()],
        cwd: cwd.to_path_buf(),
        env: Env::Inherit {
            remove: vec![],
            set: vec![],
        },
        stdin: Input::Null,
        stdout: Sink::File(out),
        stderr: Sink::File(err),
        parent_death: Signal::SIGKILL,
    };
    let finished = supervise(
        spec,
        Limits {
            timeout: limit,
            grace,
        },
        cancel,
    )
    .await?;
    let exit_code = finished.ended.exit_code();
    let (cancelled, timed_out) = match finished.ended {
        Ended::Exited(_) => (false, false),
        Ended::TimedOut { .. } => (false, true),
        Ended::Cancelled { .. } => (true, false),
        Ended::Lost(e) => return Err(e),
    };
    Ok(VerifyOutcome {
        exit_code,
        cancelled,
        timed_out,
        duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn exit_codes_and_log() {
        let d = tempfile::tempdir().unwrap();
        let log = d.path().join("v.log");
        let c = CancellationToken::new();
        let o = run_verify(
            "echo out; echo err >&2; pwd",
            d.path(),
            &log,
            Duration::from_secs(60),
            Duration::from_secs(1),
            &c,
        )
        .await
        .unwrap();
        assert!(o.ok());
        let text = std::fs::read_to_string(&log).unwrap();
        assert!(text.contains("out\n") && text.contains("err\n"), "{text}");
        let o = run_verify(
            "exit 3",
            d.path(),
            &log,
            Duration::from_secs(60),
            Duration::from_secs(1),
            &c,
        )
        .await
        .unwrap();
        assert_eq!(o.exit_code, Some(3));
        assert!(!o.ok());
    }

    #[tokio::test]
    async fn cancel_stops_the_group() {
        let d = tempfile::tempdir().unwrap();
        let log = d.path().join("v.log");
        let c = CancellationToken::new();
        let c2 = c.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(200)).await;
            c2.cancel();
        });
        let t = Instant::now();
        let o = run_verify(
            "trap '' TERM; sleep 30",
            d.path(),
            &log,
            Duration::from_secs(60),
            Duration::from_millis(200),
            &c,
        )
        .await
        .unwrap();
        assert!(o.cancelled && !o.ok());
        assert!(t.elapsed() < Duration::from_secs(10));
    }

    #[tokio::test]
    async fn a_verify_over_its_limit_is_killed_and_fails() {
        let d = tempfile::tempdir().unwrap();
        let log = d.path().join("v.log");
        let c = CancellationToken::new();
        let t = Instant::now();
        let o = run_verify(
            "trap '' TERM; sleep 30",
            d.path(),
            &log,
            Duration::from_millis(300),
            Duration::from_millis(200),
            &c,
        )
        .await
        .unwrap();
        assert!(o.timed_out && !o.cancelled && !o.ok(), "{o:?}");
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    }
}
