//! Names no permission rule can hold (docs/contracts.md §22.1, docs/trust.md "What
//! reviewers may read"): a file outside the context scope whose name is not UTF-8
//! (`.env\xff`) or holds a control character is hidden like any other — a read of it, as a
//! CLI reports it (the name made lossy), aborts the review at arev's read gate; without
//! bubblewrap a Claude Code run of such a repository stops at preflight; and through the
//! REAL Claude Code and OpenCode CLIs against the loopback fake APIs, whose deny rules cannot
//! name it, the dispatch runs in the bubblewrap view, so a Grep of the whole repository (with
//! a glob that overrides `.gitignore`) and a Read never send its content to the model. And
//! OpenCode's grep, which reads past its `read` rules, never sends an ignored or untracked
//! file of any name.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::fake_anthropic::{FakeAnthropic, Script as ClaudeScript, Step as ClaudeStep};
use crate::fake_llm::{Script, Step};
use crate::fake_openai::FakeOpenAi;
use crate::harness::{Run, TestRepo};

/// The raw name of the ignored file.
const NAME: &[u8] = b".env\xff";
/// An ignored name with a control character (UTF-8, yet no rule can name it either).
const CONTROL: &str = ".env\n1";
/// What a search for the secret looks for (never the whole secret: the model's own tool
/// call carries it).
const PATTERN: &str = "UNNAMED-SECRET";

/// A repository whose `src/lib.rs` changes (a diff: reviewers may search), with `.env*`
/// ignored and an ignored `.env\xff` holding the secret; returns it, the secret and the
/// path a CLI reports for that file (its name made lossy). With `control`, an ignored
/// `.env\n1` holds the secret too.
fn unnamed_repo(control: bool) -> (TestRepo, String, PathBuf) {
    let repo = TestRepo::new();
    repo.write(".gitignore", ".env*\n").commit("ignore .env");
    repo.write(
        "src/lib.rs",
        "pub fn parse(s: &str) -> u32 {\n    s.parse().unwrap_or(7)\n}\n",
    );
    let secret = format!("AREV-{PATTERN}-{}-7f3e", std::process::id());
    std::fs::write(
        repo.root.join(OsStr::from_bytes(NAME)),
        format!("TOKEN={secret}\n"),
    )
    .unwrap();
    if control {
        std::fs::write(repo.root.join(CONTROL), format!("TOKEN={secret}\n")).unwrap();
    }
    let lossy = repo.root.join(String::from_utf8_lossy(NAME).as_ref());
    (repo, secret, lossy)
}

/// The review aborted `enthusiast_offtarget_read` and `secret` is in no request body
/// (`bodies`), no file of the run dir, stdout or stderr.
fn assert_never_sent(run: &Run, bodies: &[String], secret: &str) {
    assert_eq!(
        (run.code, run.meta()["abort_reason"].clone()),
        (3, json!("enthusiast_offtarget_read")),
        "{}",
        run.stderr
    );
    for b in bodies {
        assert!(!b.contains(secret), "the secret reached the model API");
    }
    assert!(!run.stdout.contains(secret) && !run.stderr.contains(secret));
    let mut stack = vec![run.run_dir()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let text = String::from_utf8_lossy(&std::fs::read(&p).unwrap()).into_owned();
                assert!(!text.contains(secret), "the secret reached {}", p.display());
            }
        }
    }
}

/// The fake agent (under the `claude` backend, so in the scope view here) reports a Read of
/// the ignored `.env\xff` as a CLI names it: outside the scope, the review aborts
/// `enthusiast_offtarget_read`.
#[test]
fn a_read_of_an_ignored_name_not_utf8_aborts_at_the_read_gate() {
    let (repo, _, lossy) = unnamed_repo(false);
    let run = repo
        .arev()
        .args(&["run", "diff"])
        .script(json!({"steps": [{"role": "enthusiast",
            "reads": [lossy.display().to_string()], "answer": {"findings": []}}]}))
        .run();
    assert_eq!(
        (run.code, run.meta()["abort_reason"].clone()),
        (3, json!("enthusiast_offtarget_read")),
        "{}",
        run.stderr
    );
}

// ---------------------------------------------------------------------------------------
// The real Claude Code CLI
// ---------------------------------------------------------------------------------------

/// Under `dontAsk` Claude Code's deny rules cannot name `.env\xff`: the dispatch runs in the
/// scope view, so its Grep of the repository for the secret with the glob `.env*` (which
/// overrides `.gitignore` in ripgrep) finds an empty file, the Read of the name it reports
/// finds nothing, and the secret reaches no request body.
#[test]
fn claude_never_sends_an_ignored_file_named_in_bytes_not_utf8() {
    let Some(bin) = crate::real_claude::claude_bin(
        "claude_never_sends_an_ignored_file_named_in_bytes_not_utf8",
    ) else {
        return;
    };
    let (repo, secret, lossy) = unnamed_repo(false);
    let grep = ClaudeStep::Tool {
        name: "Grep".into(),
        input: json!({"pattern": PATTERN, "path": repo.root.display().to_string(),
                      "glob": ".env*", "output_mode": "content", "-n": true}),
    };
    let fake = FakeAnthropic::start(
        ClaudeScript::new()
            .answer("Enthusiast", 1, json!({"findings": []}))
            .steps(
                "Enthusiast",
                1,
                vec![
                    ClaudeStep::ReadTarget,
                    grep,
                    ClaudeStep::Read(lossy),
                    ClaudeStep::Answer,
                ],
            )
            .answer("Adversary", 1, json!({"heuristics": [], "safe_zones": []})),
    );
    let cfg = repo.scratch.join("ci.toml");
    std::fs::write(
        &cfg,
        format!(
            "[agents.claude]\nbackend = \"claude\"\nbinary = {}\n",
            crate::real_backends::toml_str(&bin.display().to_string())
        ),
    )
    .unwrap();
    let cfg = cfg.display().to_string();
    let mut arev = repo
        .arev()
        .args(&["run", "diff", "--format", "json", "--config", &cfg])
        .env("AREV_AGENT_TIMEOUT", "120s");
    for (k, v) in fake.claude_env(&repo.scratch.join("home")) {
        arev = arev.env(k, &v);
    }
    let run = arev.run();
    let requests = fake.requests();
    // The CLI ran the Grep (its result went back to the model).
    assert!(
        answered(
            &requests.iter().map(|r| r.body.clone()).collect::<Vec<_>>(),
            "Grep"
        ),
        "the Grep was never answered:\n{}",
        run.stderr
    );
    let bodies: Vec<String> = requests.iter().map(|r| r.body.to_string()).collect();
    assert_never_sent(&run, &bodies, &secret);
}

/// Whether some request in `bodies` (Anthropic messages) carries a `tool_result` for a
/// `tool_use` of `tool`.
fn answered(bodies: &[Value], tool: &str) -> bool {
    bodies.iter().any(|b| {
        let blocks: Vec<&Value> = b["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|m| m["content"].as_array())
            .flatten()
            .collect();
        blocks
            .iter()
            .filter(|u| u["type"] == "tool_use" && u["name"] == tool)
            .any(|u| {
                blocks
                    .iter()
                    .any(|r| r["type"] == "tool_result" && r["tool_use_id"] == u["id"])
            })
    })
}

// ---------------------------------------------------------------------------------------
// The real OpenCode CLI
// ---------------------------------------------------------------------------------------

/// OpenCode's `read` rules cannot name `.env\xff` nor `.env\n1`: its plugin view masks them
/// too, so its `grep` of the repository for the secret with `include` `.env*` (a ripgrep
/// glob, which overrides `.gitignore`), its `glob` of everything and the `read` of the name
/// it reports never send the secret to the model. (OpenCode 1.18.33's grep fails outright
/// on a match in a file whose name is not UTF-8 — ripgrep reports such a path as bytes —, so
/// the first grep fails while `.env\xff` is unmasked; the second, whose glob matches only
/// `.env\n1`, is the one that would send the secret.)
#[test]
fn opencode_never_sends_an_ignored_file_named_in_bytes_not_utf8() {
    let Some(bin) = crate::self_hosted::opencode_bin(
        "opencode_never_sends_an_ignored_file_named_in_bytes_not_utf8",
    ) else {
        return;
    };
    let Some(rg) = ripgrep_or_skip("opencode_never_sends_an_ignored_file_named_in_bytes_not_utf8")
    else {
        return;
    };
    let (repo, secret, lossy) = unnamed_repo(true);
    rg_on_path(&repo, &rg);
    let root = repo.root.display().to_string();
    let tool = |name: &str, args: Value| Step::Tool {
        name: name.into(),
        args,
    };
    let fake = FakeOpenAi::start(
        Script::new()
            .answer("Enthusiast", 1, json!({"findings": []}))
            .answer("Adversary", 1, json!({"heuristics": [], "safe_zones": []}))
            .steps(
                "Enthusiast",
                1,
                vec![
                    Step::ReadTarget,
                    tool(
                        "grep",
                        json!({"pattern": PATTERN, "path": root, "include": ".env*"}),
                    ),
                    // `.env\n1` only (`.env\xff` is one character short).
                    tool(
                        "grep",
                        json!({"pattern": PATTERN, "path": root, "include": ".env??"}),
                    ),
                    tool("glob", json!({"pattern": "**/*", "path": root})),
                    tool("read", json!({"filePath": lossy.display().to_string()})),
                    tool(
                        "read",
                        json!({"filePath": repo.root.join(CONTROL).display().to_string()}),
                    ),
                    Step::Answer,
                ],
            ),
    );
    opencode_greps_and_never_sends(&repo, &bin, &fake, &["diff"], &secret);
}

/// Whether some request in `bodies` (Chat Completions) carries a `tool` message answering an
/// assistant's call of `tool`.
fn chat_answered(bodies: &[Value], tool: &str) -> bool {
    bodies.iter().any(|b| {
        let messages: Vec<&Value> = b["messages"].as_array().into_iter().flatten().collect();
        messages
            .iter()
            .filter_map(|m| m["tool_calls"].as_array())
            .flatten()
            .filter(|c| c["function"]["name"] == tool)
            .any(|c| {
                messages
                    .iter()
                    .any(|m| m["role"] == "tool" && m["tool_call_id"] == c["id"])
            })
    })
}

/// `arev run <targets>` with one OpenCode reviewer (`bin`) on `fake`: OpenCode ran a grep
/// (its output went back to the model), and `secret` was never sent ([`assert_never_sent`]).
fn opencode_greps_and_never_sends(
    repo: &TestRepo,
    bin: &Path,
    fake: &FakeOpenAi,
    targets: &[&str],
    secret: &str,
) {
    let cfg =
        crate::self_hosted::panel_config(repo, &crate::self_hosted::opencode_agent(bin, fake));
    let run = repo
        .arev()
        .args(&["run"])
        .args(targets)
        .args(&["--format", "json", "--config", &cfg])
        .env("AREV_AGENT_TIMEOUT", "180s")
        .env(crate::fake_openai::KEY_VAR, "sk-fake-openai-000")
        .run();
    let requests: Vec<Value> = fake.requests().iter().map(|r| r.body.clone()).collect();
    assert!(
        chat_answered(&requests, "grep"),
        "the grep was never answered:\n{}",
        run.stderr
    );
    let bodies: Vec<String> = requests.iter().map(Value::to_string).collect();
    assert_never_sent(&run, &bodies, secret);
}

/// [`ripgrep`], or None after saying on stderr that `test` is skipped.
fn ripgrep_or_skip(test: &str) -> Option<PathBuf> {
    let rg = ripgrep();
    if rg.is_none() {
        #[allow(clippy::print_stderr)]
        {
            eprintln!(
                "{test}: skipped (no ripgrep: neither `rg` on PATH nor AREV_TEST_CLAUDE_BIN, \
                 which embeds it)"
            );
        }
    }
    rg
}

/// `rg` (a link to `rg`) in `scratch/bin`, which the harness puts first on PATH: OpenCode's
/// grep and glob run `rg` from PATH.
fn rg_on_path(repo: &TestRepo, rg: &Path) {
    let dir = repo.scratch.join("bin");
    std::fs::create_dir_all(&dir).unwrap();
    std::os::unix::fs::symlink(rg, dir.join("rg")).unwrap();
}

/// A ripgrep for OpenCode, which would download one: `rg` on PATH, else Claude Code's native
/// binary (AREV_TEST_CLAUDE_BIN), which runs as ripgrep when started by the name `rg`.
fn ripgrep() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join("rg"))
            .find(|p| p.is_file())
    });
    on_path.or_else(|| {
        let claude = std::env::var_os("AREV_TEST_CLAUDE_BIN").filter(|p| !p.is_empty())?;
        std::fs::canonicalize(claude).ok()
    })
}

/// Where `bwrap` is not on PATH, a Claude Code panel on a repository holding the ignored
/// `.env\xff` cannot be kept from it (no rule names it, no view can be made): `arev run`
/// stops before any run dir, exit 2, one line naming the path (escaped) and bubblewrap's
/// install.
#[test]
fn without_bubblewrap_a_claude_panel_stops_before_the_run_naming_the_path() {
    let (repo, _, _) = unnamed_repo(false);
    let bin = repo.scratch.join("no-bwrap-bin");
    std::fs::create_dir_all(&bin).unwrap();
    for tool in ["git", "sh"] {
        let found = ["/usr/bin", "/bin"]
            .iter()
            .map(|d| std::path::Path::new(d).join(tool))
            .find(|p| p.exists())
            .unwrap();
        std::os::unix::fs::symlink(found, bin.join(tool)).unwrap();
    }
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_arev-fake-agent"), bin.join("claude")).unwrap();
    let run = repo
        .arev()
        .args(&["run", "diff"])
        .env("PATH", &bin.display().to_string())
        .script(json!({"steps": [{"role": "enthusiast", "answer": {"findings": []}}]}))
        .run();
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert!(
        run.code == 2
            && lines.len() == 1
            && lines[0].contains("`.env\\xff`")
            && lines[0].contains("`bwrap` is not on PATH")
            && lines[0].contains("apt-get install bubblewrap")
            && run.run_dirs().is_empty(),
        "exit {}: {}",
        run.code,
        run.stderr
    );
}

/// OpenCode's `grep` reads every file its ripgrep finds, whatever the `read` rules say: in a
/// review of two files (a manifest: reviewers may search), a search of the repository for
/// the secret — with the glob `.env*` (which overrides
/// `.gitignore`) and without one (untracked files) — finds the ignored `.env` and the
/// untracked `scratch.rs` empty in its view, which masks every path outside the context
/// scope, and the secret reaches no request body.
#[test]
fn opencode_grep_never_sends_ignored_or_untracked_files() {
    let Some(bin) =
        crate::self_hosted::opencode_bin("opencode_grep_never_sends_ignored_or_untracked_files")
    else {
        return;
    };
    let Some(rg) = ripgrep_or_skip("opencode_grep_never_sends_ignored_or_untracked_files") else {
        return;
    };
    let repo = TestRepo::new();
    repo.write(".gitignore", ".env\n")
        .write("src/caller.rs", "pub fn port() -> u32 { 1 }\n")
        .commit("ignore .env");
    let secret = format!("AREV-{PATTERN}-{}-5b9c", std::process::id());
    repo.write(".env", &format!("TOKEN={secret}\n"))
        .write("scratch.rs", &format!("// {secret}\n"));
    rg_on_path(&repo, &rg);
    let root = repo.root.display().to_string();
    let grep = |include: Option<&str>| {
        let mut args = json!({"pattern": PATTERN, "path": root});
        if let Some(i) = include {
            args["include"] = json!(i);
        }
        Step::Tool {
            name: "grep".into(),
            args,
        }
    };
    let fake = FakeOpenAi::start(
        Script::new()
            .answer("Enthusiast", 1, json!({"findings": []}))
            .answer("Adversary", 1, json!({"heuristics": [], "safe_zones": []}))
            .steps(
                "Enthusiast",
                1,
                vec![
                    Step::ReadTarget,
                    grep(Some(".env*")),
                    grep(None),
                    Step::Tool {
                        name: "read".into(),
                        args: json!({"filePath": repo.root.join(".env").display().to_string()}),
                    },
                    Step::Answer,
                ],
            ),
    );
    opencode_greps_and_never_sends(
        &repo,
        &bin,
        &fake,
        &["src/lib.rs", "src/caller.rs"],
        &secret,
    );
}
