//! The plugin launcher `plugin/bin/arev` (docs/contracts.md §20.3), run as `sh bin/arev` with
//! `CLAUDE_PLUGIN_DATA`: arev from PATH when its version is the plugin's, else the plugin's
//! own copy, installed through install.sh from a fake release on loopback on first use;
//! without a binary a hook fails open with one line and a command says how to install.

use crate::release::{repo_root, standin_arev, FakeRelease, VERSION};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

/// `sh bin/arev ARGS` with PATH = `path_dirs` + the system's, the plugin's data dir and the
/// release URL.
fn launch(
    path_dirs: &[&Path],
    data: &Path,
    release_url: &str,
    log: &Path,
    args: &[&str],
) -> Output {
    let mut path: Vec<String> = path_dirs.iter().map(|d| d.display().to_string()).collect();
    path.push("/usr/local/bin:/usr/bin:/bin".into());
    Command::new("sh")
        .arg(repo_root().join("plugin/bin/arev"))
        .args(args)
        .env_clear()
        .env("PATH", path.join(":"))
        .env("HOME", data.parent().unwrap())
        .env("CLAUDE_PLUGIN_DATA", data)
        .env("AREV_RELEASE_URL", release_url)
        .env("AREV_STANDIN_LOG", log)
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn the_plugin_version_is_the_crates() {
    let plugin: Value = serde_json::from_str(
        &std::fs::read_to_string(repo_root().join("plugin/.claude-plugin/plugin.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        plugin["version"], VERSION,
        "bin/arev runs the plugin's version"
    );
}

#[test]
fn launcher_runs_arev_from_path_when_its_version_matches() {
    let tmp = tempfile::tempdir().unwrap();
    let on_path = tmp.path().join("path-bin");
    standin_arev(&on_path, VERSION);
    let log = tmp.path().join("args.log");
    let data = tmp.path().join("data");
    // No release server at all: nothing is downloaded.
    let o = launch(
        &[&on_path],
        &data,
        "http://127.0.0.1:9/none",
        &log,
        &["run", "--focus", "two words", "src/lib.rs"],
    );
    assert!(o.status.success(), "{o:?}");
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "run\n--focus\ntwo words\nsrc/lib.rs\n---\n",
        "arguments reach arev unchanged"
    );
    assert!(!data.join("bin").exists());
}

#[test]
fn launcher_installs_the_plugins_version_on_first_use() {
    let tmp = tempfile::tempdir().unwrap();
    let release = FakeRelease::start(&tmp.path().join("release"));
    release.publish(
        VERSION,
        &standin_arev(&tmp.path().join("b"), VERSION),
        false,
    );
    // An arev of another version on PATH is not used.
    let old = tmp.path().join("old-bin");
    standin_arev(&old, "0.0.1");
    let log = tmp.path().join("args.log");
    let data = tmp.path().join("plugin-data");
    let o = launch(&[&old], &data, &release.url, &log, &["status"]);
    assert!(o.status.success(), "{o:?}");
    assert_eq!(stdout(&o), format!("stand-in arev {VERSION}: status\n"));
    assert!(data.join("bin/arev").is_file());
    let fetched = release.requests().len();
    assert_eq!(fetched, 2, "{:?}", release.requests());
    // Second use: the installed copy, no download.
    let o = launch(&[&old], &data, &release.url, &log, &["result"]);
    assert!(o.status.success());
    assert_eq!(release.requests().len(), fetched);
}

#[test]
fn launcher_without_a_binary_fails_open_in_hooks_and_says_how_to_install() {
    let tmp = tempfile::tempdir().unwrap();
    let release = FakeRelease::start(&tmp.path().join("release"));
    // A release whose checksum does not match: refused, nothing installed.
    release.publish(VERSION, &standin_arev(&tmp.path().join("b"), VERSION), true);
    let log = tmp.path().join("args.log");
    let data = tmp.path().join("plugin-data");
    let o = launch(&[], &data, &release.url, &log, &["hook", "stop"]);
    assert_eq!(o.status.code(), Some(0), "a hook fails open");
    let out = stdout(&o);
    assert_eq!(out.lines().count(), 1, "{out}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let m = v["systemMessage"].as_str().unwrap();
    assert!(
        m.contains("the review did NOT run")
            && m.contains("checksum mismatch")
            && m.contains("install.sh --version"),
        "{m}"
    );
    assert!(v.get("decision").is_none());
    assert!(!data.join("bin/arev").exists());
    // A command: how to install, exit 2.
    let o = launch(&[], &data, &release.url, &log, &["run", "diff"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stdout(&o).contains(&format!("arev {VERSION} is not installed")),
        "{o:?}"
    );
}
