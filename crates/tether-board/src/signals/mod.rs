//! Signals: short messages between agents and people, each carrying the obligation its type
//! implies, with the wake telemetry of every attempt to get it read.
//!
//! A signal goes to an agent (by name), to a role (every live agent with that role gets its own
//! delivery) or to `human`. Its type decides the obligation (Prism SPEC-088 §5.3): a question, an
//! assigned task or a review request stays open until someone it went to replies; a status update
//! or an acknowledgment closes when it is drained; system types (`peer_joined`, `peer_left`,
//! `master_preempted`) carry none and never ring a doorbell, but are still drained.
//!
//! Every write is one `BEGIN IMMEDIATE` transaction with a FULL-synchronous commit
//! ([`crate::store::Store::durable`]): a signal acknowledged to its sender survives kill -9, and a
//! drain marks what it returns inside the same transaction, so two drains never return the same
//! delivery. How a doorbell rings is the host's business; this module records what the host says
//! happened. Knows nothing about MCP, HTTP or the CLI.
//!
//! Imports run one way: model ← query ← wakes ← drain, and query ← send.

mod drain;
mod model;
mod query;
mod send;
#[cfg(test)]
mod tests;
mod wakes;

pub use crate::principal::{HUMAN, Recipient, Sender, TETHER};
pub(crate) use drain::*;
pub use model::*;
pub(crate) use query::*;
pub(crate) use send::*;
pub(crate) use wakes::*;
