//! What the commands that print a report share (`run`, `report`, `merge`, `result`): where
//! the report goes (`OutputArgs`, `Format`) and the `--fail-on` values. Parsing only.

use crate::config::FailOn;
use clap::{Args, ValueEnum};
use std::path::PathBuf;

/// Output formats of the report on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Human summary.
    Text,
    /// report.json (schemas/report.schema.json).
    Json,
    /// Markdown, as for a PR comment.
    Markdown,
    /// SARIF 2.1.0, for GitHub code scanning and other SARIF consumers.
    Sarif,
    /// GitHub Actions workflow commands (`::error file=…,line=…::…` annotations).
    Github,
}

/// Where the report goes: stdout in `--format`, plus the files asked for (shared by `run`,
/// `report` and `merge`).
#[derive(Debug, Clone, Args)]
pub struct OutputArgs {
    /// Report format on stdout (given twice, the last one counts).
    #[arg(long, value_enum, default_value_t = Format::Text, overrides_with = "format")]
    pub format: Format,
    /// Also write the report to FILE: JSON for `.json`, SARIF for `.sarif`, Markdown for `.md`,
    /// else in --format.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Also write the SARIF 2.1.0 report to FILE (for `run`: also `report.sarif` in the run dir).
    #[arg(long, value_name = "FILE")]
    pub sarif: Option<PathBuf>,
    /// Also write the Markdown report to FILE.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
}

/// `--fail-on` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FailOnArg {
    Critical,
    High,
    Medium,
    Low,
    Never,
}

impl From<FailOnArg> for FailOn {
    fn from(f: FailOnArg) -> FailOn {
        match f {
            FailOnArg::Critical => FailOn::Critical,
            FailOnArg::High => FailOn::High,
            FailOnArg::Medium => FailOn::Medium,
            FailOnArg::Low => FailOn::Low,
            FailOnArg::Never => FailOn::Never,
        }
    }
}
