//! progress.json: where a live run stands — phase, iteration, round and tier, the dispatch
//! that last started or finished (role, pass, state), the agents running now, counts so far,
//! elapsed time. Updated at every dispatch start and end by the run's `Recorder` (through a
//! `ProgressLog` handle the dispatching code holds); atomic (temp file + rename) but not
//! fsynced: it is a live view, meta.json stays the record.
//!
//! Writes are coalesced: an update at least `LAG` after the last write is written at once;
//! one that comes sooner (the burst of passes starting together, answers landing together)
//! is written by a short-lived flusher thread `LAG` after the last write, with whatever
//! else changed meanwhile. So the file is never more than `LAG` behind, a burst costs two
//! writes instead of one per event (each replacing rename makes ext4 write the new file
//! back and evict the old inode), and the final state (`done`) is written at once.

use super::clock::now;
use crate::records::progress::{
    DispatchState, Phase, ProgressCounts, RunProgress, RunningAgent, Spend,
};
use crate::records::{Role, Tier};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How far progress.json may lag behind the run.
const LAG: Duration = Duration::from_millis(200);

struct Inner {
    path: PathBuf,
    started: Instant,
    progress: RunProgress,
    /// When progress.json was last written.
    written_at: Option<Instant>,
    /// An update is not written yet and a flusher thread is on its way to write it.
    pending: bool,
    /// `LAG` (longer in tests, so a slow machine does not change which path is taken).
    lag: Duration,
}

impl Inner {
    fn write(&mut self) {
        if let Err(e) = write_quick(&self.path, &self.progress) {
            tracing::debug!("cannot write {}: {e}", self.path.display());
        }
        self.written_at = Some(Instant::now());
        self.pending = false;
    }
}

/// The live progress of one run; cheap to clone and share between concurrent dispatches.
#[derive(Clone)]
pub struct ProgressLog {
    inner: Arc<Mutex<Inner>>,
}

impl std::fmt::Debug for ProgressLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProgressLog")
    }
}

/// Write without fsync: a crash loses at most the latest update of a live view.
fn write_quick(path: &Path, value: &RunProgress) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    let mut tmp = tempfile::Builder::new().prefix(".tmp-").tempfile_in(dir)?;
    let mut bytes = vec![];
    crate::output::write_json(&mut bytes, value, true).map_err(std::io::Error::other)?;
    bytes.push(b'\n');
    tmp.write_all(&bytes)?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

impl ProgressLog {
    /// The progress of run `run_id`, written to `<dir>/progress.json` at once.
    pub fn start(dir: &Path, run_id: &str) -> Self {
        Self::start_with_lag(dir, run_id, LAG)
    }

    fn start_with_lag(dir: &Path, run_id: &str, lag: Duration) -> Self {
        let at = now();
        let log = Self {
            inner: Arc::new(Mutex::new(Inner {
                path: dir.join("progress.json"),
                started: Instant::now(),
                progress: RunProgress {
                    run_id: run_id.to_string(),
                    phase: Phase::Review,
                    iteration: None,
                    round: None,
                    tier: None,
                    role: None,
                    pass: None,
                    state: None,
                    running: vec![],
                    counts: ProgressCounts::default(),
                    spent: Spend::default(),
                    started_at: at.clone(),
                    updated_at: at,
                    elapsed_ms: 0,
                },
                written_at: None,
                pending: false,
                lag,
            })),
        };
        log.update(|_| {});
        log
    }

    /// Change the progress and have progress.json rewritten: now when the last write is
    /// `LAG` old (or `at_once` is asked), else by a flusher thread when it is. A failed write
    /// is logged, never fatal.
    fn update_with(&self, at_once: bool, change: impl FnOnce(&mut RunProgress)) {
        let Ok(mut inner) = self.inner.lock() else {
            return;
        };
        let elapsed = inner.started.elapsed().as_millis() as u64;
        let p = &mut inner.progress;
        change(p);
        p.elapsed_ms = elapsed;
        p.updated_at = now();
        match inner.written_at.map(|t| t + inner.lag) {
            Some(due) if !at_once && due > Instant::now() => {
                // Without a thread to write it later, write now rather than lose it.
                if !inner.pending && !self.flush_at(due) {
                    inner.write();
                } else {
                    inner.pending = true;
                }
            }
            _ => inner.write(),
        }
    }

    fn update(&self, change: impl FnOnce(&mut RunProgress)) {
        self.update_with(false, change);
    }

    /// Have the pending update written at `due` (unless a write took it first) by a thread
    /// of its own, so the run's code never waits for it. False when no thread could start.
    fn flush_at(&self, due: Instant) -> bool {
        let inner = Arc::clone(&self.inner);
        std::thread::Builder::new()
            .name("progress".into())
            .spawn(move || {
                std::thread::sleep(due.saturating_duration_since(Instant::now()));
                if let Ok(mut inner) = inner.lock() {
                    if inner.pending {
                        inner.write();
                    }
                }
            })
            .is_ok()
    }

    fn elapsed_ms(&self) -> u64 {
        self.inner
            .lock()
            .map(|i| i.started.elapsed().as_millis() as u64)
            .unwrap_or(0)
    }

    /// What the run does now (iterate mode: in which iteration).
    pub fn phase(&self, phase: Phase, iteration: Option<u32>) {
        self.update(|p| {
            p.phase = phase;
            if iteration.is_some() {
                p.iteration = iteration;
            }
        });
    }

    /// A dispatch starts: `round` and `tier` are those of a review round (None for the
    /// Fixer); `retries`: the role's re-dispatches before this one.
    pub fn dispatch_started(
        &self,
        role: Role,
        pass: Option<u32>,
        label: &str,
        round: Option<(u32, Tier)>,
        retries: u32,
    ) {
        let since_ms = self.elapsed_ms();
        self.update(|p| {
            if let Some((r, t)) = round {
                p.round = Some(r);
                p.tier = Some(t);
            }
            (p.role, p.pass, p.state) = (Some(role), pass, Some(DispatchState::Started));
            p.counts.dispatches_started += 1;
            p.counts.retries += u32::from(retries > 0);
            p.running.push(RunningAgent {
                role,
                pass,
                label: label.to_string(),
                since_ms,
                retries,
                spent: Spend::default(),
            });
        });
    }

    /// A running dispatch has spent `spent` so far (its events as they stream).
    pub fn dispatch_spending(&self, role: Role, pass: Option<u32>, label: &str, spent: Spend) {
        self.update(|p| {
            if let Some(a) = p
                .running
                .iter_mut()
                .find(|a| a.role == role && a.pass == pass && a.label == label)
            {
                a.spent = spent;
            }
        });
    }

    /// A dispatch ended (answered, failed, timed out or cancelled), having spent `spent`.
    pub fn dispatch_finished(&self, role: Role, pass: Option<u32>, label: &str, spent: Spend) {
        self.update(|p| {
            (p.role, p.pass, p.state) = (Some(role), pass, Some(DispatchState::Finished));
            p.counts.dispatches_finished += 1;
            p.spent.add(&spent);
            if let Some(i) = p
                .running
                .iter()
                .position(|a| a.role == role && a.pass == pass && a.label == label)
            {
                p.running.remove(i);
            }
        });
    }

    /// The progress as it stands now, its `elapsed_ms` measured now (the heartbeat's view).
    pub fn snapshot(&self) -> Option<RunProgress> {
        let inner = self.inner.lock().ok()?;
        let mut p = inner.progress.clone();
        p.elapsed_ms = inner.started.elapsed().as_millis() as u64;
        Some(p)
    }

    /// A round was recorded with these counts.
    pub(super) fn round_recorded(&self, findings: u32, confirmed: u32, debunked: u32) {
        self.update(|p| {
            p.counts.rounds += 1;
            p.counts.findings += findings;
            p.counts.confirmed += confirmed;
            p.counts.debunked += debunked;
        });
    }

    /// The run finished: nothing runs any more.
    pub(super) fn done(&self) {
        self.update_with(true, |p| {
            p.phase = Phase::Done;
            p.running.clear();
        });
    }
}

/// progress.json in `dir` once `until` holds of it, or as it is after 10 s (the flusher
/// writes within `LAG`): for tests.
#[cfg(test)]
pub(crate) fn settled(dir: &Path, until: impl Fn(&RunProgress) -> bool) -> RunProgress {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let p = read_progress(dir).unwrap();
        if until(&p) || Instant::now() > deadline {
            return p;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// progress.json of the run in `dir`, if it has one that parses (read under
/// [`MAX_RECORD_BYTES`](super::capped::MAX_RECORD_BYTES): a larger one is warned about and
/// left unread).
pub fn read_progress(dir: &Path) -> Option<RunProgress> {
    use super::capped::{read_capped, CappedReadError, MAX_RECORD_BYTES};
    match read_capped(&dir.join("progress.json"), MAX_RECORD_BYTES, "a run record") {
        Ok(text) => serde_json::from_slice(&text).ok(),
        Err(e @ CappedReadError::TooLarge { .. }) => {
            crate::output::warn(&e.to_string());
            None
        }
        Err(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_dispatch_start_and_end_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let log = ProgressLog::start(dir.path(), "run-1");
        let p = read_progress(dir.path()).unwrap();
        assert_eq!(
            (p.phase, p.round, p.counts.dispatches_started),
            (Phase::Review, None, 0)
        );
        log.dispatch_started(
            Role::Enthusiast,
            Some(1),
            "enthusiast-p1",
            Some((1, Tier::Opus)),
            0,
        );
        log.dispatch_started(
            Role::Adversary,
            None,
            "adversary-retry",
            Some((1, Tier::Opus)),
            1,
        );
        let p = settled(dir.path(), |p| p.counts.dispatches_started == 2);
        assert_eq!((p.round, p.tier), (Some(1), Some(Tier::Opus)));
        assert_eq!(
            (p.role, p.state),
            (Some(Role::Adversary), Some(DispatchState::Started))
        );
        assert_eq!(p.running.len(), 2);
        let spent = |cost_usd, tokens| Spend::of(Some(cost_usd), tokens);
        log.dispatch_finished(
            Role::Enthusiast,
            Some(1),
            "enthusiast-p1",
            spent(0.25, 1500),
        );
        log.round_recorded(3, 2, 1);
        let p = settled(dir.path(), |p| p.counts.rounds == 1);
        assert_eq!(p.running.len(), 1);
        assert_eq!(p.running[0].label, "adversary-retry");
        assert_eq!(p.running[0].retries, 1);
        assert_eq!((p.role, p.pass), (Some(Role::Enthusiast), Some(1)));
        assert_eq!(p.state, Some(DispatchState::Finished));
        assert_eq!(
            p.counts,
            ProgressCounts {
                dispatches_started: 2,
                dispatches_finished: 1,
                rounds: 1,
                findings: 3,
                confirmed: 2,
                debunked: 1,
                retries: 1
            }
        );
        assert_eq!(p.spent, spent(0.25, 1500), "the run's total so far");
        let now = log.snapshot().unwrap();
        assert!(now.elapsed_ms >= p.elapsed_ms);
        log.phase(Phase::Fix, Some(2));
        log.dispatch_started(Role::Fixer, None, "fixer", None, 0);
        let p = settled(dir.path(), |p| p.counts.dispatches_started == 3);
        assert_eq!(
            (p.phase, p.iteration, p.round),
            (Phase::Fix, Some(2), Some(1))
        );
        log.done();
        let p = read_progress(dir.path()).unwrap();
        assert_eq!(p.phase, Phase::Done, "the final state is written at once");
        assert!(p.running.is_empty());
        std::thread::sleep(LAG + Duration::from_millis(100));
        assert_eq!(
            read_progress(dir.path()).unwrap(),
            p,
            "no flusher wrote after done"
        );
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "no temp files left behind");
    }

    #[test]
    fn a_burst_is_written_twice_and_lands_within_the_lag() {
        let dir = tempfile::tempdir().unwrap();
        let lag = Duration::from_secs(2);
        let log = ProgressLog::start_with_lag(dir.path(), "run-1", lag);
        let inode = |d: &Path| {
            use std::os::unix::fs::MetadataExt;
            std::fs::metadata(d.join("progress.json")).unwrap().ino()
        };
        let first = inode(dir.path());
        let t0 = Instant::now();
        for k in 1..=4 {
            log.dispatch_started(
                Role::Enthusiast,
                Some(k),
                &format!("enthusiast-p{k}"),
                None,
                0,
            );
        }
        // The start wrote just now: the burst waits for the flusher, in one write.
        assert_eq!(inode(dir.path()), first, "not rewritten within the lag");
        let p = settled(dir.path(), |p| p.counts.dispatches_started == 4);
        assert_eq!(p.running.len(), 4);
        assert!(
            t0.elapsed() >= lag / 2,
            "written by the flusher, not at once"
        );
        assert_ne!(inode(dir.path()), first);
        std::thread::sleep(lag + Duration::from_millis(50));
        // A lone update after a quiet spell is written at once.
        log.dispatch_finished(Role::Enthusiast, Some(1), "enthusiast-p1", Spend::default());
        assert_eq!(
            read_progress(dir.path())
                .unwrap()
                .counts
                .dispatches_finished,
            1
        );
    }
}
