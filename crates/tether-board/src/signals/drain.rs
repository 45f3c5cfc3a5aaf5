//! Taking signals: the drain (exactly once), what waits without draining, the piggyback notice
//! on a tool result, and the stop hook's follow-up message.

use tether_store::sql::{Sql, SqlExt};
use tether_store::values;

use super::model::*;
use super::query::{bump_rev, load};
use super::wakes::{record_in, record_wakes};
use crate::clock::now_ms;
use crate::error::Result;
use crate::principal::Recipient;
use tether_store::sql::Database;

/// Drains the caller's inbox: returns every undrained signal to it (oldest first) and marks them
/// drained in the same transaction, closing the obligations a drain closes.
pub(crate) fn drain(store: &dyn Database, who: &Recipient) -> Result<Vec<Signal>> {
    let key = who.key().to_owned();
    let nums = store.durable(|txn| {
        let db: &dyn Sql = txn;
        let now = now_ms();
        let nums: Vec<i64> = db.query_map(
            "SELECT signal FROM signal_deliveries WHERE recipient = ?1 AND drained_at IS NULL ORDER BY signal",
            values![key],
            |r| r.get(0),
        )?;
        if nums.is_empty() {
            return Ok(nums);
        }
        drain_in(db, &key, &nums, now)?;
        db.execute("UPDATE agents SET last_seen = ?2 WHERE id = ?1", values![key, now])?;
        Ok(nums)
    })?;
    store.read(|c| nums.iter().map(|n| load(c, *n)).collect())
}

/// Marks these deliveries to `key` drained at `now`, closing the obligations a drain closes.
pub(crate) fn drain_in(db: &dyn Sql, key: &str, nums: &[i64], now: i64) -> Result<()> {
    for n in nums {
        db.execute(
            "UPDATE signal_deliveries SET drained_at = ?3 WHERE recipient = ?1 AND signal = ?2 AND drained_at IS NULL",
            values![key, n, now],
        )?;
    }
    db.execute(
        "UPDATE signal_deliveries SET obligation = 'closed', closed_at = ?2
         WHERE recipient = ?1 AND drained_at = ?2 AND obligation = 'open'
           AND signal IN (SELECT num FROM signals WHERE reply_required = 0)",
        values![key, now],
    )?;
    db.execute(
        "INSERT INTO signal_inboxes(recipient, drained_at) VALUES (?1, ?2)
         ON CONFLICT(recipient) DO UPDATE SET drained_at = excluded.drained_at",
        values![key, now],
    )?;
    bump_rev(db)
}

/// Undrained signals to the caller, oldest first, without draining them.
pub(crate) fn pending(store: &dyn Database, who: &Recipient) -> Result<Vec<Signal>> {
    store.read(|c| {
        let db: &dyn Sql = c;
        let nums: Vec<i64> = db.query_map(
            "SELECT signal FROM signal_deliveries WHERE recipient = ?1 AND drained_at IS NULL ORDER BY signal",
            values![who.key()],
            |r| r.get(0),
        )?;
        nums.iter().map(|n| load(db, *n)).collect()
    })
}

/// How many undrained signals that want attention (not system types) wait for the caller.
pub(crate) fn pending_summary(store: &dyn Database, who: &Recipient) -> Result<PendingSummary> {
    store.read(|c| summary_of(c, who.key()))
}

fn summary_of(db: &dyn Sql, key: &str) -> Result<PendingSummary> {
    let types = db.query_map(
        "SELECT s.type FROM signal_deliveries d JOIN signals s ON s.num = d.signal
         WHERE d.recipient = ?1 AND d.drained_at IS NULL
           AND s.type NOT IN ('peer_joined', 'peer_left', 'master_preempted')
         ORDER BY d.signal",
        values![key],
        |r| r.get::<String>(0),
    )?;
    let mut out = PendingSummary::default();
    for t in types {
        let t: SignalType = t.parse()?;
        out.count += 1;
        if !out.types.contains(&t) {
            out.types.push(t);
        }
    }
    Ok(out)
}

/// The piggyback notice for a tool result: what waits for the caller. The first time each
/// delivery is announced this way is recorded as a wake by path `piggyback`.
pub(crate) fn piggyback(store: &dyn Database, who: &Recipient, mcp_session: Option<&str>) -> Result<PendingSummary> {
    let summary = pending_summary(store, who)?;
    if summary.count == 0 {
        return Ok(summary);
    }
    let fresh: Vec<i64> = store.read(|c| {
        SqlExt::query_map(
            c,
            "SELECT d.signal FROM signal_deliveries d JOIN signals s ON s.num = d.signal
             WHERE d.recipient = ?1 AND d.drained_at IS NULL AND d.last_wake_path IS DISTINCT FROM 'piggyback'
               AND s.type NOT IN ('peer_joined', 'peer_left', 'master_preempted')",
            values![who.key()],
            |r| r.get(0),
        )
    })?;
    let wakes: Vec<Wake> = fresh
        .into_iter()
        .map(|signal| Wake {
            signal,
            recipient: who.key().to_owned(),
            path: WakePath::Piggyback,
            result: WakeResult::Rang,
            mcp_session: mcp_session.map(str::to_owned),
        })
        .collect();
    record_wakes(store, &wakes)?;
    Ok(summary)
}

/// Cursor's `stop` hook for a chat: when it has undrained signals and was not asked yet in this
/// drain cycle, the follow-up message that makes it drain them (counts and types only, never a
/// body). `None`: nothing to say. Aborted or failed turns and Cursor's loop counter at our limit
/// are left alone.
pub(crate) fn stop_hook(
    store: &dyn Database,
    conversation_id: &str,
    loop_count: u32,
    status: Option<&str>,
) -> Result<Option<String>> {
    if conversation_id.is_empty() || loop_count >= HOOK_LOOP_LIMIT || status.is_some_and(|s| s != "completed") {
        return Ok(None);
    }
    let key = conversation_id.to_owned();
    store.durable(|txn| {
        let db: &dyn Sql = txn;
        let known = db.query_opt("SELECT 1 FROM agents WHERE id = ?1", values![key], |_| Ok(()))?.is_some();
        if !known {
            return Ok(None);
        }
        let summary = summary_of(db, &key)?;
        if summary.count == 0 {
            return Ok(None);
        }
        let asked: Option<(Option<i64>, Option<i64>)> =
            db.query_opt("SELECT drained_at, hook_at FROM signal_inboxes WHERE recipient = ?1", values![key], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })?;
        if let Some((drained, Some(hook))) = asked
            && drained.is_none_or(|d| hook > d)
        {
            return Ok(None);
        }
        let now = now_ms();
        db.execute(
            "INSERT INTO signal_inboxes(recipient, hook_at) VALUES (?1, ?2)
             ON CONFLICT(recipient) DO UPDATE SET hook_at = excluded.hook_at",
            values![key, now],
        )?;
        let nums: Vec<i64> = db.query_map(
            "SELECT d.signal FROM signal_deliveries d JOIN signals s ON s.num = d.signal
             WHERE d.recipient = ?1 AND d.drained_at IS NULL
               AND s.type NOT IN ('peer_joined', 'peer_left', 'master_preempted')",
            values![key],
            |r| r.get(0),
        )?;
        for signal in nums {
            let w = Wake {
                signal,
                recipient: key.clone(),
                path: WakePath::Hook,
                result: WakeResult::Rang,
                mcp_session: None,
            };
            record_in(db, &w, now)?;
        }
        bump_rev(db)?;
        Ok(Some(format!(
            "Tether: {} waiting for you. Call the tether MCP tool `signals_pending` to read them, then act on \
             them (reply with `signal_send` and `reply_to` where one is asked for).",
            summary.describe()
        )))
    })
}
