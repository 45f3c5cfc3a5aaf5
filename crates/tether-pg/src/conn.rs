//! One connection to the team database: how it is reached (a `postgres://` URL or libpq's
//! `key=value` form; the password given apart, else `PGPASSWORD`, else `~/.pgpass`, as libpq
//! does), why it could not be (one [`ConnectError`] per way, each saying what to do), and the
//! board's portable SQL run over it ([`Sql`]), with transactions that are serializable and
//! retried when PostgreSQL says two of them met.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use tether_store::error::{DbError, DbErrorKind, Error, Result};
use tether_store::sql::{Row, Sql, Value, numbered_params};
use tokio_postgres::error::SqlState;
use tokio_postgres::{Client, Config, Statement};

use crate::value::{Cell, Param};

/// Where the team database is and who connects: parsed from what a person typed, never holding
/// a password it was not given apart.
#[derive(Debug, Clone)]
pub struct Target {
    config: Config,
    /// libpq's TLS options as written (the driver knows only three of `sslmode`'s six values).
    tls: crate::tls::TlsSettings,
}

/// Why the team database could not be reached, each with what to do about it.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConnectError {
    #[error("{0:?} is not a PostgreSQL connection string: {1} (expected postgres://USER@HOST:PORT/DATABASE)")]
    BadUrl(String, String),
    #[error(
        "the connection string carries a password; give it apart (Tether keeps it in the OS keyring) or through PGPASSWORD or ~/.pgpass, so it never lands in settings"
    )]
    PasswordInUrl,
    #[error("nothing answers at {0}: is PostgreSQL running there, and listening on that address and port?")]
    Refused(String),
    #[error("{0} did not answer within {1} s: a firewall, a wrong host, or the server is overloaded")]
    TimedOut(String, u64),
    #[error("cannot resolve the host {0:?}")]
    UnknownHost(String),
    #[error(
        "{0} asks for a password and none was given (store one with `tether team join`, or set PGPASSWORD or ~/.pgpass)"
    )]
    PasswordMissing(String),
    #[error("PostgreSQL refused user {user:?}'s password (or the user does not exist)")]
    AuthFailed { user: String },
    #[error("PostgreSQL does not let user {user:?} in from here: {message} (see the server's pg_hba.conf)")]
    NotAllowed { user: String, message: String },
    #[error("there is no database {0:?} on that server; create it (`createdb {0}`) or name another")]
    NoDatabase(String),
    #[error("TLS to the team database: {0}")]
    Tls(String),
    #[error(
        "the team database's certificate was refused: {0} (check sslrootcert, and for sslmode=verify-full that the host name is one the certificate names)"
    )]
    CertificateRefused(String),
    #[error("{0} does not speak TLS, and sslmode asks for it (turn ssl on in postgresql.conf, or use sslmode=prefer)")]
    TlsNotOffered(String),
    #[error("the server is not accepting connections now: {0}")]
    Unavailable(String),
    #[error("could not connect to the team database: {0}")]
    Other(String),
}

impl Target {
    /// Reads a connection string; a password inside it is refused (see [`ConnectError::PasswordInUrl`]).
    pub fn parse(url: &str) -> std::result::Result<Target, ConnectError> {
        let (rest, mut opts) = take_options(url.trim(), crate::tls::OPTIONS);
        let sslmode = opts.remove("sslmode").unwrap_or_else(|| "prefer".into());
        if !["disable", "allow", "prefer", "require", "verify-ca", "verify-full"].contains(&sslmode.as_str()) {
            return Err(ConnectError::BadUrl(url.into(), format!("unknown sslmode {sslmode:?}")));
        }
        let tls = crate::tls::TlsSettings {
            mode: sslmode,
            rootcert: opts.remove("sslrootcert"),
            cert: opts.remove("sslcert").map(PathBuf::from),
            key: opts.remove("sslkey").map(PathBuf::from),
            identity: None,
        };
        let config = Config::from_str(&rest).map_err(|e| ConnectError::BadUrl(url.into(), e.to_string()))?;
        if config.get_password().is_some() {
            return Err(ConnectError::PasswordInUrl);
        }
        if config.get_hosts().is_empty() {
            return Err(ConnectError::BadUrl(url.into(), "no host".into()));
        }
        if let Some(why) = crate::socket::unreachable_host(&config) {
            return Err(ConnectError::BadUrl(url.into(), why));
        }
        Ok(Target { config, tls })
    }

    /// This target for `machine`'s sessions: each says which machine it is (`tether.machine`),
    /// so columns that default to it (a signal's `machine`) name the writer whatever code wrote.
    pub fn stamped(mut self, machine: &str) -> Target {
        // libpq's `options` are split at spaces, a backslash escaping the next character.
        let escaped: String =
            machine.chars().flat_map(|c| if c == ' ' || c == '\\' { vec!['\\', c] } else { vec![c] }).collect();
        self.config.options(format!("-c tether.machine={escaped}"));
        self
    }

    /// This target with the client certificate Tether keeps for it, used before `sslcert`,
    /// `sslkey` and libpq's default files.
    pub fn with_identity(mut self, identity: Option<crate::tls::ClientIdentity>) -> Target {
        self.tls.identity = identity;
        self
    }

    pub fn user(&self) -> String {
        self.config.get_user().map(str::to_owned).unwrap_or_else(login_name)
    }

    pub fn database(&self) -> String {
        self.config.get_dbname().map(str::to_owned).unwrap_or_else(|| self.user())
    }

    fn host(&self) -> String {
        match self.config.get_hosts().first() {
            Some(h) => crate::socket::host_text(h),
            None => "localhost".into(),
        }
    }

    fn port(&self) -> u16 {
        self.config.get_ports().first().copied().unwrap_or(5432)
    }

    /// `host:port/database`, for messages (never a password).
    pub fn display(&self) -> String {
        format!("{}:{}/{}", self.host(), self.port(), self.database())
    }

    /// The password libpq would use for this target when none is given: `PGPASSWORD`, else
    /// `PGPASSFILE` or `~/.pgpass` (see [`libpq_password`]).
    pub fn libpq_password(&self) -> Option<String> {
        libpq_password(
            std::env::var("PGPASSWORD").ok(),
            pgpass_path().as_deref(),
            (&self.host(), self.port(), &self.database(), &self.user()),
        )
    }

    /// Connects with `password` (the keyring's, else [`Target::libpq_password`]: the caller
    /// chooses, so nothing here reads the environment); `timeout` bounds reaching the server.
    pub fn connect(&self, password: Option<&str>, timeout: Duration) -> std::result::Result<PgConn, ConnectError> {
        let mut config = self.config_for(password)?;
        config.connect_timeout(timeout);
        let tls = self.tls.connector().map_err(ConnectError::Tls)?;
        let client = wait(async move {
            let (client, connection) = config.connect(tls).await?;
            // The session's I/O; it ends when the server goes or the client is dropped.
            tokio::spawn(connection);
            Ok::<_, tokio_postgres::Error>(client)
        })
        .map_err(|e| self.classify(&e, timeout))?;
        Ok(PgConn { client: Arc::new(client), statements: RefCell::new(HashMap::new()), target: self.clone() })
    }

    /// The driver's settings for a session with `password`.
    /// The TLS connector this target's `sslmode` asks for.
    pub(crate) fn tls(&self) -> std::result::Result<tokio_postgres_rustls::MakeRustlsConnect, ConnectError> {
        self.tls.connector().map_err(ConnectError::Tls)
    }

    pub(crate) fn config_for(
        &self,
        password: Option<&str>,
    ) -> std::result::Result<tokio_postgres::Config, ConnectError> {
        let mut config = self.config.clone();
        config.ssl_mode(self.tls.driver_mode());
        config.application_name("tether");
        if let Some(p) = password {
            config.password(p);
        }
        if config.get_user().is_none() {
            config.user(self.user());
        }
        Ok(config)
    }

    fn classify(&self, e: &tokio_postgres::Error, timeout: Duration) -> ConnectError {
        let at = format!("{}:{}", self.host(), self.port());
        if let Some(db) = e.as_db_error() {
            let code = db.code();
            return if *code == SqlState::INVALID_PASSWORD {
                ConnectError::AuthFailed { user: self.user() }
            } else if *code == SqlState::INVALID_CATALOG_NAME {
                ConnectError::NoDatabase(self.database())
            } else if *code == SqlState::INVALID_AUTHORIZATION_SPECIFICATION {
                ConnectError::NotAllowed { user: self.user(), message: db.message().to_owned() }
            } else if code.code().starts_with("57") || code.code().starts_with("53") {
                ConnectError::Unavailable(db.message().to_owned())
            } else {
                ConnectError::Other(db.message().to_owned())
            };
        }
        // The driver's own words are generic ("invalid configuration"); its sources say which.
        let mut text = e.to_string();
        let mut source = std::error::Error::source(e);
        while let Some(s) = source {
            text = format!("{text}: {s}");
            source = s.source();
        }
        let io = std::error::Error::source(e).and_then(|s| s.downcast_ref::<std::io::Error>());
        if let Some(why) = text.split("invalid peer certificate: ").nth(1) {
            return ConnectError::CertificateRefused(why.to_owned());
        }
        if text.contains("server does not support TLS") {
            return ConnectError::TlsNotOffered(at);
        }
        match io.map(std::io::Error::kind) {
            Some(std::io::ErrorKind::ConnectionRefused) => ConnectError::Refused(at),
            Some(std::io::ErrorKind::TimedOut) => ConnectError::TimedOut(at, timeout.as_secs()),
            _ if text.contains("password missing") => ConnectError::PasswordMissing(at),
            _ if text.contains("timed out") => ConnectError::TimedOut(at, timeout.as_secs()),
            _ if text.contains("failed to lookup address") || text.contains("Name or service not known") => {
                ConnectError::UnknownHost(self.host())
            }
            _ => ConnectError::Other(text),
        }
    }
}

/// Takes `names` out of a URL's query or a `key=value` string: what is left, and their values.
fn take_options(url: &str, names: &[&str]) -> (String, HashMap<String, String>) {
    let mut found = HashMap::new();
    let mut take = |kv: &str| match kv.split_once('=') {
        Some((k, v)) if names.contains(&k) => {
            found.insert(k.to_owned(), v.trim_matches('\'').to_owned());
            false
        }
        _ => true,
    };
    if let Some((base, query)) = url.split_once('?') {
        let kept: Vec<&str> = query.split('&').filter(|kv| take(kv)).collect();
        let rest = if kept.is_empty() { base.to_owned() } else { format!("{base}?{}", kept.join("&")) };
        return (rest, found);
    }
    if url.contains("://") {
        return (url.to_owned(), found);
    }
    let kept: Vec<&str> = url.split_whitespace().filter(|kv| take(kv)).collect();
    (kept.join(" "), found)
}

fn login_name() -> String {
    ["PGUSER", "USER", "USERNAME"]
        .iter()
        .find_map(|k| std::env::var(k).ok().filter(|v| !v.is_empty()))
        .unwrap_or_else(|| "postgres".into())
}

/// `PGPASSFILE`, else `~/.pgpass`.
fn pgpass_path() -> Option<PathBuf> {
    std::env::var_os("PGPASSFILE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".pgpass")))
}

/// The password libpq would use when none was given: `PGPASSWORD`, else the first matching line
/// of the password file — which, as libpq insists, is ignored unless only its owner can read it.
pub fn libpq_password(
    env: Option<String>,
    pgpass: Option<&Path>,
    (host, port, db, user): (&str, u16, &str, &str),
) -> Option<String> {
    if let Some(p) = env.filter(|p| !p.is_empty()) {
        return Some(p);
    }
    let path = pgpass?;
    let meta = std::fs::metadata(path).ok()?;
    if tether_store::private::readable_by_others(&meta) {
        tracing::warn!(path = %path.display(), "the password file can be read by others; ignored (chmod 0600 it)");
        return None;
    }
    let text = std::fs::read_to_string(path).ok()?;
    let port = port.to_string();
    text.lines().filter(|l| !l.trim_start().starts_with('#')).find_map(|line| {
        let fields = pgpass_fields(line);
        let [h, p, d, u, pw] = fields.as_slice() else { return None };
        let matches = |pat: &str, v: &str| pat == "*" || pat == v;
        let host_ok = matches(h, host) || (h == "localhost" && host.starts_with('/'));
        (host_ok && matches(p, &port) && matches(d, db) && matches(u, user)).then(|| pw.clone())
    })
}

/// A password file line's five fields (`\:` and `\\` escape).
fn pgpass_fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => fields.last_mut().unwrap().extend(chars.next()),
            ':' if fields.len() < 5 => fields.push(String::new()),
            c => fields.last_mut().unwrap().push(c),
        }
    }
    fields
}

/// The runtime every team-database session's I/O runs on: one worker thread of its own, so a
/// call made from anywhere (a blocking thread, the CLI, a task on the daemon's own runtime) just
/// waits for its answer. A driver that blocks on a runtime of its own panics when called from
/// inside another's; this one never enters the caller's.
pub(crate) fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("tether-pg")
            .enable_all()
            .build()
            .expect("the team database's runtime")
    })
}

/// What `f` gives, run on [`runtime`], waited for on this thread. The wait is outside tokio's
/// cooperative budget: called from inside a task of another runtime, a budgeted join handle
/// would answer "not yet" (and wake itself) forever once that task's budget ran out, since the
/// task never yields back to refill it.
fn wait<F>(f: F) -> F::Output
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    match futures_executor::block_on(tokio::task::unconstrained(runtime().spawn(f))) {
        Ok(v) => v,
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(e) => panic!("the team database's runtime stopped: {e}"),
    }
}

/// How much of other transactions a transaction may see.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isolation {
    /// As if alone: the board's default (what SQLite's single writer gives).
    Serializable,
    /// Each statement sees what committed before it: for claims made of row locks and
    /// conditional statements ([`tether_store::sql::Database::claim_with`]).
    ReadCommitted,
}

/// A connection to the team database. Not shared between threads (it holds one session).
pub struct PgConn {
    client: Arc<Client>,
    /// Prepared once per connection and statement text (a prepare is a round trip).
    statements: RefCell<HashMap<String, Statement>>,
    target: Target,
}

impl std::fmt::Debug for PgConn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgConn").field("target", &self.target.display()).finish_non_exhaustive()
    }
}

/// How many times a transaction that met another is tried before the error is the caller's.
const TRIES: u32 = 20;

impl PgConn {
    /// Runs statements with no parameters at once (migrations).
    pub fn batch(&self, sql: &str) -> Result<()> {
        let (c, sql) = (Arc::clone(&self.client), sql.to_owned());
        wait(async move { c.batch_execute(&sql).await }).map_err(db_error)
    }

    /// Runs `f` in one SERIALIZABLE transaction, committed before this returns: PostgreSQL then
    /// gives what SQLite's single writer gives the board, every transaction as if alone. When
    /// two met (a serialization failure or a deadlock), the loser is rolled back and `f` runs
    /// again, a little later each time.
    pub fn transaction<T>(&self, f: impl FnMut(&dyn Sql) -> Result<T>) -> Result<T> {
        self.transaction_at(Isolation::Serializable, f)
    }

    /// [`PgConn::transaction`] at the isolation asked for. Under read committed a unique key
    /// that a racing transaction took first (a name two new agents both chose) is met too, and
    /// tried again a few times, when the other's row is then seen.
    pub fn transaction_at<T>(&self, isolation: Isolation, mut f: impl FnMut(&dyn Sql) -> Result<T>) -> Result<T> {
        let begin = match isolation {
            Isolation::Serializable => "BEGIN ISOLATION LEVEL SERIALIZABLE",
            Isolation::ReadCommitted => "BEGIN ISOLATION LEVEL READ COMMITTED",
        };
        let mut attempt = 0;
        loop {
            attempt += 1;
            self.batch(begin)?;
            let out = f(self).and_then(|v| self.batch("COMMIT").map(|()| v));
            match out {
                Ok(v) => return Ok(v),
                Err(e) => {
                    let _ = self.batch("ROLLBACK");
                    let again = match &e {
                        Error::Db(DbError { kind: DbErrorKind::Contended, .. }) => attempt < TRIES,
                        Error::Db(DbError { kind: DbErrorKind::Constraint, .. }) => {
                            isolation == Isolation::ReadCommitted && attempt < 3
                        }
                        _ => false,
                    };
                    if !again {
                        return Err(e);
                    }
                    std::thread::sleep(backoff(attempt));
                }
            }
        }
    }

    /// Whether the session is known to be gone (no round trip).
    pub fn is_closed(&self) -> bool {
        self.client.is_closed()
    }

    fn statement(&self, sql: &str) -> Result<Statement> {
        if let Some(s) = self.statements.borrow().get(sql) {
            return Ok(s.clone());
        }
        let text = numbered_params(sql).map_err(|e| Error::invalid("SQL", e))?;
        let c = Arc::clone(&self.client);
        let stmt = wait(async move { c.prepare(&text).await }).map_err(db_error)?;
        self.statements.borrow_mut().insert(sql.to_owned(), stmt.clone());
        Ok(stmt)
    }
}

/// 1, 2, 4 … ms, capped at 50, with jitter so two losers do not meet again.
fn backoff(attempt: u32) -> Duration {
    use std::hash::BuildHasher;
    // Short and capped: a loser usually lost to one commit, and waits for the others' turns
    // rather than for the database.
    let base = (1u64 << attempt.min(3)).min(8);
    // Random per call (each `RandomState` has keys of its own), so transactions that met retry
    // apart instead of meeting again in step.
    let jitter = std::collections::hash_map::RandomState::new().hash_one(attempt) % (base * 1000 + 1);
    Duration::from_micros(base * 500 + jitter)
}

impl Sql for PgConn {
    fn row_lock(&self, rest: &str) -> String {
        format!(" FOR UPDATE {rest}")
    }

    fn json_strings(&self, expr: &str, alias: &str) -> String {
        format!("jsonb_array_elements_text(CAST({expr} AS jsonb)) AS {alias}(value)")
    }

    fn execute(&self, sql: &str, params: &[Value]) -> Result<usize> {
        let stmt = self.statement(sql)?;
        let (c, params) = (Arc::clone(&self.client), params.to_vec());
        let n = wait(async move {
            let params: Vec<Param<'_>> = params.iter().map(Param).collect();
            let refs: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = params.iter().map(|p| p as _).collect();
            c.execute(&stmt, &refs).await
        })
        .map_err(db_error)?;
        Ok(usize::try_from(n).unwrap_or(usize::MAX))
    }

    fn rows(&self, sql: &str, params: &[Value]) -> Result<Vec<Row>> {
        let stmt = self.statement(sql)?;
        let (c, params) = (Arc::clone(&self.client), params.to_vec());
        wait(async move {
            let params: Vec<Param<'_>> = params.iter().map(Param).collect();
            let refs: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = params.iter().map(|p| p as _).collect();
            let rows = c.query(&stmt, &refs).await.map_err(db_error)?;
            rows.iter()
                .map(|r| {
                    (0..r.len())
                        .map(|i| r.try_get::<_, Cell>(i).map(|c| c.0).map_err(db_error))
                        .collect::<Result<Vec<_>>>()
                        .map(Row::new)
                })
                .collect()
        })
    }
}

/// PostgreSQL's error in the terms the board branches on.
pub fn db_error(e: tokio_postgres::Error) -> Error {
    let kind = match e.code() {
        Some(c) if *c == SqlState::T_R_SERIALIZATION_FAILURE || *c == SqlState::T_R_DEADLOCK_DETECTED => {
            DbErrorKind::Contended
        }
        Some(c) if c.code().starts_with("23") => DbErrorKind::Constraint,
        Some(c) if c.code().starts_with("08") || c.code().starts_with("57") => DbErrorKind::Unavailable,
        None if e.is_closed() || std::error::Error::source(&e).is_some_and(|s| s.is::<std::io::Error>()) => {
            DbErrorKind::Unavailable
        }
        _ => DbErrorKind::Other,
    };
    let message = match e.as_db_error() {
        Some(db) => match db.detail() {
            Some(d) => format!("team database: {} ({d})", db.message()),
            None => format!("team database: {}", db.message()),
        },
        None if kind == DbErrorKind::Unavailable => format!("the team database cannot be reached: {e}"),
        None => format!("team database: {e}"),
    };
    Error::Db(DbError { kind, message })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_in_the_url_is_refused_and_a_bad_url_named() {
        assert_eq!(Target::parse("postgres://me:secret@db.example/team").unwrap_err(), ConnectError::PasswordInUrl);
        assert!(matches!(Target::parse("postgres://db.example:notaport/x"), Err(ConnectError::BadUrl(..))));
        let t = Target::parse("postgres://me@db.example:6543/team").unwrap();
        assert_eq!((t.user(), t.display()), ("me".into(), "db.example:6543/team".into()));
    }

    #[test]
    fn libpq_conventions_give_the_password_environment_first_then_a_private_pgpass() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("pgpass");
        std::fs::write(&file, "# comment\nother:5432:*:*:no\ndb.example:5432:team:me:pa\\:ss\n*:*:*:*:fallback\n")
            .unwrap();
        let at = ("db.example", 5432, "team", "me");
        use tether_store::private::set_mode;
        set_mode(&file, 0o600).unwrap();
        assert_eq!(libpq_password(Some("env".into()), Some(&file), at).as_deref(), Some("env"));
        assert_eq!(libpq_password(None, Some(&file), at).as_deref(), Some("pa:ss"));
        assert_eq!(libpq_password(None, Some(&file), ("x", 1, "y", "z")).as_deref(), Some("fallback"));
        set_mode(&file, 0o644).unwrap();
        // Windows has no such bits; libpq does not check the file there either.
        let others_may_read = if cfg!(unix) { None } else { Some("pa:ss") };
        assert_eq!(
            libpq_password(None, Some(&file), at).as_deref(),
            others_may_read,
            "a file others can read is ignored, as libpq does"
        );
    }
}
