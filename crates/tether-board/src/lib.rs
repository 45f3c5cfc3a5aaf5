//! The board people and agents share: tasks (claimed atomically on a lease), agent sessions,
//! signals between them (with obligations and wake telemetry), agent runs (and waking an idle
//! chat by one), what Cursor's hooks say about each chat, and task import/export. [`Board`] is the one door
//! hosts use: a handle per area (`board.tasks()`, `.signals()`, `.agents()`, `.chats()`,
//! `.shared()`, `.cloud()`, `.usage()`, `.runs()`), whose methods call the area's functions;
//! those are the crate's own. What stays public beside the door is the vocabulary its calls
//! speak (models, requests, ids) and pure rules (an id's spelling, a repository's name).
//!
//! Depends on the store, the clock and errors (tether-store); never on the history (Cursor
//! readers, index), hosts or transports.

pub mod agents;
pub mod cloud;
pub mod door;
pub mod ids;
pub mod live;
pub mod principal;
pub mod roles;
pub mod runs;
pub mod shared;
/// The run events, where hosts have always found them.
pub use runs::event as stream_json;
pub mod signals;
pub mod task_io;
pub mod tasks;
pub mod usage;
pub mod wake;

pub(crate) use tether_store::{clock, error, store};

use tether_store::sql::Database;

/// Tasks, agents and (live) chat state: what the CLI, MCP tools and the GUI's API call, so each
/// host adds only argument parsing and rendering. Over either engine: this machine's store or a
/// team's database.
#[derive(Clone)]
pub struct Board<'a> {
    engine: Engine<'a>,
}

/// The database a board runs on: borrowed (this machine's store) or shared (a team's pool, which
/// the host may swap for another while this board is in use).
#[derive(Clone)]
pub enum Engine<'a> {
    Borrowed(&'a dyn Database),
    Shared(std::sync::Arc<dyn Database>),
}

impl<'a> std::ops::Deref for Engine<'a> {
    type Target = dyn Database + 'a;
    fn deref(&self) -> &Self::Target {
        match self {
            Engine::Borrowed(d) => *d,
            Engine::Shared(d) => &**d,
        }
    }
}

impl std::fmt::Debug for Board<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Board").finish_non_exhaustive()
    }
}

impl<'a> Board<'a> {
    pub fn new(db: &'a dyn Database) -> Self {
        Self { engine: Engine::Borrowed(db) }
    }

    pub fn on(engine: Engine<'a>) -> Self {
        Self { engine }
    }

    /// The database this board runs on.
    pub fn db(&self) -> &(dyn Database + 'a) {
        &*self.engine
    }

    pub fn tasks(&self) -> door::Tasks<'_> {
        door::Tasks { db: self.db() }
    }

    pub fn signals(&self) -> door::Signals<'_> {
        door::Signals { db: self.db() }
    }

    pub fn agents(&self) -> door::Agents<'_> {
        door::Agents { db: self.db() }
    }

    /// What Cursor's hooks say about each chat.
    pub fn chats(&self) -> door::Chats<'_> {
        door::Chats { db: self.db() }
    }

    pub fn shared(&self) -> door::Shared<'_> {
        door::Shared { db: self.db() }
    }

    pub fn cloud(&self) -> door::Cloud<'_> {
        door::Cloud { db: self.db() }
    }

    /// Spend and budgets.
    pub fn usage(&self) -> door::Spend<'_> {
        door::Spend { db: self.db() }
    }

    /// Agent runs: the queue, a run's life and log, its worktree and placed files.
    pub fn runs(&self) -> runs::Runs<'_> {
        runs::Runs { db: self.db() }
    }
}
