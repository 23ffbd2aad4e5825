//! Removing a scratch tree whatever a reproducer did to it (docs/prove.md "Where"): every
//! directory is given back the permissions its removal needs (`rwx` for its owner) before
//! it is opened, links are never followed (each directory is opened `O_NOFOLLOW` and
//! changed with `fchmodat(AT_SYMLINK_NOFOLLOW)`), and the walk keeps three descriptors open
//! whatever the depth — it climbs back with `..`, checking it reaches the directory it came
//! from — so a chain deeper than the open-file limit or `PATH_MAX` is removed too.

use nix::dir::{Dir, Type};
use nix::errno::Errno;
use nix::fcntl::{openat, OFlag};
use nix::sys::stat::{fchmodat, fstat, fstatat, FchmodatFlags, Mode};
use nix::unistd::{unlinkat, UnlinkatFlags};
use std::ffi::{CStr, CString, OsStr};
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// A directory's identity, to check that `..` leads back where the walk came from.
type Ident = (u64, u64);

/// Remove the directory `root` and everything in it. Links inside are removed, never
/// followed; a directory a reproducer made unreadable or unwritable is first made `0700`.
/// Nothing there is fine. On error, what could not be removed stays (the caller reports it).
pub fn remove_tree(root: &Path) -> std::io::Result<()> {
    let (Some(parent), Some(name)) = (root.parent(), root.file_name()) else {
        return Err(std::io::Error::other("not a directory below another"));
    };
    let parent = match open_dir_path(parent) {
        Ok(p) => p,
        Err(Errno::ENOENT) => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    let name = cstring(name)?;
    match fstatat(
        &parent,
        name.as_c_str(),
        nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW,
    ) {
        Err(Errno::ENOENT) => return Ok(()),
        Err(e) => return Err(e.into()),
        Ok(st) if st.st_mode & nix::libc::S_IFMT != nix::libc::S_IFDIR => {
            return Err(std::io::Error::other("not a directory"));
        }
        Ok(_) => {}
    }
    let mut cur = open_child(&parent, &name)?;
    // The directories above `cur` up to `root`: each one's identity and `cur`'s ancestors'
    // names in them.
    let mut above: Vec<(Ident, CString)> = vec![];
    loop {
        match empty_but_one(&cur)? {
            Some(sub) => {
                let child = open_child(&cur, &sub)?;
                above.push((ident(&cur)?, sub));
                cur = child;
            }
            None => match above.pop() {
                Some((id, name)) => {
                    let up = openat(&cur, c"..", dir_flags(), Mode::empty())?;
                    if ident(&up)? != id {
                        return Err(std::io::Error::other(
                            "a directory was moved while the tree was being removed",
                        ));
                    }
                    drop(cur);
                    unlinkat(&up, name.as_c_str(), UnlinkatFlags::RemoveDir)?;
                    cur = up;
                }
                None => {
                    drop(cur);
                    unlinkat(&parent, name.as_c_str(), UnlinkatFlags::RemoveDir)?;
                    return Ok(());
                }
            },
        }
    }
}

/// Remove every entry of `dir` that is not a directory; the name of one subdirectory, if
/// any is left.
fn empty_but_one(dir: &OwnedFd) -> std::io::Result<Option<CString>> {
    let mut d = Dir::from_fd(dir.try_clone()?)?;
    for entry in d.iter() {
        let entry = entry?;
        let name = entry.file_name();
        if name == c"." || name == c".." {
            continue;
        }
        let is_dir = match entry.file_type() {
            Some(Type::Directory) => true,
            Some(_) => false,
            None => fstatat(dir, name, nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW)
                .is_ok_and(|st| st.st_mode & nix::libc::S_IFMT == nix::libc::S_IFDIR),
        };
        if is_dir {
            return Ok(Some(name.to_owned()));
        }
        match unlinkat(dir, name, UnlinkatFlags::NoRemoveDir) {
            Ok(()) | Err(Errno::ENOENT) => {}
            // Its type changed under us: a directory after all.
            Err(Errno::EISDIR) => return Ok(Some(name.to_owned())),
            Err(e) => return Err(e.into()),
        }
    }
    Ok(None)
}

/// Open the subdirectory `name` of `dir` after giving it `0700` (never through a link: a
/// link there makes the open fail with `ELOOP`/`ENOTDIR`).
fn open_child(dir: &OwnedFd, name: &CStr) -> std::io::Result<OwnedFd> {
    // Not its owner, or a link (EOPNOTSUPP): the open below says whether it matters.
    let _ = fchmodat(dir, name, Mode::S_IRWXU, FchmodatFlags::NoFollowSymlink);
    Ok(openat(dir, name, dir_flags(), Mode::empty())?)
}

fn open_dir_path(p: &Path) -> nix::Result<OwnedFd> {
    nix::fcntl::open(p, dir_flags(), Mode::empty())
}

fn dir_flags() -> OFlag {
    OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC
}

fn ident(fd: &OwnedFd) -> nix::Result<Ident> {
    let st = fstat(fd)?;
    Ok((st.st_dev as u64, st.st_ino as u64))
}

fn cstring(name: &OsStr) -> std::io::Result<CString> {
    CString::new(name.as_bytes()).map_err(|_| std::io::Error::other("a NUL in a file name"))
}

#[cfg(test)]
#[path = "cleanup_tests.rs"]
mod tests;
