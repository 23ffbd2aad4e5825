//! Unit tests of the sandbox's command line and environment (the real sandbox is driven by
//! `tests/integration/prove_sandbox.rs`).

use super::*;

fn spec() -> SandboxSpec {
    SandboxSpec {
        workdir: PathBuf::from("/work/wt/x"),
        argv: vec!["python3".into(), "-m".into(), "unittest".into()],
        timeout: Duration::from_secs(5),
        memory_bytes: 4 << 30,
        env_allow: vec!["CARGO_HOME".into()],
        bind_ro: vec![PathBuf::from("/home/u/.cargo")],
        mode: SandboxMode::Bwrap,
    }
}

fn strs(a: &[OsString]) -> Vec<&str> {
    a.iter().map(|s| s.to_str().unwrap()).collect()
}

/// The index of the option `opt` followed by `args`.
fn find(a: &[&str], opt: &[&str]) -> Option<usize> {
    a.windows(opt.len()).position(|w| w == opt)
}

#[test]
fn bwrap_unshares_everything_and_mounts_in_order() {
    let system = vec![
        SystemDir::Dir("/usr".into()),
        SystemDir::Link {
            path: "/bin".into(),
            target: "usr/bin".into(),
        },
    ];
    let etc = vec!["passwd".to_string(), "ssl".to_string()];
    let args = bwrap_args(&spec(), &mounts(), &system, &etc);
    let a = strs(&args);
    for opt in ["--unshare-all", "--die-with-parent", "--new-session"] {
        assert!(a.contains(&opt), "{opt}: {a:?}");
    }
    assert!(find(&a, &["--cap-drop", "ALL"]).is_some());
    assert!(find(&a, &["--ro-bind", "/usr", "/usr"]).is_some());
    assert!(find(&a, &["--symlink", "usr/bin", "/bin"]).is_some());
    assert!(find(&a, &["--ro-bind-try", "/etc/passwd", "/etc/passwd"]).is_some());
    assert!(find(&a, &["--proc", "/proc"]).is_some());
    assert!(find(&a, &["--dev", "/dev"]).is_some());
    // Nothing of the host's root, home, /run or /etc as a whole.
    assert!(find(&a, &["--ro-bind", "/", "/"]).is_none());
    assert!(find(&a, &["--bind", "/", "/"]).is_none());
    assert!(find(&a, &["--ro-bind", "/etc", "/etc"]).is_none());
    assert!(find(&a, &["--ro-bind-try", "/etc", "/etc"]).is_none());
    assert!(!a.contains(&"/run") && !a.contains(&"/root") && !a.contains(&"/var"));
    // A generic host name.
    assert!(find(&a, &["--hostname", "localhost"]).is_some(), "{a:?}");
    assert!(!a.iter().any(|s| s.contains("arev")), "{a:?}");
    // Order: tmpfs /tmp and $HOME, each at most the memory limit, then bind_ro over them,
    // then the scratch tree read-only at the stage, then the worktree's own tmpfs.
    let tmp = find(&a, &["--size", "4294967296", "--tmpfs", "/tmp"]).unwrap();
    let home = find(&a, &["--size", "4294967296", "--tmpfs", "/home/u"]).unwrap();
    let ro = find(&a, &["--ro-bind", "/home/u/.cargo", "/home/u/.cargo"]).unwrap();
    let stage = find(&a, &["--ro-bind", "/work/wt/x", "/mnt/src"]).unwrap();
    assert!(tmp < home && home < ro && ro < stage, "{a:?}");
    assert_eq!(
        a[stage + 3..],
        [
            "--size",
            "4294975488",
            "--tmpfs",
            "/work/wt/x",
            "--chdir",
            "/work/wt/x",
            "--remount-ro",
            "/"
        ]
    );
    // Nothing of the host is writable: no read-write bind at all.
    assert!(
        !a.contains(&"--bind") && !a.contains(&"--bind-try"),
        "{a:?}"
    );
}

fn mounts() -> Mounts<'static> {
    Mounts {
        home: Path::new("/home/u"),
        stage: Path::new("/mnt/src"),
        tree_bytes: 8192,
    }
}

/// The worktree is a tmpfs of the tree's size plus the memory limit (no `--size` when the
/// memory is unbounded), the tree staged read-only at the first neutral path no other mount
/// overlaps.
#[test]
fn the_worktree_is_a_tmpfs_of_the_tree_plus_the_memory_limit() {
    assert_eq!(workdir_size(64 << 20, 3 << 20), 67 << 20);
    assert_eq!(workdir_size(0, 3 << 20), 0);
    assert_eq!(workdir_size(u64::MAX, 1), u64::MAX);
    let mut s = spec();
    s.memory_bytes = 0;
    let a = bwrap_args(&s, &mounts(), &[], &[]);
    let a = strs(&a);
    assert!(!a.contains(&"--size"), "{a:?}");
    assert!(find(&a, &["--tmpfs", "/work/wt/x", "--chdir", "/work/wt/x"]).is_some());

    let home = Path::new("/home/u");
    assert_eq!(stage_path(&spec(), home), Some(PathBuf::from("/mnt/src")));
    s.bind_ro = vec![PathBuf::from("/mnt")];
    assert_eq!(stage_path(&s, home), Some(PathBuf::from("/srv/src")));
    s.workdir = PathBuf::from("/srv/src/tmp.x/repo");
    assert_eq!(stage_path(&s, home), Some(PathBuf::from("/media/src")));
    s.bind_ro = vec!["/mnt/src/a".into(), "/media".into(), "/opt/src".into()];
    assert_eq!(stage_path(&s, home), None);
    // The stage names nothing of arev.
    assert!(STAGES.iter().all(|p| !p.contains("arev")));
}

/// A tree on a tmpfs: each file in whole pages, a page for every other entry, links not
/// followed (a link to a large file is a page).
#[test]
fn a_trees_size_is_counted_in_pages_without_following_links() {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(d.path().join("a/b")).unwrap();
    std::fs::write(d.path().join("a/b/one"), [0u8; 1]).unwrap();
    std::fs::write(d.path().join("a/page"), [0u8; 4096]).unwrap();
    std::fs::write(d.path().join("more"), [0u8; 4097]).unwrap();
    std::fs::write(d.path().join("empty"), []).unwrap();
    let big = tempfile::NamedTempFile::new().unwrap();
    big.as_file().set_len(1 << 30).unwrap();
    std::os::unix::fs::symlink(big.path(), d.path().join("link")).unwrap();
    // a, a/b, link: 3 pages; one 1, page 1, more 2, empty 0.
    assert_eq!(tree_bytes(d.path(), 4096).unwrap(), (3 + 1 + 1 + 2) * 4096);
    assert!(tree_bytes(&d.path().join("nope"), 4096).is_err());
}

#[test]
fn only_allowlisted_etc_entries_are_bound() {
    for ok in [
        "passwd",
        "ld.so.cache",
        "ssl",
        "alternatives",
        "python3.12",
        "perl",
    ] {
        assert!(etc_allowed(ok), "{ok}");
    }
    for secret in [
        "shadow",
        "gshadow",
        "ssh",
        "sudoers",
        "environment",
        "npmrc",
        "pip.conf",
        "gitconfig",
        "netrc",
        "docker",
        "machine-id",
        "profile",
    ] {
        assert!(!etc_allowed(secret), "{secret}");
    }
}

#[test]
fn the_prologue_sets_the_memory_limit_then_execs_the_command() {
    let a = prologue(&spec(), None);
    let a = strs(&a);
    assert_eq!(a[0], "-c");
    assert!(
        a[1].starts_with("ulimit -v 4194304 || exit 125; ulimit -f 8388608 || exit 125; "),
        "{}",
        a[1]
    );
    assert!(a[1].ends_with("exec \"$@\""), "{}", a[1]);
    assert_eq!(a[2..], ["sh", "python3", "-m", "unittest"]);
    let mut s = spec();
    s.memory_bytes = 0;
    assert!(!strs(&prologue(&s, None))[1].contains("ulimit"));
    // Under bwrap the tree is copied in first, before the limits (a tree file larger than
    // the file-size limit still arrives) and before the ready line.
    let a = prologue(&spec(), Some(Path::new("/mnt/src")));
    assert!(
        strs(&a)[1].starts_with("cp -PRp /mnt/src/. . || exit 125; ulimit -v 4194304 "),
        "{}",
        strs(&a)[1]
    );
}

#[test]
fn the_environment_is_the_allowlist() {
    let from: Vec<(OsString, OsString)> = [
        ("PATH", "/usr/bin:/bin"),
        ("LANG", "C.UTF-8"),
        ("LC_ALL", "C"),
        ("HOME", "/home/u"),
        ("TERM", "xterm-256color"),
        ("GITHUB_TOKEN", "ghp_secret"),
        ("ANTHROPIC_API_KEY", "sk-secret"),
        ("SSH_AUTH_SOCK", "/run/ssh"),
        ("AREV_RUN_DIR", "/x"),
        ("CARGO_HOME", "/home/u/.cargo"),
    ]
    .iter()
    .map(|(k, v)| (OsString::from(k), OsString::from(v)))
    .collect();
    let allow = vec![
        "CARGO_HOME".to_string(),
        "RUSTUP_HOME".to_string(),
        "HOME".to_string(),
    ];
    let env = environment(&allow, Some(Path::new("/home/u")), &from);
    let env: Vec<(&str, &str)> = env
        .iter()
        .map(|(k, v)| (k.to_str().unwrap(), v.to_str().unwrap()))
        .collect();
    assert_eq!(
        env,
        [
            ("PATH", "/usr/bin:/bin"),
            ("LANG", "C.UTF-8"),
            ("LC_ALL", "C"),
            ("CARGO_HOME", "/home/u/.cargo"),
            ("TERM", "dumb"),
            ("HOME", "/home/u"),
        ]
    );
    // No PATH at all: a default one.
    let env = environment(&[], None, &[]);
    assert_eq!(env[0].1, "/usr/local/bin:/usr/bin:/bin");
}

#[test]
fn home_is_arevs_path_unless_it_is_a_system_directory() {
    assert_eq!(
        sandbox_home(Some(Path::new("/home/u"))),
        Path::new("/home/u")
    );
    assert_eq!(sandbox_home(Some(Path::new("/root"))), Path::new("/root"));
    for bad in [
        "/",
        "/usr",
        "/usr/local/u",
        "/etc/u",
        "relative",
        "/proc/1",
        "/dev/x",
    ] {
        assert_eq!(
            sandbox_home(Some(Path::new(bad))),
            Path::new(FALLBACK_HOME),
            "{bad}"
        );
    }
    assert_eq!(sandbox_home(None), Path::new(FALLBACK_HOME));
    // Under /tmp is fine: the tmpfs $HOME goes over the fresh /tmp.
    assert_eq!(sandbox_home(Some(Path::new("/tmp/h"))), Path::new("/tmp/h"));
}

#[test]
fn a_bad_spec_is_refused_before_anything_starts() {
    let mut s = spec();
    s.workdir = PathBuf::from("relative");
    assert!(matches!(launch(&s), Err(ProveError::BadWorkdir(_))));
    let d = tempfile::tempdir().unwrap();
    s.workdir = d.path().to_path_buf();
    s.argv.clear();
    assert!(matches!(launch(&s), Err(ProveError::EmptyCommand)));
}

#[test]
fn the_errors_name_the_fix() {
    let missing = ProveError::BwrapMissing.to_string();
    for want in [
        "apt-get install bubblewrap",
        "[prove] sandbox = \"none\"",
        "--prove-sandbox none",
    ] {
        assert!(missing.contains(want), "{want}: {missing}");
    }
    let ns = ProveError::NoNamespaces {
        bwrap: "/usr/bin/bwrap".into(),
        detail: "No permissions to create new namespace".into(),
    }
    .to_string();
    for want in [
        "unprivileged user namespaces",
        "kernel.unprivileged_userns_clone",
        "sandbox = \"none\"",
    ] {
        assert!(ns.contains(want), "{want}: {ns}");
    }
}
