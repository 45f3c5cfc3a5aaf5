//! Reading signals (one with its wakes and thread, lists, open and overdue obligations) and the
//! revision every signal write bumps.

use rusqlite::{OptionalExtension, Transaction, params};

use super::model::*;
use crate::clock::{iso, now_ms};
use crate::error::{Error, Result};
use crate::principal::HUMAN;
use crate::store::Store;

pub(super) fn bump_rev(txn: &Transaction<'_>) -> Result<()> {
    txn.execute("UPDATE counters SET value = value + 1 WHERE name = 'signals_rev'", [])?;
    Ok(())
}

/// Changes whenever any signal is sent, drained, answered or woken, in any process.
pub fn revision(store: &Store) -> Result<i64> {
    store.read(|c| Ok(c.query_row("SELECT value FROM counters WHERE name = 'signals_rev'", [], |r| r.get(0))?))
}

pub fn get(store: &Store, id: &str) -> Result<SignalDetail> {
    let num = parse_id(id)?;
    store.read(|c| {
        let signal = load(c, num)?;
        let mut stmt = c.prepare_cached(
            "SELECT w.recipient, w.at, w.path, w.result, w.mcp_session, s.type, s.trace_id,
                    coalesce(d.recipient_name, w.recipient)
             FROM signal_wakes w JOIN signals s ON s.num = w.signal
             LEFT JOIN signal_deliveries d ON d.signal = w.signal AND d.recipient = w.recipient
             WHERE w.signal = ?1 ORDER BY w.id",
        )?;
        let wakes = stmt
            .query_map([num], |r| {
                Ok(WakeRecord {
                    signal: format_id(num),
                    kind: r.get::<_, String>(5)?.parse().unwrap_or(SignalType::StatusUpdate),
                    trace_id: r.get(6)?,
                    recipient: r.get(7)?,
                    at: iso(r.get(1)?),
                    path: r.get(2)?,
                    result: r.get(3)?,
                    mcp_session: r.get(4)?,
                })
            })?
            .collect::<rusqlite::Result<_>>()?;
        let thread_nums: Vec<i64> = c
            .prepare_cached("SELECT num FROM signals WHERE trace_id = ?1 ORDER BY num LIMIT 200")?
            .query_map([&signal.trace_id], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        let thread = thread_nums.iter().map(|n| load(c, *n)).collect::<Result<_>>()?;
        Ok(SignalDetail { signal, wakes, thread })
    })
}

pub(super) fn get_signal(store: &Store, num: i64) -> Result<Signal> {
    store.read(|c| load(c, num))
}

/// Signals newest first, filtered.
pub fn list(store: &Store, f: &SignalFilter) -> Result<Vec<Signal>> {
    let limit = if f.limit == 0 { 200 } else { f.limit.min(10_000) } as i64;
    store.read(|c| {
        let to_key = match f.to.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
            None => None,
            Some(t) if t.eq_ignore_ascii_case(HUMAN) => Some(HUMAN.to_owned()),
            Some(t) => Some(t.to_owned()),
        };
        let mut stmt = c.prepare_cached(
            "SELECT s.num FROM signals s
             WHERE (?1 IS NULL OR s.address = ?1 OR EXISTS (SELECT 1 FROM signal_deliveries d
                       WHERE d.signal = s.num AND d.recipient_name = ?1))
               AND (?2 IS NULL OR s.sender = ?2)
               AND (?3 IS NULL OR s.sender = ?3 OR EXISTS (SELECT 1 FROM signal_deliveries d
                       WHERE d.signal = s.num AND d.recipient_name = ?3))
               AND (?4 IS NULL OR s.trace_id = ?4)
               AND (NOT ?5 OR EXISTS (SELECT 1 FROM signal_deliveries d WHERE d.signal = s.num AND d.obligation = 'open'))
             ORDER BY s.num DESC LIMIT ?6",
        )?;
        let nums: Vec<i64> = stmt
            .query_map(
                params![
                    to_key,
                    f.from.as_deref().map(str::trim).filter(|t| !t.is_empty()),
                    f.agent.as_deref().map(str::trim).filter(|t| !t.is_empty()),
                    f.trace.as_deref().map(str::trim).filter(|t| !t.is_empty()),
                    f.open,
                    limit
                ],
                |r| r.get(0),
            )?
            .collect::<rusqlite::Result<_>>()?;
        nums.iter().map(|n| load(c, *n)).collect()
    })
}

/// Open obligations per recipient (name), for the agents view.
pub fn open_obligations(store: &Store) -> Result<Vec<(String, i64)>> {
    store.read(|c| {
        Ok(c.prepare_cached(
            "SELECT recipient_name, count(*) FROM signal_deliveries WHERE obligation = 'open' GROUP BY recipient_name",
        )?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?)
    })
}

/// Open obligations older than `min_age_ms`, oldest first: (signal, recipient name, age ms).
pub fn overdue(store: &Store, kind: SignalType, min_age_ms: i64) -> Result<Vec<(Signal, String, i64)>> {
    let now = now_ms();
    store.read(|c| {
        let rows: Vec<(i64, String, i64)> = c
            .prepare_cached(
                "SELECT d.signal, d.recipient_name, s.created_at FROM signal_deliveries d JOIN signals s ON s.num = d.signal
                 WHERE d.obligation = 'open' AND s.type = ?1 AND s.created_at <= ?2 ORDER BY d.signal LIMIT 100",
            )?
            .query_map(params![kind.as_str(), now - min_age_ms], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<rusqlite::Result<_>>()?;
        rows.into_iter().map(|(n, who, at)| Ok((load(c, n)?, who, now - at))).collect()
    })
}

pub(crate) fn load(c: &rusqlite::Connection, num: i64) -> Result<Signal> {
    let mut stmt = c.prepare_cached(
        "SELECT type, sender, address, body, reply_to, task, trace_id, action_required, reply_required,
                created_at, answered_at, answered_by, remote
         FROM signals WHERE num = ?1",
    )?;
    let mut s = stmt
        .query_row([num], |r| {
            Ok(Signal {
                id: format_id(num),
                kind: r.get::<_, String>(0)?.parse().unwrap_or(SignalType::StatusUpdate),
                from: r.get(1)?,
                to: r.get(2)?,
                body: r.get(3)?,
                reply_to: r.get::<_, Option<i64>>(4)?.map(format_id),
                task: r.get::<_, Option<i64>>(5)?.map(|t| crate::ids::TaskId::new(t).to_string()),
                trace_id: r.get(6)?,
                action_required: r.get(7)?,
                reply_required: r.get(8)?,
                created_at: iso(r.get(9)?),
                answered_at: r.get::<_, Option<i64>>(10)?.map(iso),
                answered_by: r.get::<_, Option<i64>>(11)?.map(format_id),
                remote: r.get(12)?,
                deliveries: Vec::new(),
            })
        })
        .optional()?
        .ok_or_else(|| Error::SignalNotFound(format_id(num)))?;
    let mut stmt = c.prepare_cached(
        "SELECT recipient_name, drained_at, obligation, closed_at, wake_attempt_count, last_wake_at,
                last_wake_path, last_wake_result
         FROM signal_deliveries WHERE signal = ?1 ORDER BY recipient_name",
    )?;
    s.deliveries = stmt
        .query_map([num], |r| {
            Ok(Delivery {
                recipient: r.get(0)?,
                drained_at: r.get::<_, Option<i64>>(1)?.map(iso),
                obligation: r.get(2)?,
                closed_at: r.get::<_, Option<i64>>(3)?.map(iso),
                wake_attempt_count: r.get(4)?,
                last_wake_at: r.get::<_, Option<i64>>(5)?.map(iso),
                last_wake_path: r.get(6)?,
                last_wake_result: r.get(7)?,
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    Ok(s)
}
