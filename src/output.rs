//! The only module that prints: the report to stdout, errors and progress to stderr.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::Write;

/// Write the report to stdout. A closed pipe (`arev … | head`) is not an error.
pub fn report(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    if !text.ends_with('\n') {
        let _ = out.write_all(b"\n");
    }
    let _ = out.flush();
}

/// A one-line error on stderr.
pub fn error(msg: &str) {
    eprintln!("arev: error: {msg}");
}

/// A warning on stderr.
pub fn warn(msg: &str) {
    eprintln!("arev: warning: {msg}");
}

/// A progress line on stderr.
pub fn progress(msg: &str) {
    eprintln!("{msg}");
}

/// A Claude Code hook's answer: one JSON object on stdout (docs/architecture.md §16.2).
pub fn hook_response(json: &serde_json::Value) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{json}");
    let _ = out.flush();
}

/// An informational line on stderr (e.g. where iterate mode left its branch).
pub fn note(msg: &str) {
    eprintln!("arev: {msg}");
}

/// A question on stderr (no newline), for interactive prompts on a TTY.
pub fn prompt(msg: &str) {
    eprint!("{msg}");
    let _ = std::io::stderr().flush();
}
