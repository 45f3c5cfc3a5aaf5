//! A run's event log: append-only, numbered by its runner (which shows events live before they
//! are stored), and what the events say about the run (its chat, result and tokens).

use tether_store::sql::{Row, Sql, SqlExt};
use tether_store::values;

use super::event::RunEvent;
use super::model::*;
use crate::clock::{iso, now_ms};
use crate::error::{Error, Result};
use crate::principal::DEFAULT_LEASE_MS;
use tether_store::sql::Database;

/// A run bound to a task renews the task's lease on its events at most this often.
const LEASE_RENEW_EVERY_MS: i64 = 60_000;

/// The number of a run's last event: a runner numbers what it adds after it.
pub(crate) fn last_seq(store: &dyn Database, num: i64) -> Result<i64> {
    store.read(|c| {
        SqlExt::query_row(c, "SELECT coalesce(max(seq), 0) FROM run_events WHERE run = ?1", values![num], |r| r.get(0))
    })
}

/// Numbers events after the run's last one (for callers that do not number their own).
pub(crate) fn append_events(store: &dyn Database, num: i64, events: &[RunEvent]) -> Result<Vec<StoredEvent>> {
    let from = last_seq(store, num)?;
    let now = now_ms();
    let stored: Vec<StoredEvent> = events
        .iter()
        .zip(from + 1..)
        .map(|(e, seq)| StoredEvent { seq, at: iso(now), at_ms: now, event: e.clone() })
        .collect();
    store_events(store, num, &stored)?;
    Ok(stored)
}

/// Stores events a runner numbered (and may already have shown live), taking what they say
/// about the run: the chat id from `init`, the result, durations and tokens from `result`. A
/// task-bound run's events renew its lease.
pub(crate) fn store_events(store: &dyn Database, num: i64, stored: &[StoredEvent]) -> Result<()> {
    if stored.is_empty() {
        return Ok(());
    }
    // An append, not a durable write (`runs` says why an event batch needs no more).
    store.append(|db| {
        for e in stored {
            db.execute(
                "INSERT INTO run_events(run, seq, at, kind, data) VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT DO NOTHING",
                values![num, e.seq, e.at_ms, e.event.kind(), serde_json::to_string(&e.event)?],
            )?;
        }
        for e in stored.iter().map(|s| &s.event) {
            match e {
                RunEvent::Init { session_id, .. } => {
                    db.execute("UPDATE runs SET chat_id = ?2 WHERE num = ?1", values![num, session_id])?;
                }
                RunEvent::Result { is_error, text, duration_ms, duration_api_ms, usage } => {
                    let u = usage.clone().unwrap_or_default();
                    db.execute(
                        "UPDATE runs SET result = ?2, duration_ms = ?3, duration_api_ms = ?4,
                         input_tokens = coalesce(?5, input_tokens), output_tokens = coalesce(?6, output_tokens),
                         cache_read_tokens = coalesce(?7, cache_read_tokens),
                         cache_write_tokens = coalesce(?8, cache_write_tokens),
                         error = CASE WHEN ?9 THEN coalesce(error, ?2) ELSE error END
                     WHERE num = ?1",
                        values![
                            num,
                            text,
                            duration_ms,
                            duration_api_ms,
                            usage.as_ref().map(|_| u.input_tokens),
                            usage.as_ref().map(|_| u.output_tokens),
                            usage.as_ref().map(|_| u.cache_read_tokens),
                            usage.as_ref().map(|_| u.cache_write_tokens),
                            is_error
                        ],
                    )?;
                    if usage.is_some() {
                        db.execute("UPDATE runs SET usage_source = 'result' WHERE num = ?1", values![num])?;
                    }
                }
                // A turn's figures add up until the run's final ones replace them.
                RunEvent::Usage { usage: u } => {
                    db.execute(
                        "UPDATE runs SET input_tokens = coalesce(input_tokens, 0) + ?2,
                         output_tokens = coalesce(output_tokens, 0) + ?3,
                         cache_read_tokens = coalesce(cache_read_tokens, 0) + ?4,
                         cache_write_tokens = coalesce(cache_write_tokens, 0) + ?5, usage_source = 'turns'
                     WHERE num = ?1 AND usage_source IS DISTINCT FROM 'result'",
                        values![num, u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_write_tokens],
                    )?;
                }
                _ => {}
            }
        }
        let now = now_ms();
        db.execute(
            "UPDATE tasks SET lease_until = ?2
         WHERE assignee_agent = (SELECT 'run:R-' || coalesce(root, num) FROM runs WHERE num = ?1)
           AND status = 'in_progress' AND lease_until IS NOT NULL AND lease_until < ?3",
            values![num, now + DEFAULT_LEASE_MS, now + DEFAULT_LEASE_MS - LEASE_RENEW_EVERY_MS],
        )?;
        Ok(())
    })
}

/// Says what happened to a run in its log, inside a caller's transaction.
pub(crate) fn append_status_in(db: &dyn Sql, num: i64, status: &str, message: Option<String>) -> Result<()> {
    append_in(db, num, &[RunEvent::status(status, message)]).map(|_| ())
}

pub(super) fn append_in(db: &dyn Sql, num: i64, events: &[RunEvent]) -> Result<Vec<StoredEvent>> {
    let mut seq: i64 =
        db.query_row("SELECT coalesce(max(seq), 0) FROM run_events WHERE run = ?1", values![num], |r| r.get(0))?;
    let now = now_ms();
    let mut out = Vec::with_capacity(events.len());
    for e in events {
        seq += 1;
        db.execute(
            "INSERT INTO run_events(run, seq, at, kind, data) VALUES (?1, ?2, ?3, ?4, ?5)",
            values![num, seq, now, e.kind(), serde_json::to_string(e)?],
        )?;
        out.push(StoredEvent { seq, at: iso(now), at_ms: now, event: e.clone() });
    }
    Ok(out)
}

/// Events after `seq`, oldest first (for following a run).
pub(crate) fn events_after(store: &dyn Database, id: &str, seq: i64, limit: usize) -> Result<Vec<StoredEvent>> {
    let num = parse_id(id)?;
    store.read(|c| {
        let db: &dyn Sql = c;
        let known = db.query_opt("SELECT 1 FROM runs WHERE num = ?1", values![num], |_| Ok(()))?.is_some();
        if !known {
            return Err(Error::RunNotFound(id.to_owned()));
        }
        db.query_map(
            "SELECT seq, at, data FROM run_events WHERE run = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3",
            values![num, seq, limit as i64],
            event_row,
        )
    })
}

pub(super) fn event_row(r: &Row) -> Result<StoredEvent> {
    let data: String = r.get(2)?;
    let event = serde_json::from_str(&data)
        .unwrap_or_else(|e| RunEvent::Raw { text: data.clone(), reason: format!("unreadable stored event: {e}") });
    let at_ms: i64 = r.get(1)?;
    Ok(StoredEvent { seq: r.get(0)?, at: iso(at_ms), at_ms, event })
}
