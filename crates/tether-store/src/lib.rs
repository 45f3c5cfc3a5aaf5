//! What Tether's engine crates stand on: where data lives ([`paths`], the one place directories
//! are resolved, with the `TETHER_HOME` override), our SQLite database ([`store`]: pragmas,
//! append-only migrations for every domain, durable transactions, revisions, the write watch),
//! the engine's typed errors with the stable codes hosts branch on ([`error`]), and the clock.
//!
//! Knows nothing about Cursor's formats, the board's rules, hosts or transports.

pub mod clock;
pub mod error;
pub mod paths;
pub mod store;

pub use error::{Error, ErrorCode, Result};
pub use paths::{CursorLocations, Paths};
pub use store::Store;

/// 32 random bytes as hex: a fresh secret or one-time token.
pub fn random_token() -> String {
    let mut buf = [0u8; 32];
    getrandom::fill(&mut buf).expect("the OS random number generator failed");
    buf.iter().map(|b| format!("{b:02x}")).collect()
}
