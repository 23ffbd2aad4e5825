//! The evidence of a proof (docs/prove.md): what arev itself saw when it ran a Prover's
//! reproducer — its status, the command and files, the run on the reviewed content and the
//! run on the base — as a finding of report.json carries it, and the sandbox it ran in.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What the proof of one finding showed (docs/prove.md "Statuses").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProofStatus {
    /// Fails on the reviewed content and passes on the base, or fails where there is no base.
    Reproduced,
    /// Fails on the reviewed content and on the base: the defect predates the change.
    Preexisting,
    /// Passes on the reviewed content.
    NotReproduced,
    /// Timed out, killed, a sandbox or command error (exit 126/127), or unprovable.
    Inconclusive,
    /// Not tried: below the severity threshold, over the count, or no budget left.
    NotAttempted,
}

impl ProofStatus {
    pub const ALL: [ProofStatus; 5] = [
        Self::Reproduced,
        Self::Preexisting,
        Self::NotReproduced,
        Self::Inconclusive,
        Self::NotAttempted,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Reproduced => "reproduced",
            Self::Preexisting => "preexisting",
            Self::NotReproduced => "not_reproduced",
            Self::Inconclusive => "inconclusive",
            Self::NotAttempted => "not_attempted",
        }
    }
}

/// Where a reproducer runs (`[prove] sandbox`, `--prove-sandbox`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SandboxMode {
    /// Under bubblewrap: no network, no secrets, nothing writable but the worktree.
    #[default]
    Bwrap,
    /// Unsandboxed, as the user running arev (user config or flag only; every rendering
    /// says so).
    None,
}

impl SandboxMode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Bwrap => "bwrap",
            Self::None => "none",
        }
    }

    /// Parse `bwrap` | `none`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "bwrap" => Some(Self::Bwrap),
            "none" => Some(Self::None),
            _ => None,
        }
    }
}

/// One run of a reproducer, as arev observed it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunRecord {
    /// The command's exit code; null when it was killed by a signal, timed out, or never ran.
    pub exit: Option<i32>,
    /// The signal that ended it (a sandboxed command's `128 + n` exit is read back as
    /// signal n, as a shell reports it).
    #[serde(default)]
    pub signal: Option<i32>,
    /// It outlived `[timeouts] prove`; its processes were killed.
    #[serde(default)]
    pub timed_out: bool,
    /// Wall-clock time from start to end, sandbox set-up included.
    pub duration_ms: u64,
    /// The last 64 KiB of stdout and stderr as they were interleaved, lossy UTF-8.
    pub output_tail: String,
    /// The sandbox could not be set up (the command did not run): bwrap's message.
    #[serde(default)]
    pub sandbox_error: Option<String>,
}

/// The evidence of one finding's proof (report.json `evidence`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Evidence {
    pub status: ProofStatus,
    /// The Prover's argv, run in the worktree's root.
    #[serde(default)]
    pub command: Vec<String>,
    /// The files the Prover created, relative to the worktree (kept in `proofs/<finding>/`).
    #[serde(default)]
    pub files: Vec<String>,
    /// The run on the reviewed content (null when nothing ran).
    pub head: Option<RunRecord>,
    /// The run on the base content (null without a base, or when it did not run).
    pub base: Option<RunRecord>,
    /// The sandbox the runs used.
    pub sandbox: SandboxMode,
    /// Why the status is what it is, when the runs do not say it (unprovable, not attempted,
    /// a rejected proof, a sandbox error).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The reason of a proof not attempted because its finding is below `[prove] min_severity`
/// (followed by the threshold, `(high)`).
pub const BELOW_MIN_SEVERITY: &str = "below [prove] min_severity";

impl Evidence {
    /// Whether this proof keeps its finding out of the gate under `--require-proof`
    /// (docs/prove.md "Statuses"). Running the reviewed code may raise a finding's standing,
    /// never clear the gate for it: the code can tell it is being run (no network, a fresh
    /// `/proc`, …) and choose to pass, hang or crash, and the reproducer comes from an agent
    /// that read it. So only what the change could not have produced clears: the base — code
    /// the change did not write — failing the same reproducer (`preexisting`: the defect is
    /// older than the change), or no attempt because the finding is below your
    /// `[prove] min_severity`. Everything else gates, `reproduced` first; `not_reproduced`,
    /// `inconclusive` and a proof not attempted for the budget or an interruption (a change
    /// can make its review expensive) included.
    pub fn clears_gate(&self) -> bool {
        match self.status {
            ProofStatus::Preexisting => true,
            ProofStatus::NotAttempted => self
                .reason
                .as_deref()
                .is_some_and(|r| r.starts_with(BELOW_MIN_SEVERITY)),
            ProofStatus::Reproduced | ProofStatus::NotReproduced | ProofStatus::Inconclusive => {
                false
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_serde() {
        for s in ProofStatus::ALL {
            let json = serde_json::to_string(&s).unwrap();
            assert_eq!(json, format!("\"{}\"", s.as_str()));
            assert_eq!(serde_json::from_str::<ProofStatus>(&json).unwrap(), s);
        }
        for m in [SandboxMode::Bwrap, SandboxMode::None] {
            let json = serde_json::to_string(&m).unwrap();
            assert_eq!(json, format!("\"{}\"", m.as_str()));
            assert_eq!(SandboxMode::parse(m.as_str()), Some(m));
        }
        assert_eq!(SandboxMode::parse("docker"), None);
    }

    #[test]
    fn evidence_round_trips() {
        let e = Evidence {
            status: ProofStatus::Reproduced,
            command: vec!["python3".into(), "-m".into(), "unittest".into()],
            files: vec!["test_repro.py".into()],
            head: Some(RunRecord {
                exit: Some(1),
                duration_ms: 120,
                output_tail: "FAILED".into(),
                ..RunRecord::default()
            }),
            base: None,
            sandbox: SandboxMode::Bwrap,
            reason: None,
        };
        let json = serde_json::to_string(&e).unwrap();
        assert!(json.contains("\"base\":null"), "{json}");
        assert_eq!(serde_json::from_str::<Evidence>(&json).unwrap(), e);
    }

    #[test]
    fn only_evidence_the_change_could_not_produce_clears_the_gate() {
        let with = |status, reason: Option<&str>| Evidence {
            status,
            command: vec![],
            files: vec![],
            head: None,
            base: None,
            sandbox: SandboxMode::Bwrap,
            reason: reason.map(str::to_string),
        };
        assert!(with(ProofStatus::Preexisting, None).clears_gate());
        assert!(with(
            ProofStatus::NotAttempted,
            Some("below [prove] min_severity (high)")
        )
        .clears_gate());
        for (s, r) in [
            (ProofStatus::Reproduced, None),
            (ProofStatus::NotReproduced, None),
            (ProofStatus::Inconclusive, Some("unprovable: a race")),
            (ProofStatus::Inconclusive, None),
            (
                ProofStatus::NotAttempted,
                Some("no budget left after the review"),
            ),
            (
                ProofStatus::NotAttempted,
                Some("the budget ran out during the proof phase"),
            ),
            (
                ProofStatus::NotAttempted,
                Some("over [prove] max_findings (5)"),
            ),
            (ProofStatus::NotAttempted, Some("interrupted")),
            (ProofStatus::NotAttempted, None),
        ] {
            assert!(!with(s, r).clears_gate(), "{s:?} {r:?}");
        }
    }
}
