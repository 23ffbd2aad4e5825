//! `arev eval mine|run|compare`: arguments → the `eval` stages → stdout and an exit code.

use super::emit::cwd;
use crate::cli::{EvalArgs, EvalCommand, EvalCompareArgs, EvalFormat, EvalMineArgs, EvalRunArgs};
use crate::config::{load, ConfigSources};
use crate::errors::ExpectedError;
use crate::eval::{
    check_in_repo, compare, load_cases, mine, render_compare_markdown, render_compare_text,
    render_markdown, render_text, run_eval, write_json, CaseResult, EvalError, EvalReport, Event,
    Limits, MineOptions, RunOptions, DEFAULT_FIX_REGEX,
};
use crate::exit_codes;
use crate::output;
use std::path::{Path, PathBuf};

pub(crate) fn eval_command(args: &EvalArgs) -> Result<i32, ExpectedError> {
    let r = match &args.command {
        EvalCommand::Mine(a) => mine_command(a),
        EvalCommand::Run(a) => run_command(a),
        EvalCommand::Compare(a) => compare_command(a),
    };
    r.map_err(|e| match e {
        EvalError::Write { path, source } => ExpectedError::Write { path, source },
        EvalError::Config(c) => ExpectedError::Config(c),
        other => ExpectedError::Usage(other.to_string()),
    })
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn absolute(cwd: &Path, p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    }
}

fn io_cwd() -> Result<PathBuf, EvalError> {
    cwd().map_err(|e| EvalError::Usage(e.to_string()))
}

fn open_repo(cwd: &Path, what: &str) -> Result<git2::Repository, EvalError> {
    git2::Repository::discover(cwd).map_err(|_| {
        EvalError::Usage(format!(
            "arev eval {what} needs a git repository ({} is not in one)",
            cwd.display()
        ))
    })
}

fn mine_command(a: &EvalMineArgs) -> Result<i32, EvalError> {
    let cwd = io_cwd()?;
    let repo = open_repo(&cwd, "mine")?;
    let regex = regex::RegexBuilder::new(a.grep.as_deref().unwrap_or(DEFAULT_FIX_REGEX))
        .case_insensitive(true)
        .build()
        .map_err(|e| EvalError::Usage(format!("--grep: {}", one_line(&e.to_string()))))?;
    let paths = if a.paths.is_empty() {
        None
    } else {
        let mut b = globset::GlobSetBuilder::new();
        for g in &a.paths {
            let glob = globset::GlobBuilder::new(g)
                .literal_separator(true)
                .build()
                .map_err(|e| EvalError::Usage(format!("--paths {g}: {e}")))?;
            b.add(glob);
        }
        Some(
            b.build()
                .map_err(|e| EvalError::Usage(format!("--paths: {e}")))?,
        )
    };
    let opts = MineOptions {
        since: a.since.clone(),
        regex,
        max: a.max as usize,
        paths,
        limits: Limits {
            max_files: a.max_files as usize,
            max_lines: a.max_lines as usize,
        },
    };
    let mined = mine(&repo, &opts)?;
    let out = absolute(&cwd, &a.out);
    std::fs::create_dir_all(&out).map_err(|e| EvalError::write(&out, e))?;
    let mut text = String::new();
    for c in &mined.considered {
        let short = &c.commit[..c.commit.len().min(12)];
        match &c.result {
            Ok(case) => {
                write_json(&out.join(format!("{}.json", case.id)), case)?;
                let locs: Vec<String> = case
                    .expected
                    .iter()
                    .map(|e| format!("{}:{}-{}", e.file, e.start, e.end))
                    .collect();
                text.push_str(&format!(
                    "case {}  {}  — {}\n",
                    case.id,
                    locs.join(", "),
                    c.subject
                ));
            }
            Err(skip) => {
                text.push_str(&format!("skip {short}  {skip}  — {}\n", c.subject));
            }
        }
    }
    let n = mined.cases().count();
    text.push_str(&format!(
        "mined {n} case(s) from {} commit(s) whose message matched, of {} walked → {}\n",
        mined.considered.len(),
        mined.walked,
        out.display()
    ));
    output::report(&text);
    Ok(exit_codes::OK)
}

fn run_command(a: &EvalRunArgs) -> Result<i32, EvalError> {
    let cwd = io_cwd()?;
    let repo = open_repo(&cwd, "run")?;
    let (root, git_dir) = crate::resolve::discover_root(&cwd);
    let git_dir = git_dir.unwrap_or_else(|| repo.commondir().to_path_buf());
    let config = a.config.as_ref().map(|p| absolute(&cwd, p));
    if let Some(p) = &config {
        if !p.is_file() {
            return Err(EvalError::Usage(format!(
                "--config {}: no such file",
                p.display()
            )));
        }
    }
    let (_, config_digest) = load(&ConfigSources::discover(&root, config.clone()))?;
    let cases_dir = absolute(&cwd, &a.cases);
    let cases = load_cases(&cases_dir)?
        .into_iter()
        .map(|c| check_in_repo(&repo, c))
        .collect::<Result<Vec<_>, _>>()?;
    let out_dir = match &a.out {
        Some(o) => absolute(&cwd, o),
        None => root.join(".arev").join("eval").join(&config_digest[..12]),
    };
    if out_dir.starts_with(root.join(".arev")) {
        crate::store::add_git_exclude(&git_dir)
            .map_err(|e| EvalError::write(git_dir.join("info/exclude"), e))?;
    }
    let exe = std::env::current_exe()
        .map_err(|e| EvalError::Usage(format!("cannot find the arev executable: {e}")))?;
    let opts = RunOptions {
        cases_dir,
        out_dir,
        config,
        jobs: a.jobs as usize,
        tolerance: a.tolerance,
        exe,
        user_root: root,
        git_dir,
        config_digest,
    };
    let total = cases.len();
    let quiet = a.quiet;
    let progress = move |event: Event, id: &str, r: Option<&CaseResult>| {
        if quiet {
            return;
        }
        match (event, r) {
            (Event::Started, _) => output::progress(&format!("eval: {id}: reviewing")),
            (Event::Resumed, Some(r)) => output::progress(&format!(
                "eval: {id}: {} (kept from an earlier run)",
                r.status.as_str()
            )),
            (Event::Finished, Some(r)) => output::progress(&format!(
                "eval: {id}: {} — {} unmatched, ${:.4}, {:.1}s{}",
                r.status.as_str(),
                r.unmatched,
                r.cost_usd,
                r.wall_ms as f64 / 1000.0,
                r.detail
                    .as_deref()
                    .filter(|_| !r.status.scored() || r.status == crate::eval::CaseStatus::Aborted)
                    .map(|d| format!(" ({d})"))
                    .unwrap_or_default()
            )),
            _ => {}
        }
    };
    if !quiet {
        output::progress(&format!(
            "eval: {total} case(s), up to {} at once → {}",
            opts.jobs,
            opts.out_dir.display()
        ));
    }
    let ev = run_eval(&opts, &cases, &progress)?;
    print_report(&ev.report, a.format);
    if ev.interrupted {
        output::warn(&format!(
            "interrupted: {} case(s) not run; the finished ones are kept in {} — run again to resume",
            ev.report.not_run.len(),
            opts.out_dir.display()
        ));
        return Ok(exit_codes::INTERRUPTED);
    }
    if ev.report.totals.failed > 0 {
        output::warn(&format!(
            "{} case(s) could not be reviewed (see {}/logs/)",
            ev.report.totals.failed,
            opts.out_dir.display()
        ));
        return Ok(exit_codes::ABORTED);
    }
    Ok(exit_codes::OK)
}

fn print_report(r: &EvalReport, format: EvalFormat) {
    match format {
        EvalFormat::Text => output::report(&render_text(r)),
        EvalFormat::Markdown => output::report(&render_markdown(r)),
        EvalFormat::Json => output::report(&serde_json::to_string_pretty(r).unwrap_or_default()),
    }
}

fn read_report(p: &Path) -> Result<EvalReport, EvalError> {
    let bad = |message: String| EvalError::BadReport {
        path: p.to_path_buf(),
        message,
    };
    let text = std::fs::read_to_string(p).map_err(|e| bad(e.to_string()))?;
    serde_json::from_str(&text).map_err(|e| bad(format!("not an arev eval.json: {e}")))
}

fn compare_command(a: &EvalCompareArgs) -> Result<i32, EvalError> {
    let ra = read_report(&a.a)?;
    let rb = read_report(&a.b)?;
    let c = compare(
        &ra,
        &a.a.display().to_string(),
        &rb,
        &a.b.display().to_string(),
        a.tolerance,
    )
    .map_err(EvalError::Usage)?;
    match a.format {
        EvalFormat::Text => output::report(&render_compare_text(&c)),
        EvalFormat::Markdown => output::report(&render_compare_markdown(&c)),
        EvalFormat::Json => output::report(&serde_json::to_string_pretty(&c).unwrap_or_default()),
    }
    Ok(exit_codes::OK)
}
