//! The records (docs/architecture.md §3, §7): the wire types arev writes to disk, prints
//! and reads back — report.json and summary.json, round-N.json, meta.json, progress.json,
//! outcome.json, the iterate report — and the agents' output schemas they embed. The bottom
//! layer: it imports nothing from the rest of the crate, so that every stage can name what
//! it records and `store` can write what it is handed.
pub mod agent;
pub mod config;
pub mod cost;
pub mod evidence;
pub mod finding;
#[cfg(test)]
pub(crate) mod fixtures;
pub mod iterate;
pub mod meta;
pub mod outcome;
pub mod progress;
pub mod proof;
pub mod report;
pub mod round;
pub mod stop;
pub mod summary;
pub mod target;

pub use agent::*;
pub use config::{ContextMode, FailOn, RepoSource};
pub use cost::{usd4, usd_or_unknown, PRICE_UNKNOWN};
pub use evidence::{Evidence, ProofStatus, RunRecord, SandboxMode};
pub use finding::*;
pub use iterate::*;
pub use meta::*;
pub use outcome::*;
pub use progress::*;
pub use proof::*;
pub use report::*;
pub use round::*;
pub use stop::*;
pub use summary::ReportSummary;
pub use target::*;
