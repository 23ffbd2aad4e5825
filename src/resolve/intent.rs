//! `--intent FILE|-`: what the change is meant to do (a PR description, a ticket, the user's
//! requests to a Claude Code session), read once, bounded, for the `<intent>` block of every
//! role's prompt (docs/architecture.md §19.7).

use crate::errors::ExpectedError;
use std::io::Read;
use std::path::Path;

/// The largest intent accepted, in bytes (8 KiB). Over it is a usage error (exit 2): a prompt
/// block that silently lost its end could misstate what the change is for.
pub const INTENT_MAX_BYTES: usize = 8 * 1024;

/// The intent text, `None` when the file (or stdin) holds only whitespace.
pub(crate) fn read_intent(arg: &Path, cwd: &Path) -> Result<Option<String>, ExpectedError> {
    let shown = arg.display().to_string();
    let bytes = if shown == "-" {
        let mut buf = Vec::new();
        // One byte over the cap is enough to know it is too long.
        std::io::stdin()
            .take(INTENT_MAX_BYTES as u64 + 1)
            .read_to_end(&mut buf)
            .map_err(|e| ExpectedError::Usage(format!("--intent -: cannot read stdin ({e})")))?;
        buf
    } else {
        let path = if arg.is_absolute() {
            arg.to_path_buf()
        } else {
            cwd.join(arg)
        };
        std::fs::read(&path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                ExpectedError::Usage(format!("--intent {shown}: no such file"))
            } else {
                ExpectedError::Usage(format!("--intent {shown}: cannot read it ({e})"))
            }
        })?
    };
    parse_intent(&shown, bytes)
}

/// Check size and encoding of the intent's bytes.
fn parse_intent(shown: &str, bytes: Vec<u8>) -> Result<Option<String>, ExpectedError> {
    if bytes.len() > INTENT_MAX_BYTES {
        let size = if shown == "-" {
            format!("more than {INTENT_MAX_BYTES} bytes")
        } else {
            format!("{} bytes", bytes.len())
        };
        return Err(ExpectedError::Usage(format!(
            "--intent {shown}: {size}, over the {INTENT_MAX_BYTES}-byte limit; shorten it to \
             what the change is meant to do"
        )));
    }
    let text = String::from_utf8(bytes)
        .map_err(|_| ExpectedError::Usage(format!("--intent {shown}: not UTF-8 text")))?;
    if text.trim().is_empty() {
        return Ok(None);
    }
    Ok(Some(text.trim_end().to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_file_relative_to_cwd_and_trims_the_end() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("pr.md"), "Fix the adder.\n\n").unwrap();
        let t = read_intent(Path::new("pr.md"), d.path()).unwrap();
        assert_eq!(t.as_deref(), Some("Fix the adder."));
    }

    #[test]
    fn empty_is_none_and_bad_input_is_a_usage_error() {
        assert_eq!(parse_intent("x", b" \n\t".to_vec()).unwrap(), None);
        let e = parse_intent("big.md", vec![b'a'; INTENT_MAX_BYTES + 1]).unwrap_err();
        assert_eq!(e.exit_code(), crate::exit_codes::USAGE);
        assert!(
            e.to_string()
                .contains("--intent big.md: 8193 bytes, over the 8192-byte limit"),
            "{e}"
        );
        assert!(parse_intent("x", vec![b'a'; INTENT_MAX_BYTES]).is_ok());
        assert!(parse_intent("-", vec![0xff, 0xfe])
            .unwrap_err()
            .to_string()
            .contains("not UTF-8"));
        let d = tempfile::tempdir().unwrap();
        let e = read_intent(Path::new("missing.md"), d.path()).unwrap_err();
        assert!(e.to_string().contains("missing.md: no such file"), "{e}");
    }
}
