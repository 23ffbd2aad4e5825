//! Cost benchmark (docs/contracts.md §19.1, issue #35): what one review costs in model tokens, driven the
//! way a user drives it. The REAL Claude Code CLI (`AREV_TEST_CLAUDE_BIN`) reviews a 207-line
//! file with the default panel through the real `arev` binary, against the loopback fake
//! Anthropic API of the integration tests (`tests/integration/fake_anthropic.rs`, included
//! here by path), which bills prompt caching like the real API: the prefix up to a request's
//! `cache_control` breakpoint is cached (written at 1.25×, read by later requests at 0.1×,
//! readable only once the writing request's response has started; prefixes under
//! 1,024 tokens are not cached, as for Opus), the rest is plain input (1.0×). Tokens are
//! ≈ bytes / 4 of each block's text. Its scripted model reads the target once and answers.
//!
//! Printed per agent and for the review: API requests, input tokens sent, billed-equivalent
//! tokens (billed input + output), cost at Opus list price ($5 / $25 per MTok input /
//! output), and the ratio to the minimum: per agent, arev's prompt and role text (the role
//! body, and the Enthusiast's escape checklist), the target's content once, and the answer. Goal (docs/contracts.md §19.1): ≤ 1.3× for the review, ≤ 2
//! requests per read-only agent. A marker planted in the scratch HOME's `~/.claude/CLAUDE.md`
//! must never reach the API (personal context).
//!
//! With `--prove` (docs/prove.md), the confirmed finding then gets a Prover: the same real
//! CLI reads the target, writes a reproducer into its scratch worktree and answers; its row
//! (`r1 Prover (finding F1)`) is priced like the others and counted in the review's total,
//! and arev's own record must show the `prover` role in its cost. Its minimum adds the file
//! it writes to its answer.
//!
//! The same review then runs with the REAL Codex (`AREV_TEST_CODEX_BIN`) and Gemini
//! (`AREV_TEST_GEMINI_BIN`) CLIs against their fakes (`fake_openai.rs`, `fake_gemini.rs`),
//! which bill automatic prompt caching like the real APIs (OpenAI: prefixes ≥ 1,024 tokens
//! per `prompt_cache_key`, read at 0.1×; Gemini 2.5 implicit caching: ≥ 2,048 tokens, read
//! at 0.25×): their tables print requests, tokens sent (≈ bytes / 4 of the model-visible
//! request, what those fakes report as usage), cached tokens, billed-equivalent, cost and
//! the ratio to the minimum. A marker planted in the scratch HOME's personal context files
//! (`plant_personal_context`) is searched for in every request. The REAL OpenCode CLI
//! (`AREV_TEST_OPENCODE_BIN`) runs it too, on the same fake's Chat Completions side as a
//! self-hosted endpoint (`fake_chat.rs`, the same caching). A backend whose variable is
//! unset is skipped.
//!
//! Run: `AREV_TEST_CLAUDE_BIN=…/claude cargo bench --features fake-agent --bench cost`.
//! `AREV_COST_LATENCY_MS` sets the fake model's latency (default 800 ms);
//! `AREV_COST_MIN_CACHEABLE` the smallest cached prefix in tokens (default 1024);
//! `AREV_COST_VERBOSE=1` prints every request's prefix layout; `AREV_COST_DUMP=<file>`
//! writes every request body there, one per line.
// A benchmark is test code: a broken fixture may panic.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::print_stdout, clippy::print_stderr)]
// A scenario, read top to bottom (and the fake API it shares with the integration tests).
#![allow(clippy::too_many_lines)]

#[path = "../tests/integration/background.rs"]
mod background;
#[path = "../tests/integration/fake_anthropic.rs"]
mod fake_anthropic;
#[path = "../tests/integration/fake_chat.rs"]
mod fake_chat;
#[path = "../tests/integration/fake_gemini.rs"]
mod fake_gemini;
#[path = "../tests/integration/fake_llm.rs"]
mod fake_llm;
#[path = "../tests/integration/fake_openai.rs"]
mod fake_openai;

use fake_anthropic::{tokens, FakeAnthropic, RecordedRequest, Script, Step};
use fake_gemini::FakeGemini;
use fake_openai::FakeOpenAi;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Opus list price, dollars per million tokens.
const INPUT_USD: f64 = 5.0;
const OUTPUT_USD: f64 = 25.0;
/// What `~/.claude/CLAUDE.md` of the scratch HOME says; it must never reach the API.
const PERSONAL_MARKER: &str = "PERSONAL-CONTEXT-MARKER-7f3a";

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .args([
            "-c",
            "user.name=bench",
            "-c",
            "user.email=bench@example.invalid",
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .status()
        .unwrap()
        .success();
    assert!(ok, "git {args:?}");
}

/// A 207-line Rust file: a small parser with a real defect at line 42.
fn target_source() -> String {
    let mut s =
        String::from("//! Key=value configuration parsing.\n\nuse std::collections::HashMap;\n\n");
    s.push_str("/// A parsed configuration.\n#[derive(Debug, Default)]\npub struct Config {\n    pub values: HashMap<String, String>,\n}\n\n");
    s.push_str("impl Config {\n    /// Parses `text`, one `key=value` per line.\n    pub fn parse(text: &str) -> Config {\n        let mut values = HashMap::new();\n        for line in text.lines() {\n            let line = line.trim();\n            if line.is_empty() || line.starts_with('#') {\n                continue;\n            }\n");
    while s.lines().count() < 41 {
        s.push_str("            // (comments and blank lines are skipped above)\n");
    }
    s.push_str("            let (k, v) = line.split_once('=').unwrap();\n");
    s.push_str("            values.insert(k.trim().to_string(), v.trim().to_string());\n        }\n        Config { values }\n    }\n}\n\n");
    let mut i = 0;
    while s.lines().count() < 200 {
        i += 1;
        s.push_str(&format!(
            "/// Reads setting {i} as a number.\npub fn setting_{i}(c: &Config) -> Option<u64> {{\n    c.values.get(\"k{i}\").and_then(|v| v.parse().ok())\n}}\n\n"
        ));
    }
    while s.lines().count() < 207 {
        s.push_str("// end\n");
    }
    s
}

fn finding() -> Value {
    json!({"id": "F1", "severity": "high", "target_type": "code", "file": "src/lib.rs",
        "line": 42, "category": "error-handling",
        "description": "a line without '=' panics the parser instead of being rejected",
        "evidence": "L42: let (k, v) = line.split_once('=').unwrap();",
        "source": "enthusiast", "prior_finding_id": null})
}

/// The scripted model's answer of `role` in `round`: round 1 finds and confirms the defect,
/// round 2 finds nothing.
fn answer(role: &str, round: u32) -> Value {
    match (role, round) {
        ("Enthusiast", 1) => json!({"findings": [finding()]}),
        ("Enthusiast", _) => json!({"findings": []}),
        ("Adversary", _) => json!({"heuristics": [], "safe_zones": []}),
        _ => json!({"rulings": [{"finding_id": "F1", "file": "src/lib.rs", "line": 42,
                "target_type": "code", "final_severity": "high", "winner": "enthusiast",
                "resolution": "confirmed: split_once returns None for a line without '='",
                "edit_instruction": null, "cites": []}],
                "summary": "1 confirmed.", "convergence": false, "next_round_model": null}),
    }
}

/// The Prover's dispatch as the fake API sees it (the prompt's first line).
const PROVER: &str = "Prover (finding F1)";
/// The reproducer the Prover writes, and the argv that runs it.
const REPRO_FILE: &str = "repro_f1.sh";
const REPRO: &str = "#!/bin/sh\n# A line without '=' must be rejected, not panic.\nexit 1\n";

fn prover_answer() -> Value {
    json!({"finding_id": "F1", "files": [REPRO_FILE], "command": ["sh", REPRO_FILE],
           "claim": "Config::parse panics on a line without '='"})
}

fn script() -> Script {
    let mut s = Script::new();
    for (role, round) in [
        ("Enthusiast", 1),
        ("Adversary", 1),
        ("Judge", 1),
        ("Enthusiast", 2),
        ("Adversary", 2),
        ("Judge", 2),
    ] {
        s = s.answer(role, round, answer(role, round));
    }
    s.answer(PROVER, 1, prover_answer()).steps(
        PROVER,
        1,
        vec![
            Step::ReadTarget,
            Step::WriteInWorktree {
                rel: REPRO_FILE.into(),
                content: REPRO.into(),
            },
            Step::Answer,
        ],
    )
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// One agent's dispatches, by (round, role, pass).
#[derive(Default)]
struct Agent {
    requests: usize,
    sent: u64,
    /// Of `sent`, the tokens read from the prompt cache (Codex and Gemini fakes).
    cached: u64,
    billed_input: f64,
    output: u64,
    minimum: u64,
}

impl Agent {
    fn billed(&self) -> f64 {
        self.billed_input + self.output as f64
    }
    fn usd(&self) -> f64 {
        (self.billed_input * INPUT_USD + self.output as f64 * OUTPUT_USD) / 1e6
    }
}

/// Print one row per agent and the review's total (with the cached column when `cached`);
/// returns the total, the most requests one agent made and the billed/minimum ratio.
fn print_table(agents: &BTreeMap<(u32, String, u32), Agent>, cached: bool) -> (Agent, usize, f64) {
    let col = |v: String| {
        if cached {
            format!(" {v:>8}")
        } else {
            String::new()
        }
    };
    println!(
        "{:<22} {:>4} {:>8}{} {:>10} {:>9} {:>8} {:>6}",
        "agent",
        "req",
        "sent",
        col("cached".into()),
        "billed-eq",
        "usd",
        "minimum",
        "ratio"
    );
    let mut total = Agent::default();
    let mut max_req = 0;
    let row = |name: &str, a: &Agent| {
        format!(
            "{name:<22} {:>4} {:>8}{} {:>10.0} {:>9.4} {:>8} {:>5.2}x",
            a.requests,
            a.sent,
            col(a.cached.to_string()),
            a.billed(),
            a.usd(),
            a.minimum,
            a.billed() / a.minimum as f64
        )
    };
    for ((round, role, pass), a) in agents {
        let name = match pass {
            0 => format!("r{round} {role}"),
            p => format!("r{round} {role} p{p}"),
        };
        println!("{}", row(&name, a));
        max_req = max_req.max(a.requests);
        total.requests += a.requests;
        total.sent += a.sent;
        total.cached += a.cached;
        total.billed_input += a.billed_input;
        total.output += a.output;
        total.minimum += a.minimum;
    }
    let ratio = total.billed() / total.minimum as f64;
    println!(
        "{}   (sent/minimum {:.2}x)",
        row("review", &total),
        total.sent as f64 / total.minimum as f64
    );
    (total, max_req, ratio)
}

/// The prompt text arev sent (the user text block holding the `[AR Round` header).
fn prompt_text(r: &RecordedRequest) -> String {
    let Some(messages) = r.body["messages"].as_array() else {
        return String::new();
    };
    for m in messages.iter().filter(|m| m["role"] == "user") {
        let texts: Vec<&str> = match &m["content"] {
            Value::String(s) => vec![s.as_str()],
            Value::Array(b) => b.iter().filter_map(|b| b["text"].as_str()).collect(),
            _ => vec![],
        };
        if let Some(t) = texts.into_iter().find(|t| t.contains("[AR Round ")) {
            return t.to_owned();
        }
    }
    String::new()
}

/// The first line of the escape checklist (heuristics/code-escape-categories.md).
const CHECKLIST_HEADING: &str = "## Escape checklist (code targets)";

fn checklist() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("heuristics/code-escape-categories.md");
    std::fs::read_to_string(path).unwrap()
}

fn role_body(role: &str) -> String {
    // `Prover (finding F1)` → agents/prover.md.
    let name = role.split(' ').next().unwrap_or(role);
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("agents")
        .join(format!("{}.md", name.to_ascii_lowercase()));
    let text = std::fs::read_to_string(path).unwrap();
    arev::round::strip_frontmatter(&text).to_owned()
}

/// Layout of one request's prefix: tokens per part and where the breakpoints are.
fn layout(r: &RecordedRequest) -> String {
    let count = |v: &Value| tokens(&v.to_string());
    let tools: u64 = r.body["tools"]
        .as_array()
        .map_or(0, |t| t.iter().map(count).sum());
    let per_tool: Vec<String> = r.body["tools"]
        .as_array()
        .map(|t| {
            t.iter()
                .map(|t| format!("{}={}", t["name"].as_str().unwrap_or("?"), count(t)))
                .collect()
        })
        .unwrap_or_default();
    let bp = |b: &Value| {
        if b.get("cache_control").is_some() {
            "*"
        } else {
            ""
        }
    };
    let system: Vec<String> = match &r.body["system"] {
        Value::Array(blocks) => blocks
            .iter()
            .map(|b| {
                let t = b["text"].as_str().unwrap_or_default();
                format!("{}{}[{:.30}]", tokens(t), bp(b), t.replace('\n', " "))
            })
            .collect(),
        other => vec![format!("{}", tokens(&other.to_string()))],
    };
    let messages: Vec<String> = r.body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| {
            let parts: Vec<String> = match &m["content"] {
                Value::Array(blocks) => blocks
                    .iter()
                    .map(|b| format!("{}{}", count(b), bp(b)))
                    .collect(),
                other => vec![count(other).to_string()],
            };
            format!("{}:{}", m["role"].as_str().unwrap_or("?"), parts.join("+"))
        })
        .collect();
    format!(
        "tools {tools} ({}) · system {} · messages {} · bill {:?}",
        per_tool.join(","),
        system.join(" "),
        messages.join(" "),
        r.bill
    )
}

/// The real CLI named by `var`, or `None` (that backend skipped, unless
/// `AREV_REQUIRE_REAL_CLIS=1`).
fn real_bin(var: &str) -> Option<std::ffi::OsString> {
    let bin = std::env::var_os(var).filter(|b| !b.is_empty());
    if bin.is_none() {
        assert!(
            std::env::var("AREV_REQUIRE_REAL_CLIS").as_deref() != Ok("1"),
            "AREV_REQUIRE_REAL_CLIS=1 but {var} is unset"
        );
        println!("cost: skipped ({var} unset)");
    }
    bin
}

fn main() {
    if let Some(bin) = real_bin("AREV_TEST_CLAUDE_BIN") {
        claude(&bin, false);
        claude(&bin, true);
    }
    for backend in [Backend::Codex, Backend::Gemini, Backend::OpenCode] {
        if let Some(bin) = real_bin(backend.var()) {
            other(backend, Path::new(&bin));
        }
    }
}

/// An unchanged caller of the target, tracked beside it: the "reads a caller" scenario's
/// Enthusiast reads it (a context file, docs/trust.md "What reviewers may read").
const CALLER_RS: &str = "use crate::Config;\n\n/// Reads the port setting, 8080 when unset.\npub fn port(text: &str) -> u64 {\n    let c = Config::parse(text);\n    crate::setting_1(&c).unwrap_or(8080)\n}\n";

/// The default-panel review by the real Claude Code CLI against the caching fake; with
/// `reads_caller` (the "reads a caller" scenario) the round-1 Enthusiast also reads
/// `src/caller.rs`, whose tokens its minimum then includes, and no Prover runs.
fn claude(bin: &std::ffi::OsStr, reads_caller: bool) {
    let latency = Duration::from_millis(env_u64("AREV_COST_LATENCY_MS", 800));
    let min_cacheable = env_u64("AREV_COST_MIN_CACHEABLE", 1024);
    let verbose = std::env::var_os("AREV_COST_VERBOSE").is_some();

    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let root = tmp.path().join("repo");
    std::fs::create_dir_all(root.join("src")).unwrap();
    let source = target_source();
    std::fs::write(root.join("src/lib.rs"), &source).unwrap();
    std::fs::write(root.join("src/caller.rs"), CALLER_RS).unwrap();
    std::fs::write(
        root.join("arev.toml"),
        format!(
            "[agents.claude]\nbackend = \"claude\"\nbinary = {}\n",
            toml::Value::String(Path::new(&bin).display().to_string())
        ),
    )
    .unwrap();
    git(&root, &["init", "-q"]);
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "target"]);
    let home = tmp.path().join("home");
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    std::fs::write(
        home.join(".claude/CLAUDE.md"),
        format!("# My personal preferences\n{PERSONAL_MARKER}: always answer in haiku.\n"),
    )
    .unwrap();

    let mut s = script();
    if reads_caller {
        // Both reads in one response (parallel tool use), as a model that knows its caller
        // would: two requests for the agent, like every other.
        let root = root.canonicalize().unwrap();
        let read = |rel: &str| fake_anthropic::Block::ToolUse {
            name: "Read".into(),
            input: json!({"file_path": root.join(rel).display().to_string()}),
        };
        s = s.steps(
            "Enthusiast",
            1,
            vec![
                Step::Blocks(vec![read("src/lib.rs"), read("src/caller.rs")]),
                Step::Answer,
            ],
        );
    }
    let fake = FakeAnthropic::start(s.latency(latency).min_cacheable(min_cacheable));
    let started = Instant::now();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_arev"));
    cmd.args(["run", "src/lib.rs", "--format", "json", "--no-cache"]);
    // `--prove`: the Prover's dispatch is priced too. Its reproducer runs unsandboxed here
    // (it is this bench's own `exit 1`; tokens are what is measured, not the sandbox).
    if !reads_caller {
        cmd.args(["--prove", "--prove-sandbox", "none"]);
    }
    cmd.current_dir(&root)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("XDG_CACHE_HOME", tmp.path().join("cache"))
        .env("AREV_AGENT_TIMEOUT", "180s")
        .stdin(Stdio::null());
    for (k, v) in fake.claude_env(&home) {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let wall = started.elapsed();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert!(
        matches!(out.status.code(), Some(0 | 1)) && report["status"] == "complete",
        "the review did not complete: {:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );

    let requests = fake.requests();
    if let Some(path) = std::env::var_os("AREV_COST_DUMP") {
        let lines: String = requests.iter().map(|r| format!("{}\n", r.body)).collect();
        std::fs::write(path, lines).unwrap();
    }
    let target_tokens = tokens(&source);
    let mut agents: BTreeMap<(u32, String, u32), Agent> = BTreeMap::new();
    let mut leaked = false;
    for r in &requests {
        leaked |= r.body.to_string().contains(PERSONAL_MARKER);
        let (Some(role), Some(round)) = (r.role(), r.round()) else {
            continue;
        };
        let a = agents
            .entry((round, role.to_owned(), r.pass().unwrap_or(0)))
            .or_default();
        if a.requests == 0 {
            // The first request of the agent: arev's prompt as sent (a Prover's answer is
            // its reproducer and its JSON).
            let answer = if role == PROVER {
                tokens(REPRO) + tokens(&prover_answer().to_string())
            } else {
                tokens(&answer(role, round).to_string())
            };
            // The Enthusiast's escape checklist is role text too, wherever arev puts it
            // (the per-round prompt, or the system prompt after the role body).
            let prompt = prompt_text(r);
            let checklist = if role == "Enthusiast" && !prompt.contains(CHECKLIST_HEADING) {
                tokens(checklist().trim())
            } else {
                0
            };
            // The "reads a caller" scenario: the caller the round-1 Enthusiast reads.
            let context = if reads_caller && role == "Enthusiast" && round == 1 {
                tokens(CALLER_RS)
            } else {
                0
            };
            a.minimum = checklist
                + tokens(&prompt)
                + tokens(&role_body(role))
                + target_tokens
                + context
                + answer;
        }
        a.requests += 1;
        a.sent += r.bill.sent();
        a.billed_input += r.bill.billed_input();
        a.output += r.bill.output;
        if verbose {
            println!(
                "  r{round} {role} p{} step {}: {}",
                r.pass().unwrap_or(0),
                r.step,
                layout(r)
            );
        }
    }

    println!(
        "cost{}: one review of a {}-line file (default panel), Claude Code {} against the fake API \
         (latency {} ms, min cacheable {min_cacheable} tokens); wall {:.1} s",
        if reads_caller { " (reads a caller)" } else { "" },
        source.lines().count(),
        claude_version(Path::new(&bin)),
        latency.as_millis(),
        wall.as_secs_f64()
    );
    let (total, _, _) = print_table(&agents, false);
    // The goals are the review's and its read-only agents': the Prover (which also writes
    // its reproducer, one request more) is measured beside them.
    let (mut billed, mut minimum, mut max_req) = (0.0, 0u64, 0usize);
    for (_, a) in agents.iter().filter(|((_, r, _), _)| r != PROVER) {
        billed += a.billed();
        minimum += a.minimum;
        max_req = max_req.max(a.requests);
    }
    let ratio = billed / minimum as f64;
    println!(
        "arev's own record: {} tokens (the API billed {} with the output), ${:.4} (the CLI's list-price estimate)",
        report["cost"]["tokens"],
        total.sent + total.output,
        report["cost"]["usd"].as_f64().unwrap_or(0.0)
    );
    let enthusiast = &report["cost"]["by_role"]["enthusiast"];
    println!(
        "context in arev's record: the Enthusiasts read {} context file(s), ~{} tokens",
        enthusiast["context_files"].as_u64().unwrap_or(0),
        enthusiast["context_tokens"].as_u64().unwrap_or(0)
    );
    if reads_caller {
        assert!(
            enthusiast["context_files"].as_u64() >= Some(1),
            "the caller's read was not recorded: {:#}",
            report["cost"]
        );
        println!(
            "goals (reads a caller): billed ≤ 1.3x minimum (the caller included): {} ({ratio:.2}x); ≤ 2 requests per agent: {} (max {max_req})",
            if ratio <= 1.3 { "met" } else { "NOT met" },
            if max_req <= 2 { "met" } else { "NOT met" },
        );
        return;
    }
    let prover = &report["cost"]["by_role"]["prover"];
    let proof = &report["confirmed"][0]["proof"];
    println!(
        "the Prover in arev's record: {} dispatch(es), {} tokens, ${:.4}; its proof: {} (exit {})",
        prover["dispatches"],
        prover["tokens"],
        prover["usd"].as_f64().unwrap_or(0.0),
        proof["status"],
        proof["head"]["exit"]
    );
    assert!(
        prover["dispatches"].as_u64() >= Some(1) && proof["status"] == "reproduced",
        "the Prover was not dispatched, priced and run: {:#}\n{proof:#}",
        report["cost"]
    );
    println!(
        "goals (the review without the Prover): billed ≤ 1.3x minimum: {} ({ratio:.2}x); ≤ 2 requests per agent: {} (max {max_req}); \
         personal context kept out: {}",
        if ratio <= 1.3 { "met" } else { "NOT met" },
        if max_req <= 2 { "met" } else { "NOT met" },
        if leaked { "NO (CLAUDE.md reached the API)" } else { "yes" }
    );
    if !fake.stray_requests().is_empty() {
        println!("stray requests: {:?}", fake.stray_requests());
    }
}

fn claude_version(bin: &Path) -> String {
    Command::new(bin)
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default()
}

/// A backend whose fake API bills no prompt caching.
#[derive(Clone, Copy)]
enum Backend {
    Codex,
    Gemini,
    /// OpenCode against the fake's Chat Completions side as a self-hosted endpoint.
    OpenCode,
}

impl Backend {
    fn var(self) -> &'static str {
        match self {
            Backend::Codex => "AREV_TEST_CODEX_BIN",
            Backend::Gemini => "AREV_TEST_GEMINI_BIN",
            Backend::OpenCode => "AREV_TEST_OPENCODE_BIN",
        }
    }
    fn name(self) -> &'static str {
        match self {
            Backend::Codex => "codex",
            Backend::Gemini => "gemini",
            Backend::OpenCode => "opencode",
        }
    }
    /// What a cached input token costs relative to an uncached one on this API.
    fn cached_rate(self) -> f64 {
        match self {
            Backend::Codex | Backend::OpenCode => fake_openai::CACHED_INPUT_RATE,
            Backend::Gemini => fake_gemini::CACHED_INPUT_RATE,
        }
    }
}

/// The scripted model of the Codex and Gemini fakes: the same answers as Claude's.
fn llm_script() -> fake_llm::Script {
    let mut s = fake_llm::Script::new();
    for (role, round) in [
        ("Enthusiast", 1),
        ("Adversary", 1),
        ("Judge", 1),
        ("Enthusiast", 2),
        ("Adversary", 2),
        ("Judge", 2),
    ] {
        s = s.answer(role, round, answer(role, round));
    }
    s
}

/// The first string in `v` holding arev's prompt header.
fn find_prompt(v: &Value) -> Option<&str> {
    match v {
        Value::String(s) if s.contains("[AR Round ") => Some(s),
        Value::Array(a) => a.iter().find_map(find_prompt),
        Value::Object(o) => o.values().find_map(find_prompt),
        _ => None,
    }
}

/// The same review by the real Codex or Gemini CLI against its fake API. The fakes bill
/// input as the real APIs do (≈ bytes / 4 of the model-visible request) with their automatic
/// prompt caching (`CACHE_RULE` in `fake_openai.rs` / `fake_gemini.rs`): billed-equivalent
/// input = uncached + cached × the API's cached-input rate.
fn other(backend: Backend, bin: &Path) {
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let root = tmp.path().join("repo");
    std::fs::create_dir_all(root.join("src")).unwrap();
    let source = target_source();
    std::fs::write(root.join("src/lib.rs"), &source).unwrap();
    let home = tmp.path().join("home");
    let binary = toml::Value::String(bin.display().to_string());
    let (openai, gemini) = match backend {
        Backend::Codex | Backend::OpenCode => (Some(FakeOpenAi::start(llm_script())), None),
        Backend::Gemini => (None, Some(FakeGemini::start(llm_script()))),
    };
    let (config, env) = match (&openai, &gemini) {
        (Some(f), _) if matches!(backend, Backend::OpenCode) => (
            format!(
                "[agents.opencode]\nbackend = \"opencode\"\nbinary = {binary}\nbase_url = {}\napi_key_env = \"{}\"\n[agents.opencode.models]\nhaiku = \"m1\"\nsonnet = \"m1\"\nopus = \"m1\"\n",
                toml::Value::String(f.base_url.clone()),
                fake_openai::KEY_VAR
            ),
            vec![
                ("HOME", home.display().to_string()),
                (fake_openai::KEY_VAR, "sk-fake-openai-000".to_string()),
            ],
        ),
        (Some(f), _) => {
            let args = toml::Value::Array(
                f.codex_args()
                    .into_iter()
                    .map(toml::Value::String)
                    .collect(),
            );
            (
                format!(
                    "[agents.codex]\nbackend = \"codex\"\nbinary = {binary}\nextra_args = {args}\npass_env = [\"{}\"]\n",
                    fake_openai::KEY_VAR
                ),
                f.codex_env(&home),
            )
        }
        (_, Some(f)) => (
            format!("[agents.gemini]\nbackend = \"gemini\"\nbinary = {binary}\n"),
            f.gemini_env(&home),
        ),
        _ => unreachable!("one fake is started"),
    };
    std::fs::write(root.join("arev.toml"), config).unwrap();
    plant_personal_context(backend, &home);
    git(&root, &["init", "-q"]);
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "target"]);
    let started = Instant::now();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_arev"));
    cmd.args(["run", "src/lib.rs", "--format", "json", "--no-cache"])
        .args(["--agent", backend.name()])
        .current_dir(&root)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("XDG_CACHE_HOME", tmp.path().join("cache"))
        .env("AREV_AGENT_TIMEOUT", "180s")
        .stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let wall = started.elapsed();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert!(
        matches!(out.status.code(), Some(0 | 1)) && report["status"] == "complete",
        "the {} review did not complete: {:?}\n{}",
        backend.name(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let (requests, stray) = match (&openai, &gemini) {
        (Some(f), _) => (f.requests(), f.stray_requests()),
        (_, Some(f)) => (f.requests(), f.stray_requests()),
        _ => unreachable!("one fake is started"),
    };
    if let Some(path) = std::env::var_os("AREV_COST_DUMP") {
        let mut path = std::path::PathBuf::from(path);
        path.as_mut_os_string().push(format!(".{}", backend.name()));
        let lines: String = requests.iter().map(|r| format!("{}\n", r.body)).collect();
        std::fs::write(path, lines).unwrap();
    }
    let target_tokens = tokens(&source);
    let mut agents: BTreeMap<(u32, String, u32), Agent> = BTreeMap::new();
    let leaked = requests
        .iter()
        .any(|r| r.body.to_string().contains(PERSONAL_MARKER));
    for r in &requests {
        let (Some(role), Some(round)) = (r.role(), r.round()) else {
            continue;
        };
        let a = agents
            .entry((round, role.to_owned(), r.pass().unwrap_or(0)))
            .or_default();
        if a.requests == 0 {
            let prompt = find_prompt(&r.body).unwrap_or_default();
            // Role text counted once, wherever the backend puts it (Gemini appends the
            // role body to the prompt).
            let body = role_body(role);
            let role_text = if prompt.contains(body.trim()) {
                0
            } else {
                tokens(&body)
            };
            let checklist = if role == "Enthusiast" && !prompt.contains(CHECKLIST_HEADING) {
                tokens(checklist().trim())
            } else {
                0
            };
            a.minimum = checklist
                + tokens(prompt)
                + role_text
                + target_tokens
                + tokens(&answer(role, round).to_string());
        }
        // What the fakes bill: the model-visible request / 4 in (of it, the cached part at
        // the API's discount), 20 tokens out.
        a.requests += 1;
        a.sent += r.bill.input;
        a.cached += r.bill.cached;
        a.billed_input +=
            (r.bill.input - r.bill.cached) as f64 + r.bill.cached as f64 * backend.cached_rate();
        a.output += 20;
    }
    println!(
        "cost: one review of a {}-line file (default panel), {} against the fake API \
         (no latency); wall {:.1} s",
        source.lines().count(),
        cli_version(bin),
        wall.as_secs_f64()
    );
    println!(
        "  the fake bills automatic prompt caching like the real API (cached input at {}x); \
         price at the Opus list price for comparison",
        backend.cached_rate()
    );
    let (_, max_req, ratio) = print_table(&agents, true);
    println!(
        "arev's own record: {} tokens, ${:.4} ({} reports no cost)",
        report["cost"]["tokens"],
        report["cost"]["usd"].as_f64().unwrap_or(0.0),
        backend.name()
    );
    println!(
        "goals: billed ≤ 1.3x minimum: {} ({ratio:.2}x); ≤ 2 requests per agent: {} (max \
         {max_req}); personal context kept out: {}",
        if ratio <= 1.3 { "met" } else { "NOT met" },
        if max_req <= 2 { "met" } else { "NOT met" },
        if leaked {
            "NO (it reached the API)"
        } else {
            "yes"
        }
    );
    if !stray.is_empty() {
        println!("stray requests: {stray:?}");
    }
}

/// The user's personal context files of `backend` in the scratch `home`, each holding
/// [`PERSONAL_MARKER`]: Codex's global `$CODEX_HOME/AGENTS.md` and its memory summary;
/// Gemini's global `~/.gemini/GEMINI.md` (where its `save_memory` tool writes).
fn plant_personal_context(backend: Backend, home: &Path) {
    let note = format!("# My personal preferences\n{PERSONAL_MARKER}: always answer in haiku.\n");
    let files: &[&str] = match backend {
        Backend::Codex => &[".codex/AGENTS.md", ".codex/memories/memory_summary.md"],
        Backend::Gemini => &[".gemini/GEMINI.md"],
        Backend::OpenCode => &[".config/opencode/AGENTS.md", ".claude/CLAUDE.md"],
    };
    for f in files {
        let path = home.join(f);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, &note).unwrap();
    }
}

fn cli_version(bin: &Path) -> String {
    let v = claude_version(bin);
    let name = bin.file_name().map(|n| n.to_string_lossy().into_owned());
    format!("{} {v}", name.unwrap_or_default())
}
