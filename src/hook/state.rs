//! Session state under `<repo>/.arev/sessions/<session_id>/`: `state.json` (opt-in, baseline
//! snapshot, carried asides, block chain), `prompts.jsonl` (the user's prompts since review
//! was enabled: the review's intent), `intent.md` (the intent handed to the last review) and
//! `log.jsonl` (every decision, asides included). Verdicts are not kept here: they are in the
//! verdict cache (`store::cache`), which `arev run` and the hook share. Writes are atomic; a
//! corrupt state file is moved aside, never trusted.

use super::decide::{Chain, FindingBrief};
use crate::store::write_json_record;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};

/// 2: the baseline is a working-tree snapshot (`baseline_tree`), asides are carried.
pub const STATE_SCHEMA: u32 = 2;

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
    /// HEAD when review was enabled (None on an unborn branch); for messages only.
    pub baseline_head: Option<String>,
    /// The git tree object of the working-tree snapshot (tracked and untracked, non-ignored
    /// files) the reviewed diff starts from: taken when review was enabled, moved to the
    /// reviewed state after each approved stop. Not referenced by any ref.
    pub baseline_tree: String,
    /// When `baseline_tree` was taken.
    pub baseline_at: String,
    /// TARGET_SHA of the diff at the baseline (the empty patch's).
    pub baseline_sha: Option<String>,
    /// Confirmed `low` findings of the approved reviews since review was enabled, carried when
    /// the baseline moves (by fingerprint, latest first).
    pub asides: Vec<FindingBrief>,
    pub chain: Chain,
    pub updated_at: String,
}

impl SessionState {
    /// A fresh state: review on since now (`by`: `prefix` or `always`), starting from the
    /// working-tree snapshot `baseline` (HEAD `head`, for messages), an empty chain, no asides.
    pub fn new(
        session_id: &str,
        by: &str,
        head: Option<String>,
        baseline: &crate::target::Snapshot,
    ) -> Self {
        Self {
            schema_version: STATE_SCHEMA,
            session_id: session_id.to_string(),
            enabled: true,
            enabled_by: by.to_string(),
            enabled_at: now(),
            baseline_head: head,
            baseline_tree: baseline.tree.clone(),
            baseline_at: now(),
            baseline_sha: Some(baseline.sha.clone()),
            asides: Vec::new(),
            chain: Chain::default(),
            updated_at: now(),
        }
    }

    /// Carry `asides` (a newer review's) over: new fingerprints first, no duplicates.
    pub fn carry_asides(&mut self, asides: &[FindingBrief]) {
        let mut next: Vec<FindingBrief> = asides.to_vec();
        next.extend(
            self.asides
                .drain(..)
                .filter(|old| !asides.iter().any(|a| a.fingerprint == old.fingerprint)),
        );
        self.asides = next;
    }
}

/// One line of `prompts.jsonl`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedPrompt {
    pub at: String,
    pub prompt: String,
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

    fn prompts_path(&self) -> PathBuf {
        self.dir.join("prompts.jsonl")
    }

    /// Where the intent handed to a review is written.
    pub fn intent_path(&self) -> PathBuf {
        self.dir.join("intent.md")
    }

    /// The working-tree keys of recent stops and the diff sha and snapshot each produced
    /// (`target::snapshot_diff_cached`).
    pub fn diff_key_path(&self) -> PathBuf {
        self.dir.join("diffkey.json")
    }

    /// Forget the recorded prompts (review was (re-)enabled).
    pub fn reset_prompts(&self) -> std::io::Result<()> {
        match std::fs::remove_file(self.prompts_path()) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }

    /// Append one of the user's prompts (cut to `cap` bytes at a character boundary).
    pub fn record_prompt(&self, prompt: &str, cap: usize) -> std::io::Result<()> {
        std::fs::create_dir_all(&self.dir)?;
        let line = RecordedPrompt {
            at: now(),
            prompt: super::intent::cut(prompt.trim(), cap),
        };
        let mut text = crate::output::json_string(&line, false).map_err(std::io::Error::other)?;
        text.push('\n');
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.prompts_path())?
            .write_all(text.as_bytes())
    }

    /// The recorded prompts, oldest first (unreadable lines are skipped).
    pub fn prompts(&self) -> Vec<String> {
        std::fs::read_to_string(self.prompts_path())
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str::<RecordedPrompt>(l).ok())
            .map(|p| p.prompt)
            .collect()
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

    /// Atomic, without the fsync: the state is rewritten at every Stop, and an fsync there
    /// (tens of milliseconds while other programs write, on the path that must stay under
    /// `git status`, docs/performance.md) buys only the last Stop's update after a power
    /// loss. A crash leaves the old state or the new one; a file a file system left empty
    /// is moved aside at the next load, which says so and turns review off until the prefix.
    pub fn save(&self, state: &SessionState) -> std::io::Result<()> {
        std::fs::create_dir_all(&self.dir)?;
        write_json_record(&self.state_path(), state)
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
            baseline_tree: "4b825dc642cb6eb9a060e54bf8d69288fbee4904".into(),
            baseline_at: now(),
            baseline_sha: Some("def".into()),
            asides: vec![],
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

    fn aside(fp: &str) -> FindingBrief {
        FindingBrief {
            fingerprint: fp.into(),
            severity: crate::findings::Severity::Low,
            file: None,
            line: None,
            category: "style".into(),
            description: fp.into(),
            edit_instruction: None,
        }
    }

    #[test]
    fn asides_are_carried_newest_first_without_duplicates() {
        let mut st = state();
        st.carry_asides(&[aside("a"), aside("b")]);
        st.carry_asides(&[aside("c"), aside("a")]);
        let fps: Vec<_> = st.asides.iter().map(|a| a.fingerprint.as_str()).collect();
        assert_eq!(fps, ["c", "a", "b"]);
    }

    #[test]
    fn prompts_are_appended_cut_and_reset() {
        let d = tempfile::tempdir().unwrap();
        let s = SessionStore::new(d.path(), "s1");
        assert!(s.prompts().is_empty());
        s.record_prompt("  add an adder\n", 100).unwrap();
        s.record_prompt("ééé", 3).unwrap();
        assert_eq!(s.prompts(), ["add an adder", "é…"]);
        s.reset_prompts().unwrap();
        s.reset_prompts().unwrap();
        assert!(s.prompts().is_empty());
    }

    #[test]
    fn an_older_schema_is_not_trusted() {
        let d = tempfile::tempdir().unwrap();
        let s = SessionStore::new(d.path(), "s1");
        let mut v = serde_json::to_value(state()).unwrap();
        v["schema_version"] = 1.into();
        std::fs::create_dir_all(&s.dir).unwrap();
        std::fs::write(s.state_path(), v.to_string()).unwrap();
        assert!(s
            .load()
            .unwrap_err()
            .to_string()
            .contains("schema_version 1"));
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
    fn find_root_walks_up_to_the_git_entry() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        assert_eq!(find_root(&root.join("a/b")), None);
        std::fs::write(root.join(".git"), "gitdir: elsewhere\n").unwrap();
        assert_eq!(find_root(&root.join("a/b")), Some(root));
    }
}
