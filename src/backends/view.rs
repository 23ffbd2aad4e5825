//! A filesystem view for a CLI that loads code from the directories it starts in (OpenCode's
//! plugins, docs/trust.md "Round five") or reads what it should not (Codex's shell, docs/trust.md
//! "What reviewers may read"): the host's filesystem as it is, but for the named entries of
//! the working directory and of each of its ancestors ([`wrap`]) or the named paths
//! ([`wrap_paths`]), which are masked — a directory by an empty read-only tmpfs, anything
//! else by `/dev/null` ([`wrap`]) or by an empty regular file ([`wrap_paths`]: a CLI that
//! starts its commands in its own bubblewrap sandbox binds the host `nodev`, where opening
//! `/dev/null` fails with "Permission denied", and Codex then reports no item for the
//! command, so the read gate would not see the attempt) — under bubblewrap.
//! Only a mount namespace is new (and the user namespace bwrap needs for it): the network,
//! the processes and the user stay the host's, so the CLI still reaches its model API.
//!
//! What the CLI needs and finds under a masked directory (its own binary, its working
//! directory, the run's files) is bound back at the same place. A symbolic link at a masked
//! name inside the working directory is refused (masking its target would let the reviewed
//! tree pick what to hide, or hide nothing when it points back into the tree); one above it
//! is the machine's own, masked where it leads.

use super::spec::Wrap;
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

/// One masked entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mask {
    /// A directory: an empty tmpfs, read-only once what is kept under it is bound.
    Dir(PathBuf),
    /// Anything else: `/dev/null` (reads as empty).
    File(PathBuf),
}

impl Mask {
    fn path(&self) -> &Path {
        match self {
            Self::Dir(p) | Self::File(p) => p,
        }
    }
}

/// A path the CLI needs, bound back where a mask covers it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keep {
    pub path: PathBuf,
    pub writable: bool,
}

/// Why a view cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum ViewError {
    #[error(
        "{cli} runs in a filesystem view without the reviewed repository's {what}, made \
         with bubblewrap, and `bwrap` is not on PATH — install it (`apt-get install \
         bubblewrap`, `dnf install bubblewrap`)"
    )]
    BwrapMissing {
        cli: &'static str,
        what: &'static str,
    },
    #[error(
        "{} is a symbolic link: {cli} would load what it points to, and arev cannot hide \
         it — refused (replace the link with the directory or file itself)",
        .path.display()
    )]
    Link { cli: &'static str, path: PathBuf },
    #[error(
        "{} leads to {}, which holds what {cli} needs: arev cannot hide it — refused",
        .path.display(),
        .target.display()
    )]
    Covers {
        cli: &'static str,
        path: PathBuf,
        target: PathBuf,
    },
    #[error("cannot inspect {}: {source}", .path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{cli} runs in a filesystem view made with bubblewrap ({}), and a trial view failed \
         here: {detail} — allow unprivileged user namespaces (`sysctl -w \
         kernel.unprivileged_userns_clone=1`; on Ubuntu 24.04 the `bwrap` AppArmor profile, \
         `apt-get install apparmor-profiles`), or run as a user who may create them",
        .bwrap.display()
    )]
    Broken {
        cli: &'static str,
        bwrap: PathBuf,
        detail: String,
    },
}

/// What a view hides, for messages: the CLI and what of the repository it must not load.
#[derive(Debug, Clone, Copy)]
pub struct Hidden {
    pub cli: &'static str,
    pub what: &'static str,
    /// The entry names masked in the working directory and each ancestor.
    pub names: &'static [&'static str],
}

/// The masks for `cwd` (absolute and canonical, as the CLI sees its working directory): each
/// of `hidden.names` that exists in `cwd` or one of its ancestors, up to `/`. An entry that is
/// itself an ancestor of `cwd` is masked too (what is kept is bound back).
pub fn masks(cwd: &Path, hidden: &Hidden) -> Result<Vec<Mask>, ViewError> {
    let mut out = vec![];
    for level in cwd.ancestors() {
        for name in hidden.names {
            let path = level.join(name);
            let meta = match std::fs::symlink_metadata(&path) {
                Ok(m) => m,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(source) => return Err(ViewError::Io { path, source }),
            };
            if !meta.file_type().is_symlink() {
                out.push(mask_of(path, meta.is_dir()));
                continue;
            }
            if level == cwd {
                return Err(ViewError::Link {
                    cli: hidden.cli,
                    path,
                });
            }
            // The machine's own link: masked where it leads; dangling, it loads nothing.
            if let Ok(target) = std::fs::canonicalize(&path) {
                let is_dir = target.is_dir();
                out.push(mask_of(target, is_dir));
            }
        }
    }
    Ok(out)
}

fn mask_of(path: PathBuf, is_dir: bool) -> Mask {
    if is_dir {
        Mask::Dir(path)
    } else {
        Mask::File(path)
    }
}

/// The masks for the named `paths` (absolute; a backend's `DispatchRequest::hidden`): each
/// that exists, a directory as a directory, anything else as a file. A symbolic link is not
/// masked (masking follows it, so the reviewed tree would pick what to hide): it reads as
/// what it leads to, masked itself when hidden. A path under a link is masked where the
/// link leads (its parent is resolved).
pub fn masks_of(paths: &[PathBuf]) -> Result<Vec<Mask>, ViewError> {
    let mut out: Vec<Mask> = vec![];
    for path in paths {
        let path = match (path.parent(), path.file_name()) {
            (Some(dir), Some(name)) => match std::fs::canonicalize(dir) {
                Ok(dir) => dir.join(name),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(source) => {
                    return Err(ViewError::Io {
                        path: path.clone(),
                        source,
                    })
                }
            },
            _ => continue,
        };
        let meta = match std::fs::symlink_metadata(&path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(source) => return Err(ViewError::Io { path, source }),
        };
        if meta.file_type().is_symlink() {
            continue;
        }
        let m = mask_of(path, meta.is_dir());
        if !out.contains(&m) {
            out.push(m);
        }
    }
    Ok(out)
}

/// bwrap's options for a view of `cwd` with `masks`, `keep` bound back where a mask covers
/// it (pure). Mounts go in order of depth, so a mask inside a kept directory covers what the
/// bind brought back; the masked directories go read-only last. Refused: a mask that is
/// itself kept (binding it back would undo it: a link above `cwd` leading to `cwd`).
pub fn bwrap_args(
    cwd: &Path,
    masks: &[Mask],
    keep: &[Keep],
    cli: &'static str,
) -> Result<Vec<OsString>, ViewError> {
    bwrap_args_over(cwd, masks, keep, cli, None)
}

/// [`bwrap_args`], a masked file covered by the empty regular file `empty` (bound
/// read-only) instead of `/dev/null` when given.
pub fn bwrap_args_over(
    cwd: &Path,
    masks: &[Mask],
    keep: &[Keep],
    cli: &'static str,
    empty: Option<&Path>,
) -> Result<Vec<OsString>, ViewError> {
    let mut mounts: Vec<(usize, Vec<OsString>)> = vec![];
    let depth = |p: &Path| {
        p.components()
            .filter(|c| matches!(c, Component::Normal(_)))
            .count()
    };
    for m in masks {
        let p = m.path();
        if let Some(k) = keep.iter().find(|k| k.path == p) {
            return Err(ViewError::Covers {
                cli,
                path: p.to_path_buf(),
                target: k.path.clone(),
            });
        }
        let args = match m {
            Mask::Dir(p) => vec!["--tmpfs".into(), p.into()],
            Mask::File(p) => match empty {
                Some(e) => vec!["--ro-bind".into(), e.into(), p.into()],
                None => vec!["--dev-bind".into(), "/dev/null".into(), p.into()],
            },
        };
        mounts.push((depth(p), args));
    }
    let dirs: Vec<&Path> = masks
        .iter()
        .filter_map(|m| match m {
            Mask::Dir(p) => Some(p.as_path()),
            Mask::File(_) => None,
        })
        .collect();
    for k in keep {
        if dirs.iter().any(|d| k.path.starts_with(d)) {
            let flag = if k.writable { "--bind" } else { "--ro-bind" };
            mounts.push((
                depth(&k.path),
                vec![flag.into(), (&k.path).into(), (&k.path).into()],
            ));
        }
    }
    // Stable: at one depth, masks before binds (they never share a path).
    mounts.sort_by_key(|(d, _)| *d);
    let mut a: Vec<OsString> = vec![
        "--die-with-parent".into(),
        "--dev-bind".into(),
        "/".into(),
        "/".into(),
    ];
    a.extend(mounts.into_iter().flat_map(|(_, m)| m));
    for d in dirs {
        a.extend(["--remount-ro".into(), d.into()]);
    }
    a.extend(["--chdir".into(), cwd.into()]);
    Ok(a)
}

/// `bwrap` on arev's PATH: the one lookup for OpenCode's view and the Prover's sandbox
/// (`prove::sandbox`, a layer above).
pub fn find_bwrap() -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .filter(|d| d.is_absolute())
        .map(|d| d.join("bwrap"))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// The program and arguments that start a CLI in the view of `cwd` (`bwrap <options> --`,
/// the CLI's binary and arguments follow); `keep` is compared by its canonical paths.
pub fn wrap(cwd: &Path, keep: &[Keep], hidden: &Hidden) -> Result<Wrap, ViewError> {
    let bwrap = find_bwrap().ok_or(ViewError::BwrapMissing {
        cli: hidden.cli,
        what: hidden.what,
    })?;
    let cwd = std::fs::canonicalize(cwd).map_err(|source| ViewError::Io {
        path: cwd.to_path_buf(),
        source,
    })?;
    let keep = canonical_keep(keep);
    let mut args = bwrap_args(&cwd, &masks(&cwd, hidden)?, &keep, hidden.cli)?;
    args.push("--".into());
    Ok(Wrap {
        program: bwrap,
        args,
    })
}

/// [`wrap`] for a view that masks the named `paths` ([`masks_of`]) — and, when `names`,
/// `hidden.names` in `cwd` and each ancestor too ([`masks`]): one view for both —, a file by
/// the empty regular file `empty`.
fn wrap_paths(
    cwd: &Path,
    paths: &[PathBuf],
    names: bool,
    keep: &[Keep],
    hidden: &Hidden,
    empty: &Path,
) -> Result<Wrap, ViewError> {
    let bwrap = find_bwrap().ok_or(ViewError::BwrapMissing {
        cli: hidden.cli,
        what: hidden.what,
    })?;
    let cwd = std::fs::canonicalize(cwd).map_err(|source| ViewError::Io {
        path: cwd.to_path_buf(),
        source,
    })?;
    let keep = canonical_keep(keep);
    let mut all = if names { masks(&cwd, hidden)? } else { vec![] };
    for m in masks_of(paths)? {
        if !all.contains(&m) {
            all.push(m);
        }
    }
    let mut args = bwrap_args_over(&cwd, &all, &keep, hidden.cli, Some(empty))?;
    args.push("--".into());
    Ok(Wrap {
        program: bwrap,
        args,
    })
}

/// The first of `paths` that no permission rule can name: not UTF-8, or holding a control
/// character (a CLI's rules are JSON strings matched as text). A CLI that refuses only
/// through rules runs in the [`scope_view`] while `req.hidden` holds one.
pub fn unnamed(paths: &[PathBuf]) -> Option<&Path> {
    paths.iter().find(|p| !nameable(p)).map(PathBuf::as_path)
}

/// Whether a permission rule can name `path`: UTF-8 without a control character.
pub fn nameable(path: &Path) -> bool {
    path.to_str()
        .is_some_and(|s| !s.chars().any(char::is_control))
}

fn canonical_keep(keep: &[Keep]) -> Vec<Keep> {
    keep.iter()
        .map(|k| Keep {
            path: std::fs::canonicalize(&k.path)
                .or_else(|_| std::path::absolute(&k.path))
                .unwrap_or_else(|_| k.path.clone()),
            writable: k.writable,
        })
        .collect()
}

/// Checks that the view can be made here: in a trial view of a directory holding the first
/// masked name as a directory with a file in it and the others as files, all are empty.
/// The error names the fix.
pub fn probe(hidden: &Hidden) -> Result<(), ViewError> {
    let dir = tempfile::tempdir().map_err(|source| ViewError::Io {
        path: std::env::temp_dir(),
        source,
    })?;
    let io = |path: PathBuf| move |source| ViewError::Io { path, source };
    let root = dir.path().join("repo");
    std::fs::create_dir_all(&root).map_err(io(root.clone()))?;
    let mut script = vec![];
    for (i, name) in hidden.names.iter().enumerate() {
        let p = root.join(name);
        if i == 0 {
            std::fs::create_dir_all(&p).map_err(io(p.clone()))?;
            std::fs::write(p.join("x"), "x").map_err(io(p.clone()))?;
            script.push(format!("test -d '{name}' && test -z \"$(ls -A '{name}')\""));
        } else {
            std::fs::write(&p, "x").map_err(io(p.clone()))?;
            script.push(format!("test ! -s '{name}'"));
        }
    }
    let w = wrap(&root, &[], hidden)?;
    let out = std::process::Command::new(&w.program)
        .args(&w.args)
        .args(["/bin/sh", "-c", &script.join(" && ")])
        .current_dir(&root)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(io(w.program.clone()))?;
    if out.status.success() {
        return Ok(());
    }
    let text = String::from_utf8_lossy(&out.stderr);
    let detail = text.trim();
    let detail = if detail.is_empty() {
        "the masked entries were visible".to_string()
    } else {
        detail.chars().take(300).collect()
    };
    Err(ViewError::Broken {
        cli: hidden.cli,
        bwrap: w.program,
        detail,
    })
}

#[cfg(test)]
#[path = "view_tests.rs"]
mod tests;

/// The view of a reviewer whose CLI cannot itself refuse a read outside the context scope
/// (Codex's shell, Gemini's file tools on untracked files, OpenCode's grep — with its plugin
/// view, [`scope_and_names_view`] —, Claude Code while `req.hidden` holds a path no rule can
/// name, [`unnamed`]): every path of `req.hidden` (the
/// repository's `.git`, its ignored, untracked and left-out paths) and the `.git` of the
/// working directory and of each read directory (a Prover's or Fixer's worktree holds its
/// own `.git` file) masked, a file by an empty read-only file in the dispatch's directory;
/// the working directory and the dispatch's directory (writable), the read directories and
/// the binary bound back.
pub fn scope_view(
    agent: &super::spec::AgentSpec,
    req: &super::spec::DispatchRequest,
    hidden: &Hidden,
) -> Result<Wrap, ViewError> {
    view_of(agent, req, hidden, false)
}

/// [`scope_view`] with `hidden.names` in the working directory and each ancestor masked too,
/// as [`wrap`] masks them (OpenCode's plugins and configuration): both views in one bwrap.
pub fn scope_and_names_view(
    agent: &super::spec::AgentSpec,
    req: &super::spec::DispatchRequest,
    hidden: &Hidden,
) -> Result<Wrap, ViewError> {
    view_of(agent, req, hidden, true)
}

fn view_of(
    agent: &super::spec::AgentSpec,
    req: &super::spec::DispatchRequest,
    hidden: &Hidden,
    names: bool,
) -> Result<Wrap, ViewError> {
    let mut paths = req.hidden.clone();
    for d in std::iter::once(&req.cwd).chain(&req.read_dirs) {
        let git = d.join(".git");
        if !paths.contains(&git) {
            paths.push(git);
        }
    }
    let keep = |path: &Path, writable: bool| Keep {
        path: path.to_path_buf(),
        writable,
    };
    let mut kept = vec![keep(&req.cwd, true), keep(&req.out_dir, true)];
    kept.extend(req.read_dirs.iter().map(|d| keep(d, false)));
    kept.push(keep(&agent.binary, false));
    let empty = empty_file(&req.out_dir)?;
    wrap_paths(&req.cwd, &paths, names, &kept, hidden, &empty)
}

/// The empty read-only regular file `dir/view-empty` (made anew: nothing written into it
/// by an earlier dispatch shows through a mask).
fn empty_file(dir: &Path) -> Result<PathBuf, ViewError> {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("view-empty");
    let io = |source| ViewError::Io {
        path: path.clone(),
        source,
    };
    std::fs::create_dir_all(dir).map_err(io)?;
    match std::fs::remove_file(&path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io(e)),
        _ => {}
    }
    std::fs::write(&path, b"").map_err(io)?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).map_err(io)?;
    Ok(path)
}
