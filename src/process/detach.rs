//! `arev run --background` (docs/architecture.md §4.4): arev re-executes itself as a
//! detached child and the two meet once through the child's stdout.
//!
//! - The **parent** starts `arev run --detached <the same arguments>` with stdin on
//!   `/dev/null` and stdout/stderr on pipes, relays the child's stderr (so bad input is one
//!   line on the caller's stderr and the child's exit 2 is the parent's), and reads the
//!   child's stdout until it closes.
//! - The **child** first leaves the caller's session (`setsid`: no controlling terminal, not
//!   in the caller's process group, so a terminal hang-up, Ctrl-C or Claude Code killing the
//!   command's process group does not reach it). It resolves the run as any `arev run`,
//!   creates the run dir and meta.json (with its own pid and start time), installs its signal
//!   handlers, and only then prints one ready line — run id and run dir — and lets go of the
//!   pipes: stdout to `/dev/null`, stderr (logs, warnings, progress) to `<run dir>/arev.log`.
//! - Ready line seen: the run has begun and the parent may exit (or wait for it). Pipes
//!   closed without one: the child failed before it began; the parent exits with its code.

use crate::exit_codes;
use crate::output;
use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The detached run's log, in its run dir.
pub const LOG_FILE: &str = "arev.log";
/// The hidden flag that makes `arev run` the detached child.
pub const DETACHED_FLAG: &str = "--detached";
const READY: &str = "arev-detached-ready";

/// Set in the detached child once it left the caller's session.
static DETACHED: AtomicBool = AtomicBool::new(false);

/// A detached run that has begun.
#[derive(Debug)]
pub struct Started {
    pub run_id: String,
    pub run_dir: PathBuf,
    /// The detached process (this process's child until it exits).
    pub child: Child,
}

/// What became of the detached child.
#[derive(Debug)]
pub enum Spawned {
    Started(Started),
    /// It ended before its run began (bad input, …): its exit code; its stderr was relayed.
    Failed(i32),
}

/// The child's command line: this program's arguments with [`DETACHED_FLAG`] right after
/// the `run` subcommand (never after a `--`, where it would be a target).
fn child_args(mut args: Vec<OsString>) -> Vec<OsString> {
    let at = args.iter().position(|a| a == "run").map_or(0, |i| i + 1);
    args.insert(at, DETACHED_FLAG.into());
    args
}

/// `(run id, run dir)` from the child's stdout, if it announced its run.
fn parse_ready(out: &str) -> Option<(String, PathBuf)> {
    out.lines().find_map(|l| {
        let rest = l.strip_prefix(READY)?.strip_prefix('\t')?;
        let (id, dir) = rest.split_once('\t')?;
        Some((id.to_string(), PathBuf::from(dir)))
    })
}

/// The parent: start this very command line detached, relay its stderr until its run has
/// begun (or it failed).
pub fn spawn_detached() -> std::io::Result<Spawned> {
    let exe = std::env::current_exe()?;
    let mut child = Command::new(exe)
        .args(child_args(std::env::args_os().skip(1).collect()))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let relay = child.stderr.take().map(|err| {
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                output::progress(&line);
            }
        })
    });
    let mut out = String::new();
    if let Some(mut o) = child.stdout.take() {
        // A read error means the same as a closed pipe: look at how the child ended.
        let _ = o.read_to_string(&mut out);
    }
    if let Some(r) = relay {
        let _ = r.join();
    }
    match parse_ready(&out) {
        Some((run_id, run_dir)) => Ok(Spawned::Started(Started {
            run_id,
            run_dir,
            child,
        })),
        None => {
            let status = child.wait()?;
            Ok(Spawned::Failed(failed_code(status)))
        }
    }
}

/// The exit code of a child that ended before its run began.
fn failed_code(status: ExitStatus) -> i32 {
    match status.code() {
        Some(0) | None => {
            output::error(&format!(
                "the background run ended before it began ({status})"
            ));
            exit_codes::USAGE
        }
        Some(c) => c,
    }
}

/// Wait up to `within` for `child` to exit; None when it still runs.
pub fn wait_for(child: &mut Child, within: Duration) -> std::io::Result<Option<ExitStatus>> {
    let deadline = Instant::now() + within;
    loop {
        if let Some(s) = child.try_wait()? {
            return Ok(Some(s));
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(None);
        }
        std::thread::sleep(left.min(Duration::from_millis(100)));
    }
}

/// The child, first thing: a session of its own. A failure (it already leads a session) is
/// logged; the run goes on.
pub fn become_detached() {
    DETACHED.store(true, Ordering::SeqCst);
    if let Err(e) = nix::unistd::setsid() {
        tracing::warn!("cannot start a session of its own (setsid): {e}");
    }
}

/// The child, once its run has begun (meta.json written, signal handlers installed): tell
/// the parent, then stdout to `/dev/null` and stderr to `<run_dir>/arev.log`. Does nothing
/// in a process that is not the detached child.
pub fn announce(run_id: &str, run_dir: &Path) {
    if !DETACHED.load(Ordering::SeqCst) {
        return;
    }
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{READY}\t{run_id}\t{}", run_dir.display());
    let _ = out.flush();
    drop(out);
    let null = std::fs::OpenOptions::new().write(true).open("/dev/null");
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(run_dir.join(LOG_FILE));
    if let Ok(null) = &null {
        if let Err(e) = nix::unistd::dup2_stdout(null) {
            tracing::warn!("cannot redirect stdout to /dev/null: {e}");
        }
    }
    match (&log, &null) {
        (Ok(f), _) | (Err(_), Ok(f)) => {
            if let Err(e) = nix::unistd::dup2_stderr(f) {
                tracing::warn!("cannot redirect stderr to {LOG_FILE}: {e}");
            }
        }
        (Err(_), Err(_)) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_goes_right_after_run() {
        let a = |v: &[&str]| v.iter().map(OsString::from).collect::<Vec<_>>();
        assert_eq!(
            child_args(a(&["run", "--background", "--", "-x.rs"])),
            a(&["run", "--detached", "--background", "--", "-x.rs"])
        );
    }

    #[test]
    fn the_ready_line_carries_id_and_dir() {
        let out = format!("noise\n{READY}\tid-1\t/r/a b/id-1\n");
        assert_eq!(
            parse_ready(&out),
            Some(("id-1".into(), PathBuf::from("/r/a b/id-1")))
        );
        assert_eq!(parse_ready("arev-detached-ready id\n"), None);
        assert_eq!(parse_ready(""), None);
    }
}
