//! The `iterate` section of report.json: the outer loop's stop reason and every iteration's
//! confirmed findings, fix, reverted paths, commit and verify result (wire types).

use super::agent::SkippedFix;
use super::config::FailOn;
use super::evidence::{RunRecord, SandboxMode};
use super::finding::ReportFinding;
use super::round::Action;
use super::stop::{AbortReason, IterateStop, RunStatus, StopReason};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The iterate run: the outer loop of review → fix → commit → verify
/// (docs/architecture.md §13).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IterateReport {
    /// Null when the run was aborted or interrupted.
    pub stop_reason: Option<IterateStop>,
    /// `arev/iterate/<run-id>`; never merged.
    pub branch: String,
    /// Absolute path of the worktree (`<repo>/.arev/worktrees/<run-id>`).
    pub worktree: String,
    /// The commit the branch started from (the user's HEAD).
    pub base_commit: String,
    /// The snapshot commit of the user's uncommitted and untracked changes, if any.
    pub snapshot_commit: Option<String>,
    /// The branch tip at the end.
    pub head_commit: String,
    pub max_iterations: u32,
    /// Confirmed findings at or above this severity are fixed (`--fail-on`).
    pub fix_threshold: FailOn,
    /// `--quality-critical`: every round of every review at opus.
    pub quality_critical: bool,
    /// `--verify CMD`.
    pub verify_command: Option<String>,
    /// `git diff <from> <branch>` as a command line: the fixes alone, from the snapshot
    /// commit (else the base commit) — not the user's own uncommitted work.
    pub diff_command: String,
    /// The same fixes as a patch file in the run dir (`<run dir>/iterate.patch`; apply with
    /// `git apply`); null when the branch holds no fix.
    #[serde(default)]
    pub patch: Option<String>,
    pub iterations: Vec<IterationReport>,
}

/// One iteration: a full review of the worktree, then (unless it stops) a fix.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IterationReport {
    pub iteration: u32,
    /// The review's run dir, relative to the iterate run dir (`iterations/<i>`).
    pub run_dir: String,
    pub review_status: RunStatus,
    pub review_stop_reason: Option<StopReason>,
    pub review_abort_reason: Option<AbortReason>,
    /// TARGET_SHA of the worktree's target for this review.
    pub target_sha256: String,
    /// Every confirmed finding of this review.
    pub confirmed: Vec<ReportFinding>,
    /// The confirmed findings at or above the fix threshold, as numbered for the Fixer.
    pub to_fix: Vec<FixItem>,
    /// Null when the loop stopped before a fix.
    pub fix: Option<FixReport>,
    /// Null without `--verify` or without a commit.
    pub verify: Option<VerifyReport>,
    pub decision: Action,
    pub decision_reasons: Vec<String>,
    pub cost_usd: f64,
    pub tokens: u64,
    /// Of `tokens`, those of a model without a known price, which `cost_usd` leaves out.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unpriced_tokens: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A ruling as sent to the Fixer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FixItem {
    /// The id the Fixer sees (`F1`…), unique within the iteration.
    pub id: String,
    /// The finding's report fingerprint.
    pub fingerprint: String,
    /// The review round and the finding's id in it.
    pub round: u32,
    pub round_finding_id: String,
}

/// What the Fixer did and what arev made of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FixReport {
    /// The Fixer's own account (`applied` ids, `skipped` with reasons).
    pub applied: Vec<String>,
    pub skipped: Vec<SkippedFix>,
    /// `fixer_malformed_json`, `fixer_unknown_id:<id>`, `fixer_write_denied:<path>` (an
    /// Edit/Write outside the worktree that the agent CLI refused), …
    pub errors: Vec<String>,
    /// Paths changed inside ALLOWED_FILES and committed.
    pub changed: Vec<String>,
    /// Paths changed outside ALLOWED_FILES or outside the lines of the rulings (a file no
    /// ruling names, or lines more than 10 from every ruling's), reverted before the commit.
    pub reverted: Vec<RevertedPath>,
    /// The fix commit on the branch (null when nothing changed).
    pub commit: Option<String>,
    /// The Fixer's dispatch dir, relative to the iterate run dir.
    pub dir: String,
    pub cost_usd: f64,
    pub tokens: u64,
    /// Of `tokens`, those of a model without a known price, which `cost_usd` leaves out.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unpriced_tokens: u64,
    /// `--prove`: each applied finding whose reproducer failed before the fix, run again on
    /// the fix commit (docs/prove.md "Iterate"). Absent without `--prove`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub proofs: Vec<FixProof>,
}

/// `--prove`: a fixed finding's reproducer, run again on the fix commit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FixProof {
    /// The id the Fixer saw (`F1`…).
    pub id: String,
    /// The review round and the finding's id in it.
    pub round: u32,
    pub round_finding_id: String,
    /// `fixed`: the reproducer passes on the fix commit; `fix_unproven`: it still fails, or
    /// the run says nothing (timed out, killed, a sandbox or command error).
    pub status: FixProofStatus,
    /// What the reproducer showed in the review (`reproduced` or `preexisting`).
    pub proof_status: super::evidence::ProofStatus,
    /// The Prover's argv and files, as in the review's proof.
    pub command: Vec<String>,
    pub files: Vec<String>,
    /// Where the files are kept, relative to the iterate run dir
    /// (`iterations/<i>/proofs/<finding>/`).
    pub kept_in: String,
    /// The fix commit it ran on.
    pub commit: String,
    /// The run on the fix commit (null when it could not be prepared).
    pub run: Option<RunRecord>,
    pub sandbox: SandboxMode,
    /// Why it is unproven when the run does not say it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// What a reproducer says about a fix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FixProofStatus {
    Fixed,
    FixUnproven,
}

impl FixProofStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Fixed => "fixed",
            Self::FixUnproven => "fix_unproven",
        }
    }
}

/// A change outside ALLOWED_FILES, or outside the lines of the Fixer's rulings, and how it
/// was undone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RevertedPath {
    /// Repository-relative path.
    pub path: String,
    pub action: RevertAction,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RevertAction {
    /// A tracked file, restored from the worktree's HEAD.
    Restored,
    /// A new (untracked) file, deleted.
    Deleted,
    /// A file a ruling names: its changes more than `FIX_CONTEXT_LINES` (10) lines from
    /// every line its rulings name there were restored from the worktree's HEAD, the
    /// changes near them kept.
    OutsideRulings,
}

/// The `--verify` command's result for one fix commit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VerifyReport {
    pub command: String,
    /// Null when it was killed by a signal (or by Ctrl-C).
    pub exit_code: Option<i32>,
    pub ok: bool,
    /// Killed after `[timeouts] verify`.
    #[serde(default)]
    pub timed_out: bool,
    /// stdout and stderr, relative to the iterate run dir (`iterations/<i>/verify.log`).
    pub log: String,
    pub duration_ms: u64,
    /// Changes the command left in the worktree, discarded so the branch only holds
    /// reviewed commits (ignored files such as build output are kept).
    pub discarded: Vec<String>,
}
