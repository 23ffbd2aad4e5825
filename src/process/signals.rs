//! The signals that stop a run — SIGINT, SIGTERM and SIGHUP, all handled the same way — and
//! the exit code each one leaves (128 + the signal number: 130, 143, 129).

use crate::exit_codes;
use std::future::Future;
use std::sync::atomic::{AtomicU8, Ordering};
use tokio::signal::unix::{signal, SignalKind};

/// A signal asking arev to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shutdown {
    /// SIGINT (Ctrl-C).
    Interrupt,
    /// SIGTERM (`kill`, CI cancellation, a hook timeout).
    Terminate,
    /// SIGHUP (the terminal went away).
    HangUp,
}

impl Shutdown {
    pub fn name(self) -> &'static str {
        match self {
            Self::Interrupt => "SIGINT",
            Self::Terminate => "SIGTERM",
            Self::HangUp => "SIGHUP",
        }
    }

    /// The exit code of a run this signal interrupted.
    pub fn exit_code(self) -> i32 {
        match self {
            Self::Interrupt => exit_codes::INTERRUPTED,
            Self::Terminate => exit_codes::TERMINATED,
            Self::HangUp => exit_codes::HANGUP,
        }
    }

    fn code(self) -> u8 {
        match self {
            Self::Interrupt => 1,
            Self::Terminate => 2,
            Self::HangUp => 3,
        }
    }

    fn from_code(code: u8) -> Option<Self> {
        match code {
            1 => Some(Self::Interrupt),
            2 => Some(Self::Terminate),
            3 => Some(Self::HangUp),
            _ => None,
        }
    }
}

/// The first shutdown signal this process received (0 = none yet).
static FIRED: AtomicU8 = AtomicU8::new(0);

/// Start listening for SIGINT, SIGTERM and SIGHUP. The handlers are installed before this
/// returns (from then on none of the three kills arev); the future resolves to the first
/// one that arrives, which is also remembered for [`exit_code_after`]. `None` when the
/// runtime shut down first. Call inside a tokio runtime.
pub fn shutdown_signal() -> std::io::Result<impl Future<Output = Option<Shutdown>>> {
    let mut int = signal(SignalKind::interrupt())?;
    let mut term = signal(SignalKind::terminate())?;
    let mut hup = signal(SignalKind::hangup())?;
    Ok(async move {
        let fired = tokio::select! {
            Some(()) = int.recv() => Shutdown::Interrupt,
            Some(()) = term.recv() => Shutdown::Terminate,
            Some(()) = hup.recv() => Shutdown::HangUp,
            else => return None,
        };
        let _ = FIRED.compare_exchange(0, fired.code(), Ordering::SeqCst, Ordering::SeqCst);
        Some(fired)
    })
}

/// The shutdown signal this process received, if any.
pub fn fired() -> Option<Shutdown> {
    Shutdown::from_code(FIRED.load(Ordering::SeqCst))
}

/// A command's exit code, adjusted to the signal that interrupted it: an interrupted run
/// (`INTERRUPTED`) exits 128 + the signal's number (143 for SIGTERM, 129 for SIGHUP).
pub fn exit_code_after(code: i32) -> i32 {
    match fired() {
        Some(s) if code == exit_codes::INTERRUPTED => s.exit_code(),
        _ => code,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_are_128_plus_the_signal_number() {
        use nix::sys::signal::Signal;
        for (s, sig) in [
            (Shutdown::Interrupt, Signal::SIGINT),
            (Shutdown::Terminate, Signal::SIGTERM),
            (Shutdown::HangUp, Signal::SIGHUP),
        ] {
            assert_eq!(s.exit_code(), 128 + sig as i32, "{}", s.name());
            assert_eq!(Shutdown::from_code(s.code()), Some(s));
        }
        assert_eq!(Shutdown::from_code(0), None);
    }
}
