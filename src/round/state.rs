//! One round under way (`RoundState`: its record, the Judge's rulings, where its progress
//! goes) and the review's `Reporter`, which prints the events the rounds emit — progress
//! lines and warnings, on stderr — and keeps the warnings for the report.

use super::{Progress, RoundRecord};
use crate::findings::Ruling;
use crate::store::ProgressLog;

/// What a round tells the user while it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Event {
    /// A progress line (on a TTY or with `AREV_PROGRESS=1`; never with `-q`).
    Progress(String),
    /// A warning: on stderr at once (`arev: warning: …`) and in the report, once per review.
    Warning(String),
    /// An Enthusiast pass lost to faults (docs/contracts.md §19.2): a `warning: …` progress
    /// line, and in the report.
    Degraded(String),
}

/// Where a review's events go: printed as they come, the warnings kept for the report in
/// the order they came.
pub(super) struct Reporter {
    progress: Progress,
    warnings: Vec<String>,
}

impl Reporter {
    pub(super) fn new(progress: Progress) -> Self {
        Self {
            progress,
            warnings: vec![],
        }
    }

    pub(super) fn progress(&self) -> Progress {
        self.progress
    }

    pub(super) fn emit(&mut self, event: Event) {
        match event {
            Event::Progress(line) => self.progress.line(&line),
            Event::Warning(w) => {
                if !self.warnings.contains(&w) {
                    crate::output::warn(&w);
                    self.warnings.push(w);
                }
            }
            Event::Degraded(w) => {
                self.progress.line(&format!("warning: {w}"));
                self.warnings.push(w);
            }
        }
    }

    /// The warnings emitted so far, for the report.
    pub(super) fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }
}

/// One round under way: the record it writes, the Judge's rulings of the record's findings
/// (paired with them once the record is written), and where its progress goes.
pub(super) struct RoundState<'r> {
    pub(super) rec: RoundRecord,
    /// Once the Judge answered (or the round ended without a Judge that should have ruled):
    /// each of `rec.findings`' rulings in order, None = unresolved.
    pub(super) judged: Option<Vec<Option<Ruling>>>,
    /// The reporter its events go to.
    pub(super) out: &'r mut Reporter,
    /// The run's live progress file (each dispatch's state).
    pub(super) live: &'r ProgressLog,
}

impl<'r> RoundState<'r> {
    pub(super) fn new(rec: RoundRecord, out: &'r mut Reporter, live: &'r ProgressLog) -> Self {
        Self {
            rec,
            judged: None,
            out,
            live,
        }
    }

    /// A progress line.
    pub(super) fn line(&mut self, line: String) {
        self.out.emit(Event::Progress(line));
    }

    /// A warning (printed once per review, kept for the report).
    pub(super) fn warn(&mut self, w: String) {
        self.out.emit(Event::Warning(w));
    }

    /// The round's `novel` findings stay unresolved (no Judge ruled on them).
    pub(super) fn unresolved(&mut self, novel: usize) {
        self.judged = Some(vec![None; novel]);
        self.rec.counts.unresolved = novel as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warnings_are_kept_once_in_order_and_degraded_passes_each_time() {
        let mut out = Reporter::new(Progress::disabled());
        out.emit(Event::Warning("a".into()));
        out.emit(Event::Degraded("pass 2 lost".into()));
        out.emit(Event::Warning("a".into()));
        out.emit(Event::Progress("Round 1".into()));
        out.emit(Event::Degraded("pass 2 lost".into()));
        out.emit(Event::Warning("b".into()));
        assert_eq!(
            out.take_warnings(),
            ["a", "pass 2 lost", "pass 2 lost", "b"]
        );
        assert!(out.take_warnings().is_empty());
    }
}
