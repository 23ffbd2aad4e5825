//! One run of a reproducer: started through the sandbox by the process supervisor (its own
//! process group, killed at the time limit or on cancellation, orphans swept), stdout and
//! stderr interleaved on one pipe of which the last 64 KiB are kept, and what arev saw
//! recorded as a `RunOutcome`.

use super::error::ProveError;
use super::sandbox::{launch, SandboxSpec, READY};
use crate::process::{self, Env, Input, Limits, Sink, Spec};
use crate::records::RunRecord;
use nix::sys::signal::Signal;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::AsyncReadExt;
use tokio_util::sync::CancellationToken;

/// What arev saw of one run (the record a finding's evidence carries).
pub type RunOutcome = RunRecord;

/// Bytes of output kept: the last 64 KiB.
pub const OUTPUT_TAIL_BYTES: usize = 64 * 1024;
/// Between SIGTERM and SIGKILL at the limit. The sandbox's processes die with bwrap at once;
/// unsandboxed, a command gets this long to exit.
const GRACE: Duration = Duration::from_secs(1);

/// Runs `spec.argv` under the sandbox, killing every process of the run at the time limit.
/// A command that fails, hangs or is killed is an outcome; `Err` when it could not be
/// started at all (bwrap missing, a bad spec) or `cancel` fired.
pub async fn run(spec: &SandboxSpec, cancel: &CancellationToken) -> Result<RunOutcome, ProveError> {
    // Off the runtime's threads: sizing the worktree's tmpfs walks the scratch tree.
    let owned = spec.clone();
    let launch = tokio::task::spawn_blocking(move || launch(&owned))
        .await
        .map_err(|e| ProveError::Spawn(std::io::Error::other(e)))??;
    // One pipe for stdout and stderr: the tail reads them interleaved as they were written.
    let (tx, rx) = tokio::net::unix::pipe::pipe().map_err(ProveError::Spawn)?;
    let out = std::fs::File::from(tx.into_blocking_fd().map_err(ProveError::Spawn)?);
    let err = out.try_clone().map_err(ProveError::Spawn)?;
    let child = Spec {
        label: "prove".into(),
        program: launch.program,
        args: launch.args,
        cwd: spec.workdir.clone(),
        env: Env::Only(launch.env),
        stdin: Input::Null,
        stdout: Sink::File(out),
        stderr: Sink::File(err),
        parent_death: Signal::SIGKILL,
    };
    let tail: Arc<Mutex<Tail>> = Arc::default();
    let mut reader = tokio::spawn(read_tail(rx, Arc::clone(&tail)));
    let limits = Limits {
        timeout: spec.timeout,
        grace: GRACE,
    };
    let started = Instant::now();
    let finished = process::supervise(child, limits, cancel).await;
    let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    // Every writer is gone with the sandbox; the bound is for an unsandboxed escapee.
    if tokio::time::timeout(process::DRAIN_TIMEOUT, &mut reader)
        .await
        .is_err()
    {
        reader.abort();
    }
    let finished = finished.map_err(ProveError::Spawn)?;
    let (ready, output_tail) = std::mem::take(&mut *lock(&tail)).finish();
    let timed_out = match finished.ended {
        process::Ended::Cancelled { .. } => return Err(ProveError::Cancelled),
        process::Ended::TimedOut { .. } => true,
        _ => false,
    };
    let (exit, signal) = decode(finished.ended.status());
    let sandbox_error = (!ready && !timed_out).then(|| setup_error(&output_tail, exit, signal));
    Ok(RunOutcome {
        exit,
        signal,
        timed_out,
        duration_ms,
        output_tail,
        sandbox_error,
    })
}

/// (exit code, signal). A shell reports a command killed by signal n as exit `128 + n`, and
/// so does bwrap for the command it runs: read back as the signal, the same in both modes.
pub(super) fn decode(status: Option<ExitStatus>) -> (Option<i32>, Option<i32>) {
    let Some(status) = status else {
        return (None, None);
    };
    if let Some(sig) = status.signal() {
        return (None, Some(sig));
    }
    match status.code() {
        Some(c) if (129..=128 + 64).contains(&c) => (None, Some(c - 128)),
        c => (c, None),
    }
}

/// Why the command did not start: what bwrap (or the prologue shell) printed.
fn setup_error(output: &str, exit: Option<i32>, signal: Option<i32>) -> String {
    let said: Vec<&str> = output
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    if said.is_empty() {
        let how = match (exit, signal) {
            (Some(c), _) => format!("exited {c}"),
            (None, Some(s)) => format!("was killed by signal {s}"),
            (None, None) => "ended".into(),
        };
        format!("the sandbox {how} before the command started")
    } else {
        said[said.len().saturating_sub(5)..]
            .join("; ")
            .chars()
            .take(1000)
            .collect()
    }
}

fn lock(t: &Mutex<Tail>) -> std::sync::MutexGuard<'_, Tail> {
    t.lock().unwrap_or_else(|e| e.into_inner())
}

async fn read_tail(mut rx: tokio::net::unix::pipe::Receiver, tail: Arc<Mutex<Tail>>) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match rx.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => lock(&tail).push(&buf[..n]),
        }
    }
}

/// The line the prologue prints first.
fn ready_line() -> Vec<u8> {
    format!("{READY}\n").into_bytes()
}

/// The end of a stream: its first bytes (to see the ready line) and its last bytes.
#[derive(Debug, Default)]
pub(super) struct Tail {
    head: Vec<u8>,
    buf: Vec<u8>,
    total: u64,
}

impl Tail {
    fn keep() -> usize {
        OUTPUT_TAIL_BYTES + ready_line().len()
    }

    pub(super) fn push(&mut self, bytes: &[u8]) {
        let want = ready_line().len().saturating_sub(self.head.len());
        self.head.extend_from_slice(&bytes[..want.min(bytes.len())]);
        self.buf.extend_from_slice(bytes);
        self.total += bytes.len() as u64;
        if self.buf.len() > 2 * Self::keep() {
            let cut = self.buf.len() - Self::keep();
            self.buf.drain(..cut);
        }
    }

    /// Whether the stream began with the ready line, and its last 64 KiB without that line,
    /// from a character boundary, lossy UTF-8.
    pub(super) fn finish(mut self) -> (bool, String) {
        let line = ready_line();
        let ready = self.head == line;
        if ready && self.total == self.buf.len() as u64 {
            self.buf.drain(..line.len());
        }
        let mut from = self.buf.len().saturating_sub(OUTPUT_TAIL_BYTES);
        // A cut inside a character: start at the next one.
        let mut skipped = 0;
        while from < self.buf.len() && skipped < 3 && (self.buf[from] & 0xC0) == 0x80 {
            from += 1;
            skipped += 1;
        }
        (
            ready,
            String::from_utf8_lossy(&self.buf[from..]).into_owned(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_keeps_the_last_64_kib_and_drops_the_ready_line() {
        let mut t = Tail::default();
        t.push(READY.as_bytes());
        t.push(b"\nhello\n");
        assert_eq!(t.finish(), (true, "hello\n".to_string()));

        let mut t = Tail::default();
        t.push(b"bwrap: Can't find source path /nope: No such file or directory\n");
        let (ready, text) = t.finish();
        assert!(!ready);
        assert!(text.starts_with("bwrap: Can't find"), "{text}");

        // Far more than 64 KiB, in pieces: the last 64 KiB, the marker long gone.
        let mut t = Tail::default();
        t.push(ready_line().as_slice());
        for i in 0..100_000u32 {
            t.push(format!("{i:07}\n").as_bytes());
        }
        let (ready, text) = t.finish();
        assert!(ready);
        assert_eq!(text.len(), OUTPUT_TAIL_BYTES);
        assert!(text.ends_with("0099999\n"), "{}", &text[text.len() - 20..]);
        assert!(!text.contains(READY));

        // A cut inside a character starts at the next character.
        let mut t = Tail::default();
        t.push(format!("{}a", "é".repeat(OUTPUT_TAIL_BYTES)).as_bytes());
        let (_, text) = t.finish();
        assert!(!text.contains('\u{FFFD}'), "{}", &text[..8]);
        assert_eq!(text.len(), OUTPUT_TAIL_BYTES - 1);
        assert!(text.starts_with('é') && text.ends_with("éa"));
    }

    #[test]
    fn a_shells_128_plus_n_is_read_back_as_signal_n() {
        let st = |raw: i32| Some(ExitStatus::from_raw(raw));
        assert_eq!(decode(st(0)), (Some(0), None));
        assert_eq!(decode(st(1 << 8)), (Some(1), None));
        assert_eq!(decode(st(127 << 8)), (Some(127), None));
        assert_eq!(decode(st(137 << 8)), (None, Some(9)));
        assert_eq!(decode(st(255 << 8)), (Some(255), None));
        // Killed directly by SIGTERM.
        assert_eq!(decode(st(15)), (None, Some(15)));
        assert_eq!(decode(None), (None, None));
    }
}
