//! The sandbox a reproducer runs in (docs/prove.md "Sandbox"): the bubblewrap command line —
//! the worktree as a size-capped tmpfs holding a copy of the scratch tree (which is bound
//! read-only only to be copied), the system read-only, a filtered `/etc`, a fresh `/tmp`,
//! `/proc` and `/dev`, an empty `$HOME`, every namespace unshared (network and pids
//! included), no capabilities — the environment allowlist, the shell prologue that copies
//! the tree in, sets the memory limit and says the sandbox is up, and the preflight that
//! checks bwrap can do all this here.

use super::error::ProveError;
use crate::backends::find_bwrap;
use crate::records::SandboxMode;
use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What to run, where, and under which limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxSpec {
    /// The scratch worktree: the command's working directory. Under bwrap the command works
    /// on a copy of it in RAM (nothing it writes reaches this directory); unsandboxed, on the
    /// directory itself.
    pub workdir: PathBuf,
    /// The command, run with `workdir` as its working directory (a bare name is looked up
    /// on PATH inside the sandbox).
    pub argv: Vec<String>,
    /// `[timeouts] prove`: at the limit every process of the run is killed.
    pub timeout: Duration,
    /// `[prove] memory`: the address-space limit of the command (`RLIMIT_AS`); 0 = none.
    pub memory_bytes: u64,
    /// `[prove] env`: names of variables passed through from arev's environment.
    pub env_allow: Vec<String>,
    /// `[prove] bind_ro`: absolute paths made visible read-only at the same place.
    pub bind_ro: Vec<PathBuf>,
    pub mode: SandboxMode,
}

/// The first line the sandboxed shell prints once the sandbox is set up and the memory limit
/// is in place, right before it executes the command: without it, the run failed to start
/// (a bwrap error), whatever its exit code.
pub(super) const READY: &str = "arev-prove: sandbox ready";
/// The `$0` of the prologue shell (what its own error messages are prefixed with).
const SHELL_NAME: &str = "sh";
/// The sandbox's host name: a generic one, nothing that says "arev" to the code it runs.
const HOSTNAME: &str = "localhost";
/// `$HOME` inside the sandbox when arev's own cannot be used (unset, relative, `/`, or in
/// a system directory).
const FALLBACK_HOME: &str = "/home/user";
/// Where the on-disk scratch tree is bound read-only for the prologue to copy it from, the
/// first that overlaps no other mount of the sandbox: neutral paths, nothing that says arev.
const STAGES: &[&str] = &["/mnt/src", "/srv/src", "/media/src", "/opt/src"];

/// The system directories bound read-only (or recreated as the symlinks they are, for a
/// merged `/usr`).
const SYSTEM_DIRS: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
];
/// What of `/etc` programs need to run (the loader's cache, users and groups for NSS, time
/// zone, certificates, alternatives, locale): never `shadow`, `ssh`, `sudoers`, credentials
/// of package managers or git, or the environment file.
const ETC_FILES: &[&str] = &[
    "alternatives",
    "ca-certificates",
    "ca-certificates.conf",
    "crypto-policies",
    "debian_version",
    "gai.conf",
    "group",
    "host.conf",
    "hostname",
    "hosts",
    "inputrc",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "locale.alias",
    "locale.conf",
    "localtime",
    "lsb-release",
    "magic",
    "mime.types",
    "nsswitch.conf",
    "os-release",
    "passwd",
    "pki",
    "protocols",
    "services",
    "ssl",
    "terminfo",
    "timezone",
];
/// `/etc` entries starting with these: language runtimes' own configuration
/// (`python3.12/`, `perl/`, `java-21-openjdk/`).
const ETC_PREFIXES: &[&str] = &["python", "perl", "java", "fonts"];
/// Private-key directories inside the bound `/etc` entries: hidden under an empty tmpfs.
const ETC_MASKED: &[&str] = &[
    "/etc/ssl/private",
    "/etc/pki/tls/private",
    "/etc/pki/CA/private",
];

/// The program, arguments and environment that start a spec's command.
#[derive(Debug)]
pub(super) struct Launch {
    pub program: PathBuf,
    pub args: Vec<OsString>,
    pub env: Vec<(OsString, OsString)>,
}

/// How `spec` is started: through bwrap, or (mode `none`) the prologue shell directly.
pub(super) fn launch(spec: &SandboxSpec) -> Result<Launch, ProveError> {
    if !spec.workdir.is_absolute() || !spec.workdir.is_dir() {
        return Err(ProveError::BadWorkdir(spec.workdir.clone()));
    }
    if spec.argv.is_empty() {
        return Err(ProveError::EmptyCommand);
    }
    let real_home = std::env::var_os("HOME").map(PathBuf::from);
    let arev_env: Vec<(OsString, OsString)> = std::env::vars_os().collect();
    match spec.mode {
        SandboxMode::None => Ok(Launch {
            program: PathBuf::from("/bin/sh"),
            args: prologue(spec, None),
            env: environment(&spec.env_allow, real_home.as_deref(), &arev_env),
        }),
        SandboxMode::Bwrap => {
            let bwrap = find_bwrap().ok_or(ProveError::BwrapMissing)?;
            let home = sandbox_home(real_home.as_deref());
            let stage = stage_path(spec, &home).ok_or(ProveError::NoStage)?;
            let tree = tree_bytes(&spec.workdir, page_size())
                .map_err(|e| ProveError::MeasureTree(spec.workdir.clone(), e))?;
            let mounts = Mounts {
                home: &home,
                stage: &stage,
                tree_bytes: tree,
            };
            let mut args = bwrap_args(spec, &mounts, &host_system(), &host_etc());
            args.push("--".into());
            args.push("/bin/sh".into());
            args.extend(prologue(spec, Some(&stage)));
            Ok(Launch {
                program: bwrap,
                args,
                env: environment(&spec.env_allow, Some(&home), &arev_env),
            })
        }
    }
}

/// `-c <prologue> sh <argv…>`: copy the tree in from `stage` (bwrap: the working directory
/// is an empty tmpfs until then; links copied as links, modes and times kept; a failed copy
/// exits 125 before the ready line, a sandbox error), set the memory limit and the file-size
/// limit (soft and hard, so the command cannot raise them), say the sandbox is ready, and
/// replace the shell with the command — a command that is not found or not executable exits
/// 127 or 126, as in any shell.
pub(super) fn prologue(spec: &SandboxSpec, stage: Option<&Path>) -> Vec<OsString> {
    // The stage is one of `STAGES`: no character the shell would read.
    let copy = stage.map_or_else(String::new, |s| {
        format!("cp -PRp {}/. . || exit 125; ", s.display())
    });
    let limit = if spec.memory_bytes == 0 {
        String::new()
    } else {
        // `-v` in KiB; `-f` in 512-byte blocks (POSIX; dash, and bash as `sh`).
        format!(
            "ulimit -v {} || exit 125; ulimit -f {} || exit 125; ",
            spec.memory_bytes.div_ceil(1024),
            spec.memory_bytes.div_ceil(512)
        )
    };
    let script = format!("{copy}{limit}printf '%s\\n' '{READY}'; exec \"$@\"");
    let mut args: Vec<OsString> = vec!["-c".into(), script.into(), SHELL_NAME.into()];
    args.extend(spec.argv.iter().map(OsString::from));
    args
}

/// How a system directory of the host is recreated in the sandbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum SystemDir {
    /// Bound read-only at the same place.
    Dir(PathBuf),
    /// A symlink (merged `/usr`: `/bin -> usr/bin`), recreated with the same target.
    Link { path: PathBuf, target: PathBuf },
}

/// The host's system directories, as they are.
fn host_system() -> Vec<SystemDir> {
    SYSTEM_DIRS
        .iter()
        .filter_map(|d| {
            let meta = std::fs::symlink_metadata(d).ok()?;
            if meta.file_type().is_symlink() {
                let target = std::fs::read_link(d).ok()?;
                Some(SystemDir::Link {
                    path: PathBuf::from(d),
                    target,
                })
            } else {
                meta.is_dir().then(|| SystemDir::Dir(PathBuf::from(d)))
            }
        })
        .collect()
}

/// Global, writable parts of `/proc` covered read-only (bwrap covers some of them only when
/// it judges them writable, which it misjudges when run by root).
const PROC_READ_ONLY: &[&str] = &[
    "/proc/sys",
    "/proc/sysrq-trigger",
    "/proc/irq",
    "/proc/bus",
    "/proc/pressure",
    "/proc/mtrr",
    "/proc/acpi",
    "/proc/scsi",
    "/proc/driver",
    "/proc/fs",
    "/proc/tty",
];

/// The names in the host's `/etc` that are bound.
fn host_etc() -> Vec<String> {
    let Ok(entries) = std::fs::read_dir("/etc") else {
        return vec![];
    };
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| etc_allowed(n))
        .collect();
    names.sort();
    names
}

fn etc_allowed(name: &str) -> bool {
    ETC_FILES.contains(&name) || ETC_PREFIXES.iter().any(|p| name.starts_with(p))
}

/// `$HOME` in the sandbox: arev's own path (so that a `bind_ro` of `~/.cargo` lands where
/// tools look for it), on an empty tmpfs; a fixed path when arev's cannot be used.
pub(super) fn sandbox_home(real: Option<&Path>) -> PathBuf {
    let usable = real.filter(|h| {
        let mut comps = h.components();
        h.is_absolute()
            && comps.next().is_some()
            && comps.next().is_some_and(|first| {
                let first = Path::new("/").join(first);
                !SYSTEM_DIRS.iter().any(|d| first == Path::new(d))
                    && !["/etc", "/proc", "/dev"]
                        .iter()
                        .any(|d| first == Path::new(d))
            })
    });
    usable.map_or_else(|| PathBuf::from(FALLBACK_HOME), Path::to_path_buf)
}

/// Where the sandbox's own places are: its `$HOME`, the read-only stage of the scratch tree,
/// and how much of the worktree's tmpfs the tree's copy takes.
#[derive(Debug, Clone, Copy)]
pub(super) struct Mounts<'a> {
    pub home: &'a Path,
    pub stage: &'a Path,
    pub tree_bytes: u64,
}

/// The first of [`STAGES`] that is neither inside nor above another mount of the sandbox
/// (the worktree, `/tmp`, `$HOME`, a `bind_ro` path); None when each of them is.
pub(super) fn stage_path(spec: &SandboxSpec, home: &Path) -> Option<PathBuf> {
    let taken: Vec<&Path> = [spec.workdir.as_path(), Path::new("/tmp"), home]
        .into_iter()
        .chain(spec.bind_ro.iter().map(PathBuf::as_path))
        .collect();
    STAGES
        .iter()
        .map(Path::new)
        .find(|s| !taken.iter().any(|t| t.starts_with(s) || s.starts_with(t)))
        .map(Path::to_path_buf)
}

/// The size of the worktree's tmpfs: the tree's copy plus `[prove] memory` for what the
/// command writes there; 0 (no `--size`: the kernel's default) when the memory is unbounded.
pub(super) fn workdir_size(memory_bytes: u64, tree_bytes: u64) -> u64 {
    if memory_bytes == 0 {
        0
    } else {
        memory_bytes.saturating_add(tree_bytes)
    }
}

/// What the tree at `dir` takes on a tmpfs of `page`-byte pages: each regular file its
/// length rounded up to whole pages, and one page for every other entry (a directory, a
/// link) as slack. Links are not followed.
pub(super) fn tree_bytes(dir: &Path, page: u64) -> std::io::Result<u64> {
    let mut total: u64 = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d)? {
            let entry = entry?;
            let meta = entry.metadata()?;
            let bytes = if meta.is_file() {
                meta.len().div_ceil(page).saturating_mul(page)
            } else {
                page
            };
            total = total.saturating_add(bytes);
            if meta.is_dir() {
                stack.push(entry.path());
            }
        }
    }
    Ok(total)
}

/// The size of a memory page (tmpfs allocates whole pages); 4 KiB when it cannot be read.
fn page_size() -> u64 {
    nix::unistd::sysconf(nix::unistd::SysconfVar::PAGE_SIZE)
        .ok()
        .flatten()
        .and_then(|p| u64::try_from(p).ok())
        .filter(|p| *p > 0)
        .unwrap_or(4096)
}

/// bwrap's options (before `--`), in mount order: later mounts go over earlier ones, so the
/// tmpfs `$HOME` comes before the `bind_ro` paths inside it and the worktree comes last.
pub(super) fn bwrap_args(
    spec: &SandboxSpec,
    mounts: &Mounts<'_>,
    system: &[SystemDir],
    etc: &[String],
) -> Vec<OsString> {
    let home = mounts.home;
    let mut a: Vec<OsString> = Vec::new();
    let mut push = |parts: &[&std::ffi::OsStr]| a.extend(parts.iter().map(|p| p.to_os_string()));
    push(&[
        "--unshare-all".as_ref(),
        "--die-with-parent".as_ref(),
        "--new-session".as_ref(),
        "--cap-drop".as_ref(),
        "ALL".as_ref(),
        "--hostname".as_ref(),
        HOSTNAME.as_ref(),
    ]);
    for d in system {
        match d {
            SystemDir::Dir(p) => push(&["--ro-bind".as_ref(), p.as_os_str(), p.as_os_str()]),
            SystemDir::Link { path, target } => {
                push(&["--symlink".as_ref(), target.as_os_str(), path.as_os_str()]);
            }
        }
    }
    push(&["--dir".as_ref(), "/etc".as_ref()]);
    for name in etc {
        let p = Path::new("/etc").join(name);
        push(&["--ro-bind-try".as_ref(), p.as_os_str(), p.as_os_str()]);
    }
    for m in ETC_MASKED {
        let under = etc
            .iter()
            .any(|n| Path::new(m).starts_with(Path::new("/etc").join(n)));
        if under && Path::new(m).exists() {
            push(&["--tmpfs".as_ref(), m.as_ref()]);
        }
    }
    push(&[
        "--symlink".as_ref(),
        "../proc/self/mounts".as_ref(),
        "/etc/mtab".as_ref(),
        "--proc".as_ref(),
        "/proc".as_ref(),
    ]);
    // The kernel's global knobs in the fresh /proc, read-only: run by root, the sandbox's
    // user is root's own uid (no capabilities, but file permissions still let it write
    // `/proc/sys/kernel/core_pattern` or `/proc/sysrq-trigger`).
    for knob in PROC_READ_ONLY {
        push(&["--ro-bind-try".as_ref(), knob.as_ref(), knob.as_ref()]);
    }
    push(&["--dev".as_ref(), "/dev".as_ref()]);
    // `/tmp` and `$HOME` are RAM: each holds at most `[prove] memory` (0: unbounded, as the
    // limit is).
    let size = spec.memory_bytes.to_string();
    for t in [Path::new("/tmp"), home] {
        if spec.memory_bytes > 0 {
            push(&["--size".as_ref(), size.as_ref()]);
        }
        push(&["--tmpfs".as_ref(), t.as_os_str()]);
    }
    for p in &spec.bind_ro {
        push(&["--ro-bind".as_ref(), p.as_os_str(), p.as_os_str()]);
    }
    // The scratch tree on disk is only read, to be copied into the worktree's tmpfs by the
    // prologue: whatever the command writes, in number or in bytes, is RAM of at most the
    // tree plus `[prove] memory`, never the host's disk.
    let w = spec.workdir.as_os_str();
    push(&["--ro-bind".as_ref(), w, mounts.stage.as_os_str()]);
    let wsize = workdir_size(spec.memory_bytes, mounts.tree_bytes).to_string();
    if spec.memory_bytes > 0 {
        push(&["--size".as_ref(), wsize.as_ref()]);
    }
    push(&["--tmpfs".as_ref(), w, "--chdir".as_ref(), w]);
    // The sandbox's own root (where bwrap made `/etc` and the mount points' parents) goes
    // read-only last: what stays writable is the worktree, `/tmp` and `$HOME`, all tmpfs.
    push(&["--remount-ro".as_ref(), "/".as_ref()]);
    a
}

/// The command's environment, from arev's (`from`): `PATH`, `LANG`, `LC_*`, `TERM=dumb`,
/// `HOME`, and the variables `allow` names. Nothing else — no token, no proxy, no `AREV_*`,
/// no `SSH_AUTH_SOCK`.
pub(super) fn environment(
    allow: &[String],
    home: Option<&Path>,
    from: &[(OsString, OsString)],
) -> Vec<(OsString, OsString)> {
    let get = |name: &str| from.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    let mut env: Vec<(OsString, OsString)> = vec![(
        "PATH".into(),
        get("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into()),
    )];
    let locale = from
        .iter()
        .filter_map(|(k, _)| k.to_str())
        .filter(|k| *k == "LANG" || k.starts_with("LC_"));
    for name in locale.chain(allow.iter().map(String::as_str)) {
        if matches!(name, "PATH" | "HOME" | "TERM") || env.iter().any(|(k, _)| k == name) {
            continue;
        }
        if let Some(v) = get(name) {
            env.push((name.into(), v));
        }
    }
    env.push(("TERM".into(), "dumb".into()));
    if let Some(h) = home {
        env.push(("HOME".into(), h.as_os_str().to_os_string()));
    }
    env
}

/// How long the preflight's trial sandbox may take.
const PREFLIGHT_TIMEOUT: Duration = Duration::from_secs(20);

/// Checks that reproducers can run in `mode` here: for `bwrap`, that bwrap is installed
/// and starts a trial sandbox exactly as a run does (namespaces, binds, memory limit); the
/// error names the fix. Mode `none` needs nothing.
pub fn preflight(mode: SandboxMode) -> Result<(), ProveError> {
    if mode == SandboxMode::None {
        return Ok(());
    }
    let bwrap = find_bwrap().ok_or(ProveError::BwrapMissing)?;
    let dir = tempfile::tempdir().map_err(ProveError::Spawn)?;
    let spec = SandboxSpec {
        workdir: dir.path().to_path_buf(),
        argv: vec!["true".into()],
        timeout: PREFLIGHT_TIMEOUT,
        memory_bytes: 256 << 20,
        env_allow: vec![],
        bind_ro: vec![],
        mode,
    };
    let launch = launch(&spec)?;
    let (ok, output) = run_briefly(&launch, dir.path()).map_err(ProveError::Spawn)?;
    if ok && output.starts_with(READY) {
        return Ok(());
    }
    let detail = output
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && *l != READY)
        .collect::<Vec<_>>()
        .join("; ");
    let detail = if detail.is_empty() {
        "the trial sandbox exited without running its command".to_string()
    } else {
        detail.chars().take(400).collect()
    };
    let lower = detail.to_lowercase();
    if [
        "namespace",
        "uid map",
        "uid_map",
        "operation not permitted",
        "permission denied",
    ]
    .iter()
    .any(|s| lower.contains(s))
    {
        Err(ProveError::NoNamespaces { bwrap, detail })
    } else {
        Err(ProveError::SandboxBroken { bwrap, detail })
    }
}

/// Runs `launch` to its end (killed after [`PREFLIGHT_TIMEOUT`]); whether it exited 0, and
/// what it printed (stdout then stderr).
fn run_briefly(launch: &Launch, cwd: &Path) -> std::io::Result<(bool, String)> {
    let mut child = std::process::Command::new(&launch.program)
        .args(&launch.args)
        .current_dir(cwd)
        .env_clear()
        .envs(launch.env.iter().map(|(k, v)| (k, v)))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()?;
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait()? {
            break Some(s);
        }
        if start.elapsed() > PREFLIGHT_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let mut out = String::new();
    if let Some(mut o) = child.stdout.take() {
        let _ = o.read_to_string(&mut out);
    }
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_string(&mut out);
    }
    if status.is_none() {
        out.push_str("\nthe trial sandbox did not finish within 20 s");
    }
    Ok((status.is_some_and(|s| s.success()), out))
}

#[cfg(test)]
#[path = "sandbox_tests.rs"]
mod tests;
