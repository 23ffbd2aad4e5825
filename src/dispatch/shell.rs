//! File accesses derived from a shell command line (Codex `command_execution` items, Gemini
//! `run_shell_command`), so that shell reads face the same read gates as a `Read` tool.
//!
//! What is derived:
//! * The `/bin/bash -lc '<cmd>'` (also `sh -c`, `zsh -lc`, `bash -c`) wrapper is stripped.
//! * The line is split into commands at `|`, `||`, `&&`, `;`, `&` and newlines; a `cd DIR`
//!   makes later relative paths relative to DIR. Locale and terminal assignments
//!   (`LC_*=`, `LANG=`, `LANGUAGE=`, `TERM=`, `NO_COLOR=`, `COLUMNS=`, `LINES=`, `TZ=`) are
//!   skipped.
//! * A program is named bare (found on PATH) or by an absolute path in `/bin`, `/usr/bin`
//!   or `/usr/local/bin`.
//! * Readers: `cat`, `nl`, `head`, `tail`, `wc` and `sed` read their file operands. A `sed`
//!   script (the first operand unless given with `-e`) must be provably inert: addresses
//!   (line numbers, `$`, `/regex/`) with the commands `p P d D q Q n N = l g G h H x z F`
//!   and `s/re/text/flags` without the `w` and `e` flags.
//! * Searchers: `grep`/`egrep`/`fgrep` and `rg` search their path operands (the pattern is
//!   the first operand unless given with `-e`/`-f`; `-f FILE` and `--exclude-from FILE` /
//!   `--ignore-file FILE` are reads); `ls` lists its operands. With no path, `rg`, `grep -r`
//!   and `ls` search the working directory (`""`), unless the command reads a pipe (then it
//!   searches its stdin, which touches no file).
//! * `< FILE` is a read; `> FILE`, `>> FILE`, `&> FILE`, `>& FILE` are writes (except to
//!   `/dev/null`; `>&N` duplicates a descriptor); `sed -i` is a write.
//! * `echo`, `printf`, `pwd`, `true` and `false` touch no file.
//!
//! What cannot be derived, and is reported as `FileAccess::unknown` (which the tool gate
//! refuses, fail closed): any other program (`find`, `awk`, `xargs`, `git`, `python`,
//! `env`, scripts, …), a program named by a relative path (`./cat` runs the repository's
//! own file), any other variable assignment (`PATH=…`, `LD_PRELOAD=…`), options that run
//! or read more than they name (`sed -f`, `sed` scripts with `w`, `r`, `e`, …, `rg --pre`,
//! `rg -z`, `rg --hostname-bin`, `wc --files0-from`), command substitution (`$(…)`,
//! backticks), variable expansion (`$X`), unquoted globs (`*`, `?`, `[`) and brace
//! expansion (`{`), `~`, subshells and groups (`(…)`, `{ …; }`), here-documents and
//! process substitution. Blocked write attempts never appear in Codex's `--json` output at
//! all (docs/architecture.md §16.3), so they cannot be seen here either.
//!
//! Every path reported is a word of the command (after quote removal), joined to the
//! directories of preceding `cd`s; the gates resolve it (`..`, symlinks) themselves.

use super::FileAccess;

/// The file accesses of one shell command line.
pub fn shell_access(command: &str) -> FileAccess {
    let inner = strip_wrapper(command);
    let tokens = match tokenize(&inner) {
        Ok(t) => t,
        Err(reason) => return FileAccess::unknown(reason),
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
                    return FileAccess::unknown(reason);
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

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Word(String),
    /// A command separator; `pipe` when the next command reads this one's output.
    Sep {
        pipe: bool,
    },
    /// `<` (read) or `>`/`>>` (write), followed by its target word.
    Redirect {
        write: bool,
    },
    /// `>&N`, `N>&M`, `2>/dev/null`-style fd plumbing whose target is not a file.
    FdDup,
}

/// Split into words and operators with POSIX-ish quoting. Anything whose meaning depends on
/// expansion is refused with the reason.
fn tokenize(s: &str) -> Result<Vec<Tok>, String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = s.chars().peekable();
    let flush = |out: &mut Vec<Tok>, word: &mut String, in_word: &mut bool| {
        if *in_word {
            out.push(Tok::Word(std::mem::take(word)));
            *in_word = false;
        }
    };
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => flush(&mut out, &mut word, &mut in_word),
            '\n' => {
                flush(&mut out, &mut word, &mut in_word);
                out.push(Tok::Sep { pipe: false });
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(x) => word.push(x),
                        None => return Err("unterminated quote".into()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(x @ ('"' | '\\' | '$' | '`')) => word.push(x),
                            Some('\n') => {}
                            Some(x) => {
                                word.push('\\');
                                word.push(x);
                            }
                            None => return Err("unterminated quote".into()),
                        },
                        Some('$' | '`') => {
                            return Err("expansion inside double quotes".into());
                        }
                        Some(x) => word.push(x),
                        None => return Err("unterminated quote".into()),
                    }
                }
            }
            '\\' => match chars.next() {
                Some('\n') => {}
                Some(x) => {
                    in_word = true;
                    word.push(x);
                }
                None => {}
            },
            '|' => {
                flush(&mut out, &mut word, &mut in_word);
                match chars.peek() {
                    Some('|') => {
                        chars.next();
                        out.push(Tok::Sep { pipe: false });
                    }
                    Some('&') => {
                        chars.next();
                        out.push(Tok::Sep { pipe: true });
                    }
                    _ => out.push(Tok::Sep { pipe: true }),
                }
            }
            '&' => {
                if chars.peek() == Some(&'>') {
                    // `&>file`: stdout and stderr to a file.
                    chars.next();
                    if chars.peek() == Some(&'>') {
                        chars.next();
                    }
                    flush(&mut out, &mut word, &mut in_word);
                    out.push(Tok::Redirect { write: true });
                    continue;
                }
                flush(&mut out, &mut word, &mut in_word);
                if chars.peek() == Some(&'&') {
                    chars.next();
                }
                out.push(Tok::Sep { pipe: false });
            }
            ';' => {
                flush(&mut out, &mut word, &mut in_word);
                out.push(Tok::Sep { pipe: false });
            }
            '>' | '<' => {
                // `2>` / `1>`: the digits are an fd, not a word.
                if in_word && !word.is_empty() && word.chars().all(|d| d.is_ascii_digit()) {
                    word.clear();
                    in_word = false;
                } else {
                    flush(&mut out, &mut word, &mut in_word);
                }
                if c == '<' {
                    match chars.peek() {
                        Some('<') => return Err("here-document".into()),
                        Some('(') => return Err("process substitution".into()),
                        _ => {}
                    }
                    out.push(Tok::Redirect { write: false });
                    continue;
                }
                if chars.peek() == Some(&'>') {
                    chars.next();
                }
                if chars.peek() == Some(&'&') {
                    chars.next();
                    // `>&2`, `2>&1`, `>&-`: the fd digits. `>&file` sends stdout and
                    // stderr to a file: a write.
                    let mut fd = false;
                    while chars
                        .peek()
                        .is_some_and(|d| d.is_ascii_digit() || *d == '-')
                    {
                        chars.next();
                        fd = true;
                    }
                    let ends = chars
                        .peek()
                        .is_none_or(|d| matches!(d, ' ' | '\t' | '\n' | ';' | '|' | '&'));
                    if fd && ends {
                        out.push(Tok::FdDup);
                    } else if fd {
                        return Err("descriptor duplication followed by a word".into());
                    } else {
                        out.push(Tok::Redirect { write: true });
                    }
                } else if chars.peek() == Some(&'(') {
                    return Err("process substitution".into());
                } else {
                    out.push(Tok::Redirect { write: true });
                }
            }
            '$' => return Err("variable or command substitution (`$`)".into()),
            '`' => return Err("command substitution (backticks)".into()),
            '(' | ')' => return Err("subshell".into()),
            '{' => return Err("brace expansion or group `{`".into()),
            '*' | '?' | '[' => return Err(format!("unquoted glob `{c}`")),
            '~' if !in_word => return Err("`~` expansion".into()),
            '#' if !in_word => {
                // A comment runs to the end of the line.
                for x in chars.by_ref() {
                    if x == '\n' {
                        out.push(Tok::Sep { pipe: false });
                        break;
                    }
                }
            }
            x => {
                in_word = true;
                word.push(x);
            }
        }
    }
    flush(&mut out, &mut word, &mut in_word);
    Ok(out)
}

fn join(cwd: &str, p: &str) -> String {
    if cwd.is_empty() || p.starts_with('/') {
        p.to_string()
    } else if p.is_empty() {
        cwd.to_string()
    } else {
        format!("{}/{p}", cwd.trim_end_matches('/'))
    }
}

/// Options that take a value in the next word (when not attached), per program.
fn value_opts(prog: &str) -> &'static [&'static str] {
    match prog {
        "head" | "tail" => &["-n", "-c", "--lines", "--bytes"],
        "nl" => &["-b", "-d", "-f", "-h", "-i", "-l", "-n", "-s", "-v", "-w"],
        "sed" => &["-e", "-f", "-l", "--expression", "--file", "--line-length"],
        "grep" | "egrep" | "fgrep" => &[
            "-e",
            "-f",
            "-A",
            "-B",
            "-C",
            "-m",
            "-d",
            "-D",
            "--regexp",
            "--file",
            "--include",
            "--exclude",
            "--exclude-dir",
            "--exclude-from",
            "--max-count",
            "--context",
        ],
        "rg" => &[
            "-e",
            "-f",
            "-g",
            "-t",
            "-T",
            "-A",
            "-B",
            "-C",
            "-m",
            "-M",
            "-j",
            "-E",
            "-r",
            "--regexp",
            "--file",
            "--glob",
            "--iglob",
            "--type",
            "--type-not",
            "--max-count",
            "--context",
            "--after-context",
            "--before-context",
            "--max-columns",
            "--threads",
            "--encoding",
            "--replace",
            "--sort",
            "--sortr",
            "--max-depth",
            "--ignore-file",
            "--pre",
            "--pre-glob",
            "--hostname-bin",
        ],
        _ => &[],
    }
}

/// One option and its value (attached or the next word).
type Opt<'a> = (String, Option<&'a str>);

/// Split a command's arguments into (options with their values, operands). Bundled short
/// options (`-rn`) come out one by one.
fn split_args<'a>(prog: &str, args: &'a [String]) -> (Vec<Opt<'a>>, Vec<&'a str>) {
    let takes = value_opts(prog);
    let mut opts: Vec<Opt<'a>> = Vec::new();
    let mut operands = Vec::new();
    let mut i = 0;
    let mut only_operands = false;
    while i < args.len() {
        let a = args[i].as_str();
        i += 1;
        if only_operands || a == "-" || !a.starts_with('-') {
            operands.push(a);
            continue;
        }
        if a == "--" {
            only_operands = true;
            continue;
        }
        if a.starts_with("--") {
            if let Some((k, v)) = a.split_once('=') {
                opts.push((k.to_string(), Some(v)));
            } else if takes.contains(&a) {
                opts.push((a.to_string(), args.get(i).map(String::as_str)));
                i += 1;
            } else {
                opts.push((a.to_string(), None));
            }
            continue;
        }
        // Short options, possibly bundled (`-rn`), the last possibly taking a value (`-n5`,
        // `-A 3`). A bare number (`head -20`) is a count.
        let body = &a[1..];
        if body.chars().all(|c| c.is_ascii_digit()) {
            opts.push((a.to_string(), None));
            continue;
        }
        for (idx, ch) in body.char_indices() {
            let short = format!("-{ch}");
            if takes.contains(&short.as_str()) {
                let rest = &body[idx + ch.len_utf8()..];
                if rest.is_empty() {
                    opts.push((short, args.get(i).map(String::as_str)));
                    i += 1;
                } else {
                    opts.push((short, Some(rest)));
                }
                break;
            }
            opts.push((short, None));
        }
    }
    (opts, operands)
}

/// Directories whose programs are the system's, not the reviewed repository's.
const SYSTEM_BIN_DIRS: &[&str] = &["/bin/", "/usr/bin/", "/usr/local/bin/"];

/// The program a command word names: a bare name (found on PATH), or an absolute path in a
/// system bin directory. `None` for a relative path (`./cat`, `src/cat`: the repository's
/// own file) or an absolute one elsewhere.
fn program_name(word: &str) -> Option<&str> {
    if !word.contains('/') {
        return Some(word);
    }
    let dir = SYSTEM_BIN_DIRS.iter().find(|d| word.starts_with(**d))?;
    let name = &word[dir.len()..];
    (!name.is_empty() && !name.contains('/')).then_some(name)
}

/// Variables a command may set for itself without changing what it runs or reads.
fn harmless_assignment(name: &str) -> bool {
    name.starts_with("LC_")
        || matches!(
            name,
            "LANG" | "LANGUAGE" | "TERM" | "NO_COLOR" | "COLUMNS" | "LINES" | "TZ"
        )
}

fn command_access(
    seg: &[Tok],
    cwd: &mut String,
    piped_in: bool,
    access: &mut FileAccess,
) -> Result<(), String> {
    let mut words: Vec<String> = Vec::new();
    let mut it = seg.iter();
    let mut stdin_redirected = false;
    while let Some(t) = it.next() {
        match t {
            Tok::Word(w) => words.push(w.clone()),
            Tok::FdDup => {}
            Tok::Redirect { write } => {
                let Some(Tok::Word(target)) = it.next() else {
                    return Err("redirection without a target".into());
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
            Tok::Sep { .. } => {}
        }
    }
    // `VAR=value cmd`: only variables that cannot change what runs or what is read.
    let mut start = 0;
    while let Some((name, _)) = words.get(start).and_then(|w| assignment(w)) {
        if !harmless_assignment(name) {
            return Err(format!("the assignment `{name}=…` can change what runs"));
        }
        start += 1;
    }
    let words = &words[start..];
    let Some(first) = words.first() else {
        return Ok(());
    };
    let Some(prog) = program_name(first) else {
        return Err(format!(
            "`{first}` is not a system program (a path outside the system bin directories)"
        ));
    };
    let prog = prog.to_string();
    let args = &words[1..];
    let reads_pipe = piped_in || stdin_redirected;
    match prog.as_str() {
        "cd" => {
            let dir = args.first().map_or("", String::as_str);
            if dir.is_empty() || dir == "-" {
                return Err("`cd` without a directory".into());
            }
            *cwd = join(cwd, dir);
        }
        "echo" | "printf" | "pwd" | "true" | "false" | ":" => {}
        "cat" | "nl" | "head" | "tail" | "wc" => {
            let (opts, operands) = split_args(&prog, args);
            if let Some((k, _)) = opts.iter().find(|(k, _)| k == "--files0-from") {
                return Err(format!(
                    "`{prog} {k}` reads a list of files arev cannot see"
                ));
            }
            access.read.extend(
                operands
                    .into_iter()
                    .filter(|o| *o != "-")
                    .map(|o| join(cwd, o)),
            );
        }
        "sed" => {
            let (opts, operands) = split_args(&prog, args);
            let mut scripts: Vec<&str> = vec![];
            let mut in_place = false;
            for (k, v) in &opts {
                match k.as_str() {
                    "-e" | "--expression" => scripts.push(v.unwrap_or("")),
                    "-f" | "--file" => {
                        return Err("`sed -f`: a script file arev cannot see".into());
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
        }
        "grep" | "egrep" | "fgrep" | "rg" => {
            let (opts, operands) = split_args(&prog, args);
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
                        return Err(format!("`{prog} {k}` runs other programs"));
                    }
                    "-z" if prog == "rg" => {
                        return Err("`rg -z` runs decompression programs".into());
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
                    access.search.push(cwd.clone());
                }
            } else {
                access.search.extend(paths.iter().map(|p| join(cwd, p)));
            }
        }
        "ls" => {
            let (_, operands) = split_args(&prog, args);
            if operands.is_empty() {
                access.search.push(cwd.clone());
            } else {
                access.search.extend(operands.iter().map(|p| join(cwd, p)));
            }
        }
        other => {
            return Err(format!(
                "`{other}` is not a command whose file accesses arev can derive"
            ))
        }
    }
    Ok(())
}

/// Ok when a `sed` script can only print, delete or substitute (see the module docs): no
/// `w`/`W` (write), `r`/`R` (read), `e` (run), no `s` flag `w` or `e`, no labels or
/// comments. Parsed as GNU sed does: a regex or `s` part ends at the first unescaped
/// delimiter.
fn sed_script_is_inert(script: &str) -> Result<(), String> {
    let refuse = |what: &str| Err(format!("the sed script `{script}` {what}"));
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
                    return refuse("has an unterminated address");
                }
                // Address flags.
                while chars.peek().is_some_and(|f| matches!(f, 'I' | 'M')) {
                    chars.next();
                }
            }
            's' => {
                let Some(delim) = chars.next() else {
                    return refuse("has an unterminated `s`");
                };
                if matches!(delim, '\\' | '\n') {
                    return refuse("uses an unusual `s` delimiter");
                }
                if !skip_to(&mut chars, delim) || !skip_to(&mut chars, delim) {
                    return refuse("has an unterminated `s`");
                }
                while let Some(f) = chars.peek() {
                    match f {
                        'g' | 'p' | 'i' | 'I' | 'm' | 'M' | '0'..='9' => {
                            chars.next();
                        }
                        'w' | 'W' | 'e' => return refuse("writes a file or runs a command"),
                        _ => break,
                    }
                }
            }
            'w' | 'W' | 'r' | 'R' | 'e' => return refuse("writes, reads or runs something"),
            other => return refuse(&format!("uses `{other}`, which arev does not derive")),
        }
    }
    Ok(())
}

/// `NAME=value` → (NAME, value) when `w` is a shell assignment.
fn assignment(w: &str) -> Option<(&str, &str)> {
    let (name, value) = w.split_once('=')?;
    let ok = !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit());
    ok.then_some((name, value))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reads(cmd: &str) -> Vec<String> {
        let a = shell_access(cmd);
        assert_eq!(a.unknown, None, "{cmd}");
        a.read
    }

    #[test]
    fn wrapper_is_stripped_and_readers_read_their_operands() {
        assert_eq!(reads("/bin/bash -lc 'cat src/main.rs'"), ["src/main.rs"]);
        assert_eq!(reads("bash -c \"cat 'a b.rs'\""), ["a b.rs"]);
        assert_eq!(reads("cat -n a.rs b.rs"), ["a.rs", "b.rs"]);
        assert_eq!(reads("head -n 50 src/lib.rs"), ["src/lib.rs"]);
        assert_eq!(reads("head -n50 src/lib.rs"), ["src/lib.rs"]);
        assert_eq!(reads("head -20 src/lib.rs"), ["src/lib.rs"]);
        assert_eq!(reads("tail --lines=5 x.rs"), ["x.rs"]);
        assert_eq!(reads("nl -ba src/lib.rs"), ["src/lib.rs"]);
        assert_eq!(reads("nl -b a -w 4 src/lib.rs"), ["src/lib.rs"]);
        assert_eq!(reads("wc -l src/lib.rs"), ["src/lib.rs"]);
        assert_eq!(reads("sed -n '1,200p' src/lib.rs"), ["src/lib.rs"]);
        assert_eq!(reads("sed -n -e '1p' -e '3p' a.rs b.rs"), ["a.rs", "b.rs"]);
        assert_eq!(reads("/usr/bin/cat /abs/x.rs"), ["/abs/x.rs"]);
        assert_eq!(reads("cat < in.rs"), ["in.rs"]);
    }

    #[test]
    fn pipelines_cd_and_separators() {
        let a = shell_access("/bin/bash -lc \"nl -ba src/lib.rs | sed -n '1,40p'\"");
        assert_eq!(a.read, ["src/lib.rs"]);
        assert!(a.search.is_empty());
        let a = shell_access("cd src && cat lib.rs; ls");
        assert_eq!(a.read, ["src/lib.rs"]);
        assert_eq!(a.search, ["src"]);
        let a = shell_access("cat a.rs 2>/dev/null || echo missing");
        assert_eq!(a.read, ["a.rs"]);
        assert!(a.write.is_empty());
        let a = shell_access("LC_ALL=C cat a.rs 2>&1 | head -n 3");
        assert_eq!(a.read, ["a.rs"]);
        let a = shell_access("cat a.rs # and a comment with *");
        assert_eq!(a.read, ["a.rs"]);
    }

    #[test]
    fn searchers() {
        let a = shell_access("rg -n 'fn main' src/lib.rs");
        assert_eq!(a.search, ["src/lib.rs"]);
        let a = shell_access("rg -n unwrap");
        assert_eq!(a.search, [""], "rg without a path searches the cwd");
        let a = shell_access("grep -n unwrap src/lib.rs src/a.rs");
        assert_eq!(a.search, ["src/lib.rs", "src/a.rs"]);
        let a = shell_access("grep -rn unwrap");
        assert_eq!(a.search, [""]);
        let a = shell_access("grep -e x -e y a.rs");
        assert_eq!(a.search, ["a.rs"]);
        let a = shell_access("cat a.rs | grep -n unwrap");
        assert_eq!(a.read, ["a.rs"]);
        assert!(a.search.is_empty(), "grep on a pipe reads no file");
        let a = shell_access("cat a.rs | rg x");
        assert!(a.search.is_empty());
        let a = shell_access("rg --files");
        assert_eq!(a.search, [""]);
        let a = shell_access("rg -g '*.rs' x src");
        assert_eq!(a.search, ["src"]);
        let a = shell_access("ls -la");
        assert_eq!(a.search, [""]);
        let a = shell_access("ls src /etc");
        assert_eq!(a.search, ["src", "/etc"]);
    }

    #[test]
    fn writes() {
        let a = shell_access("cat a.rs > out.txt");
        assert_eq!(a.read, ["a.rs"]);
        assert_eq!(a.write, ["out.txt"]);
        let a = shell_access("echo x >> log");
        assert_eq!(a.write, ["log"]);
        let a = shell_access("sed -i 's/a/b/' a.rs");
        assert_eq!(a.write, ["a.rs"]);
        let a = shell_access("echo hi &> f");
        assert_eq!(a.write, ["f"]);
    }

    #[test]
    fn underivable_commands_are_unknown() {
        for cmd in [
            "find . -name '*.rs'",
            "python3 script.py",
            "cat $(ls)",
            "cat `ls`",
            "cat $HOME/.ssh/id_rsa",
            "cat src/*.rs",
            "cat ~/.netrc",
            "(cat a.rs)",
            "cat <<EOF\nx\nEOF",
            "diff <(cat a) b",
            "ls | xargs cat",
            "awk '{print}' a.rs",
            "cat 'unterminated",
            "cat \"$X\"",
            "/bin/bash -lc 'find / -name x'",
        ] {
            let a = shell_access(cmd);
            assert!(a.unknown.is_some(), "{cmd} → {a:?}");
        }
        assert!(shell_access("find .")
            .unknown
            .unwrap()
            .contains("`find` is not a command"));
    }

    #[test]
    fn harmless_commands_touch_nothing() {
        let a = shell_access("echo hello; pwd; true");
        assert!(!a.is_file_tool(), "{a:?}");
        assert!(!shell_access("").is_file_tool());
    }

    /// Constructs that run a program, read a file arev cannot see or write, hidden in
    /// commands that would otherwise be derivable.
    #[test]
    fn hidden_writes_reads_and_execs_are_never_read_only() {
        for cmd in [
            "./cat src/a.rs",
            "src/cat src/a.rs",
            "/tmp/cat a.rs",
            "/usr/bin/../../tmp/cat a.rs",
            "./bash -lc 'cat a.rs'",
            "PATH=. cat a.rs",
            "LD_PRELOAD=./x.so cat a.rs",
            "RIPGREP_CONFIG_PATH=rc rg x a.rs",
            "X=1",
            "sed -f script.sed a.rs",
            "sed -n 'w out' a.rs",
            "sed 's/a/b/w out' a.rs",
            "sed 's/a/b/e' a.rs",
            "sed -n '1e id' a.rs",
            "sed 'r /etc/passwd' a.rs",
            "sed 'R /etc/passwd' a.rs",
            "sed -n '1p;w out' a.rs",
            "sed -e 1p -e 'W out' a.rs",
            "sed ':a;N;ba' a.rs",
            "sed 's/a/b' a.rs",
            "sed '\\%x%p' a.rs",
            "rg --pre=sh x a.rs",
            "rg --pre sh x a.rs",
            "rg --pre-glob '*.rs' --pre sh x a.rs",
            "rg -z x a.gz",
            "rg -nz x a.gz",
            "rg --search-zip x a.gz",
            "rg --hostname-bin=id x a.rs",
            "wc --files0-from=list",
            "cat {a,b}.rs",
            "cat a.rs >&out",
            "cat a.rs >& out",
            "cat a.rs >&2x",
            "cat a.rs >| out",
            "cat a.rs <> out",
            "{ cat a.rs; }",
        ] {
            let a = shell_access(cmd);
            assert!(a.unknown.is_some() || !a.write.is_empty(), "{cmd} → {a:?}");
        }
        assert_eq!(shell_access("cat a.rs >&out").write, ["out"]);
    }

    #[test]
    fn inert_sed_scripts_and_system_programs_stay_derivable() {
        for (cmd, read) in [
            ("sed -n '1,200p' a.rs", "a.rs"),
            ("sed -n '/fn main/,/^}/p' a.rs", "a.rs"),
            ("sed -n '$p;1~2p;3,+4p' a.rs", "a.rs"),
            ("sed 's/a/b/g;s|x|y|2p' a.rs", "a.rs"),
            ("sed -E 's/(a)/\\1/' a.rs", "a.rs"),
            ("sed -n '/a\\/b/Ip' a.rs", "a.rs"),
            ("sed '$!N;P;D' a.rs", "a.rs"),
            ("/usr/bin/sed -n 1p a.rs", "a.rs"),
            ("/usr/local/bin/rg -n x a.rs", ""),
            ("LANG=C.UTF-8 LC_ALL=C cat a.rs", "a.rs"),
            ("grep --exclude-from=ex.txt -rn x", "ex.txt"),
            ("rg --ignore-file ig.txt x", "ig.txt"),
            ("cat a.rs 2>&1 >/dev/null", "a.rs"),
        ] {
            let a = shell_access(cmd);
            assert_eq!(a.unknown, None, "{cmd}");
            assert!(a.write.is_empty(), "{cmd}");
            if !read.is_empty() {
                assert_eq!(a.read, [read], "{cmd}");
            }
        }
        assert_eq!(shell_access("sed -i.bak 1d a.rs").write, ["a.rs"]);
        assert_eq!(shell_access("sed --in-place=.b -e 1d a.rs").write, ["a.rs"]);
    }

    use proptest::prelude::*;

    /// (shell text, the word after quote removal).
    const PATHS: &[(&str, &str)] = &[
        ("src/a.rs", "src/a.rs"),
        ("../etc/passwd", "../etc/passwd"),
        ("/etc/hostname", "/etc/hostname"),
        ("link.rs", "link.rs"),
        ("env.rs", "env.rs"),
        ("dir/../x.rs", "dir/../x.rs"),
        ("./src/a.rs", "./src/a.rs"),
        ("'a b.rs'", "a b.rs"),
        ("\"q.rs\"", "q.rs"),
        ("'*.rs'", "*.rs"),
        ("'$HOME'", "$HOME"),
        ("/proc/self/environ", "/proc/self/environ"),
        ("src/link/../../secret", "src/link/../../secret"),
    ];
    const DIRS: &[(&str, &str)] = &[
        ("src", "src"),
        ("..", ".."),
        ("/tmp", "/tmp"),
        ("'my dir'", "my dir"),
        ("link", "link"),
    ];

    fn path() -> impl Strategy<Value = (String, String)> {
        proptest::sample::select(PATHS).prop_map(|(t, w)| (t.to_string(), w.to_string()))
    }

    /// A command arev can derive, built from the vocabulary.
    fn safe_segment() -> impl Strategy<Value = String> {
        let prog = proptest::sample::select(vec![
            "cat",
            "cat -n",
            "nl -ba",
            "head -n 5",
            "tail -n 3",
            "wc -l",
            "sed -n '1,20p'",
            "sed -n -e '/x/p'",
            "grep -n foo",
            "grep -rn foo",
            "rg -n foo",
            "rg --files",
            "ls",
            "ls -la",
            "echo hi",
            "/usr/bin/cat",
            "LC_ALL=C cat",
        ]);
        let redirect = proptest::sample::select(vec!["", " 2>/dev/null", " 2>&1", " >/dev/null"]);
        prop_oneof![
            4 => (prog, proptest::collection::vec(path(), 0..3), redirect, proptest::option::of(path()))
                .prop_map(|(p, ops, r, inp)| {
                    let mut s = p.to_string();
                    for (t, _) in ops {
                        s.push(' ');
                        s.push_str(&t);
                    }
                    s.push_str(r);
                    if let Some((t, _)) = inp {
                        s.push_str(" < ");
                        s.push_str(&t);
                    }
                    s
                }),
            1 => proptest::sample::select(DIRS).prop_map(|(t, _)| format!("cd {t}")),
        ]
    }

    /// A command that writes, runs something or reads what it does not name.
    fn dangerous_segment() -> impl Strategy<Value = String> {
        let forms = proptest::sample::select(vec![
            "cat @P > @O",
            "echo x >> @O",
            "cat @P &> @O",
            "cat @P >& @O",
            "cat @P 1> @O",
            "cat @P >| @O",
            "tee @O",
            "cp @P @O",
            "rm -rf @P",
            "touch @O",
            "python3 @P",
            "sh -c 'rm @P'",
            "bash @P",
            "./cat @P",
            "src/cat @P",
            "sed -i 's/a/b/' @P",
            "sed -n 'w @O' @P",
            "sed 's/a/b/w @O' @P",
            "sed '1e id' @P",
            "sed -f @P @P",
            "sed 'r @P' @P",
            "rg --pre=sh x @P",
            "rg --pre sh x @P",
            "rg -z x @P",
            "rg --hostname-bin=id x @P",
            "wc --files0-from=@P",
            "cat $(echo @P)",
            "cat `echo @P`",
            "cat $HOME",
            "cat \"$X\"",
            "(cat @P)",
            "{ cat @P; }",
            "cat {@P,@O}",
            "cat @P*",
            "cat ~/@P",
            "diff <(cat @P) @P",
            "cat <<EOF",
            "PATH=. cat @P",
            "LD_PRELOAD=@O cat @P",
            "X=1",
            "xargs cat",
            "find . -delete",
            "env cat @P",
            "exec cat @P",
            "eval cat @P",
            "git checkout @P",
            "awk '{print}' @P",
            "dd if=@P of=@O",
        ]);
        (forms, path(), path())
            .prop_map(|(f, (p, _), (o, _))| f.replace("@P", &p).replace("@O", &o))
    }

    fn separator() -> impl Strategy<Value = &'static str> {
        proptest::sample::select(vec![" | ", " && ", " ; ", " || ", "\n", " & ", "; "])
    }

    fn line(segments: Vec<(String, &'static str)>, wrap: bool) -> String {
        let mut s = String::new();
        for (i, (seg, sep)) in segments.iter().enumerate() {
            if i > 0 {
                s.push_str(sep);
            }
            s.push_str(seg);
        }
        if wrap && !s.contains('\'') {
            format!("/bin/bash -lc '{s}'")
        } else {
            s
        }
    }

    /// Whether `p` is a word of the vocabulary, or a word joined below the `cd` directories
    /// (as `join` builds it).
    fn literal(p: &str) -> bool {
        let words = PATHS.iter().chain(DIRS).map(|(_, w)| *w);
        if p.is_empty() || words.clone().any(|w| w == p) {
            return true;
        }
        DIRS.iter().map(|(_, d)| *d).any(|d| {
            p.strip_prefix(d.trim_end_matches('/'))
                .and_then(|rest| rest.strip_prefix('/'))
                .is_some_and(literal)
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

        /// Arbitrary text never panics the derivation.
        #[test]
        fn never_panics(s in any::<String>(), t in "[a-z /.'\"\\\\|&;<>()$`*?{}~#=\n\t0-9-]{0,80}") {
            let _ = shell_access(&s);
            let _ = shell_access(&t);
            let _ = shell_access(&format!("/bin/bash -lc '{t}'"));
        }

        /// Every path derived is literally one the command names (joined below its `cd`s),
        /// and a command made only of derivable parts is derived.
        #[test]
        fn derived_paths_are_named(
            segs in proptest::collection::vec((safe_segment(), separator()), 1..5),
            wrap in any::<bool>(),
        ) {
            let cmd = line(segs, wrap);
            let a = shell_access(&cmd);
            prop_assert_eq!(&a.unknown, &None, "{}", cmd);
            prop_assert!(a.write.is_empty(), "{cmd} → {a:?}");
            for p in a.read.iter().chain(&a.search) {
                prop_assert!(literal(p), "{cmd} → {p:?} is not a word of the command");
            }
        }

        /// A write or an exec construct anywhere in the line is never read-only, and what
        /// is reported is still only what the command names.
        #[test]
        fn writes_and_execs_are_never_read_only(
            before in proptest::collection::vec((safe_segment(), separator()), 0..3),
            bad in (dangerous_segment(), separator()),
            after in proptest::collection::vec((safe_segment(), separator()), 0..3),
            wrap in any::<bool>(),
        ) {
            let mut segs = before;
            segs.push(bad);
            segs.extend(after);
            let cmd = line(segs, wrap);
            let a = shell_access(&cmd);
            prop_assert!(a.unknown.is_some() || !a.write.is_empty(), "{cmd} → {a:?}");
            for p in a.read.iter().chain(&a.search).chain(&a.write) {
                prop_assert!(literal(p), "{cmd} → {p:?} is not a word of the command");
            }
        }
    }
}
