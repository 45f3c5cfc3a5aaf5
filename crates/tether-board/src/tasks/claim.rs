//! Claiming: one holder at a time, on a lease its activity renews; a task whose dependencies are
//! open cannot be claimed, and "the next one" is the best ready task for a role.

use rusqlite::{OptionalExtension, Transaction, params};
use serde_json::json;

use super::model::*;
use super::query::{bump_rev, event, get};
use std::str::FromStr;

use crate::clock::{iso, now_ms};
use crate::error::{Error, Result};
use crate::principal::{Actor, actor_name};
use crate::store::Store;

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
pub(super) struct Holding {
    pub(super) status: Status,
    pub(super) assignee: Option<String>,
    /// The holding agent's id.
    pub(super) holder: Option<String>,
    pub(super) lease: Option<i64>,
}

pub(super) fn holding(txn: &Transaction<'_>, num: i64) -> Result<Option<Holding>> {
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

pub(super) fn open_deps(txn: &Transaction<'_>, num: i64) -> Result<Vec<String>> {
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

/// Extends the leases of every task the agent holds (called on its activity, e.g. hooks).
pub fn renew_leases(store: &Store, agent_id: &str, lease_ms: i64) -> Result<usize> {
    let now = now_ms();
    Ok(store.writer().execute(
        "UPDATE tasks SET lease_until = ?2 WHERE assignee_agent = ?1 AND status = 'in_progress'
             AND lease_until IS NOT NULL AND lease_until >= ?3",
        params![agent_id, now + lease_ms, now],
    )?)
}
