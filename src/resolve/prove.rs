//! `--prove` resolved (docs/prove.md): which confirmed findings get a Prover, where their
//! reproducers run and within which limits, and whether only reproduced findings gate.

use crate::cli::RunArgs;
use crate::config::Config;
use crate::errors::ExpectedError;
use crate::findings::Severity;
use crate::records::SandboxMode;
use std::path::PathBuf;
use std::time::Duration;

/// `[prove] max_findings` when not configured.
pub const DEFAULT_MAX_FINDINGS: u32 = 5;
/// `[timeouts] prove` when not configured.
pub const DEFAULT_PROVE_TIMEOUT: Duration = Duration::from_secs(300);
/// `[prove] memory` when not configured: 4 GiB.
pub const DEFAULT_MEMORY_BYTES: u64 = 4 << 30;

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
    /// `--require-proof`: only `reproduced` findings count for `--fail-on`.
    pub require_proof: bool,
}

impl ProvePlan {
    /// `[timeouts] prove` as the Prover's prompt states it (`5m`).
    pub fn time_limit(&self) -> String {
        humantime::format_duration(self.timeout).to_string()
    }
}

/// The plan of `--prove` (None without it).
pub fn resolve_prove(args: &RunArgs, config: &Config) -> Result<Option<ProvePlan>, ExpectedError> {
    if !args.prove {
        return Ok(None);
    }
    let _ = config;
    Ok(Some(ProvePlan {
        sandbox: args.prove_sandbox.map_or(SandboxMode::Bwrap, Into::into),
        min_severity: Severity::High,
        max_findings: DEFAULT_MAX_FINDINGS,
        timeout: DEFAULT_PROVE_TIMEOUT,
        memory_bytes: DEFAULT_MEMORY_BYTES,
        env: vec![],
        bind_ro: vec![],
        require_proof: args.require_proof,
    }))
}
