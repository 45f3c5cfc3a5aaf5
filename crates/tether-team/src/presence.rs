//! A machine's presence in its team: checking in (which holds its name), the heartbeat a running
//! daemon sends, which also ends the runs of runner machines gone silent past the lease (by the
//! team database's clock, whichever machine notices first), and who was seen when.

use std::time::{Duration, Instant};

use tether_pg::machines::{self, CheckIn, Machine};
use tether_store::error::Result;
use tether_store::sql::{Database, SqlExt};

use crate::joined::{Joined, host_name};

/// How long a runner machine may stay silent before its runs count as lost (the team database's
/// clock decides): `TETHER_TEAM_LEASE_SECS`, else a minute.
pub fn runner_lease() -> Duration {
    let secs = std::env::var("TETHER_TEAM_LEASE_SECS").ok().and_then(|s| s.trim().parse::<u64>().ok());
    Duration::from_secs(secs.filter(|s| *s > 0).unwrap_or(60))
}

/// How often a daemon checks in: four times per lease, at most every 15 s.
pub fn heartbeat_every() -> Duration {
    (runner_lease() / 4).clamp(Duration::from_millis(250), Duration::from_secs(15))
}

/// Who this instance is as it checks in: what was joined, the person Tether acts for here, and
/// whether (with which labels) it takes teammates' runs.
pub fn me(j: &Joined, person: String, runner: bool, labels: Vec<String>) -> CheckIn {
    CheckIn {
        name: j.machine.clone(),
        instance: j.instance.clone(),
        host: host_name(),
        person,
        runner,
        labels,
        version: env!("CARGO_PKG_VERSION").into(),
    }
}

/// Says to the team database that `me` is still here (so "last seen" means something and its
/// name stays its own), then [`sweep`]s with [`runner_lease`]. The runs lost.
pub fn heartbeat(board: &dyn Database, me: &CheckIn) -> Result<Vec<String>> {
    board.append(|db| machines::check_in(db, me))?;
    sweep(board, runner_lease())
}

/// Ends the runs of runner machines silent for longer than `lease` (by the team database's
/// clock), or gone: `lost`, their tasks handed back with the reason. A machine never judges
/// itself; a board that is no team's has nobody to judge. The runs lost.
pub fn sweep(board: &dyn Database, lease: Duration) -> Result<Vec<String>> {
    let Some(here) = board.machine() else { return Ok(Vec::new()) };
    let lease = i64::try_from(lease.as_millis()).unwrap_or(i64::MAX);
    let mut gone = board.read(|db| machines::gone_runners(db, lease))?;
    gone.retain(|m| *m != here);
    let lost = tether_board::Board::new(board).runs().lose_runs_on(&gone)?;
    Ok(lost.into_iter().map(|id| id.to_string()).collect())
}

/// The machines the team database has seen, the most recent first.
pub fn machines(board: &dyn Database) -> Result<Vec<Machine>> {
    board.read(|db| machines::list(db))
}

/// One look at the team database from here: checks in as `me`, times one round trip (ms) and
/// reads who was seen.
pub fn probe(db: &dyn Database, me: &CheckIn) -> Result<(f64, Vec<Machine>)> {
    db.append(|c| machines::check_in(c, me))?;
    let t0 = Instant::now();
    db.read(|c| c.query_row("SELECT 1", &[], |_| Ok(())))?;
    let latency = t0.elapsed().as_secs_f64() * 1000.0;
    Ok((latency, machines(db)?))
}
