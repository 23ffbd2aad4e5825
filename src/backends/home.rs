//! A Codex or Gemini reviewer's view of the user's CLI home: their login and settings, not
//! their personal context (docs/trust.md; docs/architecture.md §9.1, §16.3, §16.4).
//!
//! Neither CLI has a switch for the user's global memory file (Codex 0.169.0 always sends
//! `$CODEX_HOME/AGENTS.md`; Gemini CLI 0.61.0 appends `~/.gemini/GEMINI.md` to any system
//! prompt), and both find it under their home directory. So a reviewer gets a home of its
//! own — a private directory (mode 0700, outside the run dir, removed when the dispatch
//! ends) holding a symbolic link to every entry of the user's real home but the personal
//! ones. Credentials are links, never copies: a refreshed token is written through the link
//! to the user's own file (Codex writes `auth.json` in place and locks it beside its real
//! path; Gemini writes `oauth_creds.json` and `gemini-credentials.json` in place), so a
//! rotated refresh token is never left behind in a copy.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The private home of one dispatch; removed (the links, never their targets) when dropped.
#[derive(Debug)]
pub struct ReviewerHome {
    pub(super) _dir: tempfile::TempDir,
    /// What points the CLI at it (`CODEX_HOME`, `GEMINI_CLI_HOME`).
    pub env: Vec<(String, String)>,
}

/// The absolute path in the variable `k` of `env`.
pub(super) fn var(env: &[(OsString, OsString)], k: &str) -> Option<PathBuf> {
    env.iter()
        .find(|(n, _)| n == k)
        .map(|(_, v)| PathBuf::from(v))
        .filter(|p| p.is_absolute())
}

/// Where the private homes of an agent started with `env` go: `arev/homes` in its cache.
pub(super) fn homes_base(env: &[(OsString, OsString)]) -> PathBuf {
    var(env, "XDG_CACHE_HOME")
        .or_else(|| var(env, "HOME").map(|h| h.join(".cache")))
        .unwrap_or_else(std::env::temp_dir)
        .join("arev/homes")
}

/// A new directory (0700) under `base`.
pub(super) fn private_dir(base: &Path, prefix: &str) -> std::io::Result<tempfile::TempDir> {
    std::fs::create_dir_all(base)?;
    let dir = tempfile::Builder::new().prefix(prefix).tempdir_in(base)?;
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )?;
    Ok(dir)
}

pub(super) fn is_markdown(name: &str) -> bool {
    Path::new(name)
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("md"))
}

/// A link in `dst` to every entry of the directory `src` whose name `keep` accepts (a name
/// that is not UTF-8 names no personal file: linked). Nothing when `src` is no directory.
pub(super) fn mirror(src: &Path, dst: &Path, keep: impl Fn(&str) -> bool) -> std::io::Result<()> {
    let Ok(entries) = std::fs::read_dir(src) else {
        return Ok(());
    };
    for entry in entries {
        let name = entry?.file_name();
        if name.to_str().is_none_or(&keep) {
            std::os::unix::fs::symlink(src.join(&name), dst.join(&name))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backends::BackendKind;

    fn reviewer_home(
        kind: BackendKind,
        env: &[(OsString, OsString)],
    ) -> std::io::Result<Option<ReviewerHome>> {
        kind.backend().private_home(env)
    }

    fn env(pairs: &[(&str, &Path)]) -> Vec<(OsString, OsString)> {
        pairs
            .iter()
            .map(|(k, v)| (OsString::from(k), v.as_os_str().to_owned()))
            .collect()
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_codex_home_links_everything_but_the_personal_context() {
        let d = tempfile::tempdir().unwrap();
        let real = d.path().join("home/.codex");
        std::fs::create_dir_all(real.join("memories")).unwrap();
        for f in [
            "AGENTS.md",
            "AGENTS.override.md",
            "auth.json",
            "config.toml",
        ] {
            std::fs::write(real.join(f), f).unwrap();
        }
        let cache = d.path().join("cache");
        let e = env(&[("HOME", &d.path().join("home")), ("XDG_CACHE_HOME", &cache)]);
        let h = reviewer_home(BackendKind::Codex, &e).unwrap().unwrap();
        let (k, v) = &h.env[0];
        assert_eq!(k, "CODEX_HOME");
        let own = PathBuf::from(v);
        assert!(own.starts_with(cache.join("arev/homes")));
        assert_eq!(names(&own), ["auth.json", "config.toml"]);
        // A link, so that a refreshed token lands in the user's own file.
        std::fs::write(own.join("auth.json"), "rotated").unwrap();
        assert_eq!(
            std::fs::read_to_string(real.join("auth.json")).unwrap(),
            "rotated"
        );
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(&own).unwrap().permissions(),
        );
        assert_eq!(mode & 0o777, 0o700);
        drop(h);
        assert!(!own.exists());
        assert!(real.join("auth.json").exists(), "the targets stay");
        assert!(reviewer_home(BackendKind::Claude, &e).unwrap().is_none());
    }

    #[test]
    fn a_gemini_home_links_everything_but_the_personal_context() {
        let d = tempfile::tempdir().unwrap();
        let home = d.path().join("home");
        let real = home.join(".gemini");
        std::fs::create_dir_all(real.join("tmp/proj/memory")).unwrap();
        std::fs::create_dir_all(real.join("extensions/x")).unwrap();
        for f in [
            "GEMINI.md",
            "CONTEXT.MD",
            "settings.json",
            "oauth_creds.json",
            ".env",
        ] {
            std::fs::write(real.join(f), f).unwrap();
        }
        std::fs::write(home.join(".env"), "GEMINI_API_KEY=x").unwrap();
        let e = env(&[("HOME", &home), ("XDG_CACHE_HOME", &d.path().join("c"))]);
        let h = reviewer_home(BackendKind::Gemini, &e).unwrap().unwrap();
        let own = PathBuf::from(&h.env[0].1);
        assert_eq!(h.env[0].0, "GEMINI_CLI_HOME");
        assert_eq!(names(&own), [".env", ".gemini"]);
        assert_eq!(
            names(&own.join(".gemini")),
            [".env", "oauth_creds.json", "settings.json"]
        );
    }
}
