//! Team membership, the engine side of `tether team`: what this data dir joined ([`joined`]:
//! `team.json`, the instance id), reaching the team's database ([`connect`]: each way of failing
//! as the error a caller branches on, the pool stamped with this machine's name), the team's
//! pool as the board's [`board::TeamBoard`] (migrated on first use, announcing its writes once
//! through `tether_store::announce`), and a machine's presence ([`presence`]: checking in, the
//! heartbeat that ends a silent runner's runs, who was seen).
//!
//! Below the core, beside the board: depends on tether-store, tether-pg and tether-board (a lost
//! runner's runs end by the board's rule), never on the core, the history, hosts or transports.
//! It is not `tether_pg::team` because that crate must not know the board's rules. Secrets are
//! given to it (the core keeps them in the keyring); it stores none. Who may join or leave is
//! the operation's to decide (`tether_core::ops::team`), not this crate's.

pub mod board;
pub mod connect;
pub mod joined;
pub mod presence;

pub use board::TeamBoard;
pub use joined::Joined;
pub use presence::{heartbeat_every, runner_lease};
