//! Command line: clap structs that validate shape only (no I/O).
mod args;
mod watch;

pub use args::*;
pub use watch::*;
