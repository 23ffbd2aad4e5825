//! Publishing a review to a pull request (GitHub) or merge request (GitLab): payload
//! building and planning (pure), the HTTP client, one adapter per forge, the records kept
//! in the run dir, and one publish attempt from a report.
mod attempt;
mod build;
mod diff;
mod env;
mod error;
mod github;
mod github_talk;
mod gitlab;
mod gitlab_talk;
mod http;
mod keep;
mod links;
mod listing;
mod model;
mod plan;
mod send;
mod since;
mod talk;
mod tally;

pub use attempt::{code_after_failed_publish, describe, find_report, policy, publish_report};
pub use build::{
    build_payload, fp_marker, parse_fp_marker, report_pointer, short_sha, SUMMARY_MARKER,
};
pub use env::{process_env, settings, token_var, EnvLookup, Settings};
pub use error::{PublishError, PublishFailed, ReportCheck};
pub use http::{dry_run_line, RetryPolicy};
pub use keep::kept_note;
pub use listing::{ListState, MAX_LISTED};
pub use model::{
    DismissalRecord, Forge, InlineComment, Payload, PrTarget, PublishRecord, PublishStatus,
};
pub use plan::Published;
pub use send::{dispositions, send, Disposition};
pub use talk::{DismissBy, DismissKind, Dismissal};
pub use tally::{render as render_tally, tally, Row as TallyRow, Tally, Which, UNKNOWN_PANEL};
