//! A shell command line's file accesses: the wrapper stripped, the line cut into commands,
//! each command's redirections and variable assignments read, the rest left to the
//! program's rules (`programs`).

use super::error::Underivable;
use super::programs::{program_access, program_name};
use super::tokenize::{tokenize, Tok};
use super::words::join;
use crate::records::FileAccess;

/// The file accesses of one shell command line.
pub fn shell_access(command: &str) -> FileAccess {
    let inner = strip_wrapper(command);
    let tokens = match tokenize(&inner) {
        Ok(t) => t,
        Err(reason) => return FileAccess::unknown(reason.to_string()),
    };
    let mut access = FileAccess::default();
    let mut cwd = String::new();
    let mut piped_in = false;
    let mut seg: Vec<Tok> = Vec::new();
    let mut iter = tokens.into_iter().peekable();
    loop {
        let tok = iter.next();
        let end = match &tok {
            None => Some(false),
            Some(Tok::Sep { pipe }) => Some(*pipe),
            _ => None,
        };
        match end {
            Some(pipe_out) => {
                if let Err(reason) = command_access(&seg, &mut cwd, piped_in, &mut access) {
                    return FileAccess::unknown(reason.to_string());
                }
                seg.clear();
                piped_in = pipe_out;
                if tok.is_none() {
                    break;
                }
            }
            None => seg.extend(tok),
        }
    }
    access
}

/// `/bin/bash -lc '<cmd>'` → `<cmd>` (one level; anything else is returned unchanged).
fn strip_wrapper(command: &str) -> String {
    let Ok(tokens) = tokenize(command) else {
        return command.to_string();
    };
    let words: Vec<&str> = tokens
        .iter()
        .map_while(|t| match t {
            Tok::Word(w) => Some(w.as_str()),
            _ => None,
        })
        .collect();
    if words.len() == 3 && words.len() == tokens.len() {
        let shell = program_name(words[0]).unwrap_or("");
        let flag = words[1];
        if matches!(shell, "bash" | "sh" | "zsh" | "dash")
            && flag.starts_with('-')
            && flag.ends_with('c')
            && flag[1..].chars().all(|c| c == 'l' || c == 'c')
        {
            return words[2].to_string();
        }
    }
    command.to_string()
}

/// The accesses of one command (`seg`, between separators): its redirections, then its
/// program's own. `cwd` is the directory of the preceding `cd`s; `piped_in` whether it
/// reads the previous command's output.
fn command_access(
    seg: &[Tok],
    cwd: &mut String,
    piped_in: bool,
    access: &mut FileAccess,
) -> Result<(), Underivable> {
    let (words, stdin_redirected) = words_and_redirections(seg, cwd, access)?;
    let words = without_assignments(&words)?;
    let Some(first) = words.first() else {
        return Ok(());
    };
    let Some(prog) = program_name(first) else {
        return Err(Underivable::NotSystemProgram(first.clone()));
    };
    let reads_pipe = piped_in || stdin_redirected;
    program_access(prog, &words[1..], cwd, reads_pipe, access)
}

/// The command's words; its redirections are recorded as reads and writes (not of
/// `/dev/null`). Also whether its stdin comes from a file.
fn words_and_redirections(
    seg: &[Tok],
    cwd: &str,
    access: &mut FileAccess,
) -> Result<(Vec<String>, bool), Underivable> {
    let mut words: Vec<String> = Vec::new();
    let mut it = seg.iter();
    let mut stdin_redirected = false;
    while let Some(t) = it.next() {
        match t {
            Tok::Word(w) => words.push(w.clone()),
            Tok::FdDup | Tok::Sep { .. } => {}
            Tok::Redirect { write } => {
                let Some(Tok::Word(target)) = it.next() else {
                    return Err(Underivable::RedirectionTarget);
                };
                if target == "/dev/null" {
                    continue;
                }
                if *write {
                    access.write.push(join(cwd, target));
                } else {
                    stdin_redirected = true;
                    access.read.push(join(cwd, target));
                }
            }
        }
    }
    Ok((words, stdin_redirected))
}

/// The words after the leading `VAR=value` assignments, which may only set variables that
/// cannot change what runs or what is read.
fn without_assignments(words: &[String]) -> Result<&[String], Underivable> {
    let mut start = 0;
    while let Some((name, _)) = words.get(start).and_then(|w| assignment(w)) {
        if !harmless_assignment(name) {
            return Err(Underivable::Assignment(name.to_string()));
        }
        start += 1;
    }
    Ok(&words[start..])
}

/// Variables a command may set for itself without changing what it runs or reads.
fn harmless_assignment(name: &str) -> bool {
    name.starts_with("LC_")
        || matches!(
            name,
            "LANG" | "LANGUAGE" | "TERM" | "NO_COLOR" | "COLUMNS" | "LINES" | "TZ"
        )
}

/// `NAME=value` → (NAME, value) when `w` is a shell assignment.
fn assignment(w: &str) -> Option<(&str, &str)> {
    let (name, value) = w.split_once('=')?;
    let ok = !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit());
    ok.then_some((name, value))
}
