//! `arev init`: write a commented `arev.toml` at the repository root (never overwriting).
//!
//! Every setting in the written file is commented out, so that it overrides nothing of the
//! user's `~/.config/arev/config.toml` until the user uncomments it; the only live value is
//! the primary language, asked once on a TTY (or given with `--language`). A mixed-vendor
//! panel example closes the file.

use crate::cli::InitArgs;
use crate::errors::ExpectedError;
use crate::output;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

/// The commented-out mixed panel appended to the file (valid once uncommented).
pub(crate) const PANEL_EXAMPLE: &str = r#"# A mixed-vendor panel: Enthusiast passes alternate between Claude and Codex, the Adversary
# is a different model family (Gemini), the Judge is Claude.
# [roles]
# enthusiast = ["claude", "codex"]
# adversary = "gemini"
# judge = "claude"
#
# An agent of your own: any executable that reads the prompt on stdin and prints one of
# the three event formats.
# [agents.wrapper]
# backend = "command"
# binary = "/usr/local/bin/my-claude-wrapper"
# format = "claude"
# extra_args = ["--model", "{model}"]
# timeout = "20m"
"#;

/// The text `arev init` writes: the embedded defaults with every key commented out, the
/// primary language (if any) set, and the panel example.
pub(crate) fn init_text(language: Option<&str>) -> String {
    let mut out = String::from(
        "# arev.toml — written by `arev init`. Every key below shows its default and is\n\
         # commented out; uncomment what you change. Layers, later wins: built-in defaults ←\n\
         # ~/.config/arev/config.toml ← this file ← --config FILE ← AREV_* variables ← flags.\n\
         # Unknown keys are an error.\n\n",
    );
    let mut section = String::new();
    // The embedded file's own header (up to the first blank line) is replaced by ours.
    let body = crate::config::default_toml()
        .split_once("\n\n")
        .map_or(crate::config::default_toml(), |(_, rest)| rest);
    for line in body.lines() {
        let t = line.trim_start();
        if t.starts_with('[') {
            section = t.to_string();
            out.push_str(&format!("# {line}\n"));
        } else if t.is_empty() || t.starts_with('#') {
            out.push_str(line);
            out.push('\n');
        } else if section == "[localization]" && t.starts_with("primary") {
            match language {
                Some(lang) => {
                    out.push_str("[localization]\n");
                    out.push_str(&format!("primary = {}\n", toml::Value::String(lang.into())));
                }
                None => out.push_str(&format!("# {line}\n")),
            }
        } else {
            out.push_str(&format!("# {line}\n"));
        }
    }
    out.push('\n');
    out.push_str(PANEL_EXAMPLE);
    out
}

fn repo_root(cwd: &Path) -> PathBuf {
    git2::Repository::discover(cwd)
        .ok()
        .and_then(|r| r.workdir().map(Path::to_path_buf))
        .unwrap_or_else(|| cwd.to_path_buf())
}

pub(crate) fn init_command(args: &InitArgs) -> Result<(), ExpectedError> {
    let cwd = std::env::current_dir()
        .map_err(|e| ExpectedError::Usage(format!("cannot read the current directory: {e}")))?;
    let root = repo_root(&cwd);
    let path = root.join("arev.toml");
    for existing in [path.clone(), root.join(".arev").join("config.toml")] {
        if existing.exists() {
            return Err(ExpectedError::Usage(format!(
                "{} already exists; arev init never overwrites a config",
                existing.display()
            )));
        }
    }
    let language = match &args.language {
        Some(l) => Some(l.trim().to_string()).filter(|l| !l.is_empty()),
        None if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() => {
            output::prompt("Primary language of the agents' prose (e.g. en, de; empty = none): ");
            let mut answer = String::new();
            let _ = std::io::stdin().read_line(&mut answer);
            Some(answer.trim().to_string()).filter(|l| !l.is_empty())
        }
        None => None,
    };
    let text = init_text(language.as_deref());
    // create_new: never clobber a file that appeared since the check.
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
        .map_err(|e| ExpectedError::write(&path, e))?;
    f.write_all(text.as_bytes())
        .map_err(|e| ExpectedError::write(&path, e))?;
    output::progress(&format!("arev: wrote {}", path.display()));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{load, ConfigSources};

    fn load_text(
        text: &str,
    ) -> Result<(crate::config::Config, String), crate::config::ConfigError> {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("arev.toml");
        std::fs::write(&p, text).unwrap();
        load(&ConfigSources {
            repo_file: Some(p),
            ..Default::default()
        })
    }

    #[test]
    fn written_file_overrides_nothing_but_the_language() {
        let (_, defaults) = load(&ConfigSources::default()).unwrap();
        let (_, digest) = load_text(&init_text(None)).unwrap();
        assert_eq!(digest, defaults, "every key is commented out");
        let (c, _) = load_text(&init_text(Some("de"))).unwrap();
        assert_eq!(c.localization.primary, "de");
        // Every default key appears (commented).
        let text = init_text(None);
        for key in [
            "# model = \"opus\"",
            "# fail_on = \"high\"",
            "# agent = \"10m\"",
            "# backend = \"codex\"",
            "# rules = []",
            "# exclude = []",
            "# skip_lockfiles = true",
            "# focus = \"\"",
            "# paths = []",
            "#   [[review.paths]]",
        ] {
            assert!(text.contains(key), "{key} missing");
        }
    }

    #[test]
    fn the_documented_review_context_keys_load() {
        let (c, _) = load_text(
            "[review]\nrules = [\"docs/r.md\"]\nexclude = [\"gen/**\"]\nskip_lockfiles = false\n\
             focus = \"auth\"\n\n[[review.paths]]\nglob = \"migrations/**\"\n\
             instructions = \"Reversible.\"\n",
        )
        .unwrap();
        assert_eq!(c.review.rules, ["docs/r.md"]);
        assert_eq!(c.review.exclude, ["gen/**"]);
        assert!(!c.review.skip_lockfiles);
        assert_eq!(c.review.focus, "auth");
        assert_eq!(c.review.paths[0].glob, "migrations/**");
        let err = load_text("[[review.paths]]\nglob = \"a\"\nnote = \"x\"\n").unwrap_err();
        assert!(err.to_string().contains("note"), "{err}");
    }

    #[test]
    fn panel_example_is_valid_once_uncommented() {
        let live: String = PANEL_EXAMPLE
            .lines()
            .filter(|l| l.starts_with("# [") || l.starts_with("# ") && l.contains(" = "))
            .map(|l| format!("{}\n", &l[2..]))
            .collect();
        let (c, _) = load_text(&live).unwrap();
        assert_eq!(c.roles.enthusiast.names(), ["claude", "codex"]);
        assert_eq!(c.roles.adversary, "gemini");
        assert_eq!(
            c.agents["wrapper"].format,
            Some(crate::dispatch::EventFormat::Claude)
        );
    }
}
