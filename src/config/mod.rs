//! Configuration: layered `arev.toml` files, `AREV_*` variables and flags → one resolved `Config`.
mod error;
mod load;
mod model;

pub use error::ConfigError;
pub use load::{load, ConfigSources};
pub use model::*;
