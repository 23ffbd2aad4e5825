//! Loopback fake of the Anthropic Messages API, for driving the REAL `claude` CLI in tests.
//!
//! Start one with [`FakeAnthropic::start`], point the CLI at it with
//! `ANTHROPIC_BASE_URL=<fake.base_url>` (plus any `ANTHROPIC_API_KEY`), and script what the
//! "model" does per arev role/round with a [`Script`]:
//!
//! ```ignore
//! let fake = FakeAnthropic::start(
//!     Script::new().answer("Enthusiast", 1, serde_json::json!({"findings": []})),
//! );
//! // ... run `claude -p ...` with ANTHROPIC_BASE_URL = fake.base_url ...
//! let reqs = fake.requests();
//! ```
//!
//! # Wire contract (see `docs/architecture.md` §16.5)
//!
//! * `POST /v1/messages` (any query string, e.g. `?beta=true`; any headers; any JSON body —
//!   unknown keys, `role:"system"` messages, `cache_control`, deferred tools are all ignored).
//!   With `"stream": true` (what the CLI always sends) the reply is an SSE body
//!   (`content-type: text/event-stream`): `message_start`, then per content block
//!   `content_block_start` / `content_block_delta` (`text_delta`, or `input_json_delta` carrying
//!   the whole input JSON as `partial_json`) / `content_block_stop`, then `message_delta`
//!   (`stop_reason` `"tool_use"` or `"end_turn"`, `usage.output_tokens`) and `message_stop`.
//!   Each event is `event: <type>\ndata: <json>\n\n`. A non-streaming request gets the same
//!   message as one JSON object.
//! * Anything else → `404` with an Anthropic-style error JSON, recorded in
//!   [`FakeAnthropic::stray_requests`] so stray calls are visible.
//!
//! # How a request is mapped to a scripted step
//!
//! * **Turn context**: every `user` message's text (string content, or `text` blocks — the
//!   prompt usually follows `<system-reminder>` blocks) is scanned for a line
//!   `[AR Round {N} — {MODE}] {Role}` with an optional ` (pass {p}/{P})` suffix, and for the
//!   tag `<target path="{abs}" kind="{kind}" sha256="{sha}" />`. The last match wins.
//! * **Step index**: the number of `assistant` turns already in `messages` (consecutive
//!   `assistant` messages count once, in case a client splits one response).
//! * **Lookup**: `(role, round, Some(pass))` first, then `(role, round, None)`.
//!   Explicit steps from [`Script::steps`] are used as listed; past the end of the list the
//!   fake answers with the role's scripted answer (or `{}`), so a run always terminates.
//!   Without explicit steps: step 0 → `Read {"file_path": <target path>}`; step ≥ 1 → one text
//!   block with the scripted answer (or `{}` if the role/round was never scripted).
//! * **Reviews**: each distinct target sha256 seen in a turn's `<target>` tag starts a new
//!   *review* (0, 1, … in first-seen order), so a session that gets reviewed twice (e.g. by
//!   the Stop hook, before and after a fix) can be scripted per review with
//!   [`Script::answer_review`]; those entries win over the plain ones.
//! * A request without an arev prompt is a *session* turn (the Claude Code session a user
//!   drives, e.g. with the arev plugin loaded): it plays [`Script::session`]'s steps by step
//!   index (past the end, or without session steps: a plain `ok` text with `end_turn`).
//!
//! Tool-use ids are `toolu_fake_<n>`, unique for the whole server lifetime.
//!
//! # What the real CLI (2.1.330) needed
//!
//! Nothing beyond the above: no auth/onboarding config in a scratch `HOME`, no special
//! response headers (we add a harmless `request-id`), no other endpoints in `-p` runs. The
//! only server-side gotcha is body size: requests carry the full system prompt, tool schemas
//! and every tool result, so the default 2 MB axum body limit is disabled.

// Public API is consumed by other test modules as they are written; not every item is used
// by every test yet.
#![allow(dead_code)]

use crate::background::{bind, Background};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;
use serde_json::{json, Value};

// ---------------------------------------------------------------------------------------------
// Script
// ---------------------------------------------------------------------------------------------

/// One content block of a scripted model response.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    /// A `text` block.
    Text(String),
    /// A `tool_use` block; the fake assigns the id.
    ToolUse { name: String, input: Value },
}

/// One scripted model response (one request/response round trip with the CLI).
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// `Read {"file_path": <the target path from the prompt's <target> tag>}`.
    ReadTarget,
    /// `Read {"file_path": path}`.
    Read(PathBuf),
    /// `Grep {"pattern", "path", "output_mode": "content", "-n": true}`.
    Grep { pattern: String, path: PathBuf },
    /// `Glob {"pattern", "path"}`.
    Glob { pattern: String, path: PathBuf },
    /// Any tool call, e.g. a Bash call to check it is refused.
    Tool { name: String, input: Value },
    /// Final text (`end_turn`).
    Text(String),
    /// Final text = the scripted answer for this role/round (or `{}`).
    Answer,
    /// Several blocks in one response (e.g. parallel tool calls, or text + tool call).
    /// `stop_reason` is `tool_use` if any block is a tool use, else `end_turn`.
    Blocks(Vec<Block>),
    /// Reply with this HTTP status and an Anthropic error body instead of a message.
    HttpError { status: u16, message: String },
    /// HTTP 429 `rate_limit_error` with a `retry-after: <secs>` header.
    RateLimited { retry_after: u64 },
    /// Wait this long before the first byte of the response, then play the inner step.
    Delay(std::time::Duration, Box<Step>),
    /// Start the SSE stream (`message_start`, a partial text block), then drop the
    /// connection: a cut stream.
    CutStream,
    /// A text block, then `stop_reason: "refusal"`.
    Refusal(String),
    /// The scripted answer cut after this many bytes, with `stop_reason: "max_tokens"`; the
    /// next step (the CLI's continuation, if any) plays the rest ([`Step::AnswerRest`]).
    MaxTokens(usize),
    /// The scripted answer from this byte on (what follows a [`Step::MaxTokens`]).
    AnswerRest(usize),
    /// `Write {"file_path": <worktree>/<rel>, "content"}`, the worktree being the one a
    /// Prover's prompt names ("scratch worktree of the reviewed code: <path>.").
    WriteInWorktree { rel: String, content: String },
}

/// The scratch worktree a Prover's prompt names, from the request's user messages.
fn prompt_worktree(body: &Value) -> Option<String> {
    const MARK: &str = "scratch worktree of the reviewed code: ";
    let messages = body.get("messages")?.as_array()?;
    messages.iter().find_map(|m| {
        content_texts(m.get("content").unwrap_or(&Value::Null))
            .into_iter()
            .find_map(|t| {
                let i = t.find(MARK)? + MARK.len();
                let rest = &t[i..];
                Some(rest[..rest.find(". ")?].to_owned())
            })
    })
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct ScriptKey {
    role: String,
    round: u32,
    pass: Option<u32>,
}

/// What the fake "model" does, keyed by (role, round, optional pass).
#[derive(Debug, Clone, Default)]
pub struct Script {
    answers: HashMap<ScriptKey, String>,
    steps: HashMap<ScriptKey, Vec<Step>>,
    /// Answers for one review (by first-seen target sha order).
    review_answers: HashMap<(usize, ScriptKey), String>,
    /// Steps of the session's own agent (requests without an arev prompt).
    session: Vec<Step>,
    /// The first `n` requests of a role/round(/pass) play this step instead of their own,
    /// whatever their step index: a fault that outlasts the CLI's own retries and arev's
    /// re-dispatches (e.g. a burst of 529s on one pass).
    faults: HashMap<ScriptKey, (usize, Step)>,
    /// Simulated model latency: every response starts this long after its request arrived.
    /// A cache entry becomes readable only then, as with the real API, so parallel requests
    /// sent within it do not share a prefix the first one wrote.
    latency: std::time::Duration,
    /// The smallest prefix (tokens) the cache keeps; shorter breakpoints are billed as plain
    /// input. The real API's minimum is 1,024 tokens for Opus and Sonnet models.
    min_cacheable: u64,
    /// (role, round) → (step index, gate): that request's response waits until the gate's
    /// file exists ([`Script::hold`]).
    holds: HashMap<ScriptKey, (usize, std::path::PathBuf)>,
}

impl Script {
    pub fn new() -> Self {
        Self::default()
    }

    /// Final answer (serialised compactly) for `role` in `round`, any pass.
    pub fn answer(self, role: &str, round: u32, answer: Value) -> Self {
        self.answer_text(role, round, None, answer.to_string())
    }

    /// Final answer for one specific pass (takes precedence over the any-pass entry).
    pub fn answer_pass(self, role: &str, round: u32, pass: u32, answer: Value) -> Self {
        self.answer_text(role, round, Some(pass), answer.to_string())
    }

    /// Final answer as raw text (e.g. malformed JSON, or JSON wrapped in prose).
    pub fn answer_text(mut self, role: &str, round: u32, pass: Option<u32>, text: String) -> Self {
        self.answers.insert(key(role, round, pass), text);
        self
    }

    /// Final answer for `role` in `round` of review number `review` only (0 = the first
    /// distinct target sha the fake saw); wins over [`Script::answer`].
    pub fn answer_review(mut self, review: usize, role: &str, round: u32, answer: Value) -> Self {
        self.review_answers
            .insert((review, key(role, round, None)), answer.to_string());
        self
    }

    /// Steps of the session agent: request `i` without an arev prompt plays step `i`
    /// (by assistant turns already in the conversation).
    pub fn session(mut self, steps: Vec<Step>) -> Self {
        self.session = steps;
        self
    }

    /// Explicit step list for `role` in `round`, any pass. Step `i` answers the request
    /// that already holds `i` assistant turns.
    pub fn steps(self, role: &str, round: u32, steps: Vec<Step>) -> Self {
        self.steps_pass(role, round, None, steps)
    }

    /// Explicit step list for one specific pass (`None` = any pass).
    pub fn steps_pass(
        mut self,
        role: &str,
        round: u32,
        pass: Option<u32>,
        steps: Vec<Step>,
    ) -> Self {
        self.steps.insert(key(role, round, pass), steps);
        self
    }

    /// The first `n` requests of `role` in `round` (one pass, or any with `None`) play
    /// `step`, whatever their step index.
    pub fn fail_first(
        mut self,
        role: &str,
        round: u32,
        pass: Option<u32>,
        n: usize,
        step: Step,
    ) -> Self {
        self.faults.insert(key(role, round, pass), (n, step));
        self
    }

    /// The response to `role`'s request at step `at` in `round` is held until `gate` names a
    /// file (a component `*` matches any entry, as [`crate::fake_llm::gate_matches`] counts
    /// it; at most 600 s): the test decides the order of two agents' answers instead of the
    /// load. A CLI killed meanwhile drops its request.
    pub fn hold(mut self, role: &str, round: u32, at: usize, gate: &std::path::Path) -> Self {
        self.holds
            .insert(key(role, round, None), (at, gate.to_path_buf()));
        self
    }

    /// Every response starts `latency` after its request (see the `latency` field).
    pub fn latency(mut self, latency: std::time::Duration) -> Self {
        self.latency = latency;
        self
    }

    /// The smallest cacheable prefix in tokens (default 0: every breakpoint caches).
    pub fn min_cacheable(mut self, tokens: u64) -> Self {
        self.min_cacheable = tokens;
        self
    }

    fn lookup<'a, T>(map: &'a HashMap<ScriptKey, T>, turn: &Turn) -> Option<&'a T> {
        turn.pass
            .and_then(|p| map.get(&key(&turn.role, turn.round, Some(p))))
            .or_else(|| map.get(&key(&turn.role, turn.round, None)))
    }

    /// The step to play for `turn` at `step`, and whether the role/round was scripted at all.
    fn step_for(&self, turn: &Turn, step: usize) -> (Step, bool) {
        let explicit = Self::lookup(&self.steps, turn);
        let scripted = explicit.is_some() || Self::lookup(&self.answers, turn).is_some();
        let s = match explicit {
            Some(list) => list.get(step).cloned().unwrap_or(Step::Answer),
            None if step == 0 => Step::ReadTarget,
            None => Step::Answer,
        };
        (s, scripted)
    }

    fn answer_for(&self, turn: &Turn, review: Option<usize>) -> String {
        review
            .and_then(|r| {
                self.review_answers
                    .get(&(r, key(&turn.role, turn.round, None)))
            })
            .or_else(|| Self::lookup(&self.answers, turn))
            .cloned()
            .unwrap_or_else(|| "{}".to_owned())
    }

    fn session_step(&self, step: usize) -> Step {
        self.session
            .get(step)
            .cloned()
            .unwrap_or_else(|| Step::Text("ok".to_owned()))
    }
}

fn key(role: &str, round: u32, pass: Option<u32>) -> ScriptKey {
    ScriptKey {
        role: role.to_owned(),
        round,
        pass,
    }
}

// ---------------------------------------------------------------------------------------------
// Prompt decoding
// ---------------------------------------------------------------------------------------------

/// The arev turn context decoded from a request's user messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Turn {
    pub role: String,
    pub round: u32,
    /// e.g. `LIGHTWEIGHT`.
    pub mode: String,
    /// `p` of ` (pass p/P)`.
    pub pass: Option<u32>,
    /// `P` of ` (pass p/P)`.
    pub passes: Option<u32>,
    /// From `<target path=… kind=… sha256=… />`, if present.
    pub target: Option<Target>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub path: String,
    pub kind: String,
    pub sha256: String,
}

/// The `[AR Round {N} — {MODE}] {Role}( (pass {p}/{P}))?` line, decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    pub round: u32,
    pub mode: String,
    pub role: String,
    /// `(p, P)` of ` (pass p/P)`.
    pub pass: Option<(u32, u32)>,
}

/// Parses `[AR Round {N} — {MODE}] {Role}( (pass {p}/{P}))?` from one line.
pub fn parse_header_line(line: &str) -> Option<Header> {
    let start = line.find("[AR Round ")?;
    let rest = &line[start + "[AR Round ".len()..];
    let digits_end = rest.find(|c: char| !c.is_ascii_digit())?;
    let round: u32 = rest[..digits_end].parse().ok()?;
    let rest = rest[digits_end..].trim_start();
    // Accept the em dash arev emits, and plain `-`/`–` for robustness.
    let rest = rest
        .strip_prefix('—')
        .or_else(|| rest.strip_prefix('–'))
        .or_else(|| rest.strip_prefix('-'))?
        .trim_start();
    let close = rest.find(']')?;
    let mode = rest[..close].trim().to_owned();
    let after = rest[close + 1..].trim();
    let (role, pass) = match after.find(" (pass ") {
        Some(i) => {
            let inner = after[i + " (pass ".len()..].split(')').next()?;
            let (p, total) = inner.split_once('/')?;
            (
                &after[..i],
                Some((p.trim().parse().ok()?, total.trim().parse().ok()?)),
            )
        }
        None => (after, None),
    };
    let role = role.trim();
    if role.is_empty() || mode.is_empty() {
        return None;
    }
    Some(Header {
        round,
        mode,
        role: role.to_owned(),
        pass,
    })
}

/// Parses the first `<target .../>` tag in `text`.
pub fn parse_target_tag(text: &str) -> Option<Target> {
    let start = text.find("<target ")?;
    let rest = &text[start + "<target ".len()..];
    let tag = &rest[..rest.find("/>").or_else(|| rest.find('>'))?];
    let attr = |name: &str| -> Option<String> {
        let needle = format!("{name}=\"");
        let mut from = 0;
        // Match whole attribute names only (`path=` must not match inside `xpath=`).
        while let Some(i) = tag[from..].find(&needle) {
            let at = from + i;
            if at == 0 || tag[..at].ends_with(char::is_whitespace) {
                let v = &tag[at + needle.len()..];
                return Some(xml_unescape(&v[..v.find('"')?]));
            }
            from = at + needle.len();
        }
        None
    };
    Some(Target {
        path: attr("path")?,
        kind: attr("kind").unwrap_or_default(),
        sha256: attr("sha256").unwrap_or_default(),
    })
}

fn xml_unescape(s: &str) -> String {
    s.replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// Text of a message's `content` (string, or the `text` blocks of a block list).
fn content_texts(content: &Value) -> Vec<&str> {
    match content {
        Value::String(s) => vec![s.as_str()],
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect(),
        _ => Vec::new(),
    }
}

/// Decodes the arev turn context from a request body (see module docs).
pub fn decode_turn(body: &Value) -> Option<Turn> {
    let messages = body.get("messages")?.as_array()?;
    let mut found = None;
    for msg in messages {
        if msg.get("role").and_then(Value::as_str) != Some("user") {
            continue;
        }
        for text in content_texts(msg.get("content").unwrap_or(&Value::Null)) {
            let Some(h) = text.lines().find_map(parse_header_line) else {
                continue;
            };
            found = Some(Turn {
                role: h.role,
                round: h.round,
                mode: h.mode,
                pass: h.pass.map(|p| p.0),
                passes: h.pass.map(|p| p.1),
                target: parse_target_tag(text),
            });
        }
    }
    found
}

/// Number of assistant turns already in `messages` (runs of consecutive assistant messages).
pub fn step_index(body: &Value) -> usize {
    let Some(messages) = body.get("messages").and_then(Value::as_array) else {
        return 0;
    };
    let mut n = 0;
    let mut prev_assistant = false;
    for m in messages {
        let is_assistant = m.get("role").and_then(Value::as_str) == Some("assistant");
        if is_assistant && !prev_assistant {
            n += 1;
        }
        prev_assistant = is_assistant;
    }
    n
}

/// All text of the request's `system` field (string or text blocks), joined by newlines.
pub fn system_text(body: &Value) -> String {
    content_texts(body.get("system").unwrap_or(&Value::Null)).join("\n")
}

// ---------------------------------------------------------------------------------------------
// Recording
// ---------------------------------------------------------------------------------------------

/// One `POST /v1/messages` the fake answered.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    /// Path and query as received, e.g. `/v1/messages?beta=true`.
    pub uri: String,
    /// Header names lower-cased; values lossily decoded.
    pub headers: Vec<(String, String)>,
    /// The request's `model` (empty if absent).
    pub model: String,
    /// The whole request body.
    pub body: Value,
    /// Decoded arev context; `None` if no `[AR Round …]` line was found.
    pub turn: Option<Turn>,
    /// Number of assistant turns already in `messages`.
    pub step: usize,
    /// Concatenated `system` text.
    pub system: String,
    /// Whether the turn's role/round had a scripted answer or step list.
    pub scripted: bool,
    /// Review number of the turn's target sha (first-seen order); `None` without a target.
    pub review: Option<usize>,
    /// The step that was played.
    pub played: Step,
    /// What the request cost under prompt caching (zero for an error reply).
    pub bill: Bill,
    /// When it arrived.
    pub arrived: Instant,
}

impl RecordedRequest {
    pub fn role(&self) -> Option<&str> {
        self.turn.as_ref().map(|t| t.role.as_str())
    }
    pub fn round(&self) -> Option<u32> {
        self.turn.as_ref().map(|t| t.round)
    }
    pub fn pass(&self) -> Option<u32> {
        self.turn.as_ref().and_then(|t| t.pass)
    }
    /// Value of a header (name is case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }
}

// ---------------------------------------------------------------------------------------------
// Server
// ---------------------------------------------------------------------------------------------

struct Shared {
    script: Script,
    /// Requests each scripted fault has answered so far.
    fault_hits: Mutex<HashMap<ScriptKey, usize>>,
    /// Cached prefixes (chained sha256 of the blocks up to a breakpoint) and when they
    /// became readable (the writing request's response start).
    cache: Mutex<HashMap<[u8; 32], Instant>>,
    /// Distinct target sha256s in first-seen order: the review numbers.
    reviews: Mutex<Vec<String>>,
    requests: Mutex<Vec<RecordedRequest>>,
    stray: Mutex<Vec<String>>,
    next_id: AtomicU64,
}

/// A running fake Messages API on `127.0.0.1:<random port>`; stops on drop.
pub struct FakeAnthropic {
    /// `http://127.0.0.1:<port>` — use as `ANTHROPIC_BASE_URL`.
    pub base_url: String,
    pub addr: SocketAddr,
    shared: Arc<Shared>,
    _background: Background,
}

impl FakeAnthropic {
    /// Binds `127.0.0.1:0` and serves `script` from a dedicated thread with its own tokio
    /// runtime, so it works from plain `#[test]` functions (and from async tests).
    pub fn start(script: Script) -> FakeAnthropic {
        let (listener, addr) = bind();
        let shared = Arc::new(Shared {
            script,
            fault_hits: Mutex::new(HashMap::new()),
            cache: Mutex::new(HashMap::new()),
            reviews: Mutex::new(Vec::new()),
            requests: Mutex::new(Vec::new()),
            stray: Mutex::new(Vec::new()),
            next_id: AtomicU64::new(1),
        });
        let app = Router::new()
            .route("/v1/messages", post(messages))
            .fallback(not_found)
            .layer(DefaultBodyLimit::disable())
            .with_state(Arc::clone(&shared));
        FakeAnthropic {
            base_url: format!("http://{addr}"),
            addr,
            shared,
            _background: Background::spawn("fake-anthropic", listener, app),
        }
    }

    /// Snapshot of every `POST /v1/messages` answered so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.requests.lock().expect("lock").clone()
    }

    /// The environment the real `claude` CLI needs to talk to this fake, to be applied on top
    /// of `env_clear()` (keep `PATH` yourself). `home` may be an empty scratch directory:
    /// Claude Code 2.1.330 needs no onboarding state, `~/.claude.json` or settings file in
    /// `-p` mode with an API key.
    pub fn claude_env(&self, home: &Path) -> Vec<(&'static str, String)> {
        vec![
            ("HOME", home.to_string_lossy().into_owned()),
            ("ANTHROPIC_BASE_URL", self.base_url.clone()),
            ("ANTHROPIC_API_KEY", "sk-ant-fake-000".to_owned()),
            // A failed request is otherwise retried up to 10 times with backoff (even 401s).
            ("CLAUDE_CODE_MAX_RETRIES", "0".to_owned()),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".to_owned()),
            ("DISABLE_TELEMETRY", "1".to_owned()),
        ]
    }

    /// `METHOD uri` of every request that hit a path other than `POST /v1/messages`.
    pub fn stray_requests(&self) -> Vec<String> {
        self.shared.stray.lock().expect("lock").clone()
    }
}

impl Shared {
    /// The fault step for `turn`'s next request, while its scripted count lasts (a
    /// pass-specific fault first, then an any-pass one).
    fn take_fault(&self, turn: &Turn) -> Option<Step> {
        let keys = [
            turn.pass.map(|p| key(&turn.role, turn.round, Some(p))),
            Some(key(&turn.role, turn.round, None)),
        ];
        let mut hits = self.fault_hits.lock().expect("lock");
        for k in keys.into_iter().flatten() {
            if let Some((n, step)) = self.script.faults.get(&k) {
                let used = hits.entry(k).or_insert(0);
                if *used < *n {
                    *used += 1;
                    return Some(step.clone());
                }
            }
        }
        None
    }

    /// Bills `body` as the real API does with prompt caching (see [`Bill`]): the longest
    /// prefix cached by an earlier request and readable at `arrived` is read; the rest up to
    /// the last `cache_control` breakpoint is written (readable from `ready` on); what
    /// follows the last breakpoint is plain input.
    fn bill(&self, body: &Value, arrived: Instant, ready: Instant) -> Bill {
        let segs = segments(body);
        let mut cum = Vec::with_capacity(segs.len() + 1);
        cum.push(0u64);
        for s in &segs {
            cum.push(cum.last().copied().unwrap_or(0) + s.tokens);
        }
        let total = cum.last().copied().unwrap_or(0);
        // `ends[i]`: the prefix of blocks 0..=i ends at boundary i + 1.
        let last_bp = segs.iter().rposition(|s| s.breakpoint).map(|i| i + 1);
        let mut cache = self.cache.lock().expect("lock");
        let read_end = match last_bp {
            Some(last) => (1..=last)
                .rev()
                .find(|&e| {
                    cache
                        .get(&segs[e - 1].prefix)
                        .is_some_and(|at| *at <= arrived)
                })
                .unwrap_or(0),
            None => 0,
        };
        let mut write_end = read_end;
        for (i, s) in segs.iter().enumerate() {
            let end = i + 1;
            if s.breakpoint && end > read_end && cum[end] >= self.script.min_cacheable {
                cache.entry(s.prefix).or_insert(ready);
                write_end = end;
            }
        }
        let cache_read = cum[read_end];
        let cache_write = cum[write_end] - cum[read_end];
        Bill {
            input: total - cache_read - cache_write,
            cache_write,
            cache_read,
            output: 0,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Prompt caching
// ---------------------------------------------------------------------------------------------

/// What one request cost, in tokens (≈ bytes / 4 of each block's text), billed like the real
/// API's prompt caching: `cache_read` at 0.1×, `cache_write` at 1.25×, `input` at 1×.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Bill {
    /// Uncached input tokens (after the last breakpoint, or never cached).
    pub input: u64,
    /// Input tokens written to the cache.
    pub cache_write: u64,
    /// Input tokens read from the cache.
    pub cache_read: u64,
    /// Output tokens of the response.
    pub output: u64,
}

impl Bill {
    /// Every input token sent, however billed.
    pub fn sent(&self) -> u64 {
        self.input + self.cache_write + self.cache_read
    }

    /// Billed-equivalent input tokens: uncached 1.0×, cache write 1.25×, cache read 0.1×.
    pub fn billed_input(&self) -> f64 {
        self.input as f64 + 1.25 * self.cache_write as f64 + 0.1 * self.cache_read as f64
    }
}

/// Tokens of a text: ≈ bytes / 4, rounded up.
pub fn tokens(text: &str) -> u64 {
    (text.len() as u64).div_ceil(4)
}

/// One block of the cacheable prefix (API order: tools, system, messages).
struct Segment {
    /// sha256 of the previous segment's `prefix` and this block (without `cache_control`).
    prefix: [u8; 32],
    tokens: u64,
    /// Carries `cache_control`.
    breakpoint: bool,
}

/// Tokens of one content block: its text, a tool call's name and input, a tool result's
/// text; anything else its JSON.
fn block_tokens(block: &Value) -> u64 {
    match block.get("type").and_then(Value::as_str) {
        Some("text") => tokens(block["text"].as_str().unwrap_or_default()),
        Some("tool_use") => {
            tokens(block["name"].as_str().unwrap_or_default()) + tokens(&block["input"].to_string())
        }
        Some("tool_result") => content_tokens(&block["content"]),
        _ => tokens(&block.to_string()),
    }
}

fn content_tokens(content: &Value) -> u64 {
    match content {
        Value::String(s) => tokens(s),
        Value::Array(parts) => parts.iter().map(block_tokens).sum(),
        other => tokens(&other.to_string()),
    }
}

fn segments(body: &Value) -> Vec<Segment> {
    use sha2::{Digest, Sha256};
    let mut out: Vec<Segment> = Vec::new();
    let mut push = |tag: &str, block: &Value, tokens: u64| {
        let breakpoint = block.get("cache_control").is_some_and(|c| !c.is_null());
        let mut clean = block.clone();
        if let Some(o) = clean.as_object_mut() {
            o.remove("cache_control");
        }
        let mut h = Sha256::new();
        if let Some(prev) = out.last() {
            h.update(prev.prefix);
        }
        h.update(tag.as_bytes());
        h.update(clean.to_string().as_bytes());
        out.push(Segment {
            prefix: h.finalize().into(),
            tokens,
            breakpoint,
        });
    };
    for tool in body["tools"].as_array().into_iter().flatten() {
        push("tool", tool, tokens(&tool.to_string()));
    }
    match &body["system"] {
        Value::String(s) => push("system", &json!({"type": "text", "text": s}), tokens(s)),
        Value::Array(blocks) => {
            for b in blocks {
                push("system", b, block_tokens(b));
            }
        }
        _ => {}
    }
    for m in body["messages"].as_array().into_iter().flatten() {
        let role = m["role"].as_str().unwrap_or_default();
        match &m["content"] {
            Value::String(s) => push(role, &json!({"type": "text", "text": s}), tokens(s)),
            Value::Array(blocks) => {
                for b in blocks {
                    push(role, b, block_tokens(b));
                }
            }
            _ => {}
        }
    }
    out
}

async fn not_found(
    State(shared): State<Arc<Shared>>,
    method: axum::http::Method,
    uri: Uri,
) -> Response {
    shared
        .stray
        .lock()
        .expect("lock")
        .push(format!("{method} {uri}"));
    error_response(
        StatusCode::NOT_FOUND,
        "not_found_error",
        &format!("fake-anthropic: no route for {method} {uri}"),
    )
}

fn error_response(status: StatusCode, kind: &str, message: &str) -> Response {
    let body = json!({"type": "error", "error": {"type": kind, "message": message}});
    (
        status,
        [("content-type", "application/json")],
        body.to_string(),
    )
        .into_response()
}

async fn messages(
    State(shared): State<Arc<Shared>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let arrived = Instant::now();
    let body: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => {
            return error_response(
                StatusCode::BAD_REQUEST,
                "invalid_request_error",
                &format!("fake-anthropic: body is not JSON: {e}"),
            )
        }
    };
    let model = body
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let turn = decode_turn(&body);
    let step = step_index(&body);
    let (mut played, scripted) = match &turn {
        Some(t) => shared.script.step_for(t, step),
        None => (shared.script.session_step(step), false),
    };
    if let Some(fault) = turn.as_ref().and_then(|t| shared.take_fault(t)) {
        played = fault;
    }
    // Delays nest; the step under them is what is played.
    let mut delay = shared.script.latency;
    let mut inner = played.clone();
    while let Step::Delay(d, next) = inner {
        delay += d;
        inner = *next;
    }
    let review = turn.as_ref().and_then(|t| t.target.as_ref()).map(|t| {
        let mut seen = shared.reviews.lock().expect("lock");
        match seen.iter().position(|s| *s == t.sha256) {
            Some(i) => i,
            None => {
                seen.push(t.sha256.clone());
                seen.len() - 1
            }
        }
    });
    let fails = matches!(
        inner,
        Step::HttpError { .. } | Step::RateLimited { .. } | Step::CutStream
    );
    let bill = if fails {
        Bill::default()
    } else {
        shared.bill(&body, arrived, arrived + delay)
    };
    let index = {
        let mut requests = shared.requests.lock().expect("lock");
        requests.push(RecordedRequest {
            uri: uri.to_string(),
            headers: headers
                .iter()
                .map(|(k, v)| {
                    (
                        k.as_str().to_owned(),
                        String::from_utf8_lossy(v.as_bytes()).into_owned(),
                    )
                })
                .collect(),
            model: model.clone(),
            body: body.clone(),
            turn: turn.clone(),
            step,
            system: system_text(&body),
            scripted,
            review,
            played: played.clone(),
            bill: bill.clone(),
            arrived,
        });
        requests.len() - 1
    };
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    if let Some((_, gate)) = turn
        .as_ref()
        .and_then(|t| Script::lookup(&shared.script.holds, t))
        .filter(|(at, _)| *at == step)
    {
        let deadline = Instant::now() + std::time::Duration::from_secs(600);
        while crate::fake_llm::gate_matches(gate) == 0 && Instant::now() < deadline {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }

    let (blocks, stop_reason) = match inner {
        Step::HttpError { status, message } => {
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            return error_response(status, error_kind(status.as_u16()), &message);
        }
        Step::RateLimited { retry_after } => {
            let mut r = error_response(
                StatusCode::TOO_MANY_REQUESTS,
                "rate_limit_error",
                "fake-anthropic: rate limited",
            );
            if let Ok(v) = axum::http::HeaderValue::from_str(&retry_after.to_string()) {
                r.headers_mut().insert("retry-after", v);
            }
            return r;
        }
        Step::CutStream => return cut_stream(&model),
        Step::WriteInWorktree { rel, content } => {
            let wt = prompt_worktree(&body).unwrap_or_default();
            let input = json!({"file_path": format!("{wt}/{rel}"), "content": content});
            (
                vec![Block::ToolUse {
                    name: "Write".to_owned(),
                    input,
                }],
                None,
            )
        }
        other => {
            let target = turn
                .as_ref()
                .and_then(|t| t.target.as_ref())
                .map(|t| t.path.clone());
            let answer = turn
                .as_ref()
                .map(|t| shared.script.answer_for(t, review))
                .unwrap_or_else(|| "ok".to_owned());
            let stop = match &other {
                Step::Refusal(_) => Some("refusal"),
                Step::MaxTokens(_) => Some("max_tokens"),
                _ => None,
            };
            (step_blocks(other, target.as_deref(), &answer), stop)
        }
    };

    let n = shared.next_id.fetch_add(1, Ordering::Relaxed);
    let mut content = Vec::new();
    for b in blocks {
        content.push(match b {
            Block::Text(text) => json!({"type": "text", "text": text}),
            Block::ToolUse { name, input } => {
                let id = shared.next_id.fetch_add(1, Ordering::Relaxed);
                json!({"type": "tool_use", "id": format!("toolu_fake_{id}"), "name": name, "input": input})
            }
        });
    }
    let stop_reason = stop_reason.unwrap_or(if content.iter().any(|c| c["type"] == "tool_use") {
        "tool_use"
    } else {
        "end_turn"
    });
    let msg_id = format!("msg_fake_{n}");
    let request_id = format!("req_fake_{n}");
    let output_tokens = content.iter().map(block_tokens).sum::<u64>().max(1);
    if let Some(r) = shared.requests.lock().expect("lock").get_mut(index) {
        r.bill.output = output_tokens;
    }
    let usage = json!({
        "input_tokens": bill.input,
        "cache_creation_input_tokens": bill.cache_write,
        "cache_read_input_tokens": bill.cache_read,
        "output_tokens": output_tokens,
    });

    if body.get("stream").and_then(Value::as_bool) != Some(true) {
        let message = json!({
            "id": msg_id, "type": "message", "role": "assistant", "model": model,
            "content": content, "stop_reason": stop_reason, "stop_sequence": null,
            "usage": usage,
        });
        return (
            StatusCode::OK,
            [
                ("content-type", "application/json"),
                ("request-id", request_id.as_str()),
            ],
            message.to_string(),
        )
            .into_response();
    }

    let mut start_usage = usage;
    start_usage["output_tokens"] = json!(1);
    let mut sse = String::new();
    let mut event = |name: &str, data: Value| {
        sse.push_str(&format!("event: {name}\ndata: {data}\n\n"));
    };
    event(
        "message_start",
        json!({"type": "message_start", "message": {
            "id": msg_id, "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": start_usage,
        }}),
    );
    for (index, block) in content.iter().enumerate() {
        let (start, delta) = if block["type"] == "tool_use" {
            (
                json!({"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}),
                json!({"type": "input_json_delta", "partial_json": block["input"].to_string()}),
            )
        } else {
            (
                json!({"type": "text", "text": ""}),
                json!({"type": "text_delta", "text": block["text"]}),
            )
        };
        event(
            "content_block_start",
            json!({"type": "content_block_start", "index": index, "content_block": start}),
        );
        event(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": index, "delta": delta}),
        );
        event(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        );
    }
    event(
        "message_delta",
        json!({"type": "message_delta",
               "delta": {"stop_reason": stop_reason, "stop_sequence": null},
               "usage": {"output_tokens": output_tokens}}),
    );
    event("message_stop", json!({"type": "message_stop"}));

    (
        StatusCode::OK,
        [
            ("content-type", "text/event-stream"),
            ("cache-control", "no-cache"),
            ("request-id", request_id.as_str()),
        ],
        sse,
    )
        .into_response()
}

/// The Anthropic error `type` of an HTTP status.
fn error_kind(status: u16) -> &'static str {
    match status {
        400 => "invalid_request_error",
        401 => "authentication_error",
        402 => "billing_error",
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        529 => "overloaded_error",
        _ => "api_error",
    }
}

/// A 200 SSE response that starts a message and a text block, then breaks off: the body
/// stream fails, so the connection is dropped mid-message.
fn cut_stream(model: &str) -> Response {
    let start = json!({"type": "message_start", "message": {
        "id": "msg_fake_cut", "type": "message", "role": "assistant", "model": model,
        "content": [], "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": 1, "output_tokens": 1}}});
    let block = json!({"type": "content_block_start", "index": 0,
        "content_block": {"type": "text", "text": ""}});
    let head = format!(
        "event: message_start\ndata: {start}\n\nevent: content_block_start\ndata: {block}\n\n"
    );
    let chunks: Vec<Result<Bytes, std::io::Error>> = vec![
        Ok(Bytes::from(head)),
        Err(std::io::Error::new(
            std::io::ErrorKind::ConnectionReset,
            "fake-anthropic: stream cut",
        )),
    ];
    let body = axum::body::Body::from_stream(futures::stream::iter(chunks));
    (
        StatusCode::OK,
        [("content-type", "text/event-stream")],
        body,
    )
        .into_response()
}

/// Expands a step into content blocks. `target` is the prompt's target path, `answer` the
/// scripted answer text.
fn step_blocks(step: Step, target: Option<&str>, answer: &str) -> Vec<Block> {
    let tool = |name: &str, input: Value| Block::ToolUse {
        name: name.to_owned(),
        input,
    };
    let path_str = |p: &Path| p.to_string_lossy().into_owned();
    match step {
        Step::ReadTarget => match target {
            Some(t) => vec![tool("Read", json!({"file_path": t}))],
            // No target tag: nothing to read, answer directly.
            None => vec![Block::Text(answer.to_owned())],
        },
        Step::Read(p) => vec![tool("Read", json!({"file_path": path_str(&p)}))],
        Step::Grep { pattern, path } => vec![tool(
            "Grep",
            json!({"pattern": pattern, "path": path_str(&path), "output_mode": "content", "-n": true}),
        )],
        Step::Glob { pattern, path } => vec![tool(
            "Glob",
            json!({"pattern": pattern, "path": path_str(&path)}),
        )],
        Step::Tool { name, input } => vec![Block::ToolUse { name, input }],
        Step::Text(t) => vec![Block::Text(t)],
        Step::Answer => vec![Block::Text(answer.to_owned())],
        Step::Blocks(b) => b,
        Step::Refusal(t) => vec![Block::Text(t)],
        Step::MaxTokens(n) => vec![Block::Text(cut_at(answer, n).0.to_owned())],
        Step::AnswerRest(n) => vec![Block::Text(cut_at(answer, n).1.to_owned())],
        // Played by the handler, which knows the request's worktree.
        Step::WriteInWorktree { .. } => vec![],
        // Handled by the caller.
        Step::HttpError { .. } | Step::RateLimited { .. } | Step::Delay(..) | Step::CutStream => {
            Vec::new()
        }
    }
}

/// `text` split at byte `n` (moved back to a char boundary).
fn cut_at(text: &str, n: usize) -> (&str, &str) {
    let mut n = n.min(text.len());
    while !text.is_char_boundary(n) {
        n -= 1;
    }
    text.split_at(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_header_with_and_without_pass() {
        assert_eq!(
            parse_header_line("[AR Round 2 — FULL] Enthusiast (pass 3/4)"),
            Some(Header {
                round: 2,
                mode: "FULL".into(),
                role: "Enthusiast".into(),
                pass: Some((3, 4))
            })
        );
        assert_eq!(
            parse_header_line("  [AR Round 10 — LIGHTWEIGHT] Judge"),
            Some(Header {
                round: 10,
                mode: "LIGHTWEIGHT".into(),
                role: "Judge".into(),
                pass: None
            })
        );
        assert_eq!(parse_header_line("[AR Round x — FULL] Judge"), None);
    }

    #[test]
    fn decodes_turn_from_block_content_after_system_reminder() {
        let body = json!({
            "model": "m",
            "system": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
            "messages": [
                {"role": "system", "content": "env"},
                {"role": "user", "content": [
                    {"type": "text", "text": "<system-reminder>x</system-reminder>"},
                    {"type": "text", "text": "[AR Round 1 — LIGHTWEIGHT] Adversary\n<target path=\"/a/b &amp; c.rs\" kind=\"file\" sha256=\"ab\" />"}
                ]},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "Read", "input": {}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "[AR Round 9 — X] Fake"}]},
            ]
        });
        let turn = decode_turn(&body).expect("turn");
        assert_eq!(
            (turn.role.as_str(), turn.round, turn.pass),
            ("Adversary", 1, None)
        );
        let target = turn.target.expect("target");
        assert_eq!(target.path, "/a/b & c.rs");
        assert_eq!(
            (target.kind.as_str(), target.sha256.as_str()),
            ("file", "ab")
        );
        assert_eq!(step_index(&body), 1);
        assert_eq!(system_text(&body), "a\nb");
    }

    #[test]
    fn script_lookup_prefers_pass_and_defaults() {
        let script = Script::new()
            .answer("Enthusiast", 1, json!({"a": 1}))
            .answer_pass("Enthusiast", 1, 2, json!({"a": 2}))
            .steps("Judge", 1, vec![Step::Text("x".into())]);
        let turn = |role: &str, pass| Turn {
            role: role.into(),
            round: 1,
            mode: "FULL".into(),
            pass,
            passes: Some(2),
            target: None,
        };
        assert_eq!(
            script.answer_for(&turn("Enthusiast", Some(1)), None),
            r#"{"a":1}"#
        );
        assert_eq!(
            script.answer_for(&turn("Enthusiast", Some(2)), None),
            r#"{"a":2}"#
        );
        let script = script.answer_review(1, "Enthusiast", 1, json!({"a": 3}));
        assert_eq!(
            script.answer_for(&turn("Enthusiast", Some(1)), Some(1)),
            r#"{"a":3}"#
        );
        assert_eq!(
            script.answer_for(&turn("Enthusiast", Some(1)), Some(0)),
            r#"{"a":1}"#
        );
        assert_eq!(
            script.step_for(&turn("Enthusiast", None), 0),
            (Step::ReadTarget, true)
        );
        assert_eq!(
            script.step_for(&turn("Judge", None), 0),
            (Step::Text("x".into()), true)
        );
        assert_eq!(
            script.step_for(&turn("Judge", None), 5),
            (Step::Answer, true)
        );
        assert_eq!(
            script.step_for(&turn("Nobody", None), 1),
            (Step::Answer, false)
        );
    }

    /// Minimal HTTP/1.1 exchange over a raw socket (no HTTP client among the dependencies).
    fn http(fake: &FakeAnthropic, method: &str, path: &str, body: &str) -> (u16, String, String) {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect(fake.addr).expect("connect");
        write!(
            s,
            "{method} {path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n\
             connection: close\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        )
        .expect("write");
        let mut out = String::new();
        s.read_to_string(&mut out).expect("read");
        let (head, body) = out.split_once("\r\n\r\n").expect("http response");
        let status = head[9..12].parse().expect("status");
        (status, head.to_ascii_lowercase(), body.to_owned())
    }

    #[test]
    fn serves_sse_sequence_and_404() {
        let fake = FakeAnthropic::start(Script::new().answer("Judge", 2, json!({"ok": true})));
        let prompt =
            "[AR Round 2 — FULL] Judge\n<target path=\"/x/y.rs\" kind=\"file\" sha256=\"00\" />";
        let req = json!({"model": "m-1", "stream": true, "extra": 1, "messages": [
            {"role": "user", "content": prompt}]});
        let (status, head, body) = http(&fake, "POST", "/v1/messages?beta=true", &req.to_string());
        assert_eq!(status, 200);
        assert!(head.contains("content-type: text/event-stream"), "{head}");
        let events: Vec<(&str, Value)> = body
            .split("\n\n")
            .filter(|c| !c.trim().is_empty())
            .map(|c| {
                let (ev, data) = c.split_once('\n').expect("two lines");
                let ev = ev.strip_prefix("event: ").expect("event line");
                let data = data.strip_prefix("data: ").expect("data line");
                (ev, serde_json::from_str(data).expect("json data"))
            })
            .collect();
        let names: Vec<&str> = events.iter().map(|(e, _)| *e).collect();
        assert_eq!(
            names,
            [
                "message_start",
                "content_block_start",
                "content_block_delta",
                "content_block_stop",
                "message_delta",
                "message_stop"
            ]
        );
        for (name, data) in &events {
            assert_eq!(data["type"], *name);
        }
        assert_eq!(events[0].1["message"]["model"], "m-1");
        assert_eq!(events[1].1["content_block"]["name"], "Read");
        assert!(events[1].1["content_block"]["id"]
            .as_str()
            .is_some_and(|id| id.starts_with("toolu_fake_")));
        assert_eq!(
            events[2].1["delta"],
            json!({"type": "input_json_delta", "partial_json": r#"{"file_path":"/x/y.rs"}"#})
        );
        assert_eq!(events[4].1["delta"]["stop_reason"], "tool_use");

        // Step 1 (one assistant turn in history) → the scripted answer, end_turn.
        let req = json!({"model": "m-1", "stream": false, "messages": [
            {"role": "user", "content": prompt},
            {"role": "assistant", "content": [{"type": "text", "text": "hm"}]},
            {"role": "user", "content": "go on"}]});
        let (status, _, body) = http(&fake, "POST", "/v1/messages", &req.to_string());
        assert_eq!(status, 200);
        let msg: Value = serde_json::from_str(&body).expect("json");
        assert_eq!(
            msg["content"],
            json!([{"type": "text", "text": r#"{"ok":true}"#}])
        );
        assert_eq!(msg["stop_reason"], "end_turn");

        // No arev prompt → plain "ok", end_turn.
        let req = json!({"model": "m-1", "messages": [{"role": "user", "content": "hi"}]});
        let (_, _, body) = http(&fake, "POST", "/v1/messages", &req.to_string());
        let msg: Value = serde_json::from_str(&body).expect("json");
        assert_eq!(msg["content"], json!([{"type": "text", "text": "ok"}]));

        let (status, _, _) = http(&fake, "POST", "/v1/messages/count_tokens", "{}");
        assert_eq!(status, 404);
        assert_eq!(fake.stray_requests(), ["POST /v1/messages/count_tokens"]);
        let reqs = fake.requests();
        assert_eq!(reqs.len(), 3);
        assert!(reqs[2].turn.is_none() && !reqs[2].scripted);
        assert_eq!(
            (reqs[0].role(), reqs[0].round(), reqs[0].step),
            (Some("Judge"), Some(2), 0)
        );
        assert_eq!(reqs[1].step, 1);
    }
}
