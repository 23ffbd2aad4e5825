//! Configuration: layered `arev.toml` files, `AREV_*` variables and flags → one `Config`, checked into `Settings`.
mod endpoint;
mod error;
pub mod limits;
mod load;
mod model;
mod prove;
mod settings;
mod template;

pub use error::ConfigError;
pub use load::{agent_key_origins, arev_env, default_toml, load, ConfigSources, ENV_KEYS};
pub use model::*;
pub use prove::{parse_bytes, NotASize};
pub use settings::{Budget, HookSettings, ProveSettings, RoleLimits, Settings, Timeouts};
pub use template::init_text;
