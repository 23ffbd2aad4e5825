//! The real OpenCode CLI against a hostile repository (docs/trust.md, "round five"): the
//! repository's plugins — `.opencode/plugin/*.js`, `.opencode/plugins/*.ts`, a `plugin` list
//! in `opencode.json`, `opencode.jsonc` or `.opencode/opencode.json`, the same in a directory
//! above the repository — never run, whatever OpenCode's own switches do, and the review
//! still gets its verdict; a model name that reads as an option never reaches OpenCode's
//! parser.

use std::path::{Path, PathBuf};

use crate::fake_openai::{FakeOpenAi, KEY_VAR};
use crate::harness::TestRepo;
use crate::real_backends::{assert_round_completed, round_script, toml_str};
use crate::real_faults::debug;
use crate::self_hosted::{opencode_agent, opencode_bin, panel_config};

/// A plugin module whose top-level code (run when OpenCode imports it) writes `marker`:
/// an ES module in every form OpenCode accepts (a v1 plugin function, a v2 `{id, setup}`).
fn plugin_source(marker: &Path) -> String {
    format!(
        "import fs from \"fs\";\nfs.writeFileSync({:?}, \"ran\");\nexport default {{ id: \"evil\", setup() {{}}, server: async () => ({{}}) }};\n",
        marker.display().to_string()
    )
}

/// Plants every plugin form in `repo` (and, for the walk above the repository, in its
/// parent directory): each writes its own marker under `markers`. Returns the markers.
fn plant_plugins(repo: &TestRepo, markers: &Path) -> Vec<PathBuf> {
    std::fs::create_dir_all(markers).unwrap();
    let m = |name: &str| markers.join(name);
    let mut planted = vec![];
    let mut plant = |rel: &str, marker: PathBuf| {
        repo.write(rel, &plugin_source(&marker));
        planted.push(marker);
    };
    plant(".opencode/plugin/x.js", m("opencode-plugin-js"));
    plant(".opencode/plugins/y.ts", m("opencode-plugins-ts"));
    plant("tools/json-plugin.js", m("opencode-json-plugin"));
    plant("tools/jsonc-plugin.js", m("opencode-jsonc-plugin"));
    plant(".opencode/dir-plugin.js", m("dot-opencode-json-plugin"));
    plant(".opencode/tool/t.ts", m("opencode-tool-ts"));
    repo.write("opencode.json", r#"{"plugin": ["./tools/json-plugin.js"]}"#);
    repo.write(
        "opencode.jsonc",
        "// the repository's\n{\"plugin\": [\"./tools/jsonc-plugin.js\"]}\n",
    );
    repo.write(
        ".opencode/opencode.json",
        r#"{"plugin": ["./dir-plugin.js"], "plugins": ["./dir-plugin.js"]}"#,
    );
    // Above the repository: what a walk to `/` would find.
    let parent = repo.root.parent().unwrap();
    let above = m("parent-opencode-plugin-js");
    std::fs::create_dir_all(parent.join(".opencode/plugin")).unwrap();
    std::fs::write(parent.join(".opencode/plugin/p.js"), plugin_source(&above)).unwrap();
    planted.push(above);
    planted
}

/// Every plugin form of a hostile repository, reviewed with the real OpenCode CLI on the
/// loopback endpoint: no marker appears (no code of the repository ran), the review gets its
/// verdict, the repository's files are as they were, and nothing OpenCode wrote to its temp
/// dir is left in the user's.
#[test]
fn real_opencode_runs_none_of_the_repositorys_plugins() {
    let Some(bin) = opencode_bin("real_opencode_runs_none_of_the_repositorys_plugins") else {
        return;
    };
    let repo = TestRepo::new();
    let markers = repo.scratch.join("markers");
    let planted = plant_plugins(&repo, &markers);
    repo.commit("the repository's OpenCode plugins");
    let before = repo.state();
    let fake = FakeOpenAi::start(round_script());
    let cfg = panel_config(&repo, &opencode_agent(&bin, &fake));
    let user_tmp = repo.scratch.join("user-tmp");
    std::fs::create_dir_all(&user_tmp).unwrap();
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs", "--format", "json", "--config", &cfg])
        .env("AREV_AGENT_TIMEOUT", "180s")
        .env(KEY_VAR, "sk-fake-openai-000")
        .env("TMPDIR", &user_tmp.display().to_string())
        .run();
    // What OpenCode's runtime unpacks at each start (a native library) went with the
    // agent's own temp dir: nothing is left in the user's.
    let left: Vec<_> = std::fs::read_dir(&user_tmp).unwrap().flatten().collect();
    assert!(left.is_empty(), "the user's temp dir holds {left:?}");
    let ran: Vec<String> = planted
        .iter()
        .filter(|m| m.exists())
        .map(|m| m.display().to_string())
        .collect();
    assert!(
        ran.is_empty(),
        "the repository's plugins ran: {ran:?}\n{}",
        debug(&run)
    );
    assert_round_completed(&run, "local");
    repo.assert_untouched(&before);
}

/// A model named like an option (`--attach=<host>`) is refused at load, naming the key and
/// the file (exit 2, no run dir): it never reaches OpenCode, and the host it names sees no
/// connection.
#[test]
fn a_model_named_like_an_option_never_reaches_opencode() {
    let Some(bin) = opencode_bin("a_model_named_like_an_option_never_reaches_opencode") else {
        return;
    };
    let repo = TestRepo::new();
    let fake = FakeOpenAi::start(round_script());
    let attach = FakeOpenAi::start(round_script());
    let agent = format!(
        "[agents.local]\nbackend = \"opencode\"\nbinary = {}\nbase_url = {}\napi_key_env = \"{KEY_VAR}\"\n[agents.local.models]\nhaiku = {m}\nsonnet = {m}\nopus = {m}\n",
        toml_str(&bin.display().to_string()),
        toml_str(&fake.base_url),
        m = toml_str(&format!("--attach={}", attach.base_url.trim_end_matches("/v1"))),
    );
    let cfg = panel_config(&repo, &agent);
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs", "--format", "json", "--config", &cfg])
        .env(KEY_VAR, "sk-fake-openai-000")
        .run();
    run.assert_code(2);
    assert!(
        run.stderr.contains("[agents.local.models] haiku") && run.stderr.contains(&cfg),
        "{}",
        run.stderr
    );
    assert!(run.run_dirs().is_empty(), "a run dir was made");
    assert!(attach.requests().is_empty() && attach.stray_requests().is_empty());
    assert!(fake.requests().is_empty());
}

/// An OpenCode panel where `bwrap` is not on PATH: `arev run` stops before any run dir (exit
/// 2, one line naming bubblewrap and how to install it), and `arev doctor` fails the agent
/// with the same fix. No OpenCode CLI is needed: the check comes before any dispatch.
#[test]
fn an_opencode_panel_without_bubblewrap_stops_before_the_run() {
    let repo = TestRepo::new();
    let bin = repo.scratch.join("no-bwrap-bin");
    std::fs::create_dir_all(&bin).unwrap();
    for tool in ["git", "sh"] {
        let found = ["/usr/bin", "/bin"]
            .iter()
            .map(|d| Path::new(d).join(tool))
            .find(|p| p.exists())
            .unwrap();
        std::os::unix::fs::symlink(found, bin.join(tool)).unwrap();
    }
    let agent = "[agents.local]\nbackend = \"opencode\"\nbinary = \"/bin/true\"\n[agents.local.models]\nhaiku = \"m1\"\nsonnet = \"m1\"\nopus = \"m1\"\n";
    let cfg = panel_config(&repo, agent);
    let path = bin.display().to_string();
    let run = repo
        .arev()
        .args(&["run", "src/lib.rs", "--config", &cfg])
        .env("PATH", &path)
        .run();
    run.assert_code(2);
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", run.stderr);
    assert!(
        lines[0].contains("agent `local` (opencode backend)")
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
