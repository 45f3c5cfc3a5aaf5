//! The MCP server: the handler ([`server::TetherMcp`]) with its tools by area ([`tools`]),
//! resources ([`resources`], told of changes by [`notify`] from the event bus) and prompts
//! ([`prompts`]); the doorbell that rings a session's inbox ([`doorbell`]); who is calling
//! ([`caller`]); the sessions' live state ([`sessions`]). Served over Streamable HTTP at `/mcp`
//! ([`service`], behind [`door`]) and over stdio.
//!
//! Imports run one way: caller, streams, store, error ← sessions ← resources ← server ← tools,
//! prompts; {doorbell, notify, track} ← door, service.

pub(crate) mod caller;
pub(crate) mod door;
mod doorbell;
pub(crate) mod error;
mod notify;
mod prompts;
mod resources;
pub(crate) mod server;
pub(crate) mod service;
pub(crate) mod sessions;
mod store;
pub(crate) mod streams;
mod tools;
mod track;

pub use doorbell::INBOX_URI;
pub use resources::{RUN_URI_PREFIX, SESSION_URI_PREFIX, TASKS_URI, USAGE_URI};
pub use server::TetherMcp;
