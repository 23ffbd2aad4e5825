//! Agent configuration through the real path with the fake agent: `command` agents,
//! Enthusiast round-robin, per-agent timeouts, `arev init`, and every config/agent error
//! (one line, exit 2; a missing binary at dispatch: exit 3).

use crate::harness::{a_finding_to_judge, finding, ruling, TestRepo};
use serde_json::{json, Value};

const FAKE: &str = env!("CARGO_BIN_EXE_arev-fake-agent");

/// A `command` agent running the fake agent (which prints Claude stream-json).
fn command_agent(name: &str, marker: &str, extra: &str) -> String {
    format!(
        "[agents.{name}]\nbackend = \"command\"\nbinary = \"{FAKE}\"\nformat = \"claude\"\n\
         extra_args = [\"--model\", \"{{model}}\", \"--marker\", \"{marker}\"]\n{extra}\n"
    )
}

fn marker(entry: &Value) -> String {
    let argv: Vec<&str> = entry["argv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    let i = argv.iter().position(|a| *a == "--marker").unwrap();
    argv[i + 1].to_owned()
}

fn one_line_error(run: &crate::harness::Run, code: i32, needle: &str) {
    run.assert_code(code);
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one line expected: {:?}", run.stderr);
    assert!(lines[0].starts_with("arev: error: "), "{}", lines[0]);
    assert!(lines[0].contains(needle), "{:?} lacks {needle:?}", lines[0]);
}

/// Enthusiast passes rotate over the listed agents (pass p → list[(p-1) % len]); each
/// `command` agent gets exactly its args with `{model}` filled, and the report attributes
/// findings and rulings to the agents that produced them.
#[test]
fn command_agents_round_robin_and_attribution() {
    let repo = TestRepo::new();
    repo.write(
        "arev.toml",
        &format!(
            "{}{}{}[roles]\nenthusiast = [\"alpha\", \"beta\"]\nadversary = \"beta\"\njudge = \"judge-cmd\"\n",
            command_agent("alpha", "a", ""),
            command_agent("beta", "b", ""),
            command_agent("judge-cmd", "j", ""),
        ),
    );
    repo.commit("config");
    let f = finding("F1", "src/lib.rs", 2, "high", "error-handling");
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs", "--passes", "3", "--max-rounds", "1", "--model", "sonnet"])
        .script(json!({"steps": [
            {"role": "enthusiast", "round": 1, "pass": 2, "answer": {"findings": [f]}},
            // An extra key is ignored; the answer is valid as it is.
            {"role": "enthusiast", "round": 1, "answer": {"findings": [], "note": "read every line of the target; nothing to report"}},
            {"role": "judge", "round": 1, "answer": {"rulings": [ruling("F1", "src/lib.rs", 2, "high", "enthusiast")],
                "summary": "s", "convergence": true, "next_round_model": null}},
        ]}))
        .run();
    run.assert_code(1);
    let mut seen: Vec<(String, Option<u64>, String, String)> = run
        .fake_log()
        .iter()
        .map(|e| {
            (
                e["role"].as_str().unwrap().to_owned(),
                e["pass"].as_u64(),
                marker(e),
                e["model"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    seen.sort();
    let expect =
        |r: &str, p: Option<u64>, m: &str| (r.to_owned(), p, m.to_owned(), "sonnet".to_owned());
    assert_eq!(
        seen,
        [
            expect("adversary", None, "b"),
            expect("enthusiast", Some(1), "a"),
            expect("enthusiast", Some(2), "b"),
            expect("enthusiast", Some(3), "a"),
            expect("judge", None, "j"),
        ]
    );
    let report = run.report();
    assert_eq!(report["confirmed"][0]["found_by"], json!(["beta"]));
    assert_eq!(report["confirmed"][0]["ruled_by"], "judge-cmd");
    assert_eq!(report["cost"]["by_agent"]["alpha"]["dispatches"], 2);
    // A mixed panel's text and Markdown reports name who found and who ruled.
    assert!(
        run.stdout.contains("found by beta · ruled by judge-cmd"),
        "{}",
        run.stdout
    );
    let md = std::fs::read_to_string(run.run_dir().join("report.md")).unwrap();
    assert!(
        md.contains("<sub>found by beta · ruled by judge-cmd</sub>"),
        "{md}"
    );
    // The prompt (with the role body appended) went to stdin: the fake decoded the header.
    let prompt =
        std::fs::read_to_string(run.run_dir().join("agents/r1/enthusiast-p1/prompt.md")).unwrap();
    assert!(prompt.starts_with("[AR Round 1"));
    // --agent overrides every role, the list included.
    let before = run.fake_log().len();
    // The passes find nothing to judge; they answer once this run's Adversary is recorded
    // (the first run's is the first match of the gate), so it is never cancelled for that
    // (docs/contracts.md §7) and all three dispatches are seen.
    let mut gate = repo.adversary_recorded(1);
    gate["count"] = json!(2);
    let run = repo
        .arev()
        .args(&[
            "run",
            "src/lib.rs",
            "--passes",
            "2",
            "--max-rounds",
            "1",
            "--agent",
            "judge-cmd",
        ])
        .script(json!({"steps": [{"role": "enthusiast", "wait_for": gate}]}))
        .run();
    run.assert_code(0);
    let log = run.fake_log();
    // Two passes and the Adversary, each once (a valid empty answer is never re-prompted).
    let passes = log[before..]
        .iter()
        .filter(|e| e["role"] == "enthusiast")
        .count();
    assert_eq!(passes, 2, "{log:?}");
    assert_eq!(log.len() - before, 3, "{log:?}");
    assert!(log[before..].iter().all(|e| marker(e) == "j"));
}

/// An agent's own `timeout` bounds its dispatches even when the run-wide limit is long.
#[test]
fn per_agent_timeout() {
    let repo = TestRepo::new();
    repo.write(
        "arev.toml",
        &format!(
            "{}[timeouts]\ngrace = \"1s\"\n[roles]\nadversary = \"slow\"\n",
            command_agent("slow", "s", "timeout = \"1s\"")
        ),
    );
    repo.commit("config");
    let started = std::time::Instant::now();
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs", "--format", "json"])
        .script(json!({"steps": [{"role": "adversary", "hang": true}, a_finding_to_judge()]}))
        .run();
    run.assert_code(3);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    let meta = run.meta();
    assert_eq!(meta["abort_reason"], "agent_dispatch_unavailable");
    assert!(
        meta["abort_detail"].as_str().unwrap().contains("timed out"),
        "{}",
        meta["abort_detail"]
    );
}

/// Bad agent configuration: one line naming the key (and file), exit 2, no run dir.
#[test]
fn agent_config_errors_exit_two() {
    let repo = TestRepo::new();
    let cases: Vec<(String, &str)> = vec![
        ("[agents.codex]\nflavour = 1\n".into(), "arev.toml: unknown key `agents.codex.flavour`"),
        ("[agents.x]\nbackend = \"codex\"\nbinary = \"codex\"\n[agents.x.models]\nopus = \"o\"\nhuge = \"h\"\n".into(), "unknown key `agents.x.models.huge`"),
        ("[agents.x]\nbackend = \"cursor\"\nbinary = \"x\"\n".into(), "arev.toml"),
        ("[roles]\nenthusiast = [\"claude\", \"ghost\"]\n".into(), "unknown agent `ghost`"),
        ("[roles]\nenthusiast = []\n".into(), "roles.enthusiast: must name at least one agent"),
        ("[agents.w]\nbackend = \"command\"\nbinary = \"w\"\n".into(), "agents.w.format"),
        ("[agents.codex]\nformat = \"claude\"\n".into(), "agents.codex.format: only for backend = \"command\""),
        ("[agents.codex]\ntimeout = \"soon\"\n".into(), "agents.codex.timeout"),
        ("[agents.codex\n".into(), "arev.toml"),
    ];
    for (text, needle) in cases {
        repo.write("arev.toml", &text);
        let run = repo.arev().args(&["run", "src/lib.rs"]).run();
        one_line_error(&run, 2, needle);
        assert!(run.run_dirs().is_empty());
    }
    std::fs::remove_file(repo.root.join("arev.toml")).unwrap();
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs"])
        .env("AREV_MODEL", "gpt")
        .run();
    one_line_error(
        &run,
        2,
        "AREV_MODEL=gpt: expected one of haiku, sonnet, opus",
    );
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs"])
        .env("AREV_FAIL_ON", "sometimes")
        .run();
    one_line_error(&run, 2, "AREV_FAIL_ON=sometimes");
}

/// The env layer sets config keys (and loses to flags).
#[test]
fn env_layer_sets_keys() {
    let repo = TestRepo::new();
    // The Enthusiast answers once this run's Adversary is recorded (the n-th run's is the
    // gate's n-th match), so the Adversary is never cancelled before it logs its model.
    let held = |runs: u64| {
        let mut gate = repo.adversary_recorded(1);
        gate["count"] = json!(runs);
        json!({"steps": [{"role": "enthusiast", "wait_for": gate}]})
    };
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs", "--max-rounds", "1"])
        .env("AREV_MODEL", "haiku")
        .script(held(1))
        .run();
    run.assert_code(0);
    let models = |log: &[Value]| -> Vec<(String, String)> {
        let mut m: Vec<(String, String)> = log
            .iter()
            .map(|e| {
                (
                    e["role"].as_str().unwrap().to_owned(),
                    e["model"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        m.sort();
        m
    };
    let pair = |r: &str, m: &str| (r.to_owned(), m.to_owned());
    assert_eq!(
        models(&run.fake_log()),
        [pair("adversary", "haiku"), pair("enthusiast", "haiku")]
    );
    let before = run.fake_log().len();
    let run = repo
        .arev()
        .args(&[
            "run",
            "src/lib.rs",
            "--max-rounds",
            "1",
            "--model",
            "sonnet",
        ])
        .env("AREV_MODEL", "haiku")
        .script(held(2))
        .run();
    run.assert_code(0);
    let log = run.fake_log();
    assert_eq!(
        models(&log[before..]),
        [pair("adversary", "sonnet"), pair("enthusiast", "sonnet")]
    );
}

/// A configured binary that does not exist is a setup error found before any run dir
/// (docs/contracts.md §20.4): exit 2, one line naming the agent, the path, the file that set it and the
/// CLI's install command. (Before the preflight this was a dispatch failure, exit 3.)
#[test]
fn missing_codex_binary_is_a_setup_error_naming_the_config_file() {
    let repo = TestRepo::new();
    repo.write(
        "arev.toml",
        "[agents.codex]\nbinary = \"/nonexistent/bin/codex\"\n[roles]\nadversary = \"codex\"\n",
    );
    repo.commit("config");
    let run = repo.arev().args(&["run", "src/lib.rs"]).run();
    one_line_error(
        &run,
        2,
        &format!(
            "agent `codex` (codex backend): /nonexistent/bin/codex does not exist — install it \
             with `npm install -g @openai/codex@0.169.0`, or fix [agents.codex] binary = \
             \"/nonexistent/bin/codex\" (set in {})",
            repo.root.join("arev.toml").display()
        ),
    );
    assert!(run.run_dirs().is_empty(), "no run dir");
}

/// `arev init` writes a commented arev.toml at the repo root that loads (and overrides
/// nothing), asks nothing without a TTY, and never overwrites.
#[test]
fn init_writes_a_commented_config_once() {
    let repo = TestRepo::new();
    std::fs::create_dir_all(repo.root.join("src/deep")).unwrap();
    let run = repo
        .arev()
        .args(&["init"])
        .cwd(repo.root.join("src/deep"))
        .run();
    run.assert_code(0);
    assert!(run.stdout.is_empty());
    let text = std::fs::read_to_string(repo.root.join("arev.toml")).unwrap();
    assert!(
        text.contains("# enthusiast = [\"claude\", \"codex\"]"),
        "panel example"
    );
    assert!(text.contains("# [agents.gemini]"));
    // The written file is a valid layer: a review runs with it.
    repo.arev()
        .args(&["run", "src/lib.rs", "--max-rounds", "1"])
        .run()
        .assert_code(0);
    let again = repo.arev().args(&["init"]).run();
    one_line_error(&again, 2, "already exists");
    assert_eq!(
        std::fs::read_to_string(repo.root.join("arev.toml")).unwrap(),
        text
    );
    std::fs::remove_file(repo.root.join("arev.toml")).unwrap();
    repo.arev()
        .args(&["init", "--language", "de"])
        .run()
        .assert_code(0);
    let text = std::fs::read_to_string(repo.root.join("arev.toml")).unwrap();
    assert!(
        text.contains("\n[localization]\nprimary = \"de\"\n"),
        "{text}"
    );
}
