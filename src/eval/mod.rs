//! `arev eval` (docs/architecture.md §18): measured review quality on a repository's own
//! history. `mine` turns fix commits into cases (`select` decides which and where the
//! defect was, `code` tells code from comments per language), `cases` reads and validates a case set, `checkout` gives each case a
//! detached checkout of its buggy revision, `run` reviews every case with the real
//! `arev run` and records each result, `score` matches confirmed findings to the expected
//! locations and aggregates, `prove` runs `--prove`'s reproducers at the fix commit, `compare` sets two evaluations side by side, `sites` measures the context map's fix-site recall, `render` prints;
//! `bench` reviews the public offline code-review benchmark's PRs (`golden` reads its files,
//! `forge` fetches each PR, `bench_model` is what it writes, `bench_console` what it prints);
//! `setup` turns the flags into the stages' inputs, `interrupt` forwards Ctrl-C to the reviews,
//! `console` says what `arev eval` prints,
//! and `write` writes its files atomically.
mod bench;
mod bench_console;
mod bench_model;
mod bench_score;
mod bench_setup;
mod cache;
mod cases;
mod checkout;
mod code;
mod compare;
mod console;
mod error;
mod forge;
mod golden;
mod interrupt;
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

pub use bench::{candidates_of, pr_result_path, resume_key, run_bench, BenchEvent, BenchOptions};
pub use bench_console::{bench_progress, bench_table, score_table};
pub use bench_model::*;
pub use bench_score::{aggregate, figures, score_bench, tally};
pub use bench_setup::prepare_bench;
pub use cases::{
    check_in_repo, digest as case_digest, load_cases, validate, LoadedCase, ResolvedCase,
};
pub use checkout::{create as create_checkout, Checkout};
pub use code::{code_lines, measure, syntax_of, CodeLines, Syntax};
pub use compare::compare;
pub use console::{comparison_in, ending, mined_listing, progress_line, report_in, start_line};
pub use error::{CaseRule, CheckoutError, EvalError};
pub use forge::{parse_mirror, FetchError, Forge, Revs};
pub use golden::{load_golden, load_labels, parse_pr_url, BenchPr, Golden, PrRef};
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
