//! `arev eval` (docs/architecture.md §18): measured review quality on a repository's own
//! history. `mine` turns fix commits into cases (`select` decides which and where the
//! defect was, `code` tells code from comments per language), `cases` reads and validates a case set, `checkout` gives each case a
//! detached checkout of its buggy revision, `run` reviews every case with the real
//! `arev run` and records each result, `score` matches confirmed findings to the expected
//! locations and aggregates, `prove` runs `--prove`'s reproducers at the fix commit, `compare` sets two evaluations side by side, `sites` measures the context map's fix-site recall, `render` prints;
//! `setup` turns the flags into the stages' inputs, `console` says what `arev eval` prints,
//! and `write` writes its files atomically.
mod cases;
mod checkout;
mod code;
mod compare;
mod console;
mod error;
mod mine;
mod model;
mod prove;
mod render;
mod run;
mod score;
mod select;
mod setup;
mod sites;
mod write;

pub use cases::{
    check_in_repo, digest as case_digest, load_cases, validate, LoadedCase, ResolvedCase,
};
pub use checkout::{create as create_checkout, Checkout};
pub use code::{code_lines, measure, syntax_of, CodeLines, Syntax};
pub use compare::compare;
pub use console::{comparison_in, ending, mined_listing, progress_line, report_in, start_line};
pub use error::{CaseRule, CheckoutError, EvalError};
pub use mine::{line_count, mine, write_cases, Considered, MineOptions, Mined};
pub use model::*;
pub use render::{
    recall_line, render_compare_markdown, render_compare_text, render_markdown, render_text,
};
pub use run::{result_path, run_eval, runs_base, Evaluation, Event, RunOptions};
pub use score::{match_location, score, status_of, totals, wilson};
pub use select::{
    case_id, chore_of, expected_ranges, is_code_file, is_test_file, locate, Change, Chore, Content,
    FileFacts, Hunk, Limits, Skip, CHORES, CODE_EXTENSIONS, DEFAULT_FIX_REGEX, DEFAULT_MAX_FILES,
    DEFAULT_MAX_LINES,
};
pub use setup::{absolute, mine_options, open_repo, prepare_run, read_report};
pub use sites::{fix_sites, overall as fix_site_recall, render_sites, FixSites};
pub use write::write_json;
