//! The task board: create, list or show, claim, change, export and import. Every write is one
//! durable transaction that announces itself (see [`crate::events`]); an assignment's signal to
//! the new holder is announced with it.

use serde::Deserialize;

use crate::Tether;
use crate::board::principal::{DEFAULT_LEASE_MS, Principal};
use crate::board::runs::Run;
use crate::board::task_io;
use crate::board::tasks::{NewTask, QueryResult, Status, Task, TaskChange, TaskDetail, TaskQuery};
use crate::error::{Error, Result};

pub fn create(t: &Tether, who: &Principal, new: &NewTask) -> Result<Task> {
    t.board().tasks().create(&who.actor(), new)
}

/// A list (with filters), or one task with its notes and history when the query names an id.
pub fn query(t: &Tether, who: &Principal, q: &TaskQuery) -> Result<QueryResult> {
    t.board().tasks().query(&who.actor(), q)
}

pub fn get(t: &Tether, id: &str) -> Result<TaskDetail> {
    t.board().tasks().get(id)
}

/// The GUI board's listing: a [`TaskQuery`] whose defaults are the board's, not an agent's. The
/// board shows a column for every status, so with no status named (and not only ready ones) it
/// lists every status, and pages of [`BoardQuery::PAGE`]; a named status or limit is kept.
#[derive(Debug, Clone, Deserialize)]
#[serde(from = "TaskQuery")]
pub struct BoardQuery(pub TaskQuery);

impl BoardQuery {
    pub const PAGE: usize = 500;
}

impl From<TaskQuery> for BoardQuery {
    fn from(mut q: TaskQuery) -> Self {
        if q.statuses.is_empty() && !q.ready {
            q.statuses = Status::ALL.iter().map(|s| s.as_str().to_owned()).collect();
        }
        if q.limit == 0 {
            q.limit = Self::PAGE;
        }
        Self(q)
    }
}

impl Default for BoardQuery {
    fn default() -> Self {
        TaskQuery::default().into()
    }
}

/// A claim, as hosts send it.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
pub struct Claim {
    /// The task to claim, e.g. "T-4". Omit to claim the best ready task for your role.
    #[serde(default)]
    pub id: Option<String>,
    /// With no id: prefer tasks for this role (default: the role given to session_start).
    #[serde(default)]
    pub role: Option<String>,
    /// With no id: only tasks of this project (or of none).
    #[serde(default)]
    pub project: Option<String>,
    /// How long the claim holds without activity from you (default 30, at most 1440 minutes).
    #[serde(default)]
    pub lease_minutes: Option<u32>,
}

/// Claims a task atomically (never two holders): the one named, or the best ready one. An
/// agent's claim holds on a lease its activity renews; a person's holds until they let go.
pub fn claim(t: &Tether, who: &Principal, c: Claim) -> Result<Task> {
    let mut actor = who.actor();
    if let (Some(m), Some(_)) = (c.lease_minutes, actor.lease_ms) {
        actor.lease_ms = Some(i64::from(m.clamp(1, 1440)) * 60_000);
    } else if actor.lease_ms.is_some() {
        actor.lease_ms = Some(DEFAULT_LEASE_MS);
    }
    t.board().tasks().claim_for(&actor, c.id, c.role, c.project)
}

/// A change to one task, as hosts send it: the task's id and the change.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
pub struct Update {
    /// The task, e.g. "T-4".
    pub id: String,
    #[serde(flatten)]
    pub change: TaskChange,
}

/// Changes a task. A task another agent holds takes comments only, unless the person forces
/// the change; an agent cannot force.
pub fn update(t: &Tether, who: &Principal, u: &Update) -> Result<Task> {
    if u.change.force && !who.is_person() {
        return Err(Error::NotAllowed(
            "only the person can force a change to a task another agent holds; comment on it, or signal its holder"
                .into(),
        ));
    }
    t.board().tasks().update(&who.actor(), &u.id, &u.change)
}

/// The task a run works on, as the run's own agent may read it (a cloud run's scoped bearer).
pub fn of_run(t: &Tether, run: &Run) -> Result<TaskDetail> {
    get(t, &bound_task(run)?)
}

fn bound_task(run: &Run) -> Result<String> {
    run.task.clone().ok_or_else(|| Error::invalid("task", format!("{} was not started for a task", run.id)))
}

/// A run changing its own task through its scoped bearer: progress (a comment or handoff), a
/// summary, and the statuses its work may reach (`done` only when whoever started it asked for
/// that); nothing else, and no other task.
pub fn update_by_run(t: &Tether, who: &Principal, run: &Run, change: &TaskChange) -> Result<Task> {
    use crate::board::tasks::Status as S;
    let c = change;
    let touches_more = c.title.is_some()
        || c.description.is_some()
        || c.priority.is_some()
        || c.role.is_some()
        || c.project.is_some()
        || !c.add_labels.is_empty()
        || !c.remove_labels.is_empty()
        || !c.add_deps.is_empty()
        || !c.remove_deps.is_empty()
        || c.acceptance.is_some()
        || c.assignee.is_some()
        || c.release
        || c.force;
    if touches_more {
        return Err(Error::NotAllowed(
            "a run may change only the status, summary, comment and handoff of its own task".into(),
        ));
    }
    let allowed = match c.status {
        None | Some(S::InProgress | S::Blocked | S::InReview) => true,
        // Done skips review: only when whoever started the run asked for that.
        Some(S::Done) => run.complete_task,
        Some(S::Todo | S::Cancelled) => false,
    };
    if !allowed {
        let most = if run.complete_task { "done" } else { "in_review" };
        return Err(Error::invalid("status", format!("this run may set in_progress, blocked or {most}")));
    }
    t.board().tasks().update(&who.actor(), &bound_task(run)?, change)
}

/// The board as markdown (the MCP resource `tether://tasks`).
pub fn markdown(t: &Tether) -> Result<String> {
    t.board().tasks().markdown()
}

pub fn export(t: &Tether, format: task_io::ExportFormat) -> Result<String> {
    t.board().tasks().export(format)
}

/// Imports Taskmaster's tasks.json or a Backlog.md folder (again to refresh); the person's.
pub fn import(t: &Tether, who: &Principal, path: &std::path::Path) -> Result<task_io::ImportReport> {
    if !who.is_person() {
        return Err(Error::NotAllowed("importing tasks from files is the person's to do".into()));
    }
    t.board().tasks().import(&who.actor(), path)
}

/// The prompt of a run: the task's text (when bound to one) and the person's words.
pub(crate) fn run_prompt(
    t: &Tether,
    new: &crate::board::runs::NewRun,
) -> Result<(Option<crate::board::tasks::TaskDetail>, String)> {
    let task = new.task.as_deref().map(|id| t.board().tasks().get(id)).transpose()?;
    let task_text = task.as_ref().map(|d| t.board().runs().task_prompt(&d.task.id)).transpose()?;
    let prompt = match (new.prompt.as_deref().map(str::trim).filter(|p| !p.is_empty()), task_text) {
        (Some(p), Some(t)) => format!("{t}\n{p}\n"),
        (Some(p), None) => p.to_owned(),
        (None, Some(t)) => t,
        (None, None) => return Err(Error::invalid("run", "give a prompt, a task, or both")),
    };
    Ok((task, prompt))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board(query: &str) -> TaskQuery {
        let BoardQuery(q) = serde_json::from_str(query).unwrap();
        q
    }

    #[test]
    fn the_board_lists_every_status_in_pages_of_500_unless_told() {
        let every: Vec<String> = Status::ALL.iter().map(|s| s.as_str().to_owned()).collect();
        let q = board("{}");
        assert_eq!((&q.statuses, q.limit), (&every, BoardQuery::PAGE));
        assert_eq!(BoardQuery::default().0.statuses, every);
        let q = board(r#"{"status": ["done"], "limit": 3}"#);
        assert_eq!((q.statuses, q.limit), (vec!["done".to_owned()], 3));
        assert!(board(r#"{"ready": true}"#).statuses.is_empty(), "ready ones are todo ones: no status added");
        // An agent's query keeps the board's rule out: no status named is the open ones there.
        let agent: TaskQuery = serde_json::from_str("{}").unwrap();
        assert!(agent.statuses.is_empty());
    }
}
