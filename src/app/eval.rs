//! `arev eval mine|run|compare|map|bench|dispositions`: arguments → the `eval` stages → stdout and an exit code.

use super::emit::cwd;
use crate::cli::{
    EvalArgs, EvalBenchArgs, EvalCommand, EvalCompareArgs, EvalMapArgs, EvalMineArgs, EvalRunArgs,
};
use crate::errors::ExpectedError;
use crate::eval::{
    absolute, check_in_repo, compare, comparison_in, ending, fix_sites, load_cases, mine,
    mine_options, mined_listing, open_repo, prepare_run, progress_line, read_report, render_sites,
    report_in, run_eval, start_line, write_cases, CaseResult, EvalError, Event,
};
use crate::eval::{
    bench_progress, bench_table, run_bench, score_table, BenchEvent, BenchOutcome, BenchPr,
    BenchPrResult,
};
use crate::exit_codes;
use crate::output;
use std::path::PathBuf;

pub(crate) fn eval_command(args: &EvalArgs) -> Result<i32, ExpectedError> {
    let r = match &args.command {
        EvalCommand::Mine(a) => mine_command(a),
        EvalCommand::Run(a) => run_command(a),
        EvalCommand::Compare(a) => compare_command(a),
        EvalCommand::Map(a) => map_command(a),
        EvalCommand::Bench(a) => bench_command(a),
        // Counts read from a forge (the publishing client): no eval stage.
        EvalCommand::Dispositions(a) => return super::suppress_pr::dispositions_command(a),
    };
    Ok(r?)
}

fn io_cwd() -> Result<PathBuf, EvalError> {
    cwd().map_err(|e| EvalError::Usage(e.to_string()))
}

fn mine_command(a: &EvalMineArgs) -> Result<i32, EvalError> {
    let cwd = io_cwd()?;
    let repo = open_repo(&cwd, "mine")?;
    let mined = mine(&repo, &mine_options(a)?)?;
    let out = absolute(&cwd, &a.out);
    write_cases(&mined, &out)?;
    output::report(&mined_listing(&mined, &out));
    Ok(exit_codes::OK)
}

fn run_command(a: &EvalRunArgs) -> Result<i32, EvalError> {
    let (opts, cases) = prepare_run(&io_cwd()?, a)?;
    let quiet = a.quiet;
    let progress = move |event: Event, id: &str, r: Option<&CaseResult>| {
        if let Some(line) = progress_line(event, id, r).filter(|_| !quiet) {
            output::progress(&line);
        }
    };
    if !quiet {
        output::progress(&start_line(cases.len(), opts.jobs, &opts.out_dir));
    }
    let ev = run_eval(&opts, &cases, &progress)?;
    output::report(&report_in(&ev.report, a.format));
    let (code, warning) = ending(&ev, &opts.out_dir);
    if let Some(w) = warning {
        output::warn(&w);
    }
    Ok(code)
}

fn map_command(a: &EvalMapArgs) -> Result<i32, EvalError> {
    let cwd = io_cwd()?;
    let repo = open_repo(&cwd, "map")?;
    let cases = load_cases(&absolute(&cwd, &a.cases))?
        .into_iter()
        .map(|c| check_in_repo(&repo, c))
        .collect::<Result<Vec<_>, _>>()?;
    output::report(&render_sites(&fix_sites(&repo, &cases)?));
    Ok(exit_codes::OK)
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
    )?;
    output::report(&comparison_in(&c, a.format));
    Ok(exit_codes::OK)
}

fn bench_command(a: &EvalBenchArgs) -> Result<i32, EvalError> {
    let (opts, prs, labels) = crate::eval::prepare_bench(&io_cwd()?, a)?;
    let quiet = a.quiet;
    let progress = move |event: BenchEvent, pr: &BenchPr, r: Option<&BenchPrResult>| {
        if let Some(line) = bench_progress(event, pr, r).filter(|_| !quiet) {
            output::progress(&line);
        }
    };
    if !quiet {
        output::progress(&format!(
            "bench: {} pull request(s), {} at a time → {}",
            prs.len(),
            opts.jobs,
            opts.out_dir.display()
        ));
    }
    let mut report = run_bench(&opts, &prs, &progress)?;
    output::report(&bench_table(&report));
    // Every PR gets a result unless Ctrl-C stopped the bench first.
    if !report.not_run.is_empty() {
        output::warn(&format!(
            "eval bench: interrupted: {} pull request(s) not reviewed; the finished ones are \
             kept in {} — run the same command again to resume",
            report.not_run.len(),
            opts.out_dir.display()
        ));
        return Ok(exit_codes::INTERRUPTED);
    }
    if a.score {
        let score = crate::eval::score_bench(&opts, &prs, &report, &labels, quiet)?;
        output::report(&score_table(&score));
        report.score = Some(score);
        crate::eval::write_json(&opts.out_dir.join("bench.json"), &report)?;
    }
    let failed = report
        .prs
        .iter()
        .filter(|r| r.outcome == BenchOutcome::Failed)
        .count();
    if failed > 0 {
        output::warn(&format!(
            "eval bench: {failed} pull request(s) could not be fetched or reviewed (logs in {}); \
             run the same command again to retry them",
            opts.out_dir.join("logs").display()
        ));
        return Ok(exit_codes::ABORTED);
    }
    Ok(exit_codes::OK)
}
