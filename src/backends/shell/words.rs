//! What every program's rules share: a command's options split from its operands (which
//! options take a value, per program), and a path word joined to the directory of the
//! preceding `cd`s.

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
pub(super) fn split_args<'a>(prog: &str, args: &'a [String]) -> (Vec<Opt<'a>>, Vec<&'a str>) {
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

/// `p` relative to `cwd` (the directory of the preceding `cd`s; `""` = the working
/// directory).
pub(super) fn join(cwd: &str, p: &str) -> String {
    if cwd.is_empty() || p.starts_with('/') {
        p.to_string()
    } else if p.is_empty() {
        cwd.to_string()
    } else {
        format!("{}/{p}", cwd.trim_end_matches('/'))
    }
}
