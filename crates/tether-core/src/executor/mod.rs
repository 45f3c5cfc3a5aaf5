//! What runs an agent, behind one trait: the Cursor CLI on this machine (`tether-runs`) and
//! Cursor Cloud (`tether-cloud`, through `tether-runs`' adapter) each implement [`Executor`], and
//! the daemon (or a one-shot CLI process) registers them on [`Tether`] at start. A run's
//! lifecycle (`tether-runs`' `life`: begin → drive → end) asks the registered executor of the
//! run's kind to drive it; the operations ask the executors to describe themselves (the doctor,
//! the run form), so no surface stitches an executor's facts in. A later executor (Claude
//! Code, Codex) is a new implementation of this trait and nothing else.
//!
//! Depends on the board's run types and the budgets; never on an executor's crate.

mod api;
mod registry;

pub use api::*;
pub use registry::Executors;
