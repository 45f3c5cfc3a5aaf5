//! Live state the daemon keeps besides the chat index, split by whose it is: this machine's MCP
//! sessions ([`sessions`], over the machine's own store) and what Cursor's hooks say about each
//! chat ([`chats`], on the board, shared with the team once joined).

pub mod chats;
pub mod sessions;

pub use chats::*;
pub use sessions::McpSessions;
