//! Spawning one agent: own process group, stdin prompt, capped concurrent pipe reads,
//! timeout and cancellation with SIGTERM → grace → SIGKILL to the whole group.

use super::{
    interpret_exit, invocation, parse_events, AgentOutcome, AgentSpec, DispatchError,
    DispatchRequest, EventFormat, Invocation, ProcessEnd,
};
use crate::store::{write_atomic, write_json_atomic};
use nix::errno::Errno;
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, Command};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tracing::debug;

/// After the agent is reaped, how long to wait for its pipes to reach EOF. A grandchild that
/// escaped the process group may hold them open forever; we stop reading after this.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(2);
/// Upper bound on waiting for the reaping of a SIGKILLed process.
const REAP_AFTER_KILL: Duration = Duration::from_secs(5);
/// Spawn retries on ETXTBSY (the executable is still open for writing somewhere).
const SPAWN_ATTEMPTS: u32 = 5;

/// Environment variables passed to every agent by exact name.
const ENV_EXACT: &[&str] = &[
    "HOME",
    "PATH",
    "USER",
    "LOGNAME",
    "SHELL",
    "TERM",
    "LANG",
    "TZ",
    "TMPDIR",
    "NODE_EXTRA_CA_CERTS",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
];
/// Environment variables passed to every agent by prefix.
const ENV_PREFIXES: &[&str] = &["LC_", "XDG_", "AREV_", "DISABLE_"];
/// Passed in any letter case.
const ENV_ANY_CASE: &[&str] = &["HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY"];
/// Provider prefixes, by the event format (= the vendor) of the agent: an agent only gets
/// its own vendor's credentials and settings.
const CLAUDE_PREFIXES: &[&str] = &[
    "ANTHROPIC_",
    "CLAUDE_",
    "AWS_",
    "GOOGLE_",
    "CLOUD_ML_",
    "VERTEX_",
];
const CODEX_PREFIXES: &[&str] = &["OPENAI_", "CODEX_", "AZURE_OPENAI_"];
const GEMINI_PREFIXES: &[&str] = &["GEMINI_", "GOOGLE_", "CLOUD_ML_", "VERTEX_"];

fn provider_prefixes(format: EventFormat) -> &'static [&'static str] {
    match format {
        EventFormat::Claude => CLAUDE_PREFIXES,
        EventFormat::Codex => CODEX_PREFIXES,
        EventFormat::Gemini => GEMINI_PREFIXES,
    }
}

/// Whether an environment variable of arev's may be passed to a Claude agent (see
/// [`env_allowed_for`]).
#[cfg(test)]
pub(crate) fn env_allowed(name: &str) -> bool {
    env_allowed_for(EventFormat::Claude, &[], name)
}

/// Whether an environment variable of arev's may be passed to an agent of `format` (an
/// allowlist: secrets unrelated to the agent's own provider never reach it). `pass_env`
/// names further variables by exact name (the agent's `pass_env` config key).
pub(crate) fn env_allowed_for(format: EventFormat, pass_env: &[String], name: &str) -> bool {
    ENV_EXACT.contains(&name)
        || ENV_PREFIXES.iter().any(|p| name.starts_with(p))
        || ENV_ANY_CASE.iter().any(|v| name.eq_ignore_ascii_case(v))
        || provider_prefixes(format)
            .iter()
            .any(|p| name.starts_with(p))
        || pass_env.iter().any(|v| v == name)
}

fn is_executable_file(p: &Path) -> bool {
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Find the agent executable: an explicit path (must exist and be executable) or a name on PATH.
pub fn resolve_binary(name_or_path: &str) -> Result<PathBuf, DispatchError> {
    if name_or_path.contains('/') {
        let p = PathBuf::from(name_or_path);
        if !p.exists() {
            return Err(DispatchError::BinaryNotFound(name_or_path.to_string()));
        }
        if !is_executable_file(&p) {
            return Err(DispatchError::NotExecutable(p));
        }
        return Ok(std::path::absolute(&p).unwrap_or(p));
    }
    if !name_or_path.is_empty() {
        if let Some(path) = std::env::var_os("PATH") {
            for dir in std::env::split_paths(&path) {
                // An empty PATH entry means the current directory: never search it implicitly.
                if dir.as_os_str().is_empty() {
                    continue;
                }
                let cand = dir.join(name_or_path);
                if is_executable_file(&cand) {
                    return Ok(std::path::absolute(&cand).unwrap_or(cand));
                }
            }
        }
    }
    Err(DispatchError::BinaryNotFound(name_or_path.to_string()))
}

/// Run one agent to completion (or timeout/cancel). Writes prompt.md, events.jsonl,
/// stderr.log and outcome.json into `req.out_dir` atomically. Never panics on agent
/// misbehaviour: every failure is described in the returned outcome.
///
/// `stdout_bytes` counts every byte the agent printed (also those beyond the cap);
/// events.jsonl holds at most `output_cap` bytes.
pub async fn dispatch(
    agent: &AgentSpec,
    req: &DispatchRequest,
    cancel: &CancellationToken,
) -> Result<AgentOutcome, DispatchError> {
    let parent_env: Vec<(OsString, OsString)> = std::env::vars_os().collect();
    dispatch_with_env(agent, req, cancel, parent_env).await
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> DispatchError + '_ {
    move |source| DispatchError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Bytes captured from one pipe, shared with its reader task so that a drain timeout can
/// still use what was read.
#[derive(Default)]
struct Capture {
    kept: Vec<u8>,
    total: u64,
    truncated: bool,
}

type SharedCapture = Arc<Mutex<Capture>>;

fn spawn_reader<R>(mut pipe: R, cap: u64) -> (SharedCapture, JoinHandle<()>)
where
    R: AsyncRead + Unpin + Send + 'static,
{
    let shared: SharedCapture = Arc::default();
    let sink = Arc::clone(&shared);
    let handle = tokio::spawn(async move {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = match pipe.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            let mut c = sink.lock().unwrap_or_else(|e| e.into_inner());
            let room = cap.saturating_sub(c.kept.len() as u64);
            let take = (n as u64).min(room) as usize;
            c.kept.extend_from_slice(&buf[..take]);
            if take < n {
                c.truncated = true;
            }
            c.total += n as u64;
        }
    });
    (shared, handle)
}

fn take_capture(c: &SharedCapture) -> Capture {
    std::mem::take(&mut *c.lock().unwrap_or_else(|e| e.into_inner()))
}

fn signal_group(pgid: Option<i32>, sig: Signal) {
    let Some(pgid) = pgid else { return };
    match killpg(Pid::from_raw(pgid), sig) {
        Ok(()) | Err(Errno::ESRCH) => {}
        Err(e) => debug!(pgid, ?sig, error = %e, "killpg failed"),
    }
}

/// SIGKILLs a process group when dropped (best effort).
struct GroupGuard(Option<i32>);

impl Drop for GroupGuard {
    fn drop(&mut self) {
        signal_group(self.0, Signal::SIGKILL);
    }
}

fn status_to_end(s: ExitStatus) -> ProcessEnd {
    match (s.code(), s.signal()) {
        (Some(code), _) => ProcessEnd::Exited { code },
        (None, Some(signal)) => ProcessEnd::Signaled { signal },
        (None, None) => ProcessEnd::Exited { code: -1 },
    }
}

/// SIGTERM the group, wait `grace`, then SIGKILL it. Returns whether SIGKILL was needed.
async fn terminate_group(child: &mut Child, pgid: Option<i32>, grace: Duration) -> bool {
    signal_group(pgid, Signal::SIGTERM);
    if let Ok(Ok(_)) = tokio::time::timeout(grace, child.wait()).await {
        return false;
    }
    debug!(?pgid, "agent survived SIGTERM grace; sending SIGKILL");
    signal_group(pgid, Signal::SIGKILL);
    if tokio::time::timeout(REAP_AFTER_KILL, child.wait())
        .await
        .is_err()
    {
        // Not in our group any more (cannot happen for the leader), or stuck in the kernel.
        let _ = child.start_kill();
    }
    true
}

async fn spawn_child(
    agent: &AgentSpec,
    inv: &Invocation,
    req: &DispatchRequest,
    env: &[(OsString, OsString)],
) -> std::io::Result<Child> {
    let mut attempt = 0;
    loop {
        attempt += 1;
        let mut cmd = Command::new(&agent.binary);
        let stdin = if inv.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        };
        cmd.args(&inv.args)
            .current_dir(&req.cwd)
            .process_group(0)
            .kill_on_drop(true)
            .env_clear()
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(stdin)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        match cmd.spawn() {
            Err(e)
                if e.raw_os_error() == Some(Errno::ETXTBSY as i32) && attempt < SPAWN_ATTEMPTS =>
            {
                tokio::time::sleep(Duration::from_millis(20 * u64::from(attempt))).await;
            }
            r => return r,
        }
    }
}

pub(crate) async fn dispatch_with_env(
    agent: &AgentSpec,
    req: &DispatchRequest,
    cancel: &CancellationToken,
    parent_env: Vec<(OsString, OsString)>,
) -> Result<AgentOutcome, DispatchError> {
    let inv = invocation(agent, req);
    // Only allowlisted variables; the backend's own (`inv.env`) win over inherited ones.
    let env: Vec<(OsString, OsString)> = parent_env
        .into_iter()
        .filter(|(k, _)| {
            k.to_str().is_some_and(|k| {
                env_allowed_for(agent.format, &agent.pass_env, k)
                    && !inv.env.iter().any(|(n, _)| n == k)
            })
        })
        .chain(inv.env.iter().map(|(k, v)| (k.into(), v.into())))
        .collect();
    let out = &req.out_dir;
    std::fs::create_dir_all(out).map_err(io_err(out))?;
    let prompt_path = out.join("prompt.md");
    write_atomic(&prompt_path, req.prompt.as_bytes()).map_err(io_err(&prompt_path))?;

    let model = agent.models.get(req.tier).to_string();

    let started = Instant::now();
    let mut outcome = AgentOutcome {
        label: req.label.clone(),
        agent: agent.name.clone(),
        role: req.role,
        tier: req.tier,
        model,
        end: ProcessEnd::Exited { code: -1 },
        tool_uses: Vec::new(),
        result: None,
        malformed_lines: 0,
        stdout_bytes: 0,
        stdout_truncated: false,
        stderr_truncated: false,
        duration_ms: 0,
    };

    let mut child = match spawn_child(agent, &inv, req, &env).await {
        Ok(c) => c,
        Err(e) => {
            let message = format!("cannot start {}: {e}", agent.binary.display());
            debug!(label = %req.label, %message, "agent spawn failed");
            outcome.end = ProcessEnd::SpawnFailed { message };
            write_outputs(out, &[], &[], &mut outcome, started)?;
            return Ok(outcome);
        }
    };
    let pgid = child.id().and_then(|id| i32::try_from(id).ok());
    // If this future is dropped mid-run, `kill_on_drop` only reaches the leader: the guard
    // SIGKILLs the whole group.
    let _group_guard = GroupGuard(pgid);
    debug!(label = %req.label, ?pgid, binary = %agent.binary.display(), "agent spawned");

    // stdin: the whole prompt, then EOF (or /dev/null when the prompt is an argument). An
    // agent that exits early gives EPIPE: ignored.
    let stdin_task = child.stdin.take().map(|mut stdin| {
        let prompt = inv.stdin.clone().unwrap_or_default();
        tokio::spawn(async move {
            let _ = stdin.write_all(&prompt).await;
            let _ = stdin.shutdown().await;
        })
    });
    let readers = [
        child.stdout.take().map(|p| spawn_reader(p, req.output_cap)),
        child.stderr.take().map(|p| spawn_reader(p, req.output_cap)),
    ];

    enum Stop {
        Exited(std::io::Result<ExitStatus>),
        TimedOut,
        Cancelled,
    }
    let stop = tokio::select! {
        s = child.wait() => Stop::Exited(s),
        () = tokio::time::sleep(req.timeout) => Stop::TimedOut,
        () = cancel.cancelled() => Stop::Cancelled,
    };
    outcome.end = match stop {
        Stop::Exited(Ok(s)) => status_to_end(s),
        Stop::Exited(Err(e)) => {
            // Practically impossible; the agent's fate is unknown, so it did not run usably.
            debug!(label = %req.label, error = %e, "waiting for agent failed");
            terminate_group(&mut child, pgid, req.grace).await;
            ProcessEnd::SpawnFailed {
                message: format!("lost track of the agent process: {e}"),
            }
        }
        Stop::TimedOut => {
            debug!(label = %req.label, "agent timed out; terminating its group");
            ProcessEnd::TimedOut {
                killed: terminate_group(&mut child, pgid, req.grace).await,
            }
        }
        Stop::Cancelled => {
            debug!(label = %req.label, "agent cancelled; terminating its group");
            ProcessEnd::Cancelled {
                killed: terminate_group(&mut child, pgid, req.grace).await,
            }
        }
    };
    // No grandchild of the group may survive holding our pipes (best effort, ESRCH ignored).
    signal_group(pgid, Signal::SIGKILL);
    if let Some(t) = stdin_task {
        t.abort();
    }

    // Drain the pipes, bounded: an escaped grandchild could keep them open forever.
    let drain_deadline = tokio::time::Instant::now() + DRAIN_TIMEOUT;
    let mut caps: Vec<Capture> = Vec::with_capacity(2);
    for r in readers {
        let Some((shared, mut handle)) = r else {
            caps.push(Capture::default());
            continue;
        };
        if tokio::time::timeout_at(drain_deadline, &mut handle)
            .await
            .is_err()
        {
            debug!(label = %req.label, "agent pipe still open after drain timeout; abandoning it");
            handle.abort();
        }
        caps.push(take_capture(&shared));
    }
    let stderr = caps.pop().unwrap_or_default();
    let stdout = caps.pop().unwrap_or_default();

    let (tool_uses, mut result, malformed) = parse_events(agent.format, &stdout.kept);
    interpret_exit(agent.format, &outcome.end, &mut result, &stderr.kept);
    outcome.tool_uses = tool_uses;
    outcome.result = result;
    outcome.malformed_lines = malformed;
    outcome.stdout_bytes = stdout.total;
    outcome.stdout_truncated = stdout.truncated;
    outcome.stderr_truncated = stderr.truncated;
    write_outputs(out, &stdout.kept, &stderr.kept, &mut outcome, started)?;
    debug!(label = %req.label, end = ?outcome.end, duration_ms = outcome.duration_ms, "agent done");
    Ok(outcome)
}

fn write_outputs(
    out: &Path,
    stdout: &[u8],
    stderr: &[u8],
    outcome: &mut AgentOutcome,
    started: Instant,
) -> Result<(), DispatchError> {
    let events = out.join("events.jsonl");
    write_atomic(&events, stdout).map_err(io_err(&events))?;
    let err_log = out.join("stderr.log");
    write_atomic(&err_log, stderr).map_err(io_err(&err_log))?;
    outcome.duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let oc = out.join("outcome.json");
    write_json_atomic(&oc, outcome).map_err(io_err(&oc))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dispatch::{claude_args, BackendKind, TierModels};
    use crate::findings::{Role, Tier};

    const RESULT: &str = r#"{"type":"result","subtype":"success","is_error":false,"result":"{\"findings\":[]}","num_turns":2,"session_id":"s","total_cost_usd":0.01,"usage":{"input_tokens":100,"output_tokens":50},"permission_denials":[]}"#;

    fn script(dir: &Path, body: &str) -> PathBuf {
        let p = dir.join("agent.sh");
        std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    }

    fn spec(binary: PathBuf) -> AgentSpec {
        AgentSpec {
            name: "claude".into(),
            backend: BackendKind::Claude,
            format: EventFormat::Claude,
            binary,
            extra_args: Vec::new(),
            models: TierModels::default(),
            max_turns: 8,
            timeout: None,
            pass_env: Vec::new(),
        }
    }

    fn request(dir: &Path, timeout_ms: u64, grace_ms: u64, cap: u64) -> DispatchRequest {
        DispatchRequest {
            role: Role::Enthusiast,
            label: "enthusiast-p1".into(),
            prompt: "[AR Round 1 — LIGHTWEIGHT] Enthusiast (pass 1/1)\n<target path=\"/x\" kind=\"file\" sha256=\"ab\" />\n".into(),
            system_prompt: "You are an Enthusiast.".into(),
            tier: Tier::Opus,
            cwd: dir.to_path_buf(),
            read_dirs: vec![dir.to_path_buf()],
            out_dir: dir.join("out"),
            timeout: Duration::from_millis(timeout_ms),
            grace: Duration::from_millis(grace_ms),
            output_cap: cap,
        }
    }

    fn base_env() -> Vec<(OsString, OsString)> {
        std::env::vars_os().filter(|(k, _)| k == "PATH").collect()
    }

    async fn run(agent: &AgentSpec, req: &DispatchRequest) -> AgentOutcome {
        dispatch_with_env(agent, req, &CancellationToken::new(), base_env())
            .await
            .unwrap()
    }

    /// Non-zombie processes whose process group is `pgid` (from /proc).
    fn live_group_members(pgid: i32) -> Vec<i32> {
        let mut live = Vec::new();
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
                continue;
            };
            let Some(rest) = stat.rfind(')').map(|i| &stat[i + 2..]) else {
                continue;
            };
            let fields: Vec<&str> = rest.split_whitespace().collect();
            // state ppid pgrp ...
            if fields.len() > 2 && fields[0] != "Z" && fields[2] == pgid.to_string() {
                live.push(pid);
            }
        }
        live
    }

    fn read_pid(path: &Path) -> i32 {
        for _ in 0..100 {
            if let Some(pid) = std::fs::read_to_string(path)
                .ok()
                .and_then(|s| s.trim().parse().ok())
            {
                return pid;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("no pid in {}", path.display());
    }

    fn assert_group_gone(pgid: i32) {
        for _ in 0..100 {
            if live_group_members(pgid).is_empty() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!(
            "processes of group {pgid} survived: {:?}",
            live_group_members(pgid)
        );
    }

    #[tokio::test]
    async fn normal_run_is_parsed_and_recorded() {
        let dir = tempfile::tempdir().unwrap();
        let init = r#"{"type":"system","subtype":"init","session_id":"s","model":"opus","tools":["Read"]}"#;
        let read = r#"{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"toolu_1","name":"Read","input":{"file_path":"/x"}}]},"session_id":"s"}"#;
        let body = format!(
            "cat > stdin.txt\nprintf '%s\\n' \"$@\" > argv.txt\nprintf '%s\\n' '{init}' '{read}' 'not json' '{RESULT}'\necho oops >&2\nexit 0"
        );
        let agent = spec(script(dir.path(), &body));
        let mut req = request(dir.path(), 10_000, 500, 1 << 20);
        // Larger than a pipe buffer: stdin must be written concurrently with the reads.
        req.prompt.push_str(&"x".repeat(300_000));
        let o = run(&agent, &req).await;
        assert_eq!(o.end, ProcessEnd::Exited { code: 0 });
        assert_eq!(o.model, "opus");
        assert_eq!(o.tool_uses.len(), 1);
        assert_eq!(o.tool_uses[0].input["file_path"], "/x");
        assert_eq!(o.answer(), Some("{\"findings\":[]}"));
        assert_eq!(o.malformed_lines, 1);
        assert!(!o.stdout_truncated && !o.stderr_truncated);

        let out = &req.out_dir;
        let events = std::fs::read(out.join("events.jsonl")).unwrap();
        assert_eq!(o.stdout_bytes, events.len() as u64);
        assert!(events.ends_with(format!("{RESULT}\n").as_bytes()));
        assert_eq!(
            std::fs::read_to_string(out.join("stderr.log")).unwrap(),
            "oops\n"
        );
        assert_eq!(
            std::fs::read_to_string(out.join("prompt.md")).unwrap(),
            req.prompt
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("stdin.txt")).unwrap(),
            req.prompt
        );
        let argv = std::fs::read_to_string(dir.path().join("argv.txt")).unwrap();
        let argv: Vec<&str> = argv.lines().collect();
        assert_eq!(argv, claude_args(&agent, &req));
        let saved: AgentOutcome =
            serde_json::from_slice(&std::fs::read(out.join("outcome.json")).unwrap()).unwrap();
        assert_eq!(saved, o);
        let names: Vec<String> = std::fs::read_dir(out)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(".tmp"))
            .collect();
        assert!(names.is_empty(), "temp files left: {names:?}");
    }

    #[tokio::test]
    async fn exit_codes_and_signals_are_reported() {
        let dir = tempfile::tempdir().unwrap();
        let agent = spec(script(dir.path(), "echo '{\"type\":\"system\"}'\nexit 3"));
        let o = run(&agent, &request(dir.path(), 10_000, 200, 4096)).await;
        assert_eq!(o.end, ProcessEnd::Exited { code: 3 });
        assert!(o.result.is_none());
        assert_eq!(o.answer(), None);

        let dir = tempfile::tempdir().unwrap();
        let agent = spec(script(dir.path(), "kill -USR1 $$\nsleep 5"));
        let o = run(&agent, &request(dir.path(), 10_000, 200, 4096)).await;
        assert_eq!(
            o.end,
            ProcessEnd::Signaled {
                signal: Signal::SIGUSR1 as i32
            }
        );
    }

    #[tokio::test]
    async fn timeout_kills_a_sigterm_ignoring_group() {
        let dir = tempfile::tempdir().unwrap();
        let body = "trap '' TERM\necho $$ > pgid\nsleep 100 &\nwhile :; do sleep 1; done";
        let agent = spec(script(dir.path(), body));
        let req = request(dir.path(), 300, 200, 4096);
        let t0 = Instant::now();
        let o = run(&agent, &req).await;
        let elapsed = t0.elapsed();
        assert_eq!(o.end, ProcessEnd::TimedOut { killed: true });
        assert!(elapsed >= Duration::from_millis(500), "{elapsed:?}");
        assert!(elapsed < Duration::from_millis(1900), "{elapsed:?}");
        assert_group_gone(read_pid(&dir.path().join("pgid")));
        assert!(req.out_dir.join("outcome.json").exists());
    }

    #[tokio::test]
    async fn timeout_with_a_cooperative_agent_needs_no_sigkill() {
        let dir = tempfile::tempdir().unwrap();
        let agent = spec(script(dir.path(), "echo $$ > pgid\nexec sleep 100"));
        let o = run(&agent, &request(dir.path(), 300, 2_000, 4096)).await;
        assert_eq!(o.end, ProcessEnd::TimedOut { killed: false });
        assert!(o.duration_ms < 1_500, "{}", o.duration_ms);
        assert_group_gone(read_pid(&dir.path().join("pgid")));
    }

    #[tokio::test]
    async fn grandchild_in_the_group_does_not_hang_dispatch() {
        let dir = tempfile::tempdir().unwrap();
        let body = format!("echo $$ > pgid\nsleep 100 &\nprintf '%s\\n' '{RESULT}'\nexit 0");
        let agent = spec(script(dir.path(), &body));
        let t0 = Instant::now();
        let o = run(&agent, &request(dir.path(), 10_000, 200, 4096)).await;
        assert!(t0.elapsed() < DRAIN_TIMEOUT, "{:?}", t0.elapsed());
        assert_eq!(o.end, ProcessEnd::Exited { code: 0 });
        assert!(o.answer().is_some());
        assert_group_gone(read_pid(&dir.path().join("pgid")));
    }

    #[tokio::test]
    async fn grandchild_that_escaped_the_group_does_not_hang_dispatch() {
        let dir = tempfile::tempdir().unwrap();
        // The grandchild records its pid only once it is in its own session/group.
        let body = format!(
            "setsid sh -c 'echo $$ > gc.tmp && mv gc.tmp gc && exec sleep 30' &\n\
             while [ ! -s gc ]; do sleep 0.01; done\nprintf '%s\\n' '{RESULT}'\nexit 0"
        );
        let agent = spec(script(dir.path(), &body));
        let t0 = Instant::now();
        let o = run(&agent, &request(dir.path(), 10_000, 200, 4096)).await;
        let elapsed = t0.elapsed();
        let gc = read_pid(&dir.path().join("gc"));
        let gc_alive = live_group_members(gc) == [gc];
        let _ = nix::sys::signal::kill(Pid::from_raw(gc), Signal::SIGKILL);
        assert!(
            gc_alive,
            "the escaped grandchild should outlive the agent's group"
        );
        assert!(elapsed >= DRAIN_TIMEOUT, "{elapsed:?}");
        assert!(
            elapsed < DRAIN_TIMEOUT + Duration::from_secs(2),
            "{elapsed:?}"
        );
        assert_eq!(o.end, ProcessEnd::Exited { code: 0 });
        assert!(
            o.answer().is_some(),
            "output before the drain timeout is kept"
        );
    }

    #[tokio::test]
    async fn cancellation_terminates_the_group() {
        let dir = tempfile::tempdir().unwrap();
        let agent = spec(script(
            dir.path(),
            "echo $$ > pgid\nsleep 100 &\nexec sleep 100",
        ));
        let req = request(dir.path(), 10_000, 500, 4096);
        let cancel = CancellationToken::new();
        let c2 = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(150)).await;
            c2.cancel();
        });
        let t0 = Instant::now();
        let o = dispatch_with_env(&agent, &req, &cancel, base_env())
            .await
            .unwrap();
        assert_eq!(o.end, ProcessEnd::Cancelled { killed: false });
        assert!(t0.elapsed() < Duration::from_secs(2), "{:?}", t0.elapsed());
        assert_group_gone(read_pid(&dir.path().join("pgid")));
    }

    #[tokio::test]
    async fn dropping_the_dispatch_future_kills_the_group() {
        let dir = tempfile::tempdir().unwrap();
        let agent = spec(script(
            dir.path(),
            "echo $$ > pgid\nsleep 100 &\nexec sleep 100",
        ));
        let req = request(dir.path(), 10_000, 500, 4096);
        let cancel = CancellationToken::new();
        let fut = dispatch_with_env(&agent, &req, &cancel, base_env());
        let r = tokio::time::timeout(Duration::from_millis(300), fut).await;
        assert!(r.is_err(), "the agent should still be running");
        assert_group_gone(read_pid(&dir.path().join("pgid")));
    }

    #[tokio::test]
    async fn output_caps_truncate_and_flag() {
        let dir = tempfile::tempdir().unwrap();
        let body = "head -c 100000 /dev/zero | tr '\\000' a\necho\nhead -c 5000 /dev/zero | tr '\\000' e >&2\nexit 0";
        let agent = spec(script(dir.path(), body));
        let req = request(dir.path(), 10_000, 200, 1000);
        let o = run(&agent, &req).await;
        assert_eq!(o.end, ProcessEnd::Exited { code: 0 });
        assert!(o.stdout_truncated);
        assert!(o.stderr_truncated);
        assert_eq!(o.stdout_bytes, 100_001);
        assert_eq!(o.malformed_lines, 1);
        assert_eq!(
            std::fs::metadata(req.out_dir.join("events.jsonl"))
                .unwrap()
                .len(),
            1000
        );
        assert_eq!(
            std::fs::metadata(req.out_dir.join("stderr.log"))
                .unwrap()
                .len(),
            1000
        );
    }

    #[tokio::test]
    async fn missing_binary_is_a_spawn_failure_outcome() {
        let dir = tempfile::tempdir().unwrap();
        let agent = spec(dir.path().join("no-such-claude"));
        let req = request(dir.path(), 1_000, 200, 4096);
        let o = run(&agent, &req).await;
        assert!(
            matches!(o.end, ProcessEnd::SpawnFailed { .. }),
            "{:?}",
            o.end
        );
        assert_eq!(o.answer(), None);
        assert!(req.out_dir.join("prompt.md").exists());
        assert!(req.out_dir.join("outcome.json").exists());
    }

    #[tokio::test]
    async fn unwritable_out_dir_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("file"), "x").unwrap();
        let agent = spec(PathBuf::from("/bin/true"));
        let mut req = request(dir.path(), 1_000, 200, 4096);
        req.out_dir = dir.path().join("file").join("out");
        let err = run_err(&agent, &req).await;
        assert!(matches!(err, DispatchError::Io { .. }), "{err:?}");
    }

    async fn run_err(agent: &AgentSpec, req: &DispatchRequest) -> DispatchError {
        dispatch_with_env(agent, req, &CancellationToken::new(), base_env())
            .await
            .unwrap_err()
    }

    #[tokio::test]
    async fn only_allowlisted_environment_reaches_the_agent() {
        let dir = tempfile::tempdir().unwrap();
        let agent = spec(script(dir.path(), "env > env.txt"));
        let req = request(dir.path(), 10_000, 200, 4096);
        let mut env = base_env();
        for (k, v) in [
            ("SECRET_X", "s3cr3t"),
            ("OPENAI_API_KEY", "sk-no"),
            ("GITHUB_TOKEN", "ghp_no"),
            ("ANTHROPIC_API_KEY", "sk-ant-fake-000"),
            ("CLAUDE_CODE_MAX_RETRIES", "0"),
            ("https_proxy", "http://proxy:3128"),
            ("LC_ALL", "C.UTF-8"),
            ("AREV_FAKE_LOG", "/tmp/log"),
            ("HOME", "/home/test"),
        ] {
            env.push((k.into(), v.into()));
        }
        let o = dispatch_with_env(&agent, &req, &CancellationToken::new(), env)
            .await
            .unwrap();
        assert_eq!(o.end, ProcessEnd::Exited { code: 0 });
        let seen = std::fs::read_to_string(dir.path().join("env.txt")).unwrap();
        for passed in [
            "ANTHROPIC_API_KEY=sk-ant-fake-000",
            "CLAUDE_CODE_MAX_RETRIES=0",
            "https_proxy=http://proxy:3128",
            "LC_ALL=C.UTF-8",
            "AREV_FAKE_LOG=/tmp/log",
            "HOME=/home/test",
        ] {
            assert!(
                seen.lines().any(|l| l == passed),
                "{passed} missing:\n{seen}"
            );
        }
        for blocked in ["SECRET_X", "OPENAI_API_KEY", "GITHUB_TOKEN"] {
            assert!(!seen.contains(blocked), "{blocked} leaked:\n{seen}");
        }
    }

    fn codex_spec(binary: PathBuf) -> AgentSpec {
        AgentSpec {
            name: "codex".into(),
            backend: crate::dispatch::BackendKind::Codex,
            format: EventFormat::Codex,
            pass_env: vec!["MY_PROVIDER_KEY".into()],
            ..spec(binary)
        }
    }

    #[tokio::test]
    async fn codex_gets_the_prompt_as_an_argument_and_stdin_dev_null() {
        let dir = tempfile::tempdir().unwrap();
        let cmd = r#"{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"cat /x","exit_code":0,"status":"completed"}}"#;
        let msg = r#"{"type":"item.completed","item":{"id":"item_2","type":"agent_message","text":"{\"findings\":[]}"}}"#;
        let done = r#"{"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":0,"output_tokens":5}}"#;
        let body = format!(
            "cat > stdin.txt\nprintf '%s\\n' \"$@\" > argv.txt\nenv > env.txt\nprintf '%s\\n' '{cmd}' '{msg}' '{done}'\nexit 0"
        );
        let agent = codex_spec(script(dir.path(), &body));
        let req = request(dir.path(), 10_000, 200, 1 << 20);
        let mut env = base_env();
        for (k, v) in [
            ("OPENAI_API_KEY", "sk-openai"),
            ("CODEX_HOME", "/c"),
            ("MY_PROVIDER_KEY", "k"),
            ("ANTHROPIC_API_KEY", "sk-ant"),
            ("GEMINI_API_KEY", "g"),
        ] {
            env.push((k.into(), v.into()));
        }
        let o = dispatch_with_env(&agent, &req, &CancellationToken::new(), env)
            .await
            .unwrap();
        assert_eq!(o.end, ProcessEnd::Exited { code: 0 });
        assert_eq!(o.agent, "codex");
        assert_eq!(o.answer(), Some("{\"findings\":[]}"));
        assert_eq!(o.tool_uses[0].access.read, ["/x"]);
        assert_eq!(
            std::fs::read_to_string(dir.path().join("stdin.txt")).unwrap(),
            "",
            "stdin is /dev/null"
        );
        let argv = std::fs::read_to_string(dir.path().join("argv.txt")).unwrap();
        assert!(argv.ends_with(&format!("--\n{}\n", req.prompt)), "{argv}");
        let seen = std::fs::read_to_string(dir.path().join("env.txt")).unwrap();
        for passed in [
            "OPENAI_API_KEY=sk-openai",
            "CODEX_HOME=/c",
            "MY_PROVIDER_KEY=k",
        ] {
            assert!(seen.lines().any(|l| l == passed), "{passed} missing");
        }
        for blocked in ["ANTHROPIC_API_KEY", "GEMINI_API_KEY"] {
            assert!(!seen.contains(blocked), "{blocked} leaked to codex");
        }
    }

    #[tokio::test]
    async fn gemini_exit_codes_become_clear_errors() {
        let dir = tempfile::tempdir().unwrap();
        let body = "echo 'Error: Invalid auth method selected.' >&2\nexit 41";
        let agent = AgentSpec {
            name: "gemini".into(),
            backend: crate::dispatch::BackendKind::Gemini,
            format: EventFormat::Gemini,
            ..spec(script(dir.path(), body))
        };
        let o = run(&agent, &request(dir.path(), 10_000, 200, 4096)).await;
        assert_eq!(o.end, ProcessEnd::Exited { code: 41 });
        let r = o.result.unwrap();
        assert!(r.is_error);
        let text = r.text.unwrap();
        assert!(
            text.contains("authentication failed") && text.contains("Invalid auth method"),
            "{text}"
        );
    }

    #[tokio::test]
    async fn command_agent_gets_its_args_and_the_prompt_on_stdin() {
        let dir = tempfile::tempdir().unwrap();
        let body = format!(
            "cat > stdin.txt\nprintf '%s\\n' \"$@\" > argv.txt\nprintf '%s\\n' '{RESULT}'\nexit 0"
        );
        let agent = AgentSpec {
            name: "wrapper".into(),
            backend: crate::dispatch::BackendKind::Command,
            format: EventFormat::Claude,
            extra_args: vec!["--model".into(), "{model}".into(), "-x".into()],
            ..spec(script(dir.path(), &body))
        };
        let req = request(dir.path(), 10_000, 200, 4096);
        let o = run(&agent, &req).await;
        assert_eq!(o.answer(), Some("{\"findings\":[]}"));
        let argv = std::fs::read_to_string(dir.path().join("argv.txt")).unwrap();
        assert_eq!(argv, "--model\nopus\n-x\n");
        let stdin = std::fs::read_to_string(dir.path().join("stdin.txt")).unwrap();
        assert!(stdin.starts_with(&req.prompt.trim_end().to_string()));
        assert!(stdin.contains("<role_instructions>\nYou are an Enthusiast."));
    }

    #[test]
    fn env_allowlist_rules() {
        for ok in [
            "HOME",
            "PATH",
            "TMPDIR",
            "LC_CTYPE",
            "XDG_CONFIG_HOME",
            "ANTHROPIC_BASE_URL",
            "CLAUDE_CODE_USE_BEDROCK",
            "AREV_FAKE_SCRIPT",
            "DISABLE_TELEMETRY",
            "http_proxy",
            "No_Proxy",
            "HTTPS_PROXY",
            "NODE_EXTRA_CA_CERTS",
            "SSL_CERT_FILE",
            "AWS_REGION",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "CLOUD_ML_REGION",
            "VERTEX_REGION_X",
        ] {
            assert!(env_allowed(ok), "{ok}");
        }
        assert!(env_allowed_for(EventFormat::Codex, &[], "OPENAI_BASE_URL"));
        assert!(env_allowed_for(
            EventFormat::Gemini,
            &[],
            "GOOGLE_GEMINI_BASE_URL"
        ));
        assert!(!env_allowed_for(
            EventFormat::Gemini,
            &[],
            "ANTHROPIC_API_KEY"
        ));
        assert!(env_allowed_for(
            EventFormat::Claude,
            &["X_KEY".into()],
            "X_KEY"
        ));
        for no in [
            "SECRET_X",
            "OPENAI_API_KEY",
            "GH_TOKEN",
            "LD_PRELOAD",
            "HOMEX",
            "PATH2",
            "lc_all",
        ] {
            assert!(!env_allowed(no), "{no}");
        }
    }

    #[test]
    fn resolve_binary_paths_and_names() {
        let sh = resolve_binary("sh").unwrap();
        assert!(sh.is_absolute() && sh.ends_with("sh"), "{}", sh.display());
        assert!(matches!(
            resolve_binary("arev-definitely-not-a-binary"),
            Err(DispatchError::BinaryNotFound(n)) if n == "arev-definitely-not-a-binary"
        ));
        assert!(matches!(
            resolve_binary(""),
            Err(DispatchError::BinaryNotFound(_))
        ));
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("plain");
        std::fs::write(&plain, "x").unwrap();
        assert!(matches!(
            resolve_binary(plain.to_str().unwrap()),
            Err(DispatchError::NotExecutable(p)) if p == plain
        ));
        assert!(matches!(
            resolve_binary(dir.path().to_str().unwrap()),
            Err(DispatchError::NotExecutable(_))
        ));
        let missing = dir.path().join("missing");
        assert!(matches!(
            resolve_binary(missing.to_str().unwrap()),
            Err(DispatchError::BinaryNotFound(_))
        ));
        let exe = script(dir.path(), "exit 0");
        assert_eq!(resolve_binary(exe.to_str().unwrap()).unwrap(), exe);
    }
}
