//! File accesses derived from a shell command line (Codex `command_execution` items, Gemini
//! `run_shell_command`), so that shell reads face the same read gates as a `Read` tool.
//!
//! What is derived:
//! * The `/bin/bash -lc '<cmd>'` (also `sh -c`, `zsh -lc`, `bash -c`) wrapper is stripped.
//! * The line is split into commands at `|`, `||`, `&&`, `;`, `&` and newlines; a `cd DIR`
//!   makes later relative paths relative to DIR. `VAR=value` prefixes are skipped.
//! * Readers: `cat`, `nl`, `head`, `tail`, `wc` and `sed` (the script is the first operand
//!   unless given with `-e`; `-f FILE` is a read) read their file operands.
//! * Searchers: `grep`/`egrep`/`fgrep` and `rg` search their path operands (the pattern is
//!   the first operand unless given with `-e`/`-f`); `ls` lists its operands. With no path,
//!   `rg`, `grep -r` and `ls` search the working directory (`""`), unless the command reads
//!   a pipe (then it searches its stdin, which touches no file).
//! * `< FILE` is a read; `> FILE`/`>> FILE` is a write (except `/dev/null` and `&N`);
//!   `sed -i` is a write.
//! * `echo`, `printf`, `pwd`, `true` and `false` touch no file.
//!
//! What cannot be derived, and is reported as `FileAccess::unknown` (which the read
//! membership gate treats as off-target, fail closed): any other program (`find`, `awk`,
//! `xargs`, `git`, `python`, scripts, …), command substitution (`$(…)`, backticks), variable
//! expansion (`$X`), unquoted globs (`*`, `?`, `[`), `~`, subshells and groups (`(…)`,
//! `{ …; }`), here-documents and process substitution. Blocked write attempts never appear
//! in Codex's `--json` output at all (docs/architecture.md §16.3), so they cannot be seen
//! here either.

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
        let shell = words[0].rsplit('/').next().unwrap_or("");
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
                    // `>&2`, `2>&1`: consume the fd digits.
                    while chars
                        .peek()
                        .is_some_and(|d| d.is_ascii_digit() || *d == '-')
                    {
                        chars.next();
                    }
                    out.push(Tok::FdDup);
                } else if chars.peek() == Some(&'(') {
                    return Err("process substitution".into());
                } else {
                    out.push(Tok::Redirect { write: true });
                }
            }
            '$' => return Err("variable or command substitution (`$`)".into()),
            '`' => return Err("command substitution (backticks)".into()),
            '(' | ')' => return Err("subshell".into()),
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
        "sed" => &["-e", "-f", "-l", "--expression", "--file"],
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
        ],
        _ => &[],
    }
}

/// Split a command's arguments into (options with their values, operands).
fn split_args<'a>(
    prog: &str,
    args: &'a [String],
) -> (Vec<(&'a str, Option<&'a str>)>, Vec<&'a str>) {
    let takes = value_opts(prog);
    let mut opts = Vec::new();
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
            if a.contains('=') {
                let (k, v) = a.split_once('=').unwrap_or((a, ""));
                opts.push((k, Some(v)));
            } else if takes.contains(&a) {
                opts.push((a, args.get(i).map(String::as_str)));
                i += 1;
            } else {
                opts.push((a, None));
            }
            continue;
        }
        // Short options, possibly bundled (`-rn`), the last possibly taking a value (`-n5`,
        // `-A 3`). A bare number (`head -20`) is a count.
        let body = &a[1..];
        if body.chars().all(|c| c.is_ascii_digit()) {
            opts.push((a, None));
            continue;
        }
        for (idx, ch) in body.char_indices() {
            let short = format!("-{ch}");
            if let Some(t) = takes.iter().find(|t| **t == short) {
                let rest = &body[idx + ch.len_utf8()..];
                if rest.is_empty() {
                    opts.push((t, args.get(i).map(String::as_str)));
                    i += 1;
                } else {
                    opts.push((t, Some(rest)));
                }
                break;
            }
            opts.push((short_static(ch), None));
        }
    }
    (opts, operands)
}

/// Single-letter option names as static strings (enough for the checks below).
fn short_static(ch: char) -> &'static str {
    match ch {
        'r' => "-r",
        'R' => "-R",
        'i' => "-i",
        'n' => "-n",
        'l' => "-l",
        _ => "-?",
    }
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
    // `VAR=value cmd`: skip the assignments.
    let start = words
        .iter()
        .position(|w| !is_assignment(w))
        .unwrap_or(words.len());
    let words = &words[start..];
    let Some(first) = words.first() else {
        return Ok(());
    };
    let prog = first.rsplit('/').next().unwrap_or(first).to_string();
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
            let (_, operands) = split_args(&prog, args);
            access.read.extend(
                operands
                    .into_iter()
                    .filter(|o| *o != "-")
                    .map(|o| join(cwd, o)),
            );
        }
        "sed" => {
            let (opts, operands) = split_args(&prog, args);
            let mut script_given = false;
            for (k, v) in &opts {
                match *k {
                    "-e" | "--expression" => script_given = true,
                    "-f" | "--file" => {
                        script_given = true;
                        access.read.extend(v.map(|f| join(cwd, f)));
                    }
                    "-i" | "--in-place" => return in_place(access, cwd, &operands, script_given),
                    _ => {}
                }
            }
            let files = if script_given {
                &operands[..]
            } else {
                operands.get(1..).unwrap_or(&[])
            };
            access.read.extend(files.iter().map(|f| join(cwd, f)));
        }
        "grep" | "egrep" | "fgrep" | "rg" => {
            let (opts, operands) = split_args(&prog, args);
            let mut pattern_given = false;
            let mut recursive = prog == "rg";
            for (k, v) in &opts {
                match *k {
                    "-e" | "--regexp" => pattern_given = true,
                    "-f" | "--file" => {
                        pattern_given = true;
                        access.read.extend(v.map(|f| join(cwd, f)));
                    }
                    "--files" => pattern_given = true,
                    "-r" | "-R" | "--recursive" | "--dereference-recursive" => recursive = true,
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

fn in_place(
    access: &mut FileAccess,
    cwd: &str,
    operands: &[&str],
    script_given: bool,
) -> Result<(), String> {
    let files = if script_given {
        operands
    } else {
        operands.get(1..).unwrap_or(&[])
    };
    access.write.extend(files.iter().map(|f| join(cwd, f)));
    Ok(())
}

fn is_assignment(w: &str) -> bool {
    match w.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit())
        }
        None => false,
    }
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
}
