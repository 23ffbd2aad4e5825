//! The programs whose file accesses are derived, and how: readers, searchers, `ls`, `cd`
//! and the programs that touch no file (`sed` has a file of its own).

use super::error::Underivable;
use super::sed::sed_access;
use super::words::{join, split_args};
use crate::records::FileAccess;

/// Directories whose programs are the system's, not the reviewed repository's.
const SYSTEM_BIN_DIRS: &[&str] = &["/bin/", "/usr/bin/", "/usr/local/bin/"];

/// The program a command word names: a bare name (found on PATH), or an absolute path in a
/// system bin directory. `None` for a relative path (`./cat`, `src/cat`: the repository's
/// own file) or an absolute one elsewhere.
pub(super) fn program_name(word: &str) -> Option<&str> {
    if !word.contains('/') {
        return Some(word);
    }
    let dir = SYSTEM_BIN_DIRS.iter().find(|d| word.starts_with(**d))?;
    let name = &word[dir.len()..];
    (!name.is_empty() && !name.contains('/')).then_some(name)
}

/// The accesses of `prog ARGS` run in `cwd` (`cd` moves it); `reads_pipe` when its stdin is
/// a pipe or a file. Any program not named here cannot be derived.
pub(super) fn program_access(
    prog: &str,
    args: &[String],
    cwd: &mut String,
    reads_pipe: bool,
    access: &mut FileAccess,
) -> Result<(), Underivable> {
    match prog {
        "cd" => {
            let dir = args.first().map_or("", String::as_str);
            if dir.is_empty() || dir == "-" {
                return Err(Underivable::CdWithoutDirectory);
            }
            *cwd = join(cwd, dir);
        }
        "echo" | "printf" | "pwd" | "true" | "false" | ":" => {}
        "cat" | "nl" | "head" | "tail" | "wc" => reader_access(prog, args, cwd, access)?,
        "sed" => sed_access(args, cwd, access)?,
        "grep" | "egrep" | "fgrep" | "rg" => search_access(prog, args, cwd, reads_pipe, access)?,
        "ls" => {
            let (_, operands) = split_args(prog, args);
            if operands.is_empty() {
                access.search.push(cwd.clone());
            } else {
                access.search.extend(operands.iter().map(|p| join(cwd, p)));
            }
        }
        other => return Err(Underivable::UnknownProgram(other.to_string())),
    }
    Ok(())
}

/// `cat`, `nl`, `head`, `tail`, `wc`: their file operands are read.
fn reader_access(
    prog: &str,
    args: &[String],
    cwd: &str,
    access: &mut FileAccess,
) -> Result<(), Underivable> {
    let (opts, operands) = split_args(prog, args);
    if let Some((k, _)) = opts.iter().find(|(k, _)| k == "--files0-from") {
        return Err(Underivable::FileList {
            prog: prog.to_string(),
            opt: k.clone(),
        });
    }
    access.read.extend(
        operands
            .into_iter()
            .filter(|o| *o != "-")
            .map(|o| join(cwd, o)),
    );
    Ok(())
}

/// `grep` and `rg`: their path operands are searched (the pattern is the first operand
/// unless given by option), pattern and ignore files read; with no path a recursive search
/// that does not read a pipe searches the working directory.
fn search_access(
    prog: &str,
    args: &[String],
    cwd: &str,
    reads_pipe: bool,
    access: &mut FileAccess,
) -> Result<(), Underivable> {
    let (opts, operands) = split_args(prog, args);
    let mut pattern_given = false;
    let mut recursive = prog == "rg";
    for (k, v) in &opts {
        match k.as_str() {
            "-e" | "--regexp" => pattern_given = true,
            "-f" | "--file" => {
                pattern_given = true;
                access.read.extend(v.map(|f| join(cwd, f)));
            }
            "--exclude-from" | "--ignore-file" => {
                access.read.extend(v.map(|f| join(cwd, f)));
            }
            "--files" => pattern_given = true,
            "-r" | "-R" | "--recursive" | "--dereference-recursive" => recursive = true,
            "--pre" | "--pre-glob" | "--hostname-bin" | "--search-zip" => {
                return Err(Underivable::RunsPrograms {
                    prog: prog.to_string(),
                    opt: k.clone(),
                });
            }
            "-z" if prog == "rg" => {
                return Err(Underivable::Decompression);
            }
            _ => {}
        }
    }
    let paths = if pattern_given {
        &operands[..]
    } else {
        operands.get(1..).unwrap_or(&[])
    };
    if paths.is_empty() {
        if recursive && !reads_pipe {
            access.search.push(cwd.to_string());
        }
    } else {
        access.search.extend(paths.iter().map(|p| join(cwd, p)));
    }
    Ok(())
}
