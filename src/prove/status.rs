//! A proof's status from its runs (docs/prove.md "Statuses"): a run that failed, passed, or
//! says nothing (timed out, killed, a sandbox error, a command that could not run), on the
//! reviewed content and on the base.

use super::exec::RunOutcome;
use crate::records::ProofStatus;

/// What one run says about the defect: `Some(true)` it failed, `Some(false)` it passed,
/// `None` nothing — timed out, killed by a signal, the sandbox did not start, the command
/// was not found or not executable (126/127), or no exit code was seen.
pub fn verdict(run: &RunOutcome) -> Option<bool> {
    if run.timed_out || run.signal.is_some() || run.sandbox_error.is_some() {
        return None;
    }
    match run.exit? {
        126 | 127 => None,
        code => Some(code != 0),
    }
}

/// The status of a proof from the run on the reviewed content (`head`) and the run on the
/// base (`base`; `None` when the target has no base). `reproduced`: fails on head and
/// passes on base, or fails with no base; `preexisting`: fails on both; `not_reproduced`:
/// passes on head; `inconclusive`: head says nothing, or head failed and base says nothing.
/// (`not_attempted`, and `unprovable` → `inconclusive`, are the caller's.)
pub fn classify(head: &RunOutcome, base: Option<&RunOutcome>) -> ProofStatus {
    match verdict(head) {
        None => ProofStatus::Inconclusive,
        Some(false) => ProofStatus::NotReproduced,
        Some(true) => match base.map(verdict) {
            None => ProofStatus::Reproduced,
            Some(None) => ProofStatus::Inconclusive,
            Some(Some(true)) => ProofStatus::Preexisting,
            Some(Some(false)) => ProofStatus::Reproduced,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ProofStatus::{Inconclusive, NotReproduced, Preexisting, Reproduced};

    fn exit(code: i32) -> RunOutcome {
        RunOutcome {
            exit: Some(code),
            ..RunOutcome::default()
        }
    }
    fn timed_out() -> RunOutcome {
        RunOutcome {
            timed_out: true,
            signal: Some(15),
            ..RunOutcome::default()
        }
    }
    fn killed(sig: i32) -> RunOutcome {
        RunOutcome {
            signal: Some(sig),
            ..RunOutcome::default()
        }
    }
    fn sandbox_error() -> RunOutcome {
        RunOutcome {
            exit: Some(1),
            sandbox_error: Some("bwrap: Can't find source path".into()),
            ..RunOutcome::default()
        }
    }

    #[test]
    fn fails_on_head_and_passes_on_base_is_reproduced() {
        assert_eq!(classify(&exit(1), Some(&exit(0))), Reproduced);
        assert_eq!(classify(&exit(101), Some(&exit(0))), Reproduced);
    }

    #[test]
    fn fails_with_no_base_is_reproduced() {
        assert_eq!(classify(&exit(1), None), Reproduced);
        assert_eq!(classify(&exit(2), None), Reproduced);
    }

    #[test]
    fn fails_on_both_is_preexisting() {
        assert_eq!(classify(&exit(1), Some(&exit(1))), Preexisting);
        assert_eq!(classify(&exit(1), Some(&exit(3))), Preexisting);
    }

    #[test]
    fn passes_on_head_is_not_reproduced_whatever_the_base() {
        assert_eq!(classify(&exit(0), None), NotReproduced);
        assert_eq!(classify(&exit(0), Some(&exit(1))), NotReproduced);
        assert_eq!(classify(&exit(0), Some(&timed_out())), NotReproduced);
    }

    #[test]
    fn a_head_that_says_nothing_is_inconclusive() {
        for head in [
            timed_out(),
            killed(9),
            killed(6),
            sandbox_error(),
            exit(126),
            exit(127),
        ] {
            assert_eq!(classify(&head, None), Inconclusive, "{head:?}");
            assert_eq!(classify(&head, Some(&exit(0))), Inconclusive, "{head:?}");
            assert_eq!(classify(&head, Some(&exit(1))), Inconclusive, "{head:?}");
        }
        // No exit code seen at all.
        assert_eq!(classify(&RunOutcome::default(), None), Inconclusive);
    }

    #[test]
    fn a_failing_head_with_a_base_that_says_nothing_is_inconclusive() {
        for base in [
            timed_out(),
            killed(9),
            sandbox_error(),
            exit(126),
            exit(127),
        ] {
            assert_eq!(classify(&exit(1), Some(&base)), Inconclusive, "{base:?}");
        }
    }
}
