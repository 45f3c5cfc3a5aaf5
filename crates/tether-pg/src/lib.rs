//! The team database (PostgreSQL): connections with libpq's conventions and a clear error per way
//! one fails ([`conn`]), the board's portable SQL run on it ([`conn::PgConn`] implements
//! `tether_store::sql::Sql`), how values cross ([`value`]), the team schema's migrations
//! ([`migrate`]), a pool that is the board's `Database` and reconnects by itself ([`pool`]), and
//! the team's machines ([`machines`]), and hearing other machines' writes as they commit
//! ([`listen`]).
//!
//! Beside the core, like git and GitHub: depends on tether-store only, never on the board's rules,
//! the history, hosts or transports. Passwords are given to it; it never stores one.

pub mod conn;
pub mod listen;
pub mod machines;
pub mod migrate;
pub mod pool;
mod socket;
mod tls;
mod value;

pub use conn::{ConnectError, PgConn, Target};
pub use pool::PgPool;
pub use tls::ClientIdentity;
