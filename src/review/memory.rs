//! What a review remembers (docs/architecture.md §20), around the review itself:
//!
//! 1. [`prepare`] — with `--incremental`, split the target into the files reviewed again
//!    and those carried over (with their baseline findings, relocated by fingerprint and
//!    checked against today's suppressions); then look the part to review up in the
//!    verdict cache.
//! 2. the review runs on [`Prepared::target`] — or, on a cache hit, nothing runs and the
//!    cached report is replayed into the new run dir ([`replayed`]);
//! 3. [`complete`] — the review's report becomes the full picture: carried files and
//!    findings merged back, the `--baseline` comparison, the suppression warnings. A fresh
//!    complete review is stored in the cache first ([`Prepared::store`]), before any of this,
//!    so that a hit is re-completed against the baseline of the run that hits it.

use crate::findings::suppress::SuppressionSet;
use crate::findings::{Role, Texts};
use crate::report::{
    carried_findings, compare_with_baseline, merge_carried, Carried, CarryInput, Cost,
    CoverageFile, CoverageStatus, Report, ReportFinding, ReportTarget,
};
use crate::resolve::RunPlan;
use crate::round::{Assets, StopReason};
use crate::store::cache::{CacheKey, CachedVerdict, VerdictCache};
use crate::store::{Meta, MetaTarget};
use crate::target::{
    patch_sections, restrict, split_incremental, BaselineFile, PinnedTarget, TargetIdentity,
    TargetKind,
};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// `--incremental`: the whole target and what is carried over from the baseline.
#[derive(Debug, Clone)]
struct CarryPlan {
    full: PinnedTarget,
    baseline_run_id: String,
    baseline_stop: Option<StopReason>,
    files: Vec<CoverageFile>,
    findings: Carried,
    reviewed: Vec<String>,
}

/// A review made ready: what the agents get, what is carried over, the cache entry.
#[derive(Debug)]
pub struct Prepared {
    target: PinnedTarget,
    carry: Option<CarryPlan>,
    cache: Option<(VerdictCache, CacheKey)>,
    hit: Option<CachedVerdict>,
}

impl Prepared {
    /// A review of `target` as it is: no carry-over, no cache (iterate mode).
    pub fn plain(target: PinnedTarget) -> Self {
        Self {
            target,
            carry: None,
            cache: None,
            hit: None,
        }
    }

    /// What the agents are given: the target, or with `--incremental` its changed part.
    pub fn target(&self) -> &PinnedTarget {
        &self.target
    }

    /// The cached verdict this review reuses, if any.
    pub fn hit(&self) -> Option<&CachedVerdict> {
        self.hit.as_ref()
    }

    /// `--incremental` and nothing changed since the baseline: nothing is dispatched, the
    /// baseline's verdict is carried over whole. The stop reason is the baseline's.
    pub fn nothing_changed(&self) -> Option<StopReason> {
        let c = self.carry.as_ref()?;
        c.reviewed
            .is_empty()
            .then(|| c.baseline_stop.unwrap_or(StopReason::ZeroFindings))
    }

    /// Store a fresh complete review's report (before [`complete`]) in the verdict cache.
    /// A failure is a warning: the review stands.
    pub fn store(&self, report: &Report) {
        if let Some((cache, key)) = &self.cache {
            if let Err(e) = cache.store(key, report) {
                crate::output::warn(&format!(
                    "cannot write the verdict cache under {}: {e}",
                    cache.dir().display()
                ));
            }
        }
    }
}

/// Make the review of `target` (the pinned target, or the empty one) ready; `empty`: an
/// allowed empty diff, nothing to review.
pub fn prepare(plan: &RunPlan, target: PinnedTarget, empty: bool) -> Prepared {
    let mut p = Prepared::plain(target);
    if empty {
        return p;
    }
    if let (true, Some(baseline)) = (plan.memory.incremental, &plan.memory.baseline) {
        let carry = carry_plan(
            &p.target,
            baseline,
            &plan.memory.suppressions,
            plan.settings.review.max_file_bytes,
        );
        let keep: BTreeSet<String> = carry.reviewed.iter().cloned().collect();
        p.target = restrict(&carry.full, &keep);
        p.carry = Some(carry);
    }
    if p.nothing_changed().is_some() {
        return p;
    }
    if let Some(dir) = &plan.memory.cache_dir {
        if let Some(key) = cache_key(plan, &p.target.identity()) {
            let cache = VerdictCache::new(dir);
            p.hit = cache.lookup(&key);
            p.cache = Some((cache, key));
        }
    }
    p
}

/// The files of `target` whose baseline verdict still holds, and the findings that go with
/// them. A file holding a baseline-suppressed finding that no suppression covers any more is
/// reviewed again (that finding was never judged); a carried finding a suppression now
/// covers moves to `suppressed`; so is a file holding a carried finding whose context
/// citation no longer holds ([`stale_context`]).
fn carry_plan(
    target: &PinnedTarget,
    baseline: &Report,
    set: &SuppressionSet,
    cap: u64,
) -> CarryPlan {
    let known = known_files(target, baseline);
    let split = split_incremental(target, &known);
    let mut carried: BTreeSet<String> = split.carried.into_iter().collect();
    let mut reviewed: BTreeSet<String> = split.reviewed.into_iter().collect();
    let mut findings = carried_findings(baseline, &carried, &target.root);
    let mut lapsed = resuppress(&mut findings, target, set);
    lapsed.extend(stale_context(&mut findings, target, cap));
    for p in &lapsed {
        carried.remove(p);
        reviewed.insert(p.clone());
    }
    let files = carried_coverage(target, &carried);
    CarryPlan {
        full: target.clone(),
        baseline_run_id: baseline.run_id.clone(),
        baseline_stop: baseline.stop_reason,
        files,
        findings,
        reviewed: reviewed.into_iter().collect(),
    }
}

/// The files the baseline reviewed (or carried over), with what their verdict stands on;
/// none when it reviewed another kind of target.
fn known_files(target: &PinnedTarget, baseline: &Report) -> BTreeMap<String, BaselineFile> {
    let mut known: BTreeMap<String, BaselineFile> = BTreeMap::new();
    if baseline.target.kind == target.kind {
        for f in &baseline.coverage.files {
            if matches!(
                f.status,
                CoverageStatus::Reviewed | CoverageStatus::CarriedOver
            ) {
                known.insert(
                    f.path.clone(),
                    BaselineFile {
                        sha256: f.sha256.clone(),
                        patch_sha256: f.patch_sha256.clone(),
                    },
                );
            }
        }
    } else {
        crate::output::warn(&format!(
            "--incremental: the baseline reviewed a {} target, this run a {}: everything is reviewed",
            baseline.target.kind.as_str(),
            target.kind.as_str()
        ));
    }
    known
}

/// The carried findings against today's suppressions: a baseline-suppressed finding that no
/// suppression covers any more lapses with its file (returned: those files are reviewed
/// again, and their findings dropped); an open finding a suppression now covers moves to
/// `suppressed`.
fn resuppress(
    findings: &mut Carried,
    target: &PinnedTarget,
    set: &SuppressionSet,
) -> BTreeSet<String> {
    let texts = Texts::default();
    let now_suppressed = |f: &ReportFinding, texts: &Texts| {
        let lines = match (&f.file, f.line) {
            (Some(p), Some(_)) => texts.get(&target.root, p),
            _ => None,
        };
        set.matches(
            f.file.as_deref(),
            f.line,
            &f.category,
            &f.fingerprint,
            lines.as_deref(),
        )
        .suppression
    };
    // Baseline-suppressed findings whose suppression is gone: their files are reviewed again.
    let mut lapsed: BTreeSet<String> = BTreeSet::new();
    let mut still = vec![];
    for mut f in std::mem::take(&mut findings.suppressed) {
        match now_suppressed(&f, &texts) {
            Some(s) => {
                f.suppression = Some(s);
                still.push(f);
            }
            None => {
                if let Some(p) = &f.file {
                    lapsed.insert(p.clone());
                }
            }
        }
    }
    findings.suppressed = still;
    let in_lapsed = |f: &ReportFinding| f.file.as_ref().is_some_and(|p| lapsed.contains(p));
    for list in [
        &mut findings.confirmed,
        &mut findings.unresolved,
        &mut findings.debunked,
        &mut findings.suppressed,
    ] {
        list.retain(|f| !in_lapsed(f));
    }
    // Open findings a suppression now covers.
    for list in [
        &mut findings.confirmed,
        &mut findings.unresolved,
        &mut findings.debunked,
    ] {
        let mut kept = vec![];
        for mut f in std::mem::take(list) {
            match now_suppressed(&f, &texts) {
                Some(s) => {
                    f.suppression = Some(s);
                    findings.suppressed.push(f);
                }
                None => kept.push(f),
            }
        }
        *list = kept;
    }
    lapsed
}

/// The files holding a carried finding one of whose context citations no longer holds
/// against this run's pin (docs/contracts.md §22.2: the context it rested on changed): they are
/// reviewed again, their carried findings dropped.
fn stale_context(findings: &mut Carried, target: &PinnedTarget, cap: u64) -> BTreeSet<String> {
    let src = crate::gates::ScopeLines::of_target(target, cap);
    let mut stale: BTreeSet<String> = BTreeSet::new();
    for f in findings.all_mut() {
        let (Some(p), false) = (&f.file, f.context.is_empty()) else {
            continue;
        };
        if !crate::gates::check_cites(&mut f.context.clone(), &src).is_empty() {
            stale.insert(p.clone());
        }
    }
    for list in [
        &mut findings.confirmed,
        &mut findings.unresolved,
        &mut findings.debunked,
        &mut findings.suppressed,
    ] {
        list.retain(|f| !f.file.as_ref().is_some_and(|p| stale.contains(p)));
    }
    stale
}

/// The coverage entries of the carried files.
fn carried_coverage(target: &PinnedTarget, carried: &BTreeSet<String>) -> Vec<CoverageFile> {
    let sections = patch_sections(target);
    target
        .files
        .iter()
        .filter(|f| carried.contains(&f.path))
        .map(|f| CoverageFile {
            path: f.path.clone(),
            status: CoverageStatus::CarriedOver,
            reason: None,
            glob: None,
            sha256: Some(f.sha256.clone()),
            patch_sha256: sections.get(&f.path).cloned(),
        })
        .collect()
}

fn sha256_hex(d: impl AsRef<[u8]>) -> String {
    hex::encode(Sha256::digest(d))
}

/// The review context of `plan` as the verdict-cache key's `extra`: everything besides the
/// target, the configuration and the prompts that the agents get or that decides what they
/// get (docs/architecture.md §20.4).
fn context_digests(plan: &RunPlan) -> BTreeMap<String, String> {
    let ctx = &plan.context;
    let mut rules = Sha256::new();
    for r in &ctx.rules {
        rules.update(format!("{}\0{}\0", r.path, r.text.len()));
        rules.update(r.text.as_bytes());
    }
    let paths = serde_json::to_vec(&ctx.paths).unwrap_or_default();
    let ex = &plan.excludes;
    let excludes = format!("{:?}\0{}\0{:?}", ex.globs, ex.skip_lockfiles, ex.attributes);
    let inputs = &plan.repo_inputs;
    let repo_config = format!("{}\0{}", inputs.source.as_str(), inputs.digest());
    [
        ("rules", sha256_hex(rules.finalize())),
        ("paths", sha256_hex(paths)),
        ("focus", sha256_hex(ctx.focus.as_deref().unwrap_or(""))),
        ("excludes", sha256_hex(excludes)),
        ("intent", sha256_hex(plan.intent.as_deref().unwrap_or(""))),
        ("repo_config", sha256_hex(repo_config)),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

/// The verdict-cache key of reviewing the target identified by `target` under `plan`;
/// None when an agent cannot be resolved (the review then reports that itself). A function
/// of the target's identity, not of the pinned target: the Stop hook computes it from its
/// snapshot.
pub fn cache_key(plan: &RunPlan, target: &TargetIdentity) -> Option<CacheKey> {
    let assets = Assets::new(&plan.repo_inputs);
    let mut agents = vec![];
    let roles = plan
        .enthusiasts
        .iter()
        .map(|n| (Role::Enthusiast, n.as_str()))
        .chain([
            (
                Role::Adversary,
                plan.agent_for(Role::Adversary).name.as_str(),
            ),
            (Role::Judge, plan.agent_for(Role::Judge).name.as_str()),
        ]);
    for (role, name) in roles {
        let a = plan.settings.agent(name).ok()?;
        let m = a.tier_models();
        agents.push(format!(
            "{} {name} {:?} {} haiku={} sonnet={} opus={}",
            role.as_str(),
            a.backend,
            a.binary,
            m.haiku,
            m.sonnet,
            m.opus
        ));
    }
    Some(CacheKey {
        arev_version: env!("CARGO_PKG_VERSION").to_string(),
        target: target.clone(),
        config_digest: plan.config_digest.clone(),
        prompts_digest: assets.digest(),
        agents,
        tier_start: plan.tier_start.as_str().to_string(),
        passes: plan.passes,
        max_rounds: plan.max_rounds,
        budget_usd: plan.budget_usd,
        budget_tokens: plan.budget_tokens,
        shard: plan
            .shard
            .as_ref()
            .map(|s| format!("{}/{}", s.index, s.count)),
        suppressions: plan.memory.suppressions.digest_lines(),
        extra: context_digests(plan),
    })
}

/// The cached report of `hit` as the report of the run `meta` (in `run_dir`): the same
/// findings, coverage and stop reason; this run's identity and times, no rounds, no cost.
pub fn replayed(hit: &CachedVerdict, meta: &Meta, run_dir: &Path, target: &PinnedTarget) -> Report {
    Report {
        run_id: meta.run_id.clone(),
        run_dir: run_dir.display().to_string(),
        status: meta.status,
        target: ReportTarget::new(target, &meta.target),
        rounds: vec![],
        cost: Cost::default(),
        cached_from: Some(hit.run_id.clone()),
        prove: None,
        started_at: meta.started_at.clone(),
        finished_at: meta.finished_at.clone().unwrap_or_default(),
        arev_version: env!("CARGO_PKG_VERSION").to_string(),
        ..hit.report.clone()
    }
}

/// Make `report` (of [`Prepared::target`]) the full picture: carried files and findings
/// merged back (`--incremental`), the `--baseline` comparison, and the warnings about the
/// suppressions file.
pub fn complete(plan: &RunPlan, prepared: &Prepared, report: &mut Report) {
    if let Some(c) = &prepared.carry {
        // The whole target, re-pinned: the part not reviewed again may have changed too.
        let repinned = crate::target::repin(&c.full).ok();
        let target = ReportTarget::new(
            &c.full,
            &MetaTarget {
                kind: c.full.kind,
                display: c.full.display.clone(),
                path: String::new(),
                sha256: c.full.sha256.clone(),
                drift: repinned.as_ref() != Some(&c.full.sha256),
                sha256_final: repinned,
                files: c.full.files.len(),
                skipped: c.full.skipped.len(),
            },
        );
        merge_carried(
            report,
            CarryInput {
                baseline_run_id: c.baseline_run_id.clone(),
                target,
                files: c.files.clone(),
                findings: c.findings.clone(),
                reviewed: c.reviewed.clone(),
                reviewed_sha256: prepared.target.sha256.clone(),
            },
        );
        if c.full.kind == TargetKind::Diff {
            // Findings of a diff are anchored in its hunks: a carried one outside every hunk
            // of its file is no longer part of the change.
            let outside = |f: &ReportFinding| match (&f.file, f.line) {
                (Some(p), Some(l)) => c
                    .full
                    .hunks
                    .get(p)
                    .is_some_and(|hs| !hs.iter().any(|h| (h.start..=h.end).contains(&l))),
                _ => false,
            };
            for list in [&mut report.confirmed, &mut report.unresolved] {
                list.retain(|f| f.carried_over_from.is_none() || !outside(f));
            }
            report.by_severity = crate::report::BySeverity::of(&report.confirmed);
        }
    }
    if let Some(b) = &plan.memory.baseline {
        compare_with_baseline(report, b, plan.memory.only_new);
    }
    for w in &plan.memory.suppressions.warnings {
        if !report.warnings.contains(w) {
            report.warnings.push(w.clone());
        }
    }
}
