//! `[prove]` (docs/prove.md "Configuration"): its checks at load, the values a proof runs
//! with (memory in bytes, `bind_ro` paths with `~` expanded), and the trusted keys a
//! repository's config may not set.

use super::{ConfigError, ProveConfig};
use std::path::{Path, PathBuf};
use toml::{Table, Value};

/// The smallest `[prove] memory`: below it not even a shell starts.
const MIN_MEMORY: u64 = 16 << 20;
/// `[prove] max_findings`.
const MAX_FINDINGS: std::ops::RangeInclusive<u32> = 1..=50;

/// A size `parse_bytes` cannot read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a size; use e.g. \"4GiB\" or \"512MiB\"")]
pub struct NotASize(pub String);

/// Parse a size: a whole number of bytes, optionally with a unit — `KiB`, `MiB`, `GiB`,
/// `TiB` (or `K`, `M`, `G`, `T`: the same powers of 1024) or `KB`, `MB`, `GB`, `TB` (powers
/// of 1000).
pub fn parse_bytes(s: &str) -> Result<u64, NotASize> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let bad = || NotASize(s.to_string());
    let n: u64 = num.parse().map_err(|_| bad())?;
    let mult: u64 = match unit.trim() {
        "" | "B" => 1,
        "K" | "KiB" => 1 << 10,
        "M" | "MiB" => 1 << 20,
        "G" | "GiB" => 1 << 30,
        "T" | "TiB" => 1 << 40,
        "KB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "TB" => 1_000_000_000_000,
        _ => return Err(bad()),
    };
    n.checked_mul(mult).ok_or_else(bad)
}

/// Whether `name` can be an environment variable's name.
fn is_env_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A `bind_ro` entry as a path: `~/…` against `home`; `None` unless absolute, normal
/// (no `.` or `..`), and not `/`.
fn bind_path(entry: &str, home: Option<&Path>) -> Option<PathBuf> {
    let p = match entry.strip_prefix("~/") {
        Some(rest) => home?.join(rest),
        None => PathBuf::from(entry),
    };
    let normal = p.components().all(|c| {
        matches!(
            c,
            std::path::Component::RootDir | std::path::Component::Normal(_)
        )
    });
    (p.is_absolute() && normal && p.parent().is_some()).then_some(p)
}

/// What `check` derives from `[prove]`.
pub(super) struct Checked {
    /// `memory` in bytes.
    pub memory: u64,
    /// `bind_ro` as paths, `~/` expanded against `home`.
    pub bind_ro: Vec<PathBuf>,
}

/// The checks of `[prove]`, and the values derived from it (`home`: `$HOME`, for `~/`).
pub(super) fn check(p: &ProveConfig, home: Option<&Path>) -> Result<Checked, ConfigError> {
    let invalid = |key: &str, message: String| ConfigError::Invalid {
        key: key.into(),
        message,
    };
    let memory = parse_bytes(&p.memory).map_err(|e| invalid("prove.memory", e.to_string()))?;
    if memory < MIN_MEMORY {
        return Err(invalid(
            "prove.memory",
            format!("\"{}\" is below the minimum of 16MiB", p.memory),
        ));
    }
    let bind_ro = p
        .bind_ro
        .iter()
        .map(|e| {
            bind_path(e, home).ok_or_else(|| {
                invalid(
                    "prove.bind_ro",
                    format!(
                        "`{e}` is not an absolute path (or `~/…` with $HOME set) without `.` \
                         or `..`, other than `/`"
                    ),
                )
            })
        })
        .collect::<Result<_, _>>()?;
    if let Some(bad) = p.env.iter().find(|n| !is_env_name(n)) {
        return Err(invalid(
            "prove.env",
            format!("`{bad}` is not the name of an environment variable"),
        ));
    }
    if !MAX_FINDINGS.contains(&p.max_findings) {
        return Err(invalid(
            "prove.max_findings",
            format!(
                "{} is not in {}..={}",
                p.max_findings,
                MAX_FINDINGS.start(),
                MAX_FINDINGS.end()
            ),
        ));
    }
    Ok(Checked { memory, bind_ro })
}

/// A repository's config layer (`arev.toml`, `.arev/config.toml`, or the base commit's) may
/// not weaken the sandbox: `[prove] sandbox = "none"` and a non-empty `env` or `bind_ro`
/// are refused.
pub(super) fn check_repository_layer(layer: &Table, path: &Path) -> Result<(), ConfigError> {
    let Some(Value::Table(prove)) = layer.get("prove") else {
        return Ok(());
    };
    let refuse = |key: &str, what: &str| ConfigError::Untrusted {
        path: path.to_path_buf(),
        key: format!("prove.{key}"),
        what: what.to_string(),
    };
    if prove.get("sandbox").and_then(Value::as_str) == Some("none") {
        return Err(refuse(
            "sandbox",
            "runs reproducers unsandboxed; only you can choose that (`--prove-sandbox none`)",
        ));
    }
    // An empty list is the default (`arev init` writes it): nothing is granted.
    let granted = |key: &str| {
        prove
            .get(key)
            .is_some_and(|v| v.as_array().is_none_or(|a| !a.is_empty()))
    };
    if granted("env") {
        return Err(refuse("env", "passes your environment to reproducers"));
    }
    if granted("bind_ro") {
        return Err(refuse("bind_ro", "shows your files to reproducers"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_in_binary_and_decimal_units() {
        assert_eq!(parse_bytes("4GiB"), Ok(4 << 30));
        assert_eq!(parse_bytes("4G"), Ok(4 << 30));
        assert_eq!(parse_bytes("512MiB"), Ok(512 << 20));
        assert_eq!(parse_bytes(" 2 GB "), Ok(2_000_000_000));
        assert_eq!(parse_bytes("1048576"), Ok(1 << 20));
        for bad in ["", "GiB", "4 gigs", "-1G", "1.5G", "99999999999999TiB"] {
            assert!(parse_bytes(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn bind_paths_are_absolute_normal_and_not_the_root() {
        let home = Path::new("/home/u");
        assert_eq!(
            bind_path("~/.cargo", Some(home)),
            Some(PathBuf::from("/home/u/.cargo"))
        );
        assert_eq!(
            bind_path("/opt/go", Some(home)),
            Some(PathBuf::from("/opt/go"))
        );
        for bad in ["/", "relative", "~/../etc", "/opt/../etc", "~user/x"] {
            assert_eq!(bind_path(bad, Some(home)), None, "{bad}");
        }
        assert_eq!(bind_path("~/.cargo", None), None);
    }

    #[test]
    fn env_names_are_identifiers() {
        for ok in ["CARGO_HOME", "_X", "a1"] {
            assert!(is_env_name(ok), "{ok}");
        }
        for bad in ["", "1X", "A-B", "A=B", "A B"] {
            assert!(!is_env_name(bad), "{bad}");
        }
    }
}

#[cfg(test)]
mod load_tests {
    use crate::config::{load, ConfigSources, SandboxMode};
    use std::path::PathBuf;

    fn repo(text: &str) -> ConfigSources {
        ConfigSources {
            repo_text: Some((PathBuf::from("abc123:arev.toml"), text.to_string())),
            ..Default::default()
        }
    }

    #[test]
    fn the_defaults_and_their_values() {
        let (c, _) = load(&ConfigSources::default()).unwrap();
        assert_eq!(c.prove.sandbox, SandboxMode::Bwrap);
        assert_eq!(c.timeouts.prove, std::time::Duration::from_secs(300));
        assert_eq!(c.prove.memory, 4 << 30);
        assert_eq!(c.prove.max_findings, 5);
        assert_eq!(c.prove.min_severity, crate::records::Severity::High);
        assert!(c.prove.bind_ro.is_empty() && c.prove.env.is_empty());
    }

    #[test]
    fn a_repository_config_may_not_weaken_the_sandbox() {
        for (text, key) in [
            ("[prove]\nsandbox = \"none\"\n", "prove.sandbox"),
            ("[prove]\nenv = [\"GITHUB_TOKEN\"]\n", "prove.env"),
            ("[prove]\nenv = [\"\"]\n", "prove.env"),
            ("[prove]\nbind_ro = \"/\"\n", "prove.bind_ro"),
            ("[prove]\nbind_ro = [\"~/.ssh\"]\n", "prove.bind_ro"),
        ] {
            // The base commit's config (`--repo-config base`) …
            let err = load(&repo(text)).unwrap_err().to_string();
            assert!(
                err.starts_with(&format!("abc123:arev.toml: `{key}` ")),
                "{err}"
            );
            assert!(err.contains("user config"), "{err}");
            // … and the working tree's (`--repo-config worktree`).
            let d = tempfile::tempdir().unwrap();
            let f = d.path().join("arev.toml");
            std::fs::write(&f, text).unwrap();
            let err = load(&ConfigSources {
                repo_file: Some(f.clone()),
                ..Default::default()
            })
            .unwrap_err()
            .to_string();
            assert!(
                err.starts_with(&format!("{}: `{key}` ", f.display())),
                "{err}"
            );
        }
        // Yours may: the user config and a --config file.
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("mine.toml");
        std::fs::write(
            &f,
            "[prove]\nsandbox = \"none\"\nenv = [\"CARGO_HOME\"]\nbind_ro = [\"/opt\"]\n",
        )
        .unwrap();
        for sources in [
            ConfigSources {
                user_file: Some(f.clone()),
                ..repo("[review]\npasses = 2\n")
            },
            ConfigSources {
                explicit_file: Some(f),
                ..repo("[review]\npasses = 2\n")
            },
        ] {
            let (c, _) = load(&sources).unwrap();
            assert_eq!(c.prove.sandbox, SandboxMode::None);
            assert_eq!(c.prove.env, ["CARGO_HOME"]);
            assert_eq!(c.prove.bind_ro, [PathBuf::from("/opt")]);
        }
        // What does not weaken it is fine from the repository (empty lists: the defaults).
        let (c, _) = load(&repo(
            "[prove]\nsandbox = \"bwrap\"\nenv = []\nbind_ro = []\nmemory = \"1GiB\"\nmin_severity = \"medium\"\n\
             max_findings = 2\n[timeouts]\nprove = \"90s\"\n",
        ))
        .unwrap();
        assert_eq!(c.prove.memory, 1 << 30);
        assert_eq!(c.prove.max_findings, 2);
        assert_eq!(c.timeouts.prove, std::time::Duration::from_secs(90));
    }

    #[test]
    fn bad_values_name_their_key() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("user.toml");
        for (text, want) in [
            (
                "[prove]\nmemory = \"lots\"\n",
                "prove.memory: `lots` is not a size",
            ),
            (
                "[prove]\nmemory = \"1MiB\"\n",
                "prove.memory: \"1MiB\" is below",
            ),
            (
                "[prove]\nmax_findings = 0\n",
                "prove.max_findings: 0 is not in 1..=50",
            ),
            (
                "[prove]\nenv = [\"A-B\"]\n",
                "prove.env: `A-B` is not the name",
            ),
            (
                "[prove]\nbind_ro = [\"rel/x\"]\n",
                "prove.bind_ro: `rel/x` is not",
            ),
            ("[prove]\nbind_ro = [\"/\"]\n", "prove.bind_ro: `/` is not"),
            (
                "[timeouts]\nprove = \"soon\"\n",
                "timeouts.prove: `soon` is not a duration",
            ),
            (
                "[prove]\nsandbox = \"docker\"\n",
                "unknown variant `docker`",
            ),
        ] {
            std::fs::write(&f, text).unwrap();
            let err = load(&ConfigSources {
                user_file: Some(f.clone()),
                ..Default::default()
            })
            .unwrap_err()
            .to_string();
            assert!(err.contains(want), "{want}: {err}");
        }
        std::fs::write(&f, "[prove]\nnetwork = true\n").unwrap();
        let err = load(&ConfigSources {
            user_file: Some(f),
            ..Default::default()
        })
        .unwrap_err()
        .to_string();
        assert!(err.ends_with("unknown key `prove.network`"), "{err}");
    }
}
