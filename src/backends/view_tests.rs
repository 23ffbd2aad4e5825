use super::*;

const HIDE: Hidden = Hidden {
    cli: "OpenCode",
    what: "plugins",
    names: &[".opencode", "opencode.json", "opencode.jsonc"],
};

fn s(args: &[OsString]) -> Vec<String> {
    args.iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect()
}

fn keep(p: &str, writable: bool) -> Keep {
    Keep {
        path: PathBuf::from(p),
        writable,
    }
}

#[test]
fn masks_cover_every_level_up_to_the_root_and_refuse_a_link_in_the_tree() {
    let d = tempfile::tempdir().unwrap();
    let base = d.path().canonicalize().unwrap();
    let repo = base.join("repo");
    std::fs::create_dir_all(repo.join(".opencode/plugin")).unwrap();
    std::fs::write(repo.join("opencode.json"), "{}").unwrap();
    std::fs::write(repo.join("opencode.jsonc"), "{}").unwrap();
    std::fs::create_dir_all(base.join(".opencode")).unwrap();
    std::fs::write(base.join("opencode.json"), "{}").unwrap();
    let found = masks(&repo, &HIDE).unwrap();
    for m in [
        Mask::Dir(repo.join(".opencode")),
        Mask::File(repo.join("opencode.json")),
        Mask::File(repo.join("opencode.jsonc")),
        Mask::Dir(base.join(".opencode")),
        Mask::File(base.join("opencode.json")),
    ] {
        assert!(found.contains(&m), "{m:?} not in {found:?}");
    }
    // Nothing of a subdirectory (OpenCode walks up, never down).
    std::fs::create_dir_all(repo.join("src/.opencode")).unwrap();
    assert!(!masks(&repo, &HIDE)
        .unwrap()
        .iter()
        .any(|m| m.path().starts_with(repo.join("src"))));

    // A link in the reviewed tree is refused, wherever it points (or dangles).
    std::fs::remove_file(repo.join("opencode.json")).unwrap();
    std::os::unix::fs::symlink("elsewhere.json", repo.join("opencode.json")).unwrap();
    let e = masks(&repo, &HIDE).unwrap_err();
    assert!(matches!(e, ViewError::Link { .. }), "{e}");
    assert!(
        e.to_string().contains("opencode.json is a symbolic link"),
        "{e}"
    );

    // A link above the tree (the machine's own) is masked where it leads.
    std::fs::remove_file(repo.join("opencode.json")).unwrap();
    std::fs::remove_dir_all(base.join(".opencode")).unwrap();
    let real = base.join("dotfiles/opencode");
    std::fs::create_dir_all(&real).unwrap();
    std::os::unix::fs::symlink(&real, base.join(".opencode")).unwrap();
    assert!(masks(&repo, &HIDE).unwrap().contains(&Mask::Dir(real)));
}

#[test]
fn the_view_masks_then_binds_back_what_is_kept_then_goes_read_only() {
    let masks = vec![
        Mask::Dir("/h/.opencode".into()),
        Mask::Dir("/h/.opencode/repo/.opencode".into()),
        Mask::File("/h/.opencode/repo/opencode.json".into()),
    ];
    let kept = [
        keep("/h/.opencode/repo", true),
        keep("/h/.opencode/bin/opencode", false),
        keep("/runs/r1", true),
    ];
    let a = s(&bwrap_args(Path::new("/h/.opencode/repo"), &masks, &kept, "OpenCode").unwrap());
    let pos = |needle: &[&str]| {
        a.windows(needle.len())
            .position(|w| w == needle)
            .unwrap_or_else(|| panic!("{needle:?} not in {a:?}"))
    };
    assert_eq!(a[..4], ["--die-with-parent", "--dev-bind", "/", "/"]);
    let outer = pos(&["--tmpfs", "/h/.opencode"]);
    let repo = pos(&["--bind", "/h/.opencode/repo", "/h/.opencode/repo"]);
    let bin = pos(&[
        "--ro-bind",
        "/h/.opencode/bin/opencode",
        "/h/.opencode/bin/opencode",
    ]);
    let inner = pos(&["--tmpfs", "/h/.opencode/repo/.opencode"]);
    let file = pos(&["--dev-bind", "/dev/null", "/h/.opencode/repo/opencode.json"]);
    assert!(
        outer < repo && outer < bin && repo < inner && repo < file,
        "{a:?}"
    );
    // What no mask covers is not bound again.
    assert!(!a.contains(&"/runs/r1".to_string()), "{a:?}");
    let ro_outer = pos(&["--remount-ro", "/h/.opencode"]);
    let ro_inner = pos(&["--remount-ro", "/h/.opencode/repo/.opencode"]);
    assert!(
        ro_outer > inner && ro_outer > file && ro_inner > file,
        "{a:?}"
    );
    assert_eq!(a[a.len() - 2..], ["--chdir", "/h/.opencode/repo"]);
    // No namespace but the mount one: the network and the processes are the host's.
    assert!(!a.iter().any(|x| x.starts_with("--unshare")), "{a:?}");
}

#[test]
fn a_mask_that_is_itself_kept_is_refused() {
    let e = bwrap_args(
        Path::new("/w/repo"),
        &[Mask::Dir("/w/repo".into())],
        &[keep("/w/repo", true)],
        "OpenCode",
    )
    .unwrap_err();
    assert!(matches!(e, ViewError::Covers { .. }), "{e}");
}

/// The real bwrap: the trial view of the preflight passes here (the CI machine has it).
#[test]
fn the_trial_view_shows_the_masked_entries_empty() {
    if find_bwrap().is_none() {
        return;
    }
    probe(&HIDE).unwrap();
}

#[test]
fn named_paths_are_masked_as_what_they_are_and_links_are_left_to_lead_on() {
    let d = tempfile::tempdir().unwrap();
    let repo = d.path().canonicalize().unwrap().join("repo");
    std::fs::create_dir_all(repo.join(".git/refs")).unwrap();
    std::fs::create_dir_all(repo.join("build/out")).unwrap();
    std::fs::write(repo.join(".env"), "TOKEN=x").unwrap();
    std::os::unix::fs::symlink("/etc/hostname", repo.join("link")).unwrap();
    // Reached through a link to the repository: masked where it really is.
    std::os::unix::fs::symlink(&repo, d.path().join("via")).unwrap();
    let paths = [
        repo.join(".git"),
        repo.join("build"),
        d.path().join("via/.env"),
        repo.join("link"),
        repo.join("gone.txt"),
        repo.join(".git"),
    ];
    assert_eq!(
        masks_of(&paths).unwrap(),
        [
            Mask::Dir(repo.join(".git")),
            Mask::Dir(repo.join("build")),
            Mask::File(repo.join(".env")),
        ]
    );
}
