//! Running one agent: its environment (an allowlist per vendor), its argv and stdin, the
//! supervised process (`crate::process`: own group, capped pipes, timeout and cancellation
//! with SIGTERM → grace → SIGKILL), and the outcome files it leaves in its dispatch dir.

use super::{AgentOutcome, AgentSpec, DispatchError, DispatchRequest, Invocation, ProcessEnd};
use crate::backends::{Fold, Folded, Wrap};
use crate::process::{supervise, Ended, Env, Input, Limits, Sink, Spec};
use crate::store::{write_json_record, write_record};
use nix::sys::signal::Signal;
use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::debug;

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
/// Whether an environment variable of arev's may be passed to an agent (an allowlist:
/// secrets unrelated to the agent's own provider never reach it). `provider`: the prefixes
/// of the agent's vendor (its event format's backend, given arev's environment:
/// `Backend::env_prefixes`). `pass_env` names further variables by exact name (the agent's
/// `pass_env` config key).
pub(crate) fn env_allowed_for(provider: &[&str], pass_env: &[String], name: &str) -> bool {
    ENV_EXACT.contains(&name)
        || ENV_PREFIXES.iter().any(|p| name.starts_with(p))
        || ENV_ANY_CASE.iter().any(|v| name.eq_ignore_ascii_case(v))
        || provider.iter().any(|p| name.starts_with(p))
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

/// Told an agent's running spend while its events stream (docs/contracts.md §19.3, §19.4): the usage
/// so far and its cost at the model's list price (None when the model has no price).
/// Called as the events arrive, whenever the spend grew.
pub trait SpendMeter: Send + Sync {
    fn spending(&self, usage: &super::Usage, cost_usd: Option<f64>);
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
    dispatch_metered(agent, req, cancel, None).await
}

/// [`dispatch`], its running spend reported to `meter` while its events stream.
pub async fn dispatch_metered(
    agent: &AgentSpec,
    req: &DispatchRequest,
    cancel: &CancellationToken,
    meter: Option<std::sync::Arc<dyn SpendMeter>>,
) -> Result<AgentOutcome, DispatchError> {
    let parent_env: Vec<(OsString, OsString)> = std::env::vars_os().collect();
    run_agent(agent, req, cancel, parent_env, meter).await
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> DispatchError + '_ {
    move |source| DispatchError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn status_to_end(s: ExitStatus) -> ProcessEnd {
    match (s.code(), s.signal()) {
        (Some(code), _) => ProcessEnd::Exited { code },
        (None, Some(signal)) => ProcessEnd::Signaled { signal },
        (None, None) => ProcessEnd::Exited { code: -1 },
    }
}

#[cfg(test)]
pub(crate) async fn dispatch_with_env(
    agent: &AgentSpec,
    req: &DispatchRequest,
    cancel: &CancellationToken,
    parent_env: Vec<(OsString, OsString)>,
) -> Result<AgentOutcome, DispatchError> {
    run_agent(agent, req, cancel, parent_env, None).await
}

async fn run_agent(
    agent: &AgentSpec,
    req: &DispatchRequest,
    cancel: &CancellationToken,
    parent_env: Vec<(OsString, OsString)>,
    meter: Option<std::sync::Arc<dyn SpendMeter>>,
) -> Result<AgentOutcome, DispatchError> {
    let backend = agent.backend.backend();
    let inv = backend.invocation(agent, req);
    let out = &req.out_dir;
    std::fs::create_dir_all(out).map_err(io_err(out))?;
    // A reviewer's own home where its CLI needs one to keep the user's personal context
    // out (Codex, Gemini: `Backend::private_home`); kept until the agent has ended.
    // Both are made outside the reviewed tree, whatever the user's cache dir.
    let trees: Vec<&Path> = std::iter::once(req.cwd.as_path())
        .chain(req.read_dirs.iter().map(PathBuf::as_path))
        .collect();
    let homes_env = crate::backends::homes_env(&parent_env, &trees);
    let home = backend.private_home(&homes_env).map_err(io_err(out))?;
    // Its own `TMPDIR`, removed with what the CLI left there when the agent has ended.
    let tmp = crate::backends::agent_tmp(&homes_env).map_err(io_err(out))?;
    let mut backend_env = inv.env.clone();
    backend_env.extend(home.iter().flat_map(|h| h.env.iter().cloned()));
    backend_env.push(("TMPDIR".into(), tmp.path().display().to_string()));
    let env = agent_env(agent, &backend_env, parent_env);
    let prompt_path = out.join("prompt.md");
    write_record(&prompt_path, req.prompt.as_bytes()).map_err(io_err(&prompt_path))?;
    for (path, bytes) in &inv.files {
        write_record(path, bytes).map_err(io_err(path))?;
    }
    // The event stream is spooled verbatim to a temp file beside events.jsonl as it
    // arrives (no buffer growing in arev), renamed over it when the agent has ended; the
    // same bytes come over a channel to the fold. Dropped unrenamed (an error below), the
    // temp file is removed.
    let events = out.join("events.jsonl");
    let spool = tempfile::Builder::new()
        .prefix(".tmp-")
        .tempfile_in(out)
        .map_err(io_err(out))?;
    let spool_file = spool.as_file().try_clone().map_err(io_err(spool.path()))?;
    let (tee, chunks) = tokio::sync::mpsc::unbounded_channel();

    let started = Instant::now();
    let mut outcome = AgentOutcome::starting(agent, req);
    // The program the CLI starts under (OpenCode's filesystem view); when it cannot be made,
    // the CLI does not start at all.
    let wrap = match backend.wrap(agent, req) {
        Ok(w) => w,
        Err(e) => {
            spool
                .persist(&events)
                .map_err(|e| io_err(&events)(e.error))?;
            let message = format!("cannot start {}: {e}", agent.binary.display());
            debug!(label = %req.label, %message, "agent not started");
            outcome.end = ProcessEnd::SpawnFailed { message };
            write_outputs(out, &[], &mut outcome, started)?;
            return Ok(outcome);
        }
    };
    let spec = agent_spec(agent, req, inv, wrap, env, spool_file, tee);
    let limits = Limits {
        timeout: req.timeout,
        grace: req.grace,
    };
    // The stream is folded as it arrives: its running spend goes to the meter
    // (docs/contracts.md §19.3), and as the CLIs retry even a 401 (Claude Code for minutes),
    // the first retry of a permanent error stops the agent (docs/contracts.md §19.2).
    let stop = cancel.child_token();
    let mut fold = Fold::new(agent.format, &outcome.model, req.price);
    let supervised = watch(
        supervise(spec, limits, &stop),
        chunks,
        &mut fold,
        meter.as_deref(),
        &stop,
    )
    .await;
    spool
        .persist(&events)
        .map_err(|e| io_err(&events)(e.error))?;
    let finished = match supervised {
        Ok(f) => f,
        Err(e) => {
            let message = format!("cannot start {}: {e}", agent.binary.display());
            debug!(label = %req.label, %message, "agent spawn failed");
            outcome.end = ProcessEnd::SpawnFailed { message };
            write_outputs(out, &[], &mut outcome, started)?;
            return Ok(outcome);
        }
    };
    outcome.end = process_end(finished.ended);
    let (stdout, stderr) = (finished.stdout, finished.stderr);
    let folded = fold.finish(&outcome.end, &stderr.kept);
    outcome.record(folded);
    outcome.stdout_bytes = stdout.total;
    outcome.stdout_truncated = stdout.truncated;
    outcome.stderr_truncated = stderr.truncated;
    write_outputs(out, &stderr.kept, &mut outcome, started)?;
    debug!(label = %req.label, end = ?outcome.end, duration_ms = outcome.duration_ms, "agent done");
    Ok(outcome)
}

/// Runs `supervised` to its end while folding the chunks of stdout that arrive: a grown
/// spend is told to `meter`, and `stop` is cancelled at the first retry of a permanent API
/// error. What is left in the channel once the agent has ended (its pipe drained) is
/// folded too, no longer metered: the outcome records it.
async fn watch<T>(
    supervised: impl std::future::Future<Output = T>,
    mut chunks: tokio::sync::mpsc::UnboundedReceiver<Vec<u8>>,
    fold: &mut Fold,
    meter: Option<&dyn SpendMeter>,
    stop: &CancellationToken,
) -> T {
    let mut supervised = std::pin::pin!(supervised);
    let mut reported = super::Usage::default();
    let ended = loop {
        tokio::select! {
            ended = &mut supervised => break ended,
            Some(chunk) = chunks.recv() => {
                fold.feed(&chunk);
                if let Some(meter) = meter {
                    if *fold.usage() != reported {
                        reported = fold.usage().clone();
                        meter.spending(&reported, fold.spend_usd());
                    }
                }
                if fold.permanent_retry().is_some() && !stop.is_cancelled() {
                    debug!("a permanent API error is being retried; stopping the agent");
                    stop.cancel();
                }
            }
        }
    };
    chunks.close();
    while let Some(chunk) = chunks.recv().await {
        fold.feed(&chunk);
    }
    ended
}

impl AgentOutcome {
    /// What the fold of its events says: tool uses, result, fault, non-JSON lines and,
    /// without a result, what the events show it spent (docs/contracts.md §19.1).
    fn record(&mut self, folded: Folded) {
        self.tool_uses = folded.tool_uses;
        self.result = folded.result;
        self.fault = folded.fault;
        self.malformed_lines = folded.malformed;
        self.streamed = folded.streamed;
        self.unpriced = folded.unpriced;
    }
}

/// The agent's environment: only the allowlisted variables of `parent_env`, and the
/// backend's own (`backend_env`), which win over inherited ones.
fn agent_env(
    agent: &AgentSpec,
    backend_env: &[(String, String)],
    parent_env: Vec<(OsString, OsString)>,
) -> Vec<(OsString, OsString)> {
    let provider = agent.format.backend().env_prefixes(&parent_env);
    parent_env
        .into_iter()
        .filter(|(k, _)| {
            k.to_str().is_some_and(|k| {
                env_allowed_for(&provider, &agent.pass_env, k)
                    && !backend_env.iter().any(|(n, _)| n == k)
            })
        })
        .chain(backend_env.iter().map(|(k, v)| (k.into(), v.into())))
        .collect()
}

/// The supervised process: its own process group, stdin = the prompt then EOF (or
/// /dev/null when the prompt is an argument), stdout spooled and stderr captured, both
/// capped; SIGKILL if arev dies.
fn agent_spec(
    agent: &AgentSpec,
    req: &DispatchRequest,
    inv: Invocation,
    wrap: Option<Wrap>,
    env: Vec<(OsString, OsString)>,
    spool: std::fs::File,
    tee: tokio::sync::mpsc::UnboundedSender<Vec<u8>>,
) -> Spec {
    let args = inv.args.into_iter().map(OsString::from);
    let (program, args) = match wrap {
        Some(w) => {
            let mut a = w.args;
            a.push(agent.binary.clone().into_os_string());
            a.extend(args);
            (w.program, a)
        }
        None => (agent.binary.clone(), args.collect()),
    };
    Spec {
        label: req.label.clone(),
        program,
        args,
        cwd: req.cwd.clone(),
        env: Env::Only(env),
        stdin: inv.stdin.map_or(Input::Null, Input::Bytes),
        stdout: Sink::Spool {
            file: spool,
            cap: req.output_cap,
            tee: Some(tee),
        },
        stderr: Sink::Capture {
            cap: req.output_cap,
        },
        parent_death: Signal::SIGKILL,
    }
}

/// How the supervised agent ended, as the outcome records it.
fn process_end(ended: Ended) -> ProcessEnd {
    match ended {
        Ended::Exited(s) => status_to_end(s),
        // Practically impossible; the agent's fate is unknown, so it did not run usably.
        Ended::Lost(e) => ProcessEnd::SpawnFailed {
            message: format!("lost track of the agent process: {e}"),
        },
        Ended::TimedOut { killed, .. } => ProcessEnd::TimedOut { killed },
        Ended::Cancelled { killed, .. } => ProcessEnd::Cancelled { killed },
    }
}

impl AgentOutcome {
    /// The outcome of `agent` for `req` before it has run: nothing seen yet.
    fn starting(agent: &AgentSpec, req: &DispatchRequest) -> Self {
        Self {
            label: req.label.clone(),
            agent: agent.name.clone(),
            role: req.role,
            tier: req.tier,
            model: agent.models.get(req.tier).to_string(),
            end: ProcessEnd::Exited { code: -1 },
            tool_uses: Vec::new(),
            result: None,
            malformed_lines: 0,
            stdout_bytes: 0,
            stdout_truncated: false,
            stderr_truncated: false,
            duration_ms: 0,
            fault: None,
            streamed: None,
            unpriced: false,
            answer_forgotten: None,
        }
    }
}

/// stderr.log and outcome.json (events.jsonl is the spool, already renamed into place).
fn write_outputs(
    out: &Path,
    stderr: &[u8],
    outcome: &mut AgentOutcome,
    started: Instant,
) -> Result<(), DispatchError> {
    let err_log = out.join("stderr.log");
    write_record(&err_log, stderr).map_err(io_err(&err_log))?;
    outcome.duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let oc = out.join("outcome.json");
    // The answer text is not repeated: events.jsonl holds it (stderr.log an error's).
    let text = outcome.result.as_mut().and_then(|r| r.text.take());
    let file = OutcomeFile {
        outcome,
        answer: text.as_deref().map(AnswerRef::of),
    };
    let written = write_json_record(&oc, &file).map_err(io_err(&oc));
    if let Some(r) = outcome.result.as_mut() {
        r.text = text;
    }
    written
}

/// outcome.json: the parsed outcome with `result.text` null, and `answer` instead — the
/// answer's size and sha256, to find and check it in events.jsonl (Claude: the `result`
/// event's `result`; Codex: the last `agent_message`; Gemini: the assistant message deltas
/// after the last tool use; an error's text: from stderr.log).
#[derive(serde::Serialize)]
struct OutcomeFile<'a> {
    #[serde(flatten)]
    outcome: &'a AgentOutcome,
    answer: Option<AnswerRef>,
}

#[derive(serde::Serialize)]
struct AnswerRef {
    bytes: usize,
    sha256: String,
}

impl AnswerRef {
    fn of(text: &str) -> Self {
        use sha2::Digest;
        Self {
            bytes: text.len(),
            sha256: hex::encode(sha2::Sha256::digest(text.as_bytes())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dispatch::{BackendKind, EventFormat, TierModels};
    use crate::findings::{Role, Tier};
    use crate::process::DRAIN_TIMEOUT;
    use nix::unistd::Pid;
    use std::time::Duration;

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
            fallback_model: None,
            base_url: None,
            api_key_env: None,
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
            hidden: vec![],
            out_dir: dir.join("out"),
            timeout: Duration::from_millis(timeout_ms),
            grace: Duration::from_millis(grace_ms),
            output_cap: cap,
            max_budget_usd: None,
            price: None,
            search: true,
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
        req.prompt = format!("{}{}", req.prompt, "x".repeat(300_000)).into();
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
        // The spool the events went through was renamed, not left behind.
        let mut names: Vec<String> = std::fs::read_dir(out)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(
            names,
            ["events.jsonl", "outcome.json", "prompt.md", "stderr.log"]
        );
        assert_eq!(
            std::fs::read_to_string(out.join("stderr.log")).unwrap(),
            "oops\n"
        );
        assert_eq!(
            std::fs::read_to_string(out.join("prompt.md")).unwrap(),
            &*req.prompt
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("stdin.txt")).unwrap(),
            &*req.prompt
        );
        let argv = std::fs::read_to_string(dir.path().join("argv.txt")).unwrap();
        let argv: Vec<&str> = argv.lines().collect();
        assert_eq!(argv, agent.backend.backend().invocation(&agent, &req).args);
        let saved: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join("outcome.json")).unwrap()).unwrap();
        // Everything but the answer text, which events.jsonl holds: its size and sha256.
        let text = o.answer().unwrap();
        assert_eq!(saved["answer"]["bytes"], text.len());
        assert_eq!(saved["result"]["text"], serde_json::Value::Null);
        let mut expected = o.clone();
        if let Some(r) = expected.result.as_mut() {
            r.text = None;
        }
        let saved: AgentOutcome = serde_json::from_value(saved).unwrap();
        assert_eq!(saved, expected);
        assert!(String::from_utf8_lossy(&events).contains(&text.replace('"', "\\\"")));
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
            fallback_model: None,
            base_url: None,
            api_key_env: None,
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
        for passed in ["OPENAI_API_KEY=sk-openai", "MY_PROVIDER_KEY=k"] {
            assert!(seen.lines().any(|l| l == passed), "{passed} missing");
        }
        // The user's CODEX_HOME (/c) is seen through a private home of links (no AGENTS.md),
        // removed once the agent has ended.
        let home = seen
            .lines()
            .find_map(|l| l.strip_prefix("CODEX_HOME="))
            .expect("CODEX_HOME");
        assert!(home.contains("/arev/homes/codex-"), "{home}");
        assert!(!std::path::Path::new(home).exists(), "{home} left behind");
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

    /// Whether `name` reaches an agent of `format` started with `env`.
    fn allowed(
        format: EventFormat,
        env: &[(OsString, OsString)],
        pass_env: &[String],
        name: &str,
    ) -> bool {
        env_allowed_for(&format.backend().env_prefixes(env), pass_env, name)
    }

    /// Whether `name` reaches a Claude agent (no cloud route switched on).
    fn env_allowed(name: &str) -> bool {
        allowed(EventFormat::Claude, &[], &[], name)
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
        ] {
            assert!(env_allowed(ok), "{ok}");
        }
        assert!(allowed(EventFormat::Codex, &[], &[], "OPENAI_BASE_URL"));
        assert!(allowed(
            EventFormat::Gemini,
            &[],
            &[],
            "GOOGLE_GEMINI_BASE_URL"
        ));
        assert!(!allowed(EventFormat::Gemini, &[], &[], "ANTHROPIC_API_KEY"));
        assert!(allowed(
            EventFormat::Claude,
            &[],
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
            // Cloud credentials without their route switched on.
            "AWS_SECRET_ACCESS_KEY",
            "AWS_REGION",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "CLOUD_ML_REGION",
            "VERTEX_REGION_X",
        ] {
            assert!(!env_allowed(no), "{no}");
        }
    }

    #[test]
    fn cloud_credentials_follow_their_route() {
        let env = |pairs: &[(&str, &str)]| -> Vec<(OsString, OsString)> {
            pairs
                .iter()
                .map(|(k, v)| (OsString::from(k), OsString::from(v)))
                .collect()
        };
        let claude = |e: &[(OsString, OsString)], n| allowed(EventFormat::Claude, e, &[], n);
        for off in ["", "0", "false", "FALSE"] {
            let e = env(&[("CLAUDE_CODE_USE_BEDROCK", off)]);
            assert!(!claude(&e, "AWS_REGION"), "{off:?}");
        }
        let bedrock = env(&[("CLAUDE_CODE_USE_BEDROCK", "1")]);
        assert!(claude(&bedrock, "AWS_SECRET_ACCESS_KEY") && claude(&bedrock, "AWS_REGION"));
        assert!(!claude(&bedrock, "GOOGLE_APPLICATION_CREDENTIALS"));
        let vertex = env(&[("CLAUDE_CODE_USE_VERTEX", "true")]);
        assert!(claude(&vertex, "GOOGLE_APPLICATION_CREDENTIALS"));
        assert!(claude(&vertex, "CLOUD_ML_REGION") && claude(&vertex, "VERTEX_REGION_X"));
        assert!(!claude(&vertex, "AWS_ACCESS_KEY_ID"));
        // Other vendors never get AWS credentials, whatever the routes.
        assert!(!allowed(EventFormat::Gemini, &bedrock, &[], "AWS_REGION"));
        assert!(!allowed(EventFormat::Codex, &vertex, &[], "GOOGLE_API_KEY"));
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
