//! The verdict cache (docs/architecture.md §20): a review whose inputs are identical to an
//! earlier complete one is not run again; its report is reused.
//!
//! An entry is `<cache dir>/verdicts/<key digest>.json` ([`CachedVerdict`]): the key it
//! was stored under, in full, and the report of the review as it ended (before any
//! `--baseline` comparison or carried-over findings, which are applied afresh on every
//! run). The key ([`CacheKey`]) holds everything that can change a verdict; its digest is
//! the sha256 of its canonical JSON. A lookup compares the stored key with the asked one in
//! full, so a corrupt, foreign or colliding entry is a miss, never a wrong verdict. Entries
//! are written atomically; two runs storing the same key leave one of the two (equivalent)
//! entries. Nothing is evicted: remove the directory to start afresh.
//!
//! This is a library API: `arev run` stores and looks up verdicts; the Stop hook looks its
//! session's diff up before it starts a review (`hook::stop`), by the same key.

use super::write_json_atomic;
use crate::records::Report;
use crate::store::RunStatus;
use crate::target::TargetIdentity;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The format of a stored entry; a bump makes every older entry a miss.
pub const CACHE_FORMAT: u32 = 1;

/// Everything that can change a verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheKey {
    pub arev_version: String,
    /// What the agents are given: kind, TARGET_SHA, the reviewed files' content, type, mode.
    pub target: TargetIdentity,
    /// sha256 of the resolved configuration (agents, models, roles, limits, localization).
    pub config_digest: String,
    /// sha256 of the role prompts, templates and checklist in effect (repository overrides
    /// included).
    pub prompts_digest: String,
    /// Per role: the agent, its backend and binary, and its model per tier (`--agent`
    /// included).
    pub agents: Vec<String>,
    pub tier_start: String,
    pub passes: u32,
    pub max_rounds: u32,
    pub budget_usd: Option<f64>,
    pub budget_tokens: Option<u64>,
    /// `--shard i/n`, when given.
    pub shard: Option<String>,
    /// The external suppressions in force (fingerprint, reason, expiry): an entry added,
    /// removed or expired changes what a review reports.
    pub suppressions: Vec<String>,
    /// The review context, by name, each as a sha256 of what the agents get or what decides
    /// it (`rules`, `paths`, `focus`, `excludes`, `intent`, `repo_config`): a changed rule,
    /// focus or intent is a miss. Whoever adds another input of the agents adds it here.
    pub extra: BTreeMap<String, String>,
}

impl CacheKey {
    /// sha256 (hex) of the key's canonical JSON.
    pub fn digest(&self) -> String {
        let json = serde_json::to_vec(self).unwrap_or_default();
        Sha256::digest(&json)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }
}

/// One stored entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CachedVerdict {
    pub format: u32,
    pub key: CacheKey,
    /// The run whose review it is.
    pub run_id: String,
    pub stored_at: String,
    pub report: Report,
}

/// A verdict cache in a directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerdictCache {
    dir: PathBuf,
}

impl VerdictCache {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn entry(&self, key: &CacheKey) -> PathBuf {
        self.dir
            .join("verdicts")
            .join(format!("{}.json", key.digest()))
    }

    /// The verdict stored under `key`: a complete review's (with its stop reason). An
    /// unreadable, corrupt or mismatching entry is a miss.
    pub fn lookup(&self, key: &CacheKey) -> Option<CachedVerdict> {
        let bytes = super::capped::read_capped(
            &self.entry(key),
            super::capped::MAX_REPORT_BYTES,
            "a verdict-cache entry",
        )
        .map_err(|e| tracing::debug!(error = %e, "unreadable verdict-cache entry"))
        .ok()?;
        let v: CachedVerdict = serde_json::from_slice(&bytes)
            .map_err(|e| tracing::debug!(error = %e, "unreadable verdict-cache entry"))
            .ok()?;
        let complete = v.report.status == RunStatus::Complete && v.report.stop_reason.is_some();
        (v.format == CACHE_FORMAT && v.key == *key && complete).then_some(v)
    }

    /// Store `report` (a complete review's) under `key`. Other statuses are not stored.
    pub fn store(&self, key: &CacheKey, report: &Report) -> std::io::Result<()> {
        if report.status != RunStatus::Complete || report.stop_reason.is_none() {
            return Ok(());
        }
        let path = self.entry(key);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let entry = CachedVerdict {
            format: CACHE_FORMAT,
            key: key.clone(),
            run_id: report.run_id.clone(),
            stored_at: super::clock::now(),
            report: report.clone(),
        };
        write_json_atomic(&path, &entry)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::fixtures::shard;
    use crate::target::{Mode, TargetKind, TargetType};

    fn report(status: RunStatus) -> Report {
        shard(1, 1, &["a.rs"], status)
    }

    fn key() -> CacheKey {
        CacheKey {
            arev_version: "0.1.0".into(),
            target: TargetIdentity {
                kind: TargetKind::Manifest,
                sha256: "t".into(),
                files_sha256: "f".into(),
                target_type: TargetType::Code,
                mode: Mode::Full,
            },
            config_digest: "c".into(),
            prompts_digest: "p".into(),
            agents: vec!["enthusiast claude".into()],
            tier_start: "opus".into(),
            passes: 2,
            max_rounds: 10,
            budget_usd: None,
            budget_tokens: None,
            shard: None,
            suppressions: vec![],
            extra: BTreeMap::new(),
        }
    }

    #[test]
    fn a_stored_verdict_is_found_under_its_key_only() {
        let dir = tempfile::tempdir().unwrap();
        let cache = VerdictCache::new(dir.path());
        let k = key();
        assert!(cache.lookup(&k).is_none());
        let r = report(RunStatus::Complete);
        cache.store(&k, &r).unwrap();
        let hit = cache.lookup(&k).unwrap();
        assert_eq!(hit.run_id, r.run_id);
        assert_eq!(hit.report, r);
        let mut other = key();
        other.prompts_digest = "changed".into();
        assert_ne!(other.digest(), k.digest());
        assert!(cache.lookup(&other).is_none());
        // An entry whose stored key differs (a collision, a hand edit) is a miss.
        std::fs::copy(cache.entry(&k), cache.entry(&other)).unwrap();
        assert!(cache.lookup(&other).is_none());
        // Garbage is a miss.
        std::fs::write(cache.entry(&k), b"{").unwrap();
        assert!(cache.lookup(&k).is_none());
    }

    #[test]
    fn only_complete_reviews_are_stored() {
        let dir = tempfile::tempdir().unwrap();
        let cache = VerdictCache::new(dir.path());
        cache.store(&key(), &report(RunStatus::Aborted)).unwrap();
        assert!(!dir.path().join("verdicts").exists());
    }
}
