//! The machines of a team: each Tether instance holds its name by checking in (one conditional
//! statement, so two instances can never both hold one name), and anyone can list who was seen
//! when. A name held by another instance is free again once that instance has not checked in
//! for [`NAME_HELD_MS`].

use tether_store::error::{Error, Result};
use tether_store::sql::{Sql, SqlExt};
use tether_store::values;

/// How long a silent instance keeps its name (it checks in every few seconds while it runs).
pub const NAME_HELD_MS: i64 = 60_000;

/// This instance, as it checks in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckIn {
    pub name: String,
    /// Random per data dir: tells this instance from another on the same host.
    pub instance: String,
    pub host: String,
    /// The person Tether acts for on that machine.
    pub person: String,
    pub runner: bool,
    pub labels: Vec<String>,
    pub version: String,
}

/// A machine as the team database last saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Machine {
    pub name: String,
    pub host: String,
    pub person: String,
    pub runner: bool,
    pub labels: Vec<String>,
    pub version: String,
    pub first_seen: i64,
    pub last_seen: i64,
    /// How long ago, by the database's clock.
    pub seen_ago_ms: i64,
}

/// Checks in as `me`: takes the name when it is free, this instance's already, or its holder has
/// gone quiet; refuses it (saying who holds it) otherwise.
pub fn check_in(db: &dyn Sql, me: &CheckIn) -> Result<()> {
    if me.name.trim().is_empty() || me.name.chars().any(char::is_control) {
        return Err(Error::invalid("machine name", format!("{:?} is not a usable name", me.name)));
    }
    let labels = serde_labels(&me.labels);
    let held = db.query_opt(
        "INSERT INTO machines(name, instance, host, runner, labels, version, person) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?8)
         ON CONFLICT (name) DO UPDATE SET instance = excluded.instance, host = excluded.host,
             runner = excluded.runner, labels = excluded.labels, version = excluded.version,
             person = excluded.person, last_seen = tether_now_ms()
         WHERE machines.instance = excluded.instance OR machines.last_seen < tether_now_ms() - ?7
         RETURNING name",
        values![me.name, me.instance, me.host, me.runner, labels, me.version, NAME_HELD_MS, me.person],
        |r| r.get::<String>(0),
    )?;
    if held.is_some() {
        return Ok(());
    }
    let (host, ago): (String, i64) = db.query_row(
        "SELECT host, tether_now_ms() - last_seen FROM machines WHERE name = ?1",
        values![me.name],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    Err(Error::Conflict(format!(
        "the machine name {:?} is held by another Tether (on host {host:?}, seen {} s ago); pick another with --machine NAME",
        me.name,
        ago / 1000
    )))
}

/// This instance leaves: its name is free for another at once.
pub fn leave(db: &dyn Sql, name: &str, instance: &str) -> Result<()> {
    db.execute("DELETE FROM machines WHERE name = ?1 AND instance = ?2", values![name, instance]).map(|_| ())
}

/// Every machine, the most recently seen first.
pub fn list(db: &dyn Sql) -> Result<Vec<Machine>> {
    db.query_map(
        "SELECT name, host, runner, labels, version, first_seen, last_seen, tether_now_ms() - last_seen, person
         FROM machines ORDER BY last_seen DESC, name",
        &[],
        |r| {
            Ok(Machine {
                name: r.get(0)?,
                host: r.get(1)?,
                runner: r.get(2)?,
                labels: parse_labels(&r.get::<String>(3)?),
                version: r.get(4)?,
                first_seen: r.get(5)?,
                last_seen: r.get(6)?,
                seen_ago_ms: r.get(7)?,
                person: r.get(8)?,
            })
        },
    )
}

fn serde_labels(labels: &[String]) -> String {
    serde_json::to_string(&labels.iter().map(|l| l.trim()).collect::<Vec<_>>()).unwrap_or_else(|_| "[]".into())
}

fn parse_labels(json: &str) -> Vec<String> {
    serde_json::from_str(json).unwrap_or_default()
}

/// Machines with runs going that have not checked in for `lease_ms` (by the database's clock),
/// or that left: their runs are not going any more, whatever the rows say.
pub fn gone_runners(db: &dyn Sql, lease_ms: i64) -> Result<Vec<String>> {
    db.query_map(
        "SELECT DISTINCT r.machine FROM runs r LEFT JOIN machines m ON m.name = r.machine
         WHERE r.status = 'running' AND r.kind = 'local' AND r.machine IS NOT NULL
           AND (m.name IS NULL OR m.last_seen < tether_now_ms() - ?1)
         ORDER BY 1",
        values![lease_ms],
        |r| r.get::<String>(0),
    )
}
