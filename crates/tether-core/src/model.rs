//! The vocabulary hosts speak: the models, requests and ids the operations take and return,
//! by area, and nothing that touches a database. A host (the server, the CLI, the desktop app)
//! names these instead of reaching into a domain crate through core's re-exports, so what it may
//! use of the engine is this list, `ops`, `events` and `Tether` (issue 39; `scripts/host-imports`
//! counts what is left).
//!
//! Only types, and the few pure rules a host applies to them (an id's spelling, a project's name
//! from a repository): each line is a name a host already uses.

/// Who is asking, and the agents' identities.
pub mod principal {
    pub use tether_board::principal::{AgentKind, Identity, Principal};
}

/// The board's typed ids (`T-12`, `R-3`, …).
pub mod ids {
    pub use tether_board::ids::{RunId, SignalId, TaskId};
}

pub mod tasks {
    pub use tether_board::task_io::{ExportFormat, ImportReport};
    pub use tether_board::tasks::{NewTask, QueryResult, Status, Task, TaskChange, TaskDetail, TaskFilter, TaskQuery};
}

pub mod signals {
    pub use tether_board::signals::{NewSignal, Ring, Signal, SignalDetail, SignalFilter, Wake, WakePath, WakeResult};
}

pub mod agents {
    pub use tether_board::agents::Agent;
    pub use tether_board::live::{ChatActivity, HookEvent};
}

pub mod runs {
    pub use tether_board::runs::event::RunEvent;
    pub use tether_board::runs::{
        Comment, NewComment, NewRun, Permissions, Run, RunDetail, RunFilter, RunStatus, StoredEvent,
    };
    pub use tether_git::{ChangeKind, Strategy};
}

/// Chats shared with the team (`SH-2`).
pub mod shared {
    pub use tether_board::shared::{SharedChat, SharedSummary, is_shared_id};
}

/// Cursor's chats as the history index keeps them.
pub mod sessions {
    pub use tether_history::cloud::repo_project;
    pub use tether_history::export::Format;
    pub use tether_history::index::{Depth, IndexReport, Progress, no_progress};
    pub use tether_history::model::{Tally, truncate_chars};
    pub use tether_history::sessions::{
        ListQuery, ProjectFilter, SearchHit, SearchQuery, SessionDetail, SessionSummary, ShowOptions, TagCount,
    };
    pub use tether_history::usage::ImportReport;
}

/// Code origin: who wrote which lines.
pub mod trace {
    pub use tether_trace::capture::{Replacement, capture, pack};
    pub use tether_trace::origin::Contributor;
    pub use tether_trace::record::to_jsonl;
    pub use tether_trace::store::{EditKind, TracedRepo, WrittenBy};
}
