//! Agent runs: the Cursor CLI started by Tether for a prompt or a task (or a Cursor Cloud agent)
//! — the data model, the queue, the typed event log, the workspace files placed for a run (kept so
//! they can always be put back), how a run ends and moves the task it is bound to, and runs a
//! runner that died left behind.
//!
//! Starting processes is not done here: the runner (`tether-runs`) claims queued runs, runs the
//! agent and reports back through these functions. Writes that decide something (create, claim to
//! start, cancel, finish, file placement) are durable transactions; event batches are plain
//! transactions (they survive kill -9, and can be rebuilt from nothing else). Knows nothing about
//! processes, MCP, HTTP or the CLI.
//!
//! Imports run one way: event ← model ← log ← query ← {plan, finish} ← queue, recover;
//! placements stands alone; worktrees ← query.

pub mod event;
mod finish;
mod log;
mod model;
mod placements;
mod plan;
mod query;
mod queue;
mod recover;
#[cfg(test)]
mod tests;
pub mod trust;
mod worktrees;

pub use finish::*;
pub use log::*;
pub use model::*;
pub use placements::*;
pub use plan::*;
pub use query::*;
pub use queue::*;
pub use recover::*;
pub use worktrees::*;
