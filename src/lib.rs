//! arev — adversarial multi-agent review orchestrator.
//!
//! Data flow: `cli` (parse) → `resolve` (config + pinned `target` → immutable `RunPlan`) →
//! `store` (run dir) → `round` (`dispatch` agents → `gates` → `findings` union → Judge →
//! decision) → `report`. `review` composes one review (its records begun and finished by
//! `store::Recorder`), `iterate` loops review → fix around it, `app` maps each subcommand to
//! an exit code. Only `dispatch` and the `process` supervisor under it (and the drivers
//! awaiting them) are async; merging, deciding and rendering are plain functions. What a
//! run writes and reads back (report.json, round-N.json, meta.json, …) is defined in
//! `records`, the bottom layer; no module imports one above it (docs/architecture.md §3.1).
//! The design, module by module, is docs/architecture.md.

mod app;
pub mod backends;
pub mod cli;
pub mod config;
pub mod dispatch;
pub mod errors;
pub mod eval;
pub mod exit_codes;
pub mod findings;
pub mod gates;
pub mod hook;
pub mod install;
pub mod iterate;
mod output;
pub mod preflight;
pub mod process;
pub mod prove;
pub mod publish;
pub mod records;
pub mod report;
pub mod resolve;
pub mod review;
pub mod round;
pub mod schema;
pub mod store;
pub mod target;
#[cfg(test)]
mod test_support;
pub mod watch;
pub mod xdg;

pub use app::main_impl;
