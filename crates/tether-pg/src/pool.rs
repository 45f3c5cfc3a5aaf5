//! The team database as the board's [`Database`]: a few connections kept open and handed to one
//! operation at a time. A connection that broke is dropped, not kept, and the next operation
//! connects again, so a restarted server is reached again without anyone asking; while it is
//! down, operations fail at once with a `busy` error saying the team database cannot be reached.

use std::sync::Mutex;
use std::time::Duration;

use tether_store::error::{DbError, DbErrorKind, Error, Result};
use tether_store::sql::{Database, Sql};
use tether_store::store::{Changed, Revisions};

use crate::conn::{Isolation, PgConn, Target};

/// Idle connections kept for the next operations (more are opened under load, then closed).
const KEEP: usize = 8;

pub struct PgPool {
    target: Target,
    password: Option<String>,
    timeout: Duration,
    idle: Mutex<Vec<PgConn>>,
}

impl std::fmt::Debug for PgPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgPool").field("target", &self.target.display()).finish_non_exhaustive()
    }
}

impl PgPool {
    /// A pool for `target`, connecting with `password` (see [`Target::connect`]) when it needs
    /// a connection; nothing is opened until then.
    pub fn new(target: Target, password: Option<String>, timeout: Duration) -> Self {
        Self { target, password, timeout, idle: Mutex::new(Vec::new()) }
    }

    /// Calls `heard` whenever a board write commits on the team database (see [`crate::listen`]).
    pub fn listen(&self, heard: std::sync::Arc<dyn Fn() + Send + Sync>) -> crate::listen::Listening {
        crate::listen::listen(self.target.clone(), self.password.clone(), heard)
    }

    /// A connection: an idle one, else a new one.
    pub fn take(&self) -> Result<PgConn> {
        if let Some(c) = self.idle.lock().unwrap_or_else(|p| p.into_inner()).pop() {
            return Ok(c);
        }
        self.target.connect(self.password.as_deref(), self.timeout).map_err(|e| {
            Error::Db(DbError {
                kind: DbErrorKind::Unavailable,
                message: format!("the team database cannot be reached: {e}"),
            })
        })
    }

    /// Hands a connection back, unless it broke or enough are idle.
    pub fn give(&self, c: PgConn) {
        if c.is_closed() {
            return;
        }
        let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        if idle.len() < KEEP {
            idle.push(c);
        }
    }

    /// `f` over a connection of the pool, which goes back afterwards.
    pub fn with<T>(&self, f: impl FnOnce(&PgConn) -> Result<T>) -> Result<T> {
        let c = self.take()?;
        let out = f(&c);
        self.give(c);
        out
    }
}

impl PgPool {
    /// A write at `isolation`, and which domains it changed. (Under read committed the second
    /// read of the revisions may also carry others' commits: a domain said changed once more
    /// than needed, never one missed.)
    fn write_at(&self, isolation: Isolation, f: &mut dyn FnMut(&dyn Sql) -> Result<()>) -> Result<Changed> {
        self.with(|c| {
            c.transaction_at(isolation, |db| {
                let before = Revisions::read_from(db)?;
                f(db)?;
                Ok(before.changed_to(Revisions::read_from(db)?))
            })
        })
    }
}

impl Database for PgPool {
    fn read_with(&self, f: &mut dyn FnMut(&dyn Sql) -> Result<()>) -> Result<()> {
        self.with(|c| {
            c.batch("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")?;
            let out = f(c);
            let end = c.batch(if out.is_ok() { "COMMIT" } else { "ROLLBACK" });
            out.and(end)
        })
    }

    fn write_with(&self, f: &mut dyn FnMut(&dyn Sql) -> Result<()>) -> Result<Changed> {
        self.write_at(Isolation::Serializable, f)
    }

    fn claim_with(&self, f: &mut dyn FnMut(&dyn Sql) -> Result<()>) -> Result<Changed> {
        self.write_at(Isolation::ReadCommitted, f)
    }

    fn append_with(&self, f: &mut dyn FnMut(&dyn Sql) -> Result<()>) -> Result<()> {
        self.with(|c| c.transaction(|db| f(db)))
    }
}
