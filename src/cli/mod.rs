//! Command line: clap structs that validate shape only (no I/O).
mod args;
mod setup;
mod watch;

pub use args::*;
pub use setup::*;
pub use watch::*;
