//! `arev hook prompt` (UserPromptSubmit): `#arev …` enables review for the session and
//! records the baseline (a snapshot of the working tree, untracked files included, so work
//! that predates it is never reviewed); `#arev off` turns it off; any other prompt of the
//! user in a reviewed session starts a new block chain and joins the review's intent. Mode
//! `always` records a baseline on a session's first prompt. Prompts Claude Code writes itself
//! (a background task's `<task-notification>`, system reminders, Stop-hook feedback) change
//! nothing. Fails open with a `systemMessage`.

use super::env::{load_config, HookEnv};
use super::error::HookError;
use super::input;
use super::intent::PROMPT_MAX_BYTES;
use super::message::system_message;
use super::state::{find_root, now, SessionState, SessionStore};
use crate::config::{HookMode, Settings};
use serde_json::{json, Value};
use std::path::Path;

/// What review starts from: HEAD (for messages) and the working-tree snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Baseline {
    pub head: Option<String>,
    pub snapshot: crate::target::Snapshot,
}

impl Baseline {
    /// A fresh state (review on, empty chain, no asides) starting from this baseline.
    pub fn state(&self, session_id: &str, by: &str) -> SessionState {
        SessionState::new(session_id, by, self.head.clone(), &self.snapshot)
    }
}

/// What a prompt says to arev.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptCommand {
    Enable,
    Disable,
    None,
}

/// `#arev …` → Enable, `#arev off` → Disable; the prefix must be a whole word at the start.
pub fn parse_prompt(prompt: &str, prefix: &str) -> PromptCommand {
    let p = prompt.trim_start();
    let Some(rest) = p.strip_prefix(prefix) else {
        return PromptCommand::None;
    };
    if !(rest.is_empty() || rest.starts_with(char::is_whitespace)) {
        return PromptCommand::None;
    }
    let first = rest.split_whitespace().next().unwrap_or("");
    if first.eq_ignore_ascii_case("off") {
        PromptCommand::Disable
    } else {
        PromptCommand::Enable
    }
}

/// How prompts that Claude Code writes itself begin. Claude Code 2.1.330 fires
/// UserPromptSubmit for a finished background task with the prompt
/// `<task-notification>\n<task-id>…</task-id>…` (verified with the real CLI); harness context
/// comes as `<system-reminder>` blocks; Stop-hook feedback (`Stop hook feedback:\n…`) is
/// injected without UserPromptSubmit in 2.1.330, and guarded against all the same.
const GENERATED_PREFIXES: &[&str] = &[
    "<task-notification>",
    "<system-reminder>",
    "Stop hook feedback:",
];

/// Whether `prompt` was written by Claude Code rather than typed by the user: such a prompt
/// never enables review, never starts a new block chain and is not part of the intent.
pub fn is_generated(prompt: &str) -> bool {
    let p = prompt.trim_start();
    GENERATED_PREFIXES.iter().any(|g| p.starts_with(g))
}

/// HEAD (None on an unborn branch) and a snapshot of the working tree of `root`.
pub fn baseline(root: &Path) -> Result<Baseline, HookError> {
    let repo = git2::Repository::open(root).map_err(|source| HookError::OpenRepo {
        root: root.to_path_buf(),
        source,
    })?;
    let head = repo
        .head()
        .ok()
        .and_then(|h| h.peel_to_commit().ok())
        .map(|c| c.id().to_string());
    // First: `.arev/` (the session dir, run dirs) is never part of a snapshot or a diff.
    crate::store::add_git_exclude(repo.commondir()).map_err(HookError::GitExclude)?;
    // No diff yet: neither the size cap nor the excludes play a part in a bare snapshot.
    let snapshot = crate::target::snapshot_diff(
        root,
        None,
        crate::target::DEFAULT_MAX_FILE_BYTES,
        &crate::target::Excludes::none(),
    )
    .map_err(HookError::Snapshot)?;
    Ok(Baseline { head, snapshot })
}

/// The prompt without the opt-in prefix (for the intent).
fn without_prefix<'a>(prompt: &'a str, prefix: &str) -> &'a str {
    let p = prompt.trim_start();
    p.strip_prefix(prefix).unwrap_or(p).trim()
}

/// Run the UserPromptSubmit hook on `stdin`; what to print (`None` = nothing).
pub fn prompt(stdin: &[u8], env: &HookEnv) -> Option<Value> {
    if env.disabled {
        return None;
    }
    let input = match input::parse(stdin) {
        Ok(i) => i,
        Err(e) => {
            return Some(system_message(&format!(
                "arev: hook prompt did nothing: {e}"
            )))
        }
    };
    let cwd = input.cwd.clone().unwrap_or_else(|| env.cwd.clone());
    let root = find_root(&cwd);
    let base_dir = root.clone().unwrap_or_else(|| cwd.clone());
    let config = match load_config(&base_dir) {
        Ok(c) => c,
        Err(e) => return Some(system_message(&format!("arev: review not enabled: {e}"))),
    };
    if config.hook.mode == HookMode::Off {
        return None;
    }
    let text = input.prompt.as_deref().unwrap_or("");
    let store = SessionStore::new(&base_dir, &input.session_id);
    // A linked `.arev` (a repository can commit one) would put the session elsewhere.
    if let Err(e) = crate::store::check_real_dirs(&base_dir, &store.dir) {
        return Some(system_message(&format!("arev: review not enabled: {e}")));
    }
    if is_generated(text) {
        // Not the user: no opt-in, no new chain, not intent. Logged only where a session
        // dir already exists (nothing is created for a session that never opted in).
        if store.dir.is_dir() {
            store.log(&json!({"at": now(), "event": "prompt", "action": "ignored:generated"}));
        }
        return None;
    }
    let command = parse_prompt(text, &config.hook.prefix);
    let (state, corrupt) = match store.load() {
        Ok(s) => (s, None),
        Err(e) => (None, Some(e.to_string())),
    };
    let enable = command == PromptCommand::Enable
        || (config.hook.mode == HookMode::Always
            && state.is_none()
            && command == PromptCommand::None);
    let p = Prompted {
        text,
        session_id: &input.session_id,
        config: &config,
        store: &store,
    };
    if enable {
        return p.enable(command, root.as_deref(), &cwd, state.as_ref(), corrupt);
    }
    if command == PromptCommand::Disable {
        return p.disable(state);
    }
    if let Some(c) = corrupt {
        return Some(system_message(&format!(
            "arev: {c}; review is off for this session until a prompt starts with {}",
            config.hook.prefix
        )));
    }
    // A new human prompt in a reviewed session: a new chain (the circuit breakers restart),
    // and one more request the changes are meant to carry out.
    match state.filter(|s| s.enabled) {
        Some(s) => p.new_chain(s),
        None => None,
    }
}

/// A prompt of the user in a session, with the session's configuration and store.
struct Prompted<'a> {
    text: &'a str,
    session_id: &'a str,
    config: &'a Settings,
    store: &'a SessionStore,
}

impl Prompted<'_> {
    fn log(&self, what: &str) {
        self.store
            .log(&json!({"at": now(), "event": "prompt", "action": what}));
    }

    /// Turn review on (`#arev …`, or mode `always` on a session's first prompt): record the
    /// baseline, keep the record of an earlier chain, start the intent with this prompt.
    fn enable(
        &self,
        command: PromptCommand,
        root: Option<&Path>,
        cwd: &Path,
        state: Option<&SessionState>,
        corrupt: Option<String>,
    ) -> Option<Value> {
        let text = self.text;
        let Some(root) = root else {
            return Some(system_message(&format!(
                "arev: review not enabled: {} is not inside a git repository",
                cwd.display()
            )));
        };
        let base = match baseline(root) {
            Ok(b) => b,
            Err(e) => return Some(system_message(&format!("arev: review not enabled: {e}"))),
        };
        let by = if command == PromptCommand::Enable {
            "prefix"
        } else {
            "always"
        };
        let mut s = base.state(self.session_id, by);
        // Re-enabling keeps the record of what was already handed to the human.
        if let Some(old) = state {
            s.chain = old.chain.after_prompt();
        }
        let saved = self
            .store
            .save(&s)
            .and_then(|()| self.store.reset_prompts())
            .and_then(|()| {
                self.store.record_prompt(
                    without_prefix(text, &self.config.hook.prefix),
                    PROMPT_MAX_BYTES,
                )
            });
        if let Err(e) = saved {
            return Some(system_message(&format!(
                "arev: review not enabled: cannot write under {}: {e}",
                self.store.dir.display()
            )));
        }
        self.log(&format!("enable:{by}"));
        if command != PromptCommand::Enable {
            return corrupt
                .map(|c| system_message(&format!("arev: {c}; a new baseline was recorded")));
        }
        let mut msg = "arev: review is on for this session — when the agent stops, arev reviews \
                       the changes it makes from now on (uncommitted work from before is not \
                       reviewed)"
            .to_string();
        if let Some(c) = corrupt {
            msg.push_str(&format!(" ({c})"));
        }
        Some(json!({
            "systemMessage": msg,
            "hookSpecificOutput": {
                "hookEventName": "UserPromptSubmit",
                "additionalContext":
                    "arev review is on for this session: when you stop, arev reviews the changes \
                     you made since this prompt (a snapshot of the working tree was taken now, \
                     untracked files included; earlier uncommitted work is not reviewed), \
                     against the user's requests. Confirmed medium/high findings come back as \
                     Stop hook feedback with edit instructions; fix them, or explain in your \
                     reply why a finding is wrong. Stopping again without changing anything \
                     hands the decision to the user.",
            }
        }))
    }

    /// `#arev off`: review off for the session.
    fn disable(&self, state: Option<SessionState>) -> Option<Value> {
        if let Some(mut s) = state {
            s.enabled = false;
            s.updated_at = now();
            if let Err(e) = self.store.save(&s) {
                return Some(system_message(&format!(
                    "arev: could not turn review off: cannot write {}: {e}",
                    self.store.state_path().display()
                )));
            }
        }
        self.log("disable");
        Some(system_message("arev: review is off for this session"))
    }

    /// A new human prompt in a reviewed session: a new chain, and the prompt joins the intent.
    fn new_chain(&self, mut s: SessionState) -> Option<Value> {
        let text = self.text;
        s.chain = s.chain.after_prompt();
        s.updated_at = now();
        let saved = self
            .store
            .save(&s)
            .and_then(|()| self.store.record_prompt(text, PROMPT_MAX_BYTES));
        if let Err(e) = saved {
            return Some(system_message(&format!(
                "arev: cannot write under {}: {e}",
                self.store.dir.display()
            )));
        }
        self.log("new_chain");
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_must_be_a_whole_word_at_the_start() {
        assert_eq!(parse_prompt("#arev fix it", "#arev"), PromptCommand::Enable);
        assert_eq!(parse_prompt("  #arev", "#arev"), PromptCommand::Enable);
        assert_eq!(parse_prompt("#arev off", "#arev"), PromptCommand::Disable);
        assert_eq!(
            parse_prompt("#arev OFF now", "#arev"),
            PromptCommand::Disable
        );
        assert_eq!(
            parse_prompt("#arev offload the cache", "#arev"),
            PromptCommand::Enable
        );
        assert_eq!(parse_prompt("#arevx do", "#arev"), PromptCommand::None);
        assert_eq!(parse_prompt("please #arev", "#arev"), PromptCommand::None);
        assert_eq!(parse_prompt("", "#arev"), PromptCommand::None);
    }

    #[test]
    fn prompts_claude_code_writes_itself_are_recognised() {
        // Verbatim shape of the UserPromptSubmit prompt for a finished background task
        // (Claude Code 2.1.330).
        let notification = "<task-notification>\n<task-id>b1lnv88yn</task-id>\n\
            <tool-use-id>toolu_1</tool-use-id>\n<output-file>/tmp/x.output</output-file>\n\
            <status>completed</status>\n<summary>Background command \"bg\" completed \
            (exit code 0)</summary>\n</task-notification>";
        assert!(is_generated(notification));
        assert!(is_generated("  <system-reminder>x</system-reminder>"));
        assert!(is_generated(
            "Stop hook feedback:\narev reviewed your changes"
        ));
        assert!(!is_generated("#arev add an adder"));
        assert!(!is_generated("please look at <task-notification> handling"));
        assert_eq!(without_prefix("  #arev add it ", "#arev"), "add it");
        assert_eq!(without_prefix("go on", "#arev"), "go on");
    }
}
