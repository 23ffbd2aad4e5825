//! The Prover's sandbox with the real bubblewrap (docs/prove.md "Sandbox"): hostile
//! reproducers run through `arev::prove::run` — network, `~/.ssh`, other processes'
//! `/proc`, environment secrets, writes outside the worktree, a child that outlives the
//! limit, a hang, a missing command, a memory hog, a reproducer filling its writable space —
//! each contained, nothing written to the host's tree; and an offline `cargo test` with the
//! toolchain bound read-only.
//!
//! Scenarios that need arev's own environment (a planted `$HOME`, a `GITHUB_TOKEN`) run in
//! a child process: this test binary re-executed on `sandboxed_child` with that environment.

use arev::prove::{classify, preflight, run, ProofStatus, RunOutcome, SandboxMode, SandboxSpec};
use serde::{Deserialize, Serialize};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// Set (to a JSON `ChildSpec`) in the child process only.
const CHILD_SPEC: &str = "AREV_PROVE_CHILD_SPEC";
/// Where the child writes the outcome (JSON).
const CHILD_OUT: &str = "AREV_PROVE_CHILD_OUT";

fn spec(workdir: &Path, script: &str) -> SandboxSpec {
    SandboxSpec {
        workdir: workdir.to_path_buf(),
        argv: vec!["/bin/sh".into(), "-c".into(), script.into()],
        timeout: Duration::from_secs(30),
        memory_bytes: 1 << 30,
        env_allow: vec![],
        bind_ro: vec![],
        mode: SandboxMode::Bwrap,
    }
}

fn run_blocking(spec: &SandboxSpec) -> RunOutcome {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(run(spec, &CancellationToken::new())).unwrap()
}

/// The sandbox runs here (a machine without bwrap fails loudly: `.ci/run` installs it).
fn sandbox_ready() {
    preflight(SandboxMode::Bwrap).expect("bubblewrap works here (.ci/run installs it)");
}

#[test]
fn a_passing_and_a_failing_command_are_told_apart_with_their_interleaved_output() {
    sandbox_ready();
    let wt = tempfile::tempdir().unwrap();
    let out = run_blocking(&spec(
        wt.path(),
        "echo out1; echo err1 >&2; echo out2; pwd; exit 3",
    ));
    assert_eq!(
        (out.exit, out.signal, out.timed_out),
        (Some(3), None, false)
    );
    assert_eq!(out.sandbox_error, None);
    let cwd = wt.path().display().to_string();
    assert_eq!(out.output_tail, format!("out1\nerr1\nout2\n{cwd}\n"));
    assert_eq!(classify(&out, None), ProofStatus::Reproduced);
    let pass = run_blocking(&spec(wt.path(), "true"));
    assert_eq!((pass.exit, pass.output_tail.as_str()), (Some(0), ""));
    assert_eq!(classify(&out, Some(&pass)), ProofStatus::Reproduced);
    assert_eq!(classify(&pass, None), ProofStatus::NotReproduced);
}

#[test]
fn the_network_is_unreachable_even_a_server_on_loopback() {
    sandbox_ready();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let wt = tempfile::tempdir().unwrap();
    let script = format!(
        "if bash -c 'exec 3<>/dev/tcp/127.0.0.1/{port}' 2>/dev/null; then echo CONNECTED; fi; \
         if curl -sS -m 5 http://127.0.0.1:{port}/ >/dev/null 2>&1; then echo CURLED; fi; \
         if curl -sS -m 5 http://93.184.215.14/ >/dev/null 2>&1; then echo OUTSIDE; fi; \
         ls /sys/class/net 2>/dev/null; exit 7"
    );
    let out = run_blocking(&spec(wt.path(), &script));
    assert_eq!(out.exit, Some(7), "{out:?}");
    for leak in ["CONNECTED", "CURLED", "OUTSIDE"] {
        assert!(
            !out.output_tail.contains(leak),
            "{leak}: {}",
            out.output_tail
        );
    }
    // Nothing reached the server started outside.
    assert!(matches!(
        listener.accept(),
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock
    ));
}

#[test]
fn writes_outside_the_worktree_fail_and_leave_nothing() {
    sandbox_ready();
    let root = tempfile::tempdir().unwrap();
    let wt = root.path().join("wt");
    let sibling = root.path().join("sibling");
    std::fs::create_dir_all(&wt).unwrap();
    std::fs::create_dir_all(&sibling).unwrap();
    let host_tmp = format!("/tmp/arev-prove-escape-{}", std::process::id());
    // (A kernel knob is written its own value: were the write to succeed, nothing changes.)
    let script = format!(
        "for f in {sib}/planted /usr/arev-planted /etc/arev-planted /planted /; do \
           if echo x > $f 2>/dev/null; then echo WROTE $f; fi; done; \
         for k in kernel/core_pattern kernel/hostname vm/overcommit_memory; do \
           v=$(cat /proc/sys/$k); \
           if printf '%s\\n' \"$v\" > /proc/sys/$k 2>/dev/null; then echo WROTE $k; fi; done; \
         echo x > {parent}/planted && echo PARENT-IN-TMPFS; \
         echo inside > {host_tmp} && echo TMP-OK; \
         echo ok > made-here && echo WT-OK; exit 0",
        sib = sibling.display(),
        parent = root.path().display(),
    );
    let mut s = spec(&wt, &script);
    s.bind_ro = vec![sibling.clone()];
    let out = run_blocking(&s);
    assert_eq!(out.exit, Some(0), "{out:?}");
    assert!(!out.output_tail.contains("WROTE"), "{}", out.output_tail);
    for ok in ["PARENT-IN-TMPFS", "TMP-OK", "WT-OK"] {
        assert!(out.output_tail.contains(ok), "{ok}: {}", out.output_tail);
    }
    assert!(!sibling.join("planted").exists());
    assert!(!root.path().join("planted").exists());
    assert!(!Path::new("/usr/arev-planted").exists());
    assert!(
        !Path::new(&host_tmp).exists(),
        "the sandbox's /tmp is its own"
    );
    // The worktree it wrote in is its copy in RAM: nothing reached the host's tree.
    assert!(!wt.join("made-here").exists());
    assert_eq!(std::fs::read_dir(&wt).unwrap().count(), 0);
}

#[test]
fn a_hanging_reproducer_times_out_inconclusive_within_the_limit() {
    sandbox_ready();
    let wt = tempfile::tempdir().unwrap();
    let mut s = spec(wt.path(), "echo started; sleep 600");
    s.timeout = Duration::from_secs(1);
    let t = Instant::now();
    let out = run_blocking(&s);
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    assert!(out.timed_out && out.exit.is_none(), "{out:?}");
    assert_eq!(out.output_tail, "started\n");
    assert_eq!(out.sandbox_error, None);
    assert_eq!(classify(&out, None), ProofStatus::Inconclusive);
}

/// The children write to a FIFO the test reads (bound read-only: a FIFO is written through
/// a read-only mount), the one channel out of the sandbox: the script's own line arrives,
/// none of the children's.
#[test]
fn children_that_outlive_the_limit_are_killed_and_write_nothing_after_it() {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    sandbox_ready();
    let wt = tempfile::tempdir().unwrap();
    let chan = tempfile::tempdir().unwrap();
    let fifo = chan.path().join("late");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    // The read end, open before the run: a writer's open never blocks.
    let mut reader = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK)
        .open(&fifo)
        .unwrap();
    // A new session (setsid), a double fork, a nohup'd one, each to write after 2 s.
    let script = format!(
        "echo early > {f}; \
         setsid sh -c 'sleep 2; echo late-setsid > {f}' & \
         (sh -c 'sleep 2; echo late-double > {f}' &) ; \
         nohup sh -c 'trap \"\" TERM HUP; sleep 2; echo late-nohup > {f}' >/dev/null 2>&1 & \
         echo forked; sleep 600",
        f = fifo.display()
    );
    let mut s = spec(wt.path(), &script);
    s.timeout = Duration::from_secs(1);
    s.bind_ro = vec![chan.path().to_path_buf()];
    let out = run_blocking(&s);
    assert!(out.timed_out, "{out:?}");
    assert_eq!(out.output_tail, "forked\n", "{out:?}");
    assert_eq!(classify(&out, None), ProofStatus::Inconclusive);
    std::thread::sleep(Duration::from_secs(3));
    let mut got = Vec::new();
    match reader.read_to_end(&mut got) {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
        Err(e) => panic!("reading the FIFO: {e}"),
    }
    assert_eq!(
        String::from_utf8_lossy(&got),
        "early\n",
        "a child wrote after the limit"
    );
}

#[test]
fn a_command_that_cannot_run_is_inconclusive() {
    sandbox_ready();
    let wt = tempfile::tempdir().unwrap();
    let mut s = spec(wt.path(), "");
    s.argv = vec!["arev-no-such-command".into()];
    let out = run_blocking(&s);
    assert_eq!(out.exit, Some(127), "{out:?}");
    assert_eq!(out.sandbox_error, None);
    assert_eq!(classify(&out, None), ProofStatus::Inconclusive);
    std::fs::write(wt.path().join("repro.sh"), "#!/bin/sh\nexit 1\n").unwrap();
    s.argv = vec!["./repro.sh".into()];
    let out = run_blocking(&s);
    assert_eq!(out.exit, Some(126), "{out:?}");
    assert_eq!(classify(&out, None), ProofStatus::Inconclusive);
}

#[test]
fn a_sandbox_that_cannot_be_set_up_is_a_sandbox_error_not_a_failure() {
    sandbox_ready();
    let wt = tempfile::tempdir().unwrap();
    let mut s = spec(wt.path(), "echo ran > ran; exit 1");
    s.bind_ro = vec![PathBuf::from("/arev-no-such-dir")];
    let out = run_blocking(&s);
    let err = out.sandbox_error.clone().unwrap_or_default();
    assert!(
        err.contains("bwrap") && err.contains("/arev-no-such-dir"),
        "{out:?}"
    );
    assert!(!wt.path().join("ran").exists());
    assert_eq!(classify(&out, None), ProofStatus::Inconclusive);
}

#[test]
fn a_memory_hog_does_not_get_its_memory() {
    sandbox_ready();
    let wt = tempfile::tempdir().unwrap();
    // 2 GiB asked for under a 256 MiB limit, by Python and by a shell.
    let script = "/usr/bin/python3 -c 'b = bytearray(2 << 30); print(\"GOT-PY\")'; \
                  perl -e '$x = \"x\" x (2 << 30); print \"GOT-PL\\n\"'; \
                  echo done";
    let mut s = spec(wt.path(), script);
    s.memory_bytes = 256 << 20;
    let out = run_blocking(&s);
    assert!(!out.output_tail.contains("GOT-"), "{}", out.output_tail);
    assert!(
        out.output_tail.contains("MemoryError"),
        "{}",
        out.output_tail
    );
    assert!(out.output_tail.ends_with("done\n"), "{}", out.output_tail);
    // The limit is a hard one: the command cannot raise it.
    let out = run_blocking(&spec(
        wt.path(),
        "ulimit -v unlimited && echo RAISED; ulimit -H -v",
    ));
    assert!(!out.output_tail.contains("RAISED"), "{}", out.output_tail);
    assert!(
        out.output_tail.contains(&(1u64 << 20).to_string()),
        "{}",
        out.output_tail
    );
}

/// What the child process runs (serialised through the environment).
#[derive(Serialize, Deserialize)]
struct ChildSpec {
    workdir: PathBuf,
    argv: Vec<String>,
    env_allow: Vec<String>,
    bind_ro: Vec<PathBuf>,
    timeout_secs: u64,
    memory_bytes: u64,
    /// Open a file, a pipe and sockets without close-on-exec before the run, each holding
    /// this secret (as a parent of arev might leave them).
    #[serde(default)]
    leak_secret: Option<String>,
}

/// Runs `child` in this test binary re-executed with `env` (and nothing else of this
/// process's environment but PATH), as arev would run with that environment.
fn in_child(child: &ChildSpec, env: &[(&str, &str)]) -> RunOutcome {
    in_child_result(child, env).unwrap_or_else(|e| panic!("the run failed: {e}"))
}

/// [`in_child`], with the error of `preflight` or `run` as its message.
fn in_child_result(child: &ChildSpec, env: &[(&str, &str)]) -> Result<RunOutcome, String> {
    let dir = tempfile::tempdir().unwrap();
    let out_file = dir.path().join("outcome.json");
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "prove_sandbox::sandboxed_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .envs(env.iter().copied())
        .env("RUST_BACKTRACE", "0")
        .env(CHILD_SPEC, serde_json::to_string(child).unwrap())
        .env(CHILD_OUT, &out_file)
        .status()
        .unwrap();
    assert!(status.success(), "the child failed: {status}");
    serde_json::from_slice(&std::fs::read(&out_file).expect("the child wrote its outcome")).unwrap()
}

/// The child's side of [`in_child`]; does nothing in a normal test run.
#[test]
fn sandboxed_child() {
    let Some(json) = std::env::var_os(CHILD_SPEC) else {
        return;
    };
    let c: ChildSpec = serde_json::from_str(json.to_str().unwrap()).unwrap();
    let _leaked = c.leak_secret.as_deref().map(leak);
    // `{AREV_PID}` in the command: this process's pid, the one with arev's environment.
    let pid = std::process::id().to_string();
    let spec = SandboxSpec {
        workdir: c.workdir,
        argv: c
            .argv
            .iter()
            .map(|a| a.replace("{AREV_PID}", &pid))
            .collect(),
        timeout: Duration::from_secs(c.timeout_secs),
        memory_bytes: c.memory_bytes,
        env_allow: c.env_allow,
        bind_ro: c.bind_ro,
        mode: SandboxMode::Bwrap,
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let out: Result<RunOutcome, String> = preflight(spec.mode)
        .and_then(|()| rt.block_on(run(&spec, &CancellationToken::new())))
        .map_err(|e| e.to_string());
    std::fs::write(
        std::env::var_os(CHILD_OUT).unwrap(),
        serde_json::to_vec(&out).unwrap(),
    )
    .unwrap();
}

/// Descriptors without close-on-exec holding `secret`: a file, a pipe's read end, a
/// connected Unix socket and a listening TCP socket.
fn leak(secret: &str) -> Vec<std::os::fd::OwnedFd> {
    use std::io::Write;
    use std::os::fd::{AsFd, OwnedFd};
    let dir = tempfile::tempdir().unwrap().keep();
    let file = dir.join("secret");
    std::fs::write(&file, secret).unwrap();
    let f: OwnedFd = std::fs::File::open(&file).unwrap().into();
    let (r, w) = nix::unistd::pipe().unwrap();
    let mut w = std::fs::File::from(w);
    w.write_all(secret.as_bytes()).unwrap();
    let (a, mut b) = std::os::unix::net::UnixStream::pair().unwrap();
    b.write_all(secret.as_bytes()).unwrap();
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let fds: Vec<OwnedFd> = vec![f, r, a.into(), l.into(), w.into(), b.into()];
    for fd in &fds {
        nix::fcntl::fcntl(
            fd.as_fd(),
            nix::fcntl::FcntlArg::F_SETFD(nix::fcntl::FdFlag::empty()),
        )
        .unwrap();
    }
    fds
}

/// arev's parent left descriptors open without close-on-exec (a file, a pipe, sockets, each
/// holding a secret): the reproducer starts with 0, 1 and 2 only.
#[test]
fn the_reproducer_inherits_no_descriptor_but_stdio() {
    sandbox_ready();
    let wt = tempfile::tempdir().unwrap();
    let script = r#"for n in $(seq 3 255); do if [ -e /proc/$$/fd/$n ]; then echo "OPEN $n $(readlink /proc/$$/fd/$n)"; cat <&$n; fi; done; echo checked"#;
    let child = ChildSpec {
        workdir: wt.path().to_path_buf(),
        argv: vec!["/bin/sh".into(), "-c".into(), script.into()],
        env_allow: vec![],
        bind_ro: vec![],
        timeout_secs: 30,
        memory_bytes: 1 << 30,
        leak_secret: Some("LEAKED-FD-SECRET".into()),
    };
    let out = in_child(&child, &[]);
    assert_eq!(out.exit, Some(0), "{out:?}");
    assert!(!out.output_tail.contains("OPEN"), "{}", out.output_tail);
    assert!(!out.output_tail.contains("LEAKED"), "{}", out.output_tail);
    assert_eq!(out.output_tail, "checked\n");
}

/// Every file under `dir` with its bytes (sorted, relative).
fn files_of(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = vec![];
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().display().to_string();
                out.push((rel, std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// The sandbox's writable space is RAM of a bounded size, never the host's disk (here
/// `[prove] memory` = 64 MiB): the worktree holds its tree plus 64 MiB — 1 MiB files are
/// refused with "No space left on device" once 64 MiB of them are written — a single file
/// stops at 64 MiB, `/tmp` and `$HOME` at 64 MiB each; a reproducer that writes until it
/// fails ends as a failing command; the host's tree is as it was.
#[test]
fn the_sandboxs_writable_space_is_bounded_and_never_the_host_disk() {
    sandbox_ready();
    let root = tempfile::tempdir().unwrap();
    let wt = root.path().join("repo");
    std::fs::create_dir_all(&wt).unwrap();
    std::fs::write(wt.join("seed.txt"), "seed\n").unwrap();
    std::fs::write(wt.join("blob.bin"), vec![7u8; 1 << 20]).unwrap();
    let before = files_of(&wt);
    let script = r#"cat seed.txt; echo "blob $(wc -c < blob.bin)"
        mkdir many; i=0
        while [ $i -lt 200 ]; do
          if ! err=$(head -c 1048576 /dev/zero 2>&1 >"many/$i"); then echo "many stopped at $i: $err"; break; fi
          i=$((i+1))
        done
        rm -rf many
        for f in ./big /tmp/big "$HOME/big"; do head -c 268435456 /dev/zero >"$f" 2>/dev/null; echo "$f $? $(stat -c %s "$f")"; rm -f "$f"; done
        exit 0"#;
    let mut s = spec(&wt, script);
    s.memory_bytes = 64 << 20;
    let out = run_blocking(&s);
    assert_eq!(out.exit, Some(0), "{out:?}");
    let lines: Vec<&str> = out.output_tail.lines().collect();
    assert_eq!(lines.len(), 6, "{}", out.output_tail);
    // The tree's files are there.
    assert_eq!(lines[..2], ["seed", "blob 1048576"], "{}", out.output_tail);
    // Many files: stopped at the bound (the tree's 1 MiB is not taken from it).
    let many = lines[2]
        .strip_prefix("many stopped at ")
        .unwrap_or_else(|| panic!("the files were not stopped: {}", out.output_tail));
    let (count, err) = many.split_once(": ").unwrap();
    let count: u32 = count.parse().unwrap();
    assert!((56..=64).contains(&count), "{count} MiB written: {many}");
    assert!(err.contains("No space left on device"), "{many}");
    // One large file in each writable place: stopped at the bound.
    for l in &lines[3..] {
        let f: Vec<&str> = l.split_whitespace().collect();
        let (status, size): (i32, u64) = (f[1].parse().unwrap(), f[2].parse().unwrap());
        assert_ne!(status, 0, "{l}: the write went through");
        assert!(size <= 64 << 20, "{l}: more than the bound was kept");
    }
    // A reproducer that writes until it fails is a failing command, its error in the output.
    let mut s = spec(&wt, "");
    s.memory_bytes = 64 << 20;
    s.argv = [
        "python3",
        "-c",
        "import os\nos.mkdir('fill')\nfor i in range(1000):\n    open(f'fill/{i}', 'wb').write(bytes(1 << 20))\n",
    ]
    .map(String::from)
    .to_vec();
    let out = run_blocking(&s);
    assert_eq!((out.exit, out.signal), (Some(1), None), "{out:?}");
    assert!(
        out.output_tail.contains("No space left on device"),
        "{}",
        out.output_tail
    );
    // Nothing of it is on the host: the tree is byte for byte what it was.
    assert_eq!(files_of(&wt), before);
    assert_eq!(std::fs::read_dir(root.path()).unwrap().count(), 1);
}

/// The command works on a copy of the tree: its files and modes are there (an executable
/// script runs, a test of the tree's code fails or passes as it should), and what it
/// changes, deletes or adds stays in the sandbox.
#[test]
fn a_reproducer_runs_on_a_copy_of_the_tree_and_leaves_the_tree_as_it_was() {
    use std::os::unix::fs::PermissionsExt;
    sandbox_ready();
    let root = tempfile::tempdir().unwrap();
    let wt = root.path().join("repo");
    std::fs::create_dir_all(wt.join("pkg")).unwrap();
    std::fs::write(wt.join("pkg/__init__.py"), "").unwrap();
    std::fs::write(wt.join("pkg/calc.py"), "def add(a, b):\n    return a - b\n").unwrap();
    let test = |want: &str| {
        format!(
            "import unittest\nfrom pkg.calc import add\n\n\nclass T(unittest.TestCase):\n{i}def test_add(self):\n{i}{i}self.assertEqual(add(2, 3), {want})\n",
            i = "    "
        )
    };
    std::fs::write(wt.join("test_fails.py"), test("5")).unwrap();
    std::fs::write(wt.join("test_passes.py"), test("-1")).unwrap();
    std::fs::write(
        wt.join("run.sh"),
        "#!/bin/sh
echo ran; echo changed >> pkg/calc.py; rm test_fails.py; echo new > new.txt; exit 4
",
    )
    .unwrap();
    std::fs::set_permissions(wt.join("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let before = files_of(&wt);
    let unittest = |module: &str| {
        let mut s = spec(&wt, "");
        s.argv = ["python3", "-m", "unittest", module]
            .map(String::from)
            .to_vec();
        run_blocking(&s)
    };
    let fails = unittest("test_fails");
    assert_eq!(fails.exit, Some(1), "{fails:?}");
    assert!(
        fails.output_tail.contains("AssertionError: -1 != 5"),
        "{fails:?}"
    );
    let passes = unittest("test_passes");
    assert_eq!(passes.exit, Some(0), "{passes:?}");
    assert_eq!(classify(&fails, Some(&passes)), ProofStatus::Reproduced);
    let mut s = spec(&wt, "");
    s.argv = vec!["./run.sh".into()];
    let out = run_blocking(&s);
    assert_eq!(
        (out.exit, out.output_tail.as_str()),
        (Some(4), "ran\n"),
        "{out:?}"
    );
    // Python's bytecode cache, the script's edits: none reached the host.
    assert_eq!(files_of(&wt), before);
    assert!(!wt.join("pkg/__pycache__").exists());
}

#[test]
fn home_secrets_and_other_processes_are_out_of_reach() {
    sandbox_ready();
    let root = tempfile::tempdir().unwrap();
    let home = root.path().join("home");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_ed25519"), "PLANTED-SSH-KEY\n").unwrap();
    std::fs::write(home.join(".netrc"), "machine x password PLANTED-NETRC\n").unwrap();
    let wt = root.path().join("wt");
    std::fs::create_dir_all(&wt).unwrap();
    // Everything a reproducer might look through for arev's secrets.
    let script = r#"
        echo "home=$HOME"; ls -A "$HOME"; echo "---"
        cat "$HOME/.ssh/id_ed25519" "$HOME/.netrc" 2>&1
        env
        for p in /proc/[0-9]*; do cat $p/environ 2>/dev/null | tr '\0' '\n'; done
        cat /proc/{AREV_PID}/environ 2>/dev/null | tr '\0' '\n'
        cat /proc/{AREV_PID}/cmdline 2>/dev/null && echo "SAW-AREV-CMDLINE"
        echo "pids: $(ls -d /proc/[0-9]* | wc -l)"
        ls / ; ls /run /root /var /etc/ssh /etc/shadow 2>&1
        exit 0
    "#;
    let child = ChildSpec {
        workdir: wt,
        argv: vec!["/bin/sh".into(), "-c".into(), script.into()],
        env_allow: vec!["AREV_TEST_ALLOWED".into()],
        bind_ro: vec![],
        timeout_secs: 30,
        memory_bytes: 1 << 30,
        leak_secret: None,
    };
    let home_s = home.display().to_string();
    let out = in_child(
        &child,
        &[
            ("HOME", &home_s),
            ("GITHUB_TOKEN", "ghp_PLANTED_TOKEN"),
            ("ANTHROPIC_API_KEY", "sk-PLANTED"),
            ("SSH_AUTH_SOCK", "/run/PLANTED.sock"),
            ("AREV_TEST_ALLOWED", "allowed-value"),
            ("LANG", "C.UTF-8"),
        ],
    );
    let text = &out.output_tail;
    assert_eq!(out.exit, Some(0), "{out:?}");
    assert!(!text.contains("PLANTED"), "a secret leaked:\n{text}");
    // An empty $HOME at arev's path, the allowed variable, the locale, TERM=dumb.
    assert!(text.contains(&format!("home={home_s}\n---\n")), "{text}");
    for want in [
        "AREV_TEST_ALLOWED=allowed-value",
        "LANG=C.UTF-8",
        "TERM=dumb",
    ] {
        assert!(text.contains(want), "{want}:\n{text}");
    }
    assert!(!text.contains("SAW-AREV-CMDLINE"), "{text}");
    // A fresh /proc: bwrap's init, the shell, and the subshell and `ls` that count.
    let pids: usize = text
        .lines()
        .find_map(|l| l.strip_prefix("pids: "))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(pids <= 5, "{pids} processes visible:\n{text}");
    for hidden in ["/run", "/root", "/var", "/etc/ssh", "/etc/shadow"] {
        assert!(
            text.contains(&format!("'{hidden}': No such file")),
            "{hidden} is visible:\n{text}"
        );
    }
}

/// `cargo test --offline` of a crate with no dependencies, the toolchain bound read-only
/// through `[prove] bind_ro` and found through `[prove] env`.
#[test]
fn cargo_test_runs_offline_with_the_toolchain_bound_read_only() {
    sandbox_ready();
    let home = PathBuf::from(std::env::var_os("HOME").unwrap());
    let cargo_home =
        std::env::var_os("CARGO_HOME").map_or_else(|| home.join(".cargo"), PathBuf::from);
    let rustup_home =
        std::env::var_os("RUSTUP_HOME").map_or_else(|| home.join(".rustup"), PathBuf::from);
    let bind_ro: Vec<PathBuf> = [&cargo_home, &rustup_home]
        .into_iter()
        .filter(|p| p.is_dir())
        .cloned()
        .collect();
    let root = tempfile::tempdir().unwrap();
    let wt = root.path().join("crate");
    std::fs::create_dir_all(wt.join("src")).unwrap();
    std::fs::write(
        wt.join("Cargo.toml"),
        "[package]\nname = \"repro\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    std::fs::write(
        wt.join("src/lib.rs"),
        "pub fn add(a: u8, b: u8) -> u8 { a.wrapping_add(b) }\n\
         #[test] fn adds() { assert_eq!(add(200, 100), 300u16 as u8); }\n\
         #[test] fn overflows() { assert_eq!(add(200, 100) as u16, 300, \"REPRO-FAILED\"); }\n",
    )
    .unwrap();
    let child = ChildSpec {
        workdir: wt.clone(),
        argv: ["cargo", "test", "--offline", "-q"]
            .map(String::from)
            .to_vec(),
        env_allow: vec!["CARGO_HOME".into(), "RUSTUP_HOME".into()],
        bind_ro,
        timeout_secs: 300,
        memory_bytes: 4 << 30,
        leak_secret: None,
    };
    let (ch, rh) = (
        cargo_home.display().to_string(),
        rustup_home.display().to_string(),
    );
    let out = in_child(
        &child,
        &[
            ("HOME", home.to_str().unwrap()),
            ("CARGO_HOME", &ch),
            ("RUSTUP_HOME", &rh),
        ],
    );
    // It compiled and ran: one test passes, the reproducer fails.
    assert_eq!(out.sandbox_error, None, "{out:?}");
    assert_eq!(out.exit, Some(101), "{}", out.output_tail);
    assert!(
        out.output_tail.contains("REPRO-FAILED"),
        "{}",
        out.output_tail
    );
    assert_eq!(classify(&out, None), ProofStatus::Reproduced);
    // The toolchain stayed read-only; the build went to the worktree's copy in RAM, not to
    // the host's tree.
    assert!(!wt.join("target").exists());
}

#[test]
fn without_bwrap_the_preflight_and_the_run_name_the_fix() {
    let wt = tempfile::tempdir().unwrap();
    let child = ChildSpec {
        workdir: wt.path().to_path_buf(),
        argv: vec!["true".into()],
        env_allow: vec![],
        bind_ro: vec![],
        timeout_secs: 30,
        memory_bytes: 0,
        leak_secret: None,
    };
    let err = in_child_result(&child, &[("PATH", "/arev-no-such-dir")]).unwrap_err();
    for want in [
        "`bwrap` is not on PATH",
        "apt-get install bubblewrap",
        "--prove-sandbox none",
        "`[prove] sandbox = \"none\"` in your user config",
    ] {
        assert!(err.contains(want), "{want}: {err}");
    }
    // Mode `none` needs no bwrap: the command runs, unsandboxed.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut s = spec(wt.path(), "echo ran > ran");
    s.mode = SandboxMode::None;
    let out = rt.block_on(run(&s, &CancellationToken::new())).unwrap();
    assert_eq!(out.exit, Some(0), "{out:?}");
    assert!(wt.path().join("ran").exists(), "mode none runs unsandboxed");
}

/// `[prove] sandbox = "none"`, `env` and `bind_ro` from a repository's config stop `arev run`
/// before anything starts (exit 2, naming the key and the file), whether the config comes
/// from the base commit (`--repo-config base`) or the working tree.
#[test]
fn a_repository_config_cannot_weaken_the_sandbox() {
    use crate::harness::TestRepo;
    let repo = TestRepo::new();
    repo.write("arev.toml", "[prove]\nenv = [\"GITHUB_TOKEN\"]\n");
    repo.commit("a config that passes a token to reproducers");
    repo.git(&["checkout", "-q", "-b", "pr"]);
    repo.write("src/lib.rs", "pub fn id(x: u32) -> u32 { x }\n");
    let run = repo
        .arev()
        .args(&["run", "diff", "--base", "main", "--repo-config", "base"])
        .run();
    run.assert_code(2);
    assert!(
        run.stderr
            .contains(":arev.toml: `prove.env` passes your environment"),
        "{}",
        run.stderr
    );
    assert!(run.run_dirs().is_empty());

    for (file, text, key) in [
        (
            "arev.toml",
            "[prove]\nsandbox = \"none\"\n",
            "prove.sandbox",
        ),
        (
            ".arev/config.toml",
            "[prove]\nbind_ro = [\"~/.ssh\"]\n",
            "prove.bind_ro",
        ),
    ] {
        std::fs::remove_file(repo.root.join("arev.toml")).unwrap();
        repo.write(file, text);
        let run = repo
            .arev()
            .args(&["run", "src/lib.rs", "--repo-config", "worktree"])
            .run();
        run.assert_code(2);
        let want = format!("{}: `{key}` ", repo.root.join(file).display());
        assert!(run.stderr.contains(&want), "{want}: {}", run.stderr);
        assert!(run.run_dirs().is_empty());
        if file != "arev.toml" {
            std::fs::remove_file(repo.root.join(file)).unwrap();
        }
        repo.write("arev.toml", "");
    }

    // The flag takes only the two sandboxes.
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs", "--prove-sandbox", "docker"])
        .run();
    run.assert_code(2);
    assert!(run.stderr.contains("--prove-sandbox"), "{}", run.stderr);
}

/// A bwrap that cannot create its namespaces (here: a stand-in that fails as bwrap does)
/// stops the preflight with the fix named.
#[test]
fn a_bwrap_without_user_namespaces_fails_the_preflight_naming_the_fix() {
    use std::os::unix::fs::PermissionsExt;
    let bin = tempfile::tempdir().unwrap();
    let fake = bin.path().join("bwrap");
    std::fs::write(
        &fake,
        "#!/bin/sh\necho 'bwrap: No permissions to create new namespace, likely because the \
         kernel does not allow non-privileged user namespaces.' >&2\nexit 1\n",
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let wt = tempfile::tempdir().unwrap();
    let child = ChildSpec {
        workdir: wt.path().to_path_buf(),
        argv: vec!["true".into()],
        env_allow: vec![],
        bind_ro: vec![],
        timeout_secs: 30,
        memory_bytes: 0,
        leak_secret: None,
    };
    let path = format!("{}:/usr/bin:/bin", bin.path().display());
    let err = in_child_result(&child, &[("PATH", &path)]).unwrap_err();
    for want in [
        "cannot create its namespaces",
        "No permissions to create new namespace",
        "unprivileged user namespaces",
        "kernel.apparmor_restrict_unprivileged_userns=0",
        "--prove-sandbox none",
    ] {
        assert!(err.contains(want), "{want}: {err}");
    }
}
