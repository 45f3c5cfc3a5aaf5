//! Wake telemetry: the deliveries no doorbell tried yet, and every push outcome, recorded on the
//! delivery and in the append-only log.

use tether_store::sql::{Sql, SqlExt};
use tether_store::values;

use super::model::*;
use super::query::bump_rev;
use crate::clock::now_ms;
use crate::error::Result;
use tether_store::sql::Database;

/// The deliveries no doorbell has tried yet, oldest first, with each recipient's MCP session.
pub(crate) fn unrung(store: &dyn Database) -> Result<Vec<Ring>> {
    store.read(|c| {
        SqlExt::query_map(
            c,
            "SELECT d.signal, s.type, d.recipient, a.mcp_session, s.created_at
             FROM signal_deliveries d JOIN signals s ON s.num = d.signal LEFT JOIN agents a ON a.id = d.recipient
             WHERE d.wake_attempt_count = 0 AND d.recipient != 'human'
             ORDER BY d.signal LIMIT 10000",
            &[],
            |r| {
                Ok(Ring {
                    signal: r.get(0)?,
                    kind: r.get::<String>(1)?.parse()?,
                    recipient: r.get(2)?,
                    mcp_session: r.get(3)?,
                    sent_at: r.get(4)?,
                })
            },
        )
    })
}

/// Records push outcomes: each counts as a wake attempt (successful or not) on its delivery and
/// goes into the append-only log.
pub(crate) fn record_wakes(store: &dyn Database, wakes: &[Wake]) -> Result<()> {
    if wakes.is_empty() {
        return Ok(());
    }
    store.durable(|txn| {
        let now = now_ms();
        for w in wakes {
            record_in(txn, w, now)?;
        }
        bump_rev(txn)
    })
}

pub(crate) fn record_in(db: &dyn Sql, w: &Wake, now: i64) -> Result<()> {
    db.execute(
        "INSERT INTO signal_wakes(signal, recipient, at, path, result, mcp_session) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        values![w.signal, w.recipient, now, w.path.as_str(), w.result.as_str(), w.mcp_session],
    )?;
    db.execute(
        "UPDATE signal_deliveries SET wake_attempt_count = wake_attempt_count + 1, last_wake_at = ?3,
             last_wake_path = ?4, last_wake_result = ?5
         WHERE signal = ?1 AND recipient = ?2",
        values![w.signal, w.recipient, now, w.path.as_str(), w.result.as_str()],
    )?;
    Ok(())
}
