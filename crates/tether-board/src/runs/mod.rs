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
mod handle;
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

// The door hosts use (`board.runs()`), the types its calls speak and the pure rules (an id's
// spelling, a new run's check); the functions over a database stay the crate's own.
pub use finish::Outcome;
pub use handle::{Placements, Runs, Worktrees};
pub use model::*;
pub use placements::PlacedFile;
pub use plan::check;
pub use queue::{Limits, ORIGIN_FIRST_MS};
pub use recover::Orphan;
pub use worktrees::{Comment, NewComment, WorktreeUse};

pub(crate) use log::*;
pub(crate) use plan::*;
pub(crate) use query::*;
pub(crate) use queue::*;
