//! Claiming: one holder at a time, on a lease its activity renews; a task whose dependencies are
//! open cannot be claimed, and "the next one" is the best ready task for a role.

use serde_json::json;
use tether_store::sql::{Sql, SqlExt};
use tether_store::values;

use super::model::*;
use super::query::{bump_rev, event, get};
use std::str::FromStr;

use crate::clock::{iso, now_ms};
use crate::error::{Error, Result};
use crate::principal::{Actor, actor_name};
use tether_store::sql::Database;

/// Claims a task for the actor: it becomes `in_progress`, assigned to them, with a lease.
pub(crate) fn claim(store: &dyn Database, actor: &Actor, target: &ClaimTarget) -> Result<Task> {
    // Racing claimers lock the row they take and skip the rows others hold (PostgreSQL); the
    // conditional update below is what decides, on either engine.
    let num = store.claiming(|txn| {
        let db: &dyn Sql = txn;
        let (agent_id, who) = actor_name(db, &actor.who)?;
        let now = now_ms();
        let num = match target {
            ClaimTarget::Id(id) => {
                let num = parse_id(id)?;
                let Holding { status, assignee, holder, lease } =
                    holding(db, num)?.ok_or_else(|| Error::TaskNotFound(id.clone()))?;
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
                let open = open_deps(db, num)?;
                if !open.is_empty() {
                    return Err(Error::DependenciesOpen { id: format_id(num), open });
                }
                num
            }
            ClaimTarget::Next { role, project } => next_claimable(db, role.as_deref(), project.as_deref(), now)?
                .ok_or_else(|| {
                    Error::NothingToClaim(match (role, project) {
                        (Some(r), _) => format!("no todo task for role {r:?} has all its dependencies done"),
                        _ => "no todo task has all its dependencies done".to_owned(),
                    })
                })?,
        };
        let (prev_holder, prev_lease): (Option<String>, Option<i64>) = db.query_row(
            &format!("SELECT assignee, lease_until FROM tasks WHERE num = ?1{}", db.row_lock("")),
            values![num],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        if let (Some(h), Some(l)) = (&prev_holder, prev_lease)
            && l < now
            && h != &who
        {
            event(db, num, &who, "lease_expired", json!({"holder": h, "expired_at": iso(l)}))?;
        }
        let lease = actor.lease_ms.map(|ms| now + ms);
        // The guard repeats the checks in SQL: a claim can only ever move a free task.
        let changed = db.execute(
            "UPDATE tasks SET status = 'in_progress', assignee = ?2, assignee_agent = ?3, lease_until = ?4,
                 updated_at = ?5, version = version + 1
             WHERE num = ?1 AND (status = 'todo' OR (status = 'in_progress'
                 AND (assignee_agent = ?3 OR (lease_until IS NOT NULL AND lease_until < ?5))))",
            values![num, who, agent_id, lease, now],
        )?;
        if changed != 1 {
            return Err(Error::TaskHeld { id: format_id(num), holder: prev_holder.unwrap_or_default() });
        }
        event(db, num, &who, "claimed", json!({"lease_until": lease.map(iso)}))?;
        bump_rev(db)?;
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

/// Who holds task `num`, with its row locked until the transaction ends where the engine locks
/// rows, so what is decided on it stays true.
pub(super) fn holding(db: &dyn Sql, num: i64) -> Result<Option<Holding>> {
    let sql =
        format!("SELECT status, assignee, assignee_agent, lease_until FROM tasks WHERE num = ?1{}", db.row_lock(""));
    db.query_opt(&sql, values![num], |r| {
        Ok(Holding {
            status: Status::from_str(&r.get::<String>(0)?)?,
            assignee: r.get(1)?,
            holder: r.get(2)?,
            lease: r.get(3)?,
        })
    })
}

pub(super) fn open_deps(db: &dyn Sql, num: i64) -> Result<Vec<String>> {
    db.query_map(
        "SELECT d.depends_on FROM task_deps d JOIN tasks t ON t.num = d.depends_on
         WHERE d.task = ?1 AND t.status NOT IN ('done', 'cancelled') ORDER BY d.depends_on",
        values![num],
        |r| r.get(0).map(format_id),
    )
}

/// Best first: highest priority, then tasks meant for this role over role-less ones, then oldest;
/// its row locked, passing over rows a racing claimer has locked (`SKIP LOCKED`), so N claimers
/// take N tasks at once rather than queueing for the first. (A parameter tested for NULL is
/// cast: PostgreSQL types a parameter where it first meets it.)
fn next_claimable(db: &dyn Sql, role: Option<&str>, project: Option<&str>, now: i64) -> Result<Option<i64>> {
    let sql = format!(
        "SELECT num FROM tasks t
         WHERE (t.status = 'todo' OR (t.status = 'in_progress' AND t.lease_until IS NOT NULL AND t.lease_until < ?3))
           AND (CAST(?1 AS TEXT) IS NULL OR t.role IS NULL OR t.role = ?1)
           AND (CAST(?2 AS TEXT) IS NULL OR t.project IS NULL OR t.project = ?2)
           AND NOT EXISTS (SELECT 1 FROM task_deps d JOIN tasks o ON o.num = d.depends_on
                           WHERE d.task = t.num AND o.status NOT IN ('done', 'cancelled'))
         ORDER BY t.priority, (t.role IS NULL), t.num LIMIT 1{}",
        db.row_lock("OF t SKIP LOCKED")
    );
    db.query_opt(&sql, values![role, project, now], |r| r.get(0))
}

/// Extends the leases of every task the agent holds (called on its activity, e.g. hooks).
pub(crate) fn renew_leases(store: &dyn Database, agent_id: &str, lease_ms: i64) -> Result<usize> {
    let now = now_ms();
    store.append(|db| {
        db.execute(
            "UPDATE tasks SET lease_until = ?2 WHERE assignee_agent = ?1 AND status = 'in_progress'
             AND lease_until IS NOT NULL AND lease_until >= ?3",
            values![agent_id, now + lease_ms, now],
        )
    })
}
