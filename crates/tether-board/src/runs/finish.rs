//! How a run ends: once, with its outcome, and what that does to the task it is bound to.

use tether_store::sql::{Sql, SqlExt};
use tether_store::values;

use super::event::RunEvent;
use super::log::append_in;
use super::model::*;
use super::query::{bump_rev, get_run};
use crate::clock::now_ms;
use crate::error::Result;
use crate::principal::{Actor, DEFAULT_LEASE_MS};
use crate::tasks::{self, Status, TaskChange};
use tether_store::sql::Database;

/// A task-bound run's result, as the task's summary, is cut to this.
const SUMMARY_CHARS: usize = 4000;

/// How a run ended.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    pub status: RunStatus,
    pub exit_code: Option<i64>,
    pub error: Option<String>,
    pub warning: Option<String>,
    pub log_dropped: Option<LogDropped>,
}

/// Ends a run (once: a run that already ended keeps its first outcome) and moves its task: on
/// success to in_review with the result as the summary (done when asked), otherwise back to the
/// board with a handoff note that carries the error.
pub(crate) fn finish(store: &dyn Database, num: i64, o: &Outcome) -> Result<Run> {
    let ended = store.durable(|txn| {
        let db: &dyn Sql = txn;
        let changed = db.execute(
            "UPDATE runs SET status = ?2, exit_code = coalesce(?3, exit_code), error = coalesce(?4, error),
                 warning = coalesce(?5, warning), ended_at = ?6,
                 log_dropped_lines = coalesce(?7, log_dropped_lines), log_dropped_bytes = coalesce(?8, log_dropped_bytes)
             WHERE num = ?1 AND status IN ('queued', 'running')",
            values![
                num,
                o.status.as_str(),
                o.exit_code,
                o.error,
                o.warning,
                now_ms(),
                o.log_dropped.map(|d| d.lines),
                o.log_dropped.map(|d| d.bytes)
            ],
        )?;
        if changed == 1 {
            append_in(db, num, &[RunEvent::status(o.status.as_str(), o.error.clone())])?;
            bump_rev(db)?;
        }
        Ok(changed == 1)
    })?;
    let run = get_run(store, num)?;
    if ended && let Some(task) = &run.task {
        move_task(store, &run, task)?;
    }
    Ok(run)
}

fn move_task(store: &dyn Database, run: &Run, task: &str) -> Result<()> {
    let who = run_identity(run.root, run.workspace.as_deref());
    let holder: Option<String> =
        store.read(|c| SqlExt::query_opt(c, "SELECT name FROM agents WHERE id = ?1", values![who.id], |r| r.get(0)))?;
    let holds = holder.is_some() && tasks::get(store, task)?.task.assignee == holder;
    let actor = Actor { who, lease_ms: Some(DEFAULT_LEASE_MS) };
    if !holds {
        return Ok(());
    }
    let change = if run.status == RunStatus::Succeeded {
        let summary: String = run.result.as_deref().unwrap_or("").trim().chars().take(SUMMARY_CHARS).collect();
        TaskChange {
            status: Some(if run.complete_task { Status::Done } else { Status::InReview }),
            summary: Some(if summary.is_empty() { format!("{} finished without a summary", run.id) } else { summary }),
            comment: run.chat_id.as_ref().map(|c| format!("{} succeeded in Cursor chat {c}", run.id)),
            ..Default::default()
        }
    } else {
        let why = run.error.clone().unwrap_or_else(|| run.status.to_string());
        TaskChange {
            release: true,
            handoff: true,
            comment: Some(format!("{} {}: {why}", run.id, run.status)),
            ..Default::default()
        }
    };
    tasks::update(store, &actor, task, &change).map(|_| ())
}

/// Notes the chat a task-bound run works in on its task (once the stream says it).
pub(crate) fn note_chat_on_task(store: &dyn Database, num: i64) -> Result<()> {
    let run = get_run(store, num)?;
    if let (Some(task), Some(chat)) = (&run.task, &run.chat_id) {
        let actor = Actor { who: run_identity(run.root, run.workspace.as_deref()), lease_ms: Some(DEFAULT_LEASE_MS) };
        let ch = TaskChange { comment: Some(format!("{} works in Cursor chat {chat}", run.id)), ..Default::default() };
        tasks::update(store, &actor, task, &ch)?;
    }
    Ok(())
}
