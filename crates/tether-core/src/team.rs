//! The team's engine procedures as this Tether runs them: what it holds (the data dir, the
//! secrets the keyring keeps, the bus, the daemon's runner role) handed to `tether_team`, which
//! does the work. The daemon's heartbeat calls [`heartbeat`]; what a person asks of the team is
//! `ops::team`.
//!
//! Below `ops`: uses the crate root's `Tether` and `token`, never an operation. The crate root
//! puts the board back on the team when Tether opens through `tether_team` itself, not here.

use std::sync::Arc;
use std::time::Duration;

use tether_pg::PgPool;
use tether_pg::machines::CheckIn;
use tether_team::{Joined, presence};

use crate::Tether;
use crate::error::Result;

pub use tether_team::heartbeat_every;

/// What this data dir joined, if anything.
pub fn joined(t: &Tether) -> Result<Option<Joined>> {
    Joined::read(&t.paths.data_dir)
}

/// The team database `j` names, with the client certificate kept for it, if any.
pub(crate) fn target(t: &Tether, j: &Joined) -> Result<tether_pg::Target> {
    tether_team::connect::joined_target(j, crate::token::team_identity(&t.paths)?.as_deref())
}

/// A pool to the team database this data dir joined, with the kept password and certificate
/// (nothing is reached yet).
pub(crate) fn pool(t: &Tether, j: &Joined) -> Result<PgPool> {
    let identity = crate::token::team_identity(&t.paths)?;
    tether_team::connect::joined_pool(j, identity.as_deref(), crate::token::team_password(&t.paths)?)
}

/// The board on `pool`, announcing this instance's writes on this Tether's bus once committed.
pub(crate) fn board(t: &Tether, pool: PgPool, machine: &str) -> Arc<dyn crate::sql::Database> {
    let bus = t.bus.clone();
    Arc::new(tether_team::board::board(pool, machine, move |c| bus.announce(c)))
}

/// This instance as it checks in: the person here, and whether it takes teammates' runs.
pub(crate) fn me(t: &Tether, j: &Joined) -> CheckIn {
    let role = t.daemon.runner_role();
    presence::me(j, Tether::person(), role.takes_others, role.labels)
}

/// Says to the team database that this machine is still here (a running daemon does, every few
/// seconds, so "last seen" means something and its name stays its own), then sweeps with the
/// runner lease. Nothing when not joined; the runs lost otherwise.
pub fn heartbeat(t: &Tether) -> Result<Vec<String>> {
    let Some(j) = joined(t)? else { return Ok(Vec::new()) };
    if !t.in_team() {
        return Ok(Vec::new());
    }
    presence::heartbeat(&*t.board_db(), &me(t, &j))
}

/// Ends the runs of runner machines silent for longer than `lease` (by the team database's
/// clock), or gone: `lost`, their tasks handed back with the reason. The runs lost.
pub fn sweep(t: &Tether, lease: Duration) -> Result<Vec<String>> {
    presence::sweep(&*t.board_db(), lease)
}
