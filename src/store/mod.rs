//! Run-directory persistence (docs/architecture.md §7): run ids, create-or-fail, atomic
//! writes, meta.json, the `Recorder` that owns a run's records (progress.json included), and
//! reading a run back with its derived status.
mod atomic;
pub mod cache;
mod capped;
mod clock;
mod exit;
mod layout;
mod list;
mod live;
mod process;
mod progress;
mod prune;
mod recorder;
mod state;

pub use crate::records::meta::{
    Meta, MetaContext, MetaIterate, MetaRepoInputs, MetaTarget, ProcessId,
};
pub use crate::records::progress::{
    DispatchState, Phase, ProgressCounts, RunProgress, RunningAgent, Spend,
};
pub use crate::records::stop::{AbortReason, RunStatus, RunStopReason};
pub use atomic::{
    copy_atomic, copy_record, write_atomic, write_compact_record, write_json_atomic,
    write_json_record, write_record,
};
pub use capped::{
    read_capped, read_capped_string, CappedReadError, MAX_LOG_BYTES, MAX_RECORD_BYTES,
    MAX_REPORT_BYTES,
};
pub use exit::record_exit_code;
pub use layout::{
    add_git_exclude, check_real_dirs, create_run_dir, default_runs_base, RunDir, RunDirsError,
    RunId, SUMMARY_FILE,
};
pub use list::{find_run, list_runs, load_report, load_report_file, LoadRunError, RunSummary};
pub use live::{
    agent_elapsed_ms, fmt_duration, heartbeat_line, running_agents, spent_line, Heartbeat,
};
pub use process::Liveness;
pub use progress::{read_progress, ProgressLog};
pub use prune::{age, prune_runs};
pub use recorder::{
    Ending, Finished, RecordError, Recorder, Rendered, Start, Written, CONTEXT_LIST,
};
pub use state::{liveness, read_run, MetaReadError, RunState, RunView};
