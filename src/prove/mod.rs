//! Proof (docs/prove.md): running a Prover's reproducer where it can reach nothing — the
//! bubblewrap sandbox and its preflight, one supervised run with its output tail, and the
//! status a proof gets from its runs.
mod cleanup;
mod error;
mod exec;
mod sandbox;
mod scratch;
mod status;

pub use crate::backends::find_bwrap;
pub use crate::records::{Evidence, ProofStatus, RunRecord, SandboxMode};
pub use cleanup::remove_tree;
pub use error::ProveError;
pub use exec::{run, RunOutcome, OUTPUT_TAIL_BYTES};
pub use sandbox::{preflight, SandboxSpec};
pub use scratch::{copy_files, Rejected, Scratch, ScratchError, MAX_PROOF_FILE, MAX_PROOF_FILES};
pub use status::{classify, verdict};
