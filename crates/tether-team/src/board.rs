//! The team's pool as the board: brought up to date on first use (a newer Tether on this machine
//! migrates the team schema then, whichever operation that is), speaking for this machine, and
//! announcing this instance's writes once, after their commit, through the same bookkeeping as
//! the SQLite store (`tether_store::announce::Announcing`).

use std::sync::{Arc, OnceLock};

use tether_pg::PgPool;
use tether_store::announce::Announcing;
use tether_store::error::Result;
use tether_store::sql::{Database, Listening, Sql};
use tether_store::store::Changed;

/// The board on a team's database, as `Tether::board_db` hands it out once joined.
pub type TeamBoard = Announcing<Migrated>;

/// The board on `pool`, for `machine`, announcing this instance's writes to `announce`. Nothing
/// is reached until the first board operation.
pub fn board(pool: PgPool, machine: &str, announce: impl Fn(Changed) + Send + Sync + 'static) -> TeamBoard {
    Announcing::new(Migrated { pool, machine: machine.to_owned(), done: OnceLock::new() }, announce)
}

/// The board on the team database this data dir joined, with the secrets kept for it (when
/// Tether opens). Nothing is reached yet: the first board operation connects, and says so if it
/// cannot.
pub fn rejoin(
    j: &crate::Joined,
    identity_pem: Option<&str>,
    password: Option<String>,
    announce: impl Fn(Changed) + Send + Sync + 'static,
) -> Result<TeamBoard> {
    Ok(board(crate::connect::joined_pool(j, identity_pem, password)?, &j.machine, announce))
}

/// The team's pool, its schema brought up to date once per process before the first use.
#[derive(Debug)]
pub struct Migrated {
    pool: PgPool,
    /// This machine's name in the team: its runs are its runner's.
    machine: String,
    done: OnceLock<()>,
}

impl Migrated {
    fn ready(&self) -> Result<&PgPool> {
        if self.done.get().is_none() {
            self.pool.with(tether_pg::migrate::migrate)?;
            let _ = self.done.set(());
        }
        Ok(&self.pool)
    }
}

impl Database for Migrated {
    fn read_with(&self, f: &mut dyn FnMut(&dyn Sql) -> Result<()>) -> Result<()> {
        self.ready()?.read_with(f)
    }

    fn write_with(&self, f: &mut dyn FnMut(&dyn Sql) -> Result<()>) -> Result<Changed> {
        self.ready()?.write_with(f)
    }

    fn claim_with(&self, f: &mut dyn FnMut(&dyn Sql) -> Result<()>) -> Result<Changed> {
        self.ready()?.claim_with(f)
    }

    fn append_with(&self, f: &mut dyn FnMut(&dyn Sql) -> Result<()>) -> Result<()> {
        self.ready()?.append_with(f)
    }

    fn machine(&self) -> Option<String> {
        Some(self.machine.clone())
    }

    fn listen(&self, heard: Arc<dyn Fn() + Send + Sync>) -> Option<Listening> {
        Some(Box::new(self.pool.listen(heard)))
    }
}
