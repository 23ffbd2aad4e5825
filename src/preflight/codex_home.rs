//! `arev doctor`: a Codex panel whose home is under the temp dir while a system `bwrap`
//! exists. Codex 0.169.0 then refuses to link its sandbox helper ("Refusing to create helper
//! binaries under temporary dir") and every shell command it runs fails: the review aborts
//! with `*_no_tool_invocation`. The home Codex gets is the private one arev makes for each
//! dispatch (`dispatch::home`: `$XDG_CACHE_HOME/arev/homes/codex-*`, else under
//! `$HOME/.cache`, else the temp dir), never the user's `CODEX_HOME` itself, which it only
//! mirrors; so it is under the temp dir when `XDG_CACHE_HOME` or `HOME` is (a CI job or a
//! container with `HOME=/tmp`).

use crate::config::Settings;
use std::path::{Path, PathBuf};

/// Whether a role dispatches a Codex agent (the Fixer is the first Enthusiast).
fn codex_in_use(config: &Settings) -> bool {
    let mut used = config.roles.enthusiast.names();
    used.push(config.roles.adversary.clone());
    used.push(config.roles.judge.clone());
    config.agents.iter().any(|(name, a)| {
        a.backend.backend().fails_with_home_under_temp_dir() && used.contains(name)
    })
}

/// Where arev puts a Codex reviewer's private home (as `dispatch::home` computes it).
fn private_homes() -> PathBuf {
    crate::xdg::cache_home()
        .unwrap_or_else(std::env::temp_dir)
        .join("arev/homes")
}

/// `path` inside `dir`, as written or once both are resolved (a symbolic link such as
/// macOS's `/tmp` → `/private/tmp`; a path that does not exist yet is resolved through its
/// nearest existing ancestor).
fn is_under(path: &Path, dir: &Path) -> bool {
    fn resolved(p: &Path) -> PathBuf {
        let mut tail = vec![];
        let mut cur = p;
        loop {
            if let Ok(real) = cur.canonicalize() {
                return tail.iter().rev().fold(real, |acc, c| acc.join(c));
            }
            match (cur.parent(), cur.file_name()) {
                (Some(parent), Some(name)) => {
                    tail.push(name.to_os_string());
                    cur = parent;
                }
                _ => return p.to_path_buf(),
            }
        }
    }
    path.starts_with(dir) || resolved(path).starts_with(resolved(dir))
}

/// The decision (pure): the line to print when Codex is in use, `bwrap` is installed and
/// `codex_home` is under `temp` (the temp dir Codex compares with: `$TMPDIR`, else `/tmp`);
/// None otherwise.
pub fn temp_home_problem(
    codex_in_use: bool,
    bwrap: Option<&Path>,
    codex_home: &Path,
    temp: &Path,
) -> Option<String> {
    let bwrap = bwrap.filter(|_| codex_in_use)?;
    is_under(codex_home, temp).then(|| {
        format!(
            "codex: its home would be under the temp dir ({} is under {}) and {} exists: \
             Codex 0.169.0 then refuses to create its sandbox helper (\"Refusing to create \
             helper binaries under temporary dir\") and every shell command it runs fails — \
             set XDG_CACHE_HOME to a directory outside {} (e.g. `export \
             XDG_CACHE_HOME=/var/cache/arev-$USER`, or a HOME that is not under it)",
            codex_home.display(),
            temp.display(),
            bwrap.display(),
            temp.display()
        )
    })
}

/// The doctor's line (a FAIL) when this environment hits the refusal under `config`.
pub fn codex_temp_home(config: &Settings) -> Option<String> {
    let used = codex_in_use(config);
    if !used {
        return None;
    }
    let bwrap = crate::prove::find_bwrap();
    temp_home_problem(
        used,
        bwrap.as_deref(),
        &private_homes(),
        &std::env::temp_dir(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bwrap() -> Option<&'static Path> {
        Some(Path::new("/usr/bin/bwrap"))
    }

    #[test]
    fn only_codex_with_bwrap_and_a_home_under_the_temp_dir_is_a_problem() {
        let tmp = Path::new("/tmp");
        let under = Path::new("/tmp/ci/home/.cache/arev/homes");
        let outside = Path::new("/home/u/.cache/arev/homes");
        let line = temp_home_problem(true, bwrap(), under, tmp).expect("a problem");
        assert!(
            line.contains("/tmp/ci/home/.cache/arev/homes is under /tmp")
                && line.contains("/usr/bin/bwrap exists")
                && line.contains("Refusing to create helper binaries under temporary dir")
                && line.contains("set XDG_CACHE_HOME to a directory outside /tmp"),
            "{line}"
        );
        assert_eq!(temp_home_problem(true, bwrap(), outside, tmp), None);
        assert_eq!(temp_home_problem(true, None, under, tmp), None, "no bwrap");
        assert_eq!(
            temp_home_problem(false, bwrap(), under, tmp),
            None,
            "no codex"
        );
        // A sibling whose name starts the same is not under it.
        assert_eq!(
            temp_home_problem(true, bwrap(), Path::new("/tmpfoo/x"), tmp),
            None
        );
        // TMPDIR elsewhere: that is the temp dir compared with.
        let t = Path::new("/scratch/t");
        assert!(temp_home_problem(true, bwrap(), Path::new("/scratch/t/h/arev"), t).is_some());
        assert_eq!(temp_home_problem(true, bwrap(), under, t), None);
    }

    #[test]
    fn a_home_reached_through_a_link_into_the_temp_dir_counts() {
        let d = tempfile::tempdir().unwrap();
        let temp = d.path().join("tmp");
        std::fs::create_dir_all(temp.join("real")).unwrap();
        let link = d.path().join("link");
        std::os::unix::fs::symlink(temp.join("real"), &link).unwrap();
        // Not yet created below the link: resolved through its existing ancestor.
        let home = link.join(".cache/arev/homes");
        assert!(temp_home_problem(true, bwrap(), &home, &temp).is_some());
        assert!(temp_home_problem(true, bwrap(), &d.path().join("other/x"), &temp).is_none());
    }

    #[test]
    fn codex_counts_only_when_a_role_dispatches_it() {
        let (mut c, _) = crate::config::load(&crate::config::ConfigSources::default()).unwrap();
        c.roles.enthusiast = crate::config::AgentNames::One("claude".into());
        c.roles.adversary = "claude".into();
        c.roles.judge = "claude".into();
        assert!(c.agents.contains_key("codex"), "the defaults define codex");
        assert!(!codex_in_use(&c));
        c.roles.judge = "codex".into();
        assert!(codex_in_use(&c));
    }
}
