//! `arev runs --prune-older-than`: which run dirs under a runs base may go (arev's own —
//! a readable meta.json — finished, and ended before a cut-off) and deleting them.

use super::list::{list_runs, RunSummary};
use super::state::RunState;
use chrono::{DateTime, Utc};
use std::path::Path;
use std::time::Duration;

/// When `ts` (RFC 3339, as meta.json records it) was, relative to `now`; None when it does
/// not parse. A time in the future is an age of zero.
pub fn age(ts: &str, now: DateTime<Utc>) -> Option<Duration> {
    let at = DateTime::parse_from_rfc3339(ts).ok()?.with_timezone(&Utc);
    Some((now - at).to_std().unwrap_or(Duration::ZERO))
}

/// Whether `run` may be pruned at `older_than`: its meta.json was read (a directory arev
/// created, not one it merely found under the base), it is not running (an abandoned run —
/// its arev process gone — counts as ended), and it ended (or, never having ended, started)
/// at least `older_than` before `now`.
pub fn is_prunable(run: &RunSummary, now: DateTime<Utc>, older_than: Duration) -> bool {
    if run.error.is_some() {
        return false;
    }
    match run.status {
        None | Some(RunState::Running) => false,
        Some(_) => run
            .finished_at
            .as_deref()
            .or(run.started_at.as_deref())
            .and_then(|t| age(t, now))
            .is_some_and(|a| a >= older_than),
    }
}

/// Prune the runs under `base` older than `older_than` (see [`is_prunable`]), oldest last as
/// `arev runs` lists them; with `dry_run` nothing is deleted. Returns the runs pruned (or
/// that would be). A deletion that fails stops there with the error; what was deleted
/// before it stays deleted.
pub fn prune_runs(
    base: &Path,
    older_than: Duration,
    now: DateTime<Utc>,
    dry_run: bool,
) -> std::io::Result<Vec<RunSummary>> {
    let doomed: Vec<RunSummary> = list_runs(base)?
        .into_iter()
        .filter(|r| is_prunable(r, now, older_than))
        .collect();
    if !dry_run {
        for r in &doomed {
            std::fs::remove_dir_all(base.join(&r.run_id))?;
        }
    }
    Ok(doomed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(status: Option<RunState>, finished: Option<&str>, error: bool) -> RunSummary {
        RunSummary {
            run_id: "r".into(),
            run_dir: "/x/r".into(),
            status,
            stop_reason: None,
            abort_reason: None,
            target: None,
            started_at: Some("2026-01-01T00:00:00.000Z".into()),
            finished_at: finished.map(String::from),
            confirmed: None,
            shard: None,
            cost_usd: None,
            unpriced_tokens: 0,
            tokens: None,
            error: error.then(|| "meta.json: missing".into()),
            cached_from: None,
        }
    }

    #[test]
    fn only_ended_runs_of_arev_older_than_the_cut_off_are_prunable() {
        let now = DateTime::parse_from_rfc3339("2026-03-01T00:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let day = Duration::from_secs(86_400);
        let old = Some("2026-01-02T00:00:00.000Z");
        let recent = Some("2026-02-28T12:00:00.000Z");
        assert!(is_prunable(
            &run(Some(RunState::Complete), old, false),
            now,
            30 * day
        ));
        assert!(is_prunable(
            &run(Some(RunState::Aborted), old, false),
            now,
            30 * day
        ));
        assert!(!is_prunable(
            &run(Some(RunState::Complete), recent, false),
            now,
            30 * day
        ));
        assert!(is_prunable(
            &run(Some(RunState::Complete), recent, false),
            now,
            Duration::ZERO
        ));
        // Running: never, however old its start.
        assert!(!is_prunable(
            &run(Some(RunState::Running), None, false),
            now,
            day
        ));
        // Abandoned: by its start.
        assert!(is_prunable(
            &run(Some(RunState::Abandoned), None, false),
            now,
            day
        ));
        // Not arev's (no readable meta.json): never.
        assert!(!is_prunable(&run(None, None, true), now, Duration::ZERO));
        assert_eq!(age("nonsense", now), None);
        assert_eq!(age("2026-03-02T00:00:00Z", now), Some(Duration::ZERO));
    }
}
