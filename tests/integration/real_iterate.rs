//! The REAL Codex (`AREV_TEST_CODEX_BIN`), Gemini (`AREV_TEST_GEMINI_BIN`) and OpenCode
//! (`AREV_TEST_OPENCODE_BIN`) CLIs as the Fixer of `arev run --iterate` (docs/iterate.md),
//! against their loopback fakes: the review confirms a finding, the CLI edits the file in
//! the iterate worktree with its own file tool (Codex's `apply_patch`, Gemini's `replace`,
//! OpenCode's `edit`), arev commits the fix on the iterate branch and exports
//! `iterate.patch`. Writes outside the worktree — a path outside the repository and one in
//! the user's own working tree — are refused by the CLI, or fail arev's write gate: the
//! files outside stay untouched either way. (The Claude Code Fixer is `real_claude.rs`.)
//! Skipped when a binary is unset, unless `AREV_REQUIRE_REAL_CLIS=1`.

use crate::fake_gemini::FakeGemini;
use crate::fake_llm::{Recorded, Script, Step};
use crate::fake_openai::{FakeOpenAi, KEY_VAR};
use crate::harness::{finding, ruling, Run, TestRepo};
use crate::real_backends::{codex_agent, gemini_agent, real_bin};
use crate::self_hosted::{opencode_agent, opencode_bin};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

const BUGGY: &str = "def add(a, b):\n    return a - b\n";
const FIXED: &str = "def add(a, b):\n    return a + b\n";

/// A scratch repository, nothing committed yet (the stray paths of [`Outside`] are known
/// before the fake model is scripted with them).
fn repo() -> TestRepo {
    let repo = TestRepo::new();
    std::fs::create_dir_all(repo.scratch.join("tmp")).unwrap();
    repo
}

/// `calc.py` whose `add` subtracts, committed with `config` as the repository's arev.toml.
fn commit(repo: &TestRepo, config: &str) {
    repo.write("arev.toml", config)
        .write("calc.py", BUGGY)
        .commit("calc");
}

/// Where a Fixer's stray writes go: outside the repository, and into the user's own
/// working tree (outside the worktree, inside the repository).
struct Outside {
    scratch: PathBuf,
    user_tree: PathBuf,
}

impl Outside {
    fn of(repo: &TestRepo) -> Self {
        Self {
            scratch: repo.scratch.join("escaped.txt"),
            user_tree: repo.root.join("escaped.py"),
        }
    }

    fn assert_untouched(&self) {
        for p in [&self.scratch, &self.user_tree] {
            assert!(
                !p.exists(),
                "a write outside the worktree landed: {}",
                p.display()
            );
        }
    }
}

/// Every review confirms F1 (calc.py:2) in round 1 and finds nothing in round 2; the Fixer
/// (round = iteration 1) plays `fixer` and says it applied F1. With `--max-iterations 2` the
/// second review is the last: `max-iterations`.
fn script(fixer: Vec<Step>) -> Script {
    Script::new()
        .answer(
            "Enthusiast",
            1,
            json!({"findings": [finding("F1", "calc.py", 2, "high", "logic")]}),
        )
        .answer("Adversary", 1, json!({"heuristics": [], "safe_zones": []}))
        .answer(
            "Judge",
            1,
            json!({"rulings": [ruling("F1", "calc.py", 2, "high", "enthusiast")],
                   "summary": "1 confirmed.", "convergence": true, "next_round_model": null}),
        )
        .answer("Enthusiast", 2, json!({"findings": []}))
        .answer("Adversary", 2, json!({"heuristics": [], "safe_zones": []}))
        .answer("Fixer", 1, json!({"applied": ["F1"], "skipped": []}))
        .steps("Fixer", 1, fixer)
}

const ITERATE: [&str; 7] = [
    "run",
    "calc.py",
    "--iterate",
    "--max-iterations",
    "2",
    "--format",
    "json",
];

/// The fix landed: the Fixer's edit in the worktree, committed on the iterate branch (and
/// only calc.py changed), exported as `iterate.patch`, the user's tree untouched.
fn assert_fixed(run: &Run, agent: &str) -> Value {
    run.assert_code(1);
    let report: Value = serde_json::from_str(&run.stdout).expect("json report");
    let it = &report["iterate"];
    assert_eq!(
        it["stop_reason"], "max-iterations",
        "{it:#}\n{}",
        run.stderr
    );
    let fix = &it["iterations"][0]["fix"];
    assert_eq!(fix["applied"], json!(["F1"]), "{fix:#}");
    assert_eq!(fix["changed"], json!(["calc.py"]), "{fix:#}");
    let wt = PathBuf::from(it["worktree"].as_str().unwrap());
    assert_eq!(std::fs::read_to_string(wt.join("calc.py")).unwrap(), FIXED);
    let branch = it["branch"].as_str().unwrap();
    let repo_root = run_repo_root(&wt);
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(&repo_root)
            .args(args)
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    assert_eq!(
        git(&["log", "-1", "--format=%s", branch]).trim(),
        "arev: fix F1 (iteration 1)"
    );
    assert_eq!(git(&["show", &format!("{branch}:calc.py")]), FIXED);
    assert_eq!(
        git(&["diff", "--name-only", "HEAD", branch]).trim(),
        "calc.py"
    );
    let patch = std::fs::read_to_string(run.run_dir().join("iterate.patch")).unwrap();
    assert!(
        patch.contains("-    return a - b\n+    return a + b\n"),
        "{patch}"
    );
    assert!(!patch.contains("escaped"), "{patch}");
    let outcome: Value = serde_json::from_str(
        &std::fs::read_to_string(
            run.run_dir()
                .join("iterations/1/agents/fix/fixer/outcome.json"),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(outcome["agent"], agent, "{outcome:#}");
    report
}

/// The repository a worktree `<repo>/.arev/worktrees/<id>` belongs to.
fn run_repo_root(wt: &Path) -> PathBuf {
    wt.ancestors().nth(3).unwrap().to_path_buf()
}

/// The Fixer's requests, by step.
fn fixer_requests(reqs: &[Recorded]) -> Vec<&Recorded> {
    let mut v: Vec<&Recorded> = reqs.iter().filter(|r| r.role() == Some("Fixer")).collect();
    v.sort_by_key(|r| r.step);
    v
}

/// A Codex `apply_patch` adding `path` with one line.
fn codex_add(path: &str) -> Step {
    Step::Tool {
        name: "custom:apply_patch".into(),
        args: Value::String(format!(
            "*** Begin Patch\n*** Add File: {path}\n+escaped\n*** End Patch\n"
        )),
    }
}

#[test]
fn arev_iterate_with_real_codex_cli_as_fixer() {
    let Some(bin) = real_bin(
        "AREV_TEST_CODEX_BIN",
        "arev_iterate_with_real_codex_cli_as_fixer",
    ) else {
        return;
    };
    let fix = Step::Tool {
        name: "custom:apply_patch".into(),
        args: Value::String(
            "*** Begin Patch\n*** Update File: calc.py\n@@\n def add(a, b):\n-    return a - b\n+    return a + b\n*** End Patch\n"
                .into(),
        ),
    };
    let repo = repo();
    let outside = Outside::of(&repo);
    let fake = FakeOpenAi::start(script(vec![
        Step::ReadTarget,
        codex_add(&outside.scratch.display().to_string()),
        codex_add(&outside.user_tree.display().to_string()),
        fix,
        Step::Answer,
    ]));
    commit(&repo, &codex_agent(&bin, &fake));
    let before = repo.state();
    let mut arev = repo
        .arev()
        .args(&ITERATE)
        .args(&["--agent", "codex"])
        .env("TMPDIR", &repo.scratch.join("tmp").display().to_string())
        .env("AREV_AGENT_TIMEOUT", "120s");
    for (k, v) in fake.codex_env(&repo.scratch.join("home")) {
        arev = arev.env(k, &v);
    }
    let run = arev.run();
    repo.assert_untouched(&before);
    outside.assert_untouched();
    let report = assert_fixed(&run, "codex");
    // Codex itself refused both stray patches (the sandbox's writable root is the
    // worktree alone): the model was told so, and arev saw no write outside.
    let reqs = fake.requests();
    let fixer = fixer_requests(&reqs);
    for step in [2, 3] {
        let body = fixer
            .iter()
            .find(|r| r.step == step)
            .map(|r| r.body.to_string())
            .unwrap();
        assert!(body.contains("rejected"), "step {step}: {body}");
    }
    assert_eq!(
        report["iterate"]["iterations"][0]["fix"]["errors"],
        json!([])
    );
    assert!(
        fake.stray_requests().is_empty(),
        "{:?}",
        fake.stray_requests()
    );
}

/// The Fixer's stray writes and its fix through Gemini CLI's `write_file` and `replace`,
/// under `--approval-mode auto_edit`: `write_file` refuses both paths outside the workspace
/// (the tool result is an error, listed as denied), `replace` edits calc.py.
#[test]
fn arev_iterate_with_real_gemini_cli_as_fixer() {
    let Some(bin) = real_bin(
        "AREV_TEST_GEMINI_BIN",
        "arev_iterate_with_real_gemini_cli_as_fixer",
    ) else {
        return;
    };
    let repo = repo();
    let outside = Outside::of(&repo);
    let write = |p: &Path| Step::Tool {
        name: "write_file".into(),
        args: json!({"file_path": p.display().to_string(), "content": "escaped\n"}),
    };
    let fake = FakeGemini::start(script(vec![
        Step::ReadTarget,
        write(&outside.scratch),
        write(&outside.user_tree),
        Step::Tool {
            name: "replace".into(),
            args: json!({"file_path": "{target}", "old_string": "return a - b",
                         "new_string": "return a + b", "instruction": "add, not subtract"}),
        },
        Step::Answer,
    ]));
    commit(&repo, &gemini_agent(&bin));
    let before = repo.state();
    let mut arev = repo
        .arev()
        .args(&ITERATE)
        .args(&["--agent", "gemini"])
        .env("TMPDIR", &repo.scratch.join("tmp").display().to_string())
        .env("AREV_AGENT_TIMEOUT", "120s");
    for (k, v) in fake.gemini_env(&repo.scratch.join("home")) {
        arev = arev.env(k, &v);
    }
    let run = arev.run();
    repo.assert_untouched(&before);
    outside.assert_untouched();
    let report = assert_fixed(&run, "gemini");
    let fix = &report["iterate"]["iterations"][0]["fix"];
    assert_eq!(
        fix["errors"],
        json!([
            format!("fixer_write_denied:{}", outside.scratch.display()),
            format!("fixer_write_denied:{}", outside.user_tree.display()),
        ]),
        "{fix:#}"
    );
    // The CLI offered the Fixer its file tools and nothing that runs or fetches.
    let reqs = fake.requests();
    let fixer = fixer_requests(&reqs);
    let tools = fixer[0].body["tools"].to_string();
    for t in ["\"write_file\"", "\"replace\"", "\"read_file\""] {
        assert!(tools.contains(t), "{t} not offered: {tools}");
    }
    for t in [
        "run_shell_command",
        "web_fetch",
        "google_web_search",
        "write_todos",
    ] {
        assert!(!tools.contains(t), "{t} offered: {tools}");
    }
    assert!(
        fake.stray_requests().is_empty(),
        "{:?}",
        fake.stray_requests()
    );
}

/// The same through OpenCode on a self-hosted endpoint: its `write` to a path outside the
/// worktree is refused by the Fixer's permissions (`external_directory`, `edit` outside the
/// cwd), its `edit` fixes calc.py.
#[test]
fn arev_iterate_with_real_opencode_cli_as_fixer() {
    let Some(bin) = opencode_bin("arev_iterate_with_real_opencode_cli_as_fixer") else {
        return;
    };
    let repo = repo();
    let outside = Outside::of(&repo);
    let write = |p: &Path| Step::Tool {
        name: "write".into(),
        args: json!({"filePath": p.display().to_string(), "content": "escaped\n"}),
    };
    let fake = FakeOpenAi::start(script(vec![
        Step::ReadTarget,
        write(&outside.scratch),
        write(&outside.user_tree),
        Step::Tool {
            name: "edit".into(),
            args: json!({"filePath": "{target}", "oldString": "return a - b",
                         "newString": "return a + b"}),
        },
        Step::Answer,
    ]));
    commit(
        &repo,
        &format!(
            "{}[roles]\nenthusiast = \"local\"\nadversary = \"local\"\njudge = \"local\"\n",
            opencode_agent(&bin, &fake)
        ),
    );
    let before = repo.state();
    let run = repo
        .arev()
        .args(&ITERATE)
        .env("TMPDIR", &repo.scratch.join("tmp").display().to_string())
        .env("AREV_AGENT_TIMEOUT", "180s")
        .env(KEY_VAR, "sk-fake-openai-000")
        .run();
    repo.assert_untouched(&before);
    outside.assert_untouched();
    let report = assert_fixed(&run, "local");
    let fix = &report["iterate"]["iterations"][0]["fix"];
    assert_eq!(
        fix["errors"],
        json!([
            format!("fixer_write_denied:{}", outside.scratch.display()),
            format!("fixer_write_denied:{}", outside.user_tree.display()),
        ]),
        "{fix:#}"
    );
    let reqs = fake.requests();
    let fixer = fixer_requests(&reqs);
    let refused: String = fixer
        .iter()
        .filter(|r| r.step == 3)
        .map(|r| r.body.to_string())
        .collect();
    assert!(
        refused
            .matches("prevents you from using this specific tool call")
            .count()
            >= 2,
        "{refused}"
    );
    assert!(
        fake.stray_requests().is_empty(),
        "{:?}",
        fake.stray_requests()
    );
}

/// A link the repository commits that leads outside the worktree (`vendor -> <outside>`):
/// the iterate is refused before any agent starts (exit 2, naming the link) — the real
/// Codex Fixer's `apply_patch` of `vendor/planted.py` never runs, the model gets no request,
/// nothing lands outside (docs/trust.md, round five).
#[test]
fn a_link_leading_outside_stops_the_iterate_before_the_real_codex_fixer() {
    let Some(bin) = real_bin(
        "AREV_TEST_CODEX_BIN",
        "a_link_leading_outside_stops_the_iterate_before_the_real_codex_fixer",
    ) else {
        return;
    };
    let repo = repo();
    let outside = repo.scratch.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, repo.root.join("vendor")).unwrap();
    let fake = FakeOpenAi::start(script(vec![
        Step::ReadTarget,
        codex_add("vendor/planted.py"),
        Step::Answer,
    ]));
    commit(&repo, &codex_agent(&bin, &fake));
    let before = repo.state();
    let mut arev = repo
        .arev()
        .args(&ITERATE)
        .args(&["--agent", "codex"])
        .env("TMPDIR", &repo.scratch.join("tmp").display().to_string())
        .env("AREV_AGENT_TIMEOUT", "120s");
    for (k, v) in fake.codex_env(&repo.scratch.join("home")) {
        arev = arev.env(k, &v);
    }
    let run = arev.run();
    let landed: Vec<PathBuf> = std::fs::read_dir(&outside)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(landed.is_empty(), "a write landed outside: {landed:?}");
    run.assert_code(2);
    assert!(
        run.stderr.contains("`vendor` is a symbolic link to"),
        "{}",
        run.stderr
    );
    assert!(fake.requests().is_empty(), "an agent was started");
    assert!(run.run_dirs().is_empty());
    repo.assert_untouched(&before);
}

/// A real Codex Fixer whose shell makes a link leading outside the worktree (`ln -s
/// <outside> out`, Codex's `exec_command`, which its `workspace-write` sandbox lets run in
/// the worktree): a shell is no Fixer's tool, so the tool gate aborts its dispatch
/// (`fixer_forbidden_tool`, exit 3) before the link gate would look — nothing of the
/// iteration is committed, no second review runs, nothing lands outside and the user's tree
/// is untouched (docs/trust.md, round five).
#[test]
fn a_real_codex_fixer_making_a_link_outside_stops_the_iterate() {
    let Some(bin) = real_bin(
        "AREV_TEST_CODEX_BIN",
        "a_real_codex_fixer_making_a_link_outside_stops_the_iterate",
    ) else {
        return;
    };
    let repo = repo();
    let outside = repo.scratch.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let fake = FakeOpenAi::start(script(vec![
        Step::ReadTarget,
        Step::Tool {
            name: "exec_command".into(),
            args: json!({ "cmd": format!("ln -s {} out", outside.display()) }),
        },
        Step::Answer,
    ]));
    commit(&repo, &codex_agent(&bin, &fake));
    let before = repo.state();
    let mut arev = repo
        .arev()
        .args(&ITERATE)
        .args(&["--agent", "codex"])
        .env("TMPDIR", &repo.scratch.join("tmp").display().to_string())
        .env("AREV_AGENT_TIMEOUT", "120s");
    for (k, v) in fake.codex_env(&repo.scratch.join("home")) {
        arev = arev.env(k, &v);
    }
    let run = arev.run();
    repo.assert_untouched(&before);
    run.assert_code(3);
    let report: Value = serde_json::from_str(&run.stdout).expect("json report");
    assert_eq!(
        report["abort_reason"], "fixer_forbidden_tool",
        "{}",
        run.stderr
    );
    let its = report["iterate"]["iterations"].as_array().unwrap();
    assert_eq!(its.len(), 1, "{its:#?}");
    assert!(its[0]["fix"]["commit"].is_null(), "{:#}", its[0]["fix"]);
    let branch = report["iterate"]["branch"].as_str().unwrap();
    assert_eq!(repo.git(&["rev-parse", branch]).trim(), before.head_commit);
    assert!(std::fs::read_dir(&outside).unwrap().next().is_none());
    assert!(!run.run_dir().join("iterations/2").exists());
    // The link is real: Codex ran the command in the worktree, which is kept as it was left.
    let wt = PathBuf::from(report["iterate"]["worktree"].as_str().unwrap());
    let link = std::fs::read_link(wt.join("out")).unwrap();
    assert_eq!(link, outside);
}
