//! `arev hook stop`: gather the facts (cheapest first), run the decision table, look the
//! verdict up in the verdict cache when the table needs one (by the snapshot diff's identity
//! and the review's other inputs, the user's prompts as intent among them), review the
//! changes since the session's baseline snapshot on a miss, move the baseline after an
//! approval, persist the chain, and return what to print. Fails open.

use super::decide::{advance, decide, BlockerWhy, Decision, ReviewOutcome, SilentWhy, StopFacts};
use super::env::{load_config, HookEnv};
use super::error::HookError;
use super::input::{self, HookInput};
use super::message::{stop_output, SessionAsides};
use super::review::{cached_verdict, review_shared, ReviewRequest};
use super::state::{find_root, now, SessionState, SessionStore};
use crate::config::{HookMode, Settings};
use serde_json::{json, Value};
use std::path::Path;

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

fn fail_open(why: impl std::fmt::Display) -> (Decision, Option<Value>) {
    let d = Decision::FailOpen(why.to_string());
    let out = stop_output(&d, None, false, 0, 0, &SessionAsides::default());
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
    // A linked `.arev` (a repository can commit one) would put the session elsewhere.
    if let Err(e) = crate::store::check_real_dirs(&base_dir, &store.dir) {
        return fail_open(e);
    }
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
        let out = stop_output(&pre, None, false, 0, 0, &SessionAsides::default());
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
    let Some(state) = state else {
        return no_baseline(&store, &root, &input.session_id);
    };
    let session = Session {
        input: &input,
        config: &config,
        store: &store,
        root: &root,
    };
    match session.stop(state, enabled) {
        Ok(done) => done,
        Err(why) => fail_open(why),
    }
}

/// An enabled session with a baseline, at a Stop.
struct Session<'a> {
    input: &'a HookInput,
    config: &'a Settings,
    store: &'a SessionStore,
    root: &'a Path,
}

impl Session<'_> {
    /// The rows that need the session's changes since its baseline: the decision with the
    /// verdict it needs (cached or reviewed now), the chain advanced, the baseline moved
    /// after an approval, the state saved and the stop logged; `Err`: why to fail open.
    fn stop(
        &self,
        mut state: SessionState,
        enabled: bool,
    ) -> Result<(Decision, Option<Value>), HookError> {
        let config = self.config;
        // The same excludes and size cap as the review it may run, so the verdict cache (keyed
        // by the pinned target's identity) and the baseline compare like for like. Keyed first
        // (docs/architecture.md §14.1): the snapshot is taken and the diff rendered only when
        // the working tree moved since a Stop that stored its key.
        let excludes = crate::target::Excludes::new(
            config.review.exclude.clone(),
            config.review.skip_lockfiles,
        );
        let cached = crate::target::snapshot_diff_cached(
            self.root,
            &state.baseline_tree,
            config.review.max_file_bytes,
            &excludes,
            &self.store.diff_key_path(),
        )
        .map_err(|source| HookError::Changes {
            source,
            prefix: config.hook.prefix.clone(),
        })?;
        let snap = &cached.snapshot;
        let sha = snap.sha.clone();
        let chain = state.chain.clone();
        let facts = StopFacts {
            disabled_env: false,
            mode: config.hook.mode,
            session_enabled: enabled,
            error: None,
            stop_hook_active: self.input.stop_hook_active,
            sha: sha.clone(),
            baseline_sha: state.baseline_sha.clone(),
            chain: chain.clone(),
            max_nudges: config.hook.max_nudges,
            max_blocks: config.hook.max_blocks,
            review: None,
        };
        let (decision, facts, fresh) = self.with_verdict(&state, snap, facts)?;
        let verdict = match &facts.review {
            Some(ReviewOutcome::Reviewed(v)) => Some(v.clone()),
            _ => None,
        };
        state.chain = advance(&chain, &sha, &decision);
        state.updated_at = now();
        let moved = match (&decision, &verdict) {
            // Approved: the next stop reviews only what changes from here (the asides stay).
            (Decision::Approve, Some(v)) if v.sha == sha => {
                self.move_baseline(&mut state, v, &cached, &excludes);
                true
            }
            _ => false,
        };
        // Without the chain on disk the circuit breakers cannot count: never block blind.
        self.store.save(&state).map_err(|source| HookError::Write {
            path: self.store.state_path(),
            source,
        })?;
        let logged = Logged {
            sha: &sha,
            keyed: cached.hit,
            decision: &decision,
            fresh,
            verdict: verdict.as_ref(),
            moved_to: moved.then_some(snap.tree.as_str()),
        };
        self.log(&logged);
        let session = SessionAsides {
            total: state.asides.len(),
            listed_in: self.store.state_path().display().to_string(),
        };
        let out = stop_output(
            &decision,
            verdict.as_ref(),
            fresh,
            config.hook.max_nudges,
            config.hook.max_blocks,
            &session,
        );
        Ok((decision, out))
    }

    /// The rows that use the verdict (a review unless one is cached, and a blocker naming
    /// the findings it stands on) decided again with it: the decision, the facts with the
    /// verdict, and whether the review ran now.
    fn with_verdict(
        &self,
        state: &SessionState,
        snap: &crate::target::Snapshot,
        mut facts: StopFacts,
    ) -> Result<(Decision, StopFacts, bool), HookError> {
        let mut decision = decide(&facts);
        let needs_verdict = matches!(
            decision,
            Decision::Review
                | Decision::Blocker {
                    why: BlockerWhy::StoppedWithoutChange,
                    ..
                }
        );
        if !needs_verdict {
            return Ok((decision, facts, false));
        }
        let req = review_request(self.root, state, self.store, self.config)?;
        let target = snap.identity();
        if let Some(v) = cached_verdict(&req, &target) {
            facts.review = Some(ReviewOutcome::Reviewed(v));
            decision = decide(&facts);
        }
        let mut fresh = false;
        if decision == Decision::Review {
            // The child review stores its verdict in the cache: this diff is not reviewed
            // again with the same inputs.
            facts.review = Some(review_shared(self.store, &target, &req));
            decision = decide(&facts);
            fresh = true;
        }
        Ok((decision, facts, fresh))
    }

    /// After an approval of `v`: the baseline moves to the approved tree (the asides stay),
    /// and the key cache learns that tree's diff from itself is empty.
    fn move_baseline(
        &self,
        state: &mut SessionState,
        v: &super::decide::Verdict,
        cached: &crate::target::CachedSnapshot,
        excludes: &crate::target::Excludes,
    ) {
        let snap = &cached.snapshot;
        state.carry_asides(&v.asides);
        state.baseline_tree = snap.tree.clone();
        state.baseline_at = now();
        state.baseline_sha = Some(crate::target::empty_diff_sha());
        // The tree that was just approved is the diff's new base: from it, that tree's
        // diff is empty, which the next stop finds by the key without a snapshot.
        if let Some(key) = &cached.key {
            let empty = crate::target::Snapshot::empty(&snap.tree);
            crate::target::remember_snapshot(
                &self.store.diff_key_path(),
                &snap.tree,
                self.config.review.max_file_bytes,
                excludes,
                key,
                &empty,
            );
        }
    }

    /// The stop's line in the session log.
    fn log(&self, l: &Logged<'_>) {
        let verdict = l.verdict;
        self.store.log(&json!({
            "at": now(),
            "event": "stop",
            "stop_hook_active": self.input.stop_hook_active,
            "sha": l.sha,
            "diff": if l.keyed { "keyed" } else { "rendered" },
            "decision": l.decision.log_name(),
            "reviewed_now": l.fresh,
            "run_id": verdict.map(|v| v.run_id.clone()),
            "why": match l.decision {
                Decision::FailOpen(w) | Decision::Unfinished(w) => Some(w.clone()),
                _ => None,
            },
            "asides": verdict.map(|v| v.asides.clone()).unwrap_or_default(),
            "concerns": verdict.map(|v| v.concerns.len()).unwrap_or(0),
            "critical": verdict.map(|v| v.critical.len()).unwrap_or(0),
            "baseline_moved_to": l.moved_to,
        }));
    }
}

/// What a stop's log line records.
struct Logged<'a> {
    sha: &'a str,
    /// The diff came from the key cache (not rendered).
    keyed: bool,
    decision: &'a Decision,
    fresh: bool,
    verdict: Option<&'a super::decide::Verdict>,
    moved_to: Option<&'a str>,
}

/// An enabled session without a recorded baseline (mode `always` and the UserPromptSubmit
/// hook did not run): nothing can be told apart from earlier work, so record the baseline
/// now, review nothing, and say so.
fn no_baseline(
    store: &SessionStore,
    root: &std::path::Path,
    session_id: &str,
) -> (Decision, Option<Value>) {
    let base = match super::prompt::baseline(root) {
        Ok(b) => b,
        Err(e) => return fail_open(format!("this session has no baseline, and {e}")),
    };
    let state = base.state(session_id, "always");
    if let Err(e) = store.save(&state) {
        return fail_open(format!(
            "this session has no baseline, and {} cannot be written: {e}",
            store.state_path().display()
        ));
    }
    store.log(&json!({"at": now(), "event": "stop", "decision": "fail_open", "why": "no baseline: recorded one"}));
    fail_open(
        "this session had no baseline (its UserPromptSubmit hook did not run), so its changes \
         cannot be told apart from earlier work; one was recorded now, and the next stop \
         reviews the changes made from here"
            .to_string(),
    )
}

fn review_request(
    root: &std::path::Path,
    state: &SessionState,
    store: &SessionStore,
    config: &Settings,
) -> Result<ReviewRequest, HookError> {
    let exe = std::env::current_exe().map_err(HookError::CurrentExe)?;
    // The user's prompts since review was enabled are what the changes are meant to do.
    let intent = match super::intent::compose(&store.prompts(), crate::resolve::INTENT_MAX_BYTES) {
        Some(text) => {
            let p = store.intent_path();
            // Rewritten (and fsynced) only when it changed: most stops find it as it was.
            if std::fs::read(&p).ok().as_deref() != Some(text.as_bytes()) {
                crate::store::write_atomic(&p, text.as_bytes()).map_err(|source| {
                    HookError::Write {
                        path: p.clone(),
                        source,
                    }
                })?;
            }
            Some(p)
        }
        None => None,
    };
    Ok(ReviewRequest {
        exe,
        root: root.to_path_buf(),
        base_tree: state.baseline_tree.clone(),
        intent,
        timeout: config.hook.timeout,
        grace: config.timeouts.grace,
    })
}
