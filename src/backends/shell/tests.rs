//! What `shell_access` derives from command lines, and what it refuses.

use super::shell_access;

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
    (forms, path(), path()).prop_map(|(f, (p, _), (o, _))| f.replace("@P", &p).replace("@O", &o))
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
