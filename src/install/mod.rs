//! `arev install`: wire arev into an agent's own configuration (today: Claude Code).
mod claude;
mod ordered_json;

pub use claude::{install, uninstall, InstallRecord, Summary};
pub use ordered_json::OJson;
