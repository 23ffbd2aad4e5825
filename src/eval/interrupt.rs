//! Ctrl-C for `arev eval run` and `arev eval bench`: SIGINT and SIGTERM caught on a thread of
//! their own, a flag the workers check before they start the next review, and the reviews
//! running now (each a child in its own process group), to which the signal is forwarded so
//! that each finishes as interrupted and no agent outlives the command. The only async code
//! of `eval` (tokio's signal streams, the crate's one way of catching a signal without
//! `unsafe`).

use super::error::EvalError;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Ctrl-C: a flag, and the reviews running now (to forward the signal to).
#[derive(Debug, Default)]
pub(super) struct Interrupt {
    fired: AtomicBool,
    children: Mutex<BTreeSet<i32>>,
}

impl Interrupt {
    /// Catch SIGINT and SIGTERM on a dedicated thread (tokio's signal streams on a
    /// one-thread runtime: handlers, not a blocked mask, so the reviews started later get
    /// the default signal state). Returns once the handlers are in place.
    pub(super) fn install() -> Result<Arc<Self>, EvalError> {
        let me = Arc::new(Self::default());
        let watcher = Arc::clone(&me);
        let (ready_tx, ready_rx) = std::sync::mpsc::channel::<std::io::Result<()>>();
        std::thread::Builder::new()
            .name("arev-eval-signals".into())
            .spawn(move || {
                use tokio::signal::unix::{signal, SignalKind};
                let rt = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(rt) => rt,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                };
                rt.block_on(async move {
                    let (mut int, mut term) = match (
                        signal(SignalKind::interrupt()),
                        signal(SignalKind::terminate()),
                    ) {
                        (Ok(i), Ok(t)) => (i, t),
                        (Err(e), _) | (_, Err(e)) => {
                            let _ = ready_tx.send(Err(e));
                            return;
                        }
                    };
                    let _ = ready_tx.send(Ok(()));
                    loop {
                        tokio::select! {
                            s = int.recv() => if s.is_none() { break },
                            s = term.recv() => if s.is_none() { break },
                        }
                        watcher.fired.store(true, Ordering::SeqCst);
                        watcher.forward();
                    }
                });
            })
            .map_err(|source| EvalError::Os {
                what: "cannot start the signal thread",
                source,
            })?;
        match ready_rx.recv() {
            Ok(Ok(())) => Ok(me),
            Ok(Err(source)) => Err(EvalError::Os {
                what: "cannot catch Ctrl-C",
                source,
            }),
            Err(_) => Err(EvalError::Usage("cannot catch Ctrl-C".into())),
        }
    }

    pub(super) fn fired(&self) -> bool {
        self.fired.load(Ordering::SeqCst)
    }

    fn forward(&self) {
        if let Ok(children) = self.children.lock() {
            for &pid in children.iter() {
                let _ = kill(Pid::from_raw(pid), Signal::SIGINT);
            }
        }
    }

    pub(super) fn register(&self, pid: i32) {
        if let Ok(mut c) = self.children.lock() {
            c.insert(pid);
        }
        // A signal that arrived between the check and the spawn.
        if self.fired() {
            let _ = kill(Pid::from_raw(pid), Signal::SIGINT);
        }
    }

    pub(super) fn unregister(&self, pid: i32) {
        if let Ok(mut c) = self.children.lock() {
            c.remove(&pid);
        }
    }
}
