//! The one owner of a run's records. A run dir is written only through a `Recorder`:
//! `begin` (target artefact, brief.md, meta.json `running` with the pid and start time of
//! this process, progress.json), `record_round` (round-N.json and the round count in
//! meta.json), `record_iteration` (an iterate run's progress), and `finish` (status and
//! reasons, then the report and its renderings as the caller hands them: report.json,
//! summary.json, report.md, report.sarif, and the final meta.json). Dispatching code
//! updates progress.json through the recorder's `ProgressLog`. Every file is written
//! atomically; only meta.json and report.json are also fsynced (store::atomic); meta.json is
//! never read back from disk to change it.

use super::clock::now;
use super::progress::ProgressLog;
use super::{
    copy_record, write_compact_record, write_json_atomic, write_json_record, write_record,
    AbortReason, Meta, MetaContext, MetaIterate, MetaRepoInputs, MetaTarget, ProcessId, RunDir,
    RunStatus, RunStopReason,
};
use crate::records::{FailOn, Report, ReportSummary, RoundRecord, Tier};
use crate::target::{ArtefactContent, PinnedTarget};
use std::path::PathBuf;

/// A record that could not be written.
#[derive(Debug, thiserror::Error)]
#[error("cannot write {}: {source}", path.display())]
pub struct RecordError {
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

impl RecordError {
    fn at(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.into();
        move |source| Self { path, source }
    }
}

/// What a run records when it begins.
/// The context scope's listing under `<run>/target/` (one path per line).
pub const CONTEXT_LIST: &str = "context.txt";

#[derive(Debug, Clone)]

pub struct Start<'a> {
    pub target: &'a PinnedTarget,
    pub rounds_planned: u32,
    pub passes: u32,
    /// The tier the first round runs at (`--model`).
    pub tier_start: Tier,
    /// sha256 of the resolved configuration.
    pub config_digest: &'a str,
    /// An allowed empty diff: recorded `empty` from the start, nothing will be dispatched.
    pub empty: bool,
    /// Where the repository inputs came from (`--repo-config`), and their digest.
    pub repo_inputs: Option<MetaRepoInputs>,
    /// The gate the run exits by (recorded in meta.json and report.json).
    pub fail_on: FailOn,
}

/// How a run ended, as meta.json records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// Stopped for `stop_reason` (a review's or an iterate loop's).
    Complete {
        stop_reason: RunStopReason,
    },
    Aborted {
        reason: AbortReason,
        detail: String,
    },
    Interrupted,
    /// An allowed empty diff.
    Empty,
}

/// A finished run's report and its renderings, made by the caller from the final meta.json
/// and handed to [`Recorder::finish`] to be written as they are.
#[derive(Debug, Clone)]
pub struct Rendered {
    pub report: Report,
    /// report.md.
    pub markdown: String,
    /// report.sarif, when the run writes one.
    pub sarif: Option<String>,
}

/// A finished run: its report as written, and its final meta.json.
#[derive(Debug, Clone)]
pub struct Finished {
    pub report: Report,
    pub meta: Meta,
    /// The report as report.json and report.md hold it (rendered once, for the files and
    /// for stdout).
    pub written: Written,
}

/// A finished report's renderings written to its run dir: report.json (pretty JSON and a
/// newline, what `--format json` prints: the file itself is copied out) and report.md's text.
#[derive(Debug, Clone)]
pub struct Written {
    pub json: PathBuf,
    pub markdown: String,
}

/// The records of one run dir, from `begin` to `finish`.
#[derive(Debug)]
pub struct Recorder {
    run: RunDir,
    meta: Meta,
    progress: ProgressLog,
    /// A nested run (an iteration's review) reports its progress in its parent's
    /// progress.json and does not end it.
    nested: bool,
}

impl Recorder {
    /// Write the target artefact, brief.md and meta.json (`running`, or `empty`). On failure
    /// the run dir is removed again: a run dir is never left half-written.
    pub fn begin(run: RunDir, start: &Start<'_>) -> Result<Self, RecordError> {
        match Self::write_start(&run, start) {
            Ok(meta) => Ok(Self {
                progress: ProgressLog::start(&run.path, run.id.as_str()),
                run,
                meta,
                nested: false,
            }),
            Err(e) => {
                let _ = std::fs::remove_dir_all(&run.path);
                Err(e)
            }
        }
    }

    /// Begin a nested run in `run`, a dir made by `RunDir::child` of this run's (an
    /// iteration's review in `iterations/<i>`): its live progress goes to this run's
    /// progress.json.
    pub fn begin_nested(&self, run: RunDir, start: &Start<'_>) -> Result<Self, RecordError> {
        match Self::write_start(&run, start) {
            Ok(meta) => Ok(Self {
                progress: self.progress.clone(),
                run,
                meta,
                nested: true,
            }),
            Err(e) => {
                let _ = std::fs::remove_dir_all(&run.path);
                Err(e)
            }
        }
    }

    /// The handle dispatching code reports progress through.
    pub fn progress(&self) -> &ProgressLog {
        &self.progress
    }

    fn write_start(run: &RunDir, start: &Start<'_>) -> Result<Meta, RecordError> {
        let target = start.target;
        let tdir = run.target_dir();
        std::fs::create_dir_all(&tdir).map_err(RecordError::at(&tdir))?;
        let tag_path = match (&target.file_path, &target.artefact) {
            (Some(p), _) => p.clone(),
            (None, Some(a)) => {
                let p = tdir.join(a.name);
                match &a.content {
                    ArtefactContent::Bytes(bytes) => write_record(&p, bytes),
                    ArtefactContent::Patch(spool) => copy_record(spool.path(), &p),
                }
                .map_err(RecordError::at(&p))?;
                p
            }
            (None, None) => tdir.clone(),
        };
        let mut brief = format!(
            "# Context brief\n\nTarget: `{}` ({}, {} file(s), mode {}, type {:?})\n\n",
            target.display,
            target.kind.as_str(),
            target.files.len(),
            target.mode.as_str(),
            target.target_type
        );
        brief.push_str(&target.brief);
        write_record(&run.brief(), brief.as_bytes()).map_err(RecordError::at(run.brief()))?;
        if let Some(c) = &target.context {
            let p = tdir.join(CONTEXT_LIST);
            write_record(&p, c.listing().as_bytes()).map_err(RecordError::at(&p))?;
        }
        let meta = Meta {
            run_id: run.id.to_string(),
            status: if start.empty {
                RunStatus::Empty
            } else {
                RunStatus::Running
            },
            stop_reason: None,
            abort_reason: None,
            abort_detail: None,
            target: MetaTarget {
                kind: target.kind,
                display: target.display.clone(),
                path: tag_path.display().to_string(),
                sha256: target.sha256.clone(),
                sha256_final: None,
                drift: false,
                files: target.files.len(),
                skipped: target.skipped.len(),
            },
            mode: target.mode,
            target_type: target.target_type,
            rounds_planned: start.rounds_planned,
            rounds_completed: 0,
            passes: start.passes,
            model_start: start.tier_start,
            model_current: start.tier_start,
            model_history: vec![],
            arev_version: env!("CARGO_PKG_VERSION").to_string(),
            config_digest: start.config_digest.to_string(),
            repo_inputs: start.repo_inputs.clone(),
            started_at: now(),
            finished_at: None,
            process: ProcessId::current(),
            exit_code: None,
            iterate: None,
            cached_from: None,
            baseline_run_id: None,
            fail_on: Some(start.fail_on),
            context_sha: target.context.as_ref().map(|c| c.sha().to_owned()),
            context: target.context.as_ref().map(|c| MetaContext {
                mode: c.mode(),
                files: c.len(),
                drift: vec![],
            }),
        };
        write_json_atomic(&run.meta(), &meta).map_err(RecordError::at(run.meta()))?;
        Ok(meta)
    }

    pub fn run(&self) -> &RunDir {
        &self.run
    }

    /// meta.json as last recorded (or about to be).
    pub fn meta(&self) -> &Meta {
        &self.meta
    }

    /// Remove the run dir: the run could not be set up after `begin` (e.g. no worktree).
    pub fn discard(self) {
        let _ = std::fs::remove_dir_all(&self.run.path);
    }

    fn write_meta(&self) -> Result<(), RecordError> {
        write_json_atomic(&self.run.meta(), &self.meta).map_err(RecordError::at(self.run.meta()))
    }

    /// A verdict-cache hit: the run whose verdict this one reuses (recorded at `finish`).
    pub fn note_cached_from(&mut self, run_id: &str) {
        self.meta.cached_from = Some(run_id.to_string());
    }

    /// `--baseline`: the run this one is compared with (recorded at `finish`).
    pub fn note_baseline(&mut self, run_id: &str) {
        self.meta.baseline_run_id = Some(run_id.to_string());
    }

    /// An iterate run: record its branch and worktree.
    pub fn record_iterate(&mut self, iterate: MetaIterate) -> Result<(), RecordError> {
        self.meta.iterate = Some(iterate);
        self.write_meta()
    }

    /// Write round-N.json and count the round in meta.json: `completed` when the review goes
    /// on or stopped with it; an aborted or interrupted round is recorded but not counted.
    /// A failed write is logged: the run goes on, its report still comes.
    pub fn record_round(&mut self, rec: &RoundRecord, completed: bool) {
        if let Err(e) = write_compact_record(&self.run.round(rec.round), rec) {
            tracing::error!("cannot write round-{}.json: {e}", rec.round);
        }
        self.meta.model_current = rec.tier;
        self.meta.model_history.push(rec.tier);
        self.meta.rounds_completed = if completed { rec.round } else { rec.round - 1 };
        if let Err(e) = self.write_meta() {
            tracing::error!("cannot update meta.json: {e}");
        }
        let c = &rec.counts;
        self.progress
            .round_recorded(c.novel, c.confirmed, c.debunked);
    }

    /// An iterate run after an iteration: how many are done, and the rounds and tiers of its
    /// latest review (`review`, that review's final meta.json). A failed write is logged.
    pub fn record_iteration(&mut self, completed: u32, review: Option<&Meta>) {
        if let Some(it) = self.meta.iterate.as_mut() {
            it.iterations_completed = completed;
        }
        if let Some(m) = review {
            self.meta.rounds_completed = m.rounds_completed;
            self.meta.model_current = m.model_current;
            self.meta.model_history.clone_from(&m.model_history);
        }
        if let Err(e) = self.write_meta() {
            tracing::error!("cannot update meta.json: {e}");
        }
    }

    /// Re-hash the context files agents read (`reads`, under `root`): the paths whose content
    /// changed since they were read are recorded as `context.drift` in meta.json, and
    /// returned.
    pub fn recheck_context<'a>(
        &mut self,
        root: &std::path::Path,
        reads: impl Iterator<Item = &'a crate::records::ContextRead>,
    ) -> Vec<String> {
        let mut drift = std::collections::BTreeSet::new();
        for r in reads {
            let now = crate::target::read_regular(&root.join(&r.path))
                .map(|b| hex::encode(<sha2::Sha256 as sha2::Digest>::digest(&b)));
            if now.as_deref() != Some(r.sha256.as_str()) {
                drift.insert(r.path.clone());
            }
        }
        let drift: Vec<String> = drift.into_iter().collect();
        if let Some(c) = &mut self.meta.context {
            c.drift.clone_from(&drift);
        }
        drift
    }

    /// Re-pin `target` at the end of the run: records `sha256_final` and `drift`. A target
    /// that can no longer be read counts as drift; its error is returned.
    pub fn repin(&mut self, target: &PinnedTarget) -> Result<(), crate::target::TargetError> {
        match crate::target::repin(target) {
            Ok(sha) => {
                self.meta.target.drift = sha != target.sha256;
                self.meta.target.sha256_final = Some(sha);
                Ok(())
            }
            Err(e) => {
                self.meta.target.drift = true;
                Err(e)
            }
        }
    }

    /// Record how the run ended, let `build` make the report and its renderings from the
    /// final meta, and write them as handed (report.json, summary.json, report.md,
    /// report.sarif when there is one), then meta.json.
    pub fn finish(
        mut self,
        ending: Ending,
        build: impl FnOnce(&Meta) -> Rendered,
    ) -> Result<Finished, RecordError> {
        let meta = &mut self.meta;
        meta.status = match &ending {
            Ending::Complete { .. } => RunStatus::Complete,
            Ending::Aborted { .. } => RunStatus::Aborted,
            Ending::Interrupted => RunStatus::Interrupted,
            Ending::Empty => RunStatus::Empty,
        };
        match ending {
            Ending::Complete { stop_reason } => meta.stop_reason = Some(stop_reason),
            Ending::Aborted { reason, detail } => {
                meta.abort_reason = Some(reason);
                meta.abort_detail = Some(detail);
            }
            Ending::Interrupted | Ending::Empty => {}
        }
        meta.finished_at = Some(now());
        let Rendered {
            mut report,
            markdown,
            sarif,
        } = build(&self.meta);
        // The run's own gate, whatever report the caller built (a replayed one included).
        report.fail_on = self.meta.fail_on;
        let run = &self.run;
        // Streamed into its file (a large report is never a second copy in memory);
        // `--format json` prints the file.
        write_json_atomic(&run.report_json(), &report)
            .map_err(RecordError::at(run.report_json()))?;
        // A digest for `arev runs`; without it (a crash here) listings read report.json.
        write_json_record(&run.summary(), &ReportSummary::of(&report))
            .map_err(RecordError::at(run.summary()))?;
        write_record(&run.report_md(), markdown.as_bytes())
            .map_err(RecordError::at(run.report_md()))?;
        if let Some(sarif) = sarif {
            let p = run.path.join("report.sarif");
            write_record(&p, sarif.as_bytes()).map_err(RecordError::at(&p))?;
        }
        self.write_meta()?;
        if !self.nested {
            self.progress.done();
        }
        Ok(Finished {
            report,
            meta: self.meta,
            written: Written {
                json: run.report_json(),
                markdown,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::fixtures::shard;
    use crate::store::Phase;
    use crate::target::{Artefact, TargetKind};
    use crate::test_support::target;

    fn pinned(root: &std::path::Path) -> PinnedTarget {
        let mut t = target(root, TargetKind::Diff, &[("a.rs", 3)]);
        t.artefact = Some(Artefact::in_memory("diff.patch", b"--- a/a.rs\n".to_vec()));
        t
    }

    fn start(t: &PinnedTarget) -> Start<'_> {
        Start {
            target: t,
            rounds_planned: 3,
            passes: 2,
            tier_start: Tier::Sonnet,
            config_digest: "cfg",
            empty: false,
            repo_inputs: None,
            fail_on: FailOn::High,
        }
    }

    fn round(n: u32, tier: Tier) -> RoundRecord {
        RoundRecord::new(n, tier, "full", 2)
    }

    fn on_disk(run: &RunDir) -> Meta {
        serde_json::from_slice(&std::fs::read(run.meta()).unwrap()).unwrap()
    }

    #[test]
    fn a_run_is_recorded_from_begin_to_finish() {
        let dir = tempfile::tempdir().unwrap();
        let t = pinned(dir.path());
        let run = crate::store::create_run_dir(&dir.path().join("runs"), "diff").unwrap();
        let mut rec = Recorder::begin(run.clone(), &start(&t)).unwrap();
        let meta = on_disk(&run);
        assert_eq!(meta.status, RunStatus::Running);
        assert_eq!(meta.process, ProcessId::current());
        assert!(crate::store::read_progress(&run.path).is_some());
        assert!(meta.target.path.ends_with("target/diff.patch"));
        assert_eq!(
            std::fs::read(run.target_dir().join("diff.patch")).unwrap(),
            b"--- a/a.rs\n"
        );
        assert!(std::fs::read_to_string(run.brief())
            .unwrap()
            .starts_with("# Context brief"));

        rec.record_round(&round(1, Tier::Sonnet), true);
        rec.record_round(&round(2, Tier::Opus), false);
        let meta = on_disk(&run);
        assert_eq!(
            meta.rounds_completed, 1,
            "an unfinished round is not counted"
        );
        assert_eq!(meta.model_history, [Tier::Sonnet, Tier::Opus]);
        assert_eq!(meta.model_current, Tier::Opus);
        assert!(run.round(2).is_file());

        assert!(rec.repin(&t).is_err(), "a.rs does not exist: drift");
        assert!(rec.meta().target.drift);
        let done = rec
            .finish(
                Ending::Aborted {
                    reason: AbortReason::OfftargetHallucination,
                    detail: "d".into(),
                },
                |meta| {
                    let mut report = shard(1, 1, &["a.rs"], meta.status);
                    report.run_id.clone_from(&meta.run_id);
                    Rendered {
                        report,
                        markdown: "# md\n".into(),
                        sarif: Some("{}\n".into()),
                    }
                },
            )
            .unwrap();
        let meta = on_disk(&run);
        assert_eq!(meta, done.meta);
        assert_eq!(meta.status, RunStatus::Aborted);
        assert_eq!(meta.abort_detail.as_deref(), Some("d"));
        assert!(meta.finished_at.is_some());
        assert_eq!(
            done.report.status,
            RunStatus::Aborted,
            "built from the final meta"
        );
        for f in ["report.json", "summary.json", "report.md", "report.sarif"] {
            assert!(run.path.join(f).is_file(), "{f}");
        }
        let read = |f: &str| std::fs::read_to_string(run.path.join(f)).unwrap();
        assert_eq!(read("report.md"), "# md\n", "written as handed");
        assert_eq!(read("report.sarif"), "{}\n");
        assert_eq!(done.written.markdown, "# md\n");
        let on_disk: Report = serde_json::from_str(&read("report.json")).unwrap();
        assert_eq!(on_disk, done.report);
        let progress = crate::store::read_progress(&run.path).unwrap();
        assert_eq!(progress.phase, Phase::Done);
        assert_eq!(progress.counts.rounds, 2);
    }

    #[test]
    fn a_run_that_cannot_begin_leaves_no_run_dir() {
        let dir = tempfile::tempdir().unwrap();
        let t = pinned(dir.path());
        let run = crate::store::create_run_dir(&dir.path().join("runs"), "diff").unwrap();
        // `target` is taken by a file: the artefact cannot be written.
        std::fs::write(run.target_dir(), b"").unwrap();
        let e = Recorder::begin(run.clone(), &start(&t)).unwrap_err();
        assert!(e.to_string().starts_with("cannot write "), "{e}");
        assert!(!run.path.exists());
    }

    #[test]
    fn an_iterate_run_records_its_iterations() {
        let dir = tempfile::tempdir().unwrap();
        let t = pinned(dir.path());
        let run = crate::store::create_run_dir(&dir.path().join("runs"), "diff").unwrap();
        let mut rec = Recorder::begin(run.clone(), &start(&t)).unwrap();
        rec.record_iterate(MetaIterate {
            branch: "b".into(),
            worktree: "w".into(),
            base_commit: "c".into(),
            iterations_completed: 0,
            max_iterations: 5,
        })
        .unwrap();
        let child = run.child("iterations/1").unwrap();
        let mut inner = rec.begin_nested(child, &start(&t)).unwrap();
        assert_eq!(inner.run().id.as_str(), format!("{}/iterations/1", run.id));
        inner.record_round(&round(1, Tier::Opus), true);
        rec.record_iteration(1, Some(inner.meta()));
        assert!(!inner.run().path.join("progress.json").exists());
        let progress = super::super::progress::settled(&run.path, |p| p.counts.rounds > 0);
        assert_eq!(progress.counts.rounds, 1, "the nested review's round");
        let meta = on_disk(&run);
        assert_eq!(meta.iterate.map(|i| i.iterations_completed), Some(1));
        assert_eq!(meta.rounds_completed, 1);
        assert_eq!(meta.model_history, [Tier::Opus]);
    }
}
