//! The composite GitHub Action (`action.yml`) run as the Actions runner would run it: each
//! step's `run` script with `bash --noprofile --norc -eo pipefail`, its `env` expressions
//! evaluated (`inputs.*` with the action's defaults, `github.*`, `steps.*.outputs.*`), and
//! `GITHUB_OUTPUT` / `GITHUB_STEP_SUMMARY` / `GITHUB_PATH` files; then the action's outputs
//! mapped from the step outputs; `GITHUB_PATH` entries go before PATH for the later steps, and
//! a step's `if:` (`steps.<id>.outputs.<k> != '<v>'` or `==`) is honoured. The install step
//! runs install.sh against a fake release on loopback (an empty one unless the test gives
//! `AREV_RELEASE_URL`: no release, so the source build is chosen). The build step (`cargo
//! install --path "$GITHUB_ACTION_PATH"`) and the cache step (`uses:`) are checked, not run:
//! the test's `arev` binary is put on PATH. An expression the evaluator does not know fails
//! the test.

use crate::fake_github::{FakeGithub, REPO, TOKEN};
use crate::harness::TestRepo;
use crate::publish::{event, head, read_json, script, PATCH};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use yaml_rust2::{Yaml, YamlLoader};

fn action() -> Yaml {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/action.yml")).unwrap();
    YamlLoader::load_from_str(&text).unwrap().remove(0)
}

/// `${{ … }}` expressions of a value, evaluated.
fn eval(value: &str, ctx: &BTreeMap<String, String>) -> String {
    let mut out = String::new();
    let mut rest = value;
    while let Some(start) = rest.find("${{") {
        out.push_str(&rest[..start]);
        let end = rest[start..].find("}}").expect("closed expression") + start;
        let expr = rest[start + 3..end].trim();
        let v = ctx
            .get(expr)
            .unwrap_or_else(|| panic!("the test does not know the expression `{expr}`"));
        out.push_str(v);
        rest = &rest[end + 2..];
    }
    out.push_str(rest);
    out
}

/// A step's `if:` of the forms the action uses: `<context>.<key> != '<v>'` / `== '<v>'`
/// (`steps.<id>.outputs.<k>`, `inputs.<name>`), joined by `&&`.
fn step_condition(cond: &str, ctx: &BTreeMap<String, String>) -> bool {
    cond.split("&&").all(|one| {
        let (lhs, rhs, eq) = if let Some((l, r)) = one.split_once("!=") {
            (l, r, false)
        } else if let Some((l, r)) = one.split_once("==") {
            (l, r, true)
        } else {
            panic!("the test does not know the condition `{cond}`")
        };
        let value = ctx.get(lhs.trim()).cloned().unwrap_or_default();
        let want = rhs.trim().trim_matches('\'');
        (value == want) == eq
    })
}

fn key_values(path: &Path) -> BTreeMap<String, String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

struct ActionRun {
    /// The action's outputs.
    outputs: BTreeMap<String, String>,
    /// The names of the steps that ran (or, for the build and cache steps, were reached).
    steps: Vec<String>,
    /// What the steps added to PATH (`GITHUB_PATH`).
    path_added: Vec<String>,
    /// Exit code of the step that failed the action (0: none did).
    code: i32,
    summary: String,
}

/// Run the action in `repo` with `with` inputs and extra job `env`, on a pull request whose
/// base branch is `base_ref` (empty: not a pull request).
fn run_action(
    repo: &TestRepo,
    with: &[(&str, &str)],
    env: &[(&str, &str)],
    base_ref: &str,
    script_json: &serde_json::Value,
) -> ActionRun {
    let a = action();
    assert_eq!(a["runs"]["using"].as_str(), Some("composite"));
    // The fake agent as `claude` (the harness makes the link), the test's arev on PATH.
    let _ = repo.arev().command();
    let arev_dir = Path::new(env!("CARGO_BIN_EXE_arev"))
        .parent()
        .unwrap()
        .to_path_buf();
    let runner = repo.scratch.join("runner");
    std::fs::create_dir_all(&runner).unwrap();
    let (output_file, summary_file, path_file) = (
        runner.join("output"),
        runner.join("summary"),
        runner.join("path"),
    );
    let script_file = repo.scratch.join("action-script.json");
    std::fs::write(&script_file, script_json.to_string()).unwrap();

    let mut ctx: BTreeMap<String, String> = BTreeMap::new();
    for (name, spec) in a["inputs"].as_hash().unwrap() {
        let name = name.as_str().unwrap();
        let default = spec["default"].as_str().unwrap_or("").to_string();
        ctx.insert(format!("inputs.{name}"), default);
    }
    ctx.insert("github.token".into(), "ghs_defaultTokenOfTheJob".into());
    ctx.insert("github.base_ref".into(), base_ref.to_string());
    // A local action (`uses: ./`): no ref, no repository.
    ctx.insert("github.action_ref".into(), String::new());
    ctx.insert("github.action_repository".into(), String::new());
    ctx.insert("github.server_url".into(), "https://github.com".into());
    // No release unless the test serves one: the source build is chosen.
    let empty_release = crate::release::FakeRelease::start(&repo.scratch.join("no-release"));
    let release_url = env
        .iter()
        .find(|(k, _)| *k == "AREV_RELEASE_URL")
        .map_or(empty_release.url, |(_, v)| v.to_string());
    for (k, v) in with {
        assert!(
            ctx.contains_key(&format!("inputs.{k}")),
            "the action has no input `{k}`"
        );
        ctx.insert(format!("inputs.{k}"), v.to_string());
    }
    // Input defaults may themselves be expressions (`${{ github.token }}`).
    let snapshot = ctx.clone();
    for v in ctx.values_mut() {
        *v = eval(v, &snapshot);
    }

    // A fresh verdict cache per action run, as the harness gives every invocation: a run
    // with another fake script must review again.
    let cache = repo.fresh_cache_dir();
    let mut code = 0;
    let mut steps = vec![];
    let mut path_added: Vec<String> = vec![];
    for step in a["runs"]["steps"].as_vec().unwrap() {
        if let Some(cond) = step["if"].as_str() {
            if !step_condition(cond, &ctx) {
                continue;
            }
        }
        steps.push(step["name"].as_str().unwrap_or("").to_string());
        if let Some(uses) = step["uses"].as_str() {
            assert!(uses.starts_with("actions/cache@"), "{uses}");
            continue;
        }
        let run = step["run"].as_str().expect("a run step");
        assert_eq!(step["shell"].as_str(), Some("bash"));
        if run.contains("cargo install") {
            assert!(
                run.contains("cargo install --locked")
                    && run.contains("--path \"$GITHUB_ACTION_PATH\""),
                "builds from the action's checkout: {run}"
            );
            continue;
        }
        path_added = std::fs::read_to_string(&path_file)
            .unwrap_or_default()
            .lines()
            .map(String::from)
            .collect();
        let mut cmd = Command::new("bash");
        cmd.args(["--noprofile", "--norc", "-eo", "pipefail", "-c", run])
            .current_dir(&repo.root)
            .env_clear()
            .env(
                "PATH",
                format!(
                    "{}{}:{}:/usr/local/bin:/usr/bin:/bin",
                    path_added
                        .iter()
                        .rev()
                        .map(|p| format!("{p}:"))
                        .collect::<String>(),
                    repo.scratch.join("bin").display(),
                    arev_dir.display()
                ),
            )
            .env("AREV_RELEASE_URL", &release_url)
            .env("HOME", repo.scratch.join("home"))
            .env("XDG_CACHE_HOME", &cache)
            .env("RUNNER_TEMP", &runner)
            .env("GITHUB_OUTPUT", &output_file)
            .env("GITHUB_STEP_SUMMARY", &summary_file)
            .env("GITHUB_PATH", &path_file)
            .env("GITHUB_ACTION_PATH", env!("CARGO_MANIFEST_DIR"))
            .env("AREV_FAKE_SCRIPT", &script_file);
        for (k, v) in env {
            if *k != "AREV_RELEASE_URL" {
                cmd.env(k, v);
            }
        }
        if let Some(vars) = step["env"].as_hash() {
            for (k, v) in vars {
                let v = match v {
                    Yaml::String(s) => s.clone(),
                    Yaml::Integer(i) => i.to_string(),
                    other => panic!("env value {other:?}"),
                };
                cmd.env(k.as_str().unwrap(), eval(&v, &ctx));
            }
        }
        std::fs::write(&output_file, "").unwrap();
        let out = cmd.output().unwrap();
        if let Some(id) = step["id"].as_str() {
            for (k, v) in key_values(&output_file) {
                ctx.insert(format!("steps.{id}.outputs.{k}"), v);
            }
        }
        if !out.status.success() {
            code = out.status.code().unwrap_or(-1);
            break;
        }
    }
    let mut outputs = BTreeMap::new();
    for (name, spec) in a["outputs"].as_hash().unwrap() {
        let value = spec["value"].as_str().unwrap();
        // An output of a step that never wrote it is empty, as on the runner.
        let expr = value
            .trim()
            .trim_start_matches("${{")
            .trim_end_matches("}}")
            .trim();
        outputs.insert(
            name.as_str().unwrap().to_string(),
            ctx.get(expr).cloned().unwrap_or_default(),
        );
    }
    ActionRun {
        outputs,
        steps,
        path_added: std::fs::read_to_string(&path_file)
            .unwrap_or_default()
            .lines()
            .map(String::from)
            .collect(),
        code,
        summary: std::fs::read_to_string(&summary_file).unwrap_or_default(),
    }
}

/// The forge token reaches only the step that publishes, which runs no review: the step
/// where the agents run has no token in its environment (docs/trust.md).
#[test]
fn only_the_publish_step_gets_the_token() {
    let a = action();
    let mut holders = vec![];
    for step in a["runs"]["steps"].as_vec().unwrap() {
        let name = step["name"].as_str().unwrap_or("").to_string();
        let env = step["env"]
            .as_hash()
            .map(|h| {
                h.iter()
                    .map(|(k, v)| format!("{}={}", k.as_str().unwrap(), v.as_str().unwrap_or("")))
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default();
        let run = step["run"].as_str().unwrap_or("");
        if env.iter().any(|e| {
            e.contains("github-token") || e.contains("github.token") || e.contains("TOKEN")
        }) {
            assert!(
                run.contains("arev publish") && !run.contains("arev \"${args[@]}\""),
                "{name}: a step with the token runs only the publish"
            );
            holders.push(name.clone());
        }
        if run.contains("arev \"${args[@]}\"") {
            assert!(
                !run.contains("--publish"),
                "{name}: the review does not publish"
            );
        }
    }
    assert_eq!(holders, ["Publish to the pull request"]);
}

#[test]
fn the_action_reviews_publishes_writes_sarif_and_gates() {
    let repo = TestRepo::new();
    let sha1 = head(&repo);
    let fake = FakeGithub::start(7, &sha1, &[("src/lib.rs", PATCH)]);
    let ev = event(&repo, &sha1);
    let sarif = repo.scratch.join("arev.sarif");
    let api = fake.api_url();
    let r = run_action(
        &repo,
        &[
            ("target", "src/lib.rs"),
            ("publish", "github"),
            ("sarif", sarif.to_str().unwrap()),
            ("args", "--max-rounds 1"),
            ("github-token", TOKEN),
        ],
        &[
            ("GITHUB_API_URL", api.as_str()),
            ("GITHUB_REPOSITORY", REPO),
            ("GITHUB_EVENT_PATH", ev.to_str().unwrap()),
        ],
        "",
        &script(&[1, 2, 3]),
    );
    // A high finding: the gate step fails the action with arev's exit code.
    assert_eq!(r.code, 1);
    assert_eq!(r.outputs["exit-code"], "1");
    assert_eq!(r.outputs["confirmed"], "3");
    let report = read_json(Path::new(&r.outputs["report"]));
    assert_eq!(report["confirmed"].as_array().unwrap().len(), 3);
    assert_eq!(
        Path::new(&r.outputs["run-dir"]),
        Path::new(report["run_dir"].as_str().unwrap())
    );
    assert!(Path::new(&r.outputs["run-dir"])
        .join("publish/github.result.json")
        .is_file());
    assert!(
        r.summary.starts_with("<!-- arev-report -->"),
        "the job summary holds the report"
    );
    assert!(
        read_json(&sarif)["runs"][0]["results"]
            .as_array()
            .unwrap()
            .len()
            == 3
    );
    assert_eq!(fake.reviews().len(), 1, "published to the PR");
    assert!(r.steps.iter().any(|s| s == "Publish to the pull request"));
    assert_eq!(fake.issue_comments().len(), 1);

    // fail-on never: the same findings pass the gate.
    let r = run_action(
        &repo,
        &[
            ("target", "src/lib.rs"),
            ("fail-on", "never"),
            ("args", "--max-rounds 1"),
        ],
        &[],
        "",
        &script(&[2]),
    );
    assert_eq!(
        (
            r.code,
            r.outputs["exit-code"].as_str(),
            r.outputs["confirmed"].as_str()
        ),
        (0, "0", "1")
    );
    assert!(
        !r.steps.iter().any(|s| s.starts_with("Publish")),
        "no publish input: {:?}",
        r.steps
    );

    // A bad target: exit 2, no report, the gate fails with 2.
    let r = run_action(
        &repo,
        &[("target", "no/such/file.rs")],
        &[],
        "",
        &script(&[]),
    );
    assert_eq!(
        (
            r.code,
            r.outputs["exit-code"].as_str(),
            r.outputs["report"].as_str()
        ),
        (2, "2", "")
    );
}

#[test]
fn on_a_pull_request_the_action_reviews_the_diff_against_the_base_branch() {
    let repo = TestRepo::new();
    // The PR: branch `feature` adds a file on top of `main`; `origin` is the repo itself.
    let root = repo.root.to_str().unwrap().to_string();
    repo.git(&["remote", "add", "origin", &root]);
    repo.git(&["fetch", "-q", "origin"]);
    repo.git(&["checkout", "-q", "-b", "feature"]);
    repo.write("src/new.rs", "pub fn n() -> u32 { 1 }\n")
        .commit("feature");
    let r = run_action(
        &repo,
        &[("args", "--max-rounds 1")],
        &[],
        "main",
        &script(&[]),
    );
    assert_eq!((r.code, r.outputs["exit-code"].as_str()), (0, "0"));
    let report = read_json(Path::new(&r.outputs["report"]));
    assert_eq!(report["target"]["kind"], "diff");
    assert_eq!(
        report["target"]["base"], "origin/main",
        "the default base on a pull request"
    );
    assert_eq!(
        report["target"]["allowed_files"],
        serde_json::json!(["src/new.rs"])
    );
}

/// The action installs the release of its ref through install.sh (no source build, no
/// cache step), puts it on PATH, and hands `args` over split like a shell: `--focus "two
/// words"` is one argument.
#[test]
fn the_action_installs_the_release_and_keeps_quoted_args_whole() {
    let repo = TestRepo::new();
    let release = crate::release::FakeRelease::start(&repo.scratch.join("release"));
    let standin =
        crate::release::standin_arev(&repo.scratch.join("standin"), crate::release::VERSION);
    release.publish(crate::release::VERSION, &standin, false);
    let log = repo.scratch.join("args.log");
    let r = run_action(
        &repo,
        &[
            ("target", "src/lib.rs"),
            (
                "args",
                "--max-rounds 3\n--focus \"two words\" --exclude 'a b/*'",
            ),
        ],
        &[
            ("AREV_RELEASE_URL", &release.url),
            ("AREV_STANDIN_LOG", log.to_str().unwrap()),
        ],
        "",
        &script(&[]),
    );
    assert_eq!(r.code, 0, "{:?}", r.steps);
    assert!(
        !r.steps
            .iter()
            .any(|s| s.contains("Build") || s.contains("Cache")),
        "{:?}",
        r.steps
    );
    let bin = repo.scratch.join("runner/arev-action/bin");
    assert_eq!(r.path_added, [bin.display().to_string()]);
    assert!(bin.join("arev").is_file());
    let args: Vec<String> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    assert_eq!(
        args[args.len().saturating_sub(7)..],
        [
            "--max-rounds",
            "3",
            "--focus",
            "two words",
            "--exclude",
            "a b/*",
            "---"
        ],
        "{args:?}"
    );
}

/// Without a release the source build is chosen (after its cache); a release whose checksum
/// does not match fails the action: nothing installed, nothing built.
#[test]
fn the_action_builds_only_without_a_release_and_refuses_a_bad_checksum() {
    let repo = TestRepo::new();
    let r = run_action(&repo, &[("target", "src/lib.rs")], &[], "", &script(&[]));
    assert!(
        r.steps.iter().any(|s| s.starts_with("Cache"))
            && r.steps.iter().any(|s| s.starts_with("Build")),
        "{:?}",
        r.steps
    );
    let release = crate::release::FakeRelease::start(&repo.scratch.join("release"));
    let standin =
        crate::release::standin_arev(&repo.scratch.join("standin"), crate::release::VERSION);
    release.publish(crate::release::VERSION, &standin, true);
    let r = run_action(
        &repo,
        &[("target", "src/lib.rs")],
        &[("AREV_RELEASE_URL", &release.url)],
        "",
        &script(&[]),
    );
    assert_eq!(r.code, 1);
    assert_eq!(r.steps.len(), 1, "{:?}", r.steps);
    assert!(!repo.scratch.join("runner/arev-action/bin/arev").exists());
}

/// `args` with an unbalanced quote: exit code 2 (nothing reviewed), never a half-split list.
#[test]
fn the_action_refuses_args_it_cannot_split() {
    let repo = TestRepo::new();
    let r = run_action(
        &repo,
        &[("target", "src/lib.rs"), ("args", "--focus \"oops")],
        &[],
        "",
        &script(&[]),
    );
    assert_eq!(r.outputs["exit-code"], "2");
    assert_eq!(r.code, 2);
}

/// Every checkout in the example workflows leaves no token behind in the reviewed tree's
/// `.git/config` (`persist-credentials: false`; GitLab: the clone URL's job token is
/// dropped), since a reviewer whose CLI does not refuse `.git/` could read it (docs/trust.md).
#[test]
fn the_examples_leave_no_token_in_the_checkout() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut checkouts = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        if name.starts_with("github-actions") {
            let doc = YamlLoader::load_from_str(&text).unwrap().remove(0);
            for (_, job) in doc["jobs"].as_hash().unwrap() {
                for step in job["steps"].as_vec().unwrap() {
                    if step["uses"]
                        .as_str()
                        .is_some_and(|u| u.starts_with("actions/checkout@"))
                    {
                        checkouts += 1;
                        assert_eq!(
                            step["with"]["persist-credentials"].as_bool(),
                            Some(false),
                            "{name}: a checkout persists its token"
                        );
                    }
                }
            }
        } else if name.starts_with("gitlab-ci") {
            assert!(
                text.contains("git remote set-url origin \"$CI_PROJECT_URL.git\""),
                "{name}: the clone URL keeps the job token"
            );
        }
    }
    assert!(checkouts >= 4, "{checkouts}");
}
