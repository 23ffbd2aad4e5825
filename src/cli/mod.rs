//! Command line: clap structs that validate shape only (no I/O).
mod args;

pub use args::*;
