//! Tasks: create, list, claim (atomically, as an expiring lease), update, comment and hand off,
//! with an append-only history of every change and its actor.
//!
//! Every write is one `BEGIN IMMEDIATE` transaction ([`Store::durable`]): checks and writes cannot
//! interleave across threads or processes, so exactly one of any number of claimers wins and a
//! failed call leaves nothing half-written. Knows nothing about MCP, HTTP or the CLI.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::str::FromStr;

use rusqlite::{OptionalExtension, Transaction, params};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::agents;
pub use crate::principal::{Actor, DEFAULT_LEASE_MS, Identity, actor_label};
use crate::principal::actor_name;
use crate::signals;
use crate::clock::iso;
use crate::clock::now_ms;
use crate::error::{Error, Result};
use crate::store::Store;

/// How long an agent's claim holds without activity, unless the caller says otherwise.
/// The most tasks one query lists; more is an error, never a silent cut.
pub const MAX_LIST: usize = 500;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
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

#[derive(Debug, Clone, Serialize, PartialEq)]
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

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Event {
    pub at: String,
    pub actor: String,
    pub kind: String,
    pub detail: serde_json::Value,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TaskDetail {
    #[serde(flatten)]
    pub task: Task,
    /// Comments and handoff notes, oldest first.
    pub notes: Vec<Event>,
    pub history: Vec<Event>,
}

/// A task to create. Its docs are also the MCP tool's argument descriptions.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
pub struct NewTask {
    pub title: String,
    /// Markdown.
    #[serde(default)]
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
    pub labels: Vec<String>,
    /// Ids of tasks that must be done first, e.g. ["T-3"].
    #[serde(default)]
    pub depends_on: Vec<String>,
    /// How to tell it is done.
    #[serde(default)]
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

#[derive(Debug, Clone, Default)]
pub struct TaskChange {
    pub status: Option<Status>,
    pub title: Option<String>,
    pub description: Option<String>,
    pub priority: Option<String>,
    pub role: Option<Option<String>>,
    pub project: Option<Option<String>>,
    pub add_labels: Vec<String>,
    pub remove_labels: Vec<String>,
    pub add_deps: Vec<String>,
    pub remove_deps: Vec<String>,
    pub acceptance: Option<Vec<String>>,
    /// `Some(None)` unassigns; `Some(Some(name))` assigns to an agent (by name) or a person.
    pub assignee: Option<Option<String>>,
    pub comment: Option<String>,
    /// The comment is a handoff note (for the next agent).
    pub handoff: bool,
    /// What was done; implies `done` when no status is given.
    pub summary: Option<String>,
    /// Give the task back: unassigned, back to `todo`.
    pub release: bool,
    /// Act on a task another agent holds (people at the CLI/GUI; never the default for agents).
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


fn bump_rev(txn: &Transaction<'_>) -> Result<()> {
    txn.execute("UPDATE counters SET value = value + 1 WHERE name = 'tasks_rev'", [])?;
    Ok(())
}

/// Changes whenever any task changes, in any process.
pub fn revision(store: &Store) -> Result<i64> {
    store.read(|c| Ok(c.query_row("SELECT value FROM counters WHERE name = 'tasks_rev'", [], |r| r.get(0))?))
}

pub(crate) fn event(txn: &Transaction<'_>, num: i64, actor: &str, kind: &str, detail: serde_json::Value) -> Result<()> {
    txn.execute(
        "INSERT INTO task_events(task, at, actor, kind, detail) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![num, now_ms(), actor, kind, detail.to_string()],
    )?;
    Ok(())
}


fn exists(txn: &Transaction<'_>, num: i64) -> Result<bool> {
    Ok(txn.query_row("SELECT 1 FROM tasks WHERE num = ?1", [num], |_| Ok(())).optional()?.is_some())
}

pub(crate) fn clean_list(items: &[String], what: &'static str) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for i in items {
        let t = i.trim();
        if t.chars().any(char::is_control) {
            return Err(Error::invalid(what, format!("{t:?} contains control characters")));
        }
        if !t.is_empty() && !out.iter().any(|o| o == t) {
            out.push(t.to_owned());
        }
    }
    Ok(out)
}

pub(crate) fn clean_title(t: &str) -> Result<String> {
    let t = t.trim();
    if t.is_empty() {
        return Err(Error::invalid("title", "a task needs a title"));
    }
    if t.len() > 500 {
        return Err(Error::invalid("title", "keep it under 500 characters; put details in the description"));
    }
    Ok(t.to_owned())
}

/// Adds dependencies after checking they exist and close no cycle.
pub(crate) fn add_deps(txn: &Transaction<'_>, num: i64, deps: &[String]) -> Result<Vec<i64>> {
    let mut added = Vec::new();
    for d in deps {
        let dep = parse_id(d)?;
        if !exists(txn, dep)? {
            return Err(Error::TaskNotFound(d.clone()));
        }
        if dep == num {
            return Err(Error::DependencyCycle { path: vec![format_id(num), format_id(num)] });
        }
        if let Some(mut path) = dep_path(txn, dep, num)? {
            path.insert(0, num);
            return Err(Error::DependencyCycle { path: path.into_iter().map(format_id).collect() });
        }
        if txn.execute("INSERT OR IGNORE INTO task_deps(task, depends_on) VALUES (?1, ?2)", params![num, dep])? > 0 {
            added.push(dep);
        }
    }
    Ok(added)
}

/// A chain of dependencies from `from` to `to`, if one exists.
fn dep_path(txn: &Transaction<'_>, from: i64, to: i64) -> Result<Option<Vec<i64>>> {
    let mut stmt = txn.prepare_cached("SELECT depends_on FROM task_deps WHERE task = ?1")?;
    let mut parent: HashMap<i64, i64> = HashMap::new();
    let mut seen = HashSet::from([from]);
    let mut queue = std::collections::VecDeque::from([from]);
    while let Some(n) = queue.pop_front() {
        if n == to {
            let mut path = vec![to];
            let mut cur = to;
            while let Some(p) = parent.get(&cur) {
                path.push(*p);
                cur = *p;
            }
            path.reverse();
            return Ok(Some(path));
        }
        let next: Vec<i64> = stmt.query_map([n], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
        for m in next {
            if seen.insert(m) {
                parent.insert(m, n);
                queue.push_back(m);
            }
        }
    }
    Ok(None)
}

pub fn create(store: &Store, actor: &Actor, new: &NewTask) -> Result<Task> {
    let title = clean_title(&new.title)?;
    let priority = new.priority.as_deref().map(parse_priority).transpose()?.unwrap_or(2);
    let status = new.status.as_deref().map(Status::from_str).transpose()?.unwrap_or(Status::Todo);
    if !matches!(status, Status::Todo | Status::Blocked) {
        return Err(Error::invalid("status", "a new task starts as todo or blocked; claim it to start work"));
    }
    let labels = clean_list(&new.labels, "label")?;
    let acceptance = clean_list(&new.acceptance, "acceptance criterion")?;
    let num = store.durable(|txn| {
        let (_, who) = actor_name(txn, &actor.who)?;
        let num = insert_in(
            txn,
            &who,
            &Insert { title: &title, new, status, priority, labels: &labels, acceptance: &acceptance },
        )?;
        add_deps(txn, num, &new.depends_on)?;
        Ok(num)
    })?;
    get(store, &format_id(num)).map(|d| d.task)
}

/// A validated new task, for [`insert_in`].
pub(crate) struct Insert<'a> {
    pub title: &'a str,
    pub new: &'a NewTask,
    pub status: Status,
    pub priority: i64,
    pub labels: &'a [String],
    pub acceptance: &'a [String],
}

/// Inserts a task with the next number (dependencies are the caller's job), inside `txn`.
pub(crate) fn insert_in(txn: &Transaction<'_>, who: &str, i: &Insert<'_>) -> Result<i64> {
    let num: i64 =
        txn.query_row("UPDATE counters SET value = value + 1 WHERE name = 'task_num' RETURNING value", [], |r| {
            r.get(0)
        })?;
    let now = now_ms();
    let trimmed = |o: &Option<String>| o.as_deref().map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned);
    txn.execute(
        "INSERT INTO tasks(num, title, description, status, priority, role, project, acceptance, created_by, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?10)",
        params![
            num,
            i.title,
            i.new.description.trim(),
            i.status.as_str(),
            i.priority,
            trimmed(&i.new.role),
            trimmed(&i.new.project),
            serde_json::to_string(i.acceptance)?,
            who,
            now
        ],
    )?;
    for l in i.labels {
        txn.execute("INSERT OR IGNORE INTO task_labels(task, label) VALUES (?1, ?2)", params![num, l])?;
    }
    event(txn, num, who, "created", json!({"title": i.title, "status": i.status}))?;
    bump_rev(txn)?;
    Ok(num)
}

/// Claims a task for the actor: it becomes `in_progress`, assigned to them, with a lease.
pub fn claim(store: &Store, actor: &Actor, target: &ClaimTarget) -> Result<Task> {
    let num = store.durable(|txn| {
        let (agent_id, who) = actor_name(txn, &actor.who)?;
        let now = now_ms();
        let num = match target {
            ClaimTarget::Id(id) => {
                let num = parse_id(id)?;
                let Holding { status, assignee, holder, lease } =
                    holding(txn, num)?.ok_or_else(|| Error::TaskNotFound(id.clone()))?;
                let expired = lease.is_some_and(|l| l < now);
                match status {
                    Status::Todo => {}
                    Status::InProgress if holder.as_deref() == Some(agent_id.as_str()) => {}
                    Status::InProgress if expired => {}
                    Status::InProgress => {
                        return Err(Error::TaskHeld { id: format_id(num), holder: assignee.unwrap_or_default() });
                    }
                    other => {
                        return Err(Error::IllegalTransition {
                            id: format_id(num),
                            from: other.as_str(),
                            to: "in_progress",
                            hint: "only todo tasks (or ones whose holder's lease ran out) can be claimed",
                        });
                    }
                }
                let open = open_deps(txn, num)?;
                if !open.is_empty() {
                    return Err(Error::DependenciesOpen { id: format_id(num), open });
                }
                num
            }
            ClaimTarget::Next { role, project } => next_claimable(txn, role.as_deref(), project.as_deref(), now)?
                .ok_or_else(|| {
                    Error::NothingToClaim(match (role, project) {
                        (Some(r), _) => format!("no todo task for role {r:?} has all its dependencies done"),
                        _ => "no todo task has all its dependencies done".to_owned(),
                    })
                })?,
        };
        let (prev_holder, prev_lease): (Option<String>, Option<i64>) =
            txn.query_row("SELECT assignee, lease_until FROM tasks WHERE num = ?1", [num], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })?;
        if let (Some(h), Some(l)) = (&prev_holder, prev_lease)
            && l < now
            && h != &who
        {
            event(txn, num, &who, "lease_expired", json!({"holder": h, "expired_at": iso(l)}))?;
        }
        let lease = actor.lease_ms.map(|ms| now + ms);
        // The guard repeats the checks in SQL: a claim can only ever move a free task.
        let changed = txn.execute(
            "UPDATE tasks SET status = 'in_progress', assignee = ?2, assignee_agent = ?3, lease_until = ?4,
                 updated_at = ?5, version = version + 1
             WHERE num = ?1 AND (status = 'todo' OR (status = 'in_progress'
                 AND (assignee_agent = ?3 OR (lease_until IS NOT NULL AND lease_until < ?5))))",
            params![num, who, agent_id, lease, now],
        )?;
        if changed != 1 {
            return Err(Error::TaskHeld { id: format_id(num), holder: prev_holder.unwrap_or_default() });
        }
        event(txn, num, &who, "claimed", json!({"lease_until": lease.map(iso)}))?;
        bump_rev(txn)?;
        Ok(num)
    })?;
    get(store, &format_id(num)).map(|d| d.task)
}

/// Who holds a task and until when.
struct Holding {
    status: Status,
    assignee: Option<String>,
    /// The holding agent's id.
    holder: Option<String>,
    lease: Option<i64>,
}

fn holding(txn: &Transaction<'_>, num: i64) -> Result<Option<Holding>> {
    let row = txn
        .query_row("SELECT status, assignee, assignee_agent, lease_until FROM tasks WHERE num = ?1", [num], |r| {
            Ok((r.get::<_, String>(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })
        .optional()?;
    row.map(|(status, assignee, holder, lease)| {
        Ok(Holding { status: Status::from_str(&status)?, assignee, holder, lease })
    })
    .transpose()
}

fn open_deps(txn: &Transaction<'_>, num: i64) -> Result<Vec<String>> {
    let mut stmt = txn.prepare_cached(
        "SELECT d.depends_on FROM task_deps d JOIN tasks t ON t.num = d.depends_on
         WHERE d.task = ?1 AND t.status NOT IN ('done', 'cancelled') ORDER BY d.depends_on",
    )?;
    let v: Vec<i64> = stmt.query_map([num], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
    Ok(v.into_iter().map(format_id).collect())
}

/// Best first: highest priority, then tasks meant for this role over role-less ones, then oldest.
fn next_claimable(txn: &Transaction<'_>, role: Option<&str>, project: Option<&str>, now: i64) -> Result<Option<i64>> {
    Ok(txn
        .query_row(
            "SELECT num FROM tasks t
             WHERE (t.status = 'todo' OR (t.status = 'in_progress' AND t.lease_until IS NOT NULL AND t.lease_until < ?3))
               AND (?1 IS NULL OR t.role IS NULL OR t.role = ?1)
               AND (?2 IS NULL OR t.project IS NULL OR t.project = ?2)
               AND NOT EXISTS (SELECT 1 FROM task_deps d JOIN tasks o ON o.num = d.depends_on
                               WHERE d.task = t.num AND o.status NOT IN ('done', 'cancelled'))
             ORDER BY t.priority, (t.role IS NULL), t.num LIMIT 1",
            params![role, project, now],
            |r| r.get(0),
        )
        .optional()?)
}

/// Applies a change. An agent cannot change a task another agent holds unless `force` is set.
pub fn update(store: &Store, actor: &Actor, id: &str, ch: &TaskChange) -> Result<Task> {
    let num = parse_id(id)?;
    let title = ch.title.as_deref().map(clean_title).transpose()?;
    let priority = ch.priority.as_deref().map(parse_priority).transpose()?;
    let add_labels = clean_list(&ch.add_labels, "label")?;
    let acceptance = ch.acceptance.as_deref().map(|a| clean_list(a, "acceptance criterion")).transpose()?;
    store.durable(|txn| {
        let (agent_id, who) = actor_name(txn, &actor.who)?;
        let now = now_ms();
        let Holding { status: from, assignee, holder, lease } =
            holding(txn, num)?.ok_or_else(|| Error::TaskNotFound(id.to_owned()))?;
        let held_by_other = from == Status::InProgress
            && holder.as_deref().is_some_and(|h| h != agent_id)
            && lease.is_none_or(|l| l >= now);
        let only_comment = ch.status.is_none()
            && title.is_none()
            && ch.description.is_none()
            && priority.is_none()
            && ch.role.is_none()
            && ch.project.is_none()
            && ch.add_labels.is_empty()
            && ch.remove_labels.is_empty()
            && ch.add_deps.is_empty()
            && ch.remove_deps.is_empty()
            && acceptance.is_none()
            && ch.assignee.is_none()
            && ch.summary.is_none()
            && !ch.release;
        if held_by_other && !ch.force && !only_comment {
            return Err(Error::TaskHeld { id: format_id(num), holder: assignee.clone().unwrap_or_default() });
        }
        let mut edited = serde_json::Map::new();
        if let Some(t) = &title {
            txn.execute("UPDATE tasks SET title = ?2 WHERE num = ?1", params![num, t])?;
            edited.insert("title".into(), json!(t));
        }
        if let Some(d) = &ch.description {
            txn.execute("UPDATE tasks SET description = ?2 WHERE num = ?1", params![num, d.trim()])?;
            edited.insert("description".into(), json!("changed"));
        }
        if let Some(p) = priority {
            txn.execute("UPDATE tasks SET priority = ?2 WHERE num = ?1", params![num, p])?;
            edited.insert("priority".into(), json!(priority_name(p)));
        }
        if let Some(r) = &ch.role {
            let r = r.as_deref().map(str::trim).filter(|s| !s.is_empty());
            txn.execute("UPDATE tasks SET role = ?2 WHERE num = ?1", params![num, r])?;
            edited.insert("role".into(), json!(r));
        }
        if let Some(p) = &ch.project {
            let p = p.as_deref().map(str::trim).filter(|s| !s.is_empty());
            txn.execute("UPDATE tasks SET project = ?2 WHERE num = ?1", params![num, p])?;
            edited.insert("project".into(), json!(p));
        }
        for l in &add_labels {
            txn.execute("INSERT OR IGNORE INTO task_labels(task, label) VALUES (?1, ?2)", params![num, l])?;
        }
        for l in &ch.remove_labels {
            txn.execute("DELETE FROM task_labels WHERE task = ?1 AND label = ?2", params![num, l.trim()])?;
        }
        if !add_labels.is_empty() || !ch.remove_labels.is_empty() {
            edited.insert("labels".into(), json!({"added": add_labels, "removed": ch.remove_labels}));
        }
        let added = add_deps(txn, num, &ch.add_deps)?;
        for d in &ch.remove_deps {
            txn.execute("DELETE FROM task_deps WHERE task = ?1 AND depends_on = ?2", params![num, parse_id(d)?])?;
        }
        if !added.is_empty() || !ch.remove_deps.is_empty() {
            let added: Vec<String> = added.into_iter().map(format_id).collect();
            edited.insert("depends_on".into(), json!({"added": added, "removed": ch.remove_deps}));
        }
        if let Some(a) = &acceptance {
            txn.execute("UPDATE tasks SET acceptance = ?2 WHERE num = ?1", params![num, serde_json::to_string(a)?])?;
            edited.insert("acceptance".into(), json!(a));
        }
        if !edited.is_empty() {
            event(txn, num, &who, "edited", serde_json::Value::Object(edited))?;
        }

        let mut status = from;
        if let Some(a) = &ch.assignee {
            let (name, agent) = match a.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
                None => (None, None),
                Some(n) => {
                    let agent: Option<(String, String)> = txn
                        .query_row("SELECT id, kind FROM agents WHERE name = ?1", [n], |r| Ok((r.get(0)?, r.get(1)?)))
                        .optional()?;
                    (Some(n.to_owned()), agent)
                }
            };
            // People hold without a lease and hear of nothing; an agent starts a fresh lease.
            let agent_holder: Option<String> = agent
                .as_ref()
                .filter(|(_, kind)| crate::principal::AgentKind::parse(kind) != crate::principal::AgentKind::Cli)
                .map(|(id, _)| id.clone());
            let lease = agent_holder.as_ref().map(|_| now + DEFAULT_LEASE_MS);
            let agent = agent.map(|(id, _)| id);
            txn.execute(
                "UPDATE tasks SET assignee = ?2, assignee_agent = ?3, lease_until = ?4 WHERE num = ?1",
                params![num, name, agent, lease],
            )?;
            event(txn, num, &who, "assigned", json!({"assignee": name}))?;
            // Given to an agent by someone else: the agent hears of it as a signal.
            if let (Some(agent), Some(name)) = (&agent_holder, &name)
                && *agent != agent_id
                && assignee.as_deref() != Some(name.as_str())
            {
                let from = signals::from_actor_in(txn, &actor.who)?;
                let title: String = txn.query_row("SELECT title FROM tasks WHERE num = ?1", [num], |r| r.get(0))?;
                signals::task_assigned_in(txn, &from, name, num, &title)?;
            }
        }
        if ch.release {
            if status != Status::InProgress && holder.is_none() {
                return Err(Error::IllegalTransition {
                    id: format_id(num),
                    from: status.as_str(),
                    to: "todo",
                    hint: "release gives back a claimed task; this one is not claimed",
                });
            }
            txn.execute(
                "UPDATE tasks SET status = 'todo', assignee = NULL, assignee_agent = NULL, lease_until = NULL WHERE num = ?1",
                [num],
            )?;
            event(txn, num, &who, "released", json!({"from": status}))?;
            status = Status::Todo;
        }
        let target = ch.status.or(ch.summary.as_ref().map(|_| Status::Done));
        if let Some(to) = target.filter(|t| *t != status) {
            if !status.can_become(to) {
                return Err(Error::IllegalTransition {
                    id: format_id(num),
                    from: status.as_str(),
                    to: to.as_str(),
                    hint: transition_hint(status),
                });
            }
            if to == Status::InProgress {
                let open = open_deps(txn, num)?;
                if !open.is_empty() {
                    return Err(Error::DependenciesOpen { id: format_id(num), open });
                }
                // Starting work means holding it: the actor becomes the holder unless assigned.
                txn.execute(
                    "UPDATE tasks SET assignee = coalesce(assignee, ?2), assignee_agent = coalesce(assignee_agent, ?3),
                         lease_until = CASE WHEN assignee_agent IS NULL OR assignee_agent = ?3 THEN ?4 ELSE lease_until END
                     WHERE num = ?1",
                    params![num, who, agent_id, actor.lease_ms.map(|ms| now + ms)],
                )?;
            }
            if matches!(to, Status::Todo | Status::Done | Status::Cancelled) {
                // Leases only mean something while work is in progress.
                txn.execute("UPDATE tasks SET lease_until = NULL WHERE num = ?1", [num])?;
            }
            if to == Status::Todo {
                txn.execute("UPDATE tasks SET assignee = NULL, assignee_agent = NULL WHERE num = ?1", [num])?;
            }
            txn.execute("UPDATE tasks SET status = ?2 WHERE num = ?1", params![num, to.as_str()])?;
            if matches!(to, Status::InReview | Status::Done | Status::Cancelled) {
                signals::task_settled_in(txn, num)?;
            }
            let kind = if to == Status::Done { "completed" } else { "status" };
            event(txn, num, &who, kind, json!({"from": status, "to": to, "summary": ch.summary}))?;
            status = to;
        }
        if let Some(s) = &ch.summary {
            txn.execute("UPDATE tasks SET summary = ?2 WHERE num = ?1", params![num, s.trim()])?;
        }
        if let Some(c) = ch.comment.as_deref().map(str::trim).filter(|c| !c.is_empty()) {
            event(txn, num, &who, if ch.handoff { "handoff" } else { "comment" }, json!({"text": c}))?;
        }
        // Any activity by the holder renews its lease.
        if status == Status::InProgress
            && holder.as_deref() == Some(agent_id.as_str())
            && let Some(ms) = actor.lease_ms
        {
            txn.execute("UPDATE tasks SET lease_until = ?2 WHERE num = ?1", params![num, now + ms])?;
        }
        txn.execute("UPDATE tasks SET updated_at = ?2, version = version + 1 WHERE num = ?1", params![num, now])?;
        bump_rev(txn)?;
        Ok(())
    })?;
    get(store, &format_id(num)).map(|d| d.task)
}

fn transition_hint(from: Status) -> &'static str {
    match from {
        Status::Todo => "claim it first (todo → in_progress), or block or cancel it",
        Status::Blocked => "unblock it first (blocked → todo or in_progress)",
        Status::Done | Status::Cancelled => "reopen it first (→ todo)",
        _ => "see `tether task --help` for the workflow",
    }
}

/// Extends the leases of every task the agent holds (called on its activity, e.g. hooks).
pub fn renew_leases(store: &Store, agent_id: &str, lease_ms: i64) -> Result<usize> {
    let now = now_ms();
    Ok(store.writer().execute(
        "UPDATE tasks SET lease_until = ?2 WHERE assignee_agent = ?1 AND status = 'in_progress'
             AND lease_until IS NOT NULL AND lease_until >= ?3",
        params![agent_id, now + lease_ms, now],
    )?)
}

const TASK_COLS: &str = "t.num, t.title, t.description, t.status, t.priority, t.role, t.project, t.acceptance,
    t.assignee, t.lease_until, t.summary, t.external_ref, t.created_by, t.created_at, t.updated_at, t.version,
    (SELECT group_concat(label, char(31)) FROM (SELECT label FROM task_labels l WHERE l.task = t.num ORDER BY label)),
    (SELECT group_concat(depends_on, ',') FROM (SELECT depends_on FROM task_deps d WHERE d.task = t.num ORDER BY depends_on)),
    (SELECT group_concat(depends_on, ',') FROM (SELECT d.depends_on FROM task_deps d JOIN tasks o ON o.num = d.depends_on
        WHERE d.task = t.num AND o.status NOT IN ('done', 'cancelled') ORDER BY d.depends_on))";

fn task_row(r: &rusqlite::Row<'_>, now: i64) -> rusqlite::Result<Task> {
    let status: String = r.get(3)?;
    let acceptance: String = r.get(7)?;
    let lease: Option<i64> = r.get(9)?;
    let nums = |s: Option<String>| -> Vec<String> {
        s.map(|s| s.split(',').filter_map(|n| n.parse().ok()).map(format_id).collect()).unwrap_or_default()
    };
    let labels: Option<String> = r.get(16)?;
    Ok(Task {
        id: format_id(r.get(0)?),
        title: r.get(1)?,
        description: r.get(2)?,
        status: Status::from_str(&status).unwrap_or(Status::Todo),
        priority: priority_name(r.get(4)?),
        role: r.get(5)?,
        project: r.get(6)?,
        acceptance: serde_json::from_str(&acceptance).unwrap_or_default(),
        assignee: r.get(8)?,
        lease_until: lease.map(iso),
        lease_expired: lease.is_some_and(|l| l < now) && status == "in_progress",
        summary: r.get(10)?,
        external_ref: r.get(11)?,
        created_by: r.get(12)?,
        created_at: iso(r.get(13)?),
        updated_at: iso(r.get(14)?),
        version: r.get(15)?,
        labels: labels.map(|l| l.split('\u{1f}').map(str::to_owned).collect()).unwrap_or_default(),
        depends_on: nums(r.get(17)?),
        blocked_by: nums(r.get(18)?),
    })
}

pub fn get(store: &Store, id: &str) -> Result<TaskDetail> {
    let num = parse_id(id)?;
    let now = now_ms();
    store.read(|c| {
        let task = c
            .query_row(&format!("SELECT {TASK_COLS} FROM tasks t WHERE t.num = ?1"), [num], |r| task_row(r, now))
            .optional()?
            .ok_or_else(|| Error::TaskNotFound(id.to_owned()))?;
        let mut stmt = c.prepare("SELECT at, actor, kind, detail FROM task_events WHERE task = ?1 ORDER BY id")?;
        let events: Vec<Event> = stmt
            .query_map([num], |r| {
                let detail: String = r.get(3)?;
                Ok(Event {
                    at: iso(r.get(0)?),
                    actor: r.get(1)?,
                    kind: r.get(2)?,
                    detail: serde_json::from_str(&detail).unwrap_or(serde_json::Value::Null),
                })
            })?
            .collect::<rusqlite::Result<_>>()?;
        let notes = events.iter().filter(|e| e.kind == "comment" || e.kind == "handoff").cloned().collect();
        Ok(TaskDetail { task, notes, history: events })
    })
}

pub fn list(store: &Store, f: &TaskFilter) -> Result<Vec<Task>> {
    let now = now_ms();
    let mut conds: Vec<String> = vec!["1".into()];
    let mut p: Vec<rusqlite::types::Value> = Vec::new();
    if !f.statuses.is_empty() {
        let s: Vec<String> = f.statuses.iter().map(|s| format!("'{}'", s.as_str())).collect();
        conds.push(format!("t.status IN ({})", s.join(",")));
    }
    match f.assignee.as_deref() {
        Some("none") => conds.push("t.assignee IS NULL".into()),
        Some(a) => {
            p.push(a.to_owned().into());
            conds.push(format!("t.assignee = ?{}", p.len()));
        }
        None => {}
    }
    if let Some(r) = &f.role {
        p.push(r.clone().into());
        conds.push(format!("(t.role = ?{} OR t.role IS NULL)", p.len()));
    }
    if let Some(pr) = &f.project {
        p.push(pr.clone().into());
        conds.push(format!("(t.project = ?{} OR t.project IS NULL)", p.len()));
    }
    if let Some(l) = &f.label {
        p.push(l.clone().into());
        conds.push(format!("EXISTS (SELECT 1 FROM task_labels l WHERE l.task = t.num AND l.label = ?{})", p.len()));
    }
    if f.ready {
        p.push(now.into());
        conds.push(format!(
            "(t.status = 'todo' OR (t.status = 'in_progress' AND t.lease_until < ?{}))
             AND NOT EXISTS (SELECT 1 FROM task_deps d JOIN tasks o ON o.num = d.depends_on
                             WHERE d.task = t.num AND o.status NOT IN ('done', 'cancelled'))",
            p.len()
        ));
    }
    let limit = if f.limit == 0 { 200 } else { f.limit };
    let sql = format!(
        "SELECT {TASK_COLS} FROM tasks t WHERE {} ORDER BY
            CASE t.status WHEN 'in_progress' THEN 0 WHEN 'in_review' THEN 1 WHEN 'todo' THEN 2 WHEN 'blocked' THEN 3 ELSE 4 END,
            t.priority, t.num LIMIT {limit}",
        conds.join(" AND ")
    );
    store.read(|c| {
        let mut stmt = c.prepare(&sql)?;
        let rows = stmt.query_map(rusqlite::params_from_iter(p.iter()), |r| task_row(r, now))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    })
}

/// The board as markdown: one section per open status, then a count of closed tasks.
pub fn board_markdown(store: &Store) -> Result<String> {
    let all = list(store, &TaskFilter { limit: 10_000, ..TaskFilter::default() })?;
    let mut out = String::from("# Tasks\n");
    for st in [Status::InProgress, Status::InReview, Status::Todo, Status::Blocked] {
        let ts: Vec<&Task> = all.iter().filter(|t| t.status == st).collect();
        out.push_str(&format!("\n## {} ({})\n", st.as_str(), ts.len()));
        for t in ts {
            out.push_str(&format!("- **{}** {} [{}]", t.id, t.title, t.priority));
            if let Some(a) = &t.assignee {
                out.push_str(&format!(" — {a}"));
                if t.lease_expired {
                    out.push_str(" (lease expired)");
                }
            }
            if !t.blocked_by.is_empty() {
                out.push_str(&format!(" — waits for {}", t.blocked_by.join(", ")));
            }
            out.push('\n');
        }
    }
    let done = all.iter().filter(|t| t.status == Status::Done).count();
    let cancelled = all.iter().filter(|t| t.status == Status::Cancelled).count();
    out.push_str(&format!("\n{done} done, {cancelled} cancelled.\n"));
    Ok(out)
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

const AGENT_INSTRUCTIONS: &str = "Claim before you work: task_claim (no id = the best ready task for your role). \
Keep the task updated with task_update: comment as you go, set in_review or complete it with a summary. \
If you stop before it is done, release it with a handoff comment saying what is left. Never work on a \
task someone else holds; comment on it instead.";

/// Registers the agent with a role and name, and tells it what it holds.
pub fn start_session(store: &Store, who: &Identity, role: Option<&str>, name: Option<&str>) -> Result<SessionStart> {
    let agent = agents::start(store, who, role, name)?;
    let holding = list(
        store,
        &TaskFilter {
            statuses: vec![Status::InProgress, Status::InReview],
            assignee: Some(agent.name.clone()),
            ..Default::default()
        },
    )?;
    let ready = list(
        store,
        &TaskFilter {
            ready: true,
            role: agent.role.clone(),
            project: agent.project.clone(),
            limit: 10_000,
            ..Default::default()
        },
    )?
    .len();
    Ok(SessionStart { agent, holding, ready, instructions: AGENT_INSTRUCTIONS })
}

/// A listing request as hosts receive it: statuses as text, `me` as an assignee. Its docs are
/// also the MCP tool's argument descriptions.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
pub struct TaskQuery {
    /// One task with its notes, handoffs and history (the other fields are ignored).
    #[serde(default)]
    pub id: Option<String>,
    /// Statuses to include: todo, in_progress, blocked, in_review, done, cancelled (default: every open one).
    #[serde(default, rename = "status")]
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
    #[serde(default)]
    pub ready: bool,
    /// At most this many (default 50).
    #[serde(default)]
    pub limit: usize,
}

#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum QueryResult {
    One(Box<TaskDetail>),
    Many { tasks: Vec<Task> },
}

pub fn query(store: &Store, actor: &Actor, q: &TaskQuery) -> Result<QueryResult> {
    if let Some(id) = &q.id {
        return Ok(QueryResult::One(Box::new(get(store, id)?)));
    }
    let mut statuses = q.statuses.iter().map(|s| Status::from_str(s)).collect::<Result<Vec<_>>>()?;
    if statuses.is_empty() && !q.ready {
        statuses = Status::ALL.into_iter().filter(|s| !s.is_closed()).collect();
    }
    let assignee = match q.assignee.as_deref().map(str::trim) {
        Some("me") => Some(agents::get(store, &actor.who.id).map(|a| a.name).unwrap_or_else(|_| actor.who.id.clone())),
        other => other.map(str::to_owned),
    };
    let f = TaskFilter {
        statuses,
        assignee,
        role: q.role.clone(),
        project: q.project.clone(),
        label: q.label.clone(),
        ready: q.ready,
        limit: match q.limit {
            0 => 50,
            n if n > MAX_LIST => {
                return Err(Error::invalid(
                    "limit",
                    format!(
                        "{n} is more than {MAX_LIST}; narrow the filter, or export every task (`tether task export`)"
                    ),
                ));
            }
            n => n,
        },
    };
    Ok(QueryResult::Many { tasks: list(store, &f)? })
}

/// Claims `id`, or the best ready task for the role and project given or else the agent's own.
pub fn claim_for(
    store: &Store,
    actor: &Actor,
    id: Option<String>,
    role: Option<String>,
    project: Option<String>,
) -> Result<Task> {
    let target = match id.filter(|i| !i.trim().is_empty()) {
        Some(id) => ClaimTarget::Id(id),
        None => {
            let known = agents::get(store, &actor.who.id).ok();
            ClaimTarget::Next {
                role: role.or_else(|| known.as_ref().and_then(|a| a.role.clone())),
                project: project.or_else(|| actor.who.project.clone()),
            }
        }
    };
    claim(store, actor, &target)
}
