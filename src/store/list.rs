//! Reading runs back: `arev runs` (list a runs base, newest first, with the status to show,
//! from meta.json and summary.json)
//! and `arev report` (find a run by directory, id or unique id prefix, and load its
//! report.json — refused while the run is running, or when it was abandoned).

use super::capped::{
    read_capped, read_capped_string, CappedReadError, MAX_RECORD_BYTES, MAX_REPORT_BYTES,
};
use super::layout::SUMMARY_FILE;
use super::state::{liveness, read_meta, read_run, RunState};
use super::{AbortReason, RunStatus, RunStopReason};
use crate::records::{Report, ReportSummary};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// One line of `arev runs --json` (schemas/runs.schema.json holds an array of these).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunSummary {
    pub run_id: String,
    pub run_dir: String,
    /// meta.json's status, except `abandoned` for a run still `running` there whose arev
    /// process is gone. Null when meta.json is missing or unreadable (see `error`).
    pub status: Option<RunState>,
    pub stop_reason: Option<RunStopReason>,
    pub abort_reason: Option<AbortReason>,
    /// The target as given on the command line.
    pub target: Option<String>,
    pub started_at: Option<String>,
    pub finished_at: Option<String>,
    /// Confirmed findings, from summary.json (or report.json for a run dir without one;
    /// null for a running run, or without either).
    pub confirmed: Option<u32>,
    /// `i/n` for a `--shard` run.
    pub shard: Option<String>,
    /// What the run cost in USD, from summary.json (or report.json); null while running or
    /// without either.
    #[serde(default)]
    pub cost_usd: Option<f64>,
    /// Of the run's tokens, those of a model without a known price, which `cost_usd` leaves
    /// out (docs/configuration.md "Budgets and `[prices]`").
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unpriced_tokens: u64,
    /// The run's tokens (null where `cost_usd` is).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u64>,
    /// Why meta.json could not be read.
    pub error: Option<String>,
    /// A verdict-cache hit: the run whose verdict it reuses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_from: Option<String>,
}

/// What `arev runs` shows of a finished run's report.
struct Counts {
    confirmed: u32,
    shard: Option<String>,
    cost_usd: f64,
    tokens: u64,
    unpriced_tokens: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The counts of a finished run: from its summary.json, or — a run dir written before
/// summaries existed, or one whose summary was lost — from report.json. None without
/// either.
fn counts(dir: &Path) -> Option<Counts> {
    if let Ok(text) = read_capped(&dir.join(SUMMARY_FILE), MAX_RECORD_BYTES, "a run record") {
        if let Ok(s) = serde_json::from_slice::<ReportSummary>(&text) {
            return Some(Counts {
                confirmed: s.confirmed,
                shard: s.shard,
                cost_usd: s.cost_usd,
                tokens: s.tokens,
                unpriced_tokens: s.unpriced_tokens,
            });
        }
    }
    let text = read_capped(&dir.join("report.json"), MAX_REPORT_BYTES, "a report").ok()?;
    let r: Report = serde_json::from_slice(&text).ok()?;
    Some(Counts {
        confirmed: r.confirmed.len() as u32,
        shard: r.shard.as_ref().map(|s| format!("{}/{}", s.index, s.count)),
        cost_usd: r.cost.usd,
        tokens: r.cost.tokens,
        unpriced_tokens: r.cost.unpriced_tokens,
    })
}

/// The run dirs under `base` whose meta.json git tracks: committed into the repository
/// (planted), not created by arev, which never commits a run dir. Empty outside git.
fn tracked_by_git(base: &Path, names: &[std::ffi::OsString]) -> Vec<std::ffi::OsString> {
    let Ok(repo) = git2::Repository::discover(base) else {
        return vec![];
    };
    let (Some(workdir), Ok(index)) = (repo.workdir(), repo.index()) else {
        return vec![];
    };
    let (Ok(work), Ok(base)) = (workdir.canonicalize(), base.canonicalize()) else {
        return vec![];
    };
    let Ok(rel) = base.strip_prefix(&work) else {
        return vec![];
    };
    names
        .iter()
        .filter(|n| index.get_path(&rel.join(n).join("meta.json"), 0).is_some())
        .cloned()
        .collect()
}

/// Every run directory arev created under `base`, newest first (by start time, then id):
/// a directory git tracks is planted, not arev's, and never listed. A missing base is an
/// empty list. Reads each run's meta.json and summary.json, never a full report (except for
/// a finished run dir without a summary).
pub fn list_runs(base: &Path) -> std::io::Result<Vec<RunSummary>> {
    let rd = match std::fs::read_dir(base) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(vec![]),
        Err(e) => return Err(e),
    };
    let mut entries = Vec::new();
    for entry in rd {
        let entry = entry?;
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            entries.push(entry);
        }
    }
    let names: Vec<std::ffi::OsString> = entries.iter().map(|e| e.file_name()).collect();
    let planted = tracked_by_git(base, &names);
    let mut out = Vec::new();
    for entry in entries {
        if planted.contains(&entry.file_name()) {
            continue;
        }
        let dir = entry.path();
        let run_id = entry.file_name().to_string_lossy().into_owned();
        let mut s = RunSummary {
            run_id,
            run_dir: dir.display().to_string(),
            status: None,
            stop_reason: None,
            abort_reason: None,
            target: None,
            started_at: None,
            finished_at: None,
            confirmed: None,
            shard: None,
            cost_usd: None,
            unpriced_tokens: 0,
            tokens: None,
            error: None,
            cached_from: None,
        };
        match read_meta(&dir) {
            Ok(m) => {
                s.status = Some(RunState::derive(m.status, liveness(&m)));
                if m.status != RunStatus::Running {
                    if let Some(c) = counts(&dir) {
                        s.confirmed = Some(c.confirmed);
                        s.shard = c.shard;
                        s.cost_usd = Some(c.cost_usd);
                        s.tokens = Some(c.tokens);
                        s.unpriced_tokens = c.unpriced_tokens;
                    }
                }
                s.stop_reason = m.stop_reason;
                s.abort_reason = m.abort_reason;
                s.target = Some(m.target.display);
                s.started_at = Some(m.started_at);
                s.finished_at = m.finished_at;
                s.cached_from = m.cached_from;
            }
            Err(e) => s.error = Some(e.to_string()),
        }
        out.push(s);
    }
    out.sort_by(|a, b| {
        (b.started_at.as_deref(), b.run_id.as_str()).cmp(&(a.started_at.as_deref(), &a.run_id))
    });
    Ok(out)
}

/// Why a run cannot be re-rendered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoadRunError {
    #[error("no run `{id}` under {base}")]
    NotFound { id: String, base: String },
    #[error("`{id}` matches {n} runs under {base}; give more of the id")]
    Ambiguous { id: String, n: usize, base: String },
    #[error(
        "{0}: the run is not finished (status running); wait for it, or look at its round-N.json"
    )]
    NotFinished(String),
    #[error(
        "{path}: the run was abandoned: its arev process (pid {pid}) is gone and it never finished, so there is no report; its round-N.json files hold what was done"
    )]
    Abandoned { path: String, pid: u32 },
    #[error("{path}: {message}")]
    Corrupt { path: String, message: String },
}

/// The run directory named by `arg`: an existing directory, else a run id (or unique prefix
/// of one) under `base`.
pub fn find_run(arg: &str, base: &Path) -> Result<PathBuf, LoadRunError> {
    let direct = Path::new(arg);
    if direct.is_dir() && (direct.join("meta.json").exists() || direct.join("report.json").exists())
    {
        return Ok(direct.to_path_buf());
    }
    let exact = base.join(arg);
    if !arg.contains('/') && exact.is_dir() {
        return Ok(exact);
    }
    let not_found = || LoadRunError::NotFound {
        id: arg.to_string(),
        base: base.display().to_string(),
    };
    if arg.is_empty() || arg.contains('/') {
        return Err(not_found());
    }
    let matches: Vec<PathBuf> = std::fs::read_dir(base)
        .map_err(|_| not_found())?
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with(arg))
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    match matches.len() {
        0 => Err(not_found()),
        1 => Ok(matches[0].clone()),
        n => Err(LoadRunError::Ambiguous {
            id: arg.to_string(),
            n,
            base: base.display().to_string(),
        }),
    }
}

/// The report of the finished run in `dir`.
pub fn load_report(dir: &Path) -> Result<Report, LoadRunError> {
    let shown = dir.display().to_string();
    let view = read_run(dir);
    match (view.state, &view.meta) {
        (Some(RunState::Abandoned), Ok(m)) => {
            return Err(LoadRunError::Abandoned {
                path: shown,
                pid: m.process.map_or(0, |p| p.pid),
            })
        }
        (Some(RunState::Running), _) => return Err(LoadRunError::NotFinished(shown)),
        _ => {}
    }
    let p = dir.join("report.json");
    let text = match read_report_text(&p) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let why = match read_meta(dir) {
                Ok(m) => format!(
                    "no report.json (meta.json says status {})",
                    m.status.as_str()
                ),
                Err(m) => format!("no report.json, and {m}"),
            };
            return Err(LoadRunError::Corrupt {
                path: shown,
                message: why,
            });
        }
        Err(e) => {
            return Err(LoadRunError::Corrupt {
                path: p.display().to_string(),
                message: e.to_string(),
            })
        }
    };
    parse_report(&p, &text)
}

/// `p` read as UTF-8 under [`MAX_REPORT_BYTES`]; a larger file is refused after reading one
/// byte past the cap.
fn read_report_text(p: &Path) -> std::io::Result<String> {
    read_capped_string(p, MAX_REPORT_BYTES, "a report").map_err(CappedReadError::into_io)
}

/// Only the version of a report (read before the rest, so that another version is named
/// as such rather than as a missing field).
#[derive(Deserialize)]
struct VersionOnly {
    schema_version: Option<u64>,
}

fn parse_report(p: &Path, text: &str) -> Result<Report, LoadRunError> {
    if let Ok(VersionOnly {
        schema_version: Some(v),
    }) = serde_json::from_str::<VersionOnly>(text)
    {
        if v != u64::from(crate::records::report::SCHEMA_VERSION) {
            return Err(LoadRunError::Corrupt {
                path: p.display().to_string(),
                message: format!(
                    "schema_version {v} is not {} (this arev's report version)",
                    crate::records::report::SCHEMA_VERSION
                ),
            });
        }
    }
    let report: Report = serde_json::from_str(text).map_err(|e| LoadRunError::Corrupt {
        path: p.display().to_string(),
        message: format!("not a valid arev report: {e}"),
    })?;
    if report.status == RunStatus::Running {
        return Err(LoadRunError::NotFinished(p.display().to_string()));
    }
    Ok(report)
}

/// A report.json given as a file (outside its run dir, or written by `arev merge`).
pub fn load_report_file(p: &Path) -> Result<Report, LoadRunError> {
    let text = read_report_text(p).map_err(|e| LoadRunError::Corrupt {
        path: p.display().to_string(),
        message: e.to_string(),
    })?;
    parse_report(p, &text)
}
