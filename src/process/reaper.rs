//! No child outlives its purpose: arev as child subreaper (orphaned descendants are
//! re-parented to it), the registry of supervised children, the sweep that kills and reaps
//! every orphan when a supervised child ends.

use nix::errno::Errno;
use nix::sys::signal::{kill, Signal};
use nix::sys::wait::{waitpid, WaitPidFlag};
use nix::unistd::Pid;
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

/// How long a sweep keeps reaping orphans that were sent SIGKILL (a process stuck in the
/// kernel may take longer; it is then left to init).
const SWEEP_LIMIT: Duration = Duration::from_secs(2);
/// Pause between sweep passes while SIGKILLed orphans are still dying.
const SWEEP_PAUSE: Duration = Duration::from_millis(5);

/// Set once arev is a child subreaper: only then do orphans come back to it.
static SUBREAPER: AtomicBool = AtomicBool::new(false);
/// Pids (= process group ids) of the supervised children not yet reaped. Held while
/// spawning, so a sweep never mistakes a child being registered for an orphan.
static LIVE: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());

fn live() -> MutexGuard<'static, BTreeSet<i32>> {
    LIVE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Make arev a child subreaper (`PR_SET_CHILD_SUBREAPER`): a descendant whose parent dies
/// (an agent's `setsid` child, say) is re-parented to arev instead of init, so the sweep at
/// the end of every supervised child finds it and kills it.
pub fn become_subreaper() -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        nix::sys::prctl::set_child_subreaper(true)?;
        SUBREAPER.store(true, Ordering::SeqCst);
    }
    Ok(())
}

/// Start a child with `spawn` and register it (as one step, under the registry lock);
/// `pid` tells the started child's pid.
pub(super) fn spawn_registered<T>(
    spawn: impl FnOnce() -> std::io::Result<T>,
    pid: impl Fn(&T) -> Option<i32>,
) -> std::io::Result<T> {
    let mut live = live();
    let child = spawn()?;
    if let Some(pid) = pid(&child) {
        live.insert(pid);
    }
    Ok(child)
}

/// Whether `pid` is a registered, not yet reaped, supervised child.
#[cfg(test)]
pub(super) fn is_live(pid: i32) -> bool {
    live().contains(&pid)
}

/// The child `pid` was reaped (or given up on): it is no longer protected from the sweep.
pub(super) fn release(pid: i32) {
    live().remove(&pid);
}

/// Kill and reap every orphan re-parented to arev: a direct child that is not a supervised
/// child, not in a supervised child's process group (that group is still running and is
/// killed when it ends) and not in arev's own process group (a plain child some other code
/// started). Its whole subtree goes with it. A no-op unless arev is a subreaper.
pub(super) async fn sweep() {
    if !SUBREAPER.load(Ordering::SeqCst) {
        return;
    }
    let deadline = tokio::time::Instant::now() + SWEEP_LIMIT;
    while sweep_once() > 0 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(SWEEP_PAUSE).await;
    }
}

/// One pass: SIGKILL every orphan's subtree and reap the orphans that are already dead.
/// Returns how many orphans there were (0 = nothing left).
fn sweep_once() -> usize {
    let me = nix::unistd::getpid().as_raw();
    let own_group = nix::unistd::getpgrp().as_raw();
    let live = live();
    let orphan = |p: &Proc| {
        p.ppid == me && p.pgrp != own_group && !live.contains(&p.pid) && !live.contains(&p.pgrp)
    };
    // Arev's own children first (a few files): the whole process table is read only when
    // one of them is an orphan whose subtree must go.
    if let Some(kids) = children() {
        if !kids
            .iter()
            .filter_map(|&pid| process(pid))
            .any(|p| orphan(&p))
        {
            return 0;
        }
    }
    let table = processes();
    let orphans: Vec<i32> = table.iter().filter(|p| orphan(p)).map(|p| p.pid).collect();
    for &orphan in &orphans {
        for pid in subtree(&table, orphan) {
            match kill(Pid::from_raw(pid), Signal::SIGKILL) {
                Ok(()) | Err(Errno::ESRCH) => {}
                Err(e) => tracing::debug!(pid, error = %e, "cannot kill an orphan"),
            }
        }
    }
    drop(live);
    for &orphan in &orphans {
        // A zombie is reaped now; one still dying is reaped by the next pass.
        let _ = waitpid(Pid::from_raw(orphan), Some(WaitPidFlag::WNOHANG));
    }
    if !orphans.is_empty() {
        tracing::debug!(?orphans, "killed processes left behind by a child");
    }
    orphans.len()
}

/// One line of the process table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Proc {
    pid: i32,
    ppid: i32,
    pgrp: i32,
}

/// `(ppid, pgrp)` from the text of `/proc/<pid>/stat` (`pid (comm) state ppid pgrp …`; the
/// command name may contain spaces and parentheses, so fields are counted after the last `)`).
fn parse_stat(text: &str) -> Option<(i32, i32)> {
    let (_, rest) = text.rsplit_once(')')?;
    let mut fields = rest.split_whitespace();
    let _state = fields.next()?;
    let ppid = fields.next()?.parse().ok()?;
    let pgrp = fields.next()?.parse().ok()?;
    Some((ppid, pgrp))
}

/// The process `pid` (None when it is gone).
fn process(pid: i32) -> Option<Proc> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (ppid, pgrp) = parse_stat(&stat)?;
    Some(Proc { pid, ppid, pgrp })
}

/// The direct children of this process, from each of its threads' `children` file (an
/// orphan re-parented to a subreaper becomes the child of one of its threads); None when
/// the kernel does not provide these files.
fn children() -> Option<Vec<i32>> {
    let mut out = Vec::new();
    for task in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
        match std::fs::read_to_string(task.path().join("children")) {
            Ok(text) => out.extend(
                text.split_whitespace()
                    .filter_map(|p| p.parse::<i32>().ok()),
            ),
            // A thread that ended meanwhile has no children to tell.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && task.path().exists() => {
                return None
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(_) => return None,
        }
    }
    Some(out)
}

/// Every process visible in `/proc` (processes that vanish while reading are skipped).
fn processes() -> Vec<Proc> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| {
            let pid: i32 = e.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            let (ppid, pgrp) = parse_stat(&stat)?;
            Some(Proc { pid, ppid, pgrp })
        })
        .collect()
}

/// `root` and all its descendants in `table`.
fn subtree(table: &[Proc], root: i32) -> Vec<i32> {
    let mut out = vec![root];
    let mut i = 0;
    while i < out.len() {
        let parent = out[i];
        for p in table.iter().filter(|p| p.ppid == parent) {
            if !out.contains(&p.pid) {
                out.push(p.pid);
            }
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_are_parsed_after_the_command_name() {
        assert_eq!(parse_stat("42 (sleep) S 7 42 42 0 -1"), Some((7, 42)));
        assert_eq!(
            parse_stat("42 (a b) (c)) Z 1 99 99 0 -1 4194560"),
            Some((1, 99))
        );
        assert_eq!(parse_stat("42 (x) S"), None);
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn subtree_collects_all_descendants_once() {
        let p = |pid, ppid| Proc {
            pid,
            ppid,
            pgrp: pid,
        };
        let table = [
            p(10, 1),
            p(11, 10),
            p(12, 11),
            p(13, 10),
            p(20, 1),
            p(21, 20),
        ];
        let mut t = subtree(&table, 10);
        t.sort_unstable();
        assert_eq!(t, [10, 11, 12, 13]);
        assert_eq!(subtree(&table, 21), [21]);
    }

    #[test]
    fn this_process_is_in_the_table_with_its_parent() {
        let me = std::process::id() as i32;
        let mine = processes().into_iter().find(|p| p.pid == me).unwrap();
        assert_eq!(mine.ppid, nix::unistd::getppid().as_raw());
        assert_eq!(mine.pgrp, nix::unistd::getpgrp().as_raw());
        assert_eq!(process(me), Some(mine));
    }

    #[test]
    fn a_child_is_among_this_processs_children() {
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let pid = child.id() as i32;
        let kids = children().expect("the kernel lists children");
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(kids.contains(&pid), "{kids:?} lacks {pid}");
        assert_eq!(process(pid), None, "reaped");
    }
}
