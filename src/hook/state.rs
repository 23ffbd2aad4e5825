//! Session state under `<repo>/.arev/sessions/<session_id>/`: `state.json` (opt-in, baseline,
//! block chain), `verdicts/<diff sha>.json` (the cache: a diff is never reviewed twice) and
//! `log.jsonl` (every decision, asides included). Writes are atomic; a corrupt state file is
//! moved aside, never trusted.

use super::decide::{Chain, Verdict};
use crate::store::{write_atomic, write_json_atomic};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};

pub const STATE_SCHEMA: u32 = 1;

/// `state.json` of one Claude Code session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionState {
    pub schema_version: u32,
    pub session_id: String,
    /// Review is on for this session.
    pub enabled: bool,
    /// `prefix` (a `#arev` prompt) or `always` (config).
    pub enabled_by: String,
    pub enabled_at: String,
    /// HEAD when review was enabled (None on an unborn branch): the diff's base.
    pub baseline_head: Option<String>,
    /// TARGET_SHA of the diff when review was enabled.
    pub baseline_sha: Option<String>,
    pub chain: Chain,
    pub updated_at: String,
}

impl SessionState {
    /// A fresh state: review on since now (`by`: `prefix` or `always`), an empty chain.
    pub fn new(
        session_id: &str,
        by: &str,
        baseline_head: Option<String>,
        baseline_sha: Option<String>,
    ) -> Self {
        Self {
            schema_version: STATE_SCHEMA,
            session_id: session_id.to_string(),
            enabled: true,
            enabled_by: by.to_string(),
            enabled_at: now(),
            baseline_head,
            baseline_sha,
            chain: Chain::default(),
            updated_at: now(),
        }
    }
}

/// Why the state could not be loaded.
#[derive(Debug)]
pub enum LoadError {
    /// Not valid JSON of the state schema; the file was moved to `moved_to`.
    Corrupt {
        path: PathBuf,
        moved_to: Option<PathBuf>,
        message: String,
    },
    Io {
        path: PathBuf,
        message: String,
    },
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Corrupt {
                path,
                moved_to,
                message,
            } => {
                write!(
                    f,
                    "the session state {} is corrupt ({message})",
                    path.display()
                )?;
                if let Some(m) = moved_to {
                    write!(f, "; it was moved to {}", m.display())?;
                }
                Ok(())
            }
            Self::Io { path, message } => write!(f, "cannot read {}: {message}", path.display()),
        }
    }
}

pub fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// The repository work tree containing `cwd` (the nearest ancestor with a `.git` entry),
/// canonicalised; `None` outside a repository. Cheap: a few `stat`s, no git2.
pub fn find_root(cwd: &Path) -> Option<PathBuf> {
    let mut dir = Some(cwd);
    while let Some(d) = dir {
        if d.join(".git").exists() {
            return Some(d.canonicalize().unwrap_or_else(|_| d.to_path_buf()));
        }
        dir = d.parent();
    }
    None
}

/// One session's directory.
#[derive(Debug, Clone)]
pub struct SessionStore {
    pub dir: PathBuf,
}

impl SessionStore {
    /// `<root>/.arev/sessions/<session_id>` (the id was validated by `input::parse`).
    pub fn new(root: &Path, session_id: &str) -> Self {
        Self {
            dir: root.join(".arev").join("sessions").join(session_id),
        }
    }

    pub fn state_path(&self) -> PathBuf {
        self.dir.join("state.json")
    }

    fn verdict_path(&self, sha: &str) -> PathBuf {
        self.dir.join("verdicts").join(format!("{sha}.json"))
    }

    /// The state, `None` when the session never opted in. A corrupt file is moved aside.
    pub fn load(&self) -> Result<Option<SessionState>, LoadError> {
        let path = self.state_path();
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(LoadError::Io {
                    path,
                    message: e.to_string(),
                })
            }
        };
        let parsed = serde_json::from_slice::<SessionState>(&bytes)
            .map_err(|e| e.to_string())
            .and_then(|s| {
                if s.schema_version == STATE_SCHEMA {
                    Ok(s)
                } else {
                    Err(format!(
                        "schema_version {} is not {STATE_SCHEMA}",
                        s.schema_version
                    ))
                }
            });
        match parsed {
            Ok(s) => Ok(Some(s)),
            Err(message) => {
                let aside = self
                    .dir
                    .join(format!("state.json.corrupt-{}", std::process::id()));
                let moved_to = std::fs::rename(&path, &aside).ok().map(|()| aside);
                Err(LoadError::Corrupt {
                    path,
                    moved_to,
                    message,
                })
            }
        }
    }

    pub fn save(&self, state: &SessionState) -> std::io::Result<()> {
        std::fs::create_dir_all(&self.dir)?;
        write_json_atomic(&self.state_path(), state)
    }

    /// The cached verdict for `sha`; an unreadable or corrupt cache entry is a miss.
    pub fn load_verdict(&self, sha: &str) -> Option<Verdict> {
        let bytes = std::fs::read(self.verdict_path(sha)).ok()?;
        serde_json::from_slice::<Verdict>(&bytes)
            .ok()
            .filter(|v| v.sha == sha)
    }

    pub fn save_verdict(&self, v: &Verdict) -> std::io::Result<()> {
        let p = self.verdict_path(&v.sha);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let mut bytes = serde_json::to_vec_pretty(v).map_err(std::io::Error::other)?;
        bytes.push(b'\n');
        write_atomic(&p, &bytes)
    }

    /// Append one line to `log.jsonl` (best effort: the log never fails a hook).
    pub fn log(&self, entry: &serde_json::Value) {
        let _ = std::fs::create_dir_all(&self.dir);
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join("log.jsonl"))
        {
            let mut line = entry.to_string();
            line.push('\n');
            let _ = f.write_all(line.as_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> SessionState {
        SessionState {
            schema_version: STATE_SCHEMA,
            session_id: "s1".into(),
            enabled: true,
            enabled_by: "prefix".into(),
            enabled_at: now(),
            baseline_head: Some("abc".into()),
            baseline_sha: Some("def".into()),
            chain: Chain::default(),
            updated_at: now(),
        }
    }

    #[test]
    fn round_trips_and_missing_is_none() {
        let d = tempfile::tempdir().unwrap();
        let s = SessionStore::new(d.path(), "s1");
        assert!(s.load().unwrap().is_none());
        let st = state();
        s.save(&st).unwrap();
        assert_eq!(s.load().unwrap().unwrap(), st);
        assert!(s
            .state_path()
            .starts_with(d.path().join(".arev/sessions/s1")));
    }

    #[test]
    fn corrupt_state_is_moved_aside_and_reported() {
        let d = tempfile::tempdir().unwrap();
        let s = SessionStore::new(d.path(), "s1");
        std::fs::create_dir_all(&s.dir).unwrap();
        std::fs::write(s.state_path(), "{\"schema_version\":1,").unwrap();
        let e = s.load().unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains("is corrupt") && msg.contains("moved to"),
            "{msg}"
        );
        assert!(!s.state_path().exists());
        // Next time the session simply has no state.
        assert!(s.load().unwrap().is_none());
    }

    #[test]
    fn verdict_cache_is_keyed_by_sha_and_tolerates_garbage() {
        let d = tempfile::tempdir().unwrap();
        let s = SessionStore::new(d.path(), "s1");
        let v = Verdict {
            sha: "aa".into(),
            run_id: "r".into(),
            report: "/r".into(),
            critical: vec![],
            concerns: vec![],
            asides: vec![],
        };
        assert!(s.load_verdict("aa").is_none());
        s.save_verdict(&v).unwrap();
        assert_eq!(s.load_verdict("aa"), Some(v));
        std::fs::write(s.dir.join("verdicts/bb.json"), "garbage").unwrap();
        assert!(s.load_verdict("bb").is_none());
    }

    #[test]
    fn find_root_walks_up_to_the_git_entry() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        assert_eq!(find_root(&root.join("a/b")), None);
        std::fs::write(root.join(".git"), "gitdir: elsewhere\n").unwrap();
        assert_eq!(find_root(&root.join("a/b")), Some(root));
    }
}
