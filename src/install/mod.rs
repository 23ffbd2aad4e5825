//! `arev install`: wire arev into an agent's own configuration (today: Claude Code).
mod claude;
mod error;
mod ordered_json;
mod record;

pub use claude::{install, uninstall};
pub use error::InstallError;
pub use ordered_json::OJson;
pub use record::{InstallRecord, Summary};
