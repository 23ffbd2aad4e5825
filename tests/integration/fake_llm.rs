//! Shared scaffolding of the loopback fake model APIs for the Codex and Gemini CLIs
//! (`fake_openai.rs`, `fake_gemini.rs`): the per-role script, the request log and the
//! server thread. Prompt decoding reuses `fake_anthropic`'s helpers.
//!
//! A [`Script`] maps (role, round, optional pass) to a list of [`Step`]s; step `i` answers
//! the request that already carries `i` tool results. Without explicit steps: step 0 reads
//! the target (each fake decides how: a Codex shell `nl -ba <path>`, a Gemini `read_file`),
//! every later step answers with the scripted answer (or `{}`).
//!
//! Both fakes bill prompt caching the way their real API does it automatically
//! ([`PromptCache`]): a request's input is its model-visible text in API order (≈ bytes / 4
//! tokens), and the part of it that repeats the start of an earlier request in the same
//! cache scope is reported as cached tokens, read at the API's discount.

#![allow(dead_code)]

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Router;
use serde_json::Value;

use crate::background::{bind, Background};
pub use crate::fake_anthropic::{parse_header_line, parse_target_tag, Turn};

/// One scripted model response.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// The backend's own "read the target" tool call.
    ReadTarget,
    /// A tool call by name with JSON arguments; `{target}` in string arguments is replaced
    /// by the target path.
    Tool { name: String, args: Value },
    /// Final text = the scripted answer.
    Answer,
    /// Final text, verbatim.
    Text(String),
    /// An HTTP error instead of a response (the vendor's error body for `status`).
    HttpError { status: u16, message: String },
    /// HTTP 429 with a `retry-after` header of this many seconds.
    RateLimited { retry_after: u64 },
    /// The scripted answer cut after this many characters at the output token limit
    /// (OpenAI: `response.incomplete`, `max_output_tokens`; Gemini: `finishReason:
    /// MAX_TOKENS`).
    MaxTokens(usize),
    /// The API's safety filter stops the answer (OpenAI: `response.incomplete`,
    /// `content_filter`; Gemini: `finishReason: SAFETY`, no content).
    Blocked,
    /// A stream that ends without finishing (OpenAI: no `response.completed`; Gemini: no
    /// finish reason).
    CutStream,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Key {
    role: String,
    round: u32,
    pass: Option<u32>,
}

/// What the fake model does, keyed by (role, round, optional pass).
#[derive(Debug, Clone, Default)]
pub struct Script {
    answers: HashMap<Key, String>,
    steps: HashMap<Key, Vec<Step>>,
    /// (role, round, pass) → (step index or any, how many requests, the fault they play).
    faults: HashMap<Key, (Option<usize>, usize, Step)>,
    /// (role, round) → (step index, the gate): that request's response waits until the
    /// gate opens ([`Script::hold`], [`Script::hold_for_request`]).
    holds: HashMap<Key, (usize, Gate)>,
    /// (role, round) whose requests are held forever once its `fail_first` budget is spent
    /// ([`Script::hold_after_faults`]).
    after_faults: std::collections::HashSet<Key>,
}

/// What a held response waits for.
#[derive(Debug, Clone)]
enum Gate {
    /// A file (a component `*` matches any entry).
    File(std::path::PathBuf),
    /// A request of another (role, round) has arrived.
    Request(Key),
    /// Never: the response waits until the CLI is killed (its request dropped) or the
    /// server stops.
    Never,
}

/// How long a held response waits for its gate before it is answered anyway (the test's
/// assertion on the order then fails). A CLI killed meanwhile drops its request, and a
/// server dropped at the end of a test waits for no held one (`Background`).
const HOLD_LIMIT: std::time::Duration = std::time::Duration::from_secs(600);

fn key(role: &str, round: u32, pass: Option<u32>) -> Key {
    Key {
        role: role.to_owned(),
        round,
        pass,
    }
}

impl Script {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn answer(mut self, role: &str, round: u32, answer: Value) -> Self {
        self.answers
            .insert(key(role, round, None), answer.to_string());
        self
    }

    pub fn answer_pass(mut self, role: &str, round: u32, pass: u32, answer: Value) -> Self {
        self.answers
            .insert(key(role, round, Some(pass)), answer.to_string());
        self
    }

    pub fn steps(mut self, role: &str, round: u32, steps: Vec<Step>) -> Self {
        self.steps.insert(key(role, round, None), steps);
        self
    }

    /// The first `n` requests of `role` in `round` (one pass, or any with `None`) at step
    /// index `at` (any with `None`) play `step` instead of their scripted step.
    pub fn fail_first(
        mut self,
        role: &str,
        round: u32,
        pass: Option<u32>,
        (at, n): (Option<usize>, usize),
        step: Step,
    ) -> Self {
        self.faults.insert(key(role, round, pass), (at, n, step));
        self
    }

    /// The response to `role`'s request at step `at` in `round` is held until `gate` names a
    /// file (a component `*` matches any entry, as [`gate_matches`] counts
    /// it): the test decides the order of two agents' answers instead of the load, e.g. an
    /// Enthusiast that answers only once arev has recorded the Adversary's answer.
    pub fn hold(mut self, role: &str, round: u32, at: usize, gate: &std::path::Path) -> Self {
        self.holds
            .insert(key(role, round, None), (at, Gate::File(gate.to_path_buf())));
        self
    }

    /// Once `role`'s `fail_first` faults in `round` are all played, its later requests (a
    /// CLI's reconnect) are never answered: a CLI that arev did not stop at its first retry
    /// waits on one until the test's time bound fails, whenever its reconnect is sent.
    pub fn hold_after_faults(mut self, role: &str, round: u32) -> Self {
        self.after_faults.insert(key(role, round, None));
        self
    }

    /// The response to `role`'s request at step `at` in `round` is never given: the CLI waits
    /// on it until arev stops it (e.g. an Adversary that must not end the run first).
    pub fn hold_forever(mut self, role: &str, round: u32, at: usize) -> Self {
        self.holds.insert(key(role, round, None), (at, Gate::Never));
        self
    }

    /// The response to `role`'s request at step `at` in `round` is held until a request of
    /// `other` in `other_round` has arrived: e.g. an Enthusiast's fault that ends the run
    /// only once the Adversary has sent its own request.
    pub fn hold_for_request(
        mut self,
        role: &str,
        round: u32,
        at: usize,
        (other, other_round): (&str, u32),
    ) -> Self {
        self.holds.insert(
            key(role, round, None),
            (at, Gate::Request(key(other, other_round, None))),
        );
        self
    }

    /// The scripted answer's text cut after `n` characters.
    pub fn cut_answer(&self, turn: &Turn, n: usize) -> String {
        self.answer_for(turn).chars().take(n).collect()
    }

    fn lookup<'a, T>(map: &'a HashMap<Key, T>, turn: &Turn) -> Option<&'a T> {
        turn.pass
            .and_then(|p| map.get(&key(&turn.role, turn.round, Some(p))))
            .or_else(|| map.get(&key(&turn.role, turn.round, None)))
    }

    /// The step for `turn` at `step`.
    pub fn step_for(&self, turn: &Turn, step: usize) -> Step {
        match Self::lookup(&self.steps, turn) {
            Some(list) => list.get(step).cloned().unwrap_or(Step::Answer),
            None if step == 0 => Step::ReadTarget,
            None => Step::Answer,
        }
    }

    pub fn answer_for(&self, turn: &Turn) -> String {
        Self::lookup(&self.answers, turn)
            .cloned()
            .unwrap_or_else(|| "{}".to_owned())
    }
}

/// The arev turn decoded from the user texts of a request (the last header line wins).
pub fn turn_from_texts<'a>(texts: impl IntoIterator<Item = &'a str>) -> Option<Turn> {
    let mut found = None;
    for text in texts {
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
    found
}

/// `v` with `{target}` replaced by the target path and `{target_dir}` by its directory (a
/// Prover's scratch worktree, for a file target at its root).
pub fn fill_target(v: &Value, target: &str) -> Value {
    match v {
        Value::String(s) => {
            let dir = std::path::Path::new(target)
                .parent()
                .map(|p| p.display().to_string())
                .unwrap_or_default();
            Value::String(s.replace("{target_dir}", &dir).replace("{target}", target))
        }
        Value::Array(a) => Value::Array(a.iter().map(|x| fill_target(x, target)).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, x)| (k.clone(), fill_target(x, target)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// How many files `pattern` names (a component that is exactly `*` matches any directory
/// entry), as the fake agent's `wait_for` and the fake APIs' holds count them: a gate is
/// open once this reaches the count it waits for.
pub fn gate_matches(pattern: &std::path::Path) -> usize {
    use std::path::{Component, PathBuf};
    let mut found = vec![PathBuf::new()];
    for c in pattern.components() {
        found = match c {
            Component::Normal(name) if name == "*" => found
                .iter()
                .flat_map(|dir| {
                    std::fs::read_dir(dir)
                        .into_iter()
                        .flatten()
                        .flatten()
                        .map(|e| dir.join(e.file_name()))
                        .collect::<Vec<_>>()
                })
                .collect(),
            other => found.into_iter().map(|p| p.join(other)).collect(),
        };
    }
    found.iter().filter(|p| p.exists()).count()
}

/// One request the fake answered.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub uri: String,
    pub headers: Vec<(String, String)>,
    pub model: String,
    pub body: Value,
    pub turn: Option<Turn>,
    pub step: usize,
    pub played: Step,
    /// When the request arrived.
    pub arrived: std::time::Instant,
    /// The input tokens the fake billed, and how many of them it reported as cached.
    pub bill: Bill,
}

/// What a fake billed for one request's input.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Bill {
    /// Input tokens (≈ bytes / 4 of the model-visible text), cached ones included, as the
    /// real APIs count them (OpenAI `input_tokens`, Gemini `promptTokenCount`).
    pub input: u64,
    /// Of those, the tokens read from the prompt cache (OpenAI
    /// `input_tokens_details.cached_tokens`, Gemini `cachedContentTokenCount`).
    pub cached: u64,
}

/// How an API's automatic prompt cache matches: the shortest prefix it caches and the step
/// in which a cached prefix grows.
#[derive(Debug, Clone, Copy)]
pub struct CacheRule {
    pub min_tokens: u64,
    pub increment: u64,
}

/// The automatic prompt cache of a fake API: every request's model-visible text, by cache
/// scope. A later request in the same scope reads from the cache the longest start it shares
/// with an earlier one, counted in whole `increment`s, when that start is at least
/// `min_tokens` long; a request's prefix is cached once it has been answered (the fakes
/// answer at once, so: once it has arrived).
#[derive(Debug, Default)]
pub struct PromptCache {
    seen: Mutex<Vec<(String, String)>>,
}

impl PromptCache {
    /// Bill `text` (the request's model-visible text in API order) in `scope`, and cache it.
    pub fn bill(&self, scope: &str, text: &str, rule: CacheRule) -> Bill {
        let input = crate::fake_anthropic::tokens(text);
        let mut seen = self.seen.lock().expect("lock");
        let shared = seen
            .iter()
            .filter(|(s, _)| s == scope)
            .map(|(_, t)| common_prefix(t, text))
            .max()
            .unwrap_or(0);
        let shared = (shared as u64) / 4;
        let cached = if shared >= rule.min_tokens && input >= rule.min_tokens {
            shared - shared % rule.increment.max(1)
        } else {
            0
        };
        seen.push((scope.to_owned(), text.to_owned()));
        Bill { input, cached }
    }
}

/// Length in bytes of the common start of `a` and `b`.
fn common_prefix(a: &str, b: &str) -> usize {
    a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count()
}

impl Recorded {
    pub fn role(&self) -> Option<&str> {
        self.turn.as_ref().map(|t| t.role.as_str())
    }
    pub fn round(&self) -> Option<u32> {
        self.turn.as_ref().map(|t| t.round)
    }
    pub fn pass(&self) -> Option<u32> {
        self.turn.as_ref().and_then(|t| t.pass)
    }
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// What one request to a fake plays: the decoded arev turn, the scripted step and the
/// target path of the turn (empty without one).
pub struct Played {
    pub turn: Option<Turn>,
    pub step: Step,
    pub target: String,
    /// It plays a `fail_first` fault.
    pub faulted: bool,
}

/// State shared by a fake's handlers.
pub struct Shared {
    pub script: Script,
    pub requests: Mutex<Vec<Recorded>>,
    pub stray: Mutex<Vec<String>>,
    pub next_id: std::sync::atomic::AtomicU64,
    /// Requests each `fail_first` fault has played so far.
    pub faults_played: Mutex<HashMap<Key, usize>>,
    /// The API's automatic prompt cache.
    pub cache: PromptCache,
}

impl Shared {
    /// Decode the turn from the request's user `texts`, pick the step for `step` (plain
    /// text "ok" when the request carries no arev prompt), and record the request with
    /// what it was billed.
    #[allow(clippy::too_many_arguments)]
    pub fn play(
        &self,
        uri: &axum::http::Uri,
        headers: &axum::http::HeaderMap,
        model: &str,
        body: &Value,
        texts: &[String],
        step: usize,
        bill: Bill,
    ) -> Played {
        let turn = turn_from_texts(texts.iter().map(String::as_str));
        let fault = turn.as_ref().and_then(|t| self.fault_for(t, step));
        let faulted = fault.is_some();
        let played = match (&turn, fault) {
            (_, Some(f)) => f,
            (Some(t), None) => self.script.step_for(t, step),
            (None, None) => Step::Text("ok".into()),
        };
        self.requests.lock().expect("lock").push(Recorded {
            uri: uri.to_string(),
            headers: header_pairs(headers),
            model: model.to_owned(),
            body: body.clone(),
            turn: turn.clone(),
            step,
            played: played.clone(),
            arrived: std::time::Instant::now(),
            bill,
        });
        let target = turn
            .as_ref()
            .and_then(|t| t.target.as_ref())
            .map(|t| t.path.clone())
            .unwrap_or_default();
        Played {
            turn,
            step: played,
            target,
            faulted,
        }
    }
}

impl Shared {
    /// Waits while `turn`'s request at `step` is held ([`Script::hold`]) and its gate shut,
    /// or for good when it comes after its faults ([`Script::hold_after_faults`]; `faulted`:
    /// it plays one).
    pub async fn hold(&self, turn: Option<&Turn>, step: usize, faulted: bool) {
        let after_faults = turn.is_some_and(|t| {
            let k = key(&t.role, t.round, None);
            !faulted
                && self.script.after_faults.contains(&k)
                && self
                    .faults_played
                    .lock()
                    .expect("lock")
                    .iter()
                    .any(|(f, n)| {
                        f.role == k.role
                            && f.round == k.round
                            && self
                                .script
                                .faults
                                .get(f)
                                .is_some_and(|(_, max, _)| n >= max)
                    })
        });
        if after_faults {
            tokio::time::sleep(HOLD_LIMIT).await;
            return;
        }
        let Some((at, gate)) = turn.and_then(|t| Script::lookup(&self.script.holds, t)) else {
            return;
        };
        if *at != step {
            return;
        }
        let open = || match gate {
            Gate::File(path) => gate_matches(path) > 0,
            Gate::Request(k) => self
                .requests
                .lock()
                .expect("lock")
                .iter()
                .any(|r| r.role() == Some(k.role.as_str()) && r.round() == Some(k.round)),
            Gate::Never => false,
        };
        let deadline = std::time::Instant::now() + HOLD_LIMIT;
        while !open() && std::time::Instant::now() < deadline {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }

    /// The fault `turn` plays at `step`, counted, while its `fail_first` budget lasts.
    fn fault_for(&self, turn: &Turn, step: usize) -> Option<Step> {
        let k = [turn.pass, None]
            .into_iter()
            .map(|p| key(&turn.role, turn.round, p))
            .find(|k| self.script.faults.contains_key(k))?;
        let (at, n, fault) = &self.script.faults[&k];
        if at.is_some_and(|a| a != step) {
            return None;
        }
        let mut played = self.faults_played.lock().expect("lock");
        let count = played.entry(k).or_insert(0);
        if *count >= *n {
            return None;
        }
        *count += 1;
        Some(fault.clone())
    }
}

/// A fake server on `127.0.0.1:<random port>`, serving from its own thread; stops on drop.
pub struct Server {
    pub addr: SocketAddr,
    pub shared: Arc<Shared>,
    _background: Background,
}

impl Server {
    pub fn start(name: &str, script: Script, app: impl FnOnce(Arc<Shared>) -> Router) -> Server {
        let (listener, addr) = bind();
        let shared = Arc::new(Shared {
            script,
            requests: Mutex::new(Vec::new()),
            stray: Mutex::new(Vec::new()),
            next_id: std::sync::atomic::AtomicU64::new(1),
            faults_played: Mutex::new(HashMap::new()),
            cache: PromptCache::default(),
        });
        let app = app(Arc::clone(&shared));
        Server {
            addr,
            shared,
            _background: Background::spawn(name, listener, app),
        }
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.shared.requests.lock().expect("lock").clone()
    }

    pub fn stray_requests(&self) -> Vec<String> {
        self.shared.stray.lock().expect("lock").clone()
    }

    pub fn next_id(&self) -> u64 {
        self.shared
            .next_id
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    }
}

/// Header pairs with lower-cased names.
pub fn header_pairs(h: &axum::http::HeaderMap) -> Vec<(String, String)> {
    h.iter()
        .map(|(k, v)| {
            (
                k.as_str().to_owned(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect()
}
