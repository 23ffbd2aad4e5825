//! A run seen from outside while it runs or after it ended (docs/architecture.md §4.4):
//! which run is meant, its one-screen status, and cancelling it.
mod cancel;
mod select;
mod status;

pub use cancel::{cancel, CancelError, Cancelled};
pub use select::{select_run, SelectError};
pub use status::{fmt_duration, live_status, next_commands, render_started, render_status};
