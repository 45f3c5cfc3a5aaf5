//! Creating and changing tasks: fields, labels, dependencies (never a cycle), status moves,
//! assignment (the new holder hears of it as a signal), comments, handoffs and completion.

use std::collections::{HashMap, HashSet};
use std::str::FromStr;

use serde_json::json;
use tether_store::sql::{Sql, SqlExt};
use tether_store::values;

use super::claim::{Holding, holding, open_deps};
use super::model::*;
use super::query::{bump_rev, event, exists, get};
use crate::clock::now_ms;
use crate::error::{Error, Result};
use crate::principal::{Actor, DEFAULT_LEASE_MS, actor_name};
use crate::signals;
use tether_store::sql::Database;

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
pub(crate) fn add_deps(db: &dyn Sql, num: i64, deps: &[String]) -> Result<Vec<i64>> {
    let mut added = Vec::new();
    for d in deps {
        let dep = parse_id(d)?;
        if !exists(db, dep)? {
            return Err(Error::TaskNotFound(d.clone()));
        }
        if dep == num {
            return Err(Error::DependencyCycle { path: vec![format_id(num), format_id(num)] });
        }
        if let Some(mut path) = dep_path(db, dep, num)? {
            path.insert(0, num);
            return Err(Error::DependencyCycle { path: path.into_iter().map(format_id).collect() });
        }
        if db.execute(
            "INSERT INTO task_deps(task, depends_on) VALUES (?1, ?2) ON CONFLICT DO NOTHING",
            values![num, dep],
        )? > 0
        {
            added.push(dep);
        }
    }
    Ok(added)
}

/// A chain of dependencies from `from` to `to`, if one exists.
fn dep_path(db: &dyn Sql, from: i64, to: i64) -> Result<Option<Vec<i64>>> {
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
        let next: Vec<i64> =
            db.query_map("SELECT depends_on FROM task_deps WHERE task = ?1", values![n], |r| r.get(0))?;
        for m in next {
            if seen.insert(m) {
                parent.insert(m, n);
                queue.push_back(m);
            }
        }
    }
    Ok(None)
}

pub(crate) fn create(store: &dyn Database, actor: &Actor, new: &NewTask) -> Result<Task> {
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

/// Inserts a task with the next number (dependencies are the caller's job), inside `db`.
pub(crate) fn insert_in(db: &dyn Sql, who: &str, i: &Insert<'_>) -> Result<i64> {
    let num: i64 =
        db.query_row("UPDATE counters SET value = value + 1 WHERE name = 'task_num' RETURNING value", &[], |r| {
            r.get(0)
        })?;
    let now = now_ms();
    let trimmed = |o: &Option<String>| o.as_deref().map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned);
    db.execute(
        "INSERT INTO tasks(num, title, description, status, priority, role, project, acceptance, created_by, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?10)",
        values![
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
        db.execute("INSERT INTO task_labels(task, label) VALUES (?1, ?2) ON CONFLICT DO NOTHING", values![num, l])?;
    }
    event(db, num, who, "created", json!({"title": i.title, "status": i.status}))?;
    bump_rev(db)?;
    Ok(num)
}

/// Applies a change. An agent cannot change a task another agent holds unless `force` is set.
pub(crate) fn update(store: &dyn Database, actor: &Actor, id: &str, ch: &TaskChange) -> Result<Task> {
    let num = parse_id(id)?;
    let title = ch.title.as_deref().map(clean_title).transpose()?;
    let priority = ch.priority.as_deref().map(parse_priority).transpose()?;
    let add_labels = clean_list(&ch.add_labels, "label")?;
    let acceptance = ch.acceptance.as_deref().map(|a| clean_list(a, "acceptance criterion")).transpose()?;
    store.durable(|txn| {
        let db: &dyn Sql = txn;
        let (agent_id, who) = actor_name(db, &actor.who)?;
        let now = now_ms();
        let Holding { status: from, assignee, holder, lease } =
            holding(db, num)?.ok_or_else(|| Error::TaskNotFound(id.to_owned()))?;
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
            db.execute("UPDATE tasks SET title = ?2 WHERE num = ?1", values![num, t])?;
            edited.insert("title".into(), json!(t));
        }
        if let Some(d) = &ch.description {
            db.execute("UPDATE tasks SET description = ?2 WHERE num = ?1", values![num, d.trim()])?;
            edited.insert("description".into(), json!("changed"));
        }
        if let Some(p) = priority {
            db.execute("UPDATE tasks SET priority = ?2 WHERE num = ?1", values![num, p])?;
            edited.insert("priority".into(), json!(priority_name(p)));
        }
        if let Some(r) = &ch.role {
            let r = r.as_deref().map(str::trim).filter(|s| !s.is_empty());
            db.execute("UPDATE tasks SET role = ?2 WHERE num = ?1", values![num, r])?;
            edited.insert("role".into(), json!(r));
        }
        if let Some(p) = &ch.project {
            let p = p.as_deref().map(str::trim).filter(|s| !s.is_empty());
            db.execute("UPDATE tasks SET project = ?2 WHERE num = ?1", values![num, p])?;
            edited.insert("project".into(), json!(p));
        }
        for l in &add_labels {
            db.execute("INSERT INTO task_labels(task, label) VALUES (?1, ?2) ON CONFLICT DO NOTHING", values![num, l])?;
        }
        for l in &ch.remove_labels {
            db.execute("DELETE FROM task_labels WHERE task = ?1 AND label = ?2", values![num, l.trim()])?;
        }
        if !add_labels.is_empty() || !ch.remove_labels.is_empty() {
            edited.insert("labels".into(), json!({"added": add_labels, "removed": ch.remove_labels}));
        }
        let added = add_deps(db, num, &ch.add_deps)?;
        for d in &ch.remove_deps {
            db.execute("DELETE FROM task_deps WHERE task = ?1 AND depends_on = ?2", values![num, parse_id(d)?])?;
        }
        if !added.is_empty() || !ch.remove_deps.is_empty() {
            let added: Vec<String> = added.into_iter().map(format_id).collect();
            edited.insert("depends_on".into(), json!({"added": added, "removed": ch.remove_deps}));
        }
        if let Some(a) = &acceptance {
            db.execute("UPDATE tasks SET acceptance = ?2 WHERE num = ?1", values![num, serde_json::to_string(a)?])?;
            edited.insert("acceptance".into(), json!(a));
        }
        if !edited.is_empty() {
            event(db, num, &who, "edited", serde_json::Value::Object(edited))?;
        }

        let mut status = from;
        if let Some(a) = &ch.assignee {
            let (name, agent) = match a.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
                None => (None, None),
                Some(n) => {
                    let agent: Option<(String, String)> =
                        db.query_opt("SELECT id, kind FROM agents WHERE name = ?1", values![n], |r| {
                            Ok((r.get(0)?, r.get(1)?))
                        })?;
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
            db.execute(
                "UPDATE tasks SET assignee = ?2, assignee_agent = ?3, lease_until = ?4 WHERE num = ?1",
                values![num, name, agent, lease],
            )?;
            event(db, num, &who, "assigned", json!({"assignee": name}))?;
            // Given to an agent by someone else: the agent hears of it as a signal.
            if let (Some(agent), Some(name)) = (&agent_holder, &name)
                && *agent != agent_id
                && assignee.as_deref() != Some(name.as_str())
            {
                let from = signals::from_actor_in(db, &actor.who)?;
                let title: String = db.query_row("SELECT title FROM tasks WHERE num = ?1", values![num], |r| r.get(0))?;
                signals::task_assigned_in(db, &from, name, num, &title)?;
            }
            // Nobody holds an in-progress task once it is unassigned: it is free again, as after
            // a release (else it would stay "held by" no one, claimable by nobody).
            if name.is_none() && status == Status::InProgress && !ch.release && target_status(ch).is_none() {
                db.execute("UPDATE tasks SET status = 'todo', lease_until = NULL WHERE num = ?1", values![num])?;
                event(db, num, &who, "released", json!({"from": status}))?;
                status = Status::Todo;
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
            db.execute(
                "UPDATE tasks SET status = 'todo', assignee = NULL, assignee_agent = NULL, lease_until = NULL WHERE num = ?1",
                values![num],
            )?;
            event(db, num, &who, "released", json!({"from": status}))?;
            status = Status::Todo;
        }
        if let Some(to) = target_status(ch).filter(|t| *t != status) {
            if !status.can_become(to) {
                return Err(Error::IllegalTransition {
                    id: format_id(num),
                    from: status.as_str(),
                    to: to.as_str(),
                    hint: transition_hint(status),
                });
            }
            if to == Status::InProgress {
                let open = open_deps(db, num)?;
                if !open.is_empty() {
                    return Err(Error::DependenciesOpen { id: format_id(num), open });
                }
                // Starting work means holding it: the actor becomes the holder unless assigned.
                db.execute(
                    "UPDATE tasks SET assignee = coalesce(assignee, ?2), assignee_agent = coalesce(assignee_agent, ?3),
                         lease_until = CASE WHEN assignee_agent IS NULL OR assignee_agent = ?3 THEN ?4 ELSE lease_until END
                     WHERE num = ?1",
                    values![num, who, agent_id, actor.lease_ms.map(|ms| now + ms)],
                )?;
            }
            if matches!(to, Status::Todo | Status::Done | Status::Cancelled) {
                // Leases only mean something while work is in progress.
                db.execute("UPDATE tasks SET lease_until = NULL WHERE num = ?1", values![num])?;
            }
            if to == Status::Todo {
                db.execute("UPDATE tasks SET assignee = NULL, assignee_agent = NULL WHERE num = ?1", values![num])?;
            }
            db.execute("UPDATE tasks SET status = ?2 WHERE num = ?1", values![num, to.as_str()])?;
            if matches!(to, Status::InReview | Status::Done | Status::Cancelled) {
                signals::task_settled_in(db, num)?;
            }
            let kind = if to == Status::Done { "completed" } else { "status" };
            event(db, num, &who, kind, json!({"from": status, "to": to, "summary": ch.summary}))?;
            status = to;
        }
        if let Some(s) = &ch.summary {
            db.execute("UPDATE tasks SET summary = ?2 WHERE num = ?1", values![num, s.trim()])?;
        }
        if let Some(c) = ch.comment.as_deref().map(str::trim).filter(|c| !c.is_empty()) {
            event(db, num, &who, if ch.handoff { "handoff" } else { "comment" }, json!({"text": c}))?;
        }
        // Any activity by the holder renews its lease.
        if status == Status::InProgress
            && holder.as_deref() == Some(agent_id.as_str())
            && let Some(ms) = actor.lease_ms
        {
            db.execute("UPDATE tasks SET lease_until = ?2 WHERE num = ?1", values![num, now + ms])?;
        }
        db.execute("UPDATE tasks SET updated_at = ?2, version = version + 1 WHERE num = ?1", values![num, now])?;
        bump_rev(db)?;
        Ok(())
    })?;
    get(store, &format_id(num)).map(|d| d.task)
}

/// The status a change asks for: the one given, else done when it carries a summary.
fn target_status(ch: &TaskChange) -> Option<Status> {
    ch.status.or(ch.summary.as_ref().map(|_| Status::Done))
}

fn transition_hint(from: Status) -> &'static str {
    match from {
        Status::Todo => "claim it first (todo → in_progress), or block or cancel it",
        Status::Blocked => "unblock it first (blocked → todo or in_progress)",
        Status::Done | Status::Cancelled => "reopen it first (→ todo)",
        _ => "see `tether task --help` for the workflow",
    }
}
