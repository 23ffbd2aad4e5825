//! `arev install claude [--scope project|user] [--uninstall]`: the plugin's wiring for users
//! who do not install plugins — the slash commands (`/adversarial-review`, and
//! `/arev-status`, `/arev-result`, `/arev-cancel` for reviews running in the background; the
//! plugin's `/arev:<name>`) and the two hooks merged into `settings.json` (other keys kept,
//! in their order). What was added is recorded in `arev-install.json`, so `--uninstall`
//! removes exactly that. Idempotent: a second install on the same files changes no byte and
//! says so.

use super::error::InstallError;
use super::ordered_json::OJson;
use super::record::{
    owned_dir, read_record, sha256_hex, shown, InstallRecord, Owned, Summary, MANIFEST,
};
use crate::store::write_atomic;
use std::path::{Path, PathBuf};

/// The plugin's commands and the file each becomes under `.claude/commands/` (a plugin's
/// `/arev:status` is the installed `/arev-status`).
const COMMANDS: &[(&str, &str)] = &[
    (
        "adversarial-review.md",
        include_str!("../../plugin/commands/adversarial-review.md"),
    ),
    (
        "arev-status.md",
        include_str!("../../plugin/commands/status.md"),
    ),
    (
        "arev-result.md",
        include_str!("../../plugin/commands/result.md"),
    ),
    (
        "arev-cancel.md",
        include_str!("../../plugin/commands/cancel.md"),
    ),
];
/// How the plugin's hooks and commands call arev: its launcher (bin/arev), which finds or
/// installs the binary. An install calls its own program instead.
pub const PLUGIN_PROGRAM: &str = "sh \"${CLAUDE_PLUGIN_ROOT}/bin/arev\"";
/// Hook subcommands: their Claude Code event, timeout (seconds) and spinner text
/// (`statusMessage`, shown by Claude Code while the hook runs), as in hooks/hooks.json.
const HOOKS: &[(&str, &str, u64, &str)] = &[
    (
        "UserPromptSubmit",
        "prompt",
        30,
        "arev: recording the review baseline",
    ),
    (
        "Stop",
        "stop",
        crate::config::STOP_HOOK_TIMEOUT_SECS,
        "arev: reviewing the session's changes (can take minutes)",
    ),
];
/// The texts this arev writes for the record's `program` (for records without checksums).
fn bodies_of(rec: &InstallRecord) -> Vec<String> {
    files_for(&program_token(&rec.program))
        .into_iter()
        .map(|(_, b)| b)
        .collect()
}

/// The command line token for `program` (quoted when it has spaces).
fn program_token(program: &str) -> String {
    if program.contains(char::is_whitespace) {
        format!("\"{program}\"")
    } else {
        program.to_string()
    }
}

/// Whether `cmd` is arev's `hook <sub>` command, whatever path the program has.
fn is_arev_hook(cmd: &str, sub: &str) -> bool {
    let Some(prog) = cmd.trim().strip_suffix(&format!(" hook {sub}")) else {
        return false;
    };
    let prog = prog.trim().trim_matches('"');
    Path::new(prog).file_name().is_some_and(|n| n == "arev")
}

/// A plugin command as installed: calling `program`, naming the installed commands.
fn command_body(body: &str, program: &str) -> String {
    body.replace(PLUGIN_PROGRAM, program)
        .replace("/arev:adversarial-review", "/adversarial-review")
        .replace("/arev:", "/arev-")
}

fn files_for(program: &str) -> Vec<(String, String)> {
    COMMANDS
        .iter()
        .map(|(name, body)| (format!("commands/{name}"), command_body(body, program)))
        .collect()
}

fn read_settings(path: &Path) -> Result<Option<OJson>, InstallError> {
    match std::fs::read_to_string(path) {
        Ok(t) if t.trim().is_empty() => Ok(Some(OJson::Obj(vec![]))),
        Ok(t) => {
            let v: OJson =
                serde_json::from_str(&t).map_err(|source| InstallError::SettingsJson {
                    path: path.to_path_buf(),
                    source,
                })?;
            if !matches!(v, OJson::Obj(_)) {
                return Err(InstallError::shape(path, "is not a JSON object"));
            }
            Ok(Some(v))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(InstallError::io(path)(e)),
    }
}

fn hook_entry(command: &str, timeout: u64, status: &str) -> OJson {
    OJson::Obj(vec![(
        "hooks".into(),
        OJson::Arr(vec![OJson::Obj(vec![
            ("type".into(), OJson::str("command")),
            ("command".into(), OJson::str(command)),
            ("timeout".into(), OJson::Num(timeout.into())),
            ("statusMessage".into(), OJson::str(status)),
        ])]),
    )])
}

/// Visit every hook command string of `event`'s array.
fn commands_mut(groups: &mut OJson) -> Vec<&mut OJson> {
    let mut out = vec![];
    if let OJson::Arr(groups) = groups {
        for g in groups {
            if let Some(OJson::Arr(hooks)) = g.get_mut("hooks") {
                for h in hooks {
                    if let Some(c) = h.get_mut("command") {
                        out.push(c);
                    }
                }
            }
        }
    }
    out
}

/// Install into `claude_dir` (`<repo>/.claude` or `~/.claude`) calling `program`.
pub fn install(claude_dir: &Path, program: &str) -> Result<Summary, InstallError> {
    let mut summary = Summary::default();
    let old = read_record(claude_dir)?;
    let mut rec = InstallRecord {
        program: program.to_string(),
        ..old.clone().unwrap_or_default()
    };
    let token = program_token(program);
    // Refuse to overwrite files arev did not write (checked before any change).
    let files = files_for(&token);
    refuse_foreign_files(claude_dir, old.as_ref(), &files)?;
    let settings_path = claude_dir.join("settings.json");
    let existing = read_settings(&settings_path)?;
    check_hooks_shape(&settings_path, existing.as_ref())?;
    make_dirs(claude_dir, &mut rec)?;
    write_files(claude_dir, &files, &mut rec, &mut summary)?;
    // settings.json: add (or update in place) the two hook entries.
    if existing.is_none() {
        rec.created_settings = true;
    }
    let mut settings = existing.unwrap_or(OJson::Obj(vec![]));
    if settings.get("hooks").is_none() {
        settings.push("hooks", OJson::Obj(vec![]));
        rec.created_hooks_key = true;
    }
    let before = settings.clone();
    let hooks = match settings.get_mut("hooks") {
        Some(h @ OJson::Obj(_)) => h,
        _ => {
            return Err(InstallError::shape(
                &settings_path,
                "`hooks` is not an object",
            ))
        }
    };
    merge_hooks(hooks, &token, &mut rec, &settings_path)?;
    let text = settings.to_pretty();
    let on_disk = std::fs::read(&settings_path).ok();
    if on_disk.as_deref() != Some(text.as_bytes()) && (settings != before || on_disk.is_none()) {
        write_atomic(&settings_path, text.as_bytes()).map_err(InstallError::io(&settings_path))?;
        let verb = if on_disk.is_none() {
            "wrote    "
        } else {
            "merged   "
        };
        summary.lines.push(format!(
            "{verb} {} (hooks Stop, UserPromptSubmit)",
            settings_path.display()
        ));
    } else {
        summary
            .lines
            .push(format!("unchanged {}", settings_path.display()));
    }
    let mp = claude_dir.join(MANIFEST);
    let mut bytes = vec![];
    crate::output::write_json(&mut bytes, &rec, true).map_err(|source| {
        InstallError::RecordEncode {
            path: mp.clone(),
            source,
        }
    })?;
    bytes.push(b'\n');
    write_atomic(&mp, &bytes).map_err(InstallError::io(&mp))?;
    Ok(summary)
}

/// Files `install` would write that exist, were not written by it, and differ: refused.
fn refuse_foreign_files(
    claude_dir: &Path,
    old: Option<&InstallRecord>,
    files: &[(String, String)],
) -> Result<(), InstallError> {
    for (rel, body) in files {
        let p = claude_dir.join(rel);
        let on_disk = crate::store::read_capped(&p, 1 << 20, "an installed file").ok();
        // Ours: recorded, and (when a checksum was recorded) still what arev wrote.
        let ours = old.is_some_and(|r| {
            r.files.contains(rel)
                && r.sha256
                    .get(rel)
                    .is_none_or(|h| on_disk.as_deref().is_some_and(|b| *h == sha256_hex(b)))
        });
        if !ours && p.exists() && on_disk.as_deref() != Some(body.as_bytes()) {
            return Err(InstallError::Foreign(p));
        }
    }
    Ok(())
}

/// An existing `hooks` key must be an object of arrays (nothing is changed otherwise).
fn check_hooks_shape(settings_path: &Path, existing: Option<&OJson>) -> Result<(), InstallError> {
    if let Some(hooks) = existing.and_then(|s| s.get("hooks")) {
        let bad = !matches!(hooks, OJson::Obj(_))
            || HOOKS.iter().any(|(event, _, _, _)| {
                hooks
                    .get(event)
                    .is_some_and(|g| !matches!(g, OJson::Arr(_)))
            });
        if bad {
            return Err(InstallError::shape(
                settings_path,
                "`hooks` is not an object of arrays",
            ));
        }
    }
    Ok(())
}

/// `claude_dir` and its `commands` directory, the ones created recorded.
fn make_dirs(claude_dir: &Path, rec: &mut InstallRecord) -> Result<(), InstallError> {
    for sub in ["", "commands"] {
        let d = if sub.is_empty() {
            claude_dir.to_path_buf()
        } else {
            claude_dir.join(sub)
        };
        if !d.exists() {
            std::fs::create_dir_all(&d).map_err(InstallError::io(&d))?;
            let rel = if sub.is_empty() {
                ".".to_string()
            } else {
                sub.to_string()
            };
            if !rec.dirs.contains(&rel) {
                rec.dirs.push(rel);
            }
        }
    }
    Ok(())
}

/// The slash command files, each written unless it already holds its body.
fn write_files(
    claude_dir: &Path,
    files: &[(String, String)],
    rec: &mut InstallRecord,
    summary: &mut Summary,
) -> Result<(), InstallError> {
    // Files an earlier install wrote that this one no longer ships (the role subagents of
    // arev ≤ 0.1.0): removed, so the wiring is exactly what this version uses.
    remove_stale(claude_dir, files, rec, summary)?;
    for (rel, body) in files {
        let p = claude_dir.join(rel);
        if std::fs::read_to_string(&p).ok().as_deref() == Some(body.as_str()) {
            summary.lines.push(format!("unchanged {}", p.display()));
        } else {
            write_atomic(&p, body.as_bytes()).map_err(InstallError::io(&p))?;
            summary.lines.push(format!("wrote     {}", p.display()));
        }
        if !rec.files.contains(rel) {
            rec.files.push(rel.clone());
        }
        rec.sha256.insert(rel.clone(), sha256_hex(body.as_bytes()));
    }
    Ok(())
}

/// Files an earlier install recorded that `files` no longer holds: removed when they are
/// arev's (inside `.claude/`, holding what arev wrote; with their directory when it is left
/// empty), else left alone and reported; dropped from the record either way.
fn remove_stale(
    claude_dir: &Path,
    files: &[(String, String)],
    rec: &mut InstallRecord,
    summary: &mut Summary,
) -> Result<(), InstallError> {
    let stale: Vec<String> = rec
        .files
        .iter()
        .filter(|rel| !files.iter().any(|(f, _)| f == *rel))
        .cloned()
        .collect();
    for rel in &stale {
        let Some(p) = summary.remove_owned(claude_dir, rel, rec, &bodies_of(rec)) else {
            continue;
        };
        // Its directory, when left empty: only one inside `.claude/`, never `.claude` itself.
        let parent = p.parent().and_then(|d| d.strip_prefix(claude_dir).ok());
        if let Some(rel_dir) = parent.filter(|d| !d.as_os_str().is_empty()) {
            if let Owned::Yes(d) = owned_dir(claude_dir, &rel_dir.to_string_lossy()) {
                let _ = std::fs::remove_dir(d);
            }
        }
    }
    rec.files.retain(|f| !stale.contains(f));
    rec.sha256.retain(|f, _| rec.files.contains(f));
    Ok(())
}

/// arev's hook entry of every event in `hooks`, updated in place or added.
fn merge_hooks(
    hooks: &mut OJson,
    token: &str,
    rec: &mut InstallRecord,
    settings_path: &Path,
) -> Result<(), InstallError> {
    for (event, sub, timeout, status) in HOOKS {
        let command = format!("{token} hook {sub}");
        if hooks.get(event).is_none() {
            hooks.push(event, OJson::Arr(vec![]));
            if !rec.created_events.iter().any(|e| e == event) {
                rec.created_events.push(event.to_string());
            }
        }
        let groups = match hooks.get_mut(event) {
            Some(g @ OJson::Arr(_)) => g,
            _ => {
                return Err(InstallError::shape(
                    settings_path,
                    format!("`hooks.{event}` is not an array"),
                ))
            }
        };
        let mut found = false;
        for c in commands_mut(groups) {
            if c.as_str().is_some_and(|s| is_arev_hook(s, sub)) {
                *c = OJson::str(&command);
                found = true;
            }
        }
        if !found {
            if let OJson::Arr(v) = groups {
                v.push(hook_entry(&command, *timeout, status));
            }
        }
    }
    Ok(())
}

/// Remove exactly what `install` recorded in `claude_dir`.
pub fn uninstall(claude_dir: &Path) -> Result<Summary, InstallError> {
    let mut summary = Summary::default();
    let Some(rec) = read_record(claude_dir)? else {
        summary.lines.push(format!(
            "nothing to remove: no {} in {}",
            MANIFEST,
            claude_dir.display()
        ));
        return Ok(summary);
    };
    let settings_path = claude_dir.join("settings.json");
    if let Some(mut settings) = read_settings(&settings_path)? {
        if let Some(hooks) = settings.get_mut("hooks") {
            for (event, sub, _, _) in HOOKS {
                let Some(OJson::Arr(groups)) = hooks.get_mut(event) else {
                    continue;
                };
                for g in groups.iter_mut() {
                    if let Some(OJson::Arr(hs)) = g.get_mut("hooks") {
                        hs.retain(|h| {
                            !h.get("command")
                                .and_then(OJson::as_str)
                                .is_some_and(|c| is_arev_hook(c, sub))
                        });
                    }
                }
                // Drop groups that held only arev's hook.
                groups.retain(|g| !g.get("hooks").is_some_and(OJson::is_empty_container));
                if groups.is_empty() && rec.created_events.iter().any(|e| e == event) {
                    hooks.remove(event);
                }
            }
            if hooks.is_empty_container() && rec.created_hooks_key {
                settings.remove("hooks");
            }
        }
        if settings.is_empty_container() && rec.created_settings {
            std::fs::remove_file(&settings_path).map_err(InstallError::io(&settings_path))?;
            summary
                .lines
                .push(format!("removed   {}", settings_path.display()));
        } else {
            write_atomic(&settings_path, settings.to_pretty().as_bytes())
                .map_err(InstallError::io(&settings_path))?;
            summary.lines.push(format!(
                "cleaned   {} (arev hooks removed)",
                settings_path.display()
            ));
        }
    }
    for rel in &rec.files {
        summary.remove_owned(claude_dir, rel, &rec, &bodies_of(&rec));
    }
    let mp = claude_dir.join(MANIFEST);
    std::fs::remove_file(&mp).map_err(InstallError::io(&mp))?;
    // Directories arev created inside `.claude/`, deepest first, only when empty.
    let mut dirs: Vec<PathBuf> = vec![];
    for d in &rec.dirs {
        match owned_dir(claude_dir, d) {
            Owned::Yes(p) => dirs.push(p),
            Owned::Gone => {}
            Owned::No(why) => summary.left.push(format!(
                "left {}/: {why}; the install record names it, arev did not remove it",
                shown(claude_dir, d)
            )),
        }
    }
    dirs.sort_by_key(|d| std::cmp::Reverse(d.components().count()));
    for d in dirs {
        if std::fs::remove_dir(&d).is_ok() {
            summary.lines.push(format!("removed   {}/", d.display()));
        }
    }
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    const USER_SETTINGS: &str = r#"{
  "zModel": "opus",
  "permissions": {"allow": ["Bash(ls:*)"], "deny": []},
  "hooks": {
    "Stop": [{"hooks": [{"type": "command", "command": "my-linter --stop"}]}]
  },
  "aFinal": true
}
"#;

    fn snapshot(dir: &Path) -> Vec<(String, String)> {
        let mut out = vec![];
        for e in walk(dir) {
            let rel = e.strip_prefix(dir).unwrap().display().to_string();
            out.push((rel, std::fs::read_to_string(&e).unwrap_or_default()));
        }
        out.sort();
        out
    }

    fn walk(dir: &Path) -> Vec<PathBuf> {
        let mut v = vec![];
        if let Ok(rd) = std::fs::read_dir(dir) {
            for e in rd.flatten() {
                let p = e.path();
                if p.is_dir() {
                    v.push(p.clone());
                    v.extend(walk(&p));
                } else {
                    v.push(p);
                }
            }
        }
        v
    }

    #[test]
    fn hooks_match_the_plugins_hooks_json() {
        let plugin: serde_json::Value =
            serde_json::from_str(include_str!("../../plugin/hooks/hooks.json")).unwrap();
        for (event, sub, timeout, status) in HOOKS {
            let h = &plugin["hooks"][event][0]["hooks"][0];
            assert_eq!(
                h["command"],
                format!("{PLUGIN_PROGRAM} hook {sub}"),
                "{event}"
            );
            assert_eq!(h["timeout"], *timeout, "{event}");
            assert_eq!(h["statusMessage"], *status, "{event}");
        }
        assert_eq!(
            plugin["hooks"].as_object().unwrap().len(),
            HOOKS.len(),
            "{plugin}"
        );
    }

    #[test]
    fn merges_keeps_order_is_idempotent_and_uninstalls_exactly() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join(".claude");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("settings.json"), USER_SETTINGS).unwrap();
        let before = snapshot(&dir);

        install(&dir, "/opt/bin/arev").unwrap();
        let text = std::fs::read_to_string(dir.join("settings.json")).unwrap();
        let order: Vec<usize> = ["zModel", "permissions", "hooks", "aFinal"]
            .iter()
            .map(|k| text.find(&format!("\"{k}\"")).unwrap())
            .collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]), "{text}");
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            v["hooks"]["Stop"][0]["hooks"][0]["command"],
            "my-linter --stop"
        );
        assert_eq!(
            v["hooks"]["Stop"][1]["hooks"][0]["command"],
            "/opt/bin/arev hook stop"
        );
        assert_eq!(v["hooks"]["Stop"][1]["hooks"][0]["timeout"], 3600);
        assert_eq!(
            v["hooks"]["Stop"][1]["hooks"][0]["statusMessage"],
            "arev: reviewing the session's changes (can take minutes)"
        );
        assert_eq!(
            v["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"],
            "/opt/bin/arev hook prompt"
        );
        assert_eq!(v["permissions"]["allow"][0], "Bash(ls:*)");
        let cmd = std::fs::read_to_string(dir.join("commands/adversarial-review.md")).unwrap();
        assert!(
            cmd.contains(
                "!`/opt/bin/arev run --background --wait 100s --format markdown $ARGUMENTS; echo"
            ),
            "{cmd}"
        );
        assert!(cmd.contains("Bash(/opt/bin/arev run:*)"), "{cmd}");
        assert!(
            cmd.contains("`/arev-result`") && !cmd.contains("/arev:"),
            "{cmd}"
        );
        for (name, sub) in [
            ("status", "status"),
            ("result", "result"),
            ("cancel", "cancel"),
        ] {
            let c = std::fs::read_to_string(dir.join(format!("commands/arev-{name}.md"))).unwrap();
            assert!(c.contains(&format!("!`/opt/bin/arev {sub} ")), "{c}");
            assert!(c.contains(&format!("Bash(/opt/bin/arev {sub}:*)")), "{c}");
            assert!(!c.contains("/arev:"), "{c}");
        }
        assert!(
            !dir.join("agents").exists(),
            "no subagents: arev's roles are its own"
        );

        // Idempotent: a second install changes nothing, and says so.
        let once = snapshot(&dir);
        let again = install(&dir, "/opt/bin/arev").unwrap();
        assert_eq!(snapshot(&dir), once);
        assert!(
            again.lines.iter().all(|l| l.starts_with("unchanged ")),
            "{:?}",
            again.lines
        );
        // A moved binary updates the entries in place, never duplicates them.
        install(&dir, "/usr/local/bin/arev").unwrap();
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("settings.json")).unwrap())
                .unwrap();
        assert_eq!(v["hooks"]["Stop"].as_array().unwrap().len(), 2);
        assert_eq!(
            v["hooks"]["Stop"][1]["hooks"][0]["command"],
            "/usr/local/bin/arev hook stop"
        );

        uninstall(&dir).unwrap();
        let after = snapshot(&dir);
        let parsed = |s: &[(String, String)]| -> serde_json::Value {
            serde_json::from_str(&s.iter().find(|(p, _)| p == "settings.json").unwrap().1).unwrap()
        };
        assert_eq!(parsed(&after), parsed(&before));
        assert_eq!(
            after.iter().map(|(p, _)| p.clone()).collect::<Vec<_>>(),
            before.iter().map(|(p, _)| p.clone()).collect::<Vec<_>>(),
            "the same files and dirs as before"
        );
    }

    #[test]
    fn fresh_dir_install_and_uninstall_leave_nothing() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join(".claude");
        install(&dir, "arev").unwrap();
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("settings.json")).unwrap())
                .unwrap();
        assert_eq!(
            v["hooks"]["Stop"][0]["hooks"][0]["command"],
            "arev hook stop"
        );
        uninstall(&dir).unwrap();
        assert!(!dir.exists(), "{:?}", snapshot(&dir));
        // Uninstalling again is a no-op, not an error.
        assert!(uninstall(&dir).unwrap().lines[0].starts_with("nothing to remove"));
    }

    #[test]
    fn refuses_foreign_files_and_bad_settings() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join(".claude");
        std::fs::create_dir_all(dir.join("commands")).unwrap();
        std::fs::write(dir.join("commands/adversarial-review.md"), "mine").unwrap();
        let e = install(&dir, "arev").unwrap_err().to_string();
        assert!(e.contains("refusing to overwrite"), "{e}");
        std::fs::remove_file(dir.join("commands/adversarial-review.md")).unwrap();
        std::fs::write(dir.join("settings.json"), "{oops").unwrap();
        let e = install(&dir, "arev").unwrap_err().to_string();
        assert!(e.contains("not valid JSON"), "{e}");
        assert_eq!(
            std::fs::read_to_string(dir.join("settings.json")).unwrap(),
            "{oops"
        );
    }

    /// An install over an earlier one that wrote the role subagents removes them.
    #[test]
    fn reinstall_removes_the_subagents_an_earlier_install_wrote() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join(".claude");
        install(&dir, "arev").unwrap();
        std::fs::create_dir_all(dir.join("agents")).unwrap();
        std::fs::write(
            dir.join("agents/arev-judge.md"),
            "---\nname: arev-judge\n---\n",
        )
        .unwrap();
        let mut rec = read_record(&dir).unwrap().unwrap();
        rec.files.push("agents/arev-judge.md".into());
        rec.sha256.insert(
            "agents/arev-judge.md".into(),
            sha256_hex(b"---\nname: arev-judge\n---\n"),
        );
        rec.dirs.push("agents".into());
        std::fs::write(dir.join(MANIFEST), serde_json::to_vec(&rec).unwrap()).unwrap();
        let s = install(&dir, "arev").unwrap();
        assert!(!dir.join("agents").exists(), "{:?}", s.lines);
        assert!(
            s.lines.iter().any(|l| l.starts_with("removed ")),
            "{:?}",
            s.lines
        );
        assert!(!read_record(&dir)
            .unwrap()
            .unwrap()
            .files
            .iter()
            .any(|f| f.starts_with("agents/")));
    }

    #[test]
    fn recognises_arev_hook_commands() {
        assert!(is_arev_hook("arev hook stop", "stop"));
        assert!(is_arev_hook("\"/a b/arev\" hook stop", "stop"));
        assert!(!is_arev_hook("arev hook prompt", "stop"));
        assert!(!is_arev_hook("notarev hook stop", "stop"));
    }
}
