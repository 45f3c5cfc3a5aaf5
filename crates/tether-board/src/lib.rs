//! The board people and agents share: tasks (claimed atomically on a lease), agent sessions,
//! signals between them (with obligations and wake telemetry), agent runs (and waking an idle
//! chat by one), what Cursor's hooks say about each chat, and task import/export. [`Board`] is the one door
//! hosts use.
//!
//! Depends on the store, the clock and errors (tether-store); never on the history (Cursor
//! readers, index), hosts or transports.

pub mod agents;
pub mod cloud;
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

use std::path::Path;

pub(crate) use tether_store::{clock, error, store};

use crate::error::Result;
use agents::Agent;
use principal::Identity;
use signals::{NewSignal, PendingSummary, Recipient, Sender, Signal, SignalDetail, SignalFilter};
use tasks::{Actor, NewTask, QueryResult, SessionStart, Task, TaskChange, TaskDetail, TaskFilter, TaskQuery};
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

    pub fn create_task(&self, actor: &Actor, new: &NewTask) -> Result<Task> {
        tasks::create(self.db(), actor, new)
    }

    /// Claims `id`, or the best ready task for the role and project given (else the agent's own).
    pub fn claim(
        &self,
        actor: &Actor,
        id: Option<String>,
        role: Option<String>,
        project: Option<String>,
    ) -> Result<Task> {
        tasks::claim_for(self.db(), actor, id, role, project)
    }

    pub fn update_task(&self, actor: &Actor, id: &str, change: &TaskChange) -> Result<Task> {
        tasks::update(self.db(), actor, id, change)
    }

    pub fn query_tasks(&self, actor: &Actor, q: &TaskQuery) -> Result<QueryResult> {
        tasks::query(self.db(), actor, q)
    }

    pub fn task(&self, id: &str) -> Result<TaskDetail> {
        tasks::get(self.db(), id)
    }

    pub fn tasks(&self, f: &TaskFilter) -> Result<Vec<Task>> {
        tasks::list(self.db(), f)
    }

    /// The board as markdown (the MCP resource `tether://tasks`).
    pub fn markdown(&self) -> Result<String> {
        tasks::board_markdown(self.db())
    }

    /// Bumped by every task write, in any process.
    pub fn revision(&self) -> Result<i64> {
        tasks::revision(self.db())
    }

    pub fn start_session(&self, who: &Identity, role: Option<&str>, name: Option<&str>) -> Result<SessionStart> {
        tasks::start_session(self.db(), who, role, name)
    }

    pub fn agents(&self) -> Result<Vec<Agent>> {
        agents::list(self.db())
    }

    pub fn send_signal(&self, from: &Sender, new: &NewSignal) -> Result<Signal> {
        signals::send(self.db(), from, new)
    }

    /// Returns the caller's undrained signals and marks them drained (exactly once).
    pub fn drain_signals(&self, who: &Recipient) -> Result<Vec<Signal>> {
        signals::drain(self.db(), who)
    }

    /// The caller's undrained signals, left undrained.
    pub fn pending_signals(&self, who: &Recipient) -> Result<Vec<Signal>> {
        signals::pending(self.db(), who)
    }

    /// The notice a tool result carries for the caller (recorded as a `piggyback` wake).
    pub fn piggyback(&self, who: &Recipient, mcp_session: Option<&str>) -> Result<PendingSummary> {
        signals::piggyback(self.db(), who, mcp_session)
    }

    pub fn signals(&self, f: &SignalFilter) -> Result<Vec<Signal>> {
        signals::list(self.db(), f)
    }

    pub fn signal(&self, id: &str) -> Result<SignalDetail> {
        signals::get(self.db(), id)
    }

    /// Replies to a signal (to its sender, in its trace), closing its obligation.
    pub fn reply(&self, from: &Sender, id: &str, body: &str) -> Result<Signal> {
        let new = NewSignal { reply_to: Some(id.to_owned()), body: body.to_owned(), ..Default::default() };
        signals::send(self.db(), from, &new)
    }

    /// Bumped by every signal write, in any process.
    pub fn signals_revision(&self) -> Result<i64> {
        signals::revision(self.db())
    }

    /// Turns waking an idle chat by a follow-up run on or off for an agent (a chain of runs).
    pub fn set_wake_by_resume(&self, agent: &str, on: bool) -> Result<Agent> {
        wake::set(self.db(), agent, on)
    }

    /// Queues a follow-up run for every opted-in idle chat with signals waiting; the runs queued.
    pub fn wake_idle_chats(&self, policy: &wake::Policy) -> Result<Vec<runs::Run>> {
        let mut queued = Vec::new();
        for agent in wake::due(self.db(), policy.per_hour)? {
            queued.extend(wake::wake(self.db(), &agent, policy)?);
        }
        Ok(queued)
    }

    /// Agent runs: the queue, a run's life and log, its worktree and placed files.
    pub fn runs(&self) -> runs::Runs<'_> {
        runs::Runs { db: self.db() }
    }

    pub fn export_tasks(&self, format: task_io::ExportFormat) -> Result<String> {
        task_io::export(self.db(), format)
    }

    /// A Taskmaster `tasks.json`, or a Backlog.md folder.
    pub fn import_tasks(&self, actor: &Actor, path: &Path) -> Result<task_io::ImportReport> {
        if path.is_dir() {
            task_io::import_backlog(self.db(), actor, path)
        } else {
            task_io::import_taskmaster(self.db(), actor, path)
        }
    }
}
