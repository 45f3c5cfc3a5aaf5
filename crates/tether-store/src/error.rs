//! Typed errors for the engine, and the stable codes that hosts (CLI, MCP, GUI) branch on.

use std::path::PathBuf;

/// A stable, serialisable error code for callers that branch on the kind of failure.
///
/// Only kinds a caller actually handles differently get a code; everything else is `Internal`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ErrorCode {
    NotFound,
    InvalidInput,
    Conflict,
    Forbidden,
    Busy,
    Internal,
    /// The task's status cannot move that way.
    IllegalTransition,
    /// The dependency would close a cycle.
    DependencyCycle,
    /// Another agent holds the task (its lease has not run out).
    TaskHeld,
    /// The task waits for dependencies that are not done.
    DependenciesOpen,
    /// `claim next` found no claimable task.
    NothingToClaim,
}

impl ErrorCode {
    /// The code's name on the wire (`not_found`, `task_held`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::NotFound => "not_found",
            ErrorCode::InvalidInput => "invalid_input",
            ErrorCode::Conflict => "conflict",
            ErrorCode::Forbidden => "forbidden",
            ErrorCode::Busy => "busy",
            ErrorCode::Internal => "internal",
            ErrorCode::IllegalTransition => "illegal_transition",
            ErrorCode::DependencyCycle => "dependency_cycle",
            ErrorCode::TaskHeld => "task_held",
            ErrorCode::DependenciesOpen => "dependencies_open",
            ErrorCode::NothingToClaim => "nothing_to_claim",
        }
    }
}

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    #[error("no session matches {0:?} (try `tether sessions list` or a search)")]
    SessionNotFound(String),
    #[error("session {0} is marked \"do not index\"; its messages are not stored or served")]
    SessionNotIndexed(String),
    #[error("session {0} is listed but its messages are not indexed yet: Tether is still indexing, try again shortly")]
    SessionPending(String),
    #[error("nickname {nickname:?} is already used by session {session_id}")]
    NicknameTaken { nickname: String, session_id: String },
    #[error("invalid search query {query:?}: {reason}")]
    BadQuery { query: String, reason: String },
    #[error("invalid {what}: {reason}")]
    Invalid { what: &'static str, reason: String },
    #[error("another Tether daemon (pid {pid}) already holds the data dir {}", dir.display())]
    AlreadyRunning { pid: u32, dir: PathBuf },
    #[error("could not determine a home directory; set TETHER_HOME")]
    NoHome,
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
    #[error("database error: {0}")]
    Sql(#[from] rusqlite::Error),
    /// A query that must return a row returned none.
    #[error("database error: the query returned no row")]
    NoRow,
    /// A column read as a type it does not hold.
    #[error("database error: column {index}: {reason}")]
    Column { index: usize, reason: String },
    /// An error from an engine other than this machine's SQLite (the team's PostgreSQL).
    #[error("{0}")]
    Db(DbError),
    #[error("database migration failed: {0}")]
    Migration(#[from] rusqlite_migration::Error),
    #[error("JSON error: {0}")]
    Json(#[from] serde_json::Error),
    #[error("file watcher error: {0}")]
    Watch(#[from] notify::Error),
    #[error("{0}")]
    Keyring(String),
    #[error("unknown token {0:?}")]
    Unauthorized(&'static str),
    #[error("{} is not valid JSON ({reason}); fix or move it, Tether never overwrites it", path.display())]
    ConfigInvalid { path: PathBuf, reason: String },
    #[error(
        "{} is inside a git work tree and not ignored, so the token would be committed; add it to .gitignore, \
         or pass --token-env to write ${{env:TETHER_TOKEN}} instead of the token", .0.display()
    )]
    TokenWouldBeCommitted(PathBuf),
    #[error("no task {0:?} (task ids look like T-12; see `tether task list`)")]
    TaskNotFound(String),
    #[error("no agent {0:?} (see `tether agents list`)")]
    AgentNotFound(String),
    #[error("the agent name {0:?} is taken; pick another or leave it out for a generated one")]
    AgentNameTaken(String),
    #[error("{id} is held by {holder}; wait for them to release it or for their lease to run out")]
    TaskHeld { id: String, holder: String },
    #[error("{id} cannot go from {from} to {to}: {hint}")]
    IllegalTransition { id: String, from: &'static str, to: &'static str, hint: &'static str },
    #[error("that dependency would make a cycle: {}", path.join(" → "))]
    DependencyCycle { path: Vec<String> },
    #[error("{id} waits for {} to be done first", open.join(", "))]
    DependenciesOpen { id: String, open: Vec<String> },
    #[error("nothing to claim: {0}")]
    NothingToClaim(String),
    #[error("no signal {0:?} (signal ids look like S-12; see `tether signals list`)")]
    SignalNotFound(String),
    #[error(
        "no agent or live role {to:?} to send to; address an agent's name, a role with live agents, or `human`{}",
        if known.is_empty() { String::new() } else { format!(" (live agents: {})", known.join(", ")) }
    )]
    UnknownRecipient { to: String, known: Vec<String> },
    #[error("no run {0:?} (run ids look like R-3; see `tether runs list`)")]
    RunNotFound(String),
    #[error("{id} already ended ({status})")]
    RunEnded { id: String, status: &'static str },
    #[error("{0}")]
    AgentMissing(String),
    #[error("{} is outside the folders runs may use ({}); add it with `tether settings` (runs.roots) or pick a project Tether has seen", path.display(), roots.join(", "))]
    OutsideRoots { path: PathBuf, roots: Vec<String> },
    /// A workspace a run cannot use safely (a link where Tether would place or restore a file,
    /// a folder swapped after it was checked).
    #[error("{0}")]
    UnsafeWorkspace(String),
    /// The principal may not do this (an agent forcing a change, a remote agent's request).
    #[error("{0}")]
    NotAllowed(String),
    /// Something is already under way (an index pass).
    #[error("{0}")]
    Busy(String),
    #[error("{0}")]
    NotFound(String),
    /// Already done (a webhook delivery seen before); a merge that would conflict; a checkout
    /// that is not clean enough.
    #[error("{0}")]
    Conflict(String),
    /// Git failed where it should not have; what it said.
    #[error("{0}")]
    Git(String),
}

impl Error {
    pub fn code(&self) -> ErrorCode {
        match self {
            Error::SessionNotFound(_)
            | Error::TaskNotFound(_)
            | Error::AgentNotFound(_)
            | Error::SignalNotFound(_)
            | Error::UnknownRecipient { .. }
            | Error::RunNotFound(_)
            | Error::AgentMissing(_) => ErrorCode::NotFound,
            Error::RunEnded { .. } => ErrorCode::Conflict,
            Error::OutsideRoots { .. } | Error::UnsafeWorkspace(_) | Error::NotAllowed(_) => ErrorCode::Forbidden,
            Error::AgentNameTaken(_) => ErrorCode::Conflict,
            Error::TaskHeld { .. } => ErrorCode::TaskHeld,
            Error::IllegalTransition { .. } => ErrorCode::IllegalTransition,
            Error::DependencyCycle { .. } => ErrorCode::DependencyCycle,
            Error::DependenciesOpen { .. } => ErrorCode::DependenciesOpen,
            Error::NothingToClaim(_) => ErrorCode::NothingToClaim,
            Error::SessionNotIndexed(_) => ErrorCode::Forbidden,
            Error::SessionPending(_) | Error::Busy(_) => ErrorCode::Busy,
            Error::NotFound(_) => ErrorCode::NotFound,
            Error::Conflict(_) => ErrorCode::Conflict,
            Error::NicknameTaken { .. } | Error::AlreadyRunning { .. } => ErrorCode::Conflict,
            Error::BadQuery { .. } | Error::Invalid { .. } | Error::ConfigInvalid { .. } => ErrorCode::InvalidInput,
            Error::TokenWouldBeCommitted(_) => ErrorCode::Forbidden,
            Error::Unauthorized(_) => ErrorCode::Forbidden,
            Error::Sql(rusqlite::Error::SqliteFailure(e, _)) if e.code == rusqlite::ErrorCode::DatabaseBusy => {
                ErrorCode::Busy
            }
            Error::Db(DbError { kind: DbErrorKind::Unavailable | DbErrorKind::Contended, .. }) => ErrorCode::Busy,
            Error::Db(DbError { kind: DbErrorKind::Constraint, .. }) => ErrorCode::Conflict,
            _ => ErrorCode::Internal,
        }
    }

    /// The database could not be reached (a team's, gone for a while): said once by whoever
    /// watches it, not by every loop that met it.
    pub fn is_unavailable(&self) -> bool {
        matches!(self, Error::Db(DbError { kind: DbErrorKind::Unavailable, .. }))
    }

    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io { context: context.into(), source }
    }

    pub fn invalid(what: &'static str, reason: impl Into<String>) -> Self {
        Error::Invalid { what, reason: reason.into() }
    }
}

/// What another engine said went wrong, in terms the board branches on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DbError {
    pub kind: DbErrorKind,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DbErrorKind {
    /// The engine cannot be reached or the connection was lost: try again later.
    Unavailable,
    /// Two transactions met (serialization failure, deadlock): the write can be retried.
    Contended,
    /// A unique key or another constraint refused the write.
    Constraint,
    Other,
}

impl std::fmt::Display for DbError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
