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

mod access;
mod error;
mod programs;
mod sed;
#[cfg(test)]
mod tests;
mod tokenize;
mod words;

pub use access::shell_access;
