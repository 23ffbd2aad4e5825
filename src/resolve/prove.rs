//! `--prove` resolved (docs/prove.md): which confirmed findings get a Prover, where their
//! reproducers run and within which limits, and whether `--require-proof` narrows the gate.

use crate::cli::RunArgs;
use crate::config::Settings;
use crate::findings::Severity;
use crate::records::SandboxMode;
use std::path::PathBuf;
use std::time::Duration;

/// How the proofs of a run are made.
#[derive(Debug, Clone, PartialEq)]
pub struct ProvePlan {
    /// `--prove-sandbox` > `[prove] sandbox` (never `none` from a repository's config).
    pub sandbox: SandboxMode,
    /// Confirmed findings below this are `not_attempted`.
    pub min_severity: Severity,
    /// The most severe findings first, at most this many; the rest `not_attempted`.
    pub max_findings: u32,
    /// `[timeouts] prove`: each run of a reproducer.
    pub timeout: Duration,
    /// `[prove] memory` (bytes; 0 = no limit).
    pub memory_bytes: u64,
    /// `[prove] env`: variables passed into the sandbox (trusted config only).
    pub env: Vec<String>,
    /// `[prove] bind_ro`: paths visible read-only in the sandbox (trusted config only).
    pub bind_ro: Vec<PathBuf>,
    /// `--require-proof`: `preexisting` findings and those below `min_severity` do not
    /// count for `--fail-on`.
    pub require_proof: bool,
}

impl ProvePlan {
    /// `[timeouts] prove` as the Prover's prompt states it (`5m`).
    pub fn time_limit(&self) -> String {
        humantime::format_duration(self.timeout).to_string()
    }
}

/// The plan of `--prove` (None without it): `--prove-sandbox` over `[prove] sandbox` (which
/// config loading already refused from a repository's config), the rest from `[prove]` and
/// `[timeouts] prove`.
pub fn resolve_prove(args: &RunArgs, config: &Settings) -> Option<ProvePlan> {
    if !args.prove {
        return None;
    }
    let p = &config.prove;
    Some(ProvePlan {
        sandbox: args.prove_sandbox.map_or(p.sandbox, Into::into),
        min_severity: p.min_severity,
        max_findings: p.max_findings,
        timeout: config.timeouts.prove,
        memory_bytes: p.memory,
        env: p.env.clone(),
        bind_ro: p.bind_ro.clone(),
        require_proof: args.require_proof,
    })
}
