//! What Tether's engine crates stand on: where data lives ([`paths`], the one place directories
//! are resolved, with the `TETHER_HOME` override), our SQLite database ([`store`]: pragmas,
//! append-only migrations for every domain, durable transactions, revisions, the write watch),
//! the system's file events ([`file_events`], for the store's write watch and the history
//! watcher),
//! announcing each board write once on either engine ([`announce`]),
//! [`sql`]: the dialect the board's SQL is written in for both engines, the engine's typed errors with the stable codes hosts branch on ([`error`]), and the clock.
//!
//! Knows nothing about Cursor's formats, the board's rules, hosts or transports.

pub mod announce;
pub mod changed;
pub mod clock;
pub mod error;
pub mod file_events;
pub mod paths;
pub mod private;
pub mod sql;
pub mod store;

pub use error::{Error, ErrorCode, Result};

/// Deserialisers for request fields whose absence, `null` and value mean three things.
pub mod de {
    use serde::Deserialize;

    /// For `Option<Option<String>>`: absent → `None` (leave it), `null` or blank → `Some(None)`
    /// (clear it), text → `Some(Some(text))`.
    pub fn some_or_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Option<String>>, D::Error> {
        Ok(Some(Option::<String>::deserialize(d)?.filter(|s| !s.trim().is_empty())))
    }

    /// A value read through its `FromStr` (its error says what is accepted), for enums whose
    /// textual form is the one people type.
    pub fn parsed<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
    where
        D: serde::Deserializer<'de>,
        T: std::str::FromStr,
        T::Err: std::fmt::Display,
    {
        match Option::<String>::deserialize(d)? {
            None => Ok(None),
            Some(s) if s.trim().is_empty() => Ok(None),
            Some(s) => s.parse().map(Some).map_err(serde::de::Error::custom),
        }
    }
}
pub use paths::{CursorLocations, Paths};
pub use store::Store;

/// 32 random bytes as hex: a fresh secret or one-time token.
pub fn random_token() -> String {
    let mut buf = [0u8; 32];
    getrandom::fill(&mut buf).expect("the OS random number generator failed");
    buf.iter().map(|b| format!("{b:02x}")).collect()
}
