//! Child processes and arev's own lifetime: one supervisor for every child arev starts
//! (agents, `--verify`, the Stop hook's review), the orphan reaper (arev as child subreaper),
//! the shutdown signals (SIGINT, SIGTERM, SIGHUP), arev's own non-dumpable flag, and detaching a `--background` run. See
//! docs/architecture.md.
mod detach;
mod dumpable;
mod reaper;
mod signals;
mod spawn;
mod spec;
mod supervise;

pub use detach::{
    announce, become_detached, spawn_detached, wait_for, Spawned, Started, DETACHED_FLAG, LOG_FILE,
};
pub use dumpable::become_undumpable;
pub use reaper::become_subreaper;
pub use signals::{exit_code_after, fired, shutdown_signal, Shutdown};
pub use spec::{Env, Input, Sink, Spec};
pub use supervise::{
    supervise, supervise_blocking, Captured, Ended, Finished, Limits, DRAIN_TIMEOUT,
};
