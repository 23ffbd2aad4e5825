//! `arev hook prompt` (UserPromptSubmit): `#arev …` enables review for the session and
//! records the baseline (HEAD and the diff sha now); `#arev off` turns it off; any other
//! prompt in a reviewed session starts a new block chain. Mode `always` records a baseline
//! on a session's first prompt. Fails open with a `systemMessage`.

use super::env::{load_config, HookEnv};
use super::input;
use super::message::system_message;
use super::state::{find_root, now, SessionState, SessionStore};
use crate::config::{Config, HookMode};
use serde_json::{json, Value};
use std::path::Path;

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

/// HEAD (None on an unborn branch) and the diff sha against it, for `root`.
fn baseline(root: &Path, config: &Config) -> Result<(Option<String>, String), String> {
    let repo = git2::Repository::open(root).map_err(|e| {
        format!(
            "cannot open the repository at {}: {}",
            root.display(),
            e.message()
        )
    })?;
    let head = repo
        .head()
        .ok()
        .and_then(|h| h.peel_to_commit().ok())
        .map(|c| c.id().to_string());
    // The same excludes and size cap as the Stop hook's review, so the shas compare.
    let excludes =
        crate::target::Excludes::new(config.review.exclude.clone(), config.review.skip_lockfiles);
    let sha = crate::target::diff_sha_capped(
        root,
        head.as_deref(),
        config.review.max_file_bytes,
        &excludes,
    )
    .map_err(|e| e.to_string())?;
    if let Err(e) = crate::store::add_git_exclude(repo.commondir()) {
        return Err(format!("cannot add .arev/ to .git/info/exclude: {e}"));
    }
    Ok((head, sha))
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
    let command = parse_prompt(text, &config.hook.prefix);
    let store = SessionStore::new(&base_dir, &input.session_id);
    let (state, corrupt) = match store.load() {
        Ok(s) => (s, None),
        Err(e) => (None, Some(e.to_string())),
    };
    let log = |what: &str| {
        store.log(&json!({"at": now(), "event": "prompt", "action": what}));
    };
    let enable = command == PromptCommand::Enable
        || (config.hook.mode == HookMode::Always
            && state.is_none()
            && command == PromptCommand::None);
    if enable {
        let Some(root) = root else {
            return Some(system_message(&format!(
                "arev: review not enabled: {} is not inside a git repository",
                cwd.display()
            )));
        };
        let (head, sha) = match baseline(&root, &config) {
            Ok(b) => b,
            Err(e) => return Some(system_message(&format!("arev: review not enabled: {e}"))),
        };
        let by = if command == PromptCommand::Enable {
            "prefix"
        } else {
            "always"
        };
        let mut s = SessionState::new(&input.session_id, by, head.clone(), Some(sha));
        // Re-enabling keeps the record of what was already handed to the human.
        if let Some(old) = &state {
            s.chain = old.chain.after_prompt();
        }
        if let Err(e) = store.save(&s) {
            return Some(system_message(&format!(
                "arev: review not enabled: cannot write {}: {e}",
                store.state_path().display()
            )));
        }
        log(&format!("enable:{by}"));
        if command != PromptCommand::Enable {
            return corrupt
                .map(|c| system_message(&format!("arev: {c}; a new baseline was recorded")));
        }
        let short = head.as_deref().map_or("an unborn branch".to_string(), |h| {
            h[..h.len().min(12)].to_string()
        });
        let mut msg = format!(
            "arev: review is on for this session — when the agent stops, arev reviews its changes since {short} (untracked files included)"
        );
        if let Some(c) = corrupt {
            msg.push_str(&format!(" ({c})"));
        }
        return Some(json!({
            "systemMessage": msg,
            "hookSpecificOutput": {
                "hookEventName": "UserPromptSubmit",
                "additionalContext": format!(
                    "arev review is on for this session: when you stop, arev reviews the changes \
                     made since this prompt (the git diff against {short}, untracked files \
                     included). Confirmed medium/high findings come back as Stop hook feedback \
                     with edit instructions; fix them, or explain in your reply why a finding is \
                     wrong. Stopping again without changing anything hands the decision to the user."
                ),
            }
        }));
    }
    if command == PromptCommand::Disable {
        if let Some(mut s) = state {
            s.enabled = false;
            s.updated_at = now();
            if let Err(e) = store.save(&s) {
                return Some(system_message(&format!(
                    "arev: could not turn review off: cannot write {}: {e}",
                    store.state_path().display()
                )));
            }
        }
        log("disable");
        return Some(system_message("arev: review is off for this session"));
    }
    if let Some(c) = corrupt {
        return Some(system_message(&format!(
            "arev: {c}; review is off for this session until a prompt starts with {}",
            config.hook.prefix
        )));
    }
    // A new human prompt in a reviewed session: a new chain (the circuit breakers restart).
    if let Some(mut s) = state.filter(|s| s.enabled) {
        s.chain = s.chain.after_prompt();
        s.updated_at = now();
        if let Err(e) = store.save(&s) {
            return Some(system_message(&format!(
                "arev: cannot write {}: {e}",
                store.state_path().display()
            )));
        }
        log("new_chain");
    }
    None
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
}
