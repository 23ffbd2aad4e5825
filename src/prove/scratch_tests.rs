//! Unit tests of the scratch trees and the check before any run.

use super::*;
use git2::Signature;

/// A repository with two commits (`a.txt` changes), a tracked `keep.txt`, an ignored
/// `build/`, and uncommitted work: `a.txt` modified, `gone.txt` deleted, `new.txt` untracked.
fn repo() -> (tempfile::TempDir, String) {
    let d = tempfile::tempdir().unwrap();
    let r = Repository::init(d.path()).unwrap();
    let commit = |files: &[(&str, &str)], msg: &str| {
        for (p, t) in files {
            std::fs::write(d.path().join(p), t).unwrap();
        }
        let mut i = r.index().unwrap();
        i.add_all(["*"], IndexAddOption::DEFAULT, None).unwrap();
        i.write().unwrap();
        let t = r.find_tree(i.write_tree().unwrap()).unwrap();
        let s = Signature::now("t", "t@t").unwrap();
        let parents: Vec<git2::Commit<'_>> = r
            .head()
            .ok()
            .and_then(|h| h.peel_to_commit().ok())
            .into_iter()
            .collect();
        let refs: Vec<&git2::Commit<'_>> = parents.iter().collect();
        r.commit(Some("HEAD"), &s, &s, msg, &t, &refs)
            .unwrap()
            .to_string()
    };
    let first = commit(
        &[
            ("a.txt", "one\n"),
            ("keep.txt", "k\n"),
            ("gone.txt", "g\n"),
            (".gitignore", "build/\n"),
        ],
        "first",
    );
    commit(&[("a.txt", "two\n")], "second");
    std::fs::write(d.path().join("a.txt"), "three\n").unwrap();
    std::fs::remove_file(d.path().join("gone.txt")).unwrap();
    std::fs::write(d.path().join("new.txt"), "n\n").unwrap();
    std::fs::create_dir(d.path().join("build")).unwrap();
    std::fs::write(d.path().join("build/out"), "o\n").unwrap();
    (d, first)
}

fn read(p: PathBuf) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|_| "<missing>".into())
}

#[test]
fn the_working_tree_is_head_plus_the_changes_and_the_user_repo_is_untouched() {
    let (d, _) = repo();
    let git_dir = d.path().join(".git");
    let before = snapshot(&git_dir);
    let s = Scratch::of_working_tree(d.path()).unwrap();
    let t = s.tree();
    assert_eq!(read(t.join("a.txt")), "three\n");
    assert_eq!(read(t.join("keep.txt")), "k\n");
    assert_eq!(read(t.join("new.txt")), "n\n");
    assert!(!t.join("gone.txt").exists());
    assert!(!t.join("build").exists(), "ignored files stay out");
    assert!(!t.join(".git").exists(), "no git dir inside the tree");
    assert_eq!(s.new_files().unwrap(), Ok(vec![]));
    assert_eq!(before, snapshot(&git_dir), "the user's .git is not written");
    drop(s);
    assert!(!t.exists(), "removed when dropped");
}

/// Every file under the git dir with its content (refs, index, objects, worktrees).
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = vec![];
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push((p.clone(), std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_commit_checks_out_as_it_was() {
    let (d, first) = repo();
    let s = Scratch::at(d.path(), &first).unwrap();
    assert_eq!(read(s.tree().join("a.txt")), "one\n");
    assert_eq!(read(s.tree().join("gone.txt")), "g\n");
    assert!(!s.tree().join("new.txt").exists());
}

#[test]
fn only_new_regular_files_within_the_size_pass_the_check() {
    let (d, _) = repo();
    let s = Scratch::of_working_tree(d.path()).unwrap();
    let t = s.tree();
    std::fs::create_dir_all(t.join("tests/deep")).unwrap();
    std::fs::write(t.join("tests/deep/test_x.py"), "x").unwrap();
    std::fs::create_dir_all(t.join("build")).unwrap();
    std::fs::write(t.join("build/ignored_but_new.py"), "y").unwrap();
    assert_eq!(
        s.new_files().unwrap(),
        Ok(vec![
            "build/ignored_but_new.py".to_string(),
            "tests/deep/test_x.py".to_string()
        ])
    );

    let edited = Scratch::of_working_tree(d.path()).unwrap();
    std::fs::write(edited.tree().join("keep.txt"), "changed").unwrap();
    let r = edited.new_files().unwrap().unwrap_err();
    assert!(r.0.contains("keep.txt") && r.0.contains("modified"), "{r}");

    let overlaid = Scratch::of_working_tree(d.path()).unwrap();
    std::fs::write(overlaid.tree().join("new.txt"), "changed").unwrap();
    assert!(
        overlaid.new_files().unwrap().is_err(),
        "an untracked file of the user's is not new"
    );

    let deleted = Scratch::of_working_tree(d.path()).unwrap();
    std::fs::remove_file(deleted.tree().join("a.txt")).unwrap();
    let r = deleted.new_files().unwrap().unwrap_err();
    assert!(r.0.contains("a.txt") && r.0.contains("deleted"), "{r}");

    let linked = Scratch::of_working_tree(d.path()).unwrap();
    std::os::unix::fs::symlink("/etc/hostname", linked.tree().join("l")).unwrap();
    let r = linked.new_files().unwrap().unwrap_err();
    assert!(r.0.contains("symbolic link"), "{r}");

    let big = Scratch::of_working_tree(d.path()).unwrap();
    std::fs::write(big.tree().join("big.bin"), vec![0u8; 256 * 1024 + 1]).unwrap();
    let r = big.new_files().unwrap().unwrap_err();
    assert!(r.0.contains("big.bin"), "{r}");
}

#[test]
fn copies_never_write_through_a_link() {
    let d = tempfile::tempdir().unwrap();
    let from = d.path().join("from");
    std::fs::create_dir_all(from.join("tests")).unwrap();
    std::fs::write(from.join("tests/t.py"), "t").unwrap();
    let to = d.path().join("to");
    std::fs::create_dir_all(&to).unwrap();
    copy_files(&from, &["tests/t.py".into()], &to).unwrap();
    assert_eq!(read(to.join("tests/t.py")), "t");

    let outside = d.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let trap = d.path().join("trap");
    std::fs::create_dir_all(&trap).unwrap();
    std::os::unix::fs::symlink(&outside, trap.join("tests")).unwrap();
    assert!(copy_files(&from, &["tests/t.py".into()], &trap).is_err());
    assert!(!outside.join("t.py").exists());
    assert!(copy_files(&from, &["../from/tests/t.py".into()], &to).is_err());
}

/// A link the repository commits (or has untracked) is a file holding its target in the
/// tree: a write through its path fails and lands nowhere, and the check sees no change.
#[test]
fn the_repositorys_links_are_inert_files_in_the_tree() {
    let (d, _) = repo();
    let outside = tempfile::tempdir().unwrap();
    let r = Repository::open(d.path()).unwrap();
    std::os::unix::fs::symlink(outside.path(), d.path().join("vendor")).unwrap();
    let mut i = r.index().unwrap();
    i.add_path(Path::new("vendor")).unwrap();
    i.write().unwrap();
    let t = r.find_tree(i.write_tree().unwrap()).unwrap();
    let s = Signature::now("t", "t@t").unwrap();
    let head = r.head().unwrap().peel_to_commit().unwrap();
    r.commit(Some("HEAD"), &s, &s, "link", &t, &[&head])
        .unwrap();
    std::os::unix::fs::symlink(outside.path(), d.path().join("untracked-link")).unwrap();
    for scratch in [
        Scratch::of_working_tree(d.path()).unwrap(),
        Scratch::at(d.path(), "HEAD").unwrap(),
    ] {
        let t = scratch.tree();
        let meta = std::fs::symlink_metadata(t.join("vendor")).unwrap();
        assert!(meta.is_file(), "{meta:?}");
        assert_eq!(read(t.join("vendor")), outside.path().display().to_string());
        assert!(std::fs::write(t.join("vendor/evil.txt"), "x").is_err());
        assert_eq!(scratch.new_files().unwrap(), Ok(vec![]));
    }
    let wt = Scratch::of_working_tree(d.path()).unwrap();
    assert!(std::fs::symlink_metadata(wt.tree().join("untracked-link"))
        .unwrap()
        .is_file());
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
    // Named like the repository's directory, in a `tmp.*` directory; removed with `remove`.
    let t = wt.tree();
    assert_eq!(
        t.file_name().unwrap().to_str().unwrap(),
        tree_name(d.path())
    );
    assert_eq!(tree_name(Path::new("/w/myproj")), "myproj");
    assert_eq!(tree_name(Path::new("/w/git")), "src");
    assert_eq!(tree_name(Path::new("/w/.tmpab")), "src");
    let parent = t.parent().unwrap().to_path_buf();
    assert!(parent
        .file_name()
        .unwrap()
        .to_string_lossy()
        .starts_with("tmp."));
    wt.remove().unwrap();
    assert!(!parent.exists());
}
