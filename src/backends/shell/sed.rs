//! `sed`: its file operands, and whether its script is provably inert.

use super::error::{SedProblem, Underivable};
use super::words::{join, split_args};
use crate::records::FileAccess;

/// The accesses of `sed ARGS`: its files are read, or written with `-i`; every script must
/// be inert, and a script file (`-f`) cannot be seen.
pub(super) fn sed_access(
    args: &[String],
    cwd: &str,
    access: &mut FileAccess,
) -> Result<(), Underivable> {
    let (opts, operands) = split_args("sed", args);
    let mut scripts: Vec<&str> = vec![];
    let mut in_place = false;
    for (k, v) in &opts {
        match k.as_str() {
            "-e" | "--expression" => scripts.push(v.unwrap_or("")),
            "-f" | "--file" => {
                return Err(Underivable::SedFile);
            }
            "-i" | "--in-place" => in_place = true,
            _ => {}
        }
    }
    let files = if scripts.is_empty() {
        scripts.extend(operands.first());
        operands.get(1..).unwrap_or(&[])
    } else {
        &operands[..]
    };
    for script in scripts {
        sed_script_is_inert(script)?;
    }
    let paths = files.iter().filter(|f| **f != "-").map(|f| join(cwd, f));
    if in_place {
        access.write.extend(paths);
    } else {
        access.read.extend(paths);
    }
    Ok(())
}

/// Ok when a `sed` script can only print, delete or substitute (see the module docs): no
/// `w`/`W` (write), `r`/`R` (read), `e` (run), no `s` flag `w` or `e`, no labels or
/// comments. Parsed as GNU sed does: a regex or `s` part ends at the first unescaped
/// delimiter.
fn sed_script_is_inert(script: &str) -> Result<(), Underivable> {
    let refuse = |problem: SedProblem| {
        Err(Underivable::SedScript {
            script: script.to_string(),
            problem,
        })
    };
    let mut chars = script.chars().peekable();
    // Up to the next unescaped `delim`; false when the script ends first.
    let skip_to = |chars: &mut std::iter::Peekable<std::str::Chars<'_>>, delim: char| {
        while let Some(c) = chars.next() {
            if c == '\\' {
                chars.next();
            } else if c == delim {
                return true;
            }
        }
        false
    };
    while let Some(c) = chars.next() {
        match c {
            '0'..='9' | '$' | ',' | ';' | ' ' | '\t' | '\n' | '{' | '}' | '!' | '~' | '+' => {}
            'p' | 'P' | 'd' | 'D' | 'q' | 'Q' | 'n' | 'N' | '=' | 'l' | 'g' | 'G' | 'h' | 'H'
            | 'x' | 'z' | 'F' => {}
            '/' => {
                if !skip_to(&mut chars, '/') {
                    return refuse(SedProblem::UnterminatedAddress);
                }
                // Address flags.
                while chars.peek().is_some_and(|f| matches!(f, 'I' | 'M')) {
                    chars.next();
                }
            }
            's' => {
                let Some(delim) = chars.next() else {
                    return refuse(SedProblem::UnterminatedS);
                };
                if matches!(delim, '\\' | '\n') {
                    return refuse(SedProblem::UnusualDelimiter);
                }
                if !skip_to(&mut chars, delim) || !skip_to(&mut chars, delim) {
                    return refuse(SedProblem::UnterminatedS);
                }
                while let Some(f) = chars.peek() {
                    match f {
                        'g' | 'p' | 'i' | 'I' | 'm' | 'M' | '0'..='9' => {
                            chars.next();
                        }
                        'w' | 'W' | 'e' => return refuse(SedProblem::SubstitutionFlag),
                        _ => break,
                    }
                }
            }
            'w' | 'W' | 'r' | 'R' | 'e' => return refuse(SedProblem::Command),
            other => return refuse(SedProblem::Other(other)),
        }
    }
    Ok(())
}
