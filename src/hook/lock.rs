//! One review per hook session at a time: an exclusive `flock` on
//! `<session dir>/review.lock`, held while a Stop hook reviews. The kernel releases it when
//! the holder exits, however it exits, so a killed hook never leaves the session locked.

use nix::fcntl::{Flock, FlockArg};
use std::fs::File;
use std::path::Path;

/// The held lock; released when dropped.
#[derive(Debug)]
pub struct ReviewLock {
    _held: Flock<File>,
}

/// Block until this process holds the session's review lock (creating the directory and
/// the lock file when needed).
pub fn lock_reviews(session_dir: &Path) -> std::io::Result<ReviewLock> {
    std::fs::create_dir_all(session_dir)?;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(session_dir.join("review.lock"))?;
    let held =
        Flock::lock(file, FlockArg::LockExclusive).map_err(|(_, e)| std::io::Error::from(e))?;
    Ok(ReviewLock { _held: held })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Duration;

    #[test]
    fn a_second_holder_waits_for_the_first() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("sessions/s1");
        let first = lock_reviews(&dir).unwrap();
        let (tx, rx) = mpsc::channel();
        let dir2 = dir.clone();
        let waiter = std::thread::spawn(move || {
            let second = lock_reviews(&dir2).unwrap();
            tx.send(()).unwrap();
            drop(second);
        });
        assert!(
            rx.recv_timeout(Duration::from_millis(300)).is_err(),
            "the second lock was granted while the first was held"
        );
        drop(first);
        rx.recv_timeout(Duration::from_secs(10)).unwrap();
        waiter.join().unwrap();
        assert!(dir.join("review.lock").exists());
    }
}
