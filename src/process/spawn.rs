//! Starting a supervised child without copying arev's memory. On Linux the child is made
//! the way `posix_spawn` makes it — `clone(CLONE_VM | CLONE_VFORK)`, sharing arev's memory
//! until it execs — plus the one step `posix_spawn` cannot do: the parent-death signal. A
//! `fork` (what a pre-exec hook forces on std's `Command`) copies the page tables of the
//! whole heap and makes every later write of arev to a page it had then a fault: a cost that
//! grows with arev's memory, paid at every dispatch. On a kernel without `CLONE_PIDFD`
//! (before 5.2) tokio's `Command` sets the signal in a pre-exec hook instead (a fork); other
//! systems use tokio's `Command` without it.

use super::reaper;
use super::supervise::{Env, Input, Sink, Spec};
use std::io;
use std::process::ExitStatus;
use tokio::io::{AsyncRead, AsyncWrite};

/// The child's stdin, as arev writes it.
pub(super) type Stdin = Box<dyn AsyncWrite + Send + Unpin>;
/// One of the child's output pipes, as arev reads it.
pub(super) type Output = Box<dyn AsyncRead + Send + Unpin>;

/// A started child: its pid (= its process group), its pipes, and how to wait for it.
pub(super) struct Proc {
    pid: Option<i32>,
    pub(super) stdin: Option<Stdin>,
    pub(super) stdout: Option<Output>,
    pub(super) stderr: Option<Output>,
    inner: Inner,
}

enum Inner {
    #[cfg(target_os = "linux")]
    Cloned(linux::Cloned),
    Tokio(tokio::process::Child),
}

impl Proc {
    /// The child's pid, which is also its process group id.
    pub(super) fn id(&self) -> Option<i32> {
        self.pid
    }

    /// Wait for the child to end and reap it. Cancel-safe.
    pub(super) async fn wait(&mut self) -> io::Result<ExitStatus> {
        match &mut self.inner {
            #[cfg(target_os = "linux")]
            Inner::Cloned(c) => c.wait().await,
            Inner::Tokio(c) => c.wait().await,
        }
    }

    /// Send SIGKILL to the child (not its group) unless it was reaped.
    pub(super) fn start_kill(&mut self) -> io::Result<()> {
        match &mut self.inner {
            #[cfg(target_os = "linux")]
            Inner::Cloned(c) => c.start_kill(),
            Inner::Tokio(c) => c.start_kill(),
        }
    }
}

/// Start `spec`'s program in a process group of its own, registered with the reaper (under
/// its lock, so a sweep never mistakes it for an orphan).
pub(super) fn spawn(spec: &Spec) -> io::Result<Proc> {
    #[cfg(target_os = "linux")]
    {
        if linux::SUPPORTED.load(std::sync::atomic::Ordering::Relaxed) {
            let spawned =
                reaper::spawn_registered(|| linux::spawn(spec), |p| p.as_ref().and_then(Proc::id));
            match spawned? {
                Some(p) => return Ok(p),
                None => linux::SUPPORTED.store(false, std::sync::atomic::Ordering::Relaxed),
            }
        }
    }
    let mut cmd = command(spec)?;
    let mut child = reaper::spawn_registered(
        || cmd.spawn(),
        |c| c.id().and_then(|p| i32::try_from(p).ok()),
    )?;
    let pid = child.id().and_then(|p| i32::try_from(p).ok());
    Ok(Proc {
        pid,
        stdin: child.stdin.take().map(|p| Box::new(p) as Stdin),
        stdout: child.stdout.take().map(|p| Box::new(p) as Output),
        stderr: child.stderr.take().map(|p| Box::new(p) as Output),
        inner: Inner::Tokio(child),
    })
}

/// tokio's `Command` for `spec` (the fallback; it forks because of the pre-exec hook).
fn command(spec: &Spec) -> io::Result<tokio::process::Command> {
    use std::process::Stdio;
    let stdio = |sink: &Sink| -> io::Result<Stdio> {
        Ok(match sink {
            Sink::Capture { .. } | Sink::Spool { .. } => Stdio::piped(),
            Sink::File(f) => Stdio::from(f.try_clone()?),
        })
    };
    let mut cmd = tokio::process::Command::new(&spec.program);
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
    reaper::die_with_parent(&mut cmd, spec.parent_death);
    Ok(cmd)
}

#[cfg(target_os = "linux")]
mod linux {
    //! The `clone(CLONE_VM | CLONE_VFORK | CLONE_PIDFD)` path.

    use super::{Inner, Output, Proc, Stdin};
    use crate::process::supervise::{Env, Input, Sink, Spec};
    use std::ffi::{CString, OsStr, OsString};
    use std::io;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::process::ExitStatusExt;
    use std::path::{Path, PathBuf};
    use std::process::ExitStatus;
    use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
    use tokio::io::unix::AsyncFd;
    use tokio::net::unix::pipe;

    /// Cleared when the kernel refuses `CLONE_PIDFD`: tokio's `Command` is used from then on.
    pub(super) static SUPPORTED: AtomicBool = AtomicBool::new(true);

    /// The child's stack until it execs (it makes a few system calls, nothing more).
    const STACK: usize = 64 * 1024;
    /// Where a bare program name is looked up when the child's environment has no PATH
    /// (what `execvp` does).
    const DEFAULT_PATH: &str = "/bin:/usr/bin";

    /// A child made by [`spawn`]: its pidfd (readable once it has exited) and, once reaped,
    /// its status.
    pub(super) struct Cloned {
        pid: i32,
        pidfd: AsyncFd<OwnedFd>,
        status: Option<ExitStatus>,
    }

    impl Cloned {
        pub(super) async fn wait(&mut self) -> io::Result<ExitStatus> {
            loop {
                if let Some(s) = self.status {
                    return Ok(s);
                }
                let mut ready = self.pidfd.readable().await?;
                match reap(self.pid, false)? {
                    Some(s) => self.status = Some(s),
                    None => ready.clear_ready(),
                }
            }
        }

        pub(super) fn start_kill(&mut self) -> io::Result<()> {
            if self.status.is_none() {
                kill(self.pid)?;
            }
            Ok(())
        }
    }

    impl Drop for Cloned {
        /// Like tokio's `kill_on_drop`: a child dropped before it was reaped gets SIGKILL. If
        /// it is not dead yet, the reaper's next sweep reaps it (it is no longer registered).
        fn drop(&mut self) {
            if self.status.is_none() {
                let _ = kill(self.pid);
                let _ = reap(self.pid, false);
            }
        }
    }

    fn kill(pid: i32) -> io::Result<()> {
        match nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        ) {
            Ok(()) | Err(nix::errno::Errno::ESRCH) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// Reap `pid` if it has ended (`block`: wait until it has).
    #[allow(unsafe_code)]
    fn reap(pid: i32, block: bool) -> io::Result<Option<ExitStatus>> {
        let mut raw: libc::c_int = 0;
        let flags = if block { 0 } else { libc::WNOHANG };
        loop {
            // SAFETY: waitpid writes one int through a pointer to a live local.
            let r = unsafe { libc::waitpid(pid, &mut raw, flags) };
            if r == pid {
                return Ok(Some(ExitStatus::from_raw(raw)));
            }
            if r == 0 {
                return Ok(None);
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }

    /// What the child reads, prepared by the parent: nothing in the child allocates.
    #[repr(C)]
    struct Plan {
        path: *const libc::c_char,
        argv: *const *const libc::c_char,
        envp: *const *const libc::c_char,
        cwd: *const libc::c_char,
        /// The descriptors that become the child's 0, 1 and 2 (each ≥ 3).
        fds: [RawFd; 3],
        pdeathsig: libc::c_int,
        parent: libc::pid_t,
        /// The errno of the step that failed in the child; 0 once it has exec'd.
        err: AtomicI32,
    }

    /// Start `spec`. `Ok(None)`: this kernel cannot (no `CLONE_PIDFD`); nothing was started.
    #[allow(unsafe_code)]
    pub(super) fn spawn(spec: &Spec) -> io::Result<Option<Proc>> {
        let env = environment(&spec.env);
        let path = resolve(&spec.program, path_of(&env), &spec.cwd)?;

        // Descriptors: the child's ends (≥ 3, so moving one onto 0–2 never clobbers another),
        // and the parent's ends, which stay with arev.
        let (child_in, parent_in) = match spec.stdin {
            Input::Null => (open_null()?, None),
            Input::Bytes(_) => {
                let (r, w) = pipe_pair()?;
                (r, Some(w))
            }
        };
        let output = |sink: &Sink| -> io::Result<(OwnedFd, Option<OwnedFd>)> {
            Ok(match sink {
                Sink::Capture { .. } | Sink::Spool { .. } => {
                    let (r, w) = pipe_pair()?;
                    (w, Some(r))
                }
                Sink::File(f) => (above_stdio(OwnedFd::from(f.try_clone()?))?, None),
            })
        };
        let (child_out, parent_out) = output(&spec.stdout)?;
        let (child_err, parent_err) = output(&spec.stderr)?;

        let cpath = cstring(path.as_os_str())?;
        let args: Vec<CString> = std::iter::once(spec.program.as_os_str())
            .chain(spec.args.iter().map(OsString::as_os_str))
            .map(cstring)
            .collect::<io::Result<_>>()?;
        let vars: Vec<CString> = env
            .iter()
            .map(|(k, v)| {
                let mut kv = k.clone();
                kv.push("=");
                kv.push(v);
                cstring(&kv)
            })
            .collect::<io::Result<_>>()?;
        let argv = pointers(&args);
        let envp = pointers(&vars);
        let cwd = cstring(spec.cwd.as_os_str())?;
        let plan = Plan {
            path: cpath.as_ptr(),
            argv: argv.as_ptr(),
            envp: envp.as_ptr(),
            cwd: cwd.as_ptr(),
            fds: [
                child_in.as_raw_fd(),
                child_out.as_raw_fd(),
                child_err.as_raw_fd(),
            ],
            pdeathsig: spec.parent_death as libc::c_int,
            parent: nix::unistd::getpid().as_raw(),
            err: AtomicI32::new(0),
        };
        let mut stack = vec![0u8; STACK];
        let mut pidfd: libc::c_int = -1;

        // SAFETY: every signal is blocked around the clone, so no handler of arev's runs in
        // the child (which shares arev's memory) before it has reset them all; the old mask
        // is restored in this thread right after. `clone` with CLONE_VM | CLONE_VFORK
        // suspends this thread until the child has exec'd or exited, so `plan`, the strings
        // it points to and `stack` outlive every use the child makes of them. `child_main`
        // only makes async-signal-safe system calls and writes `plan.err` (an atomic). The
        // stack pointer is the 16-byte-aligned end of `stack`. With CLONE_PIDFD the kernel
        // writes the child's pidfd into `pidfd`.
        let (pid, clone_err) = unsafe {
            let mut all: libc::sigset_t = std::mem::zeroed();
            let mut old: libc::sigset_t = std::mem::zeroed();
            libc::sigfillset(&mut all);
            libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
            let top = stack.as_mut_ptr().add(STACK);
            let top = top.sub(top as usize % 16);
            let pid = libc::clone(
                child_main,
                top.cast(),
                libc::CLONE_VM | libc::CLONE_VFORK | libc::CLONE_PIDFD | libc::SIGCHLD,
                std::ptr::from_ref(&plan).cast_mut().cast(),
                &mut pidfd as *mut libc::c_int,
            );
            let clone_err = io::Error::last_os_error();
            libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
            (pid, clone_err)
        };
        drop(stack);
        if pid < 0 {
            return match clone_err.raw_os_error() {
                // No CLONE_PIDFD (Linux < 5.2) or clone refused by a sandbox: use tokio's path.
                Some(libc::EINVAL | libc::ENOSYS | libc::EPERM) => Ok(None),
                _ => Err(clone_err),
            };
        }
        // SAFETY: on success the kernel stored a new descriptor, owned by nobody else.
        let pidfd = unsafe { OwnedFd::from_raw_fd(pidfd) };
        let err = plan.err.load(Ordering::SeqCst);
        if err != 0 {
            // The child exited (127) without exec'ing: reap it and report why.
            let _ = reap(pid, true);
            return Err(io::Error::from_raw_os_error(err));
        }
        drop((child_in, child_out, child_err));
        // SAFETY: the AsyncFd owns the pidfd, which stays open (the same descriptor) until
        // the AsyncFd is dropped.
        let registered =
            unsafe { AsyncFd::register_with_interest(pidfd, tokio::io::Interest::READABLE) };
        let pidfd = match registered {
            Ok(fd) => fd,
            Err(e) => {
                let _ = kill(pid);
                let _ = reap(pid, true);
                return Err(e.into());
            }
        };
        // From here the child is owned: on an error below, dropping `cloned` kills it.
        let cloned = Cloned {
            pid,
            pidfd,
            status: None,
        };
        let stdin = parent_in
            .map(|fd| pipe::Sender::from_owned_fd(fd).map(|p| Box::new(p) as Stdin))
            .transpose();
        let stdout = parent_out
            .map(|fd| pipe::Receiver::from_owned_fd(fd).map(|p| Box::new(p) as Output))
            .transpose();
        let stderr = parent_err
            .map(|fd| pipe::Receiver::from_owned_fd(fd).map(|p| Box::new(p) as Output))
            .transpose();
        Ok(Some(Proc {
            pid: Some(pid),
            stdin: stdin?,
            stdout: stdout?,
            stderr: stderr?,
            inner: Inner::Cloned(cloned),
        }))
    }

    /// The child, from `clone` to `execve`, on its own stack in arev's memory. Only system
    /// calls; on failure it records the errno in the plan and exits 127.
    #[allow(unsafe_code)]
    extern "C" fn child_main(arg: *mut libc::c_void) -> libc::c_int {
        // SAFETY: `arg` is the parent's `Plan`, alive until this child execs or exits (the
        // parent is suspended by CLONE_VFORK). Every call below is an async-signal-safe
        // system call wrapper; nothing allocates or takes a lock.
        unsafe {
            let plan = &*(arg as *const Plan);
            let fail = |plan: &Plan| -> libc::c_int {
                plan.err.store(*libc::__errno_location(), Ordering::SeqCst);
                if plan.err.load(Ordering::SeqCst) == 0 {
                    plan.err.store(libc::EIO, Ordering::SeqCst);
                }
                libc::_exit(127)
            };
            // Handlers are arev's code: back to the default (SIGPIPE too, which arev
            // ignores) before any signal can be delivered; ignored signals stay ignored.
            for sig in 1..=64 {
                if sig == libc::SIGKILL || sig == libc::SIGSTOP {
                    continue;
                }
                let mut old: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(sig, std::ptr::null(), &mut old) != 0 {
                    continue;
                }
                if old.sa_sigaction != libc::SIG_IGN || sig == libc::SIGPIPE {
                    let mut dfl: libc::sigaction = std::mem::zeroed();
                    dfl.sa_sigaction = libc::SIG_DFL;
                    libc::sigaction(sig, &dfl, std::ptr::null_mut());
                }
            }
            let mut empty: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut empty);
            if libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut()) != 0 {
                return fail(plan);
            }
            if libc::prctl(
                libc::PR_SET_PDEATHSIG,
                plan.pdeathsig as libc::c_ulong,
                0,
                0,
                0,
            ) != 0
            {
                return fail(plan);
            }
            // arev died before the prctl: the signal will never come.
            if libc::getppid() != plan.parent {
                *libc::__errno_location() = libc::ESRCH;
                return fail(plan);
            }
            if libc::setpgid(0, 0) != 0 || libc::chdir(plan.cwd) != 0 {
                return fail(plan);
            }
            for (target, &fd) in plan.fds.iter().enumerate() {
                // `fd` ≥ 3 > target: dup2 gives a descriptor without close-on-exec.
                if libc::dup2(fd, target as libc::c_int) < 0 {
                    return fail(plan);
                }
            }
            libc::execve(plan.path, plan.argv, plan.envp);
            fail(plan)
        }
    }

    /// The child's environment, in arev's order.
    fn environment(env: &Env) -> Vec<(OsString, OsString)> {
        match env {
            Env::Only(vars) => vars.clone(),
            Env::Inherit { remove, set } => {
                let mut vars: Vec<(OsString, OsString)> = std::env::vars_os()
                    .filter(|(k, _)| !remove.contains(k) && !set.iter().any(|(s, _)| s == k))
                    .collect();
                vars.extend(set.iter().cloned());
                vars
            }
        }
    }

    fn path_of(env: &[(OsString, OsString)]) -> Option<&OsStr> {
        env.iter()
            .rev()
            .find(|(k, _)| k == "PATH")
            .map(|(_, v)| v.as_os_str())
    }

    /// The file `execvp` would run: `program` itself when it names a path (relative ones
    /// are resolved by `execve` against the child's directory), else the first executable
    /// regular file of that name on the child's PATH.
    fn resolve(program: &Path, path: Option<&OsStr>, cwd: &Path) -> io::Result<PathBuf> {
        if program.as_os_str().as_bytes().contains(&b'/') {
            return Ok(program.to_path_buf());
        }
        let path = path.unwrap_or(OsStr::new(DEFAULT_PATH));
        let mut denied = false;
        for dir in std::env::split_paths(path) {
            let dir = if dir.as_os_str().is_empty() {
                cwd.to_path_buf()
            } else if dir.is_relative() {
                cwd.join(dir)
            } else {
                dir
            };
            let candidate = dir.join(program);
            match std::fs::metadata(&candidate) {
                Ok(m) if m.is_file() => {
                    use std::os::unix::fs::PermissionsExt;
                    if m.permissions().mode() & 0o111 != 0 {
                        return Ok(candidate);
                    }
                    denied = true;
                }
                _ => {}
            }
        }
        Err(if denied {
            io::Error::from_raw_os_error(libc::EACCES)
        } else {
            io::Error::from_raw_os_error(libc::ENOENT)
        })
    }

    fn cstring(s: &OsStr) -> io::Result<CString> {
        CString::new(s.as_bytes()).map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("a NUL byte in {:?}", s.to_string_lossy()),
            )
        })
    }

    /// A NULL-terminated array of pointers into `strings` (which must outlive it).
    fn pointers(strings: &[CString]) -> Vec<*const libc::c_char> {
        strings
            .iter()
            .map(|s| s.as_ptr())
            .chain(std::iter::once(std::ptr::null()))
            .collect()
    }

    /// `(read end, write end)`, both close-on-exec and ≥ 3.
    #[allow(unsafe_code)]
    fn pipe_pair() -> io::Result<(OwnedFd, OwnedFd)> {
        let mut fds = [-1 as libc::c_int; 2];
        // SAFETY: pipe2 writes two descriptors into a live two-int array.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: both are new descriptors owned by nobody else.
        let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        Ok((above_stdio(r)?, above_stdio(w)?))
    }

    fn open_null() -> io::Result<OwnedFd> {
        above_stdio(OwnedFd::from(std::fs::File::open("/dev/null")?))
    }

    /// `fd` itself if it is ≥ 3, else a close-on-exec copy that is (arev may have been
    /// started with 0, 1 or 2 closed).
    fn above_stdio(fd: OwnedFd) -> io::Result<OwnedFd> {
        if fd.as_raw_fd() > 2 {
            return Ok(fd);
        }
        let copy = nix::fcntl::fcntl(&fd, nix::fcntl::FcntlArg::F_DUPFD_CLOEXEC(3))?;
        #[allow(unsafe_code)]
        // SAFETY: F_DUPFD_CLOEXEC returned a new descriptor owned by nobody else.
        Ok(unsafe { OwnedFd::from_raw_fd(copy) })
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn a_bare_name_is_found_on_the_childs_path_and_a_path_is_kept() {
            let d = tempfile::tempdir().unwrap();
            let bin = d.path().join("bin");
            std::fs::create_dir(&bin).unwrap();
            let tool = bin.join("tool");
            std::fs::write(&tool, "#!/bin/sh\n").unwrap();
            let plain = bin.join("plain");
            std::fs::write(&plain, "data").unwrap();
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
            let path = OsString::from(format!("/nonexistent:{}", bin.display()));
            assert_eq!(
                resolve(Path::new("tool"), Some(&path), d.path()).unwrap(),
                tool
            );
            // Relative PATH entries are the child's directory's.
            let rel = OsString::from("bin");
            assert_eq!(
                resolve(Path::new("tool"), Some(&rel), d.path()).unwrap(),
                tool
            );
            assert_eq!(
                resolve(Path::new("plain"), Some(&path), d.path())
                    .unwrap_err()
                    .raw_os_error(),
                Some(libc::EACCES)
            );
            assert_eq!(
                resolve(Path::new("nope"), Some(&path), d.path())
                    .unwrap_err()
                    .kind(),
                io::ErrorKind::NotFound
            );
            assert_eq!(
                resolve(Path::new("./x/y"), None, d.path()).unwrap(),
                Path::new("./x/y")
            );
        }

        #[tokio::test]
        async fn the_child_starts_clean_in_a_group_of_its_own_without_a_fork() {
            let d = tempfile::tempdir().unwrap();
            let spec = Spec {
                label: "test".into(),
                program: "sh".into(),
                args: vec![
                    "-c".into(),
                    "grep -E '^(SigBlk|SigIgn)' /proc/self/status; cat /proc/$$/stat; pwd".into(),
                ],
                cwd: d.path().to_path_buf(),
                env: Env::Inherit {
                    remove: vec![],
                    set: vec![],
                },
                stdin: Input::Null,
                stdout: Sink::Capture { cap: 1 << 16 },
                stderr: Sink::Capture { cap: 1 << 16 },
                parent_death: nix::sys::signal::Signal::SIGKILL,
            };
            let mut p = super::super::spawn(&spec).unwrap();
            assert!(
                matches!(p.inner, Inner::Cloned(_)),
                "this kernel has CLONE_PIDFD: the child is cloned, not forked"
            );
            let mut out = String::new();
            tokio::io::AsyncReadExt::read_to_string(p.stdout.as_mut().unwrap(), &mut out)
                .await
                .unwrap();
            assert!(p.wait().await.unwrap().success());
            // No signal blocked, and SIGPIPE (ignored by arev) back at its default.
            assert!(out.contains("SigBlk:\t0000000000000000"), "{out}");
            let ign = out.lines().find(|l| l.starts_with("SigIgn:")).unwrap();
            let ign = u64::from_str_radix(ign.split_whitespace().nth(1).unwrap(), 16).unwrap();
            assert_eq!(ign & (1 << (libc::SIGPIPE - 1)), 0, "{out}");
            // Its own process group, arev its parent, the working directory set.
            let stat = out.lines().find(|l| l.contains(") ")).unwrap();
            let (_, rest) = stat.rsplit_once(") ").unwrap();
            let f: Vec<&str> = rest.split_whitespace().collect();
            assert_eq!(f[1], std::process::id().to_string());
            assert_eq!(f[2], p.id().unwrap().to_string());
            let cwd = std::fs::canonicalize(d.path()).unwrap();
            assert!(out.trim_end().ends_with(cwd.to_str().unwrap()), "{out}");
        }

        #[tokio::test]
        async fn a_program_that_is_not_executable_is_refused_before_anything_runs() {
            let d = tempfile::tempdir().unwrap();
            let script = d.path().join("script");
            std::fs::write(&script, "#!/bin/sh\ntouch ran\n").unwrap();
            let spec = Spec {
                label: "test".into(),
                program: script,
                args: vec![],
                cwd: d.path().to_path_buf(),
                env: Env::Only(vec![]),
                stdin: Input::Bytes(std::sync::Arc::from(&b"x"[..])),
                stdout: Sink::Capture { cap: 16 },
                stderr: Sink::Capture { cap: 16 },
                parent_death: nix::sys::signal::Signal::SIGKILL,
            };
            let e = super::super::spawn(&spec).err().unwrap();
            assert_eq!(e.kind(), io::ErrorKind::PermissionDenied);
            assert!(!d.path().join("ran").exists());
        }

        #[test]
        fn the_inherited_environment_drops_and_overrides() {
            let env = environment(&Env::Inherit {
                remove: vec!["HOME".into()],
                set: vec![("PATH".into(), "/only".into())],
            });
            assert!(!env.iter().any(|(k, _)| k == "HOME"));
            assert_eq!(env.iter().filter(|(k, _)| k == "PATH").count(), 1);
            assert_eq!(path_of(&env), Some(OsStr::new("/only")));
        }
    }
}
