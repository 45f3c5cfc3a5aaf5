//! This machine's MCP sessions, persisted so clients survive a daemon restart, with how many
//! GET streams the running daemon holds for each (its surface support). They are the machine's,
//! whatever the board's engine: a session is reachable only through the daemon that holds it,
//! so these take the machine's own [`Store`] (`Tether::local`), never the board's engine.
//!
//! Knows nothing about HTTP or MCP types: sessions are opaque JSON blobs here.

use std::collections::HashSet;

use tether_store::sql::{Sql, SqlExt};
use tether_store::values;

use crate::clock::now_ms;
use crate::error::Result;
use crate::store::Store;

pub(crate) fn save_mcp_session(store: &Store, id: &str, state: &str) -> Result<()> {
    let now = now_ms();
    Sql::execute(
        &*store.writer(),
        "INSERT INTO mcp_sessions(id, state, created_at, last_seen) VALUES (?1, ?2, ?3, ?3)
         ON CONFLICT(id) DO UPDATE SET state = excluded.state, last_seen = excluded.last_seen",
        values![id, state, now],
    )?;
    Ok(())
}

pub(crate) fn load_mcp_session(store: &Store, id: &str) -> Result<Option<String>> {
    store.read(|c| SqlExt::query_opt(c, "SELECT state FROM mcp_sessions WHERE id = ?1", values![id], |r| r.get(0)))
}

pub(crate) fn delete_mcp_session(store: &Store, id: &str) -> Result<()> {
    Sql::execute(&*store.writer(), "DELETE FROM mcp_sessions WHERE id = ?1", values![id])?;
    Ok(())
}

/// How many GET streams the running daemon holds open for a session (its surface support).
pub(crate) fn set_streams(store: &Store, id: &str, streams: usize) -> Result<()> {
    Sql::execute(&*store.writer(), "UPDATE mcp_sessions SET streams = ?2 WHERE id = ?1", values![id, streams as i64])?;
    Ok(())
}

/// A daemon starting holds no stream yet, whatever a killed one left behind.
pub(crate) fn reset_streams(store: &Store) -> Result<()> {
    Sql::execute(&*store.writer(), "UPDATE mcp_sessions SET streams = 0 WHERE streams != 0", &[])?;
    Ok(())
}

/// Forgets persisted sessions nobody has restored for `max_age_ms`.
pub(crate) fn prune_mcp_sessions(store: &Store, max_age_ms: i64) -> Result<usize> {
    Sql::execute(&*store.writer(), "DELETE FROM mcp_sessions WHERE last_seen < ?1", values![now_ms() - max_age_ms])
}

/// The sessions the running daemon holds at least one GET stream for: the MCP agents a signal
/// reaches at once.
pub(crate) fn streaming(store: &Store) -> Result<HashSet<String>> {
    store
        .read(|c| SqlExt::query_map(c, "SELECT id FROM mcp_sessions WHERE streams > 0", &[], |r| r.get(0)))
        .map(|ids: Vec<String>| ids.into_iter().collect())
}

/// This machine's MCP sessions: the door to them, beside the board's (they never go to a team).
#[derive(Clone, Copy)]
pub struct McpSessions<'s> {
    store: &'s Store,
}

impl<'s> McpSessions<'s> {
    pub fn new(store: &'s Store) -> Self {
        Self { store }
    }

    pub fn save(self, id: &str, state: &str) -> Result<()> {
        save_mcp_session(self.store, id, state)
    }

    pub fn load(self, id: &str) -> Result<Option<String>> {
        load_mcp_session(self.store, id)
    }

    pub fn delete(self, id: &str) -> Result<()> {
        delete_mcp_session(self.store, id)
    }

    /// How many GET streams the running daemon holds open for a session.
    pub fn set_streams(self, id: &str, streams: usize) -> Result<()> {
        set_streams(self.store, id, streams)
    }

    /// A daemon starting holds no stream yet, whatever a killed one left behind.
    pub fn reset_streams(self) -> Result<()> {
        reset_streams(self.store)
    }

    /// Forgets persisted sessions nobody has restored for `max_age_ms`.
    pub fn prune(self, max_age_ms: i64) -> Result<usize> {
        prune_mcp_sessions(self.store, max_age_ms)
    }

    /// The sessions the running daemon holds at least one GET stream for.
    pub fn streaming(self) -> Result<HashSet<String>> {
        streaming(self.store)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_round_trip_and_say_which_hold_a_stream() {
        let s = Store::open_in_memory().unwrap();
        save_mcp_session(&s, "m1", "{\"a\":1}").unwrap();
        save_mcp_session(&s, "m2", "{}").unwrap();
        assert_eq!(load_mcp_session(&s, "m1").unwrap().as_deref(), Some("{\"a\":1}"));
        set_streams(&s, "m2", 1).unwrap();
        assert_eq!(streaming(&s).unwrap(), HashSet::from(["m2".to_owned()]));
        reset_streams(&s).unwrap();
        assert!(streaming(&s).unwrap().is_empty());
        delete_mcp_session(&s, "m1").unwrap();
        assert_eq!(load_mcp_session(&s, "m1").unwrap(), None);
    }
}
