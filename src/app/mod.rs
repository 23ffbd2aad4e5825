//! Entry points: each subcommand from parsed arguments to an exit code (one file each).
mod background;
mod cancel;
mod doctor;
mod emit;
mod eval;
mod hook;
mod init;
mod install;
mod iterate;
mod merge;
mod publish;
mod report;
mod result;
mod review;
mod run;
mod runs;
mod schema;
mod status;
mod suppress;
mod suppress_pr;

use crate::cli::{Cli, Command};
use crate::exit_codes;
use crate::output;
use clap::{CommandFactory, FromArgMatches};

/// Parse `std::env::args`, run, and return the process exit code.
pub fn main_impl() -> i32 {
    // First of all: nothing arev runs may read its environment (CI secrets) through /proc.
    if let Err(e) = crate::process::become_undumpable() {
        output::warn(&format!("cannot make arev non-dumpable: {e}"));
    }
    // `--version` with the commit the binary was built from.
    let version: &'static str = Box::leak(crate::cli::long_version().into_boxed_str());
    let parsed = Cli::command()
        .version(version)
        .try_get_matches()
        .and_then(|m| Cli::from_arg_matches(&m));
    let cli = match parsed {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() {
                exit_codes::USAGE
            } else {
                exit_codes::OK
            };
            let _ = e.print();
            return code;
        }
    };
    match cli.command {
        Command::Run(args) => {
            init_tracing(args.verbose, args.quiet);
            match publish::preflight(&args).and_then(|()| run::run_command(&args)) {
                // 130 after SIGINT, 143 after SIGTERM, 129 after SIGHUP.
                Ok(code) => crate::process::exit_code_after(code),
                Err(e) => {
                    output::error(&e.to_string());
                    e.exit_code()
                }
            }
        }
        Command::Init(args) => match init::init_command(&args) {
            Ok(()) => exit_codes::OK,
            Err(e) => {
                output::error(&e.to_string());
                e.exit_code()
            }
        },
        Command::Schema(args) => match schema::schema_command(&args) {
            Ok(()) => exit_codes::OK,
            Err(e) => {
                output::error(&e.to_string());
                e.exit_code()
            }
        },
        Command::Hook(args) => hook::hook_command(&args),
        Command::Install(args) => match install::install_command(&args) {
            Ok(()) => exit_codes::OK,
            Err(e) => {
                output::error(&e.to_string());
                e.exit_code()
            }
        },
        Command::Report(args) => finish(report::report_command(&args)),
        Command::Runs(args) => finish(runs::runs_command(&args).map(|()| exit_codes::OK)),
        Command::Merge(args) => finish(merge::merge_command(&args)),
        Command::Publish(args) => finish(publish::publish_command(&args)),
        Command::Eval(args) => finish(eval::eval_command(&args)),
        Command::Status(args) => finish(status::status_command(&args)),
        Command::RunResult(args) => finish(result::result_command(&args)),
        Command::Cancel(args) => finish(cancel::cancel_command(&args)),
        Command::Suppress(args) => finish(suppress::suppress_command(&args)),
        Command::Doctor(args) => finish(doctor::doctor_command(&args)),
    }
}

/// The exit code of a command result; an error is one line on stderr.
fn finish(r: Result<i32, crate::errors::ExpectedError>) -> i32 {
    match r {
        Ok(code) => code,
        Err(e) => {
            output::error(&e.to_string());
            e.exit_code()
        }
    }
}

fn init_tracing(verbose: u8, quiet: bool) {
    let default = match (quiet, verbose) {
        (true, _) => "error",
        (false, 0) => "warn",
        (false, 1) => "info",
        (false, _) => "debug",
    };
    let mut filter = tracing_subscriber::EnvFilter::try_from_env("AREV_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(format!("arev={default}")));
    // The HTTP client's trace level logs the wire, auth header included: never enabled, so
    // that a publish token cannot reach the log whatever AREV_LOG says.
    for d in ["ureq=debug", "ureq_proto=debug"] {
        if let Ok(d) = d.parse() {
            filter = filter.add_directive(d);
        }
    }
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(output::log_writer)
        // Colour only on a colour terminal: never escape codes in a redirected log.
        .with_ansi(output::stderr_color())
        .with_target(false)
        .without_time()
        .try_init();
}
