//! `arev hook stop`: gather the facts (cheapest first), run the decision table, review when
//! it asks for a verdict, persist the chain, and return what to print. Fails open.

use super::decide::{advance, decide, Decision, ReviewOutcome, SilentWhy, StopFacts};
use super::env::{load_config, HookEnv};
use super::input;
use super::message::stop_output;
use super::review::{review_shared, ReviewRequest};
use super::state::{find_root, now, SessionState, SessionStore};
use crate::config::{Config, HookMode};
use serde_json::{json, Value};

/// Facts for the rows that need no git work (1–4), with the decision they lead to.
fn cheap_facts(mode: HookMode, enabled: bool, error: Option<String>) -> StopFacts {
    StopFacts {
        disabled_env: false,
        mode,
        session_enabled: enabled,
        error,
        stop_hook_active: false,
        sha: String::new(),
        baseline_sha: None,
        chain: Default::default(),
        max_nudges: 1,
        max_blocks: 1,
        review: None,
    }
}

fn fail_open(why: String) -> (Decision, Option<Value>) {
    let d = Decision::FailOpen(why);
    let out = stop_output(&d, None, false, 0, 0);
    (d, out)
}

/// Run the Stop hook on `stdin`; the decision (for tests and the log) and what to print.
pub fn stop(stdin: &[u8], env: &HookEnv) -> (Decision, Option<Value>) {
    if env.disabled {
        return (Decision::Silent(SilentWhy::Disabled), None);
    }
    let input = match input::parse(stdin) {
        Ok(i) => i,
        Err(e) => return fail_open(e),
    };
    let cwd = input.cwd.clone().unwrap_or_else(|| env.cwd.clone());
    let root = find_root(&cwd);
    let base_dir = root.clone().unwrap_or_else(|| cwd.clone());
    let config = match load_config(&base_dir) {
        Ok(c) => c,
        Err(e) => return fail_open(e),
    };
    let store = SessionStore::new(&base_dir, &input.session_id);
    let (state, load_error) = match store.load() {
        Ok(s) => (s, None),
        Err(e) => (
            None,
            Some(format!(
                "{e}; review is off for this session until a prompt starts with {}",
                config.hook.prefix
            )),
        ),
    };
    // Rows 1–4 without touching git: the not-enabled path ends here.
    let enabled = state.as_ref().is_some_and(|s| s.enabled) || load_error.is_some();
    let pre = decide(&cheap_facts(config.hook.mode, enabled, load_error.clone()));
    if !matches!(pre, Decision::Review) {
        let out = stop_output(&pre, None, false, 0, 0);
        if matches!(pre, Decision::FailOpen(_)) {
            store.log(
                &json!({"at": now(), "event": "stop", "decision": "fail_open", "why": load_error}),
            );
        }
        return (pre, out);
    }
    let Some(root) = root else {
        return fail_open(format!("{} is not inside a git repository", cwd.display()));
    };
    let base = state.as_ref().and_then(|s| s.baseline_head.clone());
    // Keyed first (docs/architecture.md §5.1): the diff is rendered only when the working
    // tree moved since a Stop that stored its key.
    let sha = match crate::target::diff_sha_cached(
        &root,
        base.as_deref(),
        crate::target::DEFAULT_MAX_FILE_BYTES,
        &store.dir.join("diffkey.json"),
    ) {
        Ok(s) => s,
        Err(e) => return fail_open(format!("cannot compute the session's diff: {e}")),
    };
    let chain = state.as_ref().map(|s| s.chain.clone()).unwrap_or_default();
    let mut facts = StopFacts {
        disabled_env: false,
        mode: config.hook.mode,
        session_enabled: enabled,
        error: None,
        stop_hook_active: input.stop_hook_active,
        sha: sha.clone(),
        baseline_sha: state.as_ref().and_then(|s| s.baseline_sha.clone()),
        chain: chain.clone(),
        max_nudges: config.hook.max_nudges,
        max_blocks: config.hook.max_blocks,
        review: store.load_verdict(&sha).map(ReviewOutcome::Reviewed),
    };
    let mut decision = decide(&facts);
    let mut fresh = false;
    if decision == Decision::Review {
        let req = match review_request(&root, base, &config) {
            Ok(r) => r,
            Err(e) => return fail_open(e),
        };
        let outcome = review_shared(&store, &sha, &req);
        if let ReviewOutcome::Reviewed(v) = &outcome {
            // Cached under the sha that was pinned: that diff is never reviewed again.
            let _ = store.save_verdict(v);
        }
        facts.review = Some(outcome);
        decision = decide(&facts);
        fresh = true;
    }
    let verdict = match &facts.review {
        Some(ReviewOutcome::Reviewed(v)) => Some(v.clone()),
        _ => None,
    };
    let next_chain = advance(&chain, &sha, &decision);
    let mut next_state =
        state.unwrap_or_else(|| SessionState::new(&input.session_id, "always", None, None));
    next_state.chain = next_chain;
    next_state.updated_at = now();
    if let Err(e) = store.save(&next_state) {
        // Without the chain on disk the circuit breakers cannot count: never block blind.
        let why = format!("cannot write {}: {e}", store.state_path().display());
        return fail_open(why);
    }
    store.log(&json!({
        "at": now(),
        "event": "stop",
        "stop_hook_active": input.stop_hook_active,
        "sha": sha,
        "decision": decision.log_name(),
        "reviewed_now": fresh,
        "run_id": verdict.as_ref().map(|v| v.run_id.clone()),
        "why": match &decision { Decision::FailOpen(w) => Some(w.clone()), _ => None },
        "asides": verdict.as_ref().map(|v| v.asides.clone()).unwrap_or_default(),
        "concerns": verdict.as_ref().map(|v| v.concerns.len()).unwrap_or(0),
        "critical": verdict.as_ref().map(|v| v.critical.len()).unwrap_or(0),
    }));
    let out = stop_output(
        &decision,
        verdict.as_ref(),
        fresh,
        config.hook.max_nudges,
        config.hook.max_blocks,
    );
    (decision, out)
}

fn review_request(
    root: &std::path::Path,
    base: Option<String>,
    config: &Config,
) -> Result<ReviewRequest, String> {
    let exe =
        std::env::current_exe().map_err(|e| format!("cannot locate the arev executable ({e})"))?;
    Ok(ReviewRequest {
        exe,
        root: root.to_path_buf(),
        base,
        timeout: config.hook_timeout().map_err(|e| e.to_string())?,
        grace: config.grace().map_err(|e| e.to_string())?,
    })
}
