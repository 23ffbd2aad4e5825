//! Unit tests of the scratch-tree removal: permissions taken away, links out, chains deeper
//! than the open-file limit — and the same as an unprivileged user (root's removal would
//! bypass the permissions: the test runs its helper as `nobody` when it is root).

use super::*;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

const HELPER_DIR: &str = "AREV_CLEANUP_HELPER_DIR";
/// Deeper than the helper's open-file limit (`ulimit -n 64`).
const DEPTH: usize = 300;

fn chmod(p: &Path, mode: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// What a hostile reproducer leaves in `root`: directories without read, write or search
/// permission (and a file inside them), links to `outside` (a directory and a file), and a
/// chain of `DEPTH` directories whose last ones have no permissions at all.
fn hostile_tree(root: &Path, outside: &Path) {
    std::fs::create_dir_all(root.join("locked/a/b")).unwrap();
    std::fs::write(root.join("locked/a/b/f"), "x").unwrap();
    std::os::unix::fs::symlink(outside, root.join("link-dir")).unwrap();
    std::os::unix::fs::symlink(outside.join("keep"), root.join("link-file")).unwrap();
    std::os::unix::fs::symlink(outside, root.join("locked/a/b/out")).unwrap();
    chmod(&root.join("locked/a/b"), 0o000);
    chmod(&root.join("locked/a"), 0o100);
    chmod(&root.join("locked"), 0o500);
    // The chain, built relative to an open directory (no path grows past PATH_MAX).
    let mut at = openat(nix::fcntl::AT_FDCWD, root, dir_flags(), Mode::empty()).unwrap();
    let mut opened = vec![];
    for _ in 0..DEPTH {
        nix::sys::stat::mkdirat(&at, c"d", Mode::S_IRWXU).unwrap();
        let next = openat(&at, c"d", dir_flags(), Mode::empty()).unwrap();
        opened.push(std::mem::replace(&mut at, next));
        // Keep at most a few descriptors: this walk must not need many either.
        if opened.len() > 4 {
            opened.remove(0);
        }
    }
    let f = openat(
        &at,
        c"bottom",
        OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_CLOEXEC,
        Mode::S_IRUSR,
    )
    .unwrap();
    drop(f);
    nix::sys::stat::fchmod(&at, Mode::empty()).unwrap();
    for o in &opened {
        nix::sys::stat::fchmod(o, Mode::empty()).unwrap();
    }
    chmod(&root.join("d"), 0o000);
}

/// `/proc/self` belongs to the process's effective user.
fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

fn outside() -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    chmod(d.path(), 0o755);
    let o = d.path().join("outside");
    std::fs::create_dir(&o).unwrap();
    std::fs::write(o.join("keep"), "kept").unwrap();
    chmod(&o, 0o777);
    (d, o)
}

#[test]
fn a_hostile_tree_is_removed_and_nothing_outside_it_is_touched() {
    let (d, outside) = outside();
    let root = d.path().join("tree");
    std::fs::create_dir(&root).unwrap();
    hostile_tree(&root, &outside);
    chmod(&root, 0o000);
    remove_tree(&root).unwrap();
    assert!(
        std::fs::symlink_metadata(&root).is_err(),
        "the tree is left"
    );
    assert_eq!(
        std::fs::read_to_string(outside.join("keep")).unwrap(),
        "kept"
    );
    assert_eq!(
        std::fs::metadata(&outside).unwrap().permissions().mode() & 0o777,
        0o777,
        "a link was followed"
    );
    // Nothing there is fine; a link given as the root is not followed.
    remove_tree(&root).unwrap();
    std::os::unix::fs::symlink(&outside, &root).unwrap();
    assert!(remove_tree(&root).is_err());
    assert!(outside.join("keep").exists());
}

/// As an unprivileged user with 64 descriptors: std's `remove_dir_all` fails on the tree a
/// reproducer leaves (the scenario is real), `remove_tree` removes it.
#[test]
fn an_unprivileged_user_removes_a_tree_deeper_than_its_descriptors_without_permissions() {
    let (d, outside) = outside();
    let work = d.path().join("work");
    std::fs::create_dir(&work).unwrap();
    chmod(&work, 0o777);
    let exe = std::env::current_exe().unwrap();
    let helper = format!(
        "ulimit -n 64 && exec \"$0\" --exact --ignored --nocapture --test-threads 1 {}",
        "prove::cleanup::tests::helper_removes_a_hostile_tree"
    );
    let mut cmd = if is_root() {
        let mut c = std::process::Command::new("setpriv");
        c.args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--inh-caps=-all",
            "sh",
        ]);
        c
    } else {
        std::process::Command::new("sh")
    };
    let out = cmd
        .args(["-c", &helper])
        .arg(&exe)
        .env(HELPER_DIR, &work)
        .env("AREV_CLEANUP_HELPER_OUTSIDE", &outside)
        .output()
        .expect("setpriv (util-linux) runs the helper as nobody");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    assert!(text.contains("std failed: "), "{text}");
    assert!(text.contains("1 passed"), "{text}");
    assert_eq!(std::fs::read_dir(&work).unwrap().count(), 0, "{text}");
    assert_eq!(
        std::fs::read_to_string(outside.join("keep")).unwrap(),
        "kept"
    );
}

#[test]
#[ignore = "run by an_unprivileged_user_removes_a_tree_deeper_than_its_descriptors_without_permissions"]
fn helper_removes_a_hostile_tree() {
    let Some(work) = std::env::var_os(HELPER_DIR).map(PathBuf::from) else {
        return;
    };
    let outside = PathBuf::from(std::env::var_os("AREV_CLEANUP_HELPER_OUTSIDE").unwrap());
    assert!(!is_root(), "the helper runs unprivileged");
    let naive = work.join("naive");
    let ours = work.join("ours");
    for t in [&naive, &ours] {
        std::fs::create_dir(t).unwrap();
        hostile_tree(t, &outside);
    }
    let e = std::fs::remove_dir_all(&naive).unwrap_err();
    use std::io::Write as _;
    writeln!(std::io::stdout(), "std failed: {e}").unwrap();
    assert!(naive.exists());
    remove_tree(&ours).unwrap();
    assert!(
        std::fs::symlink_metadata(&ours).is_err(),
        "the tree is left"
    );
    remove_tree(&naive).unwrap();
    assert!(std::fs::symlink_metadata(&naive).is_err());
}
