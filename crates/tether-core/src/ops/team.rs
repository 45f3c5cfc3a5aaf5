//! A team's database: joining it (the board moves there at once, without a restart), leaving it
//! (the board is this machine's again, as it was before joining: nothing is merged), and what it
//! looks like from here. Joining and leaving are the person's decisions; agents may only look.
//!
//! What was joined is kept in `team.json` in the data dir (the URL without its password, this
//! machine's name, this data dir's instance id); the password goes where the MCP token is kept
//! (the OS keyring, or the 0600 file store), else libpq's conventions (`PGPASSWORD`,
//! `~/.pgpass`) apply. The chat history, code origin and tokens never leave the machine.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tether_pg::machines::{self, CheckIn};
use tether_pg::{PgPool, Target};

use crate::Tether;
use crate::board::principal::Principal;
use crate::error::{DbError, DbErrorKind, Error, Result};
use crate::sql::{Database, Sql};
use crate::store::{Changed, Revisions};

/// How long reaching the team database may take before it counts as unreachable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

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

/// What was joined, as `team.json` keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Joined {
    url: String,
    machine: String,
    /// Random per data dir: tells this instance from another on the same host.
    instance: String,
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

/// The team's pool, announcing this instance's board writes on its bus once committed, and
/// telling what other machines wrote since (as the store does for the local board).
#[derive(Debug)]
struct TeamBoard {
    pool: PgPool,
    bus: crate::events::Bus,
    /// The revisions as this instance last announced them.
    announced: std::sync::Mutex<Option<Revisions>>,
    /// This machine's name in the team: its runs are its runner's.
    machine: String,
    /// Set once this process has brought the team schema up to date (a newer Tether on this
    /// machine migrates it on first use, whichever operation that is).
    migrated: std::sync::OnceLock<()>,
    /// Writes hold it shared from before their commit until `announced` has them; asking what
    /// others wrote holds it alone. Otherwise a notification of this process's own commit could
    /// be asked about in between and the write announced twice.
    gate: std::sync::RwLock<()>,
}

impl TeamBoard {
    fn new(pool: PgPool, bus: crate::events::Bus, machine: String) -> Self {
        Self {
            pool,
            bus,
            announced: std::sync::Mutex::new(None),
            machine,
            migrated: std::sync::OnceLock::new(),
            gate: std::sync::RwLock::new(()),
        }
    }

    /// The pool, once the schema is current and where announcing starts is set: what others
    /// write after this process first uses the board is announced, nothing before.
    fn ready(&self) -> Result<&PgPool> {
        if self.migrated.get().is_none() {
            self.pool.with(tether_pg::migrate::migrate)?;
            let now = self.pool.with(|c| Revisions::read_from(c))?;
            let mut held = self.announced.lock().unwrap_or_else(|p| p.into_inner());
            *held = Some(held.map_or(now, |was| was.max(now)));
            drop(held);
            let _ = self.migrated.set(());
        }
        Ok(&self.pool)
    }

    /// A write through the pool, announced on this process's bus as this machine's own (so the
    /// NOTIFY it causes is not announced a second time as another's).
    fn announcing(&self, write: impl FnOnce(&PgPool) -> Result<Changed>) -> Result<Changed> {
        let pool = self.ready()?;
        let gate = self.gate.read().unwrap_or_else(|p| p.into_inner());
        let changed = write(pool)?;
        if changed.any() {
            let mut held = self.announced.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(r) = held.as_mut() {
                let mine = Revisions {
                    tasks: changed.tasks.unwrap_or(r.tasks),
                    signals: changed.signals.unwrap_or(r.signals),
                    runs: changed.runs.unwrap_or(r.runs),
                };
                *r = r.max(mine);
            }
            drop(held);
            drop(gate);
            self.bus.announce(changed);
        }
        Ok(changed)
    }
}

impl Database for TeamBoard {
    fn read_with(&self, f: &mut dyn FnMut(&dyn Sql) -> Result<()>) -> Result<()> {
        self.ready()?.read_with(f)
    }

    fn write_with(&self, f: &mut dyn FnMut(&dyn Sql) -> Result<()>) -> Result<Changed> {
        self.announcing(|pool| pool.write_with(f))
    }

    fn claim_with(&self, f: &mut dyn FnMut(&dyn Sql) -> Result<()>) -> Result<Changed> {
        self.announcing(|pool| pool.claim_with(f))
    }

    fn append_with(&self, f: &mut dyn FnMut(&dyn Sql) -> Result<()>) -> Result<()> {
        self.ready()?.append_with(f)
    }

    fn foreign_changes(&self) -> Result<Changed> {
        let pool = self.ready()?;
        let _gate = self.gate.write().unwrap_or_else(|p| p.into_inner());
        let now = pool.with(|c| Revisions::read_from(c))?;
        let mut held = self.announced.lock().unwrap_or_else(|p| p.into_inner());
        let changed = held.map(|was| was.changed_to(now)).unwrap_or_default();
        *held = Some(held.map_or(now, |was| was.max(now)));
        Ok(changed)
    }

    fn machine(&self) -> Option<String> {
        Some(self.machine.clone())
    }

    fn listen(&self, heard: Arc<dyn Fn() + Send + Sync>) -> Option<crate::sql::Listening> {
        Some(Box::new(self.pool.listen(heard)))
    }
}

fn team_file(t: &Tether) -> std::path::PathBuf {
    t.paths.data_dir.join("team.json")
}

fn joined(t: &Tether) -> Result<Option<Joined>> {
    match std::fs::read(team_file(t)) {
        Ok(b) => serde_json::from_slice(&b)
            .map(Some)
            .map_err(|e| Error::ConfigInvalid { path: team_file(t), reason: e.to_string() }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io("reading team.json", e)),
    }
}

/// This data dir's instance id, made once and kept (joining again after leaving is the same
/// instance, so it gets its machine name back).
fn instance_id(t: &Tether) -> Result<String> {
    let path = t.paths.data_dir.join("instance-id");
    match std::fs::read_to_string(&path) {
        Ok(id) if !id.trim().is_empty() => Ok(id.trim().to_owned()),
        Ok(_) => Err(Error::ConfigInvalid { path, reason: "empty".into() }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let id = tether_store::random_token()[..16].to_owned();
            crate::token::write_private(&path, &id)?;
            Ok(id)
        }
        Err(e) => Err(Error::io("reading instance-id", e)),
    }
}

fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "this-machine".into())
}

fn unreachable(e: impl std::fmt::Display) -> Error {
    Error::Db(DbError { kind: DbErrorKind::Unavailable, message: e.to_string() })
}

/// Each way of failing to connect as the code a caller branches on: the person's to fix (what
/// they typed, their credentials) or the network's (try again).
fn connect_error(e: tether_pg::ConnectError) -> Error {
    use tether_pg::ConnectError as C;
    match e {
        C::BadUrl(..) | C::PasswordInUrl | C::NoDatabase(_) | C::Tls(_) | C::TlsNotOffered(_) => {
            Error::invalid("team database", e.to_string())
        }
        C::AuthFailed { .. } | C::NotAllowed { .. } | C::PasswordMissing(_) | C::CertificateRefused(_) => {
            Error::NotAllowed(e.to_string())
        }
        e => unreachable(e),
    }
}

/// The team database a connection string names (what the person typed, or `team.json` kept).
fn target(url: &str) -> Result<Target> {
    Target::parse(url).map_err(|e| Error::invalid("team database", e.to_string()))
}

/// The team database this data dir joined, with the client certificate kept for it, if any.
fn joined_target(t: &Tether, url: &str) -> Result<Target> {
    let identity = match crate::token::team_identity(&t.paths)? {
        Some(pem) => Some(identity(&pem, None)?),
        None => None,
    };
    Ok(target(url)?.with_identity(identity))
}

/// A client certificate and its key (`None`: in the certificate's PEM), checked.
fn identity(cert: &str, key: Option<&str>) -> Result<tether_pg::ClientIdentity> {
    tether_pg::ClientIdentity::from_files(cert, key).map_err(|e| Error::invalid("client certificate", e))
}

/// The board's pool for this machine: every session it opens says which machine it is
/// (`tether.machine`), so what it writes is stamped with where it came from (a signal's
/// `machine`: see `board::runs::trust`).
fn pool_for(target: Target, password: Option<String>, machine: &str) -> PgPool {
    let password = password.or_else(|| target.libpq_password());
    PgPool::new(target.stamped(machine), password, CONNECT_TIMEOUT)
}

fn me(t: &Tether, j: &Joined) -> CheckIn {
    let role = t.daemon.runner_role();
    CheckIn {
        name: j.machine.clone(),
        instance: j.instance.clone(),
        host: host_name(),
        person: Tether::person(),
        runner: role.takes_others,
        labels: role.labels,
        version: env!("CARGO_PKG_VERSION").into(),
    }
}

fn check_in(t: &Tether, pool: &PgPool, j: &Joined) -> Result<()> {
    pool.with(|c| machines::check_in(c, &me(t, j)))
}

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

/// Says to the team database that this machine is still here (a running daemon does, every few
/// seconds, so "last seen" means something and its name stays its own), then [`sweep`]s with
/// [`runner_lease`]. Nothing when not joined; the runs lost otherwise.
pub fn heartbeat(t: &Tether) -> Result<Vec<String>> {
    let Some(j) = joined(t)? else { return Ok(Vec::new()) };
    if !t.in_team() {
        return Ok(Vec::new());
    }
    t.board_db().append(|db| machines::check_in(db, &me(t, &j)))?;
    sweep(t, runner_lease())
}

/// Ends the runs of runner machines silent for longer than `lease` (by the team database's
/// clock), or gone: `lost`, their tasks handed back with the reason. The runs lost.
pub fn sweep(t: &Tether, lease: Duration) -> Result<Vec<String>> {
    let board = t.board_db();
    let Some(here) = board.machine() else { return Ok(Vec::new()) };
    let lease = i64::try_from(lease.as_millis()).unwrap_or(i64::MAX);
    let mut gone = board.read(|db| machines::gone_runners(db, lease))?;
    gone.retain(|m| *m != here);
    let lost = crate::board::runs::lose_runs_on(&*board, &gone)?;
    Ok(lost.into_iter().map(crate::board::runs::format_id).collect())
}

/// The machines the team database has seen, the most recent first (none outside a team).
pub fn machines(t: &Tether) -> Result<Vec<MachineSeen>> {
    if !t.in_team() {
        return Ok(Vec::new());
    }
    let list = t.board_db().read(|db| machines::list(db))?;
    Ok(list.into_iter().map(MachineSeen::from).collect())
}

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
        Some(cert) => Some(identity(cert, req.client_key.as_deref().filter(|k| !k.trim().is_empty()))?),
        None => None,
    };
    let machine = req.machine.map(|m| m.trim().to_owned()).filter(|m| !m.is_empty()).unwrap_or_else(host_name);
    let target = target(&req.url)?.with_identity(given_identity.clone()).stamped(&machine);
    let instance = instance_id(t)?;
    let password = req.password.clone().filter(|p| !p.is_empty()).or_else(|| target.libpq_password());
    let first = target.connect(password.as_deref(), CONNECT_TIMEOUT).map_err(connect_error)?;
    tether_pg::migrate::migrate(&first)?;
    let j = Joined { url: req.url.trim().to_owned(), machine, instance };
    let pool = PgPool::new(target, password.clone(), CONNECT_TIMEOUT);
    pool.give(first);
    check_in(t, &pool, &j)?;
    if let Some(p) = req.password.as_deref().filter(|p| !p.is_empty()) {
        crate::token::set_team_password(&t.paths, p)?;
    }
    match &given_identity {
        Some(id) => crate::token::set_team_identity(&t.paths, id.pem())?,
        None => crate::token::forget_team_identity(&t.paths)?,
    }
    crate::token::write_private(&team_file(t), &serde_json::to_string_pretty(&j)?)?;
    let board = TeamBoard::new(pool, t.bus.clone(), j.machine.clone());
    board.ready()?;
    t.set_team(Some(Arc::new(board)));
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
        let target = joined_target(t, &j.url)?;
        let pool = pool_for(target, crate::token::team_password(&t.paths)?, &j.machine);
        if let Err(e) = pool.with(|c| machines::leave(c, &j.machine, &j.instance)) {
            tracing::warn!("could not say goodbye to the team database: {e}");
        }
    }
    match std::fs::remove_file(team_file(t)) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(Error::io("removing team.json", e)),
    }
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
    crate::board::task_io::import_board(&t.store, &*t.board_db(), &who.actor(), &j.machine)
}

/// Puts the board back on the team database this data dir joined, if any (when Tether opens).
/// Nothing is reached yet: the first board operation connects, and says so if it cannot.
pub fn restore(t: &Tether) -> Result<bool> {
    let Some(j) = joined(t)? else { return Ok(false) };
    let target = joined_target(t, &j.url)?;
    let password = crate::token::team_password(&t.paths)?;
    t.set_team(Some(Arc::new(TeamBoard::new(pool_for(target, password, &j.machine), t.bus.clone(), j.machine))));
    Ok(true)
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
    let target = joined_target(t, &j.url)?;
    let database = Some(target.display());
    // Through the board's own pool when the board is there (no session of its own per call).
    let seen = if t.in_team() {
        let board = t.board_db();
        (|| {
            board.append(|db| machines::check_in(db, &me(t, &j)))?;
            let t0 = Instant::now();
            board.read(|db| tether_store::sql::SqlExt::query_row(db, "SELECT 1", &[], |_| Ok(())))?;
            let latency = t0.elapsed().as_secs_f64() * 1000.0;
            Ok::<_, Error>((latency, board.read(|db| machines::list(db))?))
        })()
    } else {
        let pool = pool_for(target, crate::token::team_password(&t.paths)?, &j.machine);
        (|| {
            check_in(t, &pool, &j)?;
            let t0 = Instant::now();
            pool.with(|c| tether_store::sql::SqlExt::query_row(c, "SELECT 1", &[], |_| Ok(())))?;
            let latency = t0.elapsed().as_secs_f64() * 1000.0;
            Ok::<_, Error>((latency, pool.with(|c| machines::list(c))?))
        })()
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
