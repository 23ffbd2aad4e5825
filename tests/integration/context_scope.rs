//! The context scope (docs/trust.md "What reviewers may read"): reviewers may read the files
//! git tracks besides the target, never `.git`, ignored or untracked files; `context =
//! "target"` restores the target-only read scope; a repository config narrows the scope,
//! never widens it, and under `--repo-config base` its keys are the merge-base's
//! (docs/contracts.md §22.1); and, through the REAL Claude Code, Gemini CLI, OpenCode and
//! Codex CLIs against the loopback fake APIs, a tracked caller is read and recorded while an
//! ignored `.env`, an untracked file and `.git/config` — and under `context = "target"` a
//! tracked non-target file — are refused by the CLI or absent from its view, and their
//! content reaches no request and no file of the run.

use std::path::PathBuf;

use serde_json::{json, Value};

use crate::fake_anthropic::{FakeAnthropic, Script as ClaudeScript, Step as ClaudeStep};
use crate::harness::{finding, ruling, Run, TestRepo};

const CALLER: &str = "use crate::parse;\n\npub fn port(s: &str) -> u32 {\n    parse(s) + 1\n}\n";

/// A repository whose `src/lib.rs` changes `parse` to take a radix (a diff) while the
/// committed, unchanged `src/caller.rs` still calls it with one argument.
fn caller_repo() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("src/caller.rs", CALLER).commit("caller");
    repo.write(
        "src/lib.rs",
        "pub fn parse(s: &str, radix: u32) -> u32 {\n    u32::from_str_radix(s, radix).unwrap()\n}\n\npub fn id(x: u32) -> u32 { x }\n",
    );
    repo
}

/// The context reads recorded for the dispatches of `role` in round 1.
fn context_reads(run: &Run, role: &str) -> Vec<Value> {
    run.json("round-1.json")["dispatches"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["role"] == role)
        .flat_map(|d| d["context_reads"].as_array().cloned().unwrap_or_default())
        .collect()
}

fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(bytes))
}

/// A diff changes a function that an unchanged caller misuses: the Enthusiast reads the
/// caller (a context file) and reports the break at the changed line; the run completes
/// with a verdict, the read is recorded with the caller's sha256 and counted per role, and
/// the scope is listed and hashed.
#[test]
fn a_reviewer_reads_an_unchanged_caller_and_the_run_has_a_verdict() {
    let repo = caller_repo();
    let mut f = finding("F1", "src/lib.rs", 1, "high", "api-misuse");
    f["description"] =
        json!("parse now takes a radix; src/caller.rs:4 still calls parse(s) with one argument");
    f["evidence"] = json!("L1: pub fn parse(s: &str, radix: u32) -> u32 {");
    let run = repo
        .arev()
        .args(&["run", "diff", "--format", "json"])
        .env("AREV_PROGRESS", "1")
        .script(json!({"steps": [
            {"role": "enthusiast", "round": 1, "reads": ["src/caller.rs"], "answer": {"findings": [f]}},
            {"role": "judge", "round": 1, "reads": ["src/caller.rs"],
             "answer": {"rulings": [ruling("F1", "src/lib.rs", 1, "high", "enthusiast")],
                "summary": "1 confirmed.", "convergence": false, "next_round_model": null}},
        ]}))
        .run();
    run.assert_code(1);
    let report = run.report();
    assert_eq!(report["status"], "complete", "{}", run.stderr);
    assert_eq!(report["confirmed"][0]["file"], "src/lib.rs");
    let reads = context_reads(&run, "enthusiast");
    assert!(!reads.is_empty(), "no context read recorded");
    for r in &reads {
        assert_eq!(r["path"], "src/caller.rs");
        assert_eq!(r["sha256"], sha256(CALLER.as_bytes()));
        assert_eq!(r["tokens"], (CALLER.len() as u64).div_ceil(4));
    }
    assert_eq!(context_reads(&run, "judge").len(), 1);
    let by_role = &report["cost"]["by_role"];
    assert_eq!(by_role["enthusiast"]["context_files"], reads.len() as u64);
    assert_eq!(by_role["judge"]["context_files"], 1);
    assert!(
        run.stderr.contains("read 1 context file(s)"),
        "no context line in the progress:\n{}",
        run.stderr
    );
    // The scope: listed once, hashed into meta.json and the report alike.
    let listing = std::fs::read_to_string(run.run_dir().join("target/context.txt")).unwrap();
    assert_eq!(listing, ".gitignore\nsrc/caller.rs\nsrc/lib.rs\n");
    let meta = run.meta();
    assert_eq!(meta["context"]["mode"], "tree");
    assert_eq!(meta["context"]["files"], 3);
    assert!(meta["context"]["drift"].is_null(), "{}", meta["context"]);
    assert_eq!(meta["context_sha"], report["target"]["context_sha"]);
    assert_eq!(meta["context_sha"].as_str().map(str::len), Some(64));
    // The prompt points at the list, never copies it.
    let prompt = std::fs::read_to_string(
        std::fs::read_dir(run.run_dir().join("agents/r1"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| {
                p.file_name()
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .starts_with("enthusiast")
            })
            .unwrap()
            .join("prompt.md"),
    )
    .unwrap();
    assert!(prompt.contains("target/context.txt"), "{prompt}");
    // The scope itself is never listed: only the context map names files elsewhere (where
    // the changed symbol is used), a pointer of bounded size.
    let outside_map = match (prompt.find("<context_map>"), prompt.find("</context_map>")) {
        (Some(a), Some(b)) => format!("{}{}", &prompt[..a], &prompt[b..]),
        _ => prompt.clone(),
    };
    assert!(
        !outside_map.contains("src/caller.rs"),
        "the prompt lists the scope"
    );
}

/// Ignored, untracked and `.git` files are outside the scope: a read of any of them aborts
/// `<role>_offtarget_read`, and none is listed in `target/context.txt`.
#[test]
fn ignored_untracked_and_git_files_are_outside_the_scope() {
    for path in ["ignored.txt", "scratch.rs", ".git/config"] {
        let repo = caller_repo();
        repo.write("ignored.txt", "SECRET=1\n")
            .write("scratch.rs", "untracked\n");
        let run = repo
            .arev()
            .args(&["run", "src/lib.rs"])
            .script(json!({"steps": [{"role": "enthusiast", "reads": [path], "answer": {"findings": []}}]}))
            .run();
        run.assert_code(3);
        assert_eq!(
            run.meta()["abort_reason"],
            "enthusiast_offtarget_read",
            "{path}"
        );
        let listing = std::fs::read_to_string(run.run_dir().join("target/context.txt")).unwrap();
        assert!(
            !listing.contains(path.trim_start_matches('.')),
            "{path} listed:\n{listing}"
        );
    }
}

/// `context = "target"` restores the target-only read scope: the same read of the tracked
/// caller aborts, the prompt carries the target-only rules word for word.
#[test]
fn context_target_restores_the_target_only_read_scope() {
    let repo = caller_repo();
    let cfg = repo.scratch.join("ci.toml");
    std::fs::write(&cfg, "[review]\ncontext = \"target\"\n").unwrap();
    let run = repo
        .arev()
        .args(&["run", "diff", "--config", cfg.to_str().unwrap()])
        .script(json!({"steps": [{"role": "enthusiast", "reads": ["src/caller.rs"], "answer": {"findings": []}}]}))
        .run();
    run.assert_code(3);
    assert_eq!(run.meta()["abort_reason"], "enthusiast_offtarget_read");
    assert_eq!(run.meta()["context"]["mode"], "target");
    let prompt = std::fs::read_to_string(
        std::fs::read_dir(run.run_dir().join("agents/r1"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| {
                p.file_name()
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .starts_with("enthusiast")
            })
            .unwrap()
            .join("prompt.md"),
    )
    .unwrap();
    assert!(prompt.contains(
        "- Read only the target file and the files it lists or changes. Nothing else: no callers, neighbours, configs or docs outside that set."
    ));
    assert!(!prompt.contains("context.txt"));
}

/// The repository's config may narrow the scope but never widen it: with the trusted config
/// at `target`, a base-commit `arev.toml` saying `tree` (and emptying `context_exclude`)
/// changes nothing under `--repo-config base`; its own `context_exclude` adds to the
/// trusted globs; and the PR's head cannot change either.
#[test]
fn a_repository_config_cannot_widen_the_scope_under_base() {
    let repo = TestRepo::new();
    repo.write("src/caller.rs", CALLER)
        .write("docs/notes.md", "notes\n")
        .write(
            "arev.toml",
            "[review]\ncontext = \"tree\"\ncontext_exclude = []\n",
        )
        .commit("base");
    repo.git(&["checkout", "-q", "-b", "pr"]);
    repo.write(
        "src/lib.rs",
        "pub fn parse(s: &str) -> u32 {\n    s.parse().unwrap_or(0)\n}\n",
    )
    .write("arev.toml", "[review]\ncontext = \"tree\"\n")
    .commit("pr");
    let narrow = repo.scratch.join("narrow.toml");
    std::fs::write(&narrow, "[review]\ncontext = \"target\"\n").unwrap();
    let run = repo
        .arev()
        .args(&["run", "diff", "--base", "main", "--repo-config", "base", "--config", narrow.to_str().unwrap()])
        .script(json!({"steps": [{"role": "enthusiast", "reads": ["src/caller.rs"], "answer": {"findings": []}}]}))
        .run();
    run.assert_code(3);
    assert_eq!(run.meta()["context"]["mode"], "target", "{}", run.stderr);
    assert_eq!(run.meta()["abort_reason"], "enthusiast_offtarget_read");
    // Trusted `context_exclude` globs stay when the base's config empties the list, and the
    // base's own globs add to them (the PR's change to its config counts for nothing).
    let repo = TestRepo::new();
    repo.write("src/caller.rs", CALLER)
        .write("docs/notes.md", "notes\n")
        .write("arev.toml", "[review]\ncontext_exclude = [\"docs/**\"]\n")
        .commit("base");
    repo.git(&["checkout", "-q", "-b", "pr"]);
    repo.write(
        "src/lib.rs",
        "pub fn parse(s: &str) -> u32 {\n    s.parse().unwrap_or(0)\n}\n",
    )
    .write(
        "arev.toml",
        "[review]\ncontext = \"tree\"\ncontext_exclude = []\n",
    )
    .commit("pr");
    let trusted = repo.scratch.join("trusted.toml");
    std::fs::write(
        &trusted,
        "[review]\ncontext_exclude = [\"src/caller.rs\"]\n",
    )
    .unwrap();
    let run = repo
        .arev()
        .args(&[
            "run",
            "diff",
            "--base",
            "main",
            "--repo-config",
            "base",
            "--config",
            trusted.to_str().unwrap(),
        ])
        .script(json!({"steps": [{"role": "enthusiast", "answer": {"findings": []}}]}))
        .run();
    run.assert_code(0);
    let listing = std::fs::read_to_string(run.run_dir().join("target/context.txt")).unwrap();
    assert!(!listing.contains("src/caller.rs"), "{listing}");
    assert!(!listing.contains("docs/notes.md"), "{listing}");
    assert!(listing.contains("src/lib.rs"), "{listing}");
}

/// Under `--repo-config base` the scope's keys come from the merge-base's config like every
/// other repository key: a change whose own `arev.toml` excludes the caller from the context
/// (the base's says nothing) cannot narrow its own review's context — the caller stays in
/// `target/context.txt`; under `--repo-config worktree` the same change's config counts.
#[test]
fn the_scope_keys_come_from_the_base_under_repo_config_base() {
    let listing = |source: &str| {
        let repo = TestRepo::new();
        repo.write("src/caller.rs", CALLER).commit("base");
        repo.git(&["checkout", "-q", "-b", "pr"]);
        repo.write(
            "src/lib.rs",
            "pub fn parse(s: &str) -> u32 {\n    s.parse().unwrap_or(0)\n}\n",
        )
        .write(
            "arev.toml",
            "[review]\ncontext_exclude = [\"src/caller.rs\"]\n",
        )
        .commit("pr");
        let run = repo
            .arev()
            .args(&["run", "diff", "--base", "main", "--repo-config", source])
            .script(json!({"steps": [{"role": "enthusiast", "answer": {"findings": []}}]}))
            .run();
        run.assert_code(0);
        std::fs::read_to_string(run.run_dir().join("target/context.txt")).unwrap()
    };
    let base = listing("base");
    assert!(base.contains("src/caller.rs\n"), "{base}");
    let worktree = listing("worktree");
    assert!(!worktree.contains("src/caller.rs"), "{worktree}");
    assert!(worktree.contains("src/lib.rs\n"), "{worktree}");
}

// ---------------------------------------------------------------------------------------
// The real Claude Code CLI
// ---------------------------------------------------------------------------------------

fn claude_config(repo: &TestRepo, bin: &std::path::Path) -> String {
    let p = repo.scratch.join("ci.toml");
    std::fs::write(
        &p,
        format!(
            "[agents.claude]\nbackend = \"claude\"\nbinary = {}\n",
            crate::real_backends::toml_str(&bin.display().to_string())
        ),
    )
    .unwrap();
    p.display().to_string()
}

/// Run `arev run src/lib.rs` with the real Claude Code against `fake`.
fn claude_run(repo: &TestRepo, bin: &std::path::Path, fake: &FakeAnthropic) -> Run {
    let cfg = claude_config(repo, bin);
    let mut arev = repo
        .arev()
        .args(&["run", "src/lib.rs", "--format", "json", "--config", &cfg])
        .env("AREV_AGENT_TIMEOUT", "120s");
    for (k, v) in fake.claude_env(&repo.scratch.join("home")) {
        arev = arev.env(k, &v);
    }
    arev.run()
}

#[test]
fn claude_reads_a_tracked_caller_and_the_read_is_recorded() {
    let Some(bin) =
        crate::real_claude::claude_bin("claude_reads_a_tracked_caller_and_the_read_is_recorded")
    else {
        return;
    };
    let repo = TestRepo::new();
    repo.write("src/caller.rs", CALLER).commit("caller");
    let caller = repo.root.join("src/caller.rs");
    let fake = FakeAnthropic::start(
        ClaudeScript::new()
            .answer("Enthusiast", 1, json!({"findings": []}))
            .steps(
                "Enthusiast",
                1,
                vec![
                    ClaudeStep::ReadTarget,
                    ClaudeStep::Read(caller),
                    ClaudeStep::Answer,
                ],
            )
            .answer("Adversary", 1, json!({"heuristics": [], "safe_zones": []})),
    );
    let run = claude_run(&repo, &bin, &fake);
    run.assert_code(0);
    let reads = context_reads(&run, "enthusiast");
    assert_eq!(reads.len(), 1, "{reads:?}");
    assert_eq!(reads[0]["path"], "src/caller.rs");
    assert_eq!(reads[0]["sha256"], sha256(CALLER.as_bytes()));
    // The CLI ran the Read: the caller's text reached the model.
    assert!(fake
        .requests()
        .iter()
        .any(|r| r.body.to_string().contains("parse(s) + 1")));
}

#[test]
fn claude_cli_refuses_ignored_untracked_and_git_files_of_the_repository() {
    let Some(bin) = crate::real_claude::claude_bin(
        "claude_cli_refuses_ignored_untracked_and_git_files_of_the_repository",
    ) else {
        return;
    };
    let repo = TestRepo::new();
    let secret = format!("AREV-CONTEXT-SECRET-{}-51c3", std::process::id());
    repo.write(".gitignore", "ignored.txt\n.env\n")
        .commit("ignore .env");
    repo.write(".env", &format!("TOKEN={secret}\n"))
        .write("scratch.rs", &format!("// {secret}\n"));
    let config = repo.root.join(".git/config");
    let mut c = std::fs::read_to_string(&config).unwrap();
    c.push_str(&format!(
        "[http]\n\textraheader = AUTHORIZATION: basic {secret}\n"
    ));
    std::fs::write(&config, c).unwrap();
    let outside = repo.scratch.join("outside.txt");
    std::fs::write(&outside, format!("{secret}\n")).unwrap();
    let reads: Vec<PathBuf> = vec![
        repo.root.join(".env"),
        repo.root.join("scratch.rs"),
        config,
        outside,
    ];
    let mut steps = vec![ClaudeStep::ReadTarget];
    steps.extend(reads.iter().cloned().map(ClaudeStep::Read));
    steps.push(ClaudeStep::Answer);
    let fake = FakeAnthropic::start(
        ClaudeScript::new()
            .answer("Enthusiast", 1, json!({"findings": []}))
            .steps("Enthusiast", 1, steps)
            .answer("Adversary", 1, json!({"heuristics": [], "safe_zones": []})),
    );
    let run = claude_run(&repo, &bin, &fake);
    run.assert_code(3);
    assert_eq!(
        run.meta()["abort_reason"],
        "enthusiast_offtarget_read",
        "{}",
        run.stderr
    );
    // No request body sent to the model API carried the secret.
    for r in fake.requests() {
        assert!(
            !r.body.to_string().contains(&secret),
            "the secret reached the model API"
        );
    }
    assert!(!run.stdout.contains(&secret) && !run.stderr.contains(&secret));
    let mut stack = vec![run.run_dir()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let text = String::from_utf8_lossy(&std::fs::read(&p).unwrap()).into_owned();
                assert!(
                    !text.contains(&secret),
                    "the secret reached {}",
                    p.display()
                );
            }
        }
    }
    // The CLI refused each read itself (a permission denial, never the content).
    let last = fake
        .requests()
        .into_iter()
        .filter(|r| r.role() == Some("Enthusiast"))
        .max_by_key(|r| r.step)
        .expect("enthusiast requests");
    let messages = last.body["messages"].as_array().unwrap();
    let blocks: Vec<&Value> = messages
        .iter()
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .collect();
    for path in &reads {
        let p = path.display().to_string();
        let id = blocks
            .iter()
            .find(|b| b["type"] == "tool_use" && b["input"]["file_path"] == p.as_str())
            .and_then(|b| b["id"].as_str())
            .unwrap_or_else(|| panic!("no Read of {p}"));
        let result = blocks
            .iter()
            .find(|b| b["type"] == "tool_result" && b["tool_use_id"] == id)
            .unwrap_or_else(|| panic!("no result for {p}"));
        assert_eq!(result["is_error"], true, "{p}: {result}");
        assert!(result.to_string().contains("denied"), "{p}: {result}");
    }
}

// ---------------------------------------------------------------------------------------
// Gemini CLI, OpenCode and Codex against their fakes
// ---------------------------------------------------------------------------------------

use crate::fake_gemini::FakeGemini;
use crate::fake_llm::{Script, Step};
use crate::fake_openai::FakeOpenAi;

/// A repository with a tracked caller, an ignored `.env`, an untracked file and a token in
/// `.git/config`, each holding the secret; returns it and the paths a model asks for.
fn secrets_repo() -> (TestRepo, String, Vec<PathBuf>) {
    let repo = TestRepo::new();
    repo.write("src/caller.rs", CALLER)
        .write(".gitignore", "ignored.txt\n.env\n")
        .commit("caller");
    let secret = format!("AREV-CONTEXT-SECRET-{}-9d2a", std::process::id());
    repo.write(".env", &format!("TOKEN={secret}\n"))
        .write("scratch.rs", &format!("// {secret}\n"));
    repo.git(&["config", "credential.token", &secret]);
    let paths = vec![
        repo.root.join(".env"),
        repo.root.join("scratch.rs"),
        repo.root.join(".git/config"),
    ];
    (repo, secret, paths)
}

/// The review aborted `enthusiast_offtarget_read`; `secret` is in no request body the fake
/// received (`bodies`), nor in any file of the run dir, stdout or stderr.
fn assert_refused_everywhere(run: &Run, bodies: &[String], secret: &str) {
    run.assert_code(3);
    assert_eq!(
        run.meta()["abort_reason"],
        "enthusiast_offtarget_read",
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

fn ci_config(repo: &TestRepo, toml: &str) -> String {
    let p = repo.scratch.join("ci.toml");
    std::fs::write(&p, toml).unwrap();
    p.display().to_string()
}

fn gemini_run(repo: &TestRepo, bin: &std::path::Path, fake: &FakeGemini) -> Run {
    gemini_run_with(repo, bin, fake, "")
}

/// [`gemini_run`] with `extra` TOML after the agent's table.
fn gemini_run_with(repo: &TestRepo, bin: &std::path::Path, fake: &FakeGemini, extra: &str) -> Run {
    let cfg = ci_config(
        repo,
        &format!("{}{extra}", crate::real_backends::gemini_agent(bin)),
    );
    let mut arev = repo
        .arev()
        .args(&["run", "src/lib.rs", "--format", "json", "--agent", "gemini"])
        .args(&["--config", &cfg])
        .env("AREV_AGENT_TIMEOUT", "120s");
    for (k, v) in fake.gemini_env(&repo.scratch.join("home")) {
        arev = arev.env(k, &v);
    }
    arev.run()
}

fn clean(script: Script) -> Script {
    script
        .answer("Enthusiast", 1, json!({"findings": []}))
        .answer("Adversary", 1, json!({"heuristics": [], "safe_zones": []}))
}

#[test]
fn gemini_reads_a_tracked_caller_and_refuses_what_is_outside_the_scope() {
    let Some(bin) = crate::real_backends::real_bin(
        "AREV_TEST_GEMINI_BIN",
        "gemini_reads_a_tracked_caller_and_refuses_what_is_outside_the_scope",
    ) else {
        return;
    };
    let read = |p: &std::path::Path| Step::Tool {
        name: "read_file".into(),
        args: json!({"file_path": p.display().to_string()}),
    };
    // The caller: read, recorded, a verdict.
    let (repo, _, _) = secrets_repo();
    let caller = repo.root.join("src/caller.rs");
    let fake = FakeGemini::start(clean(Script::new()).steps(
        "Enthusiast",
        1,
        vec![Step::ReadTarget, read(&caller), Step::Answer],
    ));
    let run = gemini_run(&repo, &bin, &fake);
    run.assert_code(0);
    let reads = context_reads(&run, "enthusiast");
    assert_eq!(reads.len(), 1, "{reads:?}");
    assert_eq!(reads[0]["path"], "src/caller.rs");
    // `.env`, the untracked file and `.git/config`: refused, the secret sent nowhere.
    let (repo, secret, paths) = secrets_repo();
    let mut steps = vec![Step::ReadTarget];
    steps.extend(paths.iter().map(|p| read(p)));
    steps.push(Step::Answer);
    let fake = FakeGemini::start(clean(Script::new()).steps("Enthusiast", 1, steps));
    let run = gemini_run(&repo, &bin, &fake);
    let bodies: Vec<String> = fake.requests().iter().map(|r| r.body.to_string()).collect();
    assert_refused_everywhere(&run, &bodies, &secret);
}

fn opencode_run(repo: &TestRepo, bin: &std::path::Path, fake: &FakeOpenAi) -> Run {
    let cfg =
        crate::self_hosted::panel_config(repo, &crate::self_hosted::opencode_agent(bin, fake));
    repo.arev()
        .args(&["run", "src/lib.rs", "--format", "json", "--config", &cfg])
        .env("AREV_AGENT_TIMEOUT", "180s")
        .env(crate::fake_openai::KEY_VAR, "sk-fake-openai-000")
        .run()
}

#[test]
fn opencode_reads_a_tracked_caller_and_refuses_what_is_outside_the_scope() {
    let Some(bin) = crate::self_hosted::opencode_bin(
        "opencode_reads_a_tracked_caller_and_refuses_what_is_outside_the_scope",
    ) else {
        return;
    };
    let read = |p: &std::path::Path| Step::Tool {
        name: "read".into(),
        args: json!({ "filePath": p.display().to_string() }),
    };
    let (repo, _, _) = secrets_repo();
    let caller = repo.root.join("src/caller.rs");
    let fake = FakeOpenAi::start(clean(Script::new()).steps(
        "Enthusiast",
        1,
        vec![Step::ReadTarget, read(&caller), Step::Answer],
    ));
    let run = opencode_run(&repo, &bin, &fake);
    run.assert_code(0);
    let reads = context_reads(&run, "enthusiast");
    assert_eq!(reads.len(), 1, "{reads:?}\n{}", run.stderr);
    assert_eq!(reads[0]["path"], "src/caller.rs");
    let (repo, secret, paths) = secrets_repo();
    let mut steps = vec![Step::ReadTarget];
    steps.extend(paths.iter().map(|p| read(p)));
    steps.push(Step::Answer);
    let fake = FakeOpenAi::start(clean(Script::new()).steps("Enthusiast", 1, steps));
    let run = opencode_run(&repo, &bin, &fake);
    let bodies: Vec<String> = fake.requests().iter().map(|r| r.body.to_string()).collect();
    assert_refused_everywhere(&run, &bodies, &secret);
}

/// Codex reads a tracked caller with a shell command, inside its filesystem view: the read
/// is recorded and the review has a verdict.
#[test]
fn codex_reads_a_tracked_caller_and_the_read_is_recorded() {
    let Some(bin) = crate::real_backends::real_bin(
        "AREV_TEST_CODEX_BIN",
        "codex_reads_a_tracked_caller_and_the_read_is_recorded",
    ) else {
        return;
    };
    let (repo, _, _) = secrets_repo();
    let fake = FakeOpenAi::start(clean(Script::new()).steps(
        "Enthusiast",
        1,
        vec![Step::ReadTarget, codex_cat("src/caller.rs"), Step::Answer],
    ));
    let run = codex_run(&repo, &bin, &fake);
    run.assert_code(0);
    let reads = context_reads(&run, "enthusiast");
    assert_eq!(reads.len(), 1, "{reads:?}\n{}", run.stderr);
    assert_eq!(reads[0]["path"], "src/caller.rs");
    assert_eq!(reads[0]["sha256"], sha256(CALLER.as_bytes()));
}

/// A Codex shell command `cat <path>`.
fn codex_cat(path: &str) -> Step {
    Step::Tool {
        name: "exec_command".into(),
        args: json!({ "cmd": format!("cat {path}") }),
    }
}

/// Run `arev run src/lib.rs` with the real Codex against `fake`.
fn codex_run(repo: &TestRepo, bin: &std::path::Path, fake: &FakeOpenAi) -> Run {
    codex_run_with(repo, bin, fake, "")
}

/// [`codex_run`] with `extra` TOML after the agent's table.
fn codex_run_with(repo: &TestRepo, bin: &std::path::Path, fake: &FakeOpenAi, extra: &str) -> Run {
    let cfg = ci_config(
        repo,
        &format!("{}{extra}", crate::real_backends::codex_agent(bin, fake)),
    );
    let mut arev = repo
        .arev()
        .args(&["run", "src/lib.rs", "--format", "json", "--agent", "codex"])
        .args(&["--config", &cfg])
        .env("AREV_AGENT_TIMEOUT", "120s");
    for (k, v) in fake.codex_env(&repo.scratch.join("home")) {
        arev = arev.env(k, &v);
    }
    arev.run()
}

/// Codex's read-only sandbox lets its shell read anything, and a command's output reaches
/// the model before the read gate acts: in its filesystem view the ignored `.env`, the
/// untracked file and `.git` do not exist (masked), so the `cat` of each shows nothing, the
/// run aborts `enthusiast_offtarget_read`, and the secret reaches no request body and no
/// file of the run.
#[test]
fn codex_in_its_view_never_sends_ignored_untracked_or_git_files() {
    let Some(bin) = crate::real_backends::real_bin(
        "AREV_TEST_CODEX_BIN",
        "codex_in_its_view_never_sends_ignored_untracked_or_git_files",
    ) else {
        return;
    };
    let (repo, secret, _) = secrets_repo();
    let fake = FakeOpenAi::start(clean(Script::new()).steps(
        "Enthusiast",
        1,
        vec![
            Step::ReadTarget,
            codex_cat(".env"),
            codex_cat("scratch.rs"),
            codex_cat(".git/config"),
            Step::Answer,
        ],
    ));
    let run = codex_run(&repo, &bin, &fake);
    let bodies: Vec<String> = fake.requests().iter().map(|r| r.body.to_string()).collect();
    assert_refused_everywhere(&run, &bodies, &secret);
}

/// A Codex panel where `bwrap` is not on PATH: Codex runs in a bubblewrap view, so `arev
/// run` stops before any run dir (exit 2, one line naming bubblewrap and how to install it)
/// and `arev doctor` fails the agent with the same fix. No Codex CLI is needed: the check
/// comes before any dispatch.
#[test]
fn a_codex_panel_without_bubblewrap_stops_before_the_run() {
    let repo = TestRepo::new();
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
    let agent = "[agents.local]\nbackend = \"codex\"\nbinary = \"/bin/true\"\n[agents.local.models]\nhaiku = \"m1\"\nsonnet = \"m1\"\nopus = \"m1\"\n";
    let cfg = crate::self_hosted::panel_config(&repo, agent);
    let path = bin.display().to_string();
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs", "--config", &cfg])
        .env("PATH", &path)
        .env("OPENAI_API_KEY", "sk-fake")
        .run();
    run.assert_code(2);
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", run.stderr);
    assert!(
        lines[0].contains("agent `local` (codex backend)")
            && lines[0].contains("Codex runs in a filesystem view")
            && lines[0].contains("`bwrap` is not on PATH")
            && lines[0].contains("apt-get install bubblewrap"),
        "{}",
        run.stderr
    );
    assert!(run.run_dirs().is_empty(), "a run dir was made");
    let doctor = repo
        .arev()
        .args(&["doctor", "--config", &cfg])
        .env("PATH", &path)
        .env("OPENAI_API_KEY", "sk-fake")
        .run();
    assert!(
        doctor
            .stdout
            .lines()
            .any(|l| l.starts_with("FAIL") && l.contains("`bwrap` is not on PATH")),
        "{}",
        doctor.stdout
    );
}

// ---------------------------------------------------------------------------------------
// `context = "target"`: every file but the target's is hidden from the CLI
// ---------------------------------------------------------------------------------------

const TARGET_ONLY: &str = "[review]\ncontext = \"target\"\n";

/// A repository whose tracked, committed `src/caller.rs` holds the secret (readable in tree
/// mode, outside the scope in target mode); returns it and the secret.
fn tracked_secret_repo() -> (TestRepo, String) {
    let repo = TestRepo::new();
    let secret = format!("AREV-TRACKED-SECRET-{}-4e1b", std::process::id());
    repo.write("src/caller.rs", &format!("{CALLER}// {secret}\n"))
        .commit("caller");
    (repo, secret)
}

/// Under `context = "target"` Codex's view hides every non-target path, tracked ones too:
/// the `cat` of the committed caller shows nothing, the run aborts
/// `enthusiast_offtarget_read`, and the caller's content reaches no request body.
#[test]
fn codex_in_target_mode_never_sends_a_tracked_non_target_file() {
    let Some(bin) = crate::real_backends::real_bin(
        "AREV_TEST_CODEX_BIN",
        "codex_in_target_mode_never_sends_a_tracked_non_target_file",
    ) else {
        return;
    };
    let (repo, secret) = tracked_secret_repo();
    let fake = FakeOpenAi::start(clean(Script::new()).steps(
        "Enthusiast",
        1,
        vec![Step::ReadTarget, codex_cat("src/caller.rs"), Step::Answer],
    ));
    let run = codex_run_with(&repo, &bin, &fake, TARGET_ONLY);
    let bodies: Vec<String> = fake.requests().iter().map(|r| r.body.to_string()).collect();
    // The target itself was read (the view hides only what is outside it).
    assert!(
        bodies.iter().any(|b| b.contains("s.parse().unwrap()")),
        "the target never reached the model"
    );
    assert_refused_everywhere(&run, &bodies, &secret);
    assert_eq!(run.meta()["context"]["mode"], "target");
}

/// Under `context = "target"` Gemini's policy and view refuse the committed caller: the run
/// aborts `enthusiast_offtarget_read` and its content reaches no request body.
#[test]
fn gemini_in_target_mode_never_sends_a_tracked_non_target_file() {
    let Some(bin) = crate::real_backends::real_bin(
        "AREV_TEST_GEMINI_BIN",
        "gemini_in_target_mode_never_sends_a_tracked_non_target_file",
    ) else {
        return;
    };
    let (repo, secret) = tracked_secret_repo();
    let caller = repo.root.join("src/caller.rs");
    let fake = FakeGemini::start(clean(Script::new()).steps(
        "Enthusiast",
        1,
        vec![
            Step::ReadTarget,
            Step::Tool {
                name: "read_file".into(),
                args: json!({"file_path": caller.display().to_string()}),
            },
            Step::Answer,
        ],
    ));
    let run = gemini_run_with(&repo, &bin, &fake, TARGET_ONLY);
    let bodies: Vec<String> = fake.requests().iter().map(|r| r.body.to_string()).collect();
    assert!(
        bodies.iter().any(|b| b.contains("s.parse().unwrap()")),
        "the target never reached the model"
    );
    assert_refused_everywhere(&run, &bodies, &secret);
    assert_eq!(run.meta()["context"]["mode"], "target");
}

/// Under `context = "target"` OpenCode's read rules deny the committed caller: the run
/// aborts `enthusiast_offtarget_read` and its content reaches no request body.
#[test]
fn opencode_in_target_mode_never_sends_a_tracked_non_target_file() {
    let Some(bin) = crate::self_hosted::opencode_bin(
        "opencode_in_target_mode_never_sends_a_tracked_non_target_file",
    ) else {
        return;
    };
    let (repo, secret) = tracked_secret_repo();
    let caller = repo.root.join("src/caller.rs");
    let fake = FakeOpenAi::start(clean(Script::new()).steps(
        "Enthusiast",
        1,
        vec![
            Step::ReadTarget,
            Step::Tool {
                name: "read".into(),
                args: json!({ "filePath": caller.display().to_string() }),
            },
            Step::Answer,
        ],
    ));
    let agent = format!(
        "{}{TARGET_ONLY}",
        crate::self_hosted::opencode_agent(&bin, &fake)
    );
    let cfg = crate::self_hosted::panel_config(&repo, &agent);
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs", "--format", "json", "--config", &cfg])
        .env("AREV_AGENT_TIMEOUT", "180s")
        .env(crate::fake_openai::KEY_VAR, "sk-fake-openai-000")
        .run();
    let bodies: Vec<String> = fake.requests().iter().map(|r| r.body.to_string()).collect();
    assert_refused_everywhere(&run, &bodies, &secret);
    assert_eq!(run.meta()["context"]["mode"], "target");
}

/// A Codex command that reads only a masked file (the ignored `.env`) is seen and aborts the
/// run: the mask is an empty regular file, which Codex's own sandbox reads (a `/dev/null`
/// there reads "Permission denied", and Codex then reports no item for the command).
#[test]
fn codex_reading_only_a_masked_file_aborts() {
    let Some(bin) = crate::real_backends::real_bin(
        "AREV_TEST_CODEX_BIN",
        "codex_reading_only_a_masked_file_aborts",
    ) else {
        return;
    };
    let (repo, secret, _) = secrets_repo();
    let fake = FakeOpenAi::start(clean(Script::new()).steps(
        "Enthusiast",
        1,
        vec![Step::ReadTarget, codex_cat(".env"), Step::Answer],
    ));
    let run = codex_run(&repo, &bin, &fake);
    let bodies: Vec<String> = fake.requests().iter().map(|r| r.body.to_string()).collect();
    assert_refused_everywhere(&run, &bodies, &secret);
}

/// Under `context = "target"` Claude Code's deny rules cover every non-target path: the
/// Read of the committed caller is refused by the CLI, the run aborts
/// `enthusiast_offtarget_read`, and the caller's content reaches no request body.
#[test]
fn claude_in_target_mode_refuses_a_tracked_non_target_file() {
    let Some(bin) =
        crate::real_claude::claude_bin("claude_in_target_mode_refuses_a_tracked_non_target_file")
    else {
        return;
    };
    let (repo, secret) = tracked_secret_repo();
    let cfg = claude_config(&repo, &bin);
    let mut text = std::fs::read_to_string(&cfg).unwrap();
    text.push_str(TARGET_ONLY);
    std::fs::write(&cfg, text).unwrap();
    let fake = FakeAnthropic::start(
        ClaudeScript::new()
            .answer("Enthusiast", 1, json!({"findings": []}))
            .steps(
                "Enthusiast",
                1,
                vec![
                    ClaudeStep::ReadTarget,
                    ClaudeStep::Read(repo.root.join("src/caller.rs")),
                    ClaudeStep::Answer,
                ],
            )
            .answer("Adversary", 1, json!({"heuristics": [], "safe_zones": []})),
    );
    let mut arev = repo
        .arev()
        .args(&["run", "src/lib.rs", "--format", "json", "--config", &cfg])
        .env("AREV_AGENT_TIMEOUT", "120s");
    for (k, v) in fake.claude_env(&repo.scratch.join("home")) {
        arev = arev.env(k, &v);
    }
    let run = arev.run();
    let bodies: Vec<String> = fake.requests().iter().map(|r| r.body.to_string()).collect();
    assert!(
        bodies.iter().any(|b| b.contains("s.parse().unwrap()")),
        "the target never reached the model"
    );
    assert_refused_everywhere(&run, &bodies, &secret);
    // The CLI refused the Read itself: its tool result is an error saying so.
    let last = fake
        .requests()
        .into_iter()
        .filter(|r| r.role() == Some("Enthusiast"))
        .max_by_key(|r| r.step)
        .expect("enthusiast requests");
    let blocks: Vec<Value> = last.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .cloned()
        .collect();
    let caller = repo.root.join("src/caller.rs").display().to_string();
    let id = blocks
        .iter()
        .find(|b| b["type"] == "tool_use" && b["input"]["file_path"] == caller.as_str())
        .and_then(|b| b["id"].as_str())
        .expect("the Read of the caller");
    let result = blocks
        .iter()
        .find(|b| b["type"] == "tool_result" && b["tool_use_id"] == id)
        .expect("its result");
    assert_eq!(result["is_error"], true, "{result}");
    assert!(result.to_string().contains("denied"), "{result}");
}
