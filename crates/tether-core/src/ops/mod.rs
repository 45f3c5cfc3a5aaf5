//! Every operation, declared once. An operation is one function over one request type,
//! `fn(&Tether, &Principal, Req) -> Result<Res>`: it decides authority on the [`Principal`] (who
//! asks, decided once at the edge of each transport), does the work through the history or the
//! board, and publishes what a write changed that the store does not announce itself (see
//! [`crate::events`]). GUI routes, MCP tools, cloud callbacks and CLI verbs only map their
//! arguments onto the request and the result back; none of them adds logic or side effects.
//!
//! Reads that need no authority (a list, a search) take no principal. Blocking: call them from
//! a blocking thread in async hosts.
//!
//! Imports run one way: sessions ← recall (an agent's find and read); sessions, tasks, signals, agents, settings, cloud ← runs ← system; usage, trace and team stand alone (trace reads sessions).

pub mod agents;
pub mod changes;
pub mod cloud;
pub mod recall;
pub mod runs;
pub mod sessions;
pub mod settings;
pub mod share;
pub mod signals;
pub mod system;
pub mod tasks;
pub mod team;
pub mod trace;
pub mod usage;
pub mod worktrees;

pub use crate::board::principal::Principal;
