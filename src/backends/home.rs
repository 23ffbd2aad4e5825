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

//!
//! A home is removed when its dispatch ends; one whose arev was killed (SIGKILL, a crash)
//! is left behind. Each holds an exclusive `flock` on its [`LIVE_FILE`] for as long as its
//! dispatch runs (the kernel releases it however the process ends), so the next dispatch
//! that makes a home prunes every home under the same base that is older than a day, owned
//! by the user, and whose lock it can take: never a live run's ([`prune_stale`]).

use nix::fcntl::{Flock, FlockArg};
use std::ffi::OsString;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// The private home of one dispatch; removed (the links, never their targets) when dropped.
#[derive(Debug)]
pub struct ReviewerHome {
    pub(super) _dir: PrivateDir,
    /// What points the CLI at it (`CODEX_HOME`, `GEMINI_CLI_HOME`).
    pub env: Vec<(String, String)>,
}

/// A private directory, locked as live until dropped, then removed.
#[derive(Debug)]
pub struct PrivateDir {
    // Declared first, dropped first: the directory goes, then the lock is released.
    dir: tempfile::TempDir,
    _live: Flock<File>,
}

impl PrivateDir {
    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// The file in each private home whose `flock` says its dispatch is alive.
pub const LIVE_FILE: &str = ".arev-home.lock";
/// The prefixes of the private homes' names (`codex-…`, `gemini-…`, `opencode-…`) and of
/// the agents' temp dirs (`tmp-…`): nothing else under the base is ever pruned.
const PREFIXES: [&str; 4] = ["codex-", "gemini-", "opencode-", "tmp-"];
/// How old a home must be before it is pruned.
const STALE_AFTER: Duration = Duration::from_secs(24 * 60 * 60);

/// The value of the variable `k` in `env`.
fn os_var(env: &[(OsString, OsString)], k: &str) -> Option<OsString> {
    env.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())
}

/// The absolute path in the variable `k` of `env`.
pub(super) fn var(env: &[(OsString, OsString)], k: &str) -> Option<PathBuf> {
    os_var(env, k)
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
}

/// `$XDG_CACHE_HOME` of `env`, else its `$HOME/.cache` (`crate::xdg`).
pub(super) fn cache_home(env: &[(OsString, OsString)]) -> Option<PathBuf> {
    crate::xdg::cache_home_from(os_var(env, "XDG_CACHE_HOME"), os_var(env, "HOME"))
}

/// `$XDG_DATA_HOME` of `env`, else its `$HOME/.local/share` (`crate::xdg`).
pub(super) fn data_home(env: &[(OsString, OsString)]) -> Option<PathBuf> {
    crate::xdg::data_home_from(os_var(env, "XDG_DATA_HOME"), os_var(env, "HOME"))
}

/// Where the private homes of an agent started with `env` go: `arev/homes` in its cache.
pub(super) fn homes_base(env: &[(OsString, OsString)]) -> PathBuf {
    cache_home(env)
        .unwrap_or_else(std::env::temp_dir)
        .join("arev/homes")
}

/// A new directory (0700) under `base`, locked as live; stale homes beside it are pruned
/// first.
pub(super) fn private_dir(base: &Path, prefix: &str) -> std::io::Result<PrivateDir> {
    use std::os::unix::fs::MetadataExt;
    std::fs::create_dir_all(base)?;
    let dir = tempfile::Builder::new().prefix(prefix).tempdir_in(base)?;
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )?;
    let file = File::create(dir.path().join(LIVE_FILE))?;
    let live = Flock::lock(file, FlockArg::LockExclusiveNonblock)
        .map_err(|(_, e)| std::io::Error::from(e))?;
    // The user is whoever owns the home just made.
    let user = std::fs::metadata(dir.path())?.uid();
    prune_stale(base, user, SystemTime::now());
    Ok(PrivateDir { dir, _live: live })
}

/// `env` as the private homes and temp dirs see it: when its cache home lies inside one of
/// `trees` (the reviewed repository, whose tree must not receive arev's files, as the
/// verdict cache may not live there), `XDG_CACHE_HOME` is replaced by `arev-cache` in the
/// temp dir.
pub fn homes_env(env: &[(OsString, OsString)], trees: &[&Path]) -> Vec<(OsString, OsString)> {
    let canonical = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let inside = cache_home(env).is_some_and(|c| {
        trees
            .iter()
            .any(|t| c.starts_with(t) || canonical(&c).starts_with(canonical(t)))
    });
    if !inside {
        return env.to_vec();
    }
    let mut out: Vec<(OsString, OsString)> = env
        .iter()
        .filter(|(k, _)| k != "XDG_CACHE_HOME")
        .cloned()
        .collect();
    out.push((
        "XDG_CACHE_HOME".into(),
        std::env::temp_dir().join("arev-cache").into_os_string(),
    ));
    out
}

/// The temp dir of one dispatch, whatever its CLI: its `TMPDIR`, beside the private homes
/// and removed with everything in it when the dispatch ends. The CLIs write there unasked
/// (OpenCode's runtime unpacks a 5 MiB native library per start, Gemini CLI leaves an error
/// report per failed turn), which in the user's `/tmp` would pile up run after run; what an
/// agent leaves there can also never reach another agent's. Beside the homes, never above
/// them: Codex refuses to link its sandbox helper into a home under its temp dir.
pub fn agent_tmp(env: &[(OsString, OsString)]) -> std::io::Result<PrivateDir> {
    private_dir(&homes_base(env), "tmp-")
}

/// Whether a home may be pruned, from what its entry says: a home's name, the user's own,
/// older than [`STALE_AFTER`] (a clock that went back makes nothing stale).
fn is_stale(name: &str, owner: u32, user: u32, modified: SystemTime, now: SystemTime) -> bool {
    PREFIXES.iter().any(|p| name.starts_with(p))
        && owner == user
        && now
            .duration_since(modified)
            .is_ok_and(|age| age > STALE_AFTER)
}

/// Remove the homes under `base` left behind by a killed arev: stale by [`is_stale`] and
/// not live (their [`LIVE_FILE`] lock taken without waiting, or no lock file: a home of an
/// arev before the lock). `user`: the uid whose homes these are. Best effort: what cannot
/// be read or removed stays.
pub fn prune_stale(base: &Path, user: u32, now: SystemTime) {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    for entry in entries.flatten() {
        let (Ok(meta), Some(name)) = (
            entry.metadata(),
            entry.file_name().to_str().map(str::to_owned),
        ) else {
            continue;
        };
        let modified = meta.modified().unwrap_or(now);
        if !meta.is_dir() || !is_stale(&name, meta.uid(), user, modified, now) {
            continue;
        }
        let dir = entry.path();
        // Held while the directory is removed: a live home's lock is never granted.
        let _held = match File::open(dir.join(LIVE_FILE)) {
            Ok(f) => match Flock::lock(f, FlockArg::LockExclusiveNonblock) {
                Ok(held) => Some(held),
                Err(_) => continue,
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(_) => continue,
        };
        // `remove_dir_all` removes the links, never what they point to.
        let _ = std::fs::remove_dir_all(&dir);
    }
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
    use std::time::{Duration, SystemTime};

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

    /// The entries of `dir`, but a home's own lock file.
    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n != LIVE_FILE)
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

    /// Sets the modification time of the directory `p` to `age` ago.
    fn age(p: &Path, age: Duration) {
        File::open(p)
            .unwrap()
            .set_modified(SystemTime::now() - age)
            .unwrap();
    }

    #[test]
    fn stale_homes_of_killed_runs_are_pruned_but_never_a_live_one() {
        let d = tempfile::tempdir().unwrap();
        let base = d.path().join("arev/homes");
        let e = env(&[("HOME", d.path()), ("XDG_CACHE_HOME", d.path())]);
        // A live home: its dispatch holds the lock. Made old, it still stays.
        let live = reviewer_home(BackendKind::Codex, &e).unwrap().unwrap();
        let live_dir = PathBuf::from(&live.env[0].1);
        assert!(live_dir.starts_with(&base) && live_dir.join(LIVE_FILE).is_file());
        // A killed run's home: its lock file is there, nobody holds it.
        let killed = base.join("gemini-killed");
        std::fs::create_dir_all(killed.join(".gemini")).unwrap();
        std::fs::write(killed.join(LIVE_FILE), "").unwrap();
        std::os::unix::fs::symlink(d.path().join("target"), killed.join("link")).unwrap();
        std::fs::write(d.path().join("target"), "the user's").unwrap();
        // A home from before the lock, and one killed an hour ago; something not arev's.
        let legacy = base.join("opencode-legacy");
        let recent = base.join("codex-recent");
        let other = base.join("not-a-home");
        for p in [&legacy, &recent, &other] {
            std::fs::create_dir_all(p).unwrap();
        }
        for p in [&live_dir, &killed.join(".gemini"), &killed, &legacy, &other] {
            age(p, Duration::from_secs(25 * 3600));
        }
        age(&recent, Duration::from_secs(3600));
        // The next dispatch's home prunes the stale ones.
        let next = reviewer_home(BackendKind::Codex, &e).unwrap().unwrap();
        assert!(!killed.exists() && !legacy.exists(), "stale homes stay");
        assert_eq!(
            std::fs::read_to_string(d.path().join("target")).unwrap(),
            "the user's",
            "a link's target was removed"
        );
        assert!(live_dir.is_dir(), "a live home was pruned");
        assert!(recent.is_dir() && other.is_dir());
        drop(live);
        assert!(!live_dir.exists());
        drop(next);
        let left: Vec<String> = names(&base);
        assert_eq!(left, ["codex-recent", "not-a-home"]);
    }

    #[test]
    fn homes_never_go_inside_the_reviewed_tree() {
        let d = tempfile::tempdir().unwrap();
        let repo = d.path().join("repo");
        std::fs::create_dir_all(&repo).unwrap();
        let inside = env(&[("HOME", d.path()), ("XDG_CACHE_HOME", &repo.join("forged"))]);
        let moved = homes_env(&inside, &[&repo]);
        let base = homes_base(&moved);
        assert!(!base.starts_with(&repo), "{}", base.display());
        assert_eq!(base, std::env::temp_dir().join("arev-cache/arev/homes"));
        assert_eq!(
            var(&moved, "HOME").as_deref(),
            Some(d.path()),
            "the rest is kept"
        );
        let outside = env(&[("HOME", d.path()), ("XDG_CACHE_HOME", &d.path().join("c"))]);
        assert_eq!(homes_env(&outside, &[&repo]), outside);
        // `$HOME/.cache` inside the tree (a HOME that is the repository) counts too.
        let home_in = env(&[("HOME", &repo)]);
        assert!(!homes_base(&homes_env(&home_in, &[&repo])).starts_with(&repo));
    }

    #[test]
    fn only_old_homes_of_the_user_are_stale() {
        let now = SystemTime::now();
        let old = now - Duration::from_secs(25 * 3600);
        assert!(is_stale("codex-x1", 1000, 1000, old, now));
        assert!(
            is_stale("tmp-x1", 1000, 1000, old, now),
            "an agent's temp dir"
        );
        assert!(!is_stale("codex-x1", 0, 1000, old, now), "another user's");
        assert!(!is_stale(
            "codex-x1",
            1000,
            1000,
            now - Duration::from_secs(3600),
            now
        ));
        assert!(!is_stale("cache", 1000, 1000, old, now), "not a home");
        assert!(!is_stale(
            "gemini-x",
            1000,
            1000,
            now + Duration::from_secs(9),
            now
        ));
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
