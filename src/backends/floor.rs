//! The argv floor: flags an agent's `extra_args` may never carry, whatever file they come
//! from. arev alone decides what a reviewer may use, read and run; a flag that grants tools,
//! permissions, directories or files, settings, hooks, MCP servers, plugins, another session
//! or a sandbox change is refused when the config is loaded (exit 2, naming the flag and the
//! file). The section "Running on untrusted pull requests" (docs/trust.md) lists the same flags (a
//! test keeps the two in step). `command` agents are arbitrary programs whose argv arev does
//! not interpret: no floor applies to them.

use super::BackendKind;

/// A family of refused flags and why.
#[derive(Debug, Clone, Copy)]
pub struct Refused {
    /// Long flags as the CLI spells them (`--permission-mode`); also refused in any spelling
    /// the CLI accepts for them (`--permissionMode`, `--permission_mode`, `=`-joined,
    /// `--no-` negated).
    pub long: &'static [&'static str],
    /// Short flags (letters), e.g. `s` for `-s`.
    pub short: &'static [char],
    pub why: &'static str,
}

/// A refused argument: the argument as written and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FloorViolation {
    pub arg: String,
    pub why: String,
}

/// `--allowed_Tools=x` → `allowedtools`: the spelling-independent name of a long flag.
fn normalize(long: &str) -> String {
    long.trim_start_matches('-')
        .split('=')
        .next()
        .unwrap_or_default()
        .chars()
        .filter(|c| *c != '-' && *c != '_')
        .flat_map(char::to_lowercase)
        .collect()
}

/// The first argument of `args` that the floor of `backend` refuses.
pub fn check(backend: BackendKind, args: &[String]) -> Result<(), FloorViolation> {
    let Some(floor) = backend.profile().floor else {
        return Ok(());
    };
    let table = floor.refused;
    let deny = |arg: &str, why: &str| {
        Err(FloorViolation {
            arg: arg.to_string(),
            why: why.to_string(),
        })
    };
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        i += 1;
        if let Some(rest) = arg.strip_prefix("--") {
            if rest.is_empty() {
                continue;
            }
            let name = normalize(rest);
            if name.contains("dangerously") || name == "yolo" {
                return deny(arg, "bypasses permissions");
            }
            if let (Some(keys), "config") = (floor.config_keys, name.as_str()) {
                let value = match rest.split_once('=') {
                    Some((_, v)) => Some(v.to_string()),
                    None => args.get(i).cloned(),
                };
                config_key(keys, "--config", value.as_deref())?;
                continue;
            }
            let bare = name.strip_prefix("no").unwrap_or(&name);
            for r in table {
                if r.long.iter().any(|l| {
                    let l = normalize(l);
                    l == name || l == bare
                }) {
                    return deny(arg, r.why);
                }
            }
        } else if let Some(rest) = arg.strip_prefix('-') {
            let letters: Vec<char> = rest.split('=').next().unwrap_or_default().chars().collect();
            let Some(&first) = letters.first() else {
                continue;
            };
            if floor.short_flags_take_values {
                // clap: every short flag takes a value, so only the first letter is one.
                if let (Some(keys), 'c') = (floor.config_keys, first) {
                    let value = if rest.len() > 1 {
                        Some(rest[1..].trim_start_matches('=').to_string())
                    } else {
                        args.get(i).cloned()
                    };
                    config_key(keys, "-c", value.as_deref())?;
                    continue;
                }
                if let Some(r) = table.iter().find(|r| r.short.contains(&first)) {
                    return deny(arg, r.why);
                }
            } else if let Some(r) = table
                .iter()
                .find(|r| letters.iter().any(|c| r.short.contains(c)))
            {
                // commander / yargs group short booleans (`-dy`): any letter counts.
                return deny(arg, r.why);
            }
        }
    }
    Ok(())
}

/// A `-c key=value` (Codex): only the `keys` of its floor.
fn config_key(keys: &[&str], flag: &str, value: Option<&str>) -> Result<(), FloorViolation> {
    let Some(value) = value else {
        return Err(FloorViolation {
            arg: flag.to_string(),
            why: "has no key=value".into(),
        });
    };
    let key = value.split('=').next().unwrap_or_default().trim();
    let first = key
        .split('.')
        .next()
        .unwrap_or_default()
        .trim()
        .trim_matches('"');
    if keys.contains(&first) {
        return Ok(());
    }
    Err(FloorViolation {
        arg: format!("{flag} {key}"),
        why: "sets codex config other than the model and its provider".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(args: &[&str]) -> Vec<String> {
        args.iter().map(|s| (*s).to_string()).collect()
    }

    fn refused_arg(b: BackendKind, args: &[&str]) -> Option<String> {
        check(b, &v(args)).err().map(|e| e.arg)
    }

    #[test]
    fn claude_refuses_every_spelling() {
        let c = BackendKind::Claude;
        for bad in [
            "--permission-mode",
            "--permission-mode=bypassPermissions",
            "--dangerously-skip-permissions",
            "--allow-dangerously-skip-permissions",
            "--dangerously-anything-new",
            "--tools=Bash",
            "--allowedTools",
            "--allowed-tools",
            "--allowed_tools",
            "--add-dir",
            "--settings",
            "--setting-sources=project",
            "--mcp-config",
            "--plugin-dir",
            "--agents",
            "--resume",
            "-w",
            "-dw",
            "-c",
        ] {
            assert_eq!(
                refused_arg(c, &["--effort", "high", bad]),
                Some(bad.into()),
                "{bad}"
            );
        }
        for ok in [
            &["--effort", "high"][..],
            &["--fallback-model", "sonnet"],
            &["--disallowedTools", "WebFetch"],
            &["--max-budget-usd", "1"],
            &["--strict-mcp-config"],
            &["-d"],
            &["--"],
        ] {
            assert_eq!(refused_arg(c, ok), None, "{ok:?}");
        }
    }

    #[test]
    fn codex_refuses_sandbox_changes_and_checks_config_keys() {
        let x = BackendKind::Codex;
        for bad in [
            &["--sandbox", "danger-full-access"][..],
            &["-s", "danger-full-access"],
            &["-sdanger-full-access"],
            &["--sandbox=workspace-write"],
            &["--full-auto"],
            &["--dangerously-bypass-approvals-and-sandbox"],
            &["--add-dir", "/"],
            &["-C", "/"],
            &["-p", "wide"],
            &["--trust"],
            &["-o", "/tmp/x"],
        ] {
            assert_eq!(refused_arg(x, bad), Some(bad[0].into()), "{bad:?}");
        }
        for (bad, shown) in [
            (
                &["-c", "sandbox_mode=\"danger-full-access\""][..],
                "-c sandbox_mode",
            ),
            (
                &["-c", "mcp_servers.x.command=\"sh\""],
                "-c mcp_servers.x.command",
            ),
            (
                &["--config", "approval_policy=\"never\""],
                "--config approval_policy",
            ),
            (
                &["--config=shell_environment_policy.inherit=\"all\""],
                "--config shell_environment_policy.inherit",
            ),
            (&["-cnotify=[\"sh\"]"], "-c notify"),
            (&["-c"], "-c"),
        ] {
            assert_eq!(refused_arg(x, bad).as_deref(), Some(shown), "{bad:?}");
        }
        let fake = [
            "-c",
            "model_provider=\"arevfake\"",
            "-c",
            "model_providers.arevfake={name=\"arevfake\",base_url=\"http://127.0.0.1:1/v1\"}",
            "-m",
            "gpt-5",
            "-c",
            "model_reasoning_effort=\"low\"",
        ];
        assert_eq!(refused_arg(x, &fake), None);
    }

    #[test]
    fn gemini_refuses_approvals_sandbox_and_directories() {
        let g = BackendKind::Gemini;
        for bad in [
            "--yolo",
            "-y",
            "-dy",
            "--approval-mode=yolo",
            "--approvalMode",
            "--allowed-tools",
            "--sandbox",
            "--no-sandbox",
            "-s",
            "--include-directories",
            "--includeDirectories",
            "--extensions",
            "--allowed-mcp-server-names",
            "--policy",
        ] {
            assert_eq!(refused_arg(g, &[bad]), Some(bad.into()), "{bad}");
        }
        assert_eq!(refused_arg(g, &["-m", "gemini-2.5-pro", "--debug"]), None);
    }

    #[test]
    fn command_agents_have_no_floor() {
        assert_eq!(
            refused_arg(BackendKind::Command, &["--dangerously-skip-permissions"]),
            None
        );
    }
}
