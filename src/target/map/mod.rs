//! The context map (docs/architecture.md §5.3): which symbols the target defines or changes
//! and where each is defined, used and tested elsewhere in the context scope — a pointer,
//! computed without a model, the same `<context_map>` block for every role and round.
mod build;
mod render;
mod search;
mod symbols;

pub use build::{build, for_target, Subject, SEARCHED};
pub use render::{ContextMap, MAP_BYTES, MAP_REFERENCES};
pub use search::Kind;
pub use symbols::{definition, is_test_path};
