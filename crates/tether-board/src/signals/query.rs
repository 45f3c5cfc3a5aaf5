//! Reading signals (one with its wakes and thread, lists, open and overdue obligations) and the
//! revision every signal write bumps.

use tether_store::sql::{Sql, SqlExt};
use tether_store::values;

use super::model::*;
use crate::clock::{iso, now_ms};
use crate::error::{Error, Result};
use crate::principal::HUMAN;
use tether_store::sql::Database;

pub(super) fn bump_rev(db: &dyn Sql) -> Result<()> {
    db.execute("UPDATE counters SET value = value + 1 WHERE name = 'signals_rev'", &[])?;
    Ok(())
}

/// Changes whenever any signal is sent, drained, answered or woken, in any process.
pub(crate) fn revision(store: &dyn Database) -> Result<i64> {
    store.read(|c| SqlExt::query_row(c, "SELECT value FROM counters WHERE name = 'signals_rev'", &[], |r| r.get(0)))
}

pub(crate) fn get(store: &dyn Database, id: &str) -> Result<SignalDetail> {
    let num = parse_id(id)?;
    store.read(|c| {
        let db: &dyn Sql = c;
        let signal = load(db, num)?;
        let wakes = db.query_map(
            "SELECT w.recipient, w.at, w.path, w.result, w.mcp_session, s.type, s.trace_id,
                    coalesce(d.recipient_name, w.recipient)
             FROM signal_wakes w JOIN signals s ON s.num = w.signal
             LEFT JOIN signal_deliveries d ON d.signal = w.signal AND d.recipient = w.recipient
             WHERE w.signal = ?1 ORDER BY w.id",
            values![num],
            |r| {
                Ok(WakeRecord {
                    signal: format_id(num),
                    kind: r.get::<String>(5)?.parse().unwrap_or(SignalType::StatusUpdate),
                    trace_id: r.get(6)?,
                    recipient: r.get(7)?,
                    at: iso(r.get(1)?),
                    path: r.get(2)?,
                    result: r.get(3)?,
                    mcp_session: r.get(4)?,
                })
            },
        )?;
        let thread_nums: Vec<i64> = db.query_map(
            "SELECT num FROM signals WHERE trace_id = ?1 ORDER BY num LIMIT 200",
            values![signal.trace_id],
            |r| r.get(0),
        )?;
        let thread = thread_nums.iter().map(|n| load(db, *n)).collect::<Result<_>>()?;
        Ok(SignalDetail { signal, wakes, thread })
    })
}

pub(super) fn get_signal(store: &dyn Database, num: i64) -> Result<Signal> {
    store.read(|c| load(c, num))
}

/// Signals newest first, filtered.
pub(crate) fn list(store: &dyn Database, f: &SignalFilter) -> Result<Vec<Signal>> {
    let limit = if f.limit == 0 { 200 } else { f.limit.min(10_000) } as i64;
    store.read(|c| {
        let to_key = match f.to.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
            None => None,
            Some(t) if t.eq_ignore_ascii_case(HUMAN) => Some(HUMAN.to_owned()),
            Some(t) => Some(t.to_owned()),
        };
        let db: &dyn Sql = c;
        // Parameters tested for NULL are cast: PostgreSQL types a parameter where it first meets it.
        let nums: Vec<i64> = db.query_map(
            "SELECT s.num FROM signals s
             WHERE (CAST(?1 AS TEXT) IS NULL OR s.address = ?1 OR EXISTS (SELECT 1 FROM signal_deliveries d
                       WHERE d.signal = s.num AND d.recipient_name = ?1))
               AND (CAST(?2 AS TEXT) IS NULL OR s.sender = ?2)
               AND (CAST(?3 AS TEXT) IS NULL OR s.sender = ?3 OR EXISTS (SELECT 1 FROM signal_deliveries d
                       WHERE d.signal = s.num AND d.recipient_name = ?3))
               AND (CAST(?4 AS TEXT) IS NULL OR s.trace_id = ?4)
               AND (NOT ?5 OR EXISTS (SELECT 1 FROM signal_deliveries d WHERE d.signal = s.num AND d.obligation = 'open'))
             ORDER BY s.num DESC LIMIT ?6",
            values![
                to_key,
                f.from.as_deref().map(str::trim).filter(|t| !t.is_empty()),
                f.agent.as_deref().map(str::trim).filter(|t| !t.is_empty()),
                f.trace.as_deref().map(str::trim).filter(|t| !t.is_empty()),
                f.open,
                limit
            ],
            |r| r.get(0),
        )?;
        nums.iter().map(|n| load(db, *n)).collect()
    })
}

/// Open obligations per recipient (name), for the agents view.
pub(crate) fn open_obligations(store: &dyn Database) -> Result<Vec<(String, i64)>> {
    store.read(|c| {
        SqlExt::query_map(
            c,
            "SELECT recipient_name, count(*) FROM signal_deliveries WHERE obligation = 'open' GROUP BY recipient_name",
            &[],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
    })
}

/// Open obligations older than `min_age_ms`, oldest first: (signal, recipient name, age ms).
pub(crate) fn overdue(store: &dyn Database, kind: SignalType, min_age_ms: i64) -> Result<Vec<(Signal, String, i64)>> {
    let now = now_ms();
    store.read(|c| {
        let db: &dyn Sql = c;
        let rows: Vec<(i64, String, i64)> = db.query_map(
            "SELECT d.signal, d.recipient_name, s.created_at FROM signal_deliveries d JOIN signals s ON s.num = d.signal
             WHERE d.obligation = 'open' AND s.type = ?1 AND s.created_at <= ?2 ORDER BY d.signal LIMIT 100",
            values![kind.as_str(), now - min_age_ms],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )?;
        rows.into_iter().map(|(n, who, at)| Ok((load(db, n)?, who, now - at))).collect()
    })
}

pub(crate) fn load(db: &dyn Sql, num: i64) -> Result<Signal> {
    let mut s = db
        .query_opt(
            "SELECT type, sender, address, body, reply_to, task, trace_id, action_required, reply_required,
                    created_at, answered_at, answered_by, remote, machine
             FROM signals WHERE num = ?1",
            values![num],
            |r| {
                Ok(Signal {
                    id: format_id(num),
                    kind: r.get::<String>(0)?.parse().unwrap_or(SignalType::StatusUpdate),
                    from: r.get(1)?,
                    to: r.get(2)?,
                    body: r.get(3)?,
                    reply_to: r.get::<Option<i64>>(4)?.map(format_id),
                    task: r.get::<Option<i64>>(5)?.map(|t| crate::ids::TaskId::new(t).to_string()),
                    trace_id: r.get(6)?,
                    action_required: r.get(7)?,
                    reply_required: r.get(8)?,
                    created_at: iso(r.get(9)?),
                    answered_at: r.get::<Option<i64>>(10)?.map(iso),
                    answered_by: r.get::<Option<i64>>(11)?.map(format_id),
                    remote: r.get(12)?,
                    machine: r.get(13)?,
                    deliveries: Vec::new(),
                })
            },
        )?
        .ok_or_else(|| Error::SignalNotFound(format_id(num)))?;
    s.deliveries = db.query_map(
        "SELECT recipient_name, drained_at, obligation, closed_at, wake_attempt_count, last_wake_at,
                last_wake_path, last_wake_result
         FROM signal_deliveries WHERE signal = ?1 ORDER BY recipient_name",
        values![num],
        |r| {
            Ok(Delivery {
                recipient: r.get(0)?,
                drained_at: r.get::<Option<i64>>(1)?.map(iso),
                obligation: r.get(2)?,
                closed_at: r.get::<Option<i64>>(3)?.map(iso),
                wake_attempt_count: r.get(4)?,
                last_wake_at: r.get::<Option<i64>>(5)?.map(iso),
                last_wake_path: r.get(6)?,
                last_wake_result: r.get(7)?,
            })
        },
    )?;
    Ok(s)
}
