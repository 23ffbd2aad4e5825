//! The one place arev starts a supervised child: tokio's `Command` in a process group of
//! its own (`process_group(0)`), killed if dropped unreaped (`kill_on_drop`), with the spec's
//! stdio and environment, PATH searched by `Command` on the child's own PATH, and, in a
//! pre-exec hook — the crate's only `unsafe` — the parent-death signal set and every
//! descriptor but stdin, stdout and stderr closed at the exec (a descriptor arev inherited
//! without close-on-exec, or one a library opened so, never reaches an agent or a sandbox).

use super::reaper;
use super::spec::{Env, Input, Sink, Spec};
use nix::sys::signal::Signal;
use std::io;
use std::process::Stdio;
use tokio::process::{Child, Command};

/// Start `spec`'s program in a process group of its own, registered with the reaper (under
/// its lock, so a sweep never mistakes it for an orphan).
pub(super) fn spawn(spec: &Spec) -> io::Result<Child> {
    let mut cmd = command(spec)?;
    reaper::spawn_registered(|| cmd.spawn(), pid)
}

/// The child's pid, which is also its process group id (`None` once it was reaped).
pub(super) fn pid(child: &Child) -> Option<i32> {
    child.id().and_then(|p| i32::try_from(p).ok())
}

/// tokio's `Command` for `spec`.
fn command(spec: &Spec) -> io::Result<Command> {
    let stdio = |sink: &Sink| -> io::Result<Stdio> {
        Ok(match sink {
            Sink::Capture { .. } | Sink::Spool { .. } => Stdio::piped(),
            Sink::File(f) => Stdio::from(f.try_clone()?),
        })
    };
    let mut cmd = Command::new(&spec.program);
    cmd.args(&spec.args)
        .current_dir(&spec.cwd)
        .process_group(0)
        .kill_on_drop(true)
        .stdin(match spec.stdin {
            Input::Null => Stdio::null(),
            Input::Bytes(_) => Stdio::piped(),
        })
        .stdout(stdio(&spec.stdout)?)
        .stderr(stdio(&spec.stderr)?);
    match &spec.env {
        Env::Only(vars) => {
            cmd.env_clear().envs(vars.iter().map(|(k, v)| (k, v)));
        }
        Env::Inherit { remove, set } => {
            for k in remove {
                cmd.env_remove(k);
            }
            cmd.envs(set.iter().map(|(k, v)| (k, v)));
        }
    }
    die_with_parent(&mut cmd, spec.parent_death);
    Ok(cmd)
}

/// The child gets `signal` when arev dies, however it dies (`PR_SET_PDEATHSIG`; SIGKILL of
/// arev included). If arev is already gone when the child starts, the child does not run.
/// It starts with descriptors 0, 1 and 2 only: every other one is marked close-on-exec
/// (not closed here: the pipe by which the standard library reports a failed exec must
/// stay open until the exec).
///
/// The kernel sends the signal when the *thread* that spawned the child exits: spawn only
/// from threads that live as long as the child (the main thread, a runtime's worker threads;
/// never a `spawn_blocking` thread).
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn die_with_parent(cmd: &mut Command, signal: Signal) {
    let parent = nix::unistd::getpid();
    // SAFETY: `pre_exec` runs the closure in the forked child before `execve`, where only
    // async-signal-safe operations are allowed. The closure captures two plain values and
    // makes only system calls — prctl(PR_SET_PDEATHSIG) and getppid(2) through nix's thin
    // wrappers, close_range(2) through libc's `syscall`, and on a kernel without
    // close_range's CLOEXEC flag getrlimit(2) and fcntl(F_SETFD) per descriptor — all
    // async-signal-safe; on failure it builds an `io::Error` from a raw errno, which does not
    // allocate. It takes no lock, touches no shared state and performs no other I/O. The
    // raw calls take integers only (no pointer): marking a descriptor close-on-exec, open or
    // not, cannot break memory safety, and the child's only other descriptors of note (the
    // standard library's exec-error pipe) are close-on-exec already.
    unsafe {
        cmd.pre_exec(move || {
            nix::sys::prctl::set_pdeathsig(signal)?;
            // The parent died between fork and prctl: the signal will never come.
            if nix::unistd::getppid() != parent {
                return Err(io::Error::from_raw_os_error(
                    nix::errno::Errno::ESRCH as i32,
                ));
            }
            use nix::libc;
            let all = libc::syscall(
                libc::SYS_close_range,
                3 as libc::c_uint,
                libc::c_uint::MAX,
                libc::CLOSE_RANGE_CLOEXEC,
            );
            if all != 0 {
                // Before Linux 5.11: each descriptor up to the limit.
                let (soft, _) =
                    nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE)?;
                let top = libc::c_int::try_from(soft).unwrap_or(libc::c_int::MAX);
                for fd in 3..top {
                    libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
                }
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn die_with_parent(_cmd: &mut Command, _signal: Signal) {}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    fn sh(script: &str, cwd: &std::path::Path, env: Env) -> Spec {
        Spec {
            label: "test".into(),
            program: "sh".into(),
            args: vec!["-c".into(), script.into()],
            cwd: cwd.to_path_buf(),
            env,
            stdin: Input::Null,
            stdout: Sink::Capture { cap: 1 << 16 },
            stderr: Sink::Capture { cap: 1 << 16 },
            parent_death: Signal::SIGKILL,
        }
    }

    async fn stdout_of(child: &mut Child) -> String {
        let mut out = String::new();
        child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut out)
            .await
            .unwrap();
        assert!(child.wait().await.unwrap().success());
        out
    }

    #[tokio::test]
    async fn the_child_starts_clean_in_a_group_of_its_own() {
        let d = tempfile::tempdir().unwrap();
        let script = "grep -E '^(SigBlk|SigIgn)' /proc/self/status; cat /proc/$$/stat; pwd";
        let spec = sh(
            script,
            d.path(),
            Env::Inherit {
                remove: vec![],
                set: vec![],
            },
        );
        let mut child = spawn(&spec).unwrap();
        let pid = pid(&child).unwrap();
        assert!(reaper::is_live(pid), "registered with the reaper");
        let out = stdout_of(&mut child).await;
        reaper::release(pid);
        // No signal blocked, and SIGPIPE (ignored by arev) back at its default.
        assert!(out.contains("SigBlk:\t0000000000000000"), "{out}");
        let ign = out.lines().find(|l| l.starts_with("SigIgn:")).unwrap();
        let ign = u64::from_str_radix(ign.split_whitespace().nth(1).unwrap(), 16).unwrap();
        assert_eq!(
            ign & (1 << (nix::sys::signal::Signal::SIGPIPE as i32 - 1)),
            0,
            "{out}"
        );
        // Its own process group, arev its parent, the working directory set.
        let stat = out.lines().find(|l| l.contains(") ")).unwrap();
        let (_, rest) = stat.rsplit_once(") ").unwrap();
        let f: Vec<&str> = rest.split_whitespace().collect();
        assert_eq!(f[1], std::process::id().to_string());
        assert_eq!(f[2], pid.to_string());
        let cwd = std::fs::canonicalize(d.path()).unwrap();
        assert!(out.trim_end().ends_with(cwd.to_str().unwrap()), "{out}");
    }

    #[tokio::test]
    async fn the_environment_is_the_specs_and_path_is_the_childs() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("tool"), "#!/bin/sh\necho tool-ran\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(
            d.path().join("tool"),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
        let path = format!("{}:/usr/bin:/bin", d.path().display());
        // A bare name is found on the child's PATH, not arev's.
        let mut spec = sh("", d.path(), Env::Only(vec![("PATH".into(), path.into())]));
        spec.program = "tool".into();
        spec.args = vec![];
        let mut child = spawn(&spec).unwrap();
        reaper::release(pid(&child).unwrap());
        assert_eq!(stdout_of(&mut child).await, "tool-ran\n");
        // Inherit: arev's variables without `remove`, with `set` over them.
        let spec = sh(
            "echo \"${HOME-unset}|$AREV_SPAWN_TEST|${PATH:+path}\"",
            d.path(),
            Env::Inherit {
                remove: vec!["HOME".into()],
                set: vec![("AREV_SPAWN_TEST".into(), "set".into())],
            },
        );
        let mut child = spawn(&spec).unwrap();
        reaper::release(pid(&child).unwrap());
        assert_eq!(stdout_of(&mut child).await, "unset|set|path\n");
    }

    #[tokio::test]
    async fn a_program_that_is_not_executable_is_refused_before_anything_runs() {
        let d = tempfile::tempdir().unwrap();
        let script = d.path().join("script");
        std::fs::write(&script, "#!/bin/sh\ntouch ran\n").unwrap();
        let mut spec = sh("", d.path(), Env::Only(vec![]));
        spec.program = script;
        spec.args = vec![];
        spec.stdin = Input::Bytes(std::sync::Arc::from(&b"x"[..]));
        let e = spawn(&spec).err().unwrap();
        assert_eq!(e.kind(), io::ErrorKind::PermissionDenied);
        assert!(!d.path().join("ran").exists());
        spec.program = "arev-no-such-program".into();
        assert_eq!(spawn(&spec).err().unwrap().kind(), io::ErrorKind::NotFound);
    }
}
