//! Configuration: layered `arev.toml` files, `AREV_*` variables and flags → one resolved `Config`.
mod error;
pub mod limits;
mod load;
mod model;
mod prove;
mod template;

pub use error::ConfigError;
pub use load::{agent_key_origins, arev_env, default_toml, load, ConfigSources, ENV_KEYS};
pub use model::*;
pub use prove::parse_bytes;
pub use template::init_text;
