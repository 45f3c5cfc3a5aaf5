//! The typed event bus: what happened (a board write, chats indexed, settings saved, an index
//! pass's progress) and what a component is asked to do (stop a run, re-read a cloud run,
//! index again). Operations and components publish; the daemon's components, the GUI's event
//! stream and MCP notifications subscribe.
//!
//! Board writes announce themselves: the store tells the bus of every write's domains right
//! after its commit, and the daemon's store watcher announces what other processes wrote — so
//! one write is one event, whoever made it. A run's live log travels apart ([`RunLog`]): it is
//! many and only its followers want it.

use std::sync::Arc;

use serde::Serialize;
use tokio::sync::broadcast;

use crate::board::runs::{RunStatus, StoredEvent};

/// One event. Those with a `name` go to the GUI's stream (`GET /api/events`, see docs/api.md);
/// the rest are for the daemon's components.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(tag = "event", content = "data", rename_all = "snake_case")]
#[ts(export, export_to = "core.ts")]
pub enum Event {
    /// Indexed chats changed (the watcher, a re-index, a tag edit); `ids: null` means many.
    Sessions { ids: Option<Vec<String>> },
    /// Any task changed, in any process.
    Tasks { rev: i64 },
    /// A signal was sent, drained, answered or rung, in any process.
    Signals { rev: i64 },
    /// A run was queued, held, approved, started, cancelled or ended, in any process.
    Runs { rev: i64 },
    /// An agent's status or surface changed (hooks, a GET stream opened or dropped).
    Agents {},
    /// Index progress and outcome.
    Index(IndexEvent),
    /// The settings were saved, are being applied, or could not be.
    Settings(SettingsEvent),
    /// Account usage was imported (`tether usage import`): the usage views read again.
    Usage { imported: u64 },
    /// A run reached 80 % of a budget (`level: warn`) or went over one (`over`, and it stops).
    Budget { run: String, level: String, message: String },
    /// A run was asked to stop: its runner stops it now (others' runners within a second).
    #[ts(skip)]
    #[serde(skip)]
    RunCancelRequested { run: i64 },
    /// Cursor's webhook says a cloud run changed: its runner reads it now.
    #[ts(skip)]
    #[serde(skip)]
    CloudRunChanged { run: i64 },
    /// Index again (the GUI's re-index): the indexer does.
    #[ts(skip)]
    #[serde(skip)]
    ReindexRequested,
    /// An MCP session drained its signals: its doorbell may ring again.
    #[ts(skip)]
    #[serde(skip)]
    SignalsDrained { session: String },
}

impl Event {
    /// The GUI stream's event name; `None` for events only components hear.
    pub fn name(&self) -> Option<&'static str> {
        Some(match self {
            Event::Sessions { .. } => "sessions",
            Event::Tasks { .. } => "tasks",
            Event::Signals { .. } => "signals",
            Event::Runs { .. } => "runs",
            Event::Agents {} => "agents",
            Event::Index(_) => "index",
            Event::Settings(_) => "settings",
            Event::Usage { .. } => "usage",
            Event::Budget { .. } => "budget",
            Event::RunCancelRequested { .. }
            | Event::CloudRunChanged { .. }
            | Event::ReindexRequested
            | Event::SignalsDrained { .. } => return None,
        })
    }

    /// Every name the GUI stream can send (with `hello` on connect), for docs/api.md's check.
    pub const NAMES: [&'static str; 9] =
        ["sessions", "tasks", "signals", "runs", "agents", "index", "settings", "usage", "budget"];
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct IndexEvent {
    /// `indexing`, `idle` or `paused`.
    pub state: String,
    /// Chats read of those listed, while a pass reads them newest first.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub done: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub total: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub eta_ms: Option<u64>,
    /// At the end of a pass: the index's chats and messages.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub sessions: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub messages: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub error: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct SettingsEvent {
    /// The daemon is about to move to this port (pages load themselves from there).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub moving_to: Option<u16>,
    /// A saved port or Cursor folder is now in use.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub applied: Option<Applied>,
    /// Applying them failed (the daemon keeps what it had).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub error: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct Applied {
    pub port: Option<u16>,
    pub cursor: bool,
}

/// A run's live log: events shown as the runner numbers them (before they are stored), and its
/// status as it changes.
#[derive(Debug, Clone)]
pub enum RunLog {
    Events { run: String, events: Arc<[StoredEvent]> },
    Status { run: String, status: RunStatus },
}

/// Live updates kept for a lagging subscriber of the run log: one that falls further behind skips
/// ahead (it is told, and reads the rest from the store). Batches are bounded in bytes by the
/// runner, so a stalled subscriber holds a few MiB at most.
const RUN_LOG_CAPACITY: usize = 64;
const EVENTS_CAPACITY: usize = 1024;

/// The bus. Cheap to clone; sending with nobody listening is fine (a one-shot CLI process).
#[derive(Debug, Clone)]
pub struct Bus {
    events: broadcast::Sender<Event>,
    runs: broadcast::Sender<RunLog>,
}

impl Default for Bus {
    fn default() -> Self {
        Self { events: broadcast::channel(EVENTS_CAPACITY).0, runs: broadcast::channel(RUN_LOG_CAPACITY).0 }
    }
}

impl Bus {
    pub fn emit(&self, e: Event) {
        let _ = self.events.send(e);
    }

    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.events.subscribe()
    }

    pub fn run_log(&self, u: RunLog) {
        let _ = self.runs.send(u);
    }

    pub fn subscribe_run_log(&self) -> broadcast::Receiver<RunLog> {
        self.runs.subscribe()
    }

    /// The events a board write (or others' writes) makes: one per domain it changed.
    pub fn announce(&self, c: crate::store::Changed) {
        if let Some(rev) = c.tasks {
            self.emit(Event::Tasks { rev });
        }
        if let Some(rev) = c.signals {
            self.emit(Event::Signals { rev });
        }
        if let Some(rev) = c.runs {
            self.emit(Event::Runs { rev });
        }
    }
}
