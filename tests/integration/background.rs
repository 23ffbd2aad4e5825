//! A loopback HTTP server (an axum `Router`) on its own thread and tokio runtime, so fake
//! model APIs work from plain `#[test]` functions; stopped gracefully on drop.

use axum::Router;
use std::net::SocketAddr;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

/// Bind `127.0.0.1:0`; returns the listener and its address (to build the app with).
pub fn bind() -> (std::net::TcpListener, SocketAddr) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    listener.set_nonblocking(true).expect("set_nonblocking");
    let addr = listener.local_addr().expect("local_addr");
    (listener, addr)
}

/// The running server; dropping it shuts it down (waiting at most 5 s).
pub struct Background {
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    done: mpsc::Receiver<()>,
    thread: Option<JoinHandle<()>>,
}

impl Background {
    /// Serve `app` on `listener` from a thread named `<name>-<port>`.
    pub fn spawn(name: &str, listener: std::net::TcpListener, app: Router) -> Background {
        let port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
        let (shutdown_tx, shutdown_rx) = tokio::sync::oneshot::channel::<()>();
        let (done_tx, done_rx) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name(format!("{name}-{port}"))
            .spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("tokio runtime");
                rt.block_on(async move {
                    let listener =
                        tokio::net::TcpListener::from_std(listener).expect("tokio listener");
                    let server = axum::serve(listener, app).with_graceful_shutdown(async {
                        let _ = shutdown_rx.await;
                    });
                    let _ = server.await;
                });
                // Connections still open (e.g. a CLI that was never killed) are dropped here.
                rt.shutdown_timeout(Duration::from_millis(100));
                let _ = done_tx.send(());
            })
            .expect("spawn fake server thread");
        Background {
            shutdown: Some(shutdown_tx),
            done: done_rx,
            thread: Some(thread),
        }
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        // Graceful shutdown waits for in-flight requests; never hang a test on it.
        if self.done.recv_timeout(Duration::from_secs(5)).is_ok() {
            if let Some(t) = self.thread.take() {
                let _ = t.join();
            }
        }
    }
}
