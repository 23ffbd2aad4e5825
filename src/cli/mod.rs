//! Command line: clap structs that validate shape only (no I/O), one file per subcommand.
mod command;
mod eval;
mod hook;
mod output;
mod publish;
mod report;
mod run;
mod setup;
mod watch;

pub use command::*;
pub use eval::*;
pub use hook::*;
pub use output::*;
pub use publish::*;
pub use report::*;
pub use run::*;
pub use setup::*;
pub use watch::*;

#[cfg(test)]
mod tests;
