//! End-to-end tests of target resolution and pinning against temporary git repositories.

use super::*;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use tempfile::TempDir;

const CAP: u64 = 1024 * 1024;

pub(super) fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=arev test",
            "-c",
            "user.email=arev@example.invalid",
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .expect("run git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf8")
}

fn write(dir: &Path, rel: &str, content: impl AsRef<[u8]>) {
    let p = dir.join(rel);
    fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
    fs::write(p, content).expect("write");
}

/// A repository with one commit holding `files`.
fn repo_with(files: &[(&str, &str)]) -> TempDir {
    let dir = TempDir::new().expect("tempdir");
    git(dir.path(), &["init", "-q"]);
    for (rel, content) in files {
        write(dir.path(), rel, content);
    }
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-q", "-m", "init", "--allow-empty"]);
    dir
}

fn req(cwd: &Path, args: &[&str]) -> TargetRequest {
    TargetRequest {
        args: args.iter().map(|s| (*s).to_owned()).collect(),
        base: None,
        base_tree: None,
        cwd: cwd.to_path_buf(),
        max_file_bytes: CAP,
        excludes: Excludes::new(vec![], true),
    }
}

fn resolve_in(cwd: &Path, args: &[&str]) -> Result<PinnedTarget, TargetError> {
    resolve(&req(cwd, args))
}

fn paths(t: &PinnedTarget) -> Vec<&str> {
    t.files.iter().map(|f| f.path.as_str()).collect()
}

fn sha(bytes: &[u8]) -> String {
    scan::sha256_hex(bytes)
}

fn canon(p: &Path) -> PathBuf {
    p.canonicalize().expect("canonicalize")
}

/// `sha256sum` over `sh -c` (the reference implementation of the manifest digest).
fn sha256sum_of(dir: &Path, script: &str) -> String {
    let out = Command::new("sh")
        .args(["-c", script])
        .current_dir(dir)
        .output()
        .expect("sh");
    assert!(out.status.success());
    String::from_utf8(out.stdout).expect("utf8")[..64].to_owned()
}

// ---------------------------------------------------------------- argument errors

#[test]
fn argument_errors() {
    let dir = repo_with(&[("a.rs", "fn a() {}\n")]);
    assert!(matches!(
        resolve_in(dir.path(), &[]),
        Err(TargetError::NoTarget)
    ));
    assert!(matches!(
        resolve_in(dir.path(), &["diff", "a.rs"]),
        Err(TargetError::DiffWithOthers(s)) if s == "diff a.rs"
    ));
    let mut r = req(dir.path(), &["a.rs"]);
    r.base = Some("main".into());
    assert!(matches!(resolve(&r), Err(TargetError::BaseWithoutDiff)));
}

// ---------------------------------------------------------------- diff

#[test]
fn diff_includes_modified_and_untracked_but_not_ignored() {
    let dir = repo_with(&[
        ("src/a.rs", "fn a() {}\nfn b() {}\nfn c() {}\n"),
        (".gitignore", "ignored.txt\n"),
    ]);
    let root = dir.path();
    write(
        root,
        "src/a.rs",
        "fn a() {}\nfn b2() {} // TODO rename\nfn c() {}\n",
    );
    write(root, "src/new.rs", "pub fn fresh() {}\nline two\n");
    write(root, "ignored.txt", "secret\n");

    let t = resolve_in(&root.join("src"), &["diff"]).expect("diff");
    assert_eq!(t.kind, TargetKind::Diff);
    assert_eq!(t.display, "diff");
    assert_eq!(t.root, canon(root));
    assert!(t.in_repo);
    assert_eq!(t.file_path, None);
    assert_eq!(paths(&t), ["src/a.rs", "src/new.rs"]);
    let art = t.artefact.as_ref().expect("artefact");
    assert_eq!(art.name, "diff.patch");
    let bytes = art.read().expect("read");
    let patch = String::from_utf8(bytes.clone()).expect("utf8");
    assert!(
        patch.contains("diff --git a/src/a.rs b/src/a.rs\n"),
        "{patch}"
    );
    assert!(patch.contains("\n-fn b() {}\n+fn b2() {} // TODO rename\n fn c() {}\n"));
    assert!(patch.contains("+++ b/src/new.rs\n"), "{patch}");
    assert!(patch.contains("new file mode 100644"), "{patch}");
    assert!(
        patch.contains("\n+pub fn fresh() {}\n+line two\n"),
        "{patch}"
    );
    assert!(!patch.contains("ignored.txt"));
    assert!(!paths(&t).contains(&"ignored.txt"));

    // TARGET_SHA is the sha256 of the written patch.
    let written = root.join("written.patch");
    fs::write(&written, &bytes).expect("write");
    assert_eq!(t.sha256, sha256sum_of(root, "sha256sum written.patch"));
    fs::remove_file(written).expect("rm");
    assert_eq!(t.sha256, sha(&bytes));
    assert_eq!(t.measured_lines, u64::from(scan::count_lines(&bytes)));

    let a = t.file("src/a.rs").expect("a.rs");
    assert_eq!(
        a.sha256,
        sha(&fs::read(root.join("src/a.rs")).expect("read"))
    );
    assert_eq!(a.lines, 3);
    assert_eq!(t.hunks["src/a.rs"], vec![Hunk { start: 1, end: 3 }]);
    assert_eq!(t.hunks["src/new.rs"], vec![Hunk { start: 1, end: 2 }]);
    assert_eq!(t.mode, Mode::Lightweight);
    assert_eq!(t.target_type, TargetType::Code);
    assert!(t.brief.contains("### src/a.rs (+1/-1)"), "{}", t.brief);
    assert!(t.brief.contains("TODO rename"), "{}", t.brief);
    assert!(t.brief.contains("### src/new.rs (+2/-0)"), "{}", t.brief);
    assert!(t.is_allowed("src/new.rs"));
}

#[test]
fn diff_patch_matches_git_diff_for_tracked_changes() {
    let dir = repo_with(&[("a.txt", "1\n2\n3\n4\n5\n6\n7\n8\n9\n"), ("b.txt", "x")]);
    let root = dir.path();
    write(root, "a.txt", "1\n2\n3\nfour\n5\n6\n7\n8\n9\nten\n");
    write(root, "b.txt", "y");
    let t = resolve_in(root, &["diff"]).expect("diff");
    let ours =
        String::from_utf8(t.artefact.expect("artefact").read().expect("read")).expect("utf8");
    let theirs = git(root, &["diff", "--no-color", "--no-ext-diff", "HEAD"]);
    // Index lines may abbreviate differently; everything else must be identical.
    let strip = |s: &str| -> String {
        s.lines()
            .filter(|l| !l.starts_with("index "))
            .map(|l| format!("{l}\n"))
            .collect()
    };
    assert_eq!(strip(&ours), strip(&theirs));
    assert!(ours.contains("\\ No newline at end of file\n"));
}

#[test]
fn diff_falls_back_to_the_staged_diff() {
    let dir = repo_with(&[("a.txt", "one\n")]);
    let root = dir.path();
    write(root, "a.txt", "two\n");
    git(root, &["add", "a.txt"]);
    write(root, "a.txt", "one\n");
    let t = resolve_in(root, &["diff"]).expect("staged diff");
    let patch = String::from_utf8(t.artefact.clone().expect("artefact").read().expect("read"))
        .expect("utf8");
    assert!(patch.contains("-one\n+two\n"), "{patch}");
    assert_eq!(paths(&t), ["a.txt"]);
    // What plain git prints for the staged diff, byte for byte.
    let theirs = git(
        root,
        &["diff-index", "--cached", "-p", "--full-index", "HEAD"],
    );
    assert_eq!(patch, theirs);
}

#[test]
fn diff_with_base_uses_the_merge_base() {
    let dir = repo_with(&[("a.txt", "a\n")]);
    let root = dir.path();
    git(root, &["checkout", "-q", "-b", "feature"]);
    write(root, "b.txt", "b\n");
    git(root, &["add", "b.txt"]);
    git(root, &["commit", "-q", "-m", "b"]);
    // main moves on after the fork: its change must not show up.
    git(root, &["checkout", "-q", "main"]);
    write(root, "c.txt", "c\n");
    git(root, &["add", "c.txt"]);
    git(root, &["commit", "-q", "-m", "c"]);
    git(root, &["checkout", "-q", "feature"]);
    write(root, "a.txt", "a2\n");

    let mut r = req(root, &["diff"]);
    r.base = Some("main".into());
    let t = resolve(&r).expect("diff --base");
    assert_eq!(paths(&t), ["a.txt", "b.txt"]);
    assert_eq!(t.base.as_deref(), Some("main"));
    assert_eq!(repin(&t).expect("repin"), t.sha256);

    let plain = resolve_in(root, &["diff"]).expect("diff");
    assert_eq!(paths(&plain), ["a.txt"]);

    r.base = Some("no-such-rev".into());
    assert!(matches!(resolve(&r), Err(TargetError::BadBase { rev, .. }) if rev == "no-such-rev"));
}

#[test]
fn snapshot_diff_reviews_only_changes_since_the_snapshot_and_leaves_the_index_alone() {
    let dir = repo_with(&[("a.txt", "a\n"), ("b.txt", "b\n")]);
    let root = dir.path();
    // Work from before the snapshot: modified, staged, untracked, deleted, ignored.
    write(root, "a.txt", "a wip\n");
    write(root, "staged.txt", "staged\n");
    git(root, &["add", "staged.txt"]);
    write(root, "untracked.txt", "untracked\n");
    fs::remove_file(root.join("b.txt")).expect("rm");
    write(root, ".gitignore", "ignored.log\n.arev/\n");
    write(root, "ignored.log", "noise\n");
    write(root, ".arev/sessions/s/state.json", "{}\n");
    // `git status` may refresh the index itself: run it before reading the bytes.
    let status_before = git(root, &["status", "--porcelain"]);
    let index_before = fs::read(root.join(".git/index")).expect("index");

    let base = snapshot_diff(root, None, CAP, &Excludes::none()).expect("snapshot");
    assert_eq!(base.sha, empty_diff_sha());
    let listed = git(root, &["ls-tree", "-r", "--name-only", &base.tree]);
    let listed: Vec<&str> = listed.lines().collect();
    assert_eq!(
        listed,
        [".gitignore", "a.txt", "staged.txt", "untracked.txt"],
        "tracked and untracked, not ignored, not deleted, not .arev"
    );
    assert_eq!(
        fs::read(root.join(".git/index")).expect("index"),
        index_before
    );
    assert_eq!(git(root, &["status", "--porcelain"]), status_before);

    // Nothing changed since: an empty diff.
    let mut r = req(root, &["diff"]);
    r.base_tree = Some(base.tree.clone());
    assert!(matches!(resolve(&r), Err(TargetError::EmptyDiff { .. })));

    // The session's changes: a new untracked file and an edit on top of the WIP.
    write(root, "a.txt", "a wip\nmore\n");
    write(root, "new.txt", "new\n");
    let t = resolve(&r).expect("snapshot diff");
    assert_eq!(paths(&t), ["a.txt", "new.txt"]);
    let patch = String::from_utf8(t.artefact.as_ref().expect("artefact").read().expect("read"))
        .expect("utf8");
    assert!(patch.contains(" a wip\n+more\n"), "{patch}");
    assert!(
        !patch.contains("untracked") && !patch.contains("staged"),
        "{patch}"
    );
    assert_eq!(t.base_tree.as_deref(), Some(base.tree.as_str()));
    assert_eq!(t.hunks["a.txt"], [Hunk { start: 1, end: 2 }]);
    // The hook's sha is the one the run pins, and re-pinning agrees.
    let now = snapshot_diff(root, Some(&base.tree), CAP, &Excludes::none()).expect("snapshot now");
    assert_eq!(now.sha, t.sha256);
    assert_eq!(repin(&t).expect("repin"), t.sha256);
    assert_ne!(now.tree, base.tree);
    assert_eq!(
        fs::read(root.join(".git/index")).expect("index"),
        index_before
    );

    // Misuse: another target, with --base, or an oid that is not a tree here.
    let mut bad = req(root, &["a.txt"]);
    bad.base_tree = Some(base.tree);
    assert!(matches!(
        resolve(&bad),
        Err(TargetError::BaseTreeWithoutDiff)
    ));
    r.base = Some("HEAD".into());
    assert!(matches!(resolve(&r), Err(TargetError::BaseTreeWithoutDiff)));
    r.base = None;
    for oid in ["nothex", "0123456789012345678901234567890123456789"] {
        r.base_tree = Some(oid.into());
        assert!(
            matches!(resolve(&r), Err(TargetError::BadBaseTree { .. })),
            "{oid}"
        );
    }
}

#[test]
fn snapshot_diffs_skip_links_and_nested_repositories_like_any_diff() {
    let dir = repo_with(&[("a.txt", "a\n")]);
    let root = dir.path();
    let base = snapshot_diff(root, None, CAP, &Excludes::none()).expect("snapshot");
    std::os::unix::fs::symlink("/etc/passwd", root.join("link.txt")).expect("symlink");
    let nested = root.join("vendor/nested");
    fs::create_dir_all(&nested).expect("mkdir");
    git(&nested, &["init", "-q"]);
    write(&nested, "x.rs", "fn x() {}\n");
    // A nested repository without a commit is left out (no error).
    let mut r = req(root, &["diff"]);
    r.base_tree = Some(base.tree);
    let early = resolve(&r);
    assert!(!matches!(&early, Err(TargetError::Git(_))), "{early:?}");
    git(&nested, &["add", "-A"]);
    git(&nested, &["commit", "-q", "-m", "x"]);
    write(root, "b.txt", "b\n");
    let t = resolve(&r).expect("snapshot diff");
    assert_eq!(paths(&t), ["b.txt"]);
    let skipped: Vec<(&str, SkipReason)> = t
        .skipped
        .iter()
        .map(|s| (s.path.as_str(), s.reason))
        .collect();
    assert!(
        skipped.contains(&("link.txt", SkipReason::Symlink)),
        "{skipped:?}"
    );
    assert!(
        skipped
            .iter()
            .any(|(p, r)| p.starts_with("vendor/nested") && *r == SkipReason::Submodule),
        "{skipped:?}"
    );
}

#[test]
fn snapshot_records_a_nested_repository_instead_of_failing() {
    let dir = repo_with(&[("a.txt", "a\n")]);
    let root = dir.path();
    let nested = root.join("vendor/nested");
    fs::create_dir_all(&nested).expect("mkdir");
    git(&nested, &["init", "-q"]);
    write(&nested, "x.rs", "fn x() {}\n");
    // Without a commit it is left out; with one, it is a gitlink to its HEAD.
    let empty = snapshot_diff(root, None, CAP, &Excludes::none()).expect("snapshot");
    let listed = git(root, &["ls-tree", "-r", &empty.tree]);
    assert!(!listed.contains("vendor"), "{listed}");
    git(&nested, &["add", "-A"]);
    git(&nested, &["commit", "-q", "-m", "x"]);
    let head = git(&nested, &["rev-parse", "HEAD"]);
    let base = snapshot_diff(root, None, CAP, &Excludes::none()).expect("snapshot");
    let listed = git(root, &["ls-tree", "-r", &base.tree]);
    assert!(
        listed.contains(&format!("160000 commit {}\tvendor/nested", head.trim())),
        "{listed}"
    );
    // Unchanged since: no diff.
    assert_eq!(
        snapshot_diff(root, Some(&base.tree), CAP, &Excludes::none())
            .expect("diff")
            .sha,
        empty_diff_sha()
    );
}

#[test]
fn snapshot_of_an_unborn_branch() {
    let dir = TempDir::new().expect("tempdir");
    let root = dir.path();
    git(root, &["init", "-q"]);
    write(root, "a.txt", "a\n");
    let base = snapshot_diff(root, None, CAP, &Excludes::none()).expect("snapshot");
    write(root, "b.txt", "b\n");
    let now = snapshot_diff(root, Some(&base.tree), CAP, &Excludes::none()).expect("diff");
    assert_ne!(now.sha, empty_diff_sha());
    assert!(!root.join(".git/index").exists(), "no index written");
}

#[test]
fn empty_diff_and_non_repo() {
    let dir = repo_with(&[("a.txt", "a\n")]);
    let err = resolve_in(dir.path(), &["diff"]).expect_err("empty");
    assert!(matches!(err, TargetError::EmptyDiff { root } if root == canon(dir.path())));

    let plain = TempDir::new().expect("tempdir");
    let err = resolve_in(plain.path(), &["diff"]).expect_err("not a repo");
    assert!(matches!(err, TargetError::NotARepo(_)), "{err:?}");
}

#[test]
fn diff_on_unborn_head_lists_new_files() {
    let dir = TempDir::new().expect("tempdir");
    git(dir.path(), &["init", "-q"]);
    write(dir.path(), "first.rs", "fn main() {}\n");
    let t = resolve_in(dir.path(), &["diff"]).expect("diff");
    assert_eq!(paths(&t), ["first.rs"]);
    let patch =
        String::from_utf8(t.artefact.expect("artefact").read().expect("read")).expect("utf8");
    assert!(patch.contains("+fn main() {}\n"), "{patch}");
}

#[test]
fn diff_binary_deleted_and_run_dir() {
    let dir = repo_with(&[("gone.txt", "1\n2\n3\n"), ("keep.txt", "k\n")]);
    let root = dir.path();
    fs::remove_file(root.join("gone.txt")).expect("rm");
    write(root, "img.bin", [0u8, 1, 2, 3, 0, 5]);
    write(root, ".arev/runs/x/meta.json", "{}\n");
    write(root, "newdir/sub/n.txt", "nested\n");
    let t = resolve_in(root, &["diff"]).expect("diff");
    assert_eq!(paths(&t), ["gone.txt", "newdir/sub/n.txt"]);
    let gone = t.file("gone.txt").expect("gone");
    assert_eq!(gone.sha256, "");
    assert_eq!(gone.lines, 3);
    assert_eq!(t.hunks["gone.txt"], vec![Hunk { start: 1, end: 3 }]);
    assert_eq!(
        t.skipped,
        vec![SkippedFile::new("img.bin".into(), SkipReason::Binary)]
    );
    let patch = String::from_utf8(t.artefact.clone().expect("artefact").read().expect("read"))
        .expect("utf8");
    // Skipped files are left out of the patch: it holds exactly the reviewed files.
    assert!(!patch.contains("img.bin"), "{patch}");
    assert!(!patch.contains(".arev"), "{patch}");
    assert!(
        t.brief.contains("### gone.txt (deleted, -3)"),
        "{}",
        t.brief
    );
}

#[test]
fn long_diff_is_full_mode() {
    let dir = repo_with(&[("a.txt", "")]);
    let body: String = (0..200).map(|i| format!("line {i}\n")).collect();
    write(dir.path(), "a.txt", body);
    let t = resolve_in(dir.path(), &["diff"]).expect("diff");
    assert!(t.measured_lines > LIGHTWEIGHT_DIFF_LINES);
    assert_eq!(t.mode, Mode::Full);
}

// ---------------------------------------------------------------- file

#[test]
fn single_file_from_a_subdirectory() {
    let dir = repo_with(&[("src/lib.rs", "pub fn a() {}\n// FIXME x\n")]);
    let t = resolve_in(&dir.path().join("src"), &["lib.rs"]).expect("file");
    assert_eq!(t.kind, TargetKind::File);
    assert_eq!(t.display, "lib.rs");
    assert_eq!(t.file_path, Some(canon(&dir.path().join("src/lib.rs"))));
    assert!(t.artefact.is_none());
    let bytes = fs::read(dir.path().join("src/lib.rs")).expect("read");
    assert_eq!(t.sha256, sha(&bytes));
    assert_eq!(
        t.files,
        vec![TargetFile {
            path: "src/lib.rs".into(),
            sha256: sha(&bytes),
            lines: 2
        }]
    );
    assert_eq!(t.measured_lines, 2);
    assert_eq!(t.mode, Mode::Lightweight);
    assert_eq!(t.target_type, TargetType::Code);
    assert_eq!(t.brief, "### src/lib.rs\nL1: pub fn a() {}\nL2: FIXME x\n");
}

#[test]
fn single_file_errors() {
    let dir = repo_with(&[("ok.rs", "x\n")]);
    let root = dir.path();
    write(root, "bin.dat", b"abc\0def");
    write(root, "latin1.txt", [b'c', b'a', b'f', 0xe9, b'\n']);
    write(root, "big.txt", "x".repeat(100));
    assert!(matches!(
        resolve_in(root, &["missing.rs"]),
        Err(TargetError::NoSuchFile(s)) if s == "missing.rs"
    ));
    assert!(matches!(
        resolve_in(root, &["bin.dat"]),
        Err(TargetError::Binary(_))
    ));
    assert!(matches!(
        resolve_in(root, &["latin1.txt"]),
        Err(TargetError::NotUtf8(_))
    ));
    let mut r = req(root, &["big.txt"]);
    r.max_file_bytes = 10;
    assert!(matches!(
        resolve(&r),
        Err(TargetError::TooLarge {
            size: 100,
            cap: 10,
            ..
        })
    ));
    let other = TempDir::new().expect("tempdir");
    write(other.path(), "out.rs", "x\n");
    let abs = other.path().join("out.rs");
    assert!(matches!(
        resolve_in(root, &[abs.to_str().expect("utf8")]),
        Err(TargetError::OutsideRepo(_))
    ));
    // Outside a repository, the root is the cwd.
    assert!(matches!(
        resolve_in(&other.path().join("."), &["../nowhere/x"]),
        Err(TargetError::NoSuchFile(_))
    ));
}

#[cfg(unix)]
#[test]
fn unreadable_file() {
    use std::os::unix::fs::PermissionsExt;
    let dir = repo_with(&[("secret.rs", "x\n")]);
    let p = dir.path().join("secret.rs");
    fs::set_permissions(&p, fs::Permissions::from_mode(0o000)).expect("chmod");
    if fs::read(&p).is_ok() {
        // Running as root: permissions do not stop reads; nothing to test.
        return;
    }
    assert!(matches!(
        resolve_in(dir.path(), &["secret.rs"]),
        Err(TargetError::Unreadable { .. })
    ));
    let t = resolve_in(dir.path(), &["secret.rs", "."]);
    fs::set_permissions(&p, fs::Permissions::from_mode(0o644)).expect("chmod");
    let t = t.expect_err("only file unreadable");
    assert!(matches!(t, TargetError::NothingReviewable { .. }), "{t:?}");
}

#[test]
fn file_outside_a_repo_resolves_against_cwd() {
    let dir = TempDir::new().expect("tempdir");
    write(dir.path(), "notes/a.py", "def f():\n    pass\n");
    let t = resolve_in(dir.path(), &["notes/a.py"]).expect("file");
    assert!(!t.in_repo);
    assert_eq!(t.root, canon(dir.path()));
    assert_eq!(paths(&t), ["notes/a.py"]);
    let sub = dir.path().join("notes");
    write(dir.path(), "top.py", "x\n");
    assert!(matches!(
        resolve_in(&sub, &["../top.py"]),
        Err(TargetError::OutsideCwd(_))
    ));
}

#[test]
fn markdown_mode_and_type() {
    let dir = repo_with(&[]);
    let root = dir.path();
    write(
        root,
        "plan.md",
        "# Title\n\n## Implementation Plan\n\nDo it. Then more.\n\nPhase 2 adds X.\n",
    );
    write(root, "design.md", "# T\n## Design: caching\nBody.\n");
    write(
        root,
        "readme.md",
        "# Readme\n## Specification\nNot a spec heading.\n",
    );
    let late: String = (0..25).map(|i| format!("line {i}\n")).collect::<String>() + "## Plan\n";
    write(root, "late.md", late);
    write(root, "docs/superpowers/x.md", "# anything\n");
    write(root, "docs/superpowers/y.rs", "fn y() {}\n");

    let plan = resolve_in(root, &["plan.md"]).expect("plan");
    assert_eq!(
        (plan.mode, plan.target_type),
        (Mode::Full, TargetType::Spec)
    );
    assert_eq!(
        plan.brief,
        "L1: # Title\nL3: ## Implementation Plan — Do it.\nL7: Phase 2 adds X.\n"
    );
    let design = resolve_in(root, &["design.md"]).expect("design");
    assert_eq!(design.target_type, TargetType::Spec);
    let readme = resolve_in(root, &["readme.md"]).expect("readme");
    assert_eq!(
        (readme.mode, readme.target_type),
        (Mode::Full, TargetType::Code)
    );
    let late = resolve_in(root, &["late.md"]).expect("late");
    assert_eq!(late.target_type, TargetType::Code);
    let sp = resolve_in(root, &["docs/superpowers/x.md"]).expect("superpowers");
    assert_eq!(sp.target_type, TargetType::Spec);
    let code = resolve_in(root, &["docs/superpowers/y.rs"]).expect("rs");
    assert_eq!(
        (code.mode, code.target_type),
        (Mode::Lightweight, TargetType::Code)
    );
}

// ---------------------------------------------------------------- manifest

fn manifest_repo() -> TempDir {
    let dir = repo_with(&[
        (".gitignore", "target/\n*.log\n"),
        ("src/lib.rs", "pub mod a;\n"),
        ("src/a.rs", "pub fn a() {}\n"),
        ("src/sub/deep.rs", "fn deep() {}\n"),
        ("src/notes.txt", "notes\n"),
        ("README.md", "# r\n"),
    ]);
    let root = dir.path();
    write(root, "src/.hidden.rs", "fn hidden() {}\n");
    write(root, "src/debug.log", "log\n");
    write(root, "target/gen.rs", "fn gen() {}\n");
    write(root, "src/untracked.rs", "fn u() {}\n");
    dir
}

#[test]
fn glob_manifest_respects_gitignore_and_includes_hidden() {
    let dir = manifest_repo();
    let root = dir.path();
    let t = resolve_in(root, &["src/**/*.rs"]).expect("manifest");
    assert_eq!(t.kind, TargetKind::Manifest);
    assert_eq!(
        paths(&t),
        [
            "src/.hidden.rs",
            "src/a.rs",
            "src/lib.rs",
            "src/sub/deep.rs",
            "src/untracked.rs"
        ]
    );
    let art = t.artefact.as_ref().expect("artefact");
    assert_eq!(art.name, "manifest.txt");
    assert_eq!(
        String::from_utf8(art.read().expect("read")).expect("utf8"),
        "src/.hidden.rs\nsrc/a.rs\nsrc/lib.rs\nsrc/sub/deep.rs\nsrc/untracked.rs\n"
    );
    assert_eq!(t.mode, Mode::Full);
    assert_eq!(t.target_type, TargetType::Code);
    assert_eq!(t.measured_lines, 5);
    // TARGET_SHA equals what sha256sum prints for the listed files, hashed.
    let expected = sha256sum_of(
        root,
        "find src -type f -name '*.rs' | LC_ALL=C sort | xargs sha256sum | sha256sum",
    );
    assert_eq!(t.sha256, expected);
    for f in &t.files {
        assert_eq!(f.sha256, sha(&fs::read(root.join(&f.path)).expect("read")));
    }
    assert!(
        t.brief
            .starts_with("### src/.hidden.rs\nL1: fn hidden() {}\n"),
        "{}",
        t.brief
    );
}

#[test]
fn glob_is_relative_to_cwd() {
    let dir = manifest_repo();
    let src = dir.path().join("src");
    let t = resolve_in(&src, &["*.rs"]).expect("manifest");
    assert_eq!(
        paths(&t),
        [
            "src/.hidden.rs",
            "src/a.rs",
            "src/lib.rs",
            "src/untracked.rs"
        ]
    );
    let t = resolve_in(&src.join("sub"), &["../*.rs"]).expect("manifest");
    assert_eq!(paths(&t).len(), 4);
    let t = resolve_in(&src, &["./sub/*.rs"]).expect("manifest");
    assert_eq!(paths(&t), ["src/sub/deep.rs"]);
    let abs = format!("{}/src/sub/*.rs", canon(dir.path()).display());
    let t = resolve_in(&src, &[abs.as_str()]).expect("absolute glob");
    assert_eq!(paths(&t), ["src/sub/deep.rs"]);
    assert!(matches!(
        resolve_in(&src, &["../../*.rs"]),
        Err(TargetError::OutsideRepo(_))
    ));
}

#[test]
fn paths_dirs_and_globs_are_merged_and_deduplicated() {
    let dir = manifest_repo();
    let root = dir.path();
    let t = resolve_in(root, &["src/sub", "src/a.rs", "src/*.rs", "README.md"]).expect("m");
    assert_eq!(
        paths(&t),
        [
            "README.md",
            "src/.hidden.rs",
            "src/a.rs",
            "src/lib.rs",
            "src/sub/deep.rs",
            "src/untracked.rs"
        ]
    );
    assert_eq!(t.display, "src/sub src/a.rs src/*.rs README.md");
    // Two plain files: a manifest, not a file.
    let two = resolve_in(root, &["src/a.rs", "src/lib.rs"]).expect("two");
    assert_eq!(two.kind, TargetKind::Manifest);
    assert_eq!(paths(&two), ["src/a.rs", "src/lib.rs"]);
    // A directory alone, ignored files excluded, .git never listed.
    let all = resolve_in(root, &["."]).expect("dir");
    assert!(all.files.iter().all(|f| !f.path.starts_with(".git/")));
    assert!(paths(&all).contains(&".gitignore"));
    assert!(!paths(&all).contains(&"target/gen.rs"));
    assert!(!paths(&all).contains(&"src/debug.log"));
    // An explicitly named ignored file is taken.
    let named = resolve_in(root, &["target/gen.rs", "src/a.rs"]).expect("named");
    assert_eq!(paths(&named), ["src/a.rs", "target/gen.rs"]);
}

#[test]
fn manifest_errors() {
    let dir = manifest_repo();
    let root = dir.path();
    assert!(matches!(
        resolve_in(root, &["src/*.py"]),
        Err(TargetError::GlobMatchedNothing(g)) if g == "src/*.py"
    ));
    assert!(matches!(
        resolve_in(root, &["src/*.rs", "nope/*.rs"]),
        Err(TargetError::GlobMatchedNothing(g)) if g == "nope/*.rs"
    ));
    assert!(matches!(
        resolve_in(root, &["src/a.rs", "missing.rs"]),
        Err(TargetError::NoSuchFile(s)) if s == "missing.rs"
    ));
    assert!(matches!(
        resolve_in(root, &["src/[a.rs"]),
        Err(TargetError::InvalidGlob { glob, .. }) if glob == "src/[a.rs"
    ));
    assert!(matches!(
        resolve_in(root, &["missing_dir"]),
        Err(TargetError::NoSuchFile(_))
    ));
}

#[test]
fn manifest_skips_unreviewable_files() {
    let dir = repo_with(&[("ok.rs", "fn ok() {}\n")]);
    let root = dir.path();
    write(root, "data/bin.rs", b"\0\0\0");
    write(root, "data/big.rs", "x".repeat(64));
    write(root, "data/latin.rs", [0xffu8, 0xfe, b'\n']);
    let mut r = req(root, &["**/*.rs"]);
    r.max_file_bytes = 32;
    let t = resolve(&r).expect("manifest");
    assert_eq!(paths(&t), ["ok.rs"]);
    assert_eq!(
        t.skipped,
        vec![
            SkippedFile::new("data/big.rs".into(), SkipReason::TooLarge),
            SkippedFile::new("data/bin.rs".into(), SkipReason::Binary),
            SkippedFile::new("data/latin.rs".into(), SkipReason::NotUtf8),
        ]
    );
    // Skipped files are not in the manifest nor in its digest.
    assert_eq!(
        t.artefact.as_ref().expect("art").read().expect("read"),
        b"ok.rs\n"
    );
    let ok_sha = sha(b"fn ok() {}\n");
    assert_eq!(t.sha256, sha(format!("{ok_sha}  ok.rs\n").as_bytes()));

    let mut r = req(root, &["data"]);
    r.max_file_bytes = 32;
    assert!(matches!(
        resolve(&r),
        Err(TargetError::NothingReviewable { .. })
    ));
}

#[test]
fn manifest_outside_a_repo() {
    let dir = TempDir::new().expect("tempdir");
    write(dir.path(), "a/x.rs", "fn x() {}\n");
    write(dir.path(), "a/y.rs", "fn y() {}\n");
    write(dir.path(), ".gitignore", "a/y.rs\n");
    let t = resolve_in(dir.path(), &["a/*.rs"]).expect("manifest");
    assert!(!t.in_repo);
    assert_eq!(paths(&t), ["a/x.rs"]);
}

#[test]
fn manifest_brief_is_capped() {
    let dir = TempDir::new().expect("tempdir");
    for i in 0..200 {
        let body: String = (0..30)
            .map(|j| format!("pub fn function_number_{j}_in_file_{i}() {{}}\n"))
            .collect();
        write(dir.path(), &format!("f{i:03}.rs"), body);
    }
    let t = resolve_in(dir.path(), &["*.rs"]).expect("manifest");
    assert_eq!(t.files.len(), 200);
    assert!(t.brief.len() <= 2048, "{}", t.brief.len());
    assert!(t.brief.ends_with("…\n"));
    assert!(t
        .brief
        .starts_with("### f000.rs\nL1: pub fn function_number_0_in_file_0() {}\n"));
    // Deterministic.
    assert_eq!(
        resolve_in(dir.path(), &["*.rs"]).expect("again").brief,
        t.brief
    );
}

// ---------------------------------------------------------------- repin

#[test]
fn repin_detects_drift_for_every_kind() {
    let dir = manifest_repo();
    let root = dir.path();

    let file = resolve_in(root, &["src/a.rs"]).expect("file");
    let manifest = resolve_in(root, &["src/**/*.rs"]).expect("manifest");
    write(root, "src/a.rs", "pub fn a() { changed }\n");
    let diff = resolve_in(root, &["diff"]).expect("diff");
    assert_eq!(repin(&diff).expect("repin"), diff.sha256);

    assert_ne!(repin(&file).expect("repin"), file.sha256);
    assert_ne!(repin(&manifest).expect("repin"), manifest.sha256);
    // A new file matching the glob is not picked up: the file list is fixed.
    let before = repin(&manifest).expect("repin");
    write(root, "src/later.rs", "fn later() {}\n");
    assert_eq!(repin(&manifest).expect("repin"), before);

    write(root, "src/a.rs", "pub fn a() { changed again }\n");
    assert_ne!(repin(&diff).expect("repin"), diff.sha256);

    write(root, "src/a.rs", "pub fn a() {}\n");
    assert_eq!(repin(&file).expect("repin"), file.sha256);
    fs::remove_file(root.join("src/a.rs")).expect("rm");
    assert!(matches!(repin(&file), Err(TargetError::NoSuchFile(_))));
    assert!(repin(&manifest).is_err());
}

#[test]
fn the_drift_check_of_file_and_manifest_targets_reads_only_files_whose_key_moved() {
    let dir = manifest_repo();
    let root = dir.path();
    // Older than the racy window: their stat keys are trusted.
    std::thread::sleep(std::time::Duration::from_millis(2200));
    let file = resolve_in(root, &["src/a.rs"]).expect("file");
    let manifest = resolve_in(root, &["src/**/*.rs"]).expect("manifest");
    assert_eq!(repin(&file).expect("repin"), file.sha256);
    assert_eq!(repin(&manifest).expect("repin"), manifest.sha256);

    // The same inodes, now reached through a symlinked directory, which a read refuses: an
    // unchanged answer shows that nothing was read again.
    fs::rename(root.join("src"), root.join("moved")).expect("mv");
    std::os::unix::fs::symlink("moved", root.join("src")).expect("ln");
    assert_eq!(repin(&file).expect("repin"), file.sha256);
    assert_eq!(repin(&manifest).expect("repin"), manifest.sha256);

    // A file whose key moved is read again: refused through the link.
    write(root, "moved/a.rs", "pub fn a() { changed }\n");
    assert!(repin(&file).is_err());
    assert!(repin(&manifest).is_err());
}

// ---------------------------------------------------------------- hostile trees

#[cfg(unix)]
fn symlink(dir: &Path, target: &str, link: &str) {
    let p = dir.join(link);
    fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
    std::os::unix::fs::symlink(target, p).expect("symlink");
}

fn skipped(t: &PinnedTarget) -> Vec<(&str, SkipReason)> {
    t.skipped
        .iter()
        .map(|s| (s.path.as_str(), s.reason))
        .collect()
}

fn patch_text(t: &PinnedTarget) -> String {
    String::from_utf8(t.artefact.clone().expect("artefact").read().expect("read")).expect("utf8")
}

#[cfg(unix)]
#[test]
fn diff_never_follows_symlinks() {
    let dir = repo_with(&[("a.rs", "fn a() {}\n"), ("was_file.rs", "fn w() {}\n")]);
    let root = dir.path();
    let outside = TempDir::new().expect("tempdir");
    write(outside.path(), "secret", "TOKEN=hunter2\n");
    let secret = outside.path().join("secret");
    symlink(root, secret.to_str().expect("utf8"), "env.rs");
    symlink(root, outside.path().to_str().expect("utf8"), "etcdir");
    // A tracked file replaced by a link (a type change).
    fs::remove_file(root.join("was_file.rs")).expect("rm");
    symlink(root, secret.to_str().expect("utf8"), "was_file.rs");
    write(root, "a.rs", "fn a() { 1 }\n");
    let t = resolve_in(root, &["diff"]).expect("diff");
    assert_eq!(paths(&t), ["a.rs"]);
    assert_eq!(
        skipped(&t),
        [
            ("env.rs", SkipReason::Symlink),
            ("etcdir", SkipReason::Symlink),
            ("was_file.rs", SkipReason::Symlink)
        ]
    );
    let patch = patch_text(&t);
    assert!(
        !patch.contains("hunter2") && !patch.contains("env.rs"),
        "{patch}"
    );
    assert!(!patch.contains("was_file"), "{patch}");
    assert!(!t.is_allowed("env.rs") && !t.is_allowed("etcdir"));

    // Links alone: nothing reviewable, and the error says what was skipped.
    let dir = repo_with(&[("a.rs", "fn a() {}\n")]);
    symlink(dir.path(), secret.to_str().expect("utf8"), "env.rs");
    match resolve_in(dir.path(), &["diff"]) {
        Err(TargetError::DiffNothingReviewable { skipped, target }) => {
            assert_eq!(skipped, "1 symlink: env.rs");
            assert!(target.files.is_empty());
            assert_eq!(target.skipped.len(), 1);
        }
        other => panic!("{other:?}"),
    }
}

#[cfg(unix)]
#[test]
fn file_and_manifest_targets_never_follow_symlinks() {
    let dir = repo_with(&[("src/a.rs", "fn a() {}\n"), ("real/b.rs", "fn b() {}\n")]);
    let root = dir.path();
    let outside = TempDir::new().expect("tempdir");
    write(outside.path(), "x.rs", "fn secret() {}\n");
    let out_file = outside.path().join("x.rs");
    symlink(root, out_file.to_str().expect("utf8"), "src/link.rs");
    symlink(root, "a.rs", "src/inner.rs");
    symlink(root, "../real", "src/dirlink");
    symlink(root, outside.path().to_str().expect("utf8"), "ext");

    // A single-file target that is a link, or reached through one: exit 2, named.
    for (arg, link) in [
        ("src/link.rs", "src/link.rs"),
        ("src/inner.rs", "src/inner.rs"),
        ("src/dirlink/b.rs", "src/dirlink"),
        ("ext/x.rs", "ext"),
    ] {
        match resolve_in(root, &[arg]) {
            Err(TargetError::Symlink(l)) => assert_eq!(l, link, "{arg}"),
            other => panic!("{arg}: {other:?}"),
        }
    }
    let msg = TargetError::Symlink("src/link.rs".into()).to_string();
    assert!(msg.contains("symbolic link"), "{msg}");

    // A glob lists matching links as skipped, never hashes through them.
    let t = resolve_in(root, &["src/**/*.rs"]).expect("glob");
    assert_eq!(paths(&t), ["src/a.rs"]);
    assert_eq!(
        skipped(&t),
        [
            ("src/inner.rs", SkipReason::Symlink),
            ("src/link.rs", SkipReason::Symlink)
        ]
    );
    // A directory argument walks no link; named links are listed.
    let t = resolve_in(root, &["src", "src/link.rs", "ext/x.rs"]).expect("paths");
    assert_eq!(paths(&t), ["src/a.rs"]);
    assert_eq!(
        skipped(&t),
        [
            ("ext", SkipReason::Symlink),
            ("src/dirlink", SkipReason::Symlink),
            ("src/inner.rs", SkipReason::Symlink),
            ("src/link.rs", SkipReason::Symlink),
        ]
    );
    // A glob whose fixed prefix goes through a link.
    match resolve_in(root, &["src/dirlink/*.rs"]) {
        Err(TargetError::NothingReviewable { skipped, .. }) => {
            assert_eq!(skipped, "1 symlink: src/dirlink");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn diff_applies_the_size_cap_without_loading_big_files() {
    let dir = repo_with(&[("small.rs", "fn s() {}\n"), ("grown.txt", "x\n")]);
    let root = dir.path();
    write(root, "big.log", "y\n".repeat(4096));
    write(root, "grown.txt", "z\n".repeat(4096));
    write(root, "small.rs", "fn s() { 2 }\n");
    let mut r = req(root, &["diff"]);
    r.max_file_bytes = 1024;
    let t = resolve(&r).expect("diff");
    assert_eq!(paths(&t), ["small.rs"]);
    assert_eq!(
        skipped(&t),
        [
            ("big.log", SkipReason::TooLarge),
            ("grown.txt", SkipReason::TooLarge)
        ]
    );
    let patch = patch_text(&t);
    assert!(
        !patch.contains("big.log") && !patch.contains("grown.txt"),
        "{patch}"
    );
    assert_eq!(repin(&t).expect("repin"), t.sha256);
}

#[test]
fn binary_only_diff_is_not_empty_but_unreviewable() {
    let dir = repo_with(&[("a.rs", "fn a() {}\n")]);
    write(dir.path(), "img.png", [0u8, 1, 2, 0]);
    match resolve_in(dir.path(), &["diff"]) {
        Err(e @ TargetError::DiffNothingReviewable { .. }) => {
            let msg = e.to_string();
            assert!(msg.contains("1 binary: img.png"), "{msg}");
            assert!(msg.contains("--allow-empty"), "{msg}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn run_dirs_are_never_part_of_a_diff_or_a_walk() {
    let dir = repo_with(&[("a.rs", "fn a() {}\n")]);
    let root = dir.path();
    write(root, "a.rs", "fn a() { 1 }\n");
    // A configured base inside the repo, and an old run dir found by its shape.
    write(root, "runs/20240101-000000-abcdef-diff/meta.json", "{}\n");
    write(
        root,
        "runs/20240101-000000-abcdef-diff/target/diff.patch",
        "+x\n",
    );
    write(root, "runs/notes.rs", "fn n() {}\n");
    write(root, "old/20240101-000000-0a0b0c-x/meta.json", "{}\n");
    write(
        root,
        "old/20240101-000000-0a0b0c-x/prompt.rs",
        "fn p() {}\n",
    );
    // Named like a run but without meta.json: ordinary files.
    write(root, "old/20240101-000000-0a0b0c/keep.rs", "fn k() {}\n");
    let r = req(root, &["diff"]);
    let t = resolve_excluding(&r, &[root.join("runs")]).expect("diff");
    assert_eq!(paths(&t), ["a.rs", "old/20240101-000000-0a0b0c/keep.rs"]);
    assert_eq!(
        skipped(&t),
        [
            ("old/20240101-000000-0a0b0c-x", SkipReason::RunDir),
            ("runs", SkipReason::RunDir)
        ]
    );
    assert!(!patch_text(&t).contains("runs/"));

    let r = req(root, &["**/*.rs"]);
    let t = resolve_excluding(&r, &[root.join("runs")]).expect("glob");
    assert_eq!(paths(&t), ["a.rs", "old/20240101-000000-0a0b0c/keep.rs"]);
    assert_eq!(
        skipped(&t),
        [
            ("old/20240101-000000-0a0b0c-x", SkipReason::RunDir),
            ("runs", SkipReason::RunDir)
        ]
    );
}

#[test]
fn glob_prefix_inside_an_ignored_directory_matches_nothing() {
    let dir = repo_with(&[
        ("a.rs", "fn a() {}\n"),
        (".gitignore", "build/\n*.gen.rs\n"),
    ]);
    let root = dir.path();
    write(root, "build/out/x.rs", "fn x() {}\n");
    write(root, "src/y.gen.rs", "fn y() {}\n");
    write(root, "src/z.rs", "fn z() {}\n");
    for glob in ["build/out/*.rs", "build/**/*.rs", "build"] {
        assert!(
            matches!(resolve_in(root, &[glob]), Err(TargetError::GlobMatchedNothing(g)) if g == glob),
            "{glob}"
        );
    }
    let t = resolve_in(root, &["src/*.rs"]).expect("glob");
    assert_eq!(paths(&t), ["src/z.rs"]);
    // Named explicitly, an ignored file is still reviewed.
    let t = resolve_in(root, &["build/out/x.rs", "src/z.rs"]).expect("paths");
    assert_eq!(paths(&t), ["build/out/x.rs", "src/z.rs"]);
}

#[test]
fn names_with_control_characters_are_refused_never_written_raw() {
    let dir = repo_with(&[("a.rs", "fn a() {}\n")]);
    let root = dir.path();
    write(root, "evil\nname.rs", "fn e() {}\n");
    write(root, "tab\tx.rs", "fn t() {}\n");
    let t = resolve_in(root, &["*.rs"]).expect("glob");
    assert_eq!(paths(&t), ["a.rs"]);
    assert_eq!(
        skipped(&t),
        [
            ("evil\\nname.rs", SkipReason::ControlChars),
            ("tab\\tx.rs", SkipReason::ControlChars)
        ]
    );
    assert_eq!(
        t.artefact.as_ref().expect("art").read().expect("read"),
        b"a.rs\n"
    );

    let d = resolve_in(root, &["diff"]);
    match d {
        Err(TargetError::DiffNothingReviewable { target, .. }) => assert_eq!(
            skipped(&target),
            [
                ("evil\\nname.rs", SkipReason::ControlChars),
                ("tab\\tx.rs", SkipReason::ControlChars)
            ]
        ),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        resolve_in(root, &["evil\nname.rs"]),
        Err(TargetError::ControlChars(n)) if n == "evil\\nname.rs"
    ));
}

#[test]
fn dirty_submodule_is_listed_skipped() {
    let sub = repo_with(&[("s.rs", "fn s() {}\n")]);
    let dir = repo_with(&[("a.rs", "fn a() {}\n")]);
    let root = dir.path();
    git(
        root,
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            sub.path().to_str().expect("utf8"),
            "vendor/sub",
        ],
    );
    git(root, &["commit", "-q", "-m", "sub"]);
    write(root, "vendor/sub/s.rs", "fn s() { dirty }\n");
    write(root, "a.rs", "fn a() { 1 }\n");
    let t = resolve_in(root, &["diff"]).expect("diff");
    assert_eq!(paths(&t), ["a.rs"]);
    assert_eq!(skipped(&t), [("vendor/sub", SkipReason::Submodule)]);
    assert!(!patch_text(&t).contains("vendor/sub"));
}

#[test]
fn untracked_nested_repository_is_listed_skipped() {
    let dir = repo_with(&[("a.rs", "fn a() {}\n")]);
    let root = dir.path();
    let nested = root.join("nested");
    fs::create_dir_all(&nested).expect("mkdir");
    git(&nested, &["init", "-q"]);
    write(root, "nested/n.rs", "fn n() {}\n");
    write(root, "a.rs", "fn a() { 1 }\n");
    let t = resolve_in(root, &["diff"]).expect("diff");
    assert_eq!(paths(&t), ["a.rs"]);
    assert_eq!(skipped(&t), [("nested", SkipReason::Submodule)]);
    assert!(!patch_text(&t).contains("nested"));
}

#[test]
fn linguist_attributes_apply_from_every_rule_file() {
    let dir = repo_with(&[
        ("a/b/.gitattributes", "*.gen.rs linguist-generated\n"),
        ("a/x.gen.rs", "fn x() {}\n"),
        ("a/b/c/y.gen.rs", "fn y() {}\n"),
        ("vendor/z.rs", "fn z() {}\n"),
        ("plain.rs", "fn p() {}\n"),
    ]);
    let root = dir.path();
    for f in ["a/x.gen.rs", "a/b/c/y.gen.rs", "vendor/z.rs", "plain.rs"] {
        write(root, f, "changed\n");
    }
    // A nested file applies below it only; info/attributes everywhere.
    write(
        root,
        ".git/info/attributes",
        "vendor/** linguist-vendored\n",
    );
    let t = resolve_in(root, &["diff"]).expect("diff");
    assert_eq!(paths(&t), ["a/x.gen.rs", "plain.rs"]);
    assert_eq!(
        skipped(&t),
        [
            ("a/b/c/y.gen.rs", SkipReason::Generated),
            ("vendor/z.rs", SkipReason::Vendored)
        ]
    );
    // A rule file tracked but gone from the working tree still applies (from the index).
    fs::remove_file(root.join("a/b/.gitattributes")).expect("rm");
    let t = resolve_in(root, &["diff"]).expect("diff");
    assert!(
        skipped(&t).contains(&("a/b/c/y.gen.rs", SkipReason::Generated)),
        "{:?}",
        skipped(&t)
    );
}

#[test]
fn diff_excludes_leave_files_out_of_the_patch_and_the_hook_sha_agrees() {
    let dir = repo_with(&[
        ("src/a.rs", "fn a() {}\n"),
        (".gitattributes", "gen/** linguist-generated\n"),
    ]);
    let root = dir.path();
    write(root, "src/a.rs", "fn a() { 1 }\n");
    write(root, "Cargo.lock", "# lock\n");
    write(root, "gen/x.rs", "fn x() {}\n");
    write(root, "web/app.min.js", "var a;\n");
    let mut r = req(root, &["diff"]);
    r.excludes = Excludes::new(vec!["*.min.js".into()], true);
    let t = resolve(&r).expect("resolve");
    assert_eq!(paths(&t), ["src/a.rs"]);
    let skipped: Vec<(String, String)> = t
        .skipped
        .iter()
        .map(|s| (s.path.clone(), s.label()))
        .collect();
    assert_eq!(
        skipped,
        [
            ("Cargo.lock".to_string(), "lockfile".to_string()),
            ("gen/x.rs".into(), "generated".into()),
            ("web/app.min.js".into(), "excluded:*.min.js".into()),
        ]
    );
    let patch = String::from_utf8(t.artefact.as_ref().expect("artefact").read().expect("read"))
        .expect("utf8");
    assert!(!patch.contains("Cargo.lock") && !patch.contains("gen/x.rs"));
    // The Stop hook's sha with the same excludes is the pinned sha.
    let sha = diff_sha_capped(root, None, CAP, &r.excludes).expect("sha");
    assert_eq!(sha, t.sha256);
    // Without them, the lockfile is part of the diff.
    let mut all = req(root, &["diff"]);
    all.excludes = Excludes::none();
    let t = resolve(&all).expect("resolve");
    assert!(paths(&t).contains(&"Cargo.lock"), "{:?}", paths(&t));
}

/// The plain-git command that reproduces `diff.patch` (docs/usage.md "Reproducing the pin with
/// git", docs/architecture.md §5.1): a throw-away index holding the working tree, diffed
/// against BASE with full object ids; the arguments are one exclude pathspec per skipped
/// path.
const PLAIN_GIT_DIFF: &str = r#"i=$(mktemp -u) && { cp -p "$(git rev-parse --git-path index)" "$i" 2>/dev/null || :; } && GIT_INDEX_FILE="$i" git add -A && GIT_INDEX_FILE="$i" git diff-index --cached -p --full-index "$BASE" -- ':!.arev' "$@"; s=$?; rm -f "$i"; exit $s"#;

fn plain_git_diff(root: &Path, base: &str, skipped: &[&str]) -> Vec<u8> {
    let excludes = skipped.iter().map(|p| format!(":(exclude,literal){p}"));
    let out = Command::new("sh")
        .args(["-c", PLAIN_GIT_DIFF, "sh"])
        .args(excludes)
        .env("BASE", base)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .current_dir(root)
        .output()
        .expect("sh");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

#[test]
fn a_diff_of_many_files_is_rendered_in_windows_and_spooled_in_git_order() {
    // Enough files for several windows diffed in parallel, with skipped files (a link, a
    // binary, an oversized file) between them: the patch must still be git's, in git's order.
    let names: Vec<String> = (0..150).map(|i| format!("m{}/f{i:03}.rs", i % 7)).collect();
    let files: Vec<(&str, String)> = names
        .iter()
        .map(|n| (n.as_str(), format!("fn f() {{\n    // {n}\n    1\n}}\n")))
        .collect();
    let refs: Vec<(&str, &str)> = files.iter().map(|(n, c)| (*n, c.as_str())).collect();
    let dir = repo_with(&refs);
    let root = dir.path();
    for (i, n) in names.iter().enumerate() {
        match i % 5 {
            0..=2 => write(root, n, format!("fn f() {{\n    // {n}\n    2\n}}\n")),
            3 if i % 10 == 3 => fs::remove_file(root.join(n)).expect("rm"),
            _ => {}
        }
    }
    for i in 0..40 {
        write(
            root,
            &format!("m{}/new{i:02}.rs", i % 7),
            format!("fn n{i}() {{}}\n"),
        );
    }
    symlink(root, "/etc/passwd", "m3/link.rs");
    fs::write(root.join("m2/bin.rs"), b"\0binary\n").expect("write");
    write(root, "m5/big.rs", "x".repeat(CAP as usize + 1));
    let t = resolve_in(root, &["diff"]).expect("diff");
    let mut skipped = skipped(&t);
    skipped.sort_by_key(|(p, _)| *p);
    assert_eq!(
        skipped,
        [
            ("m2/bin.rs", SkipReason::Binary),
            ("m3/link.rs", SkipReason::Symlink),
            ("m5/big.rs", SkipReason::TooLarge)
        ]
    );
    let ours = t.artefact.as_ref().expect("artefact").read().expect("read");
    let theirs = plain_git_diff(root, "HEAD", &["m2/bin.rs", "m3/link.rs", "m5/big.rs"]);
    assert_eq!(
        String::from_utf8_lossy(&ours),
        String::from_utf8_lossy(&theirs)
    );
    assert_eq!(t.files.len(), 90 + 15 + 40);
}

#[test]
fn diff_patch_is_byte_identical_to_plain_git() {
    let dir = every_kind_of_change();
    let root = dir.path();
    let t = resolve_in(root, &["diff"]).expect("diff");
    assert!(t.skipped.is_empty(), "{:?}", t.skipped);
    let ours = t.artefact.as_ref().expect("artefact").read().expect("read");
    let theirs = plain_git_diff(root, "HEAD", &[]);
    assert_eq!(
        String::from_utf8_lossy(&ours),
        String::from_utf8_lossy(&theirs)
    );
    assert_eq!(t.sha256, sha(&theirs));
    let patch = String::from_utf8(ours).expect("utf8");
    assert!(patch.contains("\n+++ b/sp ace.txt\t\n"), "{patch}");
    assert!(
        patch.contains("index 0000000000000000000000000000000000000000..e69de29bb2d1d6434b8b29ae775ad8c2e48c5391\n"),
        "full ids: {patch}"
    );
    assert!(patch.contains("diff --git a/staged_mv.txt b/staged_mv.txt\ndeleted file mode"));

    skipped_files_and_base_are_as_plain_git(root);
    base_tree_is_as_plain_git(root);
}

/// A repository with every kind of change git renders: tracked edits, a deletion, renames,
/// a mode change, a missing final newline, untracked files with odd names, ignored files.
fn every_kind_of_change() -> TempDir {
    let long_fn = format!("fn {}() {{", "very_long_function_name_".repeat(5));
    let body = format!("{long_fn}\n    1\n    2\n    3\n    4\n    5\n    6\n}}\n");
    let dir = repo_with(&[
        ("a.rs", "fn a() {\n    1\n}\n\nfn b() {\n    2\n}\n"),
        ("long.rs", &body),
        ("del.txt", "x\ny\n"),
        ("staged_mv.txt", "old\n"),
        ("plain_mv.txt", "moved by mv\n"),
        ("exe.sh", "#!/bin/sh\n"),
        ("nonl.txt", "a\nb"),
        ("empty_gone.txt", ""),
        ("dir/keep.rs", "k\n"),
    ]);
    let root = dir.path();
    // Tracked edits (one the indent heuristic slides), a deletion, renames (staged and
    // not), a mode change, a missing final newline.
    write(
        root,
        "a.rs",
        "fn a() {\n    1\n}\n\nfn c() {\n}\n\nfn b() {\n    2\n}\n",
    );
    write(root, "long.rs", body.replace("    5\n", "    five\n"));
    fs::remove_file(root.join("del.txt")).expect("rm");
    fs::remove_file(root.join("empty_gone.txt")).expect("rm");
    git(root, &["mv", "staged_mv.txt", "staged_moved.txt"]);
    fs::rename(root.join("plain_mv.txt"), root.join("dir/plain_moved.txt")).expect("mv");
    write(root, "nonl.txt", "a\nc");
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(root.join("exe.sh"), fs::Permissions::from_mode(0o755)).expect("chmod");
    // New untracked files: nested, empty, executable, names with a space and non-ASCII.
    write(root, "untracked.rs", "new\n");
    write(root, "d/e/n.txt", "z\n");
    write(root, "empty.txt", "");
    write(root, "sp ace.txt", "space\n");
    write(root, "é.txt", "accent\n");
    write(root, "newexe.sh", "#!/bin/sh\necho\n");
    fs::set_permissions(root.join("newexe.sh"), fs::Permissions::from_mode(0o755)).expect("chmod");
    // Ignored files and arev's own home are not part of either.
    write(root, ".gitignore", "*.log\n");
    write(root, "ign.log", "i\n");
    write(root, ".arev/runs/x/meta.json", "{}\n");
    write(root, ".git/info/exclude", ".arev/\n");
    dir
}

/// Skipped files (a binary, a symlink) and `--base REV` against plain git.
fn skipped_files_and_base_are_as_plain_git(root: &Path) {
    // Skipped files (a binary, a symlink) are left out: the same command with one exclude
    // pathspec per skipped path.
    write(root, "img.bin", [0u8, 1, 2, 0]);
    symlink(root, "a.rs", "link.rs");
    let t = resolve_in(root, &["diff"]).expect("diff");
    let skipped: Vec<&str> = t.skipped.iter().map(|s| s.path.as_str()).collect();
    assert_eq!(skipped, ["img.bin", "link.rs"]);
    let ours = t.artefact.as_ref().expect("artefact").read().expect("read");
    assert_eq!(ours, plain_git_diff(root, "HEAD", &skipped));

    // --base REV: the merge base instead of HEAD.
    git(root, &["add", "-A", "--", ".", ":!img.bin", ":!link.rs"]);
    git(root, &["commit", "-q", "-m", "on top"]);
    write(root, "a.rs", "changed again\n");
    let mut r = req(root, &["diff"]);
    r.base = Some("HEAD~1".into());
    let t = resolve(&r).expect("diff --base");
    let base = git(root, &["merge-base", "HEAD~1", "HEAD"]);
    let ours = t.artefact.as_ref().expect("artefact").read().expect("read");
    assert_eq!(
        String::from_utf8_lossy(&ours),
        String::from_utf8_lossy(&plain_git_diff(root, base.trim(), &skipped))
    );
}

/// `--base-tree TREE` against plain git, and the hook's sha and drift check of it.
fn base_tree_is_as_plain_git(root: &Path) {
    use std::os::unix::fs::PermissionsExt;
    // --base-tree TREE (the Stop hook's reviews): the diff from a working-tree snapshot,
    // the same command with the tree for HEAD; excluded files are skipped files.
    let snap = snapshot_diff(root, None, CAP, &Excludes::none()).expect("snapshot");
    write(root, "a.rs", "changed after the snapshot\n");
    write(root, "after.rs", "new after the snapshot\n");
    write(root, "Cargo.lock", "# lock\n");
    write(root, "sp ace.txt", "space, edited\n");
    fs::remove_file(root.join("untracked.rs")).expect("rm");
    fs::set_permissions(root.join("newexe.sh"), fs::Permissions::from_mode(0o644)).expect("chmod");
    let mut r = req(root, &["diff"]);
    r.base_tree = Some(snap.tree.clone());
    let t = resolve(&r).expect("diff --base-tree");
    let skipped: Vec<&str> = t.skipped.iter().map(|s| s.path.as_str()).collect();
    assert_eq!(
        skipped,
        ["Cargo.lock"],
        "the binary and the link did not change"
    );
    let ours = t.artefact.as_ref().expect("artefact").read().expect("read");
    let theirs = plain_git_diff(root, &snap.tree, &skipped);
    assert_eq!(
        String::from_utf8_lossy(&ours),
        String::from_utf8_lossy(&theirs)
    );
    assert_eq!(t.sha256, sha(&theirs));
    assert!(String::from_utf8_lossy(&ours).contains("+++ b/after.rs\n"));
    // The hook's sha of the same diff, and a drift check on the unchanged tree.
    let excludes = Excludes::new(vec![], true);
    let now = snapshot_diff(root, Some(&snap.tree), CAP, &excludes).expect("snapshot");
    assert_eq!(now.sha, t.sha256);
    assert_eq!(repin(&t).expect("repin"), t.sha256);
}

// ---------------------------------------------------------------- cached diff sha

/// Whether the cache in `cache` already knows the working tree of `root` as it is now, for
/// a diff from the snapshot `base`.
fn cache_knows(root: &Path, base: &str, cache: &Path) -> bool {
    let repo = git2::Repository::open(root).expect("repo");
    let identity = resolve::snapshot_identity(base, CAP, &Excludes::none());
    let (key, listing) = treekey::worktree_key(&repo, root).expect("key");
    let known = treekey::ShaCache::load(cache);
    // The walk-free key agrees with the walk's while nothing listed moved.
    if let Some(stored) = known.listing().filter(|l| Some(*l) == listing.as_deref()) {
        let listed = treekey::worktree_key_listed(&repo, root, stored).expect("listed");
        assert_eq!(listed.digest, key.digest);
    }
    known.get(&identity, &key.digest).is_some()
}

/// The cached snapshot diff (stored at once: a zero racy margin) next to the uncached one.
fn cached_sha(root: &Path, base: &str, cache: &Path) -> String {
    let cached = resolve::snapshot_diff_cached_with(root, base, CAP, &Excludes::none(), cache, 0)
        .expect("cached");
    let fresh = snapshot_diff(root, Some(base), CAP, &Excludes::none()).expect("snapshot");
    assert_eq!(cached.snapshot, fresh);
    cached.snapshot.sha
}

/// A baseline snapshot of the working tree of `root` now.
fn baseline(root: &Path) -> String {
    snapshot_diff(root, None, CAP, &Excludes::none())
        .expect("baseline")
        .tree
}

#[test]
fn the_diff_sha_cache_hits_only_while_nothing_keyed_moved() {
    let dir = repo_with(&[
        ("src/a.rs", "fn a() {}\n"),
        ("src/b.rs", "fn b() {}\n"),
        (".gitignore", "target/\n"),
    ]);
    let root = &canon(dir.path());
    let state = TempDir::new().expect("state");
    let cache = state.path().join("diffkey.json");
    let tick = || std::thread::sleep(std::time::Duration::from_millis(20));
    let base = &baseline(root);
    write(root, "src/a.rs", "fn a() { 1 }\n");
    tick();
    assert!(!cache_knows(root, base, &cache));
    let first = cached_sha(root, base, &cache);
    assert!(
        cache_knows(root, base, &cache),
        "stored under the tree's key"
    );
    assert_eq!(cached_sha(root, base, &cache), first, "a hit");
    assert!(
        !cache_knows(root, &baseline(root), &cache),
        "keyed by the base too"
    );

    every_kind_of_change_moves_the_key(root, base, &cache);
    // Churn inside an ignored directory keeps the key.
    fs::create_dir_all(root.join("target/debug")).expect("mkdir");
    tick();
    cached_sha(root, base, &cache);
    write(root, "target/debug/out.o", "object");
    assert!(
        cache_knows(root, base, &cache),
        "ignored churn keeps the key"
    );

    // Not stored while the tree is too fresh to key (the default 2 s margin).
    write(root, "src/a.rs", "fn a() { 4 }\n");
    let cached = snapshot_diff_cached(root, base, CAP, &Excludes::none(), &cache).expect("cached");
    assert!(!cached.hit && cached.key.is_none());
    assert_eq!(
        cached.snapshot,
        snapshot_diff(root, Some(base), CAP, &Excludes::none()).expect("sha")
    );
    assert!(
        !cache_knows(root, base, &cache),
        "a racy tree is never stored"
    );
}

/// Every kind of change moves the key (and the sha follows the tree).
fn every_kind_of_change_moves_the_key(root: &Path, base: &str, cache: &Path) {
    let tick = || std::thread::sleep(std::time::Duration::from_millis(20));
    type Step<'a> = (&'a str, Box<dyn Fn() + 'a>);
    let steps: Vec<Step<'_>> = vec![
        (
            "a tracked file edited",
            Box::new(|| write(root, "src/a.rs", "fn a() { 2 }\n")),
        ),
        (
            "a clean tracked file edited",
            Box::new(|| write(root, "src/b.rs", "fn b() { 3 }\n")),
        ),
        (
            "an untracked file",
            Box::new(|| write(root, "src/new.rs", "new\n")),
        ),
        (
            "an untracked file edited",
            Box::new(|| write(root, "src/new.rs", "newer\n")),
        ),
        (
            "a new directory",
            Box::new(|| fs::create_dir_all(root.join("empty/deeper")).expect("mkdir")),
        ),
        (
            "a file in an untracked empty directory",
            Box::new(|| write(root, "empty/deeper/x.rs", "x\n")),
        ),
        (
            "a tracked file deleted",
            Box::new(|| fs::remove_file(root.join("src/b.rs")).expect("rm")),
        ),
        (
            "staged",
            Box::new(|| {
                git(root, &["add", "-A"]);
            }),
        ),
        (
            "committed",
            Box::new(|| {
                git(root, &["commit", "-q", "-m", "c"]);
            }),
        ),
    ];
    for (what, change) in steps {
        change();
        tick();
        assert!(!cache_knows(root, base, cache), "{what}: the key must move");
        cached_sha(root, base, cache);
        assert!(cache_knows(root, base, cache), "{what}: stored");
    }
}

#[test]
fn a_new_file_at_the_root_moves_the_key() {
    let dir = repo_with(&[("a.rs", "fn a() {}\n")]);
    let root = &canon(dir.path());
    let state = TempDir::new().expect("state");
    let cache = state.path().join("diffkey.json");
    let base = &baseline(root);
    write(root, "a.rs", "fn a() { 1 }\n");
    cached_sha(root, base, &cache);
    assert!(cache_knows(root, base, &cache));
    std::thread::sleep(std::time::Duration::from_millis(20));
    // Untracked, so only the walk sees it; the root directory's own key moved too.
    write(root, "new.rs", "x\n");
    assert!(!cache_knows(root, base, &cache));
}

#[test]
fn the_keyed_drift_check_splices_moved_files_into_the_pinned_patch() {
    let dir = repo_with(&[
        ("a.rs", "fn a() {}\n"),
        ("b.rs", "fn b() {}\n"),
        ("c.rs", "fn c() {}\n"),
    ]);
    let root = dir.path();
    write(root, "a.rs", "fn a() { 1 }\n");
    write(root, "c.rs", "fn c() { 3 }\n");
    write(root, "new/deep/n.rs", "fn n() {}\n");
    // Older than the racy window: their stat keys are trusted.
    std::thread::sleep(std::time::Duration::from_millis(2200));
    let t = resolve_in(root, &["diff"]).expect("diff");
    assert_eq!(paths(&t), ["a.rs", "c.rs", "new/deep/n.rs"]);
    assert_eq!(repin(&t).expect("repin"), t.sha256, "nothing moved");

    // One file in the middle and the untracked one move: re-rendered, the rest spliced in
    // from the spool; the result is the patch a fresh pin of the same files gives.
    write(root, "c.rs", "fn c() { 33 }\n");
    write(root, "new/deep/n.rs", "fn n() { moved }\n");
    let fresh = resolve_in(root, &["diff"]).expect("fresh");
    assert_eq!(paths(&fresh), paths(&t));
    assert_eq!(repin(&t).expect("repin"), fresh.sha256);

    // A moved base re-renders the pinned files.
    git(root, &["add", "a.rs"]);
    git(root, &["commit", "-q", "-m", "a"]);
    let now = resolve_in(root, &["diff"]).expect("now");
    assert_eq!(paths(&now), ["c.rs", "new/deep/n.rs"]);
    assert_eq!(repin(&t).expect("repin"), now.sha256);
}

/// The context scope: tracked text files within the cap (working-tree content) and the
/// target's files; never ignored, untracked, linked, binary, oversized, excluded or
/// submodule files, and never `.git`. What lies outside is known for the backends.
#[test]
fn context_scope_holds_tracked_text_only() {
    let dir = repo_with(&[
        ("app.py", "import ringbuf\nringbuf.push(1)\n"),
        ("ringbuf.py", "def push(x):\n    pass\n"),
        (".gitignore", ".env\nbuild/\n"),
        ("big.txt", &"x".repeat(64)),
        ("img.bin", "a\0b"),
        ("vendor/gen.py", "x = 1\n"),
        ("gone.py", "bye\n"),
    ]);
    let root = dir.path();
    std::os::unix::fs::symlink("app.py", root.join("link.py")).expect("symlink");
    git(root, &["add", "link.py"]);
    let sub = repo_with(&[("inner.py", "secret = 1\n")]);
    git(
        root,
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            &sub.path().display().to_string(),
            "sub",
        ],
    );
    git(root, &["commit", "-q", "-m", "more"]);
    write(root, ".env", "SECRET=hunter2\n");
    write(root, "build/out.py", "x\n");
    write(root, "scratch.py", "untracked\n");
    write(root, "newdir/new.py", "def new():\n    pass\n");
    write(root, "ringbuf.py", "def push(x, y):\n    pass\n");
    fs::remove_file(root.join("gone.py")).expect("rm");
    let pin = || {
        resolve_in(root, &["ringbuf.py"])
            .expect("pin")
            .with_context(ContextMode::Tree, &["vendor/**".into()], 32)
            .expect("scope")
    };
    let t = pin();
    let c = t.context.clone().expect("built");
    let files: Vec<&str> = c.files().collect();
    // big.txt and .gitmodules are over the 32-byte cap here; gone.py was deleted.
    assert_eq!(files, [".gitignore", "app.py", "ringbuf.py"]);
    for gone in [
        ".env",
        "build/out.py",
        "link.py",
        "img.bin",
        "big.txt",
        "vendor/gen.py",
        "sub/inner.py",
        ".git/config",
        "gone.py",
        "scratch.py",
        "newdir/new.py",
    ] {
        assert!(!t.readable(gone), "{gone} must be out of the scope");
    }
    assert!(t.readable("app.py") && t.readable("ringbuf.py"));
    // The modified file's blob id is its working-tree content's.
    let wt = git(root, &["hash-object", "ringbuf.py"]);
    assert_eq!(c.blob("ringbuf.py"), Some(wt.trim()));
    let outside: Vec<&str> = c.outside().map(|(p, _)| p).collect();
    for p in [
        ".env",
        "build/",
        "link.py",
        "img.bin",
        "big.txt",
        "vendor/gen.py",
        "sub/",
        "scratch.py",
        "newdir/",
    ] {
        assert!(outside.contains(&p), "{p} not refused: {outside:?}");
    }
    assert_eq!(c.listing(), ".gitignore\napp.py\nringbuf.py\n");
    // The same tree gives the same sha; a changed context file a different one.
    assert_eq!(pin().context.expect("built").sha(), c.sha());
    write(root, "app.py", "import ringbuf\nringbuf.push(2)\n");
    assert_ne!(pin().context.expect("built").sha(), c.sha());
    // `target`: the target's files only — a tracked caller is not readable.
    let narrow = resolve_in(root, &["ringbuf.py"])
        .expect("pin")
        .with_context(ContextMode::Target, &[], CAP)
        .expect("scope");
    assert!(!narrow.readable("app.py"));
    assert!(narrow.readable("ringbuf.py"));
    // … and what a backend hides is everything else in the working tree, tracked or not,
    // a directory without a target file as one entry; never the target, `.git` first.
    let nc = narrow.context.expect("built");
    let outside: Vec<&str> = nc.outside().map(|(p, _)| p).collect();
    for p in [
        ".gitignore",
        "app.py",
        ".env",
        "build/",
        "scratch.py",
        "sub/",
        "vendor/",
    ] {
        assert!(outside.contains(&p), "{p} not refused: {outside:?}");
    }
    assert!(!outside
        .iter()
        .any(|p| p.starts_with(".git/") || *p == "ringbuf.py"));
    let hidden = nc.hidden(&[]);
    assert_eq!(hidden[0], root.join(".git"));
    assert!(!hidden.contains(&root.join("ringbuf.py")), "{hidden:?}");
    // A diff's untracked new file is part of the target: in the scope, not refused, even
    // inside an untracked directory.
    let diff = resolve_in(root, &["diff"])
        .expect("pin")
        .with_context(ContextMode::Tree, &[], CAP)
        .expect("scope");
    let dc = diff.context.expect("built");
    assert!(dc.contains("newdir/new.py") && dc.contains("scratch.py"));
    assert!(!dc.contains("gone.py"), "a deleted file cannot be read");
    assert!(!dc
        .outside()
        .any(|(p, _)| p == "newdir/" || p == "newdir/new.py"));
    // The run's artefacts under an ignored directory stay readable: the refused directory
    // is replaced by its other entries.
    write(root, "build/runs/r1/target/diff.patch", "x\n");
    let hidden = c.hidden(&[root.join("build/runs/r1/target")]);
    assert!(hidden.contains(&root.join(".git")));
    assert!(hidden.contains(&root.join("build/out.py")), "{hidden:?}");
    assert!(
        !hidden
            .iter()
            .any(|h| root.join("build/runs/r1/target").starts_with(h)),
        "{hidden:?}"
    );
}

// ---------------------------------------------------------------------------------------
// Names no permission rule can hold (not UTF-8, control characters): outside the scope,
// hidden by their raw bytes (docs/contracts.md §22)
// ---------------------------------------------------------------------------------------

/// `name` (raw bytes) under `root`.
fn raw(root: &Path, name: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    root.join(std::ffi::OsStr::from_bytes(name))
}

/// Writes `content` at the raw `name` under `root`, making its parents.
fn write_raw(root: &Path, name: &[u8], content: &str) {
    let p = raw(root, name);
    fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
    fs::write(p, content).expect("write");
}

/// The scope of `ringbuf.py` in `root` under `mode`.
fn scope_of(root: &Path, mode: ContextMode) -> std::sync::Arc<ContextScope> {
    resolve_in(root, &["ringbuf.py"])
        .expect("pin")
        .with_context(mode, &[], CAP)
        .expect("scope")
        .context
        .expect("built")
}

fn unnamed_of(c: &ContextScope) -> Vec<(Vec<u8>, Outside)> {
    c.unnamed().map(|(p, w)| (p.to_vec(), w)).collect()
}

fn weird_repo() -> TempDir {
    repo_with(&[
        ("ringbuf.py", "def push(x):\n    pass\n"),
        ("app.py", "import ringbuf\n"),
        (".gitignore", ".env*\nbuild/\n"),
    ])
}

#[test]
fn an_ignored_file_named_in_bytes_that_are_not_utf8_is_hidden() {
    let dir = weird_repo();
    let root = dir.path();
    write_raw(root, b".env\xff", "SECRET=1\n");
    let c = scope_of(root, ContextMode::Tree);
    assert_eq!(unnamed_of(&c), [(b".env\xff".to_vec(), Outside::Ignored)]);
    assert!(c.hidden(&[]).contains(&raw(root, b".env\xff")));
}

#[test]
fn an_untracked_file_named_in_bytes_that_are_not_utf8_is_hidden() {
    let dir = weird_repo();
    let root = dir.path();
    write_raw(root, b"notes\xfe.txt", "SECRET=1\n");
    let c = scope_of(root, ContextMode::Tree);
    assert_eq!(
        unnamed_of(&c),
        [(b"notes\xfe.txt".to_vec(), Outside::Untracked)]
    );
    assert!(c.hidden(&[]).contains(&raw(root, b"notes\xfe.txt")));
}

#[test]
fn a_tracked_file_named_in_bytes_that_are_not_utf8_is_left_out_and_hidden() {
    let dir = weird_repo();
    let root = dir.path();
    write_raw(root, b"src/k\xffy.py", "SECRET=1\n");
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "weird"]);
    let c = scope_of(root, ContextMode::Tree);
    assert_eq!(
        unnamed_of(&c),
        [(b"src/k\xffy.py".to_vec(), Outside::LeftOut)]
    );
    assert!(c.hidden(&[]).contains(&raw(root, b"src/k\xffy.py")));
    assert_eq!(c.listing(), ".gitignore\napp.py\nringbuf.py\n");
}

#[test]
fn tracked_and_untracked_names_with_control_characters_are_hidden() {
    let dir = weird_repo();
    let root = dir.path();
    write(root, "a\nb.py", "SECRET=1\n");
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "newline"]);
    write(root, "tab\there.txt", "SECRET=2\n");
    let c = scope_of(root, ContextMode::Tree);
    assert_eq!(
        unnamed_of(&c),
        [
            (b"a\nb.py".to_vec(), Outside::LeftOut),
            (b"tab\there.txt".to_vec(), Outside::Untracked),
        ]
    );
    assert!(!c.outside().any(|(p, _)| p.chars().any(char::is_control)));
}

#[test]
fn a_deleted_tracked_file_named_in_bytes_that_are_not_utf8_is_not_hidden() {
    let dir = weird_repo();
    let root = dir.path();
    write_raw(root, b"gone\xff.py", "x\n");
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "weird"]);
    fs::remove_file(raw(root, b"gone\xff.py")).expect("rm");
    let c = scope_of(root, ContextMode::Tree);
    assert_eq!(unnamed_of(&c), []);
}

#[test]
fn under_context_target_a_root_entry_not_utf8_is_hidden() {
    let dir = weird_repo();
    let root = dir.path();
    write_raw(root, b"d\xff/secret.txt", "SECRET=1\n");
    write_raw(root, b".env\xff", "SECRET=2\n");
    let c = scope_of(root, ContextMode::Target);
    assert_eq!(
        unnamed_of(&c),
        [
            (b".env\xff".to_vec(), Outside::NotTarget),
            (b"d\xff/".to_vec(), Outside::NotTarget),
        ]
    );
    let hidden = c.hidden(&[]);
    assert!(hidden.contains(&raw(root, b"d\xff")), "{hidden:?}");
}

#[test]
fn a_carved_directory_hides_its_entries_not_utf8_too() {
    let dir = weird_repo();
    let root = dir.path();
    write(root, "build/runs/r1/target/diff.patch", "x\n");
    write_raw(root, b"build/\xff.env", "SECRET=1\n");
    fs::create_dir_all(raw(root, b"build/runs/\xfe")).expect("mkdir");
    let c = scope_of(root, ContextMode::Tree);
    let hidden = c.hidden(&[root.join("build/runs/r1/target")]);
    for p in [&b"build/\xff.env"[..], b"build/runs/\xfe"] {
        assert!(hidden.contains(&raw(root, p)), "{hidden:?}");
    }
}

#[test]
fn names_not_utf8_outside_the_scope_leave_its_listing_and_sha_unchanged() {
    let dir = weird_repo();
    let root = dir.path();
    let before = scope_of(root, ContextMode::Tree);
    write_raw(root, b".env\xff", "SECRET=1\n");
    write_raw(root, b"notes\xfe.txt", "SECRET=2\n");
    write(root, "a\nb.txt", "SECRET=3\n");
    let after = scope_of(root, ContextMode::Tree);
    assert_eq!(
        (after.listing(), after.sha()),
        (before.listing(), before.sha())
    );
}
