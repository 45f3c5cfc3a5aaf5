//! A task's data model: its statuses and priorities, what hosts send (a new task, a change, a
//! query) and what the board keeps. Types and their parsing only: no SQL.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::agents;
use crate::error::{Error, Result};

/// The most tasks one query lists; more is an error, never a silent cut.
pub const MAX_LIST: usize = 500;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[ts(export, export_to = "board.ts")]
pub enum Status {
    #[default]
    Todo,
    InProgress,
    Blocked,
    InReview,
    Done,
    Cancelled,
}

impl Status {
    pub const ALL: [Status; 6] =
        [Status::Todo, Status::InProgress, Status::Blocked, Status::InReview, Status::Done, Status::Cancelled];

    pub fn as_str(self) -> &'static str {
        match self {
            Status::Todo => "todo",
            Status::InProgress => "in_progress",
            Status::Blocked => "blocked",
            Status::InReview => "in_review",
            Status::Done => "done",
            Status::Cancelled => "cancelled",
        }
    }

    /// Finished: counts as resolved for dependants.
    pub fn is_closed(self) -> bool {
        matches!(self, Status::Done | Status::Cancelled)
    }

    /// The workflow: anything not listed here is an illegal transition.
    pub fn can_become(self, to: Status) -> bool {
        use Status::*;
        match (self, to) {
            (a, b) if a == b => false,
            (Todo, InProgress | Blocked | Done | Cancelled) => true,
            (InProgress, Todo | Blocked | InReview | Done | Cancelled) => true,
            (Blocked, Todo | InProgress | Cancelled) => true,
            (InReview, Todo | InProgress | Done | Cancelled) => true,
            (Done | Cancelled, Todo) => true,
            _ => false,
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Status {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        let k = s.trim().to_ascii_lowercase().replace(['-', ' '], "_");
        Ok(match k.as_str() {
            "todo" | "to_do" | "open" | "pending" => Status::Todo,
            "in_progress" | "doing" | "wip" => Status::InProgress,
            "blocked" => Status::Blocked,
            "in_review" | "review" => Status::InReview,
            "done" | "complete" | "completed" => Status::Done,
            "cancelled" | "canceled" => Status::Cancelled,
            _ => {
                return Err(Error::invalid(
                    "status",
                    format!("{s:?}; use one of todo, in_progress, blocked, in_review, done, cancelled"),
                ));
            }
        })
    }
}

/// 0 critical, 1 high, 2 medium (default), 3 low.
pub fn parse_priority(s: &str) -> Result<i64> {
    Ok(match s.trim().to_ascii_lowercase().as_str() {
        "critical" | "urgent" | "p0" | "0" => 0,
        "high" | "p1" | "1" => 1,
        "medium" | "normal" | "p2" | "2" => 2,
        "low" | "p3" | "3" => 3,
        _ => return Err(Error::invalid("priority", format!("{s:?}; use critical, high, medium or low"))),
    })
}

pub fn priority_name(p: i64) -> &'static str {
    ["critical", "high", "medium", "low"].get(p.clamp(0, 3) as usize).copied().unwrap_or("medium")
}

/// `T-12`, `t-12`, `#12` or `12` → 12.
pub fn parse_id(s: &str) -> Result<i64> {
    crate::ids::TaskId::parse(s).map(crate::ids::TaskId::num)
}

pub fn format_id(num: i64) -> String {
    crate::ids::TaskId::new(num).to_string()
}

#[derive(Debug, Clone, Serialize, PartialEq, ts_rs::TS)]
#[ts(export, export_to = "board.ts")]
pub struct Task {
    pub id: String,
    pub title: String,
    pub description: String,
    pub status: Status,
    pub priority: &'static str,
    pub role: Option<String>,
    pub project: Option<String>,
    pub labels: Vec<String>,
    pub depends_on: Vec<String>,
    /// Dependencies not yet done or cancelled: while any remain, the task cannot be claimed.
    pub blocked_by: Vec<String>,
    pub acceptance: Vec<String>,
    pub assignee: Option<String>,
    pub lease_until: Option<String>,
    /// The holder's lease ran out: anyone may claim the task.
    pub lease_expired: bool,
    pub summary: Option<String>,
    pub external_ref: Option<String>,
    pub created_by: String,
    pub created_at: String,
    pub updated_at: String,
    pub version: i64,
}

#[derive(Debug, Clone, Serialize, PartialEq, ts_rs::TS)]
#[ts(export, export_to = "board.ts")]
pub struct Event {
    pub at: String,
    pub actor: String,
    pub kind: String,
    pub detail: serde_json::Value,
}

#[derive(Debug, Clone, Serialize, PartialEq, ts_rs::TS)]
#[ts(export, export_to = "board.ts")]
pub struct TaskDetail {
    #[serde(flatten)]
    pub task: Task,
    /// Comments and handoff notes, oldest first.
    pub notes: Vec<Event>,
    pub history: Vec<Event>,
    /// Its budget over all its runs (`tether usage budget`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional, as = "Option<String>")]
    pub budget: Option<crate::usage::Budget>,
    /// Every token its runs spent (those that reported figures); absent when none did.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub spent_tokens: Option<i64>,
}

/// A task to create. Its docs are also the MCP tool's argument descriptions.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema, ts_rs::TS)]
#[ts(export, export_to = "board.ts", optional_fields = nullable)]
pub struct NewTask {
    pub title: String,
    /// Markdown.
    #[serde(default)]
    #[ts(optional, as = "Option<String>")]
    pub description: String,
    /// critical, high, medium (default) or low.
    #[serde(default)]
    pub priority: Option<String>,
    /// The role that should do it (claim-next matches it).
    #[serde(default)]
    pub role: Option<String>,
    /// A project path the task belongs to.
    #[serde(default)]
    pub project: Option<String>,
    #[serde(default)]
    #[ts(optional, as = "Option<Vec<String>>")]
    pub labels: Vec<String>,
    /// Ids of tasks that must be done first, e.g. ["T-3"].
    #[serde(default)]
    #[ts(optional, as = "Option<Vec<String>>")]
    pub depends_on: Vec<String>,
    /// How to tell it is done.
    #[serde(default)]
    #[ts(optional, as = "Option<Vec<String>>")]
    pub acceptance: Vec<String>,
    /// todo (default) or blocked.
    #[serde(default)]
    pub status: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub struct TaskFilter {
    pub statuses: Vec<Status>,
    /// An agent's name, a person, or `none` for unassigned.
    pub assignee: Option<String>,
    pub role: Option<String>,
    pub project: Option<String>,
    pub label: Option<String>,
    /// Only tasks that could be claimed now.
    pub ready: bool,
    pub limit: usize,
}

/// A change to a task, as every host sends it (the GUI's PATCH body, the MCP tool's arguments,
/// the CLI's flags): absent fields are left as they are. Its docs are also the MCP tool's argument
/// descriptions.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema, ts_rs::TS)]
#[ts(export, export_to = "board.ts")]
pub struct TaskChange {
    /// New status: todo, in_progress, blocked, in_review, done, cancelled.
    #[serde(default, deserialize_with = "tether_store::de::parsed")]
    #[schemars(with = "Option<String>")]
    #[ts(optional, as = "Option<Status>")]
    pub status: Option<Status>,
    #[serde(default)]
    #[ts(optional)]
    pub title: Option<String>,
    /// Markdown.
    #[serde(default)]
    #[ts(optional)]
    pub description: Option<String>,
    /// critical, high, medium or low.
    #[serde(default)]
    #[ts(optional)]
    pub priority: Option<String>,
    /// The role that should do it; `null` or empty clears it.
    #[serde(default, deserialize_with = "tether_store::de::some_or_null")]
    #[ts(optional, type = "string | null")]
    pub role: Option<Option<String>>,
    /// The project it belongs to; `null` or empty clears it.
    #[serde(default, deserialize_with = "tether_store::de::some_or_null")]
    #[ts(optional, type = "string | null")]
    pub project: Option<Option<String>>,
    #[serde(default)]
    #[ts(optional, as = "Option<Vec<String>>")]
    pub add_labels: Vec<String>,
    #[serde(default)]
    #[ts(optional, as = "Option<Vec<String>>")]
    pub remove_labels: Vec<String>,
    /// Tasks that must be done first, e.g. ["T-3"].
    #[serde(default, rename = "add_depends_on")]
    #[ts(optional, rename = "add_depends_on", as = "Option<Vec<String>>")]
    pub add_deps: Vec<String>,
    #[serde(default, rename = "remove_depends_on")]
    #[ts(optional, rename = "remove_depends_on", as = "Option<Vec<String>>")]
    pub remove_deps: Vec<String>,
    /// Replaces the acceptance criteria.
    #[serde(default)]
    #[ts(optional)]
    pub acceptance: Option<Vec<String>>,
    /// Give it to an agent (by name) or a person; `null` or an empty string unassigns (an
    /// in-progress task then goes back to todo, free to claim).
    #[serde(default, deserialize_with = "tether_store::de::some_or_null")]
    #[ts(optional, type = "string | null")]
    pub assignee: Option<Option<String>>,
    /// A note on the task.
    #[serde(default)]
    #[ts(optional)]
    pub comment: Option<String>,
    /// The comment is a handoff note for whoever picks the task up next.
    #[serde(default)]
    #[ts(optional, as = "Option<bool>")]
    pub handoff: bool,
    /// What was done: completes the task (status done unless another status is given).
    #[serde(default)]
    #[ts(optional)]
    pub summary: Option<String>,
    /// Give the task back (unassigned, todo), e.g. with a handoff comment.
    #[serde(default)]
    #[ts(optional, as = "Option<bool>")]
    pub release: bool,
    /// Act on a task another agent holds (the person only).
    #[serde(default)]
    #[ts(optional, as = "Option<bool>")]
    pub force: bool,
}

/// Which task to claim.
#[derive(Debug, Clone)]
pub enum ClaimTarget {
    Id(String),
    /// The best claimable task for this role and project (either may be unset).
    Next {
        role: Option<String>,
        project: Option<String>,
    },
}

/// What an agent learns when it starts (or resumes) its session.
#[derive(Debug, Clone, Serialize)]
pub struct SessionStart {
    pub agent: agents::Agent,
    /// Tasks it holds now (a resumed chat picks up where it was).
    pub holding: Vec<Task>,
    /// How many tasks could be claimed now for its role.
    pub ready: usize,
    pub instructions: &'static str,
}

/// A listing request as hosts receive it: statuses as text, `me` as an assignee. Its docs are
/// also the MCP tool's argument descriptions. Its defaults: with no status named, the open
/// tasks; a missing or zero `limit` is [`TaskQuery::PAGE`]. A surface that lists otherwise says
/// so in the request (the CLI's `--limit`, the GUI's `ops::tasks::BoardQuery`).
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema, ts_rs::TS)]
#[ts(export, export_to = "board.ts", optional_fields)]
pub struct TaskQuery {
    /// One task with its notes, handoffs and history (the other fields are ignored).
    #[serde(default)]
    pub id: Option<String>,
    /// Statuses to include: todo, in_progress, blocked, in_review, done, cancelled (default: every open one).
    // A query string may repeat it or separate them with commas (the op splits them).
    #[serde(default, rename = "status")]
    #[ts(optional, as = "Option<Vec<Status>>")]
    pub statuses: Vec<String>,
    /// `me`, an agent or person name, or `none` for unassigned.
    #[serde(default)]
    pub assignee: Option<String>,
    #[serde(default)]
    pub role: Option<String>,
    #[serde(default)]
    pub project: Option<String>,
    #[serde(default)]
    pub label: Option<String>,
    /// Only tasks that can be claimed now.
    #[serde(default, deserialize_with = "flag")]
    #[schemars(with = "bool")]
    #[ts(optional, as = "Option<bool>")]
    pub ready: bool,
    /// At most this many (default 50).
    #[serde(default)]
    #[ts(optional, as = "Option<usize>")]
    pub limit: usize,
}

impl TaskQuery {
    /// How many tasks a listing answers when it does not say.
    pub const PAGE: usize = 50;
}

/// A yes/no that a JSON caller sends as a boolean and a query string as `1`, `true` or `yes`
/// (anything else is no).
fn flag<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<bool, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Flag {
        Bool(bool),
        Text(String),
    }
    Ok(match Flag::deserialize(d)? {
        Flag::Bool(b) => b,
        Flag::Text(s) => matches!(s.as_str(), "1" | "true" | "yes"),
    })
}

/// A listing's answer: one task whole (`id` given) or `{tasks}`.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[serde(untagged)]
#[ts(export, export_to = "board.ts")]
pub enum QueryResult {
    One(Box<TaskDetail>),
    Many { tasks: Vec<Task> },
}
