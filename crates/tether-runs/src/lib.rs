//! Runs agents for Tether: the Cursor CLI headless on this machine (in its own process group,
//! with the run's permissions and role rule placed in its workspace through directory handles,
//! an allowlisted environment, its output parsed into typed events) and Cursor Cloud agents
//! (through tether-cloud's driver) — taken from the queue within the limits, ended by a result,
//! an exit, a time limit or a cancel, always putting the workspace's files back and moving a
//! bound task. A run on a git repository works in a worktree of its own, made and readied here
//! (`setup`), its work committed to its branch when it ends.
//!
//! The data model and every decision that must hold across processes live in the board
//! (`tether_board::runs`); this crate owns processes, timers and the workspace's files. It
//! must not depend on axum, rmcp, clap or tauri.
//!
//! A run's life is [`life`]'s (begin → the executor drives → end); the runner only schedules;
//! the executors ([`LocalCli`], [`CloudAgent`]) only run agents, and are registered on the
//! engine by [`register`].
//!
//! Imports run one way: probe, process, stream_json, trace ← files, log, setup ← local, cloud ←
//! life ← runner.

mod cloud;
mod files;
mod life;
mod local;
mod log;
mod probe;
pub mod process;
mod runner;
mod setup;
pub mod stream_json;
mod trace;

/// Files reached without following links: the core's, shared with the hooks and trace publishing.
pub use tether_core::nofollow;

pub use cloud::CloudAgent;
pub use local::LocalCli;
pub use probe::INSTALL_HINT;
pub use runner::{Runner, RunnerHandle};

use std::sync::Arc;

/// Registers this crate's executors on `t` (the Cursor CLI here, Cursor Cloud), each unless the
/// host registered one of its kind already.
pub fn register(t: &tether_core::Tether) {
    let ours: [Arc<dyn tether_core::executor::Executor>; 2] = [Arc::new(LocalCli), Arc::new(CloudAgent)];
    for e in ours {
        if t.executors.get(e.kind()).is_none() {
            t.executors.register(e);
        }
    }
}

/// Runs engine work off the async threads.
pub(crate) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> tether_core::Result<T> + Send + 'static,
) -> tether_core::Result<T> {
    tokio::task::spawn_blocking(f).await.unwrap_or_else(|e| {
        Err(tether_core::Error::Io { context: "a runner task".into(), source: std::io::Error::other(e) })
    })
}
