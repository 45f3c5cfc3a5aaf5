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

/// Resolves when the daemon is asked to stop: SIGINT or SIGTERM on Unix; on Windows Ctrl-C,
/// Ctrl-Break, the console window closing, or the machine shutting down (a service manager or
/// Task Scheduler stopping it sends one of these). Handlers are installed when this is called,
/// not when polled. The one place where shutdown differs by OS.
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
    #[cfg(windows)]
    {
        use tokio::signal::windows::{ctrl_break, ctrl_c, ctrl_close, ctrl_shutdown};
        let (mut c, mut brk, mut close, mut down) = (ctrl_c()?, ctrl_break()?, ctrl_close()?, ctrl_shutdown()?);
        Ok(async move {
            tokio::select! {
                _ = c.recv() => {}
                _ = brk.recv() => {}
                _ = close.recv() => {}
                _ = down.recv() => {}
            }
        })
    }
}
