//! Cursor's chat history: the read-only Cursor readers, our index of them (incremental, kept fresh
//! by a watcher), and the list / search / read / tag / export queries over it.
//!
//! Depends on the store, paths and errors; never on the board (tasks, agents, signals).

pub mod cloud;
pub mod cursor;
pub mod doctor;
pub mod export;
pub mod index;
pub mod model;
pub mod sessions;
pub mod terms;
pub mod watch;
