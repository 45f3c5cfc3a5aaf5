//! A team's database: joining it (the board moves there at once, without a restart), leaving it
//! (the board is this machine's again, as it was before joining: nothing is merged), and what it
//! looks like from here. Joining and leaving are the person's decisions; agents may only look.
//!
//! What was joined is kept in `team.json` in the data dir (the URL without its password, this
//! machine's name, this data dir's instance id); the password goes where the MCP token is kept
//! (the OS keyring, or the 0600 file store), else libpq's conventions (`PGPASSWORD`,
//! `~/.pgpass`) apply. The chat history, code origin and tokens never leave the machine.
//!
//! Here is what a person asks (authority, then one call); the work is `tether_team`'s (what was
//! joined, reaching the database, checking in, the team's pool as the board), and the daemon's
//! heartbeat is `crate::team`'s.

use serde::{Deserialize, Serialize};
use tether_pg::machines;
use tether_team::{Joined, connect, joined::instance_id, presence};

use crate::Tether;
use crate::board::principal::Principal;
use crate::error::{Error, Result};
use crate::team::{joined, me};

/// Joining a team's database. Its `Debug` leaves the secrets out.
#[derive(Clone, Default, Deserialize, schemars::JsonSchema)]
pub struct Join {
    /// `postgres://USER@HOST:PORT/DATABASE` (or libpq's `key=value` form), without a password.
    pub url: String,
    /// This machine's name in the team (default: the host name); two instances on one host need
    /// two names.
    #[serde(default)]
    pub machine: Option<String>,
    /// The database password, kept in the OS keyring (never in a file Tether writes in plain
    /// sight); absent: libpq's conventions.
    #[serde(default, skip_serializing)]
    pub password: Option<String>,
    /// A client certificate (PEM, the chain; it may hold its key too) for a server that asks for
    /// one: kept in the OS keyring with its key and used before `sslcert`/`sslkey` and libpq's
    /// `~/.postgresql/postgresql.crt`.
    #[serde(default, skip_serializing)]
    pub client_cert: Option<String>,
    /// The client certificate's private key (PEM), unless it is in `client_cert`.
    #[serde(default, skip_serializing)]
    pub client_key: Option<String>,
}

impl std::fmt::Debug for Join {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Join")
            .field("url", &self.url)
            .field("machine", &self.machine)
            .field("password", &self.password.as_ref().map(|_| "…"))
            .field("client_cert", &self.client_cert.as_ref().map(|_| "…"))
            .field("client_key", &self.client_key.as_ref().map(|_| "…"))
            .finish()
    }
}

/// The team database from here.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct TeamStatus {
    /// Whether this instance's board is on a team database.
    pub joined: bool,
    /// `host:port/database` (never a password).
    pub database: Option<String>,
    pub machine: Option<String>,
    pub reachable: bool,
    /// One round trip, when reachable.
    pub latency_ms: Option<f64>,
    /// Why it is not reachable.
    pub error: Option<String>,
    /// The machines the team database has seen, the most recent first.
    pub machines: Vec<MachineSeen>,
    /// Whether this machine takes teammates' runs (`serve --runner`), and who may start what on
    /// it then (settings: `runs.runner_policy`). A teammate's run that would write or run
    /// commands here otherwise waits for this machine's person.
    pub runner: bool,
    pub runner_policy: crate::board::runs::trust::RunnerPolicy,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct MachineSeen {
    pub name: String,
    pub host: String,
    /// The person Tether acts for on that machine.
    pub person: String,
    pub runner: bool,
    pub labels: Vec<String>,
    pub version: String,
    pub seen_ago_ms: i64,
}

/// The machines the team database has seen, the most recent first (none outside a team).
pub fn machines(t: &Tether) -> Result<Vec<MachineSeen>> {
    if !t.in_team() {
        return Ok(Vec::new());
    }
    Ok(presence::machines(&*t.board_db())?.into_iter().map(MachineSeen::from).collect())
}

/// (Kept here for the callers that sweep by hand; the daemon's heartbeat sweeps on its own.)
pub use crate::team::sweep;

impl From<machines::Machine> for MachineSeen {
    fn from(m: machines::Machine) -> Self {
        Self {
            name: m.name,
            host: m.host,
            person: m.person,
            runner: m.runner,
            labels: m.labels,
            version: m.version,
            seen_ago_ms: m.seen_ago_ms,
        }
    }
}

/// Joins the team database at `req.url`: connects (each way that can fail is its own error),
/// brings its schema up to date, takes this machine's name, keeps the password, then moves the
/// board there.
pub fn join(t: &Tether, who: &Principal, req: Join) -> Result<TeamStatus> {
    if !who.is_person() {
        return Err(Error::NotAllowed("joining a team is the person's decision".into()));
    }
    let given_identity = match req.client_cert.as_deref().filter(|c| !c.trim().is_empty()) {
        Some(cert) => Some(connect::identity(cert, req.client_key.as_deref().filter(|k| !k.trim().is_empty()))?),
        None => None,
    };
    let machine = req.machine.map(|m| m.trim().to_owned()).filter(|m| !m.is_empty());
    let machine = machine.unwrap_or_else(tether_team::joined::host_name);
    let target = connect::target(&req.url, given_identity.clone())?;
    let j = Joined { url: req.url.trim().to_owned(), machine, instance: instance_id(&t.paths.data_dir)? };
    let pool = connect::reach(target, req.password.clone(), &j.machine)?;
    pool.with(|c| machines::check_in(c, &me(t, &j)))?;
    if let Some(p) = req.password.as_deref().filter(|p| !p.is_empty()) {
        crate::token::set_team_password(&t.paths, p)?;
    }
    match &given_identity {
        Some(id) => crate::token::set_team_identity(&t.paths, id.pem())?,
        None => crate::token::forget_team_identity(&t.paths)?,
    }
    j.save(&t.paths.data_dir)?;
    let board = crate::team::board(t, pool, &j.machine);
    // Where announcing starts: what teammates write from now on is news, nothing before.
    board.foreign_changes()?;
    t.set_team(Some(board));
    status(t)
}

/// Leaves the team database: the board is this machine's again, as it was before joining.
pub fn leave(t: &Tether, who: &Principal) -> Result<TeamStatus> {
    if !who.is_person() {
        return Err(Error::NotAllowed("leaving a team is the person's decision".into()));
    }
    if let Some(j) = joined(t)? {
        // The name is free for another at once; a team that cannot be reached frees it after
        // its holding time.
        let pool = crate::team::pool(t, &j)?;
        if let Err(e) = pool.with(|c| machines::leave(c, &j.machine, &j.instance)) {
            tracing::warn!("could not say goodbye to the team database: {e}");
        }
    }
    Joined::forget(&t.paths.data_dir)?;
    crate::token::forget_team_password(&t.paths)?;
    crate::token::forget_team_identity(&t.paths)?;
    t.set_team(None);
    status(t)
}

/// Copies this machine's own board's tasks up to the team database (when asked: joining never
/// merges). Each keeps its local id as its external reference (`laptop:T-3`), so importing again
/// refreshes them instead of duplicating; the local board itself is left as it was.
pub fn import_local(t: &Tether, who: &Principal) -> Result<crate::board::task_io::ImportReport> {
    if !who.is_person() {
        return Err(Error::NotAllowed("moving this machine's tasks to the team is the person's decision".into()));
    }
    let Some(j) = joined(t)? else {
        return Err(Error::invalid("team", "no team joined: join one first (tether team join postgres://…)"));
    };
    // (The team board announces its own write.)
    t.board().tasks().import_board(&t.store, &who.actor(), &j.machine)
}

/// The team database from here: whether joined, reachable (and how fast), and who was seen.
pub fn status(t: &Tether) -> Result<TeamStatus> {
    let Some(j) = joined(t)? else {
        return Ok(TeamStatus {
            joined: false,
            database: None,
            machine: None,
            reachable: false,
            latency_ms: None,
            error: None,
            machines: Vec::new(),
            runner: t.daemon.runner_role().takes_others,
            runner_policy: t.settings()?.runs.runner_policy,
        });
    };
    let database = Some(crate::team::target(t, &j)?.display());
    // Through the board's own pool when the board is there (no session of its own per call).
    let seen = if t.in_team() {
        presence::probe(&*t.board_db(), &me(t, &j))
    } else {
        presence::probe(&crate::team::pool(t, &j)?, &me(t, &j))
    };
    Ok(match seen {
        Ok((latency, list)) => TeamStatus {
            joined: true,
            database,
            machine: Some(j.machine),
            reachable: true,
            latency_ms: Some((latency * 10.0).round() / 10.0),
            error: None,
            machines: list.into_iter().map(MachineSeen::from).collect(),
            runner: t.daemon.runner_role().takes_others,
            runner_policy: t.settings()?.runs.runner_policy,
        },
        Err(e) => TeamStatus {
            joined: true,
            database,
            machine: Some(j.machine),
            reachable: false,
            latency_ms: None,
            error: Some(e.to_string()),
            machines: Vec::new(),
            runner: t.daemon.runner_role().takes_others,
            runner_policy: t.settings()?.runs.runner_policy,
        },
    })
}
