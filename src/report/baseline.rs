//! `--baseline` (docs/architecture.md §20): compare a report with an earlier one by finding
//! fingerprint. Pure.
//!
//! - Every open finding (confirmed or unresolved) gets `baseline_state`: `new` when no open
//!   baseline finding has its fingerprint, `unchanged` when one has it with the same
//!   severity, `updated` when with another severity.
//! - Open baseline findings whose fingerprint is neither open nor suppressed now are listed
//!   in `absent` (fixed), with `baseline_state: absent`. A finding that is now suppressed is
//!   not fixed; one the Judge now debunks is no longer open, so it is absent.

use super::{BaselineInfo, BaselineState, Report, ReportFinding};
use std::collections::{BTreeMap, BTreeSet};

/// The baseline's open findings by fingerprint (the first of a fingerprint wins).
fn open_by_fingerprint(baseline: &Report) -> BTreeMap<&str, &ReportFinding> {
    let mut by = BTreeMap::new();
    for f in baseline.confirmed.iter().chain(&baseline.unresolved) {
        by.entry(f.fingerprint.as_str()).or_insert(f);
    }
    by
}

/// Mark `report` against `baseline` (see the module docs); `only_new` is recorded for the
/// exit code, annotations and the Stop hook.
pub fn compare_with_baseline(report: &mut Report, baseline: &Report, only_new: bool) {
    let before = open_by_fingerprint(baseline);
    let mut counts = [0u32; 3];
    for f in report
        .confirmed
        .iter_mut()
        .chain(report.unresolved.iter_mut())
    {
        let state = match before.get(f.fingerprint.as_str()) {
            None => BaselineState::New,
            Some(b) if b.severity == f.severity => BaselineState::Unchanged,
            Some(_) => BaselineState::Updated,
        };
        counts[match state {
            BaselineState::New => 0,
            BaselineState::Unchanged => 1,
            _ => 2,
        }] += 1;
        f.baseline_state = Some(state);
    }
    let now: BTreeSet<&str> = report
        .confirmed
        .iter()
        .chain(&report.unresolved)
        .chain(&report.suppressed)
        .map(|f| f.fingerprint.as_str())
        .collect();
    let absent: Vec<ReportFinding> = before
        .values()
        .filter(|b| !now.contains(b.fingerprint.as_str()))
        .map(|b| ReportFinding {
            baseline_state: Some(BaselineState::Absent),
            ..(*b).clone()
        })
        .collect();
    let mut absent = absent;
    super::assemble::sort_confirmed(&mut absent);
    report.baseline = Some(BaselineInfo {
        run_id: baseline.run_id.clone(),
        target_sha256: baseline.target.sha256.clone(),
        only_new,
        new: counts[0],
        unchanged: counts[1],
        updated: counts[2],
        absent: absent.len() as u32,
    });
    report.absent = absent;
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{finding, shard};
    use super::*;
    use crate::findings::Severity;
    use crate::report::{Suppression, SuppressionKind};
    use crate::store::RunStatus;

    fn with_fp(fp: &str, sev: Severity) -> ReportFinding {
        ReportFinding {
            fingerprint: fp.into(),
            ..finding(&format!("{fp}.rs"), sev)
        }
    }

    #[test]
    fn new_unchanged_updated_and_absent() {
        let mut base = shard(1, 1, &[], RunStatus::Complete);
        base.run_id = "base".into();
        base.confirmed = vec![
            with_fp("same", Severity::High),
            with_fp("worse", Severity::Medium),
            with_fp("fixed", Severity::Low),
            with_fp("silenced", Severity::High),
        ];
        base.unresolved = vec![with_fp("pending", Severity::Medium)];
        let mut now = shard(1, 1, &[], RunStatus::Complete);
        now.confirmed = vec![
            with_fp("same", Severity::High),
            with_fp("worse", Severity::Critical),
            with_fp("fresh", Severity::Low),
        ];
        now.unresolved = vec![with_fp("pending", Severity::Medium)];
        now.suppressed = vec![ReportFinding {
            proof: None,
            suppression: Some(Suppression {
                kind: SuppressionKind::External,
                justification: "ok".into(),
                source: "s".into(),
                expires: None,
            }),
            ..with_fp("silenced", Severity::High)
        }];
        compare_with_baseline(&mut now, &base, true);
        let state = |fp: &str| {
            now.confirmed
                .iter()
                .chain(&now.unresolved)
                .find(|f| f.fingerprint == fp)
                .and_then(|f| f.baseline_state)
        };
        assert_eq!(state("same"), Some(BaselineState::Unchanged));
        assert_eq!(state("worse"), Some(BaselineState::Updated));
        assert_eq!(state("fresh"), Some(BaselineState::New));
        assert_eq!(state("pending"), Some(BaselineState::Unchanged));
        let absent: Vec<&str> = now.absent.iter().map(|f| f.fingerprint.as_str()).collect();
        assert_eq!(absent, ["fixed"], "a suppressed finding is not fixed");
        assert_eq!(now.absent[0].baseline_state, Some(BaselineState::Absent));
        let info = now.baseline.as_ref().unwrap();
        assert_eq!(
            (
                info.run_id.as_str(),
                info.new,
                info.unchanged,
                info.updated,
                info.absent
            ),
            ("base", 1, 2, 1, 1)
        );
        // --only-new: only new and updated findings gate.
        let gating: Vec<&str> = now.gating().map(|f| f.fingerprint.as_str()).collect();
        assert_eq!(gating, ["worse", "fresh"]);
    }

    #[test]
    fn without_only_new_everything_gates() {
        let base = shard(1, 1, &["a.rs"], RunStatus::Complete);
        let mut now = shard(1, 1, &["a.rs", "b.rs"], RunStatus::Complete);
        compare_with_baseline(&mut now, &base, false);
        assert_eq!(now.gating().count(), 2);
        assert!(now.absent.is_empty());
    }
}
