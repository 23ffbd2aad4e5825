//! One supervised child: its own process group, stdin written then closed, stdout/stderr
//! read concurrently with byte caps (or sent to a file), a wall-clock limit and cancellation
//! ending in SIGTERM → grace → SIGKILL to the whole group, a drop guard, the parent-death
//! signal, and at its end every descendant it left behind killed (see `reaper`).

use super::reaper;
use super::spec::{Input, Sink, Spec};
use nix::errno::Errno;
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use std::process::ExitStatus;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::Child;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tracing::debug;

/// After the child is reaped, how long to wait for its pipes to reach EOF. A grandchild that
/// escaped the process group may hold them open forever; reading stops after this.
pub const DRAIN_TIMEOUT: Duration = Duration::from_secs(2);
/// Upper bound on waiting for the reaping of a SIGKILLed child.
const REAP_AFTER_KILL: Duration = Duration::from_secs(5);
/// Spawn retries on ETXTBSY (the executable is still open for writing somewhere).
const SPAWN_ATTEMPTS: u32 = 5;

/// How long the child may run, and how long it gets to exit after SIGTERM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub timeout: Duration,
    pub grace: Duration,
}

/// Bytes captured from one pipe (`kept` is empty for a `Sink::File` or a `Sink::Spool`).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Captured {
    /// The first `cap` bytes (`Sink::Capture`).
    pub kept: Vec<u8>,
    /// Every byte the child printed.
    pub total: u64,
    /// More than `cap` bytes were printed.
    pub truncated: bool,
}

/// How the child ended. `killed`: it outlived the grace and got SIGKILL. `status`: its exit
/// status, `None` if it could not be reaped within a bound after SIGKILL.
#[derive(Debug)]
pub enum Ended {
    /// It exited on its own.
    Exited(ExitStatus),
    /// The limit passed; its group was terminated.
    TimedOut {
        killed: bool,
        status: Option<ExitStatus>,
    },
    /// The cancellation token fired; its group was terminated.
    Cancelled {
        killed: bool,
        status: Option<ExitStatus>,
    },
    /// Waiting for it failed (practically impossible); its group was terminated.
    Lost(std::io::Error),
}

impl Ended {
    /// The exit status, when the child was reaped.
    pub fn status(&self) -> Option<ExitStatus> {
        match self {
            Self::Exited(s) => Some(*s),
            Self::TimedOut { status, .. } | Self::Cancelled { status, .. } => *status,
            Self::Lost(_) => None,
        }
    }

    /// The exit code (`None` when it was killed by a signal or not reaped).
    pub fn exit_code(&self) -> Option<i32> {
        self.status().and_then(|s| s.code())
    }
}

/// The end of a supervised child and what it printed.
#[derive(Debug)]
pub struct Finished {
    pub ended: Ended,
    pub stdout: Captured,
    pub stderr: Captured,
}

/// Run `spec` to its end under `limits` and `cancel`. `Err` only when it cannot be started.
///
/// Whatever happens, nothing of it survives: when it ends (on its own, by the limit or by
/// cancellation) its process group gets SIGKILL, and every orphan re-parented to arev is
/// killed (see [`super::become_subreaper`]); if this future is dropped mid-run, a guard
/// SIGKILLs the group. Pipes are drained for at most [`DRAIN_TIMEOUT`] after the end.
pub async fn supervise(
    spec: Spec,
    limits: Limits,
    cancel: &CancellationToken,
) -> std::io::Result<Finished> {
    let mut child = spawn(&spec).await?;
    let pid = super::spawn::pid(&child);
    // `kill_on_drop` only reaches the leader: the guard SIGKILLs the whole group.
    let guard = GroupGuard(pid);
    debug!(label = %spec.label, ?pid, program = %spec.program.display(), "child spawned");

    let stdin_task = match (child.stdin.take(), spec.stdin) {
        (Some(mut pipe), Input::Bytes(bytes)) => Some(tokio::spawn(async move {
            let _ = pipe.write_all(&bytes).await;
            let _ = pipe.shutdown().await;
        })),
        _ => None,
    };
    let readers = [
        reader(child.stdout.take(), spec.stdout),
        reader(child.stderr.take(), spec.stderr),
    ];

    enum Stop {
        Exited(std::io::Result<ExitStatus>),
        TimedOut,
        Cancelled,
    }
    let stop = tokio::select! {
        s = child.wait() => Stop::Exited(s),
        () = tokio::time::sleep(limits.timeout) => Stop::TimedOut,
        () = cancel.cancelled() => Stop::Cancelled,
    };
    let ended = match stop {
        Stop::Exited(Ok(s)) => Ended::Exited(s),
        Stop::Exited(Err(e)) => {
            debug!(label = %spec.label, error = %e, "waiting for the child failed");
            terminate(&mut child, pid, limits.grace).await;
            Ended::Lost(e)
        }
        Stop::TimedOut => {
            debug!(label = %spec.label, "child timed out; terminating its group");
            let (killed, status) = terminate(&mut child, pid, limits.grace).await;
            Ended::TimedOut { killed, status }
        }
        Stop::Cancelled => {
            debug!(label = %spec.label, "child cancelled; terminating its group");
            let (killed, status) = terminate(&mut child, pid, limits.grace).await;
            Ended::Cancelled { killed, status }
        }
    };
    // Whatever is left of its group goes now; then every orphan it left behind.
    guard.finish();
    reaper::sweep().await;
    if let Some(t) = stdin_task {
        t.abort();
    }

    // Drain the pipes, bounded: an escaped grandchild could keep them open forever.
    let drain_deadline = tokio::time::Instant::now() + DRAIN_TIMEOUT;
    let mut caps: Vec<Captured> = Vec::with_capacity(2);
    for r in readers {
        let Some((shared, mut handle)) = r else {
            caps.push(Captured::default());
            continue;
        };
        if tokio::time::timeout_at(drain_deadline, &mut handle)
            .await
            .is_err()
        {
            debug!(label = %spec.label, "pipe still open after the drain timeout; abandoning it");
            handle.abort();
        }
        caps.push(std::mem::take(&mut *lock(&shared)));
    }
    let stderr = caps.pop().unwrap_or_default();
    let stdout = caps.pop().unwrap_or_default();
    debug!(label = %spec.label, ?ended, "child done");
    Ok(Finished {
        ended,
        stdout,
        stderr,
    })
}

/// [`supervise`] from synchronous code, on a runtime of its own (no cancellation: the
/// caller's own death reaches the child through `parent_death`).
pub fn supervise_blocking(spec: Spec, limits: Limits) -> std::io::Result<Finished> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(supervise(spec, limits, &CancellationToken::new()))
}

fn lock(c: &Mutex<Captured>) -> std::sync::MutexGuard<'_, Captured> {
    c.lock().unwrap_or_else(|e| e.into_inner())
}

type Reader = Option<(Arc<Mutex<Captured>>, JoinHandle<()>)>;

fn reader<R>(pipe: Option<R>, sink: Sink) -> Reader
where
    R: AsyncRead + Unpin + Send + 'static,
{
    // Where the kept bytes go: the shared buffer, or the spool file (written as they come;
    // the page cache, not this process, holds them).
    let (Some(mut pipe), (cap, mut spool, tee)) = (
        pipe,
        match sink {
            Sink::Capture { cap } => (cap, None, None),
            Sink::Spool { file, cap, tee } => (cap, Some(file), tee),
            Sink::File(_) => return None,
        },
    ) else {
        return None;
    };
    let shared: Arc<Mutex<Captured>> = Arc::default();
    let sink = Arc::clone(&shared);
    let handle = tokio::spawn(async move {
        let mut buf = vec![0u8; 64 * 1024];
        let mut room = cap;
        loop {
            let n = match pipe.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            let take = (n as u64).min(room) as usize;
            let mut c = lock(&sink);
            let wrote = match spool.as_mut() {
                Some(f) => std::io::Write::write_all(f, &buf[..take]),
                None => {
                    c.kept.extend_from_slice(&buf[..take]);
                    Ok(())
                }
            };
            if let Err(e) = wrote {
                // A full disk, say: the stream is cut there, as at the cap.
                debug!(error = %e, "cannot write the spooled stream; keeping no more of it");
                room = 0;
                c.truncated = true;
            } else {
                room -= take as u64;
                if let (Some(tee), 1..) = (&tee, take) {
                    // A closed receiver wants no more: nothing to do.
                    let _ = tee.send(buf[..take].to_vec());
                }
            }
            if take < n {
                c.truncated = true;
            }
            c.total += n as u64;
        }
    });
    Some((shared, handle))
}

async fn spawn(spec: &Spec) -> std::io::Result<Child> {
    let mut attempt = 0;
    loop {
        attempt += 1;
        match super::spawn::spawn(spec) {
            Err(e)
                if e.raw_os_error() == Some(Errno::ETXTBSY as i32) && attempt < SPAWN_ATTEMPTS =>
            {
                tokio::time::sleep(Duration::from_millis(20 * u64::from(attempt))).await;
            }
            r => return r,
        }
    }
}

fn signal_group(pgid: Option<i32>, sig: Signal) {
    let Some(pgid) = pgid else { return };
    match killpg(Pid::from_raw(pgid), sig) {
        Ok(()) | Err(Errno::ESRCH) => {}
        Err(e) => debug!(pgid, ?sig, error = %e, "killpg failed"),
    }
}

/// SIGKILLs the child's process group and releases it from the reaper's registry when
/// finished or dropped (best effort).
struct GroupGuard(Option<i32>);

impl GroupGuard {
    fn finish(mut self) {
        self.release();
    }

    fn release(&mut self) {
        if let Some(pgid) = self.0.take() {
            signal_group(Some(pgid), Signal::SIGKILL);
            reaper::release(pgid);
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.release();
    }
}

/// SIGTERM the group, wait `grace`, then SIGKILL it. Returns whether SIGKILL was needed and
/// the exit status (`None` if the child was not reaped within a bound after SIGKILL).
async fn terminate(
    child: &mut Child,
    pgid: Option<i32>,
    grace: Duration,
) -> (bool, Option<ExitStatus>) {
    signal_group(pgid, Signal::SIGTERM);
    if let Ok(Ok(s)) = tokio::time::timeout(grace, child.wait()).await {
        return (false, Some(s));
    }
    debug!(?pgid, "child survived SIGTERM grace; sending SIGKILL");
    signal_group(pgid, Signal::SIGKILL);
    match tokio::time::timeout(REAP_AFTER_KILL, child.wait()).await {
        Ok(Ok(s)) => (true, Some(s)),
        _ => {
            // Not in its group any more (cannot happen for the leader), or stuck in the kernel.
            let _ = child.start_kill();
            (true, None)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::process::Env;
    use std::time::Instant;

    fn sh(body: &str, dir: &std::path::Path) -> Spec {
        Spec {
            label: "test".into(),
            program: "sh".into(),
            args: vec!["-c".into(), body.into()],
            cwd: dir.to_path_buf(),
            env: Env::Inherit {
                remove: vec![],
                set: vec![],
            },
            stdin: Input::Null,
            stdout: Sink::Capture { cap: 1 << 20 },
            stderr: Sink::Capture { cap: 1 << 20 },
            parent_death: Signal::SIGKILL,
        }
    }

    fn limits(timeout_ms: u64, grace_ms: u64) -> Limits {
        Limits {
            timeout: Duration::from_millis(timeout_ms),
            grace: Duration::from_millis(grace_ms),
        }
    }

    fn alive(pid: i32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
            s.rsplit_once(')')
                .is_some_and(|(_, r)| !r.trim_start().starts_with('Z'))
        })
    }

    fn read_pid(path: &std::path::Path) -> i32 {
        for _ in 0..200 {
            if let Some(pid) = std::fs::read_to_string(path)
                .ok()
                .and_then(|s| s.trim().parse().ok())
            {
                return pid;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("no pid in {}", path.display());
    }

    #[test]
    fn blocking_variant_captures_and_applies_the_environment() {
        let d = tempfile::tempdir().unwrap();
        let mut spec = sh(
            "cat; echo \"[$AREV_SUPERVISE_TEST_SET][$HOME]\"; echo e >&2; exit 4",
            d.path(),
        );
        spec.stdin = Input::Bytes(Arc::from(&b"in\n"[..]));
        spec.env = Env::Inherit {
            remove: vec!["HOME".into()],
            set: vec![("AREV_SUPERVISE_TEST_SET".into(), "yes".into())],
        };
        let f = supervise_blocking(spec, limits(10_000, 200)).unwrap();
        assert_eq!(f.ended.exit_code(), Some(4));
        assert_eq!(String::from_utf8_lossy(&f.stdout.kept), "in\n[yes][]\n");
        assert_eq!(f.stderr.kept, b"e\n");
        assert_eq!(f.stdout.total, 11);
    }

    #[test]
    fn a_spool_writes_up_to_its_cap_counts_everything_and_keeps_nothing_in_memory() {
        let d = tempfile::tempdir().unwrap();
        let spool = d.path().join("events.jsonl");
        // 3 × 100,000 bytes in writes far bigger than the pipe, past a 250,000-byte cap.
        let mut spec = sh(
            "for i in 1 2 3; do head -c 100000 /dev/zero | tr '\\0' x; done",
            d.path(),
        );
        spec.stdout = Sink::Spool {
            file: std::fs::File::create(&spool).unwrap(),
            cap: 250_000,
            tee: None,
        };
        let f = supervise_blocking(spec, limits(10_000, 200)).unwrap();
        assert_eq!(f.ended.exit_code(), Some(0));
        assert!(f.stdout.kept.is_empty(), "the bytes went to the file");
        assert_eq!(f.stdout.total, 300_000);
        assert!(f.stdout.truncated);
        let written = std::fs::read(&spool).unwrap();
        assert_eq!(written.len(), 250_000);
        assert!(written.iter().all(|b| *b == b'x'));

        // Under the cap: everything, not flagged.
        let mut spec = sh("printf 'a\\nb\\n'", d.path());
        spec.stdout = Sink::Spool {
            file: std::fs::File::create(&spool).unwrap(),
            cap: 250_000,
            tee: None,
        };
        let f = supervise_blocking(spec, limits(10_000, 200)).unwrap();
        assert_eq!((f.stdout.total, f.stdout.truncated), (4, false));
        assert_eq!(std::fs::read(&spool).unwrap(), b"a\nb\n");
    }

    #[test]
    fn a_spools_tee_gets_exactly_the_bytes_the_file_keeps_as_they_come() {
        let d = tempfile::tempdir().unwrap();
        let spool = d.path().join("events.jsonl");
        let mut spec = sh(
            "for i in 1 2 3; do head -c 100000 /dev/zero | tr '\\0' x; done",
            d.path(),
        );
        let (tee, mut chunks) = tokio::sync::mpsc::unbounded_channel();
        spec.stdout = Sink::Spool {
            file: std::fs::File::create(&spool).unwrap(),
            cap: 250_000,
            tee: Some(tee),
        };
        let f = supervise_blocking(spec, limits(10_000, 200)).unwrap();
        assert_eq!(f.stdout.total, 300_000);
        let mut teed = Vec::new();
        let mut n = 0;
        while let Ok(chunk) = chunks.try_recv() {
            assert!(!chunk.is_empty());
            teed.extend_from_slice(&chunk);
            n += 1;
        }
        assert!(n > 1, "sent as it came, in {n} chunk(s)");
        assert_eq!(teed, std::fs::read(&spool).unwrap(), "what the file keeps");
        assert_eq!(teed.len(), 250_000);
    }

    #[tokio::test]
    async fn file_sinks_share_one_log_and_a_stubborn_group_is_killed_in_bounded_time() {
        let d = tempfile::tempdir().unwrap();
        let log = d.path().join("out.log");
        let out = std::fs::File::create(&log).unwrap();
        let mut spec = sh(
            "trap '' TERM; echo started; echo warn >&2; sh -c 'trap \"\" TERM; echo $$ > gc; exec sleep 100' & sleep 100",
            d.path(),
        );
        spec.stderr = Sink::File(out.try_clone().unwrap());
        spec.stdout = Sink::File(out);
        let t = Instant::now();
        let f = supervise(spec, limits(300, 200), &CancellationToken::new())
            .await
            .unwrap();
        assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
        assert!(
            matches!(
                f.ended,
                Ended::TimedOut {
                    killed: true,
                    status: Some(_)
                }
            ),
            "{:?}",
            f.ended
        );
        assert_eq!(f.stdout, Captured::default());
        let text = std::fs::read_to_string(&log).unwrap();
        assert!(
            text.contains("started\n") && text.contains("warn\n"),
            "{text}"
        );
        let gc = read_pid(&d.path().join("gc"));
        for _ in 0..100 {
            if !alive(gc) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("the group member {gc} survived");
    }

    #[tokio::test]
    async fn a_program_that_cannot_start_is_an_error() {
        let d = tempfile::tempdir().unwrap();
        let mut spec = sh("", d.path());
        spec.program = d.path().join("missing");
        let e = supervise(spec, limits(1_000, 100), &CancellationToken::new())
            .await
            .unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::NotFound);
    }

    #[tokio::test]
    async fn the_child_is_registered_only_while_it_runs() {
        let d = tempfile::tempdir().unwrap();
        let spec = sh("echo $$ > pid; exec sleep 100", d.path());
        let cancel = CancellationToken::new();
        let c2 = cancel.clone();
        let pid_file = d.path().join("pid");
        let watcher = tokio::spawn(async move {
            let pid = tokio::task::spawn_blocking(move || read_pid(&pid_file))
                .await
                .unwrap();
            let registered = super::reaper::is_live(pid);
            c2.cancel();
            (pid, registered)
        });
        let f = supervise(spec, limits(10_000, 500), &cancel).await.unwrap();
        let (pid, registered) = watcher.await.unwrap();
        assert!(registered, "a running child is protected from the sweep");
        assert!(!super::reaper::is_live(pid));
        assert!(
            matches!(
                f.ended,
                Ended::Cancelled {
                    killed: false,
                    status: Some(_)
                }
            ),
            "{:?}",
            f.ended
        );
    }
}
