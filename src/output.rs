//! The only module that prints: the report to stdout, errors and progress to stderr.
//!
//! Nothing here panics on a closed or broken stream (`arev … 2>&-`, a log reader that went
//! away, a full disk behind a redirect): a failed write to stderr switches logging off for
//! the rest of the process, and the run goes on to finish and record itself.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once a write to stderr failed: nothing more is written there.
static STDERR_GONE: AtomicBool = AtomicBool::new(false);

/// Write `bytes` to stderr unless it failed before; a failure stops all further logging.
fn to_stderr(bytes: &[u8]) {
    if STDERR_GONE.load(Ordering::Relaxed) {
        return;
    }
    let mut err = std::io::stderr().lock();
    if err.write_all(bytes).and_then(|()| err.flush()).is_err() {
        STDERR_GONE.store(true, Ordering::Relaxed);
    }
}

/// Text from outside (a repository, an agent, a forge, a run dir) made inert for a person's
/// terminal or CI log: every control character but the newline (ESC, BEL, CR, C1 controls
/// such as CSI/OSC, DEL) shown as `\u{..}`, and a line that would start with `::` (a GitHub
/// Actions workflow command, even after spaces) gets a backslash before it. The one
/// escaping helper: the stderr lines below, the terminal report, `runs`/`status`, `eval`
/// and annotations all go through it.
pub fn inert(s: &str) -> std::borrow::Cow<'_, str> {
    let clean = |l: &str| !l.trim_start().starts_with("::");
    if !s.chars().any(|c| c.is_control() && c != '\n') && s.split('\n').all(clean) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for (k, l) in s.split('\n').enumerate() {
        if k > 0 {
            out.push('\n');
        }
        if !clean(l) {
            out.push('\\');
        }
        for c in l.chars() {
            if c.is_control() {
                out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
            } else {
                out.push(c);
            }
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Serialized JSON made inert for a terminal: serde_json escapes C0 controls, not DEL and
/// the C1 controls (U+007F–U+009F, e.g. U+009B, a one-character CSI); they are written as
/// JSON escapes (`\u009b`), which a JSON reader reads back as the same character. Such a
/// character can only occur inside a JSON string, so the result is the same JSON value.
pub fn inert_json(json: &str) -> std::borrow::Cow<'_, str> {
    let c1 = |c: char| ('\u{7f}'..='\u{9f}').contains(&c);
    if !json.chars().any(c1) {
        return std::borrow::Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if c1(c) {
            out.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// [`inert`] on one line: the newline escaped too (a table cell, an annotation's title).
pub fn inert_line(s: &str) -> std::borrow::Cow<'_, str> {
    if s.contains('\n') {
        std::borrow::Cow::Owned(inert(&s.replace('\n', "\\u{a}")).into_owned())
    } else {
        inert(s)
    }
}

fn line(prefix: &str, msg: &str) {
    let msg = inert(msg);
    let mut s = String::with_capacity(prefix.len() + msg.len() + 1);
    s.push_str(prefix);
    s.push_str(&msg);
    s.push('\n');
    to_stderr(s.as_bytes());
}

/// Whether `stream` gets ANSI colour: a terminal, `NO_COLOR` unset or empty
/// (https://no-color.org), `TERM` not `dumb`. Files and pipes never do.
fn color_for(is_terminal: bool) -> bool {
    is_terminal
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        && std::env::var_os("TERM").is_none_or(|t| t != "dumb")
}

/// Whether the report on stdout may carry ANSI colour.
pub fn stdout_color() -> bool {
    use std::io::IsTerminal;
    color_for(std::io::stdout().is_terminal())
}

/// Whether log lines on stderr may carry ANSI colour.
pub fn stderr_color() -> bool {
    use std::io::IsTerminal;
    color_for(std::io::stderr().is_terminal())
}

/// Write the report to stdout. A closed pipe (`arev … | head`) is not an error.
pub fn report(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    if !text.ends_with('\n') {
        let _ = out.write_all(b"\n");
    }
    let _ = out.flush();
}

/// Copy the report in the file `path` (which ends with a newline) to stdout. Err only when
/// the file cannot be opened; a closed pipe is not an error. (`io::copy` lets the kernel
/// move the bytes on Linux: `copy_file_range`, `sendfile` or `splice`.)
pub fn report_file(path: &std::path::Path) -> std::io::Result<()> {
    let mut file = std::fs::File::open(path)?;
    let mut out = std::io::stdout().lock();
    let _ = out.flush();
    let _ = std::io::copy(&mut file, &mut out);
    let _ = out.flush();
    Ok(())
}

/// An error on stderr: one line, or one prefixed line per problem when `msg` lists several
/// (the preflight's missing agent CLIs).
pub fn error(msg: &str) {
    for l in msg.lines() {
        line("arev: error: ", l);
    }
    if msg.is_empty() {
        line("arev: error: ", msg);
    }
}

/// A warning on stderr.
pub fn warn(msg: &str) {
    line("arev: warning: ", msg);
}

/// A progress line on stderr.
pub fn progress(msg: &str) {
    line("", msg);
}

/// A Claude Code hook's answer: one JSON object on stdout (docs/architecture.md §16.2).
pub fn hook_response(json: &serde_json::Value) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{json}");
    let _ = out.flush();
}

/// An informational line on stderr (e.g. where iterate mode left its branch).
pub fn note(msg: &str) {
    line("arev: ", msg);
}

/// A question on stderr (no newline), for interactive prompts on a TTY.
pub fn prompt(msg: &str) {
    to_stderr(msg.as_bytes());
}

/// The writer tracing logs go through: stderr while it takes writes, then nothing (a
/// failed write is swallowed and switches logging off, never a panic or an error).
pub struct LogWriter;

impl Write for LogWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        to_stderr(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// `MakeWriter` for `tracing_subscriber::fmt().with_writer(output::log_writer)`.
pub fn log_writer() -> LogWriter {
    LogWriter
}

#[cfg(test)]
mod inert_tests {
    use super::{inert, inert_line};

    #[test]
    fn control_characters_and_workflow_commands_are_inert() {
        assert!(matches!(
            inert("plain text\nline 2"),
            std::borrow::Cow::Borrowed(_)
        ));
        let t = inert("a\u{1b}]0;x\u{7}b\r\n  ::error::forged\u{9d}");
        assert_eq!(t, "a\\u{1b}]0;x\\u{7}b\\u{d}\n\\  ::error::forged\\u{9d}");
        assert_eq!(inert_line("one\ntwo"), "one\\u{a}two");
    }

    #[test]
    fn json_output_escapes_del_and_c1_and_reads_back_the_same() {
        let v = serde_json::json!({"t": "a\u{9b}31mb\u{7f}\u{1b}\u{a0}é"});
        let text = serde_json::to_string(&v).unwrap();
        let out = super::inert_json(&text);
        assert_eq!(out, "{\"t\":\"a\\u009b31mb\\u007f\\u001b\u{a0}é\"}");
        assert!(!out.chars().any(char::is_control), "{out}");
        assert_eq!(serde_json::from_str::<serde_json::Value>(&out).unwrap(), v);
    }
}
