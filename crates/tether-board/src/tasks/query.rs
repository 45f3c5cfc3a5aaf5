//! Reading tasks (one with its notes and history, lists, the board as markdown), the revision
//! every task write bumps, and the append-only history.

use std::str::FromStr;

use tether_store::sql::{Row, Sql, SqlExt, ToValue, Value};
use tether_store::values;

use super::model::*;
use crate::clock::{iso, now_ms};
use crate::error::{Error, Result};
use tether_store::sql::Database;

pub(crate) fn bump_rev(db: &dyn Sql) -> Result<()> {
    db.execute("UPDATE counters SET value = value + 1 WHERE name = 'tasks_rev'", &[])?;
    Ok(())
}

/// Changes whenever any task changes, in any process.
pub(crate) fn revision(store: &dyn Database) -> Result<i64> {
    store.read(|c| SqlExt::query_row(c, "SELECT value FROM counters WHERE name = 'tasks_rev'", &[], |r| r.get(0)))
}

pub(crate) fn event(db: &dyn Sql, num: i64, actor: &str, kind: &str, detail: serde_json::Value) -> Result<()> {
    db.execute(
        "INSERT INTO task_events(task, at, actor, kind, detail) VALUES (?1, ?2, ?3, ?4, ?5)",
        values![num, now_ms(), actor, kind, detail.to_string()],
    )?;
    Ok(())
}

pub(super) fn exists(db: &dyn Sql, num: i64) -> Result<bool> {
    Ok(db.query_opt("SELECT 1 FROM tasks WHERE num = ?1", values![num], |_| Ok(()))?.is_some())
}

/// Labels are joined on the unit separator (U+001F, written into the literal): `clean_list` keeps
/// control characters out of labels, and neither engine spells that character the other's way
/// (SQLite's `char(31)`, PostgreSQL's `chr(31)`).
const TASK_COLS: &str = "t.num, t.title, t.description, t.status, t.priority, t.role, t.project, t.acceptance,
    t.assignee, t.lease_until, t.summary, t.external_ref, t.created_by, t.created_at, t.updated_at, t.version,
    (SELECT string_agg(l.label, '\u{1f}' ORDER BY l.label) FROM task_labels l WHERE l.task = t.num),
    (SELECT string_agg(CAST(d.depends_on AS TEXT), ',' ORDER BY d.depends_on) FROM task_deps d WHERE d.task = t.num),
    (SELECT string_agg(CAST(d.depends_on AS TEXT), ',' ORDER BY d.depends_on) FROM task_deps d
        JOIN tasks o ON o.num = d.depends_on WHERE d.task = t.num AND o.status NOT IN ('done', 'cancelled'))";

fn task_row(r: &Row, now: i64) -> Result<Task> {
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

pub(crate) fn get(store: &dyn Database, id: &str) -> Result<TaskDetail> {
    let num = parse_id(id)?;
    let now = now_ms();
    store.read(|c| {
        let db: &dyn Sql = c;
        let sql = format!("SELECT {TASK_COLS} FROM tasks t WHERE t.num = ?1");
        let task =
            db.query_opt(&sql, values![num], |r| task_row(r, now))?.ok_or_else(|| Error::TaskNotFound(id.to_owned()))?;
        let events: Vec<Event> = db.query_map(
            "SELECT at, actor, kind, detail FROM task_events WHERE task = ?1 ORDER BY id",
            values![num],
            |r| {
                let detail: String = r.get(3)?;
                Ok(Event {
                    at: iso(r.get(0)?),
                    actor: r.get(1)?,
                    kind: r.get(2)?,
                    detail: serde_json::from_str(&detail).unwrap_or(serde_json::Value::Null),
                })
            },
        )?;
        let notes = events.iter().filter(|e| e.kind == "comment" || e.kind == "handoff").cloned().collect();
        let (budget, spent_tokens): (Option<String>, Option<i64>) = db.query_row(
            "SELECT budget, (SELECT sum(coalesce(input_tokens, 0) + coalesce(output_tokens, 0) + coalesce(cache_read_tokens, 0)
                                 + coalesce(cache_write_tokens, 0))
                             FROM runs WHERE task = ?1 AND input_tokens IS NOT NULL)
             FROM tasks WHERE num = ?1",
            values![num],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        Ok(TaskDetail {
            task,
            notes,
            history: events,
            budget: budget.and_then(|b| b.parse().ok()),
            spent_tokens,
        })
    })
}

pub(crate) fn list(store: &dyn Database, f: &TaskFilter) -> Result<Vec<Task>> {
    let now = now_ms();
    let mut conds: Vec<String> = vec!["1 = 1".into()];
    let mut p: Vec<Value> = Vec::new();
    if !f.statuses.is_empty() {
        let s: Vec<String> = f.statuses.iter().map(|s| format!("'{}'", s.as_str())).collect();
        conds.push(format!("t.status IN ({})", s.join(",")));
    }
    match f.assignee.as_deref() {
        Some("none") => conds.push("t.assignee IS NULL".into()),
        Some(a) => {
            p.push(a.to_value());
            conds.push(format!("t.assignee = ?{}", p.len()));
        }
        None => {}
    }
    if let Some(r) = &f.role {
        p.push(r.to_value());
        conds.push(format!("(t.role = ?{} OR t.role IS NULL)", p.len()));
    }
    if let Some(pr) = &f.project {
        p.push(pr.to_value());
        conds.push(format!("(t.project = ?{} OR t.project IS NULL)", p.len()));
    }
    if let Some(l) = &f.label {
        p.push(l.to_value());
        conds.push(format!("EXISTS (SELECT 1 FROM task_labels l WHERE l.task = t.num AND l.label = ?{})", p.len()));
    }
    if f.ready {
        p.push(now.to_value());
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
    store.read(|c| SqlExt::query_map(c, &sql, &p, |r| task_row(r, now)))
}

/// The board as markdown: one section per open status, then a count of closed tasks.
pub(crate) fn board_markdown(store: &dyn Database) -> Result<String> {
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
