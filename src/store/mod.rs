//! Run-directory persistence (SPEC §4): run ids, create-or-fail, atomic writes, meta.json.
mod atomic;
mod layout;
mod list;
mod meta;

pub use atomic::{write_atomic, write_json_atomic};
pub use layout::{add_git_exclude, create_run_dir, default_runs_base, RunDir, RunId};
pub use list::{find_run, list_runs, load_report, load_report_file, LoadRunError, RunSummary};
pub use meta::{Meta, MetaIterate, MetaRepoInputs, MetaTarget, RunStatus};
