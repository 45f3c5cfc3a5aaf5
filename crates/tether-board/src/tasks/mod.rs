//! Tasks: create, list, claim (atomically, as an expiring lease), update, comment and hand off,
//! with an append-only history of every change and its actor.
//!
//! Every write is one `BEGIN IMMEDIATE` transaction ([`crate::store::Store::durable`]): checks and
//! writes cannot interleave across threads or processes, so exactly one of any number of
//! claimers wins and a failed call leaves nothing half-written. Knows nothing about MCP, HTTP or
//! the CLI.
//!
//! Imports run one way: model ← query ← {write, claim} ← session.

mod claim;
mod model;
mod query;
mod session;
mod write;

pub use crate::principal::{Actor, DEFAULT_LEASE_MS, Identity};
pub(crate) use claim::*;
pub use model::*;
pub(crate) use query::*;
pub(crate) use session::*;
pub(crate) use write::*;
