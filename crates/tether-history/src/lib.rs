//! Cursor's chat history (and Claude Code's and Codex's, `agents`): the read-only readers, our index of them (incremental, kept fresh
//! by a watcher), and the list / search / read / tag / export queries over it.
//!
//! Depends on the store, paths and errors (tether-store); never on the board (tasks, agents,
//! signals), hosts or transports.

pub mod agents;
pub mod cloud;
pub mod cursor;
pub mod export;
pub mod index;
pub mod model;
mod platform;
pub mod sessions;
pub mod terms;
pub mod usage;
pub mod watch;

pub(crate) use tether_store::{clock, error, paths, store};
