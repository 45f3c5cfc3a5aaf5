//! Code origin: which chat wrote which lines.
//!
//! [`capture`] turns an edit (Cursor's `afterFileEdit` / `afterTabFileEdit` payload, a run's
//! tool call) into what is kept: the ranges it wrote, with Agent Trace's content hashes, and the
//! hashes of the lines it wrote and replaced. [`store`] keeps them in our SQLite. [`origin`] is
//! the rule that decides a line's origin when someone asks, from those and git's blame (which
//! the core runs); [`attribute`] applies it to a file, asking git's answers of a [`Sources`]
//! the caller implements. [`record`] is the Agent Trace record written for export.
//!
//! Depends on the store only: never on history, the board, git or any host. The core joins a
//! line's edit to its chat.

pub mod attribute;
pub mod capture;
pub mod lines;
pub mod origin;
pub mod record;
pub mod store;

pub use attribute::{Change, File, Sources, attribute};
pub use capture::{Captured, Range, Replacement, capture};
pub use origin::Contributor;
pub use store::{Edit, EditKind, NewEdit};
