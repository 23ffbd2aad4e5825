//! arev — adversarial multi-agent review orchestrator.
//!
//! Data flow: `cli` (parse) → `resolve` (config + pinned `target` → immutable plan) →
//! `store` (run dir) → `round` (`dispatch` agents → `gates` → `findings` union → Judge →
//! decision) → `report`. Only `dispatch` is async.

pub mod dispatch;
pub mod findings;
pub mod store;
pub mod target;
