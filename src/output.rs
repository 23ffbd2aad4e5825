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

/// Whether `c` is DEL or a C1 control (U+007F–U+009F): characters serde_json writes raw
/// inside a JSON string, and a terminal may act on (U+009B is a one-character CSI).
fn del_or_c1(c: char) -> bool {
    ('\u{7f}'..='\u{9f}').contains(&c)
}

/// A serde_json formatter (`F`: compact or pretty) that also writes DEL and the C1 controls
/// as JSON escapes (`\u009b`), as serde_json does the C0 controls: the same JSON value to a
/// reader, nothing a terminal acts on. Every JSON arev prints or keeps goes through it
/// ([`json_string`], [`write_json`]).
struct InertJson<F>(F);

macro_rules! delegate {
    ($($name:ident),*) => {$(
        fn $name<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
            self.0.$name(w)
        }
    )*};
}

impl<F: serde_json::ser::Formatter> serde_json::ser::Formatter for InertJson<F> {
    delegate!(
        begin_array,
        end_array,
        begin_object,
        end_object,
        begin_object_value,
        end_object_value
    );

    fn begin_array_value<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_array_value(w, first)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_array_value(w)
    }

    fn begin_object_key<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_object_key(w, first)
    }

    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        let mut rest = fragment;
        while let Some((at, c)) = rest.char_indices().find(|(_, c)| del_or_c1(*c)) {
            w.write_all(&rest.as_bytes()[..at])?;
            write!(w, "\\u{:04x}", u32::from(c))?;
            rest = &rest[at + c.len_utf8()..];
        }
        w.write_all(rest.as_bytes())
    }
}

/// Serialize `value` as JSON into `w` (pretty: two-space indents), DEL and C1 controls
/// escaped ([`InertJson`]). The one JSON writer: run-dir records and everything printed.
pub fn write_json<W: Write, T: serde::Serialize + ?Sized>(
    w: W,
    value: &T,
    pretty: bool,
) -> serde_json::Result<()> {
    if pretty {
        let f = InertJson(serde_json::ser::PrettyFormatter::new());
        value.serialize(&mut serde_json::Serializer::with_formatter(w, f))
    } else {
        let f = InertJson(serde_json::ser::CompactFormatter);
        value.serialize(&mut serde_json::Serializer::with_formatter(w, f))
    }
}

/// `value` as JSON text (see [`write_json`]).
pub fn json_string<T: serde::Serialize + ?Sized>(
    value: &T,
    pretty: bool,
) -> serde_json::Result<String> {
    let mut out = Vec::with_capacity(256);
    write_json(&mut out, value, pretty)?;
    // The serializer writes UTF-8 only (and escapes as ASCII).
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// Print `value` to stdout as pretty JSON and a newline (see [`write_json`]): `--json`,
/// `--format json` and every other JSON document arev prints.
pub fn report_json<T: serde::Serialize + ?Sized>(value: &T) -> serde_json::Result<()> {
    let text = json_string(value, true)?;
    report(&text);
    Ok(())
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

/// Copy the JSON report in the file `path` (which ends with a newline) to stdout, DEL and
/// C1 controls escaped as [`write_json`] writes them (a report.json written by an older arev,
/// or a run dir someone else made, may hold them raw; inside JSON they can only be in a
/// string, so the value is the same). Err only when the file cannot be read; a closed pipe
/// is not an error.
pub fn report_file(path: &std::path::Path) -> std::io::Result<()> {
    let file = std::fs::File::open(path)?;
    let mut out = std::io::stdout().lock();
    let _ = out.flush();
    let _ = copy_escaping_c1(file, &mut out);
    let _ = out.flush();
    Ok(())
}

/// Copy UTF-8 JSON text from `input` to `out` in bounded chunks, DEL (0x7F) and the C1
/// controls (UTF-8 `C2 80`–`C2 9F`; `C2` is only ever a lead byte) written as `\u00XX`.
fn copy_escaping_c1(mut input: impl std::io::Read, out: &mut impl Write) -> std::io::Result<()> {
    let mut buf = vec![0u8; 64 * 1024];
    let mut escaped = Vec::with_capacity(buf.len() + 64);
    let mut held_c2 = false;
    loop {
        let n = input.read(&mut buf)?;
        if n == 0 {
            if held_c2 {
                out.write_all(&[0xc2])?;
            }
            return Ok(());
        }
        escaped.clear();
        for &b in &buf[..n] {
            if std::mem::take(&mut held_c2) {
                if (0x80..=0x9f).contains(&b) {
                    write!(escaped, "\\u{b:04x}")?;
                    continue;
                }
                escaped.push(0xc2);
            }
            match b {
                0x7f => escaped.extend_from_slice(b"\\u007f"),
                0xc2 => held_c2 = true,
                _ => escaped.push(b),
            }
        }
        out.write_all(&escaped)?;
    }
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
    let _ = writeln!(out, "{}", json_string(json, false).unwrap_or_default());
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
    fn a_json_file_is_copied_with_del_and_c1_escaped_across_chunks() {
        let text = format!(
            "{{\"t\":\"{}{}\"}}",
            "a".repeat(64 * 1024 - 7),
            "\u{9b}x\u{7f}\u{a0}é\u{85}"
        );
        // U+009B's two bytes straddle the first 64 KiB chunk.
        assert_eq!(text.as_bytes()[64 * 1024 - 1], 0xc2);
        let mut out = vec![];
        super::copy_escaping_c1(text.as_bytes(), &mut out).unwrap();
        let out = String::from_utf8(out).unwrap();
        assert!(
            out.ends_with("\\u009bx\\u007f\u{a0}é\\u0085\"}"),
            "{}",
            &out[out.len() - 40..]
        );
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&out).unwrap(),
            serde_json::from_str::<serde_json::Value>(&text).unwrap()
        );
    }

    #[test]
    fn json_output_escapes_del_and_c1_and_reads_back_the_same() {
        let v = serde_json::json!({"t\u{85}": "a\u{9b}31mb\u{7f}\u{1b}\u{a0}é\u{9f}"});
        let out = super::json_string(&v, false).unwrap();
        assert_eq!(
            out,
            "{\"t\\u0085\":\"a\\u009b31mb\\u007f\\u001b\u{a0}é\\u009f\"}"
        );
        assert!(!out.chars().any(char::is_control), "{out}");
        assert_eq!(serde_json::from_str::<serde_json::Value>(&out).unwrap(), v);
        let pretty = super::json_string(&serde_json::json!([v, 1, {}]), true).unwrap();
        assert_eq!(
            pretty,
            serde_json::to_string_pretty(&serde_json::json!([v, 1, {}]))
                .unwrap()
                .replace('\u{85}', "\\u0085")
                .replace('\u{9b}', "\\u009b")
                .replace('\u{7f}', "\\u007f")
                .replace('\u{9f}', "\\u009f")
        );
        assert!(
            !pretty.chars().any(|c| c.is_control() && c != '\n'),
            "{pretty}"
        );
    }
}
