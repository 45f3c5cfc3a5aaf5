//! The tokio runtimes a verb builds when it needs one, and the shutdown signal. A one-shot
//! command stays synchronous; only what waits on the network, a runner or a signal runs async.

use std::future::Future;

use tokio::runtime::{Builder, Runtime};

/// For one request and its answer (a probe, a check with Cursor, following a log).
pub fn current_thread() -> std::io::Result<Runtime> {
    Builder::new_current_thread().enable_all().build()
}

/// For a daemon, a server or a runner: small, the work is mostly waiting.
pub fn multi_thread() -> std::io::Result<Runtime> {
    Builder::new_multi_thread().worker_threads(2).enable_all().build()
}

/// Resolves on SIGINT or SIGTERM. Handlers are installed when this is called, not when polled.
pub fn shutdown_signal() -> std::io::Result<impl Future<Output = ()>> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = signal(SignalKind::terminate())?;
        let mut int = signal(SignalKind::interrupt())?;
        Ok(async move {
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
            }
        })
    }
    #[cfg(not(unix))]
    {
        Ok(async {
            let _ = tokio::signal::ctrl_c().await;
        })
    }
}
