//! The Stop-hook decision table of docs/architecture.md §14.1 as pure functions: facts →
//! decision, and the session's block chain → its next value. No I/O; `stop.rs` gathers the
//! facts.
//!
//! | row | when (first match wins)                                        | decision |
//! |-----|----------------------------------------------------------------|----------|
//! | 1   | `AREV_DISABLE=1`                                               | silent (exit 0, no output) |
//! | 2   | `[hook] mode = "off"`                                          | silent |
//! | 3   | mode `prefix` and the session never opted in with `#arev`      | silent |
//! | 4   | an internal error while gathering the facts                    | fail open, visibly |
//! | 5   | the diff is the one at the baseline (nothing changed since it) | silent (nothing changed) |
//! | 6   | this diff was already handed over to the human (a blocker, or a review that ran out of time) | silent |
//! | 7   | arev blocked on this very diff and the agent stops again       | blocker: stopped without change |
//! | 8   | `stop_hook_active` and arev already decided on this diff       | silent (honour `stop_hook_active`) |
//! | 9   | no verdict for this diff yet                                   | review (then decide again) |
//! | 10  | the review did not run or produced no verdict                  | fail open, visibly |
//! | 10b | the review ran out of `[hook] timeout` (recorded `interrupted`) | unfinished: let it stop, say so |
//! | 11  | a confirmed `critical`                                         | blocker |
//! | 12  | a confirmed concern already blocked on `max_nudges` times      | blocker: concern still standing |
//! | 13  | a confirmed concern after `max_blocks` blocks in a row         | blocker: circuit breaker |
//! | 14  | confirmed `medium`/`high` concerns                             | block, naming each with its edit instruction |
//! | 15  | otherwise (nothing confirmed, or only `low` asides)            | approve (asides logged) |

use crate::config::HookMode;
use crate::findings::Severity;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One confirmed finding, as much as the hook needs (pointers, not payloads).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FindingBrief {
    /// report.json's stable fingerprint (survives line shifts).
    pub fingerprint: String,
    pub severity: Severity,
    pub file: Option<String>,
    pub line: Option<u32>,
    pub category: String,
    pub description: String,
    pub edit_instruction: Option<String>,
}

/// The verdict of one completed review of one diff sha (cached under the session dir).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Verdict {
    /// TARGET_SHA of the reviewed diff.
    pub sha: String,
    pub run_id: String,
    /// Absolute path of the run's report.md.
    pub report: String,
    /// Confirmed `critical` findings: blockers.
    pub critical: Vec<FindingBrief>,
    /// Confirmed `high`/`medium` findings: concerns.
    pub concerns: Vec<FindingBrief>,
    /// Confirmed `low` findings: asides (logged only).
    pub asides: Vec<FindingBrief>,
}

/// What the review of the current diff came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReviewOutcome {
    Reviewed(Verdict),
    /// The review did not run or did not produce a verdict; why.
    Failed(String),
    /// The review ran out of time and was stopped (its run dir says `interrupted`); why.
    Unfinished(String),
}

/// Why the hook stays silent (exit 0, no output).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SilentWhy {
    Disabled,
    Off,
    NotEnabled,
    NoChange,
    HandedOver,
    NothingNew,
}

/// Why a blocker ends the agent's turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockerWhy {
    Critical,
    StoppedWithoutChange,
    ConcernStanding,
    MaxBlocks,
}

impl Decision {
    /// Name in the session log, e.g. `block`, `blocker:max_blocks`, `silent:no_change`.
    pub fn log_name(&self) -> &'static str {
        match self {
            Self::Silent(SilentWhy::Disabled) => "silent:disabled",
            Self::Silent(SilentWhy::Off) => "silent:off",
            Self::Silent(SilentWhy::NotEnabled) => "silent:not_enabled",
            Self::Silent(SilentWhy::NoChange) => "silent:no_change",
            Self::Silent(SilentWhy::HandedOver) => "silent:handed_over",
            Self::Silent(SilentWhy::NothingNew) => "silent:nothing_new",
            Self::Review => "review",
            Self::Approve => "approve",
            Self::FailOpen(_) => "fail_open",
            Self::Unfinished(_) => "unfinished",
            Self::Block(_) => "block",
            Self::Blocker {
                why: BlockerWhy::Critical,
                ..
            } => "blocker:critical",
            Self::Blocker {
                why: BlockerWhy::StoppedWithoutChange,
                ..
            } => "blocker:stopped_without_change",
            Self::Blocker {
                why: BlockerWhy::ConcernStanding,
                ..
            } => "blocker:concern_standing",
            Self::Blocker {
                why: BlockerWhy::MaxBlocks,
                ..
            } => "blocker:max_blocks",
        }
    }
}

/// The decision of one Stop-hook invocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Silent(SilentWhy),
    /// No verdict yet: review the diff, then decide again with `review` set.
    Review,
    /// Let the agent stop; the review found nothing above `low`.
    Approve,
    /// Let the agent stop, and tell the human the review did not run and why.
    FailOpen(String),
    /// Let the agent stop, and tell the human the review did not finish in time and where
    /// its run dir is; the diff is not reviewed again (handed over).
    Unfinished(String),
    /// `{"decision":"block"}`: the agent must address these concerns first.
    Block(Vec<FindingBrief>),
    /// `{"continue":false}`: end the turn and hand over to the human.
    Blocker {
        why: BlockerWhy,
        findings: Vec<FindingBrief>,
    },
}

/// The session's block chain: what arev decided before, per session.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Chain {
    /// Blocks in a row since the last approve, blocker or human prompt.
    pub consecutive_blocks: u32,
    /// Blocks per concern fingerprint in this chain.
    pub nudges: BTreeMap<String, u32>,
    /// The diff sha arev last blocked on (cleared by a human prompt).
    pub last_blocked_sha: Option<String>,
    /// The diff sha of arev's last decision (cleared by a human prompt).
    pub last_decided_sha: Option<String>,
    /// A diff sha already handed to the human, by a blocker or a review that ran out of
    /// time (kept across prompts).
    pub handed_over_sha: Option<String>,
}

impl Chain {
    /// A new human prompt starts a new chain (the hand-over record stays: it is bound to a sha).
    pub fn after_prompt(&self) -> Chain {
        Chain {
            handed_over_sha: self.handed_over_sha.clone(),
            ..Chain::default()
        }
    }

    fn reset_blocks(&mut self) {
        self.consecutive_blocks = 0;
        self.nudges.clear();
        self.last_blocked_sha = None;
    }
}

/// Everything the decision depends on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StopFacts {
    pub disabled_env: bool,
    pub mode: HookMode,
    /// The session opted in (`#arev`) and did not opt out again.
    pub session_enabled: bool,
    /// An internal error while gathering the facts below.
    pub error: Option<String>,
    pub stop_hook_active: bool,
    /// TARGET_SHA of the session's diff now.
    pub sha: String,
    /// TARGET_SHA of the diff when review was enabled (None: not recorded).
    pub baseline_sha: Option<String>,
    pub chain: Chain,
    pub max_nudges: u32,
    pub max_blocks: u32,
    /// The verdict for `sha` (cached or fresh), or why the review failed.
    pub review: Option<ReviewOutcome>,
}

/// The decision table (see the module docs for the rows).
pub fn decide(f: &StopFacts) -> Decision {
    if f.disabled_env {
        return Decision::Silent(SilentWhy::Disabled);
    }
    match f.mode {
        HookMode::Off => return Decision::Silent(SilentWhy::Off),
        HookMode::Prefix if !f.session_enabled => return Decision::Silent(SilentWhy::NotEnabled),
        HookMode::Prefix | HookMode::Always => {}
    }
    if let Some(e) = &f.error {
        return Decision::FailOpen(e.clone());
    }
    let is = |o: &Option<String>| o.as_deref() == Some(f.sha.as_str());
    if is(&f.baseline_sha) {
        return Decision::Silent(SilentWhy::NoChange);
    }
    if is(&f.chain.handed_over_sha) {
        return Decision::Silent(SilentWhy::HandedOver);
    }
    let verdict = match &f.review {
        Some(ReviewOutcome::Reviewed(v)) => Some(v),
        _ => None,
    };
    if is(&f.chain.last_blocked_sha) {
        let findings = verdict
            .map(|v| v.critical.iter().chain(&v.concerns).cloned().collect())
            .unwrap_or_default();
        return Decision::Blocker {
            why: BlockerWhy::StoppedWithoutChange,
            findings,
        };
    }
    if f.stop_hook_active && is(&f.chain.last_decided_sha) {
        return Decision::Silent(SilentWhy::NothingNew);
    }
    let v = match &f.review {
        None => return Decision::Review,
        Some(ReviewOutcome::Failed(why)) => return Decision::FailOpen(why.clone()),
        Some(ReviewOutcome::Unfinished(why)) => return Decision::Unfinished(why.clone()),
        Some(ReviewOutcome::Reviewed(v)) => v,
    };
    if !v.critical.is_empty() {
        return Decision::Blocker {
            why: BlockerWhy::Critical,
            findings: v.critical.iter().chain(&v.concerns).cloned().collect(),
        };
    }
    if v.concerns.is_empty() {
        return Decision::Approve;
    }
    let standing = v
        .concerns
        .iter()
        .any(|c| f.chain.nudges.get(&c.fingerprint).copied().unwrap_or(0) >= f.max_nudges);
    if standing {
        return Decision::Blocker {
            why: BlockerWhy::ConcernStanding,
            findings: v.concerns.clone(),
        };
    }
    if f.chain.consecutive_blocks >= f.max_blocks {
        return Decision::Blocker {
            why: BlockerWhy::MaxBlocks,
            findings: v.concerns.clone(),
        };
    }
    Decision::Block(v.concerns.clone())
}

/// The chain after `decision` on the diff `sha`.
pub fn advance(chain: &Chain, sha: &str, decision: &Decision) -> Chain {
    let mut next = chain.clone();
    match decision {
        Decision::Silent(
            SilentWhy::Disabled | SilentWhy::Off | SilentWhy::NotEnabled | SilentWhy::NothingNew,
        )
        | Decision::Review => return next,
        Decision::Silent(SilentWhy::NoChange) | Decision::Approve => next.reset_blocks(),
        Decision::Silent(SilentWhy::HandedOver) | Decision::FailOpen(_) => {}
        Decision::Block(concerns) => {
            next.consecutive_blocks += 1;
            for c in concerns {
                *next.nudges.entry(c.fingerprint.clone()).or_insert(0) += 1;
            }
            next.last_blocked_sha = Some(sha.to_string());
        }
        Decision::Blocker { .. } | Decision::Unfinished(_) => {
            next.reset_blocks();
            next.handed_over_sha = Some(sha.to_string());
        }
    }
    next.last_decided_sha = Some(sha.to_string());
    next
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brief(fp: &str, sev: Severity) -> FindingBrief {
        FindingBrief {
            fingerprint: fp.into(),
            severity: sev,
            file: Some("src/a.rs".into()),
            line: Some(2),
            category: "error-handling".into(),
            description: "d".into(),
            edit_instruction: Some("e".into()),
        }
    }

    fn verdict(critical: &[&str], concerns: &[&str], asides: &[&str]) -> ReviewOutcome {
        let mk = |ids: &[&str], s| ids.iter().map(|i| brief(i, s)).collect();
        ReviewOutcome::Reviewed(Verdict {
            sha: "S".into(),
            run_id: "r".into(),
            report: "/r/report.md".into(),
            critical: mk(critical, Severity::Critical),
            concerns: mk(concerns, Severity::High),
            asides: mk(asides, Severity::Low),
        })
    }

    /// An enabled session, diff changed since the baseline, no history, no verdict yet.
    fn facts() -> StopFacts {
        StopFacts {
            disabled_env: false,
            mode: HookMode::Prefix,
            session_enabled: true,
            error: None,
            stop_hook_active: false,
            sha: "S".into(),
            baseline_sha: Some("B".into()),
            chain: Chain::default(),
            max_nudges: 3,
            max_blocks: 5,
            review: None,
        }
    }

    #[test]
    fn row1_arev_disable_is_silent_whatever_else() {
        let f = StopFacts {
            disabled_env: true,
            mode: HookMode::Always,
            review: Some(verdict(&["c"], &[], &[])),
            ..facts()
        };
        assert_eq!(decide(&f), Decision::Silent(SilentWhy::Disabled));
    }

    #[test]
    fn row2_mode_off_is_silent() {
        let f = StopFacts {
            mode: HookMode::Off,
            ..facts()
        };
        assert_eq!(decide(&f), Decision::Silent(SilentWhy::Off));
    }

    #[test]
    fn row3_prefix_mode_without_opt_in_is_silent_but_always_mode_reviews() {
        let f = StopFacts {
            session_enabled: false,
            ..facts()
        };
        assert_eq!(decide(&f), Decision::Silent(SilentWhy::NotEnabled));
        let f = StopFacts {
            mode: HookMode::Always,
            ..f
        };
        assert_eq!(decide(&f), Decision::Review);
    }

    #[test]
    fn row4_internal_error_fails_open() {
        let f = StopFacts {
            error: Some("state is corrupt".into()),
            ..facts()
        };
        assert_eq!(decide(&f), Decision::FailOpen("state is corrupt".into()));
    }

    #[test]
    fn row5_unchanged_since_baseline_is_silent() {
        let f = StopFacts {
            baseline_sha: Some("S".into()),
            ..facts()
        };
        assert_eq!(decide(&f), Decision::Silent(SilentWhy::NoChange));
    }

    #[test]
    fn row6_diff_already_handed_over_is_silent() {
        let mut f = facts();
        f.chain.handed_over_sha = Some("S".into());
        f.review = Some(verdict(&["c"], &[], &[]));
        assert_eq!(decide(&f), Decision::Silent(SilentWhy::HandedOver));
    }

    #[test]
    fn row7_stopping_again_without_change_after_a_block_is_a_blocker() {
        let mut f = facts();
        f.stop_hook_active = true;
        f.chain.last_blocked_sha = Some("S".into());
        f.chain.last_decided_sha = Some("S".into());
        f.chain.consecutive_blocks = 1;
        f.review = Some(verdict(&[], &["x"], &["a"]));
        assert_eq!(
            decide(&f),
            Decision::Blocker {
                why: BlockerWhy::StoppedWithoutChange,
                findings: vec![brief("x", Severity::High)]
            }
        );
    }

    #[test]
    fn row8_stop_hook_active_on_an_already_decided_diff_is_silent() {
        let mut f = facts();
        f.stop_hook_active = true;
        f.chain.last_decided_sha = Some("S".into());
        assert_eq!(decide(&f), Decision::Silent(SilentWhy::NothingNew));
        // Without stop_hook_active the cached verdict is used as usual.
        f.stop_hook_active = false;
        assert_eq!(decide(&f), Decision::Review);
    }

    #[test]
    fn row9_no_verdict_means_review() {
        assert_eq!(decide(&facts()), Decision::Review);
        // Also with stop_hook_active when the diff changed since the last decision.
        let mut f = facts();
        f.stop_hook_active = true;
        f.chain.last_decided_sha = Some("OLD".into());
        f.chain.last_blocked_sha = Some("OLD".into());
        assert_eq!(decide(&f), Decision::Review);
    }

    #[test]
    fn row10_failed_review_fails_open() {
        let f = StopFacts {
            review: Some(ReviewOutcome::Failed("claude not found".into())),
            ..facts()
        };
        assert_eq!(decide(&f), Decision::FailOpen("claude not found".into()));
    }

    #[test]
    fn row10b_a_review_out_of_time_is_unfinished_and_not_retried() {
        let f = StopFacts {
            review: Some(ReviewOutcome::Unfinished("out of time".into())),
            ..facts()
        };
        let d = decide(&f);
        assert_eq!(d, Decision::Unfinished("out of time".into()));
        let chain = advance(&f.chain, "S", &d);
        assert_eq!(chain.handed_over_sha.as_deref(), Some("S"));
        // The next stop on the same diff, even after a human prompt, stays silent.
        let again = StopFacts {
            chain: chain.after_prompt(),
            review: None,
            ..facts()
        };
        assert_eq!(decide(&again), Decision::Silent(SilentWhy::HandedOver));
    }

    #[test]
    fn row11_critical_is_a_blocker_even_on_the_first_stop() {
        let f = StopFacts {
            review: Some(verdict(&["c"], &["x"], &[])),
            ..facts()
        };
        assert_eq!(
            decide(&f),
            Decision::Blocker {
                why: BlockerWhy::Critical,
                findings: vec![brief("c", Severity::Critical), brief("x", Severity::High)]
            }
        );
    }

    #[test]
    fn row12_concern_standing_after_max_nudges_is_a_blocker() {
        let mut f = facts();
        f.review = Some(verdict(&[], &["x", "y"], &[]));
        f.chain.nudges.insert("x".into(), 2);
        f.chain.consecutive_blocks = 2;
        assert_eq!(
            decide(&f),
            Decision::Block(vec![brief("x", Severity::High), brief("y", Severity::High)])
        );
        f.chain.nudges.insert("x".into(), 3);
        assert!(matches!(
            decide(&f),
            Decision::Blocker {
                why: BlockerWhy::ConcernStanding,
                ..
            }
        ));
    }

    #[test]
    fn row13_never_more_than_max_blocks_in_a_row() {
        let mut f = facts();
        f.review = Some(verdict(&[], &["new"], &[]));
        f.chain.consecutive_blocks = 5;
        assert!(matches!(
            decide(&f),
            Decision::Blocker {
                why: BlockerWhy::MaxBlocks,
                ..
            }
        ));
        f.chain.consecutive_blocks = 4;
        assert!(matches!(decide(&f), Decision::Block(_)));
    }

    #[test]
    fn row14_concerns_block_with_the_findings() {
        let f = StopFacts {
            review: Some(verdict(&[], &["x"], &["a"])),
            ..facts()
        };
        assert_eq!(
            decide(&f),
            Decision::Block(vec![brief("x", Severity::High)])
        );
    }

    #[test]
    fn row15_asides_only_or_clean_approves() {
        let f = StopFacts {
            review: Some(verdict(&[], &[], &["a"])),
            ..facts()
        };
        assert_eq!(decide(&f), Decision::Approve);
        let f = StopFacts {
            review: Some(verdict(&[], &[], &[])),
            baseline_sha: None,
            ..facts()
        };
        assert_eq!(decide(&f), Decision::Approve);
    }

    #[test]
    fn a_concern_loop_ends_in_a_hand_over_after_max_nudges() {
        // The agent keeps changing the diff but the same concern stays: 3 blocks, then a
        // blocker; never an endless loop.
        let mut chain = Chain::default();
        let mut decisions = vec![];
        for i in 0..6 {
            let sha = format!("S{i}");
            let f = StopFacts {
                sha: sha.clone(),
                stop_hook_active: i > 0,
                chain: chain.clone(),
                review: Some(verdict(&[], &["x"], &[])),
                ..facts()
            };
            let d = decide(&f);
            chain = advance(&chain, &sha, &d);
            let end = matches!(d, Decision::Blocker { .. });
            decisions.push(d);
            if end {
                break;
            }
        }
        assert_eq!(decisions.len(), 4, "{decisions:?}");
        assert!(decisions[..3]
            .iter()
            .all(|d| matches!(d, Decision::Block(_))));
        assert_eq!(chain.handed_over_sha.as_deref(), Some("S3"));
        assert_eq!(chain.consecutive_blocks, 0);
    }

    #[test]
    fn advance_tracks_blocks_and_resets() {
        let c = Chain::default();
        let block = Decision::Block(vec![brief("x", Severity::High)]);
        let c1 = advance(&c, "S1", &block);
        assert_eq!(c1.consecutive_blocks, 1);
        assert_eq!(c1.nudges.get("x"), Some(&1));
        assert_eq!(c1.last_blocked_sha.as_deref(), Some("S1"));
        let c2 = advance(&c1, "S2", &Decision::Approve);
        assert_eq!(c2.consecutive_blocks, 0);
        assert!(c2.nudges.is_empty() && c2.last_blocked_sha.is_none());
        assert_eq!(c2.last_decided_sha.as_deref(), Some("S2"));
        let c3 = advance(&c1, "S1", &Decision::FailOpen("x".into()));
        assert_eq!(
            c3.consecutive_blocks, 1,
            "a failed review does not reset the chain"
        );
        let c4 = advance(
            &c1,
            "S1",
            &Decision::Blocker {
                why: BlockerWhy::StoppedWithoutChange,
                findings: vec![],
            },
        );
        assert_eq!(c4.handed_over_sha.as_deref(), Some("S1"));
        let p = c4.after_prompt();
        assert_eq!(p.handed_over_sha.as_deref(), Some("S1"));
        assert!(p.last_decided_sha.is_none());
        assert_eq!(advance(&c1, "S9", &Decision::Review), c1);
    }
}
