//! Run-directory persistence (docs/architecture.md §7): run ids, create-or-fail, atomic
//! writes, meta.json, and the `Recorder` that owns a run's records.
mod atomic;
pub mod cache;
mod layout;
mod list;
mod meta;
mod recorder;

pub use atomic::{write_atomic, write_json_atomic};
pub use layout::{add_git_exclude, create_run_dir, default_runs_base, RunDir, RunId};
pub use list::{find_run, list_runs, load_report, load_report_file, LoadRunError, RunSummary};
pub use meta::{Meta, MetaIterate, MetaTarget, RunStatus};
pub use recorder::{Ending, Finished, RecordError, Recorder, Start};
