//! Reaching a team's database: the target a connection string names (with the client
//! certificate kept for it), the pool the board uses (every session stamped with this machine's
//! name), a first connection that says exactly why it failed, and the schema brought up to date.

use std::time::Duration;

use tether_pg::{ClientIdentity, ConnectError, PgConn, PgPool, Target};
use tether_store::error::{DbError, DbErrorKind, Error, Result};

use crate::joined::Joined;

/// How long reaching the team database may take before it counts as unreachable.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The team database a connection string names (what the person typed, or `team.json` kept),
/// signing in with `identity` when the server asks for a certificate.
pub fn target(url: &str, identity: Option<ClientIdentity>) -> Result<Target> {
    Ok(Target::parse(url).map_err(|e| Error::invalid("team database", e.to_string()))?.with_identity(identity))
}

/// A client certificate and its key (`None`: in the certificate's PEM), checked.
pub fn identity(cert: &str, key: Option<&str>) -> Result<ClientIdentity> {
    ClientIdentity::from_files(cert, key).map_err(|e| Error::invalid("client certificate", e))
}

/// The team database `j` names, signing in with the certificate kept for it (PEM), if any.
pub fn joined_target(j: &Joined, identity_pem: Option<&str>) -> Result<Target> {
    target(&j.url, identity_pem.map(|pem| identity(pem, None)).transpose()?)
}

/// The pool to the team database `j` names, with the secrets kept for it (nothing is reached
/// yet).
pub fn joined_pool(j: &Joined, identity_pem: Option<&str>, password: Option<String>) -> Result<PgPool> {
    Ok(pool(joined_target(j, identity_pem)?, password, &j.machine))
}

/// The board's pool for this machine: every session it opens says which machine it is
/// (`tether.machine`), so what it writes is stamped with where it came from (a signal's
/// `machine`: see `tether_board::runs::trust`). Without a password, libpq's conventions apply.
pub fn pool(target: Target, password: Option<String>, machine: &str) -> PgPool {
    let target = target.stamped(machine);
    let password = password.filter(|p| !p.is_empty()).or_else(|| target.libpq_password());
    PgPool::new(target, password, CONNECT_TIMEOUT)
}

/// A first connection to `target` for `machine`, the schema brought up to date on it, and the
/// pool it then belongs to: joining reaches the database now, and says why if it cannot.
pub fn reach(target: Target, password: Option<String>, machine: &str) -> Result<PgPool> {
    let target = target.stamped(machine);
    let password = password.filter(|p| !p.is_empty()).or_else(|| target.libpq_password());
    let first: PgConn = target.connect(password.as_deref(), CONNECT_TIMEOUT).map_err(connect_error)?;
    tether_pg::migrate::migrate(&first)?;
    let pool = PgPool::new(target, password, CONNECT_TIMEOUT);
    pool.give(first);
    Ok(pool)
}

/// Each way of failing to connect as the code a caller branches on: the person's to fix (what
/// they typed, their credentials) or the network's (try again).
pub fn connect_error(e: ConnectError) -> Error {
    use ConnectError as C;
    match e {
        C::BadUrl(..) | C::PasswordInUrl | C::NoDatabase(_) | C::Tls(_) | C::TlsNotOffered(_) => {
            Error::invalid("team database", e.to_string())
        }
        C::AuthFailed { .. } | C::NotAllowed { .. } | C::PasswordMissing(_) | C::CertificateRefused(_) => {
            Error::NotAllowed(e.to_string())
        }
        e => Error::Db(DbError { kind: DbErrorKind::Unavailable, message: e.to_string() }),
    }
}
