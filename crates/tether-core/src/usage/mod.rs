//! Usage and budgets: the price table (shipped as data with its date and source, overridable in
//! settings), what a run may still spend (its own budget, its task's, its role's today and
//! today's for all runs) and whether a figure crosses one, and the usage report that joins the
//! runs' figures (board) with the chats' and the account's (history).
//!
//! A figure that is not known is shown as not known: a chat with no recorded tokens is "not
//! recorded", never zero; a cost with no price is left out and its tokens counted as unpriced;
//! every cost Tether computes is an estimate, and says so, unless Cursor gave it.
//!
//! Depends on the board's and the history's usage rows and the settings; no hosts, no processes.

mod budgets;
mod caps;
pub mod notice;
mod prices;
pub mod report;

pub use budgets::{BudgetWatch, Budgets};
pub use caps::*;
pub use prices::*;
