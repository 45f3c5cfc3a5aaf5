//! Tether's loopback transports, over one daemon's engine: the GUI's JSON API and event streams,
//! the routes cloud agents and Cursor's webhook reach through a public URL, the hook door, and
//! the MCP server (Streamable HTTP at `/mcp`, and stdio). Every handler maps its arguments onto
//! one operation of `tether_core::ops` and its result back; who asks is decided once per
//! transport (`http::auth`, `mcp::caller`) as a `Principal`; errors are mapped once per
//! transport (`http::error`, `mcp::error`).
//!
//! Servers take their listener and a shutdown signal ([`serve_http`]); the daemon (tether-daemon)
//! decides when. Must not depend on clap or tauri.

pub mod client;
mod edits;
pub mod http;
pub mod mcp;
mod state;
mod stdio;

pub use client::{LinkError, login_link};
pub use http::{ServeError, bind_loopback, serve_http};
pub use mcp::{INBOX_URI, RUN_URI_PREFIX, SESSION_URI_PREFIX, TASKS_URI, TetherMcp, USAGE_URI};
pub use state::Server;
pub use stdio::serve_stdio;
