//! The `arev.toml` that `arev init` writes (pure): the embedded defaults with every key
//! commented out, so that it overrides nothing of the user's `~/.config/arev/config.toml`
//! until the user uncomments it; the only live value is the primary language. A mixed-vendor
//! panel example closes the file.

use super::load::default_toml;

/// The commented-out mixed panel appended to the file (valid once uncommented).
pub const PANEL_EXAMPLE: &str = r#"# A mixed-vendor panel: Enthusiast passes alternate between Claude and Codex, the Adversary
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
pub fn init_text(language: Option<&str>) -> String {
    let mut out = String::from(
        "# arev.toml — written by `arev init`. Every key below shows its default and is\n\
         # commented out; uncomment what you change. Layers, later wins: built-in defaults ←\n\
         # ~/.config/arev/config.toml ← this file ← --config FILE ← AREV_* variables ← flags.\n\
         # Unknown keys are an error.\n\n",
    );
    let mut section = String::new();
    // The embedded file's own header (up to the first blank line) is replaced by ours.
    let body = default_toml()
        .split_once("\n\n")
        .map_or(default_toml(), |(_, rest)| rest);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{load, ConfigSources};

    fn load_text(
        text: &str,
    ) -> Result<(crate::config::Settings, String), crate::config::ConfigError> {
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
            Some(crate::config::EventFormat::Claude)
        );
    }
}
