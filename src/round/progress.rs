//! The run's progress lines on stderr (a TTY, or `AREV_PROGRESS=1`; never with `-q`) and
//! the heartbeat's interval.

use std::io::IsTerminal;
use std::time::Duration;

/// How often the heartbeat line is printed while agents run (`AREV_PROGRESS_INTERVAL`, in
/// seconds, overrides it).
const HEARTBEAT: Duration = Duration::from_secs(30);

/// Progress lines on stderr (only on a TTY, never with `-q`), and the heartbeat: every 30 s
/// while agents run, a line with each one's elapsed time and the spend so far — also when
/// stderr is not a terminal, so a slow first byte is never silent (never with `-q`).
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    enabled: bool,
    pub(super) heartbeat: Option<Duration>,
}

impl Progress {
    pub fn new(quiet: bool) -> Self {
        let forced = std::env::var_os("AREV_PROGRESS").is_some_and(|v| v == "1");
        let every = std::env::var("AREV_PROGRESS_INTERVAL")
            .ok()
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s > 0.0)
            .map_or(HEARTBEAT, Duration::from_secs_f64);
        Self {
            enabled: !quiet && (forced || std::io::stderr().is_terminal()),
            heartbeat: (!quiet).then_some(every),
        }
    }

    pub fn disabled() -> Self {
        Self {
            enabled: false,
            heartbeat: None,
        }
    }

    pub fn line(&self, s: &str) {
        if self.enabled {
            crate::output::progress(s);
        }
    }
}
